/* Minimal formatted console output (no libc stdio: it is too large for a
 * sensor node). Supports %s %c %d %u %x %lu %lx %llu %llx %% and a width
 * with zero padding such as %08x. */
#ifndef TERN_CONSOLE_H
#define TERN_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>

void tern_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tern_vprintf(const char *fmt, va_list ap);
void tern_puts(const char *s); /* no newline added */

/* Same formats into a buffer, always terminated; returns the length the
 * full text would have. */
int tern_snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tern_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

#endif
