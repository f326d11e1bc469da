/* Toggles PA0 every 1,000,000 cycles of its own clock (Timer1 compare,
 * CTC at prescaler 64: 15,625 counts), sleeping in between: how far apart
 * two nodes' edges drift shows their clock errors. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>

ISR(TIMER1_COMPA_vect) { PORTA ^= _BV(0); }

int main(void)
{
	DDRA |= _BV(0);
	OCR1A = 15624;
	TCCR1B = _BV(WGM12) | _BV(CS11) | _BV(CS10);
	TIMSK = _BV(OCIE1A);
	set_sleep_mode(SLEEP_MODE_IDLE);
	sleep_enable();
	sei();
	for (;;)
		sleep_cpu();
}
