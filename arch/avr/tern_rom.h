/* Constant strings in flash. The AVR is a Harvard CPU: a plain `const`
 * string is copied from flash to RAM at reset, and RAM is 4 KB. A string
 * made with TERN_ROM_STR() stays in flash (__flash), and a TERN_ROM
 * pointer (__memx, 24 bits) reads either memory, so functions that take
 * one accept RAM strings too. A constant table declared TERN_FLASH
 * (__flash) stays in flash too, and is read in place with LPM through a
 * `const TERN_FLASH T *` (16 bits: the first 64 KB of flash, where the
 * linker puts .progmem). */
#ifndef TERN_ROM_H
#define TERN_ROM_H

#define TERN_ROM __memx
#define TERN_FLASH __flash
#define TERN_ROM_STR(literal)                                   \
    (__extension__({                                            \
        static const __flash char tern_rom_str_[] = literal;    \
        (const __memx char *)tern_rom_str_;                     \
    }))

#endif
