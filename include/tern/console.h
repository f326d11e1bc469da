/* Minimal formatted console output (no libc stdio: it is too large for a
 * sensor node). Supports %s %c %d %u %x %lu %lx %llu %llx %% and a width
 * with zero padding such as %08x.
 *
 * tern_printf and tern_snprintf take a string literal as the format: it is
 * checked like printf's and kept in flash on CPUs that would copy it to
 * RAM (tern_rom.h). The v-variants take any format pointer. */
#ifndef TERN_CONSOLE_H
#define TERN_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tern_rom.h"

void tern_printf_rom(const TERN_ROM char *fmt, ...);
void tern_vprintf(const TERN_ROM char *fmt, va_list ap);
/* The kernel's own diagnostics print with these two, not the formatter, so
 * an image whose app does not format links none of it (1.8 KB on the AVR). */
void tern_putu(uint32_t v); /* in decimal */
void tern_puts(const TERN_ROM char *s); /* no newline added; TERN_ROM_STR("...") keeps a literal in flash */

/* Same formats into a buffer, always terminated; returns the length the
 * full text would have. */
int tern_snprintf_rom(char *buf, size_t size, const TERN_ROM char *fmt, ...);
int tern_vsnprintf(char *buf, size_t size, const TERN_ROM char *fmt, va_list ap);

/* Never called: lets the compiler check a format and its arguments. */
static inline __attribute__((format(printf, 1, 2), always_inline)) void
tern_format_check_(const char *fmt, ...)
{
    (void)fmt;
}

/* An expression that lets the compiler check fmt against the arguments
 * (never evaluated), for macros that pass fmt on as a TERN_ROM string. */
#define TERN_FORMAT_CHECK(fmt, ...) (0 ? tern_format_check_(fmt, ##__VA_ARGS__) : (void)0)

#define tern_printf(fmt, ...)                                                   \
    (TERN_FORMAT_CHECK(fmt, ##__VA_ARGS__), tern_printf_rom(TERN_ROM_STR(fmt), ##__VA_ARGS__))
#define tern_snprintf(buf, size, fmt, ...)                                      \
    (TERN_FORMAT_CHECK(fmt, ##__VA_ARGS__),                                     \
     tern_snprintf_rom(buf, size, TERN_ROM_STR(fmt), ##__VA_ARGS__))

#endif
