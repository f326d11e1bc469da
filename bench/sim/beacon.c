/* The node of tern-sim's benchmark (./tern bench sim): a MicaZ that sleeps,
 * wakes once a second, starts the CC2420's oscillator, sends one 30-byte
 * frame, powers the oscillator down and sleeps again. Bare metal, so the
 * benchmark measures the simulator and not a kernel; nodes are spread over
 * the second by their id, as unsynchronised nodes would be.
 * MicaZ wiring: CSn PB0, SCK PB1, MOSI PB2, MISO PB3, SFD PD4, VREG_EN PA5,
 * RESETn PA6. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>
#include <util/delay.h>

#include "tern_simavr_abi.h"

#define FRAME_LEN 30	/* PSDU, FCS included */
#define TICKS_PER_S (F_CPU / 1024)

enum { SXOSCON = 0x01, STXON = 0x04, SXOSCOFF = 0x07, SFLUSHTX = 0x09 };
enum { MDMCTRL0 = 0x11, FSCTRL = 0x18, TXFIFO = 0x3E };

static volatile uint8_t due;

ISR(TIMER1_COMPA_vect)
{
	OCR1A = TICKS_PER_S - 1;	/* after the first, shorter, period */
	due = 1;
}

static uint8_t spi(uint8_t b)
{
	SPDR = b;
	loop_until_bit_is_set(SPSR, SPIF);
	return SPDR;
}

static uint8_t strobe(uint8_t s)
{
	PORTB &= (uint8_t)~_BV(0);
	uint8_t status = spi(s);
	PORTB |= _BV(0);
	return status;
}

static void reg_write(uint8_t a, uint16_t v)
{
	PORTB &= (uint8_t)~_BV(0);
	spi(a);
	spi((uint8_t)(v >> 8));
	spi((uint8_t)v);
	PORTB |= _BV(0);
}

static void send(uint8_t seq, uint16_t id)
{
	strobe(SXOSCON);
	while (!(strobe(0) & 0x40))	/* XOSC16M_STABLE */
		;
	strobe(SFLUSHTX);
	PORTB &= (uint8_t)~_BV(0);
	spi(TXFIFO);
	spi(FRAME_LEN);
	const uint8_t hdr[9] = { 0x41, 0x88, seq, 0x22, 0x00, 0xFF, 0xFF, (uint8_t)id, (uint8_t)(id >> 8) };
	for (uint8_t i = 0; i < FRAME_LEN - 2; i++)
		spi(i < sizeof hdr ? hdr[i] : i);
	PORTB |= _BV(0);
	strobe(STXON);
	loop_until_bit_is_set(PIND, 4);	/* SFD: the frame is going out */
	loop_until_bit_is_clear(PIND, 4);	/* and has ended */
	strobe(SXOSCOFF);
}

int main(void)
{
	uint16_t id = tern_sim_node_id();
	DDRB |= _BV(0) | _BV(1) | _BV(2);
	PORTB |= _BV(0);
	SPCR = _BV(SPE) | _BV(MSTR);
	SPSR = _BV(SPI2X);
	DDRA |= _BV(5) | _BV(6);
	PORTA |= _BV(5) | _BV(6);	/* regulator on, out of reset */
	_delay_us(700);
	strobe(SXOSCON);
	while (!(strobe(0) & 0x40))
		;
	reg_write(FSCTRL, 0x4000 | (357 + 5 * (tern_sim_channel() - 11)));
	strobe(SXOSCOFF);

	/* the first wake-up at a phase within the second that the id picks
	 * (libsimavr 1.6 ignores a TCNT1 preset made before the clock starts) */
	OCR1A = (uint16_t)(((uint32_t)id * 7919u) % TICKS_PER_S);
	TCCR1B = _BV(WGM12) | _BV(CS12) | _BV(CS10);	/* CTC, clk/1024 */
	TIMSK = _BV(OCIE1A);
	set_sleep_mode(SLEEP_MODE_IDLE);
	sleep_enable();
	sei();
	for (uint8_t seq = 0;; seq++) {
		while (!due)
			sleep_cpu();
		due = 0;
		send(seq, id);
	}
}
