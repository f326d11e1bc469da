/* Run parameters patched into a built image by the host.
 *
 * The ELF section .tern_params is exactly 32 bytes; the bench driver
 * replaces it with
 *   avr-objcopy --update-section .tern_params=params.bin app.elf
 * (8 little-endian words). On the AVR the section stays in flash
 * (boards/atmega128/atmega128.ld) and costs no RAM: tern_params names it
 * as a __flash array (read with LPM), through the linker's symbol
 * tern_params_flash, because avr-gcc puts a __flash variable in
 * .progmem.data whatever section it is given. An app may give defaults with
 *   TERN_PARAMS_DEFAULTS(a, b, ...);
 * (an ordinary read-only array placed in the section, never read by that
 * name: not volatile, so the section is not marked writable, which `size`
 * would count as RAM);
 * without that the section is 32 zero bytes and tern_params reads zeros. */
#ifndef TERN_PARAMS_H
#define TERN_PARAMS_H

#include <stdint.h>

#define TERN_PARAMS_WORDS 8

extern const volatile __flash uint32_t tern_params_flash[TERN_PARAMS_WORDS];
#define tern_params tern_params_flash

#define TERN_PARAMS_DEFAULTS(...)                                                     \
    __attribute__((section(".tern_params"), used)) const uint32_t                   \
        tern_params_defaults[TERN_PARAMS_WORDS] = {__VA_ARGS__}

#endif
