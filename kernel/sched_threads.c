/* The message layer of the thread models (threads, adaptive); it replaces
 * sched.c in those builds. A message goes to its task's mailbox and wakes
 * the task's thread if it waits in receive; the thread runs the task's
 * handler for one message at a time, `loop { receive; handle }`, so the
 * application source is the same as under the run-to-completion models.
 * Routing, multicast copies, ownership and INIT holding follow sched.c. */
#include <string.h>

#include "thread.h"

tern_tcb tern_tasks[TERN_MAX_TASKS];
tern_counters tern_counters_;

/* Every task is a thread: the pool holds every task's stack. With
 * TERN_THREAD_STACK_POOL 0 the port defines both instead (the AVR: all the
 * RAM that .data, .bss and main()'s stack leave, sized at reset). */
#if TERN_THREAD_STACK_POOL > 0
uint64_t thread_stack_pool[TERN_THREAD_STACK_POOL / 8] __attribute__((aligned(TERN_STACK_GUARD)));
const uint32_t thread_stack_pool_bytes = sizeof thread_stack_pool;
#endif

/* ... and every task has a thread object. */
thread thread_table[TERN_MAX_TASKS];
const uint8_t thread_table_len = TERN_MAX_TASKS;
uint64_t thread_idle_stack[TERN_IDLE_STACK / 8] __attribute__((aligned(TERN_STACK_GUARD)));
const uint32_t thread_idle_stack_bytes = sizeof thread_idle_stack;

static uint32_t next_seq;
static uint8_t isr_nesting;

void sched_reset(void)
{
    memset(tern_tasks, 0, sizeof tern_tasks);
    memset(&tern_counters_, 0, sizeof tern_counters_);
    next_seq = 0;
    isr_nesting = 0;
    threads_reset();
}

tern_task_id sched_running_task(void)
{
    thread *t = thread_current();
    return t ? t->task : TERN_NO_TASK;
}

tern_task_id tern_self(void) { return isr_nesting ? TERN_NO_TASK : sched_running_task(); }

bool sched_in_isr(void) { return isr_nesting > 0; }

bool sched_tasks_are_threads(void) { return true; }

const tern_counters *tern_stats(void)
{
    tern_counters_.max_stack_bytes = port_stack_used();
    return &tern_counters_;
}

void tern_stats_reset(void)
{
    tern_irq_state s = port_irq_save();
    uint16_t depth = tern_counters_.queue_depth;
    memset(&tern_counters_, 0, sizeof tern_counters_);
    tern_counters_.queue_depth = depth;
    uint32_t stacks[TERN_MAX_TASKS];
    memcpy(stacks, thread_stats.stack_bytes, sizeof stacks);
    memset(&thread_stats, 0, sizeof thread_stats);
    memcpy(thread_stats.stack_bytes, stacks, sizeof stacks);
    port_irq_restore(s);
}

static void count_drop(tern_task_id dst, tern_drop_reason why)
{
    tern_counters_.dropped[why]++;
    tern_trace(TERN_EV_DROP, dst, why);
}

static void discard(tern_msg *m)
{
    if ((m->flags & TERN_MSG_HEAP) && m->payload)
        heap_free(m->payload);
    msg_free(m);
}

static void to_mailbox(thread *t, tern_msg *m)
{
    if (t->state != T_RECV)
        tern_counters_.queued++;
    if (++tern_counters_.queue_depth > tern_counters_.max_queue_depth)
        tern_counters_.max_queue_depth = tern_counters_.queue_depth;
    mailbox_put(t, m);
}

static void release_held(tern_tcb *t, thread *th)
{
    while (t->held_head) {
        tern_msg *m = t->held_head;
        t->held_head = m->next;
        to_mailbox(th, m);
    }
    t->held_tail = NULL;
}

/* The body of every task's thread. */
static void task_thread(void *arg)
{
    tern_task_id id = (tern_task_id)(uintptr_t)arg;
    tern_tcb *t = &tern_tasks[id];
    for (;;) {
        tern_msg *m = thread_receive();
        tern_irq_state s = port_irq_save();
        tern_counters_.dispatched++;
        tern_trace(TERN_EV_HANDLER_START, id, m->port);
        port_irq_restore(s);

        tern_status st = t->desc->handler(t->desc->state, m);

        s = port_irq_save();
        tern_trace(TERN_EV_HANDLER_END, id, m->port);
        if (st != TERN_OK)
            tern_counters_.handler_errors++;
        if ((m->flags & TERN_MSG_HEAP) && !(m->flags & TERN_MSG_TAKEN) && m->payload)
            heap_free(m->payload);
        tern_port port = m->port;
        msg_free(m);
        bool finished = false;
        if (port == TERN_PORT_INIT && t->state == TASK_CREATED) {
            t->state = TASK_READY;
            release_held(t, thread_of(id));
        } else if (port == TERN_PORT_FINAL && t->state == TASK_FINALIZING) {
            app_finalize_done(id);
            finished = true;
        }
        port_irq_restore(s);
        if (finished)
            thread_exit();
    }
}

/* The first message to a task creates its thread (tern_app_start's INIT),
 * so the stacks are sized from the description that is running. */
static thread *thread_for(tern_task_id dst)
{
    thread *t = thread_of(dst);
    if (!t)
        t = thread_create(dst, tern_tasks[dst].desc->stack_size, task_thread,
                          (void *)(uintptr_t)dst);
    return t;
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

/* Deliver one message; interrupts disabled by the caller. A post never
 * runs a handler here: the woken thread preempts through the port's
 * switch when its priority is higher (at once from a task, after the
 * outermost interrupt handler otherwise). */
static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                           uint16_t len, uint8_t flags)
{
    tern_tcb *t = &tern_tasks[dst];
    thread *th = thread_for(dst);
    if (!th) {
        count_drop(dst, TERN_DROP_NO_MEMORY);
        return TERN_ENOMEM;
    }
    tern_msg *m = msg_alloc();
    if (!m) {
        count_drop(dst, TERN_DROP_POOL_FULL);
        return TERN_EFULL;
    }
    m->next = NULL;
    m->payload = payload;
    m->len = len;
    m->src = src;
    m->dst = dst;
    m->port = port;
    m->flags = (uint8_t)((flags & TERN_MSG_HEAP) | (isr_nesting ? TERN_MSG_FROM_ISR : 0));
    m->prio = t->desc->priority;
    m->seq = next_seq++;
    m->posted = tern_now();
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
    to_mailbox(th, m);
    return TERN_OK;
}

tern_status sched_send(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                       uint16_t len, uint8_t flags, bool enqueue_only)
{
    (void)enqueue_only; /* threads never run a handler inside a post */
    tern_irq_state s = port_irq_save();
    tern_status st = check_destination(dst, port);
    if (st == TERN_OK && (flags & TERN_MSG_HEAP) && payload) {
        st = heap_check_owner(payload, src == TERN_NO_TASK ? TERN_OWNER_KERNEL : src);
        if (st != TERN_OK)
            count_drop(dst, TERN_DROP_NO_MEMORY);
    }
    if (st == TERN_OK)
        st = deliver(src, dst, port, payload, len, flags);
    port_irq_restore(s);
    return st;
}

tern_status tern_send(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                      uint8_t flags)
{
    return sched_send(tern_self(), dst, port, payload, len, flags, false);
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

void sched_drop_task_messages(tern_task_id id)
{
    tern_tcb *t = &tern_tasks[id];
    thread *th = thread_of(id);
    while (th && th->mbox_head) {
        tern_msg *m = th->mbox_head;
        th->mbox_head = m->next;
        tern_counters_.queue_depth--;
        count_drop(id, TERN_DROP_FINALIZED);
        discard(m);
    }
    if (th)
        th->mbox_tail = NULL;
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
    idle_note_wake();
    tern_counters_.interrupts++;
    tern_trace(TERN_EV_IRQ_ENTER, 0, 0);
}

/* Where no hardware defers a requested switch past the last interrupt
 * handler (Cortex-M's PendSV does), the port takes it here (AVR). */
__attribute__((weak)) void port_thread_isr_exit(void) {}

void tern_isr_exit(void)
{
    tern_trace(TERN_EV_IRQ_EXIT, 0, 0);
    if (--isr_nesting == 0)
        port_thread_isr_exit();
}

/* The idle thread: account idle periods and sleep, forever. */
static void idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        (void)idle_once();
}

bool sched_has_ready(void) { return threads_any_ready(); }

/* The main loop's first call hands the CPU to the threads for good: main()'s
 * context is abandoned and the idle thread takes its place. */
bool sched_run_next(void) { threads_start(idle_thread); }

/* Only the stack model's software and hardware dispatch use these; a
 * thread switch goes through the port's own switch instead. */
void tern_sched_preempt(void) {}
void tern_sched_dispatch_level(uint8_t level) { (void)level; }
