/* MicaZ pins: what arch/avr/avr_board.c needs, the CC2420's wiring
 * (drivers/cc2420) and the LEDs. */
#ifndef TERN_BOARD_H
#define TERN_BOARD_H

#include <avr/io.h>
#include <stdbool.h>

/* The software interrupts: PE6/INT6 is the CC2420's FIFOP here, so they
 * take INT5 (PE5) and INT7 (PE7), both free on the MicaZ. swirq 0 on the
 * lower vector (INT5), as on boards/atmega128, so it is served first when
 * both are pending. */
#define BOARD_SWIRQ0_INT 5
#define BOARD_SWIRQ1_INT 7

/* The CC2420: SPI, CSn and FIFO on port B, CCA and SFD on port D (SFD on
 * ICP1), FIFOP on INT6 (PE6), VREG_EN PA5, RESETn PA6. tern-sim's radio
 * model wires the same pins on an ATmega128 (tools/simavr/cc2420.c). */
#define CC2420_CSN_BIT PB0 /* also the SPI's SS */
#define CC2420_SCK_BIT PB1
#define CC2420_MOSI_BIT PB2
#define CC2420_MISO_BIT PB3
#define CC2420_FIFO_BIT PB7
#define CC2420_CCA_BIT PD6
#define CC2420_SFD_BIT PD4 /* ICP1 */
#define CC2420_FIFOP_INT 6
#define CC2420_FIFOP_VECT INT6_vect

/* LEDs on port A, active low (the MicaZ drives their cathodes). */
typedef enum {
    MICAZ_LED_YELLOW = 0, /* PA0 */
    MICAZ_LED_GREEN = 1,  /* PA1 */
    MICAZ_LED_RED = 2,    /* PA2 */
} micaz_led;

#define MICAZ_LEDS_MASK ((uint8_t)(_BV(PA0) | _BV(PA1) | _BV(PA2)))

static inline void micaz_led_set(micaz_led led, bool on)
{
    uint8_t s = SREG; /* PORTA is shared with the radio's VREG_EN/RESETn */
    __asm__ volatile("cli" ::: "memory");
    if (on)
        PORTA &= (uint8_t)~_BV(led);
    else
        PORTA |= (uint8_t)_BV(led);
    SREG = s;
}

static inline void micaz_led_toggle(micaz_led led)
{
    uint8_t s = SREG;
    __asm__ volatile("cli" ::: "memory");
    PORTA ^= (uint8_t)_BV(led);
    SREG = s;
}

/* From board_init(): LEDs off; the radio powered down (VREG_EN PA5 low,
 * RESETn PA6 low) with its chip select high (PB0, which is also the
 * SPI's SS and must be an output for the AVR to stay SPI master). */
static inline void board_init_pins(void)
{
    PORTA = (uint8_t)((PORTA & ~(_BV(PA5) | _BV(PA6))) | MICAZ_LEDS_MASK);
    DDRA |= (uint8_t)(MICAZ_LEDS_MASK | _BV(PA5) | _BV(PA6));
    PORTB |= _BV(PB0);
    DDRB |= _BV(PB0);
}

/* The devices this board has, TERN_HW_* (tern/types.h): the CC2420
 * (drivers/cc2420) and the ATmega128's ADC. A module_hw entry claiming more
 * is refused at start (TERN_ENOHW). */
#define TERN_BOARD_HW (TERN_HW_RADIO | TERN_HW_ADC)

#endif
