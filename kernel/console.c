/* A small printf: enough for diagnostics and benchmark records, a fraction
 * of newlib's size. */
#include "kernel.h"

typedef struct {
    char *buf; /* NULL: write to the console */
    size_t size;
    size_t len;
} sink;

static void emit(sink *s, char c)
{
    if (!s->buf)
        port_putc(c);
    else if (s->len + 1 < s->size)
        s->buf[s->len] = c;
    s->len++;
}

static void emit_number(sink *s, unsigned long long v, unsigned base, bool negative,
                        unsigned width, char pad)
{
    char digits[24];
    unsigned n = 0;
    /* Divide no wider than the value needs: on an 8-bit CPU a 64-bit
     * division costs thousands of cycles per digit, a 16-bit one ~200. */
    while (v > UINT32_MAX) {
        unsigned d = (unsigned)(v % base);
        digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    }
    uint32_t w = (uint32_t)v;
    while (w > UINT16_MAX) {
        uint32_t q = w / base;
        unsigned d = (unsigned)(w - q * base);
        digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        w = q;
    }
    uint16_t h = (uint16_t)w;
    do {
        unsigned d = (unsigned)(h % base);
        digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        h = (uint16_t)(h / base);
    } while (h);
    if (negative)
        digits[n++] = '-';
    while (width > n) {
        emit(s, pad);
        width--;
    }
    while (n)
        emit(s, digits[--n]);
}

static void format(sink *s, const TERN_ROM char *fmt, va_list ap)
{
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            emit(s, *fmt);
            continue;
        }
        fmt++;
        char pad = ' ';
        if (*fmt == '0') {
            pad = '0';
            fmt++;
        }
        unsigned width = 0;
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (unsigned)(*fmt++ - '0');
        int longs = 0;
        while (*fmt == 'l') {
            longs++;
            fmt++;
        }
        switch (*fmt) {
        case 's': {
            const char *str = va_arg(ap, const char *);
            for (str = str ? str : "(null)"; *str; str++)
                emit(s, *str);
            break;
        }
        case 'c':
            emit(s, (char)va_arg(ap, int));
            break;
        case 'd': {
            long long v = longs == 2 ? va_arg(ap, long long)
                          : longs == 1 ? va_arg(ap, long) : va_arg(ap, int);
            unsigned long long mag = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
            emit_number(s, mag, 10, v < 0, width, pad);
            break;
        }
        case 'u':
        case 'x': {
            unsigned long long v = longs == 2 ? va_arg(ap, unsigned long long)
                                   : longs == 1 ? va_arg(ap, unsigned long)
                                                : va_arg(ap, unsigned);
            emit_number(s, v, *fmt == 'x' ? 16 : 10, false, width, pad);
            break;
        }
        case '%':
            emit(s, '%');
            break;
        case '\0':
            return;
        default: /* unknown conversion: show it rather than guess */
            emit(s, '%');
            emit(s, *fmt);
        }
    }
}

void tern_vprintf(const TERN_ROM char *fmt, va_list ap)
{
    sink s = {NULL, 0, 0};
    format(&s, fmt, ap);
}

void tern_printf_rom(const TERN_ROM char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tern_vprintf(fmt, ap);
    va_end(ap);
}

void tern_puts(const TERN_ROM char *str)
{
    while (*str)
        port_putc(*str++);
}

void tern_putu(uint32_t v)
{
    char digits[10];
    uint8_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        port_putc(digits[--n]);
}

int tern_vsnprintf(char *buf, size_t size, const TERN_ROM char *fmt, va_list ap)
{
    sink s = {buf, size, 0};
    format(&s, fmt, ap);
    if (size)
        buf[s.len < size ? s.len : size - 1] = '\0';
    return (int)s.len;
}

int tern_snprintf_rom(char *buf, size_t size, const TERN_ROM char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = tern_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
