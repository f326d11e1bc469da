/* The trace ring. Recording is a few stores with interrupts masked; a full
 * ring drops new events and counts them, so the host sees an OVERFLOW
 * event instead of silently missing data. */
#include "kernel.h"

#if TERN_TRACE_EVENTS > 0
_Static_assert((TERN_TRACE_EVENTS & (TERN_TRACE_EVENTS - 1)) == 0, "power of two");

static tern_event ring[TERN_TRACE_EVENTS];
static uint16_t head, count, lost;
#endif
static tern_time cost;

void tern_trace_encode(const tern_event *ev, char out[16])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t bytes[8] = {
        (uint8_t)ev->time,        (uint8_t)(ev->time >> 8), (uint8_t)(ev->time >> 16),
        (uint8_t)(ev->time >> 24), ev->type,                ev->a,
        (uint8_t)ev->b,           (uint8_t)(ev->b >> 8),
    };
    for (int i = 0; i < 8; i++) {
        out[2 * i] = hex[bytes[i] >> 4];
        out[2 * i + 1] = hex[bytes[i] & 15];
    }
}

#if TERN_TRACE_EVENTS > 0
void tern_trace(uint8_t type, uint8_t a, uint16_t b)
{
    tern_irq_state s = port_irq_save();
    if (count == TERN_TRACE_EVENTS) {
        if (lost < UINT16_MAX)
            lost++;
    } else {
        tern_event *ev = &ring[(head + count) & (TERN_TRACE_EVENTS - 1)];
        ev->time = (uint32_t)tern_now();
        ev->type = type;
        ev->a = a;
        ev->b = b;
        count++;
    }
    port_irq_restore(s);
}

static bool pop(tern_event *out)
{
    tern_irq_state s = port_irq_save();
    bool ok = count > 0;
    if (ok) {
        *out = ring[head];
        head = (head + 1) & (TERN_TRACE_EVENTS - 1);
        count--;
    } else if (lost) { /* report the loss once the ring has been emptied */
        out->time = (uint32_t)tern_now();
        out->type = TERN_EV_OVERFLOW;
        out->a = 0;
        out->b = lost;
        lost = 0;
        ok = true;
    }
    port_irq_restore(s);
    return ok;
}

size_t tern_trace_read(tern_event *out, size_t max)
{
    size_t n = 0;
    while (n < max && pop(&out[n]))
        n++;
    return n;
}

void tern_trace_drain(void)
{
    enum { PER_LINE = 8 };
    tern_event ev;
    int on_line = 0;
    char hex[16];
    while (pop(&ev)) {
        if (on_line == 0)
            tern_puts("T ");
        tern_trace_encode(&ev, hex);
        for (int i = 0; i < 16; i++)
            port_putc(hex[i]);
        if (++on_line == PER_LINE) {
            port_putc('\n');
            on_line = 0;
        }
    }
    if (on_line)
        port_putc('\n');
}

void trace_init(void)
{
    enum { SAMPLES = 16 };
    head = count = lost = 0;
    tern_time t0 = tern_now();
    for (int i = 0; i < SAMPLES; i++)
        tern_trace(TERN_EV_MARK, 0, 0);
    cost = (tern_now() - t0) / SAMPLES;
    head = count = lost = 0;
}
#else
size_t tern_trace_read(tern_event *out, size_t max) { (void)out; (void)max; return 0; }
void tern_trace_drain(void) {}
void trace_init(void) {}
#endif

tern_time tern_trace_cost(void) { return cost; }
