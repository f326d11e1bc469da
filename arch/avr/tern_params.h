/* Run parameters patched into a built image by the host.
 *
 * The ELF section .tern_params is exactly 32 bytes; the bench driver
 * replaces it with
 *   avr-objcopy --update-section .tern_params=params.bin app.elf
 * (8 little-endian words). On the AVR the section lives in RAM and is
 * loaded from flash at reset like .data (boards/atmega128/atmega128.ld), so
 * C reads it as an ordinary array. An app may give defaults with
 *   TERN_PARAMS_DEFAULTS(a, b, ...);
 * without that the section is 32 zero bytes and tern_params reads zeros. */
#ifndef TERN_PARAMS_H
#define TERN_PARAMS_H

#include <stdint.h>

#define TERN_PARAMS_WORDS 8

extern const volatile uint32_t tern_params[TERN_PARAMS_WORDS];

#define TERN_PARAMS_DEFAULTS(...)                                                     \
    __attribute__((section(".tern_params"), used)) const volatile uint32_t          \
        tern_params[TERN_PARAMS_WORDS] = {__VA_ARGS__}

#endif
