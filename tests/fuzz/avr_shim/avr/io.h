/* The few ATmega128 registers drivers/cc2420/cc2420.c touches, with the
 * real arch/avr/avr_mcu.h and boards/micaz/board.h on top, for the host
 * (tests/fuzz/fuzz_cc2420_rx.c). Each register is a byte the harness
 * owns; every access goes through cc2420_fake_reg(), which lets the fake
 * chip see chip select and SPI transfers happen (fuzz_cc2420_rx.c). */
#ifndef TERN_FUZZ_AVR_IO_H
#define TERN_FUZZ_AVR_IO_H

#include <stdint.h>

enum {
    FAKE_PORTA, FAKE_PORTB, FAKE_DDRA, FAKE_DDRB, FAKE_DDRD, FAKE_DDRE, FAKE_PINB, FAKE_PIND,
    FAKE_PINE, FAKE_SPDR, FAKE_SPSR, FAKE_SPCR, FAKE_TCCR1B, FAKE_TIFR, FAKE_TIMSK, FAKE_EICRB,
    FAKE_EIFR, FAKE_EIMSK, FAKE_PORTD, FAKE_PORTE, FAKE_EICRA, FAKE_ETIMSK, FAKE_MCUCR, FAKE_SREG,
    FAKE_REGS
};
volatile uint8_t *cc2420_fake_reg(int r);
uint16_t cc2420_fake_icr1(void);

#define PORTA (*cc2420_fake_reg(FAKE_PORTA))
#define PORTB (*cc2420_fake_reg(FAKE_PORTB))
#define DDRA (*cc2420_fake_reg(FAKE_DDRA))
#define DDRB (*cc2420_fake_reg(FAKE_DDRB))
#define DDRD (*cc2420_fake_reg(FAKE_DDRD))
#define DDRE (*cc2420_fake_reg(FAKE_DDRE))
#define PINB (*cc2420_fake_reg(FAKE_PINB))
#define PIND (*cc2420_fake_reg(FAKE_PIND))
#define PINE (*cc2420_fake_reg(FAKE_PINE))
#define SPDR (*cc2420_fake_reg(FAKE_SPDR))
#define SPSR (*cc2420_fake_reg(FAKE_SPSR))
#define SPCR (*cc2420_fake_reg(FAKE_SPCR))
#define TCCR1B (*cc2420_fake_reg(FAKE_TCCR1B))
#define TIFR (*cc2420_fake_reg(FAKE_TIFR))
#define TIMSK (*cc2420_fake_reg(FAKE_TIMSK))
#define EICRB (*cc2420_fake_reg(FAKE_EICRB))
#define EIFR (*cc2420_fake_reg(FAKE_EIFR))
#define EIMSK (*cc2420_fake_reg(FAKE_EIMSK))
#define PORTD (*cc2420_fake_reg(FAKE_PORTD))
#define PORTE (*cc2420_fake_reg(FAKE_PORTE))
#define EICRA (*cc2420_fake_reg(FAKE_EICRA))
#define ETIMSK (*cc2420_fake_reg(FAKE_ETIMSK))
#define MCUCR (*cc2420_fake_reg(FAKE_MCUCR))
#define SREG (*cc2420_fake_reg(FAKE_SREG))
#define ICR1 (cc2420_fake_icr1())

/* Bit numbers (ATmega128 datasheet). */
#define PA0 0
#define PA1 1
#define PA2 2
#define PA5 5
#define PA6 6
#define PB0 0
#define PB1 1
#define PB2 2
#define PB3 3
#define PB7 7
#define PD4 4
#define PD6 6
#define PE6 6
#define SPIF 7
#define SPI2X 0
#define SPE 6
#define MSTR 4
#define ICES1 6
#define ICF1 5
#define TICIE1 5
#define ISC60 4
#define ISC61 5
#define INTF6 6
#define INT6 6

#ifndef _BV
#define _BV(b) (1u << (b))
#endif

#endif
