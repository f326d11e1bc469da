/* The message scheduler: posting, holding messages until INIT, dispatch on
 * the shared stack, and interrupt entry/exit. What differs between the
 * run-to-completion models (fifo, priority, stack) lives in policy_*.c; this
 * file only asks the policy where a message goes in the queue and whether it
 * may preempt. */
#include <string.h>

#include "kernel.h"

tern_tcb tern_tasks[TERN_MAX_TASKS];
tern_counters tern_counters_;

static tern_msg *queue;          /* ready messages, in policy order */
static int8_t running_level = TERN_LEVEL_IDLE;
static tern_task_id running_task = TERN_NO_TASK;
static uint32_t next_seq;
static uint8_t isr_nesting;
static bool dispatch_pending;
static uint8_t dispatch_level;

void sched_reset(void)
{
    memset(tern_tasks, 0, sizeof tern_tasks);
    memset(&tern_counters_, 0, sizeof tern_counters_);
    queue = NULL;
    running_level = TERN_LEVEL_IDLE;
    running_task = TERN_NO_TASK;
    next_seq = 0;
    isr_nesting = 0;
    dispatch_pending = false;
}

tern_task_id tern_self(void) { return isr_nesting ? TERN_NO_TASK : running_task; }

tern_task_id sched_running_task(void) { return running_task; }

bool sched_in_isr(void) { return isr_nesting > 0; }

const tern_counters *tern_stats(void)
{
    tern_counters_.max_stack_bytes = port_stack_used();
    return &tern_counters_;
}

void tern_stats_reset(void)
{
    tern_irq_state s = port_irq_save();
    uint16_t depth = tern_counters_.queue_depth;
    uint8_t stack = tern_counters_.stack_depth;
    memset(&tern_counters_, 0, sizeof tern_counters_);
    tern_counters_.queue_depth = depth;
    tern_counters_.stack_depth = stack;
    port_irq_restore(s);
}

static void count_drop(tern_task_id dst, tern_drop_reason why)
{
    tern_counters_.dropped[why]++;
    tern_trace(TERN_EV_DROP, dst, why);
}

static void enqueue(tern_msg *m)
{
    policy_enqueue(&queue, m);
    if (++tern_counters_.queue_depth > tern_counters_.max_queue_depth)
        tern_counters_.max_queue_depth = tern_counters_.queue_depth;
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

static void release_held(tern_tcb *t)
{
    while (t->held_head) {
        tern_msg *m = t->held_head;
        t->held_head = m->next;
        m->next = NULL;
        enqueue(m);
    }
    t->held_tail = NULL;
}

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
    tern_counters_.dispatched++;
    port_set_level(running_level);
    tern_trace(TERN_EV_HANDLER_START, m->dst, m->port);
    port_irq_enable();

    tern_status st = t->desc->handler(t->desc->state, m);

    (void)port_irq_save();
    tern_trace(TERN_EV_HANDLER_END, m->dst, m->port);
    if (st != TERN_OK)
        tern_counters_.handler_errors++;
    if ((m->flags & TERN_MSG_HEAP) && !(m->flags & TERN_MSG_TAKEN) && m->payload)
        heap_free(m->payload);
    tern_port port = m->port;
    msg_free(m);

    t->active = 0;
    running_level = prev_level;
    running_task = prev_task;
    tern_counters_.stack_depth--;
    port_set_level(running_level);

    if (port == TERN_PORT_INIT && t->state == TASK_CREATED) {
        t->state = TASK_READY;
        release_held(t);
    } else if (port == TERN_PORT_FINAL && t->state == TASK_FINALIZING) {
        app_finalize_done((tern_task_id)(t - tern_tasks));
    }
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

static tern_status check_destination(tern_task_id dst, tern_port port)
{
    if (dst >= TERN_MAX_TASKS || tern_tasks[dst].state == TASK_EMPTY) {
        count_drop(dst, TERN_DROP_NO_TASK);
        return TERN_ENOTASK;
    }
    if (port >= TERN_PORT_APP0 + tern_tasks[dst].desc->n_in_ports) {
        count_drop(dst, TERN_DROP_NO_PORT);
        return TERN_ENOPORT;
    }
    if (tern_tasks[dst].state == TASK_FINALIZING && port != TERN_PORT_FINAL) {
        count_drop(dst, TERN_DROP_FINALIZED);
        return TERN_ESTATE;
    }
    return TERN_OK;
}

/* Deliver one message; interrupts disabled by the caller. */
static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                           uint16_t len, uint8_t flags, bool enqueue_only)
{
    tern_msg *m = msg_alloc();
    if (!m) {
        count_drop(dst, TERN_DROP_POOL_FULL);
        return TERN_EFULL;
    }
    tern_tcb *t = &tern_tasks[dst];
    bool from_isr = isr_nesting > 0;
    m->next = NULL;
    m->payload = payload;
    m->len = len;
    m->src = src;
    m->dst = dst;
    m->port = port;
    m->flags = (uint8_t)((flags & TERN_MSG_HEAP) | (from_isr ? TERN_MSG_FROM_ISR : 0));
    m->prio = t->desc->priority;
    m->seq = next_seq++;
    m->posted = clock_now_irqs_off();
    if ((flags & TERN_MSG_HEAP) && payload)
        heap_set_owner(payload, TERN_OWNER_TRANSIT);
    tern_counters_.posted++;
    tern_trace(TERN_EV_POST, dst, port);

    if (t->state == TASK_CREATED && port != TERN_PORT_INIT) {
        if (t->held_tail)
            t->held_tail->next = m;
        else
            t->held_head = m;
        t->held_tail = m;
        tern_counters_.held++;
        return TERN_OK;
    }

    bool now = !enqueue_only && !t->active && policy_preempts(m->prio, running_level, from_isr);
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
    tern_status st = check_destination(dst, port);
    if (st == TERN_OK && (flags & TERN_MSG_HEAP) && payload) {
        st = heap_check_owner(payload, src == TERN_NO_TASK ? TERN_OWNER_KERNEL : src);
        if (st != TERN_OK)
            count_drop(dst, TERN_DROP_NO_MEMORY);
    }
    if (st == TERN_OK)
        st = deliver(src, dst, port, payload, len, flags, enqueue_only);
    port_irq_restore(s);
    return st;
}

tern_status tern_send(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                      uint8_t flags)
{
    tern_task_id self = isr_nesting ? TERN_NO_TASK : running_task; /* tern_self(), inline */
    return sched_send(self, dst, port, payload, len, flags, false);
}

/* A multicast copy for every member after the first, so each receiver owns
 * its own payload. */
static tern_status post_group(tern_task_id src, const tern_group_desc *g, void *payload,
                              uint16_t len, uint8_t flags)
{
    tern_status result = TERN_OK;
    for (uint8_t i = 0; i < g->n_members; i++) {
        void *p = payload;
        if ((flags & TERN_MSG_HEAP) && payload && i + 1 < g->n_members) {
            p = heap_alloc_for(len, src);
            if (!p) {
                count_drop(g->members[i].task, TERN_DROP_NO_MEMORY);
                result = TERN_ENOMEM;
                continue;
            }
            memcpy(p, payload, len);
        }
        tern_status st = sched_send(src, g->members[i].task, g->members[i].port, p, len, flags,
                                    false);
        if (st != TERN_OK) {
            result = st;
            if (p != payload)
                tern_free(p);
        }
    }
    return result;
}

tern_status tern_post(uint8_t out_port, void *payload, uint16_t len, uint8_t flags)
{
    tern_task_id self = tern_self();
    if (self == TERN_NO_TASK)
        return TERN_ESTATE;
    const tern_task_desc *d = tern_tasks[self].desc;
    const tern_route *r = out_port < d->n_out_ports ? &d->routes[out_port] : NULL;
    if (!r || r->kind == TERN_ROUTE_NONE) {
        tern_irq_state s = port_irq_save();
        count_drop(self, TERN_DROP_NO_ROUTE);
        port_irq_restore(s);
        return TERN_ENOROUTE;
    }
    if (r->kind == TERN_ROUTE_GROUP)
        return post_group(self, app_group(r->group), payload, len, flags);
    return sched_send(self, r->task, r->port, payload, len, flags, false);
}

void *tern_take(tern_msg *m)
{
    if (!m->payload || (m->flags & TERN_MSG_TAKEN))
        return NULL;
    tern_task_id self = tern_self();
    if (m->flags & TERN_MSG_HEAP) {
        heap_set_owner(m->payload, self == TERN_NO_TASK ? TERN_OWNER_KERNEL : self);
        m->flags |= TERN_MSG_TAKEN;
        return m->payload;
    }
    void *copy = tern_alloc(m->len ? m->len : 1);
    if (copy)
        memcpy(copy, m->payload, m->len);
    return copy;
}

static void discard(tern_msg *m)
{
    if ((m->flags & TERN_MSG_HEAP) && m->payload)
        heap_free(m->payload);
    msg_free(m);
}

void sched_drop_task_messages(tern_task_id id)
{
    tern_tcb *t = &tern_tasks[id];
    for (tern_msg **pp = &queue; *pp;) {
        tern_msg *m = *pp;
        if (m->dst != id) {
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        tern_counters_.queue_depth--;
        count_drop(id, TERN_DROP_FINALIZED);
        discard(m);
    }
    while (t->held_head) {
        tern_msg *m = t->held_head;
        t->held_head = m->next;
        count_drop(id, TERN_DROP_FINALIZED);
        discard(m);
    }
    t->held_tail = NULL;
}

void tern_isr_enter(void)
{
    isr_nesting++;
    if (tern_idle_waiting) /* checked here: a call on every interrupt costs */
        idle_note_wake();
    tern_counters_.interrupts++;
    tern_trace(TERN_EV_IRQ_ENTER, 0, 0);
}

void tern_isr_exit(void)
{
    tern_trace(TERN_EV_IRQ_EXIT, 0, 0);
    if (--isr_nesting == 0 && dispatch_pending) {
        dispatch_pending = false;
        port_dispatch(dispatch_level);
    }
}
