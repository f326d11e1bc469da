/* The floor of issue 17's interrupt-to-handler path on the ATmega128: the
 * same path with no kernel. Timer1 counts cycles as the tern port's clock
 * does; the CPU sleeps in idle mode; output compare A's vector (a C ISR,
 * as the port's) calls a handler, which notes TCNT1. Printed: the cycles
 * from the compare match to the handler's first TCNT1 read, averaged over
 * ROUNDS. What a kernel adds to this is its own work: finding the alarm,
 * the post, the dispatch. Built and run without the kernel's build:
 *
 *   avr-gcc -mmcu=atmega128 -DF_CPU=4000000UL -Os -o build/avr_floor.elf \
 *       -Itools/simavr -Itests/harness/guests bench/floor/avr_floor.c
 *   tools/simavr/build/tern-simavr build/avr_floor.elf
 *
 * (docs/seed000/avr-cycles.md; tern-simavr --trace and `./tern profile
 * --from __vector_12 --to handler` split it by function.) */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#include "console.h"

#define ROUNDS 16
#define GAP 4000u /* cycles from arming to the match, as apps/ordering's L */

static volatile uint16_t match_at, seen_at;
static volatile uint8_t fired;

/* The "handler": its first statement reads the clock, as apps/ordering's. */
__attribute__((noinline)) static void handler(void)
{
    seen_at = TCNT1;
    fired = 1;
}

ISR(TIMER1_COMPA_vect) { handler(); }

int main(void)
{
    console_init();
    TCCR1A = 0;
    TCCR1B = _BV(CS10);
    uint32_t sum = 0;
    uint16_t min = UINT16_MAX, max = 0;
    set_sleep_mode(SLEEP_MODE_IDLE);
    for (uint8_t i = 0; i < ROUNDS; i++) {
        cli();
        fired = 0;
        match_at = (uint16_t)(TCNT1 + GAP);
        OCR1A = match_at;
        TIFR = _BV(OCF1A);
        TIMSK |= _BV(OCIE1A);
        while (!fired) {
            sleep_enable();
            sei();
            sleep_cpu();
            cli();
        }
        TIMSK &= (uint8_t)~_BV(OCIE1A);
        uint16_t d = (uint16_t)(seen_at - match_at);
        sum += d;
        if (d < min)
            min = d;
        if (d > max)
            max = d;
        sei();
    }
    console_puts("FLOOR irq_to_handler_idle min=");
    console_dec(min);
    console_puts(" avg=");
    console_dec((uint16_t)(sum / ROUNDS));
    console_puts(" max=");
    console_dec(max);
    console_puts("\n");
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    for (volatile uint16_t w = 0; w < 200; w++)
        ;
    *(volatile uint8_t *)TERN_SIMAVR_EXIT_ADDR = 0;
    for (;;)
        ;
}
