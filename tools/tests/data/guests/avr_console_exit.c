/* Minimal atmega128 guest for the runner tests: prints to USART0 and exits
 * through the tern-simavr exit port with STATUS (or spins with SPIN). */
#include <avr/io.h>
#include "tern_simavr_abi.h"
#ifndef STATUS
#define STATUS 5
#endif
static void put(char c)
{
    loop_until_bit_is_set(UCSR0A, UDRE0);
    UDR0 = c;
}
int main(void)
{
    /* 500 kbit/s at 4 MHz; simavr takes the frame time when UBRR0L is written, so last */
    UCSR0A = _BV(U2X0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UBRR0H = 0;
    UBRR0L = 0;
    UCSR0B = _BV(TXEN0);
#ifdef SPIN
    for (;;)
        ;
#endif
    for (const char *s = "avr hello\nT 7856341204020201\n"; *s; s++)
        put(*s);
    tern_simavr_exit(STATUS);
}
