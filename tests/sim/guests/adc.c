/* Converts ADC channel 3 ADC_N times, then channel 0 (which has no file)
 * once, printing each result in decimal on USART0: what tern-sim's [[adc]]
 * signal file plays (tools/simavr/adc.c). */
#include <avr/io.h>

#include "tern_simavr_abi.h"

#ifndef ADC_N
#define ADC_N 7
#endif

static void put(char c)
{
	while (!(UCSR0A & _BV(UDRE0)))
		;
	UDR0 = (uint8_t)c;
}

static void print(uint16_t v)
{
	char d[5];
	uint8_t n = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		put(d[--n]);
	put('\n');
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
	UCSR0A = _BV(U2X0);
	UBRR0H = 0;
	UBRR0L = 0;
	UCSR0B = _BV(TXEN0);
	for (uint8_t i = 0; i < ADC_N; i++)
		print(convert(3));
	print(convert(0));
	while (!(UCSR0A & _BV(TXC0)))
		;
	tern_simavr_exit(0);
}
