/* threads (MANTIS, seed 000 III-B): the highest-priority ready thread runs
 * and preempts a lower one at once; equal priorities take turns in
 * round-robin quanta (TERN_SLICE_CYCLES), a thread preempted by priority
 * resumes first within its level. */
#include "thread.h"

const char *const tern_model_name = "threads";

void tpolicy_reset(void) {}
void tpolicy_start(void) {}
void tpolicy_switched(const thread *prev, const thread *next)
{
    (void)prev;
    (void)next;
}

thread *tpolicy_pick(void) { return ready_top(); }

bool tpolicy_preempts(const thread *run, const thread *cand) { return cand->prio > run->prio; }

bool tpolicy_slice_preempts(const thread *run)
{
    (void)run;
    return true;
}

void tpolicy_level_dropped(void) {}

bool tern_adaptive_in_pf(void) { return false; }
