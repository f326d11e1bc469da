/* Kernel limits for the ATmega1284P's 16 KB of RAM. Included before every
 * source by board.cmake, so each value is only a default: an app's own
 * target_compile_definitions still wins. .rodata also lives in RAM on the
 * AVR (copied from flash at reset).
 *
 * The pools are the kernel's defaults (tern/config.h: 16 tasks, 32
 * messages, a 4 KB heap, 4 timers per task), ~7 KB with the task table;
 * the rest is stack. Two choices are the atmega128's, for the same
 * reasons (boards/atmega128/board_config.h): no trace ring, since an event
 * costs a 64-bit clock read (~400 cycles) on this 8-bit CPU too, and under
 * the thread models the idle thread, the scheduler and every handler run
 * on main()'s stack (arch/avr/context_avr.c), so the idle thread's own
 * stack is only its guard and the thread stacks come from all the RAM a
 * build leaves. */
#ifndef TERN_MODULE_M1284_CONFIG_H
#define TERN_MODULE_M1284_CONFIG_H

#if defined(TERN_MODEL_threads) || defined(TERN_MODEL_adaptive)
#ifndef TERN_THREAD_STACK_POOL
#define TERN_THREAD_STACK_POOL 0
#endif
/* apps/periodic's printing thread reaches 160 bytes on the AVR (measured
 * on the atmega128), the 32-byte guard on top, with room to spare */
#ifndef TERN_THREAD_STACK_DEFAULT
#define TERN_THREAD_STACK_DEFAULT 384
#endif
#ifndef TERN_IDLE_STACK
#define TERN_IDLE_STACK 32
#endif
#endif
#ifndef TERN_TRACE_EVENTS
#define TERN_TRACE_EVENTS 0
#endif

#endif
