/* micaz-1284p pins: a MicaZ whose ATmega128L is replaced by an ATmega1284P
 * at 16 MHz (16 KB of RAM instead of 4 KB: room for RFC 4944's 1,280-byte
 * reassembly, see docs/boards.md), the same CC2420. The 1284P has no
 * port E and only three external interrupts, so the wiring moves: what
 * arch/avr/avr_board.c needs, the CC2420's wiring (drivers/cc2420) and the
 * LEDs. */
#ifndef TERN_BOARD_H
#define TERN_BOARD_H

#include <avr/io.h>
#include <stdbool.h>

/* The software interrupts: INT0 (PD2) and INT1 (PD3), as on module-m1284;
 * swirq 0 on the lower vector, served first when both are pending. */
#define BOARD_SWIRQ0_INT 0
#define BOARD_SWIRQ1_INT 1

/* The CC2420: SPI on the 1284P's SPI pins (port B), CSn on SS (PB4), FIFO
 * PB0, FIFOP on INT2 (PB2), CCA PD7, SFD on ICP1 (PD6), VREG_EN PA5,
 * RESETn PA6 (as on the MicaZ). tern-sim's radio model wires the same pins
 * on an ATmega1284P (tools/simavr/cc2420.c). */
#define CC2420_CSN_BIT PB4 /* also the SPI's SS */
#define CC2420_MOSI_BIT PB5
#define CC2420_MISO_BIT PB6
#define CC2420_SCK_BIT PB7
#define CC2420_FIFO_BIT PB0
#define CC2420_CCA_BIT PD7
#define CC2420_SFD_BIT PD6 /* ICP1 */
#define CC2420_FIFOP_INT 2
#define CC2420_FIFOP_VECT INT2_vect

/* LEDs on port A, active low, as on the MicaZ. */
typedef enum {
    MICAZ_LED_YELLOW = 0, /* PA0 */
    MICAZ_LED_GREEN = 1,  /* PA1 */
    MICAZ_LED_RED = 2,    /* PA2 */
} micaz_led;

#define MICAZ_LEDS_MASK ((uint8_t)(_BV(PA0) | _BV(PA1) | _BV(PA2)))

/* From board_init(): LEDs off; the radio powered down (VREG_EN and RESETn
 * low) with its chip select high (PB4, the SPI's SS, which must be an
 * output for the AVR to stay SPI master). */
static inline void board_init_pins(void)
{
    PORTA = (uint8_t)((PORTA & ~(_BV(PA5) | _BV(PA6))) | MICAZ_LEDS_MASK);
    DDRA |= (uint8_t)(MICAZ_LEDS_MASK | _BV(PA5) | _BV(PA6));
    PORTB |= _BV(PB4);
    DDRB |= _BV(PB4);
}

/* The devices this board has, TERN_HW_* (tern/types.h): the CC2420
 * (drivers/cc2420) and the ATmega1284P's ADC. A module_hw entry claiming
 * more is refused at start (TERN_ENOHW). */
#define TERN_BOARD_HW (TERN_HW_RADIO | TERN_HW_ADC)

#endif
