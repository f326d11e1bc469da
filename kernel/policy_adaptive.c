/* adaptive (seed 003 section 5): `threads` plus preemption-free periods.
 *
 * A thread that comes to the CPU with a full quantum is long (beta), one
 * with part of its quantum left (it blocked before using it up) is short
 * (alpha); see switch_out() in thread.c. Round-robin runs as in `threads`
 * until delta = TERN_ADAPTIVE_DELTA quanta have passed; then a
 * preemption-free period begins: within a priority level short threads run
 * before long ones and are never sliced (they run until they block), and a
 * long thread running when the period begins is preempted if a short one
 * of its level waits. The period ends after TERN_ADAPTIVE_PF_QUANTA quanta,
 * or as soon as no short thread is running or ready, and round-robin
 * resumes for the next delta. Across levels priority preemption stays as
 * in `threads`: the periods save the switches between equals. */
#include "thread.h"

const char *const tern_model_name = "adaptive";

static bool pf;
static tern_alarm period;

static bool is_short(const thread *t) { return t->quantum_left < thread_quantum(); }

static bool short_running(void)
{
    const thread *c = thread_current();
    return c && c->state == T_RUNNING && c->prio >= 0 && !c->long_run;
}

static void leave_pf(void)
{
    pf = false;
    thread_stats.pf_left++;
    tern_alarm_set(&period, tern_now() + TERN_ADAPTIVE_DELTA * thread_quantum(), 0);
}

/* Interrupt context: delta has passed (enter a period) or the period's
 * length has (leave it). */
static void period_ends(tern_alarm *a, void *arg)
{
    (void)arg;
    if (pf) {
        leave_pf();
        return;
    }
    thread *s = ready_first(is_short);
    if (!s && !short_running()) { /* nothing short to favour: stay round-robin */
        tern_alarm_set(a, tern_now() + TERN_ADAPTIVE_DELTA * thread_quantum(), 0);
        return;
    }
    pf = true;
    thread_stats.pf_entered++;
    tern_alarm_set(a, tern_now() + TERN_ADAPTIVE_PF_QUANTA * thread_quantum(), 0);
    const thread *c = thread_current();
    if (s && c->state == T_RUNNING && c->prio >= 0 && c->long_run && s->prio == c->prio) {
        thread_stats.pf_long_preempted++;
        thread_request_switch();
    }
}

void tpolicy_reset(void)
{
    pf = false;
    tern_alarm_init(&period, period_ends, NULL);
}

void tpolicy_start(void)
{
    tern_alarm_set(&period, tern_now() + TERN_ADAPTIVE_DELTA * thread_quantum(), 0);
}

thread *tpolicy_pick(void)
{
    thread *first = ready_first(NULL);
    if (!pf)
        return first;
    thread *s = ready_first(is_short);
    if (!s && !short_running()) {
        leave_pf();
        return first;
    }
    return s && first && s->prio == first->prio ? s : first;
}

bool tpolicy_preempts(const thread *run, const thread *cand)
{
    if (cand->prio > run->prio)
        return true;
    return pf && run->long_run && cand->prio == run->prio && is_short(cand);
}

bool tpolicy_slice_preempts(const thread *run) { return !pf || run->long_run; }

bool tern_adaptive_in_pf(void) { return pf; }
