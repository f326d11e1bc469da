/* Converts ADC channel 3 ADC_N times, then channel 0 (which has no file)
 * once, printing each result in decimal on USART0: what tern-sim's [[adc]]
 * signal file plays (tools/simavr/adc.c). */
#include <avr/io.h>

#include "../../harness/guests/console.h"

#ifndef ADC_N
#define ADC_N 7
#endif

static void print(uint16_t v)
{
	console_dec(v);
	console_putc('\n');
}

static uint16_t convert(uint8_t channel)
{
	ADMUX = (uint8_t)(_BV(REFS0) | channel); /* AVCC */
	ADCSRA = _BV(ADEN) | _BV(ADSC) | _BV(ADPS2);
	while (ADCSRA & _BV(ADSC))
		;
	return ADC;
}

int main(void)
{
	console_init();
	for (uint8_t i = 0; i < ADC_N; i++)
		print(convert(3));
	print(convert(0));
	while (!(UCSR0A & _BV(TXC0)))
		;
	tern_simavr_exit(0);
}
