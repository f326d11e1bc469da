/* module-m1284 pins: what arch/avr/avr_board.c and drivers/procbus need.
 * The ATmega1284P has only three external interrupts (INT0 PD2, INT1 PD3,
 * INT2 PB2); this module uses all three. */
#ifndef TERN_BOARD_H
#define TERN_BOARD_H

/* The software interrupts: INT0 and INT1, both on port D as avr_board.c
 * wants; swirq 0 on the lower vector, so it is served first when both are
 * pending. */
#define BOARD_SWIRQ0_INT 0
#define BOARD_SWIRQ1_INT 1

/* The processor bus's frame-arrived pin: INT2 on PB2 (tern-sim's
 * bus_irq=B2, board.json's "bus_irq": "PB2"). */
#define BOARD_BUS_INT 2

/* Power figures for the idle policy (tern/power.h, docs/boards.md "Power"):
 * ATmega1284P at 20 MHz and 5 V, tern-sim's figures (docs/tern-sim.md,
 * "Energy"): idle 1.3 mA at 8 MHz scaled to 20 MHz, 3.25 mA = 16,250 uW;
 * power-save 0.6 uA = 3 uW. Waking from power-save or power-down
 * pays the crystal oscillator's start-up, 16K CK, at about the idle power
 * (the oscillator runs, the CPU waits): E_W = P_I * T_W. */
#define BOARD_POWER_IDLE_UW 16250u
#define BOARD_POWER_SAVE_UW 3u
#define BOARD_POWER_WAKE_UW 16250u
#define BOARD_WAKE_CYCLES 16384u

/* No other pins to set up. */
static inline void board_init_pins(void) {}

/* The devices this board has, TERN_HW_* (tern/types.h): the ATmega1284P's
 * ADC (tern-sim's [[adc]] feeds it); no radio. A module_hw entry claiming
 * more is refused at start (TERN_ENOHW). */
#define TERN_BOARD_HW TERN_HW_ADC

#endif
