/* The message scheduler of the run-to-completion models (fifo, priority,
 * stack): the ready queue, dispatch on the shared stack, and interrupt
 * exit. What differs between those models lives in policy_*.c; this file
 * only asks the policy where a message goes in the queue and whether it
 * may preempt. Checking, holding and finishing messages is msg.c's. */
#include "msg.h"

static tern_msg *queue;          /* ready messages, in policy order */
static int8_t running_level = TERN_LEVEL_IDLE;
static tern_task_id running_task = TERN_NO_TASK;
static bool dispatch_pending;
static uint8_t dispatch_level;

void sched_reset(void)
{
    msg_reset();
    queue = NULL;
    running_level = TERN_LEVEL_IDLE;
    running_task = TERN_NO_TASK;
    dispatch_pending = false;
}

tern_task_id tern_self(void) { return tern_isr_nesting ? TERN_NO_TASK : running_task; }

tern_task_id sched_running_task(void) { return running_task; }

bool sched_in_isr(void) { return tern_isr_nesting > 0; }

void sched_stats_reset(void) {} /* the counters are all there is */

static void enqueue(tern_msg *m)
{
    policy_enqueue(&queue, m);
    msg_count_waiting();
}

/* Remove the message *pp points at from the queue. */
static tern_msg *take(tern_msg **pp)
{
    tern_msg *m = *pp;
    *pp = m->next;
    m->next = NULL;
    tern_counters_.queue_depth--;
    return m;
}

/* First message that may run above `floor`: its task is not already on the
 * stack (seed 002: such messages wait) and its priority is strictly higher
 * than the handler below (seed 002 V-B: otherwise the stack top resumes).
 * The queue is in policy order, so the first match is the one to run.
 * Returns the link that points at it, so take() needs no second walk. */
static tern_msg **pick(int8_t floor)
{
    for (tern_msg **pp = &queue; *pp; pp = &(*pp)->next) {
        tern_msg *m = *pp;
        if (tern_tasks[m->dst].active)
            continue;
        if (floor == TERN_LEVEL_IDLE || (int8_t)m->prio > floor)
            return pp;
    }
    return NULL;
}

void sched_release_held(tern_msg *m) { enqueue(m); }

/* Run one message's handler nested on the current stack. Called and
 * returns with interrupts disabled; the handler runs with them enabled. */
static void run_msg(tern_msg *m)
{
    tern_tcb *t = &tern_tasks[m->dst];
    int8_t prev_level = running_level;
    tern_task_id prev_task = running_task;

    t->active = 1;
    running_level = (int8_t)m->prio;
    running_task = m->dst;
    if (++tern_counters_.stack_depth > tern_counters_.max_stack_depth)
        tern_counters_.max_stack_depth = tern_counters_.stack_depth;
    if (prev_task != TERN_NO_TASK) {
        tern_counters_.preemptions++;
        tern_trace(TERN_EV_PREEMPT, m->dst, prev_task);
    }
    port_set_level(running_level);
    msg_handler_start(m);
    port_irq_enable();

    tern_status st = t->desc->handler(t->desc->state, m);

    (void)port_irq_save();
    tern_port port = msg_handler_end(m, st);
    t->active = 0;
    running_level = prev_level;
    running_task = prev_task;
    tern_counters_.stack_depth--;
    port_set_level(running_level);
    (void)msg_task_handled(t, port);
}

/* Run every queued message allowed above `floor`, highest first: what the
 * stack model does when a handler returns. */
static void drain_above(int8_t floor)
{
    tern_msg **pp;
    while ((pp = pick(floor)) != NULL)
        run_msg(take(pp));
}

bool sched_has_ready(void) { return pick(TERN_LEVEL_IDLE) != NULL; }

bool sched_run_next(void)
{
    tern_irq_state s = port_irq_save();
    tern_msg **pp = pick(TERN_LEVEL_IDLE);
    if (pp)
        run_msg(take(pp));
    port_irq_restore(s);
    return pp != NULL;
}

void tern_sched_preempt(void)
{
    tern_irq_state s = port_irq_save();
    drain_above(running_level);
    port_irq_restore(s);
}

/* The exception that runs a level's messages has that level's priority, so
 * it must not run a lower message itself: nothing of the levels in between
 * could preempt it. It leaves the highest remaining message to its own
 * vector, which the hardware takes when this one returns. */
void tern_sched_dispatch_level(uint8_t level)
{
    tern_irq_state s = port_irq_save();
    int8_t floor = running_level;
    tern_msg **pp;
    while ((pp = pick(floor)) != NULL && (*pp)->prio >= level)
        run_msg(take(pp));
    if (pp)
        port_dispatch((*pp)->prio);
    port_irq_restore(s);
}

/* Deliver one checked message; interrupts disabled by the caller. */
static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                           uint16_t len, uint8_t flags, bool enqueue_only)
{
    tern_msg *m = msg_make(src, dst, port, payload, len, flags);
    if (!m)
        return TERN_EFULL;
    if (msg_hold(m))
        return TERN_OK;
    bool from_isr = (m->flags & TERN_MSG_FROM_ISR) != 0;

    bool now = !enqueue_only && !tern_tasks[dst].active &&
               policy_preempts(m->prio, running_level, from_isr);
    if (now && !from_isr) {
        int8_t level = running_level;
        run_msg(m);
        drain_above(level);
        return TERN_OK;
    }
    enqueue(m);
    if (now) {
        if (!dispatch_pending || m->prio > dispatch_level)
            dispatch_level = m->prio;
        dispatch_pending = true;
    } else {
        tern_counters_.queued++;
    }
    return TERN_OK;
}

tern_status sched_send(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                       uint16_t len, uint8_t flags, bool enqueue_only)
{
    tern_irq_state s = port_irq_save();
    tern_status st = msg_check(src, dst, port, payload, flags);
    if (st == TERN_OK)
        st = deliver(src, dst, port, payload, len, flags, enqueue_only);
    port_irq_restore(s);
    return st;
}

tern_status tern_send(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                      uint8_t flags)
{
    tern_task_id self = tern_isr_nesting ? TERN_NO_TASK : running_task; /* tern_self(), inline */
    return sched_send(self, dst, port, payload, len, flags, false);
}

void sched_drop_task_messages(tern_task_id id)
{
    msg_drop_waiting(&queue, id);
    msg_drop_held(id);
}

void tern_isr_exit(void)
{
    tern_trace(TERN_EV_IRQ_EXIT, 0, 0);
    if (--tern_isr_nesting == 0 && dispatch_pending) {
        dispatch_pending = false;
        port_dispatch(dispatch_level);
    }
}
