/* Tickless timers: every alarm (and every task timer, which is an alarm
 * that posts to TIMEOUTk) sits in one list sorted by absolute deadline, and
 * the port's single one-shot is programmed for the head. Periodic alarms
 * advance from their previous deadline, never from "now", so they do not
 * drift however late an interrupt is served. */
#include "kernel.h"

static tern_alarm *alarms; /* sorted by deadline, then insertion order */

void timer_reset(void) { alarms = NULL; }

tern_time timer_next_deadline(void) { return alarms ? alarms->deadline : UINT64_MAX; }

static tern_time max_horizon(void) { return (tern_time)1 << (port_board.counter_bits - 1); }

/* Program the hardware for the head, at most half a wrap ahead so the
 * clock extension always sees every wrap. */
static void program(void)
{
    tern_time now = tern_now();
    tern_time delta = max_horizon();
    if (alarms && alarms->deadline < now + delta)
        delta = alarms->deadline > now ? alarms->deadline - now : 1;
    port_deadline_set((uint32_t)delta);
}

static void unlink_alarm(tern_alarm *a)
{
    for (tern_alarm **pp = &alarms; *pp; pp = &(*pp)->next) {
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    }
    a->armed = 0;
}

static void insert(tern_alarm *a)
{
    tern_alarm **pp = &alarms;
    while (*pp && (*pp)->deadline <= a->deadline)
        pp = &(*pp)->next;
    a->next = *pp;
    *pp = a;
    a->armed = 1;
}

void tern_alarm_init(tern_alarm *a, tern_alarm_fn fn, void *arg)
{
    a->next = NULL;
    a->deadline = 0;
    a->period = 0;
    a->fn = fn;
    a->arg = arg;
    a->armed = 0;
}

void tern_alarm_set(tern_alarm *a, tern_time deadline, tern_time period)
{
    tern_irq_state s = port_irq_save();
    if (a->armed)
        unlink_alarm(a);
    a->deadline = deadline;
    a->period = period;
    insert(a);
    program();
    port_irq_restore(s);
}

void tern_alarm_cancel(tern_alarm *a)
{
    tern_irq_state s = port_irq_save();
    if (a->armed) {
        unlink_alarm(a);
        program();
    }
    port_irq_restore(s);
}

/* The deadline interrupt: run every alarm that is due, in deadline order. */
void tern_clock_isr(void)
{
    tern_time now = tern_now();
    while (alarms && alarms->deadline <= now) {
        tern_alarm *a = alarms;
        unlink_alarm(a);
        if (a->period) {
            a->deadline += a->period;
            insert(a);
        }
        a->fn(a, a->arg);
        now = tern_now();
    }
    program();
}

static void timer_fired(tern_alarm *a, void *arg)
{
    tern_task_id task = (tern_task_id)(uintptr_t)arg;
    uint8_t k = (uint8_t)(a - tern_tasks[task].timers);
    sched_send(TERN_NO_TASK, task, TERN_PORT_TIMEOUT(k), NULL, 0, 0, false);
}

tern_status tern_timer_start(uint8_t k, tern_time delay, tern_time period)
{
    tern_task_id self = tern_self();
    if (self == TERN_NO_TASK)
        return TERN_ESTATE;
    if (k >= TERN_TIMERS_PER_TASK)
        return TERN_ERANGE;
    tern_alarm *a = &tern_tasks[self].timers[k];
    tern_alarm_cancel(a);
    tern_alarm_init(a, timer_fired, (void *)(uintptr_t)self);
    tern_alarm_set(a, tern_now() + delay, period);
    return TERN_OK;
}

tern_status tern_timer_cancel(uint8_t k)
{
    tern_task_id self = tern_self();
    if (self == TERN_NO_TASK)
        return TERN_ESTATE;
    if (k >= TERN_TIMERS_PER_TASK)
        return TERN_ERANGE;
    tern_alarm_cancel(&tern_tasks[self].timers[k]);
    return TERN_OK;
}
