/* Timer1 in CTC mode raises a compare-A interrupt every 100 ms (4 MHz / 64,
 * OCR1A = 6249); the CPU sleeps between them. After 100 wakeups (10 s of
 * simulated time) it prints the count and exits 0. */
#include <avr/interrupt.h>
#include <avr/sleep.h>
#include <stdint.h>
#include "console.h"

#define WAKEUPS 100

static volatile uint8_t ticks;

ISR(TIMER1_COMPA_vect)
{
	ticks++;
}

int main(void)
{
	console_init();
	OCR1A = 6249;
	TCCR1B = _BV(WGM12) | _BV(CS11) | _BV(CS10);	/* CTC, clk/64 */
	TIMSK = _BV(OCIE1A);
	set_sleep_mode(SLEEP_MODE_IDLE);
	sleep_enable();
	sei();

	uint8_t wakeups = 0;
	while (ticks < WAKEUPS) {
		sleep_cpu();
		wakeups++;
	}
	cli();
	console_puts(wakeups == WAKEUPS ? "100 wakeups\n" : "spurious wakeups\n");
	tern_simavr_exit(0);
}
