/* priority (SOS): run to completion, the highest destination priority
 * first, then arrival order. Nothing preempts a running handler. */
#include "policy_order.h"

const char *const tern_model_name = "priority";

void policy_enqueue(tern_msg **queue, tern_msg *m) { insert_by_priority(queue, m); }

bool policy_preempts(uint8_t prio, int8_t level, bool from_isr)
{
    (void)prio;
    (void)level;
    (void)from_isr;
    return false;
}
