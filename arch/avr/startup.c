/* Reset and the vector table for every AVR board.
 *
 * Reset: zero r1 (avr-gcc's zero register) and SREG, put the stack at the
 * top of RAM, copy .data from flash, zero .bss, paint the
 * free RAM between .bss and the stack (so the deepest use can be measured
 * later), let the board bring up its console and timers, run main(). The
 * image is linked with -nostartfiles: this file replaces avr-libc's crt. */
#include <avr/io.h>
#include <avr/pgmspace.h>

#include "avr.h"
#include "tern/console.h"
#include "tern/port.h"


int main(void);
void avr_reset(void);
void avr_start(void);
void avr_unexpected_irq(void);
void avr_bad_irq(void);

/* Vector 0 is reset; vector n jumps to __vector_n, which a board defines
 * with ISR() or the linker script PROVIDEs as avr_bad_irq (a weak alias
 * here would not survive link-time optimisation). Under the thread models
 * it jumps to avr_irq_n first (context_avr.c), which runs __vector_n on
 * main()'s stack. */
_Static_assert(_VECTORS_SIZE == 35 * 4, "the table below lists the ATmega128's 35 vectors");
__asm__(".section .vectors,\"ax\",@progbits\n"
        ".global __vectors\n"
        "__vectors:\n"
        "\tjmp avr_reset\n"
        ".irp n,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
        "29,30,31,32,33,34\n"
#if AVR_THREADS
        "\tjmp avr_irq_\\n\n" /* context_avr.c: onto main()'s stack, then __vector_n */
#else
        "\tjmp __vector_\\n\n"
#endif
        ".endr\n"
        ".text\n");

/* Naked: there is no stack and no zero register yet. */
__attribute__((naked, used, noreturn)) void avr_reset(void)
{
    __asm__ volatile("clr __zero_reg__\n\t"
                     "out __SREG__, __zero_reg__\n\t"
                     "ldi r28, lo8(__stack_top - 1)\n\t"
                     "ldi r29, hi8(__stack_top - 1)\n\t"
                     "out __SP_H__, r29\n\t"
                     "out __SP_L__, r28\n\t"
                     "jmp avr_start\n");
    __builtin_unreachable();
}

static void copy_from_flash(uint8_t *dst, uint8_t *end, const uint8_t *load)
{
    while (dst < end)
        *dst++ = pgm_read_byte(load++);
}

__attribute__((used, noreturn)) void avr_start(void)
{
    copy_from_flash(__data_start, __data_end, __data_load_start);
    for (volatile uint8_t *p = __bss_start; p < __bss_end; p++)
        *p = 0;
    /* Everything below the stack pointer is free (SP points at the next
     * free byte); volatile keeps this from becoming a memset call. */
    for (volatile uint8_t *p = __stack_limit; p < (uint8_t *)SP; p++)
        *p = AVR_STACK_PAINT;
    board_init();
#if AVR_THREADS
    if (!avr_thread_pool_init()) {
        tern_printf("tern: no room for main()'s %u-byte stack: .data and .bss leave %u\n",
                    (unsigned)AVR_MAIN_STACK, (unsigned)(__stack_top - __stack_limit));
        port_exit(1);
    }
#endif
    __asm__ volatile("sei" ::: "memory");
    port_exit(main());
}

/* main()'s stack: under the thread models only its reserve at the top of
 * RAM (the thread stack pool lies below it, painted by the kernel). */
#if AVR_THREADS
#define MAIN_STACK_LO (__stack_top - AVR_MAIN_STACK)
uint32_t port_stack_size(void) { return AVR_MAIN_STACK; }
#else
#define MAIN_STACK_LO __stack_limit
uint32_t port_stack_size(void) { return (uint32_t)(__stack_top - __stack_limit); }
#endif

uint32_t port_stack_used(void)
{
    const uint8_t *p = MAIN_STACK_LO;
    while (p < __stack_top && *p == AVR_STACK_PAINT)
        p++;
    return (uint32_t)(__stack_top - p);
}

/* Any vector nobody should raise. r1 may be in use by the interrupted
 * code (mul), so it is cleared before any C runs. */
__attribute__((naked, used)) void avr_bad_irq(void)
{
    __asm__ volatile("clr __zero_reg__\n\t"
                     "jmp avr_unexpected_irq\n");
}

__attribute__((used, noreturn)) void avr_unexpected_irq(void)
{
    tern_puts(TERN_ROM_STR("\ntern: unexpected interrupt (no handler on its vector)\n"));
    port_exit(AVR_EXIT_FAULT);
}
