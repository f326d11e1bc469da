/* hybrid (tern): the stack model for every task, a private-stack thread
 * only for a task flagged TERN_TASK_THREAD (the message layer and the rule
 * between the two kinds: sched_hybrid.c).
 *
 * Run-to-completion tasks follow policy_stack.c exactly: queued by
 * priority then arrival; a task's post to an equal or higher priority runs
 * at once, nested; from an interrupt only a strictly higher priority
 * preempts. Thread tasks follow policy_threads.c: the highest-priority
 * ready thread runs, equal priorities take round-robin quanta. */
#include "policy_order.h"
#include "thread.h"

const char *const tern_model_name = "hybrid";

void policy_enqueue(tern_msg **queue, tern_msg *m) { insert_by_priority(queue, m); }

bool policy_preempts(uint8_t prio, int8_t level, bool from_isr)
{
    return from_isr ? (int8_t)prio > level : (int8_t)prio >= level;
}

void tpolicy_reset(void) {}

/* The threads start: the INITs of the run-to-completion tasks are queued,
 * dispatch the first one allowed above the threads. */
void tpolicy_start(void) { sched_hybrid_level_dropped(); }

/* After any switch the thread level is next's: whatever waited above it
 * (a blocked thread's level is gone) gets its vector pended. */
void tpolicy_switched(const thread *prev, const thread *next)
{
    (void)prev;
    (void)next;
    sched_hybrid_level_dropped();
}

void tpolicy_level_dropped(void) { sched_hybrid_level_dropped(); }

thread *tpolicy_pick(void) { return ready_top(); }

bool tpolicy_preempts(const thread *run, const thread *cand) { return cand->prio > run->prio; }

bool tpolicy_slice_preempts(const thread *run)
{
    (void)run;
    return true;
}

bool tern_adaptive_in_pf(void) { return false; }
