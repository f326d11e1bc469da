/* Bare-metal CC2420 access for tern-sim's own guests (tests/sim/guests,
 * bench/sim): just enough to put frames and carriers on air and read frames
 * back, written from the datasheet, so that the simulator's tests and
 * benchmark do not depend on tern's driver (drivers/cc2420).
 * MicaZ wiring: CSn PB0, SCK PB1, MOSI PB2, MISO PB3, FIFO PB7, SFD PD4,
 * CCA PD6, FIFOP PE6, VREG_EN PA5, RESETn PA6. */
#ifndef TERN_GUEST_CC2420_H
#define TERN_GUEST_CC2420_H

#include <avr/io.h>
#include <stdint.h>
#include <util/delay.h>
#include "tern_simavr_abi.h"

enum { SXOSCON = 0x01, SRXON = 0x03, STXON = 0x04, STXONCCA = 0x05, SRFOFF = 0x06,
       SXOSCOFF = 0x07, SFLUSHRX = 0x08, SFLUSHTX = 0x09 };
enum { MDMCTRL0 = 0x11, MDMCTRL1 = 0x12, RSSI = 0x13, FSCTRL = 0x18, IOCFG0 = 0x1C,
       MANFIDL = 0x1E, FSMSTATE = 0x2C, DACTST = 0x2E, TXFIFO = 0x3E, RXFIFO = 0x3F };
#define STATUS_XOSC_STABLE 0x40

static inline void cs_low(void) { PORTB &= (uint8_t)~_BV(0); }
static inline void cs_high(void) { PORTB |= _BV(0); }

static inline uint8_t spi(uint8_t b)
{
	SPDR = b;
	loop_until_bit_is_set(SPSR, SPIF);
	return SPDR;
}

static inline uint8_t strobe(uint8_t s)
{
	cs_low();
	uint8_t status = spi(s);
	cs_high();
	return status;
}

static inline void reg_write(uint8_t a, uint16_t v)
{
	cs_low();
	spi(a);
	spi((uint8_t)(v >> 8));
	spi((uint8_t)v);
	cs_high();
}

static inline uint16_t reg_read(uint8_t a)
{
	cs_low();
	spi(a | 0x40);
	uint16_t v = (uint16_t)spi(0) << 8;
	v |= spi(0);
	cs_high();
	return v;
}

/* SXOSCON, then wait (bounded) until the crystal is stable: 0, or 1. */
static inline uint8_t radio_oscillator_on(void)
{
	strobe(SXOSCON);
	uint16_t tries = 0;
	while (!(strobe(0) & STATUS_XOSC_STABLE))
		if (++tries > 2000)
			return 1;
	return 0;
}

/* SPI, regulator, reset, oscillator started and stable.
 * Returns 0, or 1 when the oscillator never became stable. */
static inline uint8_t radio_power_up(void)
{
	DDRB |= _BV(0) | _BV(1) | _BV(2);
	cs_high();
	SPCR = _BV(SPE) | _BV(MSTR);
	SPSR = _BV(SPI2X);
	DDRA |= _BV(5) | _BV(6);
	PORTA |= _BV(5);
	_delay_us(700);
	PORTA &= (uint8_t)~_BV(6);
	PORTA |= _BV(6);
	return radio_oscillator_on();
}

/* Regulator, reset, oscillator, channel; address recognition off; FIFOP
 * for whole frames only; RX on.
 * Returns 0, or 1 when the oscillator never became stable. */
static inline uint8_t radio_on(uint8_t channel)
{
	if (radio_power_up())
		return 1;
	reg_write(MDMCTRL0, 0x0AE2 & ~(1u << 11));
	reg_write(FSCTRL, 0x4000 | (357 + 5 * (channel - 11)));
	reg_write(IOCFG0, 127);	/* FIFOP_THR: FIFOP only for whole frames */
	strobe(SRXON);
	return 0;
}

/* A data frame of len PSDU bytes (FCS included, added by the chip). */
static inline void load_frame(uint8_t len, uint8_t seq, uint16_t src)
{
	uint8_t hdr[9] = { 0x41, 0x88, seq, 0x22, 0x00, 0xFF, 0xFF, (uint8_t)src, (uint8_t)(src >> 8) };
	strobe(SFLUSHTX);
	cs_low();
	spi(TXFIFO);
	spi(len);
	for (uint8_t i = 0; i + 2 < len; i++)
		spi(i < sizeof hdr ? hdr[i] : i);
	cs_high();
}

#endif
