/* A ring of timestamped kernel events, drained to the console.
 *
 * Wire format (docs/trace.md): console lines "T <hex>", 16 hex digits per
 * event = 8 bytes in memory order: u32 time (low 32 bits of the clock in
 * ticks), u8 type, u8 a, u16 b, all little-endian. */
#ifndef TERN_TRACE_H
#define TERN_TRACE_H

#include "tern/types.h"

typedef enum {
    TERN_EV_IRQ_ENTER = 1,
    TERN_EV_IRQ_EXIT = 2,
    TERN_EV_POST = 3,          /* a = dst task, b = port */
    TERN_EV_HANDLER_START = 4, /* a = task, b = port */
    TERN_EV_HANDLER_END = 5,   /* a = task, b = port */
    TERN_EV_CTX_SWITCH = 6,    /* a = from task, b = to task */
    TERN_EV_IDLE_ENTER = 7,    /* a = sleep state */
    TERN_EV_IDLE_EXIT = 8,     /* a = sleep state */
    TERN_EV_ALLOC = 9,         /* a = owner, b = size */
    TERN_EV_FREE = 10,         /* a = owner, b = size */
    TERN_EV_DROP = 11,         /* a = dst task, b = tern_drop_reason */
    TERN_EV_PREEMPT = 12,      /* a = preempting task, b = preempted task */
    TERN_EV_OVERFLOW = 13,     /* b = events lost because the ring was full */
    TERN_EV_MARK = 14,         /* free for applications */
} tern_event_type;

typedef struct {
    uint32_t time;
    uint8_t type;
    uint8_t a;
    uint16_t b;
} tern_event;

#if TERN_TRACE_EVENTS > 0
void tern_trace(uint8_t type, uint8_t a, uint16_t b);
#else
static inline void tern_trace(uint8_t type, uint8_t a, uint16_t b) { (void)type; (void)a; (void)b; }
#endif

/* Copy out the oldest events (host tests and decoders); returns the count. */
size_t tern_trace_read(tern_event *out, size_t max);
/* Stream every recorded event to the console and empty the ring. */
void tern_trace_drain(void);
/* Ticks one tern_trace() call costs, measured on this board at start-up
 * (averaged over many calls) so benchmarks can subtract it. */
tern_time tern_trace_cost(void);
/* Encode one event as 16 hex digits (no terminator) into out[16]. */
void tern_trace_encode(const tern_event *ev, char out[16]);

#endif
