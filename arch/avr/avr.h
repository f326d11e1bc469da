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

/* Size of the region the stack may grow into (its deepest use:
 * port_stack_used()). */
uint32_t port_stack_size(void);

/* Symbols of boards/<board>/<board>.ld. */
extern uint8_t __data_start[], __data_end[], __data_load_start[];
extern uint8_t __tern_params_start[], __tern_params_end[], __tern_params_load[];
extern uint8_t __bss_start[], __bss_end[];
extern uint8_t __stack_limit[], __stack_top[];

#endif
