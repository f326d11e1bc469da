/* Kernel limits for the ATmega128's 4 KB of RAM (the defaults in
 * tern/config.h are sized for 64 KB). Included before every source by
 * board.cmake, so each value is only a default: an app's own
 * target_compile_definitions still wins. .rodata (strings, descriptions)
 * also lives in RAM on the AVR, copied from flash at reset. */
#ifndef TERN_ATMEGA128_CONFIG_H
#define TERN_ATMEGA128_CONFIG_H

#ifndef TERN_MAX_TASKS
#define TERN_MAX_TASKS 8
#endif
#ifndef TERN_MSG_POOL
#define TERN_MSG_POOL 12
#endif
#ifndef TERN_HEAP_SIZE
#define TERN_HEAP_SIZE 256
#endif
#ifndef TERN_TRACE_EVENTS
#define TERN_TRACE_EVENTS 0 /* each event costs ~400 cycles here: a 64-bit clock read */
#endif
#ifndef TERN_TIMERS_PER_TASK
#define TERN_TIMERS_PER_TASK 2 /* TIMEOUT0..1; 23 bytes of RAM per timer and task */
#endif
/* bench/seed000's job-time histogram: 8 buckets per octave (<= 12.5 %
 * wide), 368 bytes instead of 2.5 KB. */
#ifndef SEED000_HIST_SUB_BITS
#define SEED000_HIST_SUB_BITS 3
#endif

#endif
