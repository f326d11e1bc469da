/* ATmega1284P (boards module-m1284, micaz-1284p): through arch/avr/avr_mcu.h. */
#ifndef TERN_MCU_ATMEGA1284P_H
#define TERN_MCU_ATMEGA1284P_H

/* Each timer has its own interrupt mask register. */
#define AVR_TIMER1_IMSK TIMSK1
#define AVR_TIMER1_IFR TIFR1
#define AVR_TIMER3_IMSK TIMSK3
#define AVR_TIMER1_CAPT_IE ICIE1 /* input capture interrupt enable */
/* The sleep bits have a register of their own. */
#define AVR_SLEEP_CTRL SMCR

/* External interrupts: only three, INT0 on PD2, INT1 on PD3, INT2 on PB2,
 * all sensed through EICRA and all offering "any edge" (the part's pin
 * changes go through PCINT vectors, which tern does not use). */
#define AVR_EXTINT_COUNT 3
#define AVR_EXTINT_PORT_ID(n) ((n) == 2 ? 'B' : 'D')
#define AVR_EXTINT_PORT(n) (*((n) == 2 ? &PORTB : &PORTD))
#define AVR_EXTINT_DDR(n) (*((n) == 2 ? &DDRB : &DDRD))
#define AVR_EXTINT_PINS(n) (*((n) == 2 ? &PINB : &PIND))
#define AVR_EXTINT_BIT(n) ((uint8_t)_BV((n) == 2 ? PB2 : PD2 + (n)))
#define AVR_EXTINT_EICR(n) EICRA
#define AVR_EXTINT_ISC_SHIFT(n) (2u * (n))
#define AVR_EXTINT_ANY_EDGE_OK(n) ((n) >= 0 && (n) <= 2)

#endif
