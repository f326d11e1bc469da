/* Kernel limits for the ATmega128's 4 KB of RAM (the defaults in
 * tern/config.h are sized for 64 KB). Included before every source by
 * board.cmake, so each value is only a default: an app's own
 * target_compile_definitions still wins. .rodata (strings, descriptions)
 * also lives in RAM on the AVR, copied from flash at reset. */
#ifndef TERN_ATMEGA128_CONFIG_H
#define TERN_ATMEGA128_CONFIG_H

/* The thread models (threads, adaptive): every task is a thread with its
 * own stack; the idle thread, the scheduler and every interrupt handler run
 * on main()'s stack (arch/avr/context_avr.c, AVR_MAIN_STACK in avr.h). The
 * thread stacks come from all the RAM a build leaves (TERN_THREAD_STACK_POOL
 * 0: the pool is sized at reset), so every byte of the pools below is a
 * byte of stack: 5 task slots (apps/ordering has 5; a slot costs ~130 bytes
 * before its stack). An app that asks for more tasks or stack than a build
 * leaves is refused, naming what did not fit. */
#if defined(TERN_MODEL_threads) || defined(TERN_MODEL_adaptive)
#ifndef TERN_MAX_TASKS
#define TERN_MAX_TASKS 5
#endif
#ifndef TERN_THREAD_STACK_POOL
#define TERN_THREAD_STACK_POOL 0
#endif
/* apps/periodic's thread, printing, reaches 160 bytes (measured: handlers
 * and the scheduler run on main()'s stack), the 32-byte guard on top */
#ifndef TERN_THREAD_STACK_DEFAULT
#define TERN_THREAD_STACK_DEFAULT 224
#endif
/* the idle thread runs on main()'s stack: its own is only the guard */
#ifndef TERN_IDLE_STACK
#define TERN_IDLE_STACK 32
#endif
#endif
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
