/* The AVR port: what arch/avr provides to boards and apps, and what every
 * AVR board must provide to it.
 *
 * The AVR has one interrupt level: an interrupt runs with I clear until it
 * returns, nothing can preempt it, and there are no priorities. So the
 * stack model dispatches in software: tern_isr_exit() calls port_dispatch()
 * at the end of the outermost interrupt, which runs the preempting handlers
 * right there (tern_sched_preempt), nested on the one stack; run_msg()
 * enables interrupts inside each handler, so device interrupts nest above
 * it as they would above any task. */
#ifndef TERN_AVR_H
#define TERN_AVR_H

#include <stdbool.h>
#include <stdint.h>

#include "tern/port.h"

/* Exit status of a run that ended in an unexpected interrupt. */
#define AVR_EXIT_FAULT 3

/* Cycles port_work(n) takes beyond n, from its first instruction to its
 * ret inclusive; the caller adds its call (4 cycles on the ATmega128) and
 * the argument set-up (measured: see docs/boards.md). */
#define AVR_WORK_OVERHEAD 31u

/* Provided by each board: console, clock, deadline and software
 * interrupts; called by the reset code before main(), interrupts off. */
void board_init(void);
/* Puts the CPU to sleep for the kernel's chosen state (arch/avr/port_avr.c
 * calls it with interrupts disabled; it returns after an interrupt has
 * run, interrupts disabled again). */
void board_sleep(uint8_t state);
/* Returns once every console byte has been sent (before the exit). */
void board_flush(void);

/* Every AVR board (avr_board.c), whose clock is Timer1 at one tick a
 * cycle: the kernel time (tern_now's scale) of a Timer1 input capture
 * whose ICR1 value is `icr`. Exact while the capture is less than 65,536
 * cycles old; drivers call it in the capture interrupt. */
tern_time avr_timer1_capture_time(uint16_t icr);

/* Size of the region the stack may grow into (its deepest use:
 * port_stack_used()). */
uint32_t port_stack_size(void);

#if defined(TERN_MODEL_threads) || defined(TERN_MODEL_adaptive)
#define AVR_THREADS 1
/* The thread models (arch/avr/context_avr.c): main()'s stack keeps
 * AVR_MAIN_STACK bytes below RAMEND for the start-up, the idle thread and
 * the scheduler; the thread stack pool is all the RAM between .bss and
 * that reserve, sized at reset by avr_thread_pool_init(), which returns
 * false when .data and .bss leave less than the reserve (the reset code
 * then refuses the app). The linker asks only AVR_MAIN_STACK_LINK bytes,
 * enough to print that refusal: every app of a build must link, whether
 * it fits or not. apps/ordering reaches 404 bytes of it (measured: its
 * main() frame, idle, its interrupts' handlers, the scheduler). */
#ifndef AVR_MAIN_STACK
#define AVR_MAIN_STACK 512
#endif
#define AVR_MAIN_STACK_LINK 128
bool avr_thread_pool_init(void);
extern volatile uint8_t avr_switch_pending;
void avr_thread_switch_now(void); /* interrupts disabled */
#else
#define AVR_THREADS 0
#endif

/* The reset code paints main()'s stack (all of RAM above .bss) with this
 * byte; port_stack_used() and the guards below look for it. */
#define AVR_STACK_PAINT 0xa5u

#if !AVR_THREADS
/* The lowest bytes of the shared stack, right above .bss: never written
 * unless the stack overflows. port_idle checks them, so an overflow is a
 * named fault (TERN_EXIT_STACK_OVERFLOW) and not .bss silently rewritten. */
#define AVR_STACK_GUARD 8u
#endif

/* Symbols of boards/<board>/<board>.ld. */
extern uint8_t __data_start[], __data_end[], __data_load_start[];
extern uint8_t __bss_start[], __bss_end[];
extern uint8_t __stack_limit[], __stack_top[];

#endif
