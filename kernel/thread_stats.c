/* Statistics of the thread models: the switch counters (counted by
 * thread.c's switch path and the policies) and each stack's deepest use,
 * found by scanning its paint. */
#include "thread.h"

tern_thread_stats thread_stats;

static uint32_t stack_depth(const thread *t)
{
    const uint32_t *p = (const uint32_t *)(const void *)t->stack_lo;
    const uint32_t *end = (const uint32_t *)(const void *)(t->stack_lo + t->stack_size);
    while (p < end && *p == STACK_PAINT)
        p++;
    return (uint32_t)((const uint8_t *)end - (const uint8_t *)p);
}

const tern_thread_stats *tern_thread_get_stats(void)
{
    for (int i = 0; i < TERN_MAX_TASKS; i++) {
        const thread *t = thread_of((tern_task_id)i);
        thread_stats.stack_bytes[i] = t ? stack_depth(t) : 0;
    }
    return &thread_stats;
}
