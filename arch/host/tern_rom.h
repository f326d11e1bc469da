/* Constant strings stay where the linker puts them: this CPU reads flash
 * and RAM with the same instructions (see arch/avr/tern_rom.h for a CPU
 * that does not). */
#ifndef TERN_ROM_H
#define TERN_ROM_H

#define TERN_ROM
#define TERN_FLASH
#define TERN_ROM_STR(literal) (literal)

#endif
