/* Answers every rising edge on PE5 (INT5) by pulsing PA0 in the interrupt
 * handler, sleeping in between: the logic analyser then shows the
 * interrupt latency from the pin edge to the handler's first store. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>

ISR(INT5_vect)
{
	PORTA |= _BV(0);
	PORTA &= (uint8_t)~_BV(0);
}

int main(void)
{
	DDRA |= _BV(0);
	EICRB = _BV(ISC51) | _BV(ISC50); /* INT5 on the rising edge */
	EIMSK |= _BV(INT5);
	set_sleep_mode(SLEEP_MODE_IDLE);
	sleep_enable();
	sei();
	for (;;)
		sleep_cpu();
}
