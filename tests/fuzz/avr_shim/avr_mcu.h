/* The real arch/avr/avr_mcu.h (the ATmega128's: __AVR_ATmega128__ is
 * defined for this target) over the shim's <avr/io.h>; arch/avr itself is
 * not on the include path, its tern_rom.h is the AVR's. */
#include "../../../arch/avr/avr_mcu.h"
