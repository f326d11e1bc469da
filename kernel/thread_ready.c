/* Ready queues of the thread scheduler: one FIFO of ready threads per
 * priority level and a mask of the non-empty levels, so finding the
 * highest ready level is a few instructions. Here: the queues, and what
 * the policies ask of them (ready_top, ready_first); pushing and removing
 * are thread_ready.h's, compiled into the switch path's unit. */
#include <string.h>

#include "thread_ready.h"

ready_queue ready[TERN_PRIO_LEVELS];
level_mask ready_mask;

#if !THREAD_WIDE_CPU
const level_mask level_bits[TERN_PRIO_LEVELS] = {
#define B_(k) (level_mask)((level_mask)1 << (k))
    B_(0), B_(1), B_(2), B_(3), B_(4), B_(5), B_(6), B_(7),
#if TERN_PRIO_LEVELS > 8
    B_(8), B_(9), B_(10), B_(11), B_(12), B_(13), B_(14), B_(15),
#endif
#if TERN_PRIO_LEVELS > 16
    B_(16), B_(17), B_(18), B_(19), B_(20), B_(21), B_(22), B_(23),
    B_(24), B_(25), B_(26), B_(27), B_(28), B_(29), B_(30), B_(31),
#endif
#undef B_
};
#endif

void ready_reset(void)
{
    memset(ready, 0, sizeof ready);
    ready_mask = 0;
}

thread *ready_top(void) { return ready_mask ? ready[top_level(ready_mask)].head : NULL; }

/* The first ready thread, highest level first, that `accept` takes. */
thread *ready_first(bool (*accept)(const thread *t))
{
    for (int8_t p = TERN_PRIO_LEVELS - 1; p >= 0; p--) {
        if (!(ready_mask & level_bit(p)))
            continue;
        for (thread *t = ready[p].head; t; t = t->next)
            if (accept(t))
                return t;
    }
    return NULL;
}

