/* fifo (TinyOS): run to completion in arrival order; only interrupts
 * preempt, and they never start a handler. */
#include "kernel.h"

const char *const tern_model_name = "fifo";

void policy_enqueue(tern_msg **queue, tern_msg *m)
{
    tern_msg **pp = queue;
    while (*pp)
        pp = &(*pp)->next;
    m->next = NULL;
    *pp = m;
}

bool policy_preempts(uint8_t prio, int8_t level, bool from_isr)
{
    (void)prio;
    (void)level;
    (void)from_isr;
    return false;
}
