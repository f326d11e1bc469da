/* The message layer every execution model shares (the inline steps of a
 * post and of a handler are in msg.h): the task table, the counters,
 * routing and multicast, taking a payload, releasing or dropping held
 * messages, interrupt entry. */
#include <string.h>

#include "msg.h"

tern_tcb tern_tasks[TERN_MAX_TASKS];
kernel_counters tern_counters_;
uint8_t tern_isr_nesting;
uint32_t msg_next_seq;
const msg_remote_ops *msg_remote;

void msg_reset(void)
{
    memset(tern_tasks, 0, sizeof tern_tasks);
    memset(&tern_counters_, 0, sizeof tern_counters_);
    msg_next_seq = 0;
    tern_isr_nesting = 0;
    msg_remote = NULL;
}

const tern_counters *tern_stats(void)
{
#if TERN_STATS
    tern_counters_.max_stack_bytes = port_stack_used();
    return &tern_counters_;
#else
    /* Only an image that reads the counters has this copy. */
    static tern_counters c;
    memcpy(c.dropped, tern_counters_.dropped, sizeof c.dropped);
    c.handler_errors = tern_counters_.handler_errors;
    c.alloc_failures = tern_counters_.alloc_failures;
    c.leaks_reported = tern_counters_.leaks_reported;
    c.hw_refused = tern_counters_.hw_refused;
    c.max_stack_bytes = port_stack_used();
    return &c;
#endif
}

void tern_stats_reset(void)
{
    tern_irq_state s = port_irq_save();
#if TERN_STATS
    /* gauges of what waits and what is nested right now, not statistics */
    uint16_t depth = tern_counters_.queue_depth;
    uint8_t stack = tern_counters_.stack_depth;
    memset(&tern_counters_, 0, sizeof tern_counters_);
    tern_counters_.queue_depth = depth;
    tern_counters_.stack_depth = stack;
#else
    memset(&tern_counters_, 0, sizeof tern_counters_);
#endif
    sched_stats_reset();
    port_irq_restore(s);
}

void msg_count_drop(tern_task_id dst, tern_drop_reason why)
{
    tern_counters_.dropped[why]++;
    tern_trace(TERN_EV_DROP, dst, why);
}

void msg_task_ready(tern_tcb *t)
{
    t->state = TASK_READY;
    while (t->held_head) {
        tern_msg *m = t->held_head;
        t->held_head = m->next;
        m->next = NULL;
        sched_release_held(m);
    }
    t->held_tail = NULL;
}

/* A message that will never be handled: its heap payload goes too. */
static void discard(tern_msg *m)
{
    if (msg_heap_payload(m->payload, m->flags))
        heap_free(m->payload);
    msg_free(m);
}

void msg_drop_waiting(tern_msg **head, tern_msg **tail, tern_task_id id)
{
    tern_msg *last = NULL; /* the last message kept */
    for (tern_msg **pp = head; *pp;) {
        tern_msg *m = *pp;
        if (m->dst != id) {
            last = m;
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        TERN_STAT(tern_counters_.queue_depth--);
        msg_count_drop(id, TERN_DROP_FINALIZED);
        discard(m);
    }
    if (tail)
        *tail = last;
}

void msg_drop_held(tern_task_id id)
{
    tern_tcb *t = &tern_tasks[id];
    while (t->held_head) {
        tern_msg *m = t->held_head;
        t->held_head = m->next;
        msg_count_drop(id, TERN_DROP_FINALIZED);
        discard(m);
    }
    t->held_tail = NULL;
}

/* A multicast copy for every member but the last, so each receiver owns
 * its own payload. Only the members in the `members` mask (remote.c: the
 * ones on this processor). */
tern_status msg_post_group(tern_task_id src, const TERN_DESC tern_group_desc *g, uint8_t members,
                           void *payload, uint16_t len, uint8_t flags)
{
    tern_status result = TERN_OK;
    for (uint8_t i = 0; i < g->n_members; i++) {
        if (!(members & (1u << i)))
            continue;
        void *p = payload;
        if ((flags & TERN_MSG_HEAP) && payload && (members >> i) > 1) {
            p = heap_alloc_for(len, src);
            if (!p) {
                msg_count_drop(g->members[i].task, TERN_DROP_NO_MEMORY);
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
    const TERN_DESC tern_task_desc *d = tern_tasks[self].desc;
    const TERN_DESC tern_route *r = out_port < d->n_out_ports ? &d->routes[out_port] : NULL;
    if (!r || r->kind == TERN_ROUTE_NONE) {
        tern_irq_state s = port_irq_save();
        msg_count_drop(self, TERN_DROP_NO_ROUTE);
        port_irq_restore(s);
        return TERN_ENOROUTE;
    }
    if (r->kind == TERN_ROUTE_GROUP) {
        const TERN_DESC tern_group_desc *g = app_group(r->group);
        if (msg_remote)
            return msg_remote->multicast(self, g, payload, len, flags);
        return msg_post_group(self, g, (uint8_t)((1u << g->n_members) - 1), payload, len,
                              flags);
    }
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

/* The model's tern_isr_exit ends what this begins. */
void tern_isr_enter(void)
{
    tern_isr_nesting++;
    if (tern_idle_waiting) /* checked here: a call on every interrupt costs */
        idle_note_wake();
    TERN_STAT(msg_count32(&tern_counters_.interrupts));
    tern_trace(TERN_EV_IRQ_ENTER, 0, 0);
}

#if defined(__AVR__)
/* The same when the vector has read the clock: the idle period ends at
 * that read, without another. */
void isr_enter_at(const tern_time *now)
{
    tern_isr_nesting++;
    if (tern_idle_waiting)
        idle_note_wake_at(now);
    TERN_STAT(msg_count32(&tern_counters_.interrupts));
    tern_trace(TERN_EV_IRQ_ENTER, 0, 0);
}
#endif
