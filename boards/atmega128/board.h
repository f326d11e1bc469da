/* What arch/avr/avr_board.c needs to know about this board's pins. */
#ifndef TERN_BOARD_H
#define TERN_BOARD_H

/* The software interrupts: INT6 and INT7 (PE6, PE7), nothing else is
 * wired on this board. swirq 0 on the lower vector, so it is served first
 * when both are pending. */
#define BOARD_SWIRQ0_INT 6
#define BOARD_SWIRQ1_INT 7

/* No other pins to set up. */
static inline void board_init_pins(void) {}

/* The devices this board has, TERN_HW_* (tern/types.h): the ATmega128's ADC
 * (tern-sim's [[adc]] feeds it); no radio. A module_hw entry claiming more
 * is refused at start (TERN_ENOHW). */
#define TERN_BOARD_HW TERN_HW_ADC

#endif
