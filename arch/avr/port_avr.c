/* The board-independent half of tern/port.h on the AVR: interrupt masking,
 * software dispatch for the stack model, idle, exact-length work, exit. The
 * board half (board.c) is the console, clock, deadline, sleep modes and
 * software interrupts. */
#include <avr/io.h>

#include "avr.h"
#include "tern/console.h"
#include "tern/port.h"
#include "tern/thread.h"
#include "tern_simavr_abi.h"

#if AVR_THREADS
/* Critical sections under the thread models: the saved state is 0 when
 * interrupts were enabled and 1 when they were masked, the convention of
 * the Cortex-M port (PRIMASK) that the thread scheduler relies on (a
 * thread may block only when it was 0). A switch requested while they
 * were masked (context_avr.c) is taken where they are enabled again. */
tern_irq_state port_irq_save(void)
{
    uint8_t s = SREG;
    __asm__ volatile("cli" ::: "memory");
    return (s & _BV(SREG_I)) ? 0u : 1u;
}

void port_irq_restore(tern_irq_state s)
{
    __asm__ volatile("" ::: "memory");
    if (s) {
        __asm__ volatile("cli" ::: "memory");
        return;
    }
    if (avr_switch_pending)
        avr_thread_switch_now();
    __asm__ volatile("sei" ::: "memory");
}

void port_irq_enable(void)
{
    __asm__ volatile("cli" ::: "memory");
    if (avr_switch_pending)
        avr_thread_switch_now();
    __asm__ volatile("sei" ::: "memory");
}
#endif /* the other models': inline, tern/port.h */

/* Sleep until an interrupt of the kernel's has run. Interrupts of the port
 * itself (the clock's overflow, a long deadline's earlier compare
 * matches) wake the CPU without ending the idle period: sleep again. */
bool port_idle(uint8_t state, tern_time max_ticks)
{
    (void)max_ticks;
#if !AVR_THREADS
    for (uint8_t i = 0; i < AVR_STACK_GUARD; i++)
        if (__stack_limit[i] != AVR_STACK_PAINT) {
            tern_puts(TERN_ROM_STR("\ntern: stack overflow in the shared stack: its "));
            tern_putu(AVR_STACK_GUARD);
            tern_puts(TERN_ROM_STR("-byte guard above .bss was written ("));
            tern_putu(port_stack_used());
            tern_puts(TERN_ROM_STR(" of "));
            tern_putu(port_stack_size());
            tern_puts(TERN_ROM_STR(" bytes used)\n"));
            port_exit(TERN_EXIT_STACK_OVERFLOW);
        }
#endif
    while (tern_idle_waiting)
        board_sleep(state);
    return true;
}

/* Exactly `cycles` + AVR_WORK_OVERHEAD (31) cycles from the first
 * instruction to the ret. The low three bits of n are burnt by three
 * skip-or-not sequences whose two paths differ by 1, 2 and 4 cycles; the
 * rest, n / 8, by a loop of 8 cycles per round. Fixed part: 2 + 3 + 3
 * (bits clear) + 12 (shift) + 7 (loop entry and exit) + 4 (ret) = 31. */
__attribute__((naked)) void port_work(uint32_t cycles)
{
    (void)cycles;
    __asm__ volatile(/* bit 0: clear 2, set 3 */
                     "sbrc r22, 0\n\t"
                     "rjmp .+0\n\t"
                     /* bit 1: clear 3, set 5 */
                     "sbrs r22, 1\n\t"
                     "rjmp 1f\n\t"
                     "rjmp .+0\n\t"
                     "nop\n"
                     "1:\n\t"
                     /* bit 2: clear 3, set 7 */
                     "sbrs r22, 2\n\t"
                     "rjmp 2f\n\t"
                     "rjmp .+0\n\t"
                     "rjmp .+0\n\t"
                     "nop\n"
                     "2:\n\t"
                     /* r25:r22 = n / 8: 12 */
                     "lsr r25\n\tror r24\n\tror r23\n\tror r22\n\t"
                     "lsr r25\n\tror r24\n\tror r23\n\tror r22\n\t"
                     "lsr r25\n\tror r24\n\tror r23\n\tror r22\n\t"
                     /* 7 + 8 per round: count down until it borrows */
                     "rjmp 4f\n"
                     "3:\n\t"
                     "rjmp .+0\n"
                     "4:\n\t"
                     "subi r22, 1\n\t"
                     "sbci r23, 0\n\t"
                     "sbci r24, 0\n\t"
                     "sbci r25, 0\n\t"
                     "brcc 3b\n\t"
                     "ret\n");
}

/* The harness's exit port (tools/simavr/tern_simavr_abi.h): the run stops
 * right after the store, so the console is drained first. */
_Noreturn void port_exit(int status)
{
    __asm__ volatile("cli" ::: "memory");
    board_flush();
    tern_simavr_exit((uint8_t)status);
}
