/* adaptive (seed 003 section 5): `threads` plus preemption-free periods.
 *
 * A thread that has a full quantum is long (beta), one with part of its
 * quantum left (it blocked before using it up) is short (alpha); see
 * switch_out() and slice_ends() in thread.c. Round-robin runs as in
 * `threads` until delta = TERN_ADAPTIVE_DELTA quanta have passed; then a
 * preemption-free period begins:
 *  - a long thread running at that moment is preempted if a short thread
 *    of its level waits (the one involuntary switch of the period);
 *  - within a level, short threads are chosen before long ones;
 *  - a short thread is not preempted when the rest of its quantum runs
 *    out: it runs on, to completion if that comes within the rest; if not,
 *    it has been given a full quantum and is long from then on (the
 *    paper's class is the quantum a thread holds, not the one it was
 *    dispatched with), so it is sliced at that quantum's end like any long
 *    thread (see TERN_ADAPTIVE_SLICE_LONG for the stricter variant). A
 *    thread that blocks with a little of its quantum used thus holds the
 *    CPU for less than two quanta while a peer waits, not a whole period.
 * The period ends after TERN_ADAPTIVE_PF_QUANTA quanta, or as soon as the
 * CPU idles, and round-robin resumes for the next delta. Across levels
 * priority preemption stays as in `threads`: the periods save the
 * round-robin switches between equals. A delta that ends while the CPU
 * idles parks the period timer until the next wake-up, so the timer never
 * wakes an idle node. */
#include "thread.h"

/* 1 (default): inside a period long threads still lose the CPU at the end
 * of a quantum, only short ones run to completion (seed 003 5: "preempt
 * the currently running process if it is long, and run small processes to
 * completion"). 0: no quantum ends inside a period at all, which removes
 * far more involuntary switches but lets a long thread hold the CPU for
 * the whole period while short jobs wait (bench/seed003 measures both). */
#ifndef TERN_ADAPTIVE_SLICE_LONG
#define TERN_ADAPTIVE_SLICE_LONG 1
#endif

const char *const tern_model_name = "adaptive";

static bool pf;
static bool parked;          /* delta ended during idle: restart at the next wake */
static const thread *evict;  /* the long thread the period began with */
static tern_alarm period;

static bool is_short(const thread *t) { return t->quantum_left < thread_quantum(); }

static void start_delta(void)
{
    tern_alarm_set(&period, tern_now() + (tern_time)TERN_ADAPTIVE_DELTA * thread_quantum(), 0);
}

static void leave_pf(void)
{
    pf = false;
    evict = NULL;
    thread_stats.pf_left++;
    start_delta();
}

/* Interrupt context: delta has passed (begin a period) or the period's
 * length has (end it). */
static void period_ends(tern_alarm *a, void *arg)
{
    (void)arg;
    if (pf) {
        leave_pf();
        return;
    }
    const thread *c = thread_current();
    if (c->prio < 0 && !threads_any_ready()) {
        parked = true;
        return;
    }
    pf = true;
    thread_stats.pf_entered++;
    tern_alarm_set(a, tern_now() + (tern_time)TERN_ADAPTIVE_PF_QUANTA * thread_quantum(), 0);
    thread *s = ready_first(is_short);
    if (s && c->state == T_RUNNING && c->prio >= 0 && c->long_run && s->prio == c->prio) {
        evict = c;
        thread_stats.pf_long_preempted++;
        thread_request_switch();
    }
}

void tpolicy_reset(void)
{
    pf = false;
    parked = false;
    evict = NULL;
    tern_alarm_init(&period, period_ends, NULL);
}

void tpolicy_start(void) { start_delta(); }

void tpolicy_switched(const thread *prev, const thread *next)
{
    if (prev == evict)
        evict = NULL;
    if (next->prio < 0 && pf)
        leave_pf();
    if (prev->prio < 0 && parked) {
        parked = false;
        start_delta();
    }
}

thread *tpolicy_pick(void)
{
    thread *first = ready_top();
    if (!pf || !first)
        return first;
    thread *s = ready_first(is_short);
    return s && s->prio == first->prio ? s : first;
}

bool tpolicy_preempts(const thread *run, const thread *cand)
{
    if (cand->prio > run->prio)
        return true;
    return run == evict && cand->prio == run->prio && is_short(cand);
}

bool tpolicy_slice_preempts(const thread *run)
{
#if TERN_ADAPTIVE_SLICE_LONG
    return !pf || run->long_run;
#else
    (void)run;
    return !pf;
#endif
}

void tpolicy_level_dropped(void) {}

bool tern_adaptive_in_pf(void) { return pf; }
