/* The registers and pins that differ between the AVR parts tern runs on,
 * named once so that the port (avr_board.c) and drivers (drivers/procbus)
 * read the same on each. One header per part; avr-libc's -mmcu macro picks
 * it. Only what the port uses is here: the rest of <avr/io.h> already has
 * the same names on every part (USART0, Timer1, EIMSK, EIFR, SREG, SP). */
#ifndef TERN_AVR_MCU_H
#define TERN_AVR_MCU_H

#include <avr/io.h>

#if defined(__AVR_ATmega128__)
#include "mcu_atmega128.h"
#elif defined(__AVR_ATmega1284P__)
#include "mcu_atmega1284p.h"
#else
#error "tern: no arch/avr/mcu_<part>.h for this -mmcu"
#endif

/* Sense control values of ISCn1:0, the same on every part (but "any edge"
 * is not offered by every pin: AVR_EXTINT_ANY_EDGE_OK). */
#define AVR_EXTINT_LOW_LEVEL 0u
#define AVR_EXTINT_ANY_EDGE 1u
#define AVR_EXTINT_FALLING 2u
#define AVR_EXTINT_RISING 3u

/* Interrupt n's flag and mask are bit n of EIFR and EIMSK on every part. */
#define AVR_EXTINT_MASK(n) ((uint8_t)_BV(n))

/* Sets how external interrupt n senses its pin; it stays disabled. */
static inline void avr_extint_sense(uint8_t n, uint8_t isc)
{
    const uint8_t shift = AVR_EXTINT_ISC_SHIFT(n);
    AVR_EXTINT_EICR(n) = (uint8_t)((AVR_EXTINT_EICR(n) & ~(3u << shift)) | (isc << shift));
}

#endif
