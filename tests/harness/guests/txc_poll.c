/* Sends 2,200 bytes, waiting for TXC0 (transmission complete) after each one.
 * Each poll of UCSR0A finds neither RXC0 nor TXC0 set, which is where stock
 * simavr sleeps 1 us of wall time per read; the harness must not. */
#include "console.h"

static void putc_wait_txc(char c)
{
	UCSR0A = _BV(U2X0) | _BV(TXC0);	/* writing 1 clears TXC0 */
	UDR0 = c;
	loop_until_bit_is_set(UCSR0A, TXC0);
}

int main(void)
{
	console_init();
	for (int line = 0; line < 200; line++)
		for (const char *s = "0123456789\n"; *s; s++)
			putc_wait_txc(*s);
	tern_simavr_exit(0);
}
