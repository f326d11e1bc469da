/* Run parameters patched into a built image by the host.
 *
 * The ELF section .tern_params is exactly 32 bytes, 4-aligned, in flash;
 * the bench driver replaces it with
 *   arm-none-eabi-objcopy --update-section .tern_params=params.bin app.elf
 * (8 little-endian words). An app may give defaults with
 *   TERN_PARAMS_DEFAULTS(a, b, ...);
 * without that the section is 32 zero bytes and tern_params reads zeros.
 * Board-independent: any linker script that keeps the section works. */
#ifndef TERN_PARAMS_H
#define TERN_PARAMS_H

#include <stdint.h>

#define TERN_PARAMS_WORDS 8

/* volatile: the compiler must read flash, not fold the defaults in. */
extern const volatile uint32_t tern_params[TERN_PARAMS_WORDS];

#define TERN_PARAMS_DEFAULTS(...)                                                     \
    __attribute__((section(".tern_params"), used)) const volatile uint32_t          \
        tern_params[TERN_PARAMS_WORDS] = {__VA_ARGS__}

#endif
