/* Counters readable through the API. */
#ifndef TERN_STATS_H
#define TERN_STATS_H

#include "tern/types.h"

typedef enum {
    TERN_DROP_NO_TASK = 0, /* destination does not exist */
    TERN_DROP_NO_PORT,     /* destination port does not exist */
    TERN_DROP_NO_ROUTE,    /* output port not wired */
    TERN_DROP_POOL_FULL,   /* message pool exhausted */
    TERN_DROP_NO_MEMORY,   /* heap exhausted while copying a payload */
    TERN_DROP_FINALIZED,   /* destination was finalized */
    TERN_DROP_REASONS
} tern_drop_reason;

typedef struct {
    uint32_t posted;
    uint32_t dispatched;
    uint32_t queued;   /* messages that had to wait in the queue */
    uint32_t held;     /* messages held until their task handled INIT */
    uint32_t dropped[TERN_DROP_REASONS];
    uint32_t preemptions; /* a handler started while another was on the stack */
    uint32_t ctx_switches; /* thread models: register-context switches */
    uint32_t handler_errors;
    uint32_t alloc_failures;
    uint32_t leaks_reported;
    uint32_t hw_refused; /* app starts refused: module_hw claims hardware this board lacks */
    uint32_t interrupts;
    uint16_t queue_depth;
    uint16_t max_queue_depth;
    uint8_t stack_depth; /* handlers nested on the shared stack right now */
    uint8_t max_stack_depth;
    uint32_t max_stack_bytes; /* deepest use of the main stack (painted), 0 if unknown */
} tern_counters;

const tern_counters *tern_stats(void);
void tern_stats_reset(void);

#endif
