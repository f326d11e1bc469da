/* ATmega128 (boards atmega128, micaz, module-m128): through arch/avr/avr_mcu.h. */
#ifndef TERN_MCU_ATMEGA128_H
#define TERN_MCU_ATMEGA128_H

/* Timer1's interrupt enables (OCIE1A, TOIE1) share TIMSK with timers 0 and 2. */
#define AVR_TIMER1_IMSK TIMSK
#define AVR_TIMER1_IFR TIFR
#define AVR_TIMER3_IMSK ETIMSK /* Timer3's enables share ETIMSK */
#define AVR_TIMER1_CAPT_IE TICIE1 /* input capture interrupt enable */
/* SE and SM2:0 live in MCUCR, beside the external-memory bits. */
#define AVR_SLEEP_CTRL MCUCR

/* The asynchronous timer, which runs on its 32,768 Hz crystal (TOSC1/2)
 * in power-save: Timer0 with AS0; its compare match wakes the CPU. The
 * *UB bits of ASSR say a write has not yet reached the timer's clock
 * domain. */
#define AVR_ASYNC_ENABLE() (ASSR |= _BV(AS0))
#define AVR_ASYNC_START() (TCCR0 = _BV(CS00)) /* normal mode, prescaler 1 */
#define AVR_ASYNC_TCNT TCNT0
#define AVR_ASYNC_OCR OCR0
#define AVR_ASYNC_BUSY (_BV(TCN0UB) | _BV(OCR0UB) | _BV(TCR0UB))
#define AVR_ASYNC_IMSK TIMSK
#define AVR_ASYNC_OCIE OCIE0
#define AVR_ASYNC_IFR TIFR
#define AVR_ASYNC_OCF OCF0
#define AVR_ASYNC_COMP_vect TIMER0_COMP_vect

/* External interrupts: INT0..3 on PD0..3 (sense in EICRA), INT4..7 on
 * PE4..7 (EICRB); pin n of its port is bit n. INT0..3 offer only level,
 * falling and rising sense: "any edge" (01) is reserved there. */
#define AVR_EXTINT_COUNT 8
#define AVR_EXTINT_PORT_ID(n) ((n) < 4 ? 'D' : 'E')
#define AVR_EXTINT_PORT(n) (*((n) < 4 ? &PORTD : &PORTE))
#define AVR_EXTINT_DDR(n) (*((n) < 4 ? &DDRD : &DDRE))
#define AVR_EXTINT_PINS(n) (*((n) < 4 ? &PIND : &PINE))
#define AVR_EXTINT_BIT(n) ((uint8_t)_BV(n))
#define AVR_EXTINT_EICR(n) (*((n) < 4 ? &EICRA : &EICRB))
#define AVR_EXTINT_ISC_SHIFT(n) (2u * ((n) & 3u))
#define AVR_EXTINT_ANY_EDGE_OK(n) ((n) >= 4 && (n) <= 7)

#endif
