/* The floor of issue 17's interrupt-to-handler path on the ATmega128: the
 * same path with no kernel. Timer1 counts cycles as the tern port's clock
 * does; the CPU sleeps in idle mode; output compare A's vector (a C ISR,
 * as the port's) calls a handler, which notes TCNT1. Printed: the cycles
 * from the compare match to the handler's first TCNT1 read, averaged over
 * ROUNDS. What a kernel adds to this is its own work: finding the alarm,
 * the post, the dispatch. Built and run without the kernel's build:
 *
 *   avr-gcc -mmcu=atmega128 -DF_CPU=4000000UL -Os -o build/avr_floor.elf \
 *       -Itools/simavr bench/floor/avr_floor.c
 *   tools/simavr/build/tern-simavr build/avr_floor.elf
 *
 * (docs/seed000/avr-cycles.md; tern-simavr --trace and `./tern profile
 * --from __vector_12 --to handler` split it by function.) */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#include "tern_simavr_abi.h"

#define ROUNDS 16
#define GAP 4000u /* cycles from arming to the match, as apps/ordering's L */

static volatile uint16_t match_at, seen_at;
static volatile uint8_t fired;

static void putc_(char c)
{
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    UDR0 = (uint8_t)c;
}

static void put_u(uint32_t v)
{
    char b[10];
    uint8_t n = 0;
    do {
        b[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        putc_(b[--n]);
}

static void puts_(const char *s)
{
    while (*s)
        putc_(*s++);
}

/* The "handler": its first statement reads the clock, as apps/ordering's. */
__attribute__((noinline)) static void handler(void)
{
    seen_at = TCNT1;
    fired = 1;
}

ISR(TIMER1_COMPA_vect) { handler(); }

int main(void)
{
    UCSR0A = _BV(U2X0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(TXEN0);
    UBRR0H = 0;
    UBRR0L = 0;
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
    puts_("FLOOR irq_to_handler_idle min=");
    put_u(min);
    puts_(" avg=");
    put_u(sum / ROUNDS);
    puts_(" max=");
    put_u(max);
    puts_("\n");
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    for (volatile uint16_t w = 0; w < 200; w++)
        ;
    *(volatile uint8_t *)TERN_SIMAVR_EXIT_ADDR = 0;
    for (;;)
        ;
}
