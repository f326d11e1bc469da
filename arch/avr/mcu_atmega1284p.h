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

/* The asynchronous timer, which runs on its 32,768 Hz crystal (TOSC1/2)
 * in power-save: Timer2 with AS2; its compare match A wakes the CPU. The
 * *UB bits of ASSR say a write has not yet reached the timer's clock
 * domain. */
#define AVR_ASYNC_ENABLE() (ASSR |= _BV(AS2))
#define AVR_ASYNC_START() (TCCR2A = 0, TCCR2B = _BV(CS20)) /* normal mode, prescaler 1 */
#define AVR_ASYNC_TCNT TCNT2
#define AVR_ASYNC_OCR OCR2A
#define AVR_ASYNC_BUSY (_BV(TCN2UB) | _BV(OCR2AUB) | _BV(TCR2AUB) | _BV(TCR2BUB))
#define AVR_ASYNC_IMSK TIMSK2
#define AVR_ASYNC_OCIE OCIE2A
#define AVR_ASYNC_IFR TIFR2
#define AVR_ASYNC_OCF OCF2A
#define AVR_ASYNC_COMP_vect TIMER2_COMPA_vect

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
