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

/* Power figures for the idle policy (tern/power.h, docs/boards.md "Power"):
 * ATmega128L at 7.3728 MHz and 3 V, tern-sim's figures (docs/tern-sim.md,
 * "Energy"): idle 3.2 mA = 9,600 uW; power-save 15 uA = 45 uW. Waking from power-save or power-down
 * pays the crystal oscillator's start-up, 16K CK, at about the idle power
 * (the oscillator runs, the CPU waits): E_W = P_I * T_W. */
#define BOARD_POWER_IDLE_UW 9600u
#define BOARD_POWER_SAVE_UW 45u
#define BOARD_POWER_WAKE_UW 9600u
#define BOARD_WAKE_CYCLES 16384u

/* No other pins to set up. */
static inline void board_init_pins(void) {}

/* The devices this board has, TERN_HW_* (tern/types.h): the ATmega128's ADC
 * (tern-sim's [[adc]] feeds it); no radio: a module reaches the air through
 * another module. A module_hw entry claiming more is refused at start
 * (TERN_ENOHW). */
#define TERN_BOARD_HW TERN_HW_ADC

#endif
