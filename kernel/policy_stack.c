/* stack (CoMOS, Stack Resource Policy; seed 002 V-B): run to completion on
 * one shared stack, but a message may start its handler at once, nested
 * above the running one:
 *  - posted by a task: when its priority is equal to or above the running
 *    handler's (the post is a preemption point);
 *  - posted by an interrupt: only when strictly above, so work already
 *    started because of an earlier interrupt keeps precedence.
 * The scheduler queues messages to tasks already on the stack. */
#include "policy_order.h"

const char *const tern_model_name = "stack";

void policy_enqueue(tern_msg **queue, tern_msg *m) { insert_by_priority(queue, m); }

bool policy_preempts(uint8_t prio, int8_t level, bool from_isr)
{
    return from_isr ? (int8_t)prio > level : (int8_t)prio >= level;
}
