/* Polled USART0 output for the test guests of the harness and of tern-sim. */
#ifndef GUEST_CONSOLE_H
#define GUEST_CONSOLE_H

#include <avr/io.h>
#include <stdint.h>
#include "tern_simavr_abi.h"

/* UBRR0 = 0 with double speed (f/8: 500 kbit/s at 4 MHz): the fastest setting, so
 * waiting for UDRE0 costs the fewest simulated cycles. simavr 1.6 works out
 * the frame time only when UBRR0L is written, from the U2X0 and frame-format
 * bits set at that moment, so UBRR0L comes last. */
static inline void console_init(void)
{
	UCSR0A = _BV(U2X0);
	UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
	UBRR0H = 0;
	UBRR0L = 0;
	UCSR0B = _BV(TXEN0);
}

static inline void console_putc(char c)
{
	loop_until_bit_is_set(UCSR0A, UDRE0);
	UDR0 = c;
}

static inline void console_puts(const char *s)
{
	while (*s)
		console_putc(*s++);
}

static inline void console_dec(uint16_t v)
{
	char buf[6];
	uint8_t n = 0;
	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		console_putc(buf[--n]);
}

#endif
