/* module-m128 pins: what arch/avr/avr_board.c and drivers/procbus need. */
#ifndef TERN_BOARD_H
#define TERN_BOARD_H

/* The software interrupts: INT6 and INT7 (PE6, PE7), as on boards/atmega128;
 * swirq 0 on the lower vector, so it is served first when both are
 * pending. */
#define BOARD_SWIRQ0_INT 6
#define BOARD_SWIRQ1_INT 7

/* The processor bus's frame-arrived pin: INT4 on PE4 (tern-sim's
 * bus_irq=E4, board.json's "bus_irq": "PE4"). */
#define BOARD_BUS_INT 4

/* No other pins to set up. */
static inline void board_init_pins(void) {}

#endif
