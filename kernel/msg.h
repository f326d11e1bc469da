/* The message layer every execution model shares (msg.c): the task table
 * and counters, the checks and bookkeeping of a post, holding messages
 * until their task has handled INIT, what follows a handler, routing and
 * multicast, finalization. Each model's scheduler (sched.c,
 * sched_threads.c, sched_hybrid.c) keeps only where a message waits and
 * how its handler gets the CPU.
 *
 * The steps below lie on every post and every handler, so they are inline,
 * always (-Os would call a step that a model uses twice): each model's
 * sched_send and handler path compile to one function, as they did before
 * the layer was shared. */
#ifndef TERN_KERNEL_MSG_H
#define TERN_KERNEL_MSG_H

#include "kernel.h"

#define MSG_STEP static inline __attribute__((always_inline))

extern uint8_t tern_isr_nesting; /* interrupt handlers entered and not yet left */

/* One more in a 32-bit counter. On an 8-bit CPU the carry into a higher
 * byte is rare: test for it rather than load, add and store all four
 * bytes (the AVR: 7 cycles instead of 20, on every post and handler). */
MSG_STEP void msg_count32(uint32_t *c)
{
#if defined(__AVR__)
    uint8_t *b = (uint8_t *)c;
    if (++b[0] == 0 && ++b[1] == 0 && ++b[2] == 0)
        ++b[3];
#else
    ++*c;
#endif
}
/* Creation order: every message made takes the next number (sorted by
 * it, a queue runs equal priorities in creation order, policy_order.h),
 * which also names it uniquely (tests/fuzz/fuzz_api.c checks that no
 * message runs twice, and which timeouts came after a timer's restart,
 * by it). The increment is msg_count32's: 7 cycles on the AVR. */
extern uint32_t msg_next_seq;

/* msg.c */
void msg_reset(void); /* task table, counters, sequence, interrupt nesting */
void msg_count_drop(tern_task_id dst, tern_drop_reason why);
/* INIT handled: the task is ready; its held messages go to
 * sched_release_held in arrival order. */
void msg_task_ready(tern_tcb *t);
/* Finalization: drop (and count) task id's messages in a list of waiting
 * ones (a queue, or a mailbox whose tail is kept too), and the ones held
 * for its INIT. */
void msg_drop_waiting(tern_msg **head, tern_msg **tail, tern_task_id id);
void msg_drop_held(tern_task_id id);

/* What each model's scheduler provides to msg.c. */
/* A message held until its task handled INIT, now released: let it wait
 * for its task like any other (never run it here). */
void sched_release_held(tern_msg *m);
/* Task id's oldest waiting message, taken out of the model's queue (NULL:
 * none); the run-to-completion models only (sched.c), for task_move.c. */
tern_msg *sched_take_task_message(tern_task_id id);
/* tern_stats_reset: clear the model's own statistics as well. */
void sched_stats_reset(void);

/* The conditions of a post that msg_check, msg_hold and msg_plain share,
 * each written once. */
MSG_STEP bool msg_port_exists(tern_task_id dst, tern_port port) /* dst exists */
{
    return port < TERN_PORT_APP0 + tern_tasks[dst].desc->n_in_ports;
}

MSG_STEP bool msg_heap_payload(const void *payload, uint8_t flags)
{
    return (flags & TERN_MSG_HEAP) && payload;
}

/* A post to a task or port that does not exist, to a task being finalized
 * (except its FINAL), or of a heap payload the sender does not own is
 * refused and counted. Interrupts disabled. */
MSG_STEP tern_status msg_check(tern_task_id src, tern_task_id dst, tern_port port,
                              void *payload, uint8_t flags)
{
    if (dst >= TERN_MAX_TASKS || tern_tasks[dst].state == TASK_EMPTY) {
        if (msg_remote) /* perhaps on another processor: msg_send asks remote.c */
            return TERN_STATUS_COUNT;
        msg_count_drop(dst, TERN_DROP_NO_TASK);
        return TERN_ENOTASK;
    }
    if (!msg_port_exists(dst, port)) {
        msg_count_drop(dst, TERN_DROP_NO_PORT);
        return TERN_ENOPORT;
    }
    if (tern_tasks[dst].state == TASK_FINALIZING && port != TERN_PORT_FINAL) {
        msg_count_drop(dst, TERN_DROP_FINALIZED);
        return TERN_ESTATE;
    }
    if (msg_heap_payload(payload, flags)) {
        tern_status st = heap_check_owner(payload, src == TERN_NO_TASK ? TERN_OWNER_KERNEL : src);
        if (st != TERN_OK)
            msg_count_drop(dst, TERN_DROP_NO_MEMORY);
        return st;
    }
    return TERN_OK;
}

/* Places a checked post: makes the message (msg_make), holds it (msg_hold)
 * or gives it to its task the model's way. Interrupts disabled. */
typedef tern_status msg_deliver_fn(tern_task_id src, tern_task_id dst, tern_port port,
                                   void *payload, uint16_t len, uint8_t flags,
                                   bool enqueue_only);

/* Every model's sched_send: check the post, then `deliver` it, interrupts
 * disabled throughout. `deliver` is a constant, so the call is direct and
 * compiles inline as one function, as before the layer was shared. */
MSG_STEP tern_status msg_send(tern_task_id src, tern_task_id dst, tern_port port,
                              void *payload, uint16_t len, uint8_t flags, bool enqueue_only,
                              msg_deliver_fn *deliver)
{
    tern_irq_state s = port_irq_save();
    tern_status st = msg_check(src, dst, port, payload, flags);
    if (st == TERN_OK)
        st = deliver(src, dst, port, payload, len, flags, enqueue_only);
    else if (st == TERN_STATUS_COUNT) /* not a local task, and there is a bus */
        st = msg_remote->send(src, dst, port, payload, len, flags);
    port_irq_restore(s);
    return st;
}

/* A checked post becomes a message (its heap payload in transit), counted
 * as posted; NULL, counted as a drop, when the pool is empty. `flags` are
 * the message's own (TERN_MSG_HEAP and TERN_MSG_FROM_ISR): a caller that
 * knows them passes a constant (msg_make works them out). */
MSG_STEP tern_msg *msg_make_flagged(tern_task_id src, tern_task_id dst, tern_port port,
                                   void *payload, uint16_t len, uint8_t flags)
{
    tern_msg *m = msg_alloc();
    if (!m) {
        msg_count_drop(dst, TERN_DROP_POOL_FULL);
        return NULL;
    }
    m->next = NULL;
    m->payload = payload;
    m->len = len;
    m->src = src;
    m->dst = dst;
    m->port = port;
    m->flags = flags;
    m->prio = tern_tasks[dst].desc->priority;
    m->seq = msg_next_seq;
    msg_count32(&msg_next_seq);
    m->posted = clock_low_irqs_off();
    if (msg_heap_payload(payload, flags))
        heap_set_owner(payload, TERN_OWNER_TRANSIT);
    TERN_STAT(msg_count32(&tern_counters_.posted));
    tern_trace(TERN_EV_POST, dst, port);
    return m;
}

MSG_STEP tern_msg *msg_make(tern_task_id src, tern_task_id dst, tern_port port,
                           void *payload, uint16_t len, uint8_t flags)
{
    return msg_make_flagged(
        src, dst, port, payload, len,
        (uint8_t)((flags & TERN_MSG_HEAP) | (tern_isr_nesting ? TERN_MSG_FROM_ISR : 0)));
}

/* Messages to a task that has not handled INIT yet are held in arrival
 * order, not lost (seed 002). True if m was held. */
MSG_STEP bool msg_hold(tern_msg *m)
{
    tern_tcb *t = &tern_tasks[m->dst];
    if (t->state != TASK_CREATED || m->port == TERN_PORT_INIT)
        return false;
    if (t->held_tail)
        t->held_tail->next = m;
    else
        t->held_head = m;
    t->held_tail = m;
    TERN_STAT(msg_count32(&tern_counters_.held));
    return true;
}

/* The common post from an interrupt (an alarm callback, a driver): one
 * that msg_check passes and msg_hold does not hold, found in a few
 * instructions: an existing port of a task that has handled INIT (so
 * neither finalizing nor held), no heap payload to check. False says only
 * "not this shortcut": the post goes through msg_check. Interrupts
 * disabled: a nested interrupt may change the task's state. */
MSG_STEP bool msg_plain(tern_task_id dst, tern_port port, const void *payload, uint8_t flags)
{
    return !msg_heap_payload(payload, flags) && dst < TERN_MAX_TASKS &&
           tern_tasks[dst].state == TASK_READY && msg_port_exists(dst, port);
}

/* One more message waits in a queue or mailbox. */
MSG_STEP void msg_count_waiting(void)
{
#if TERN_STATS
    if (++tern_counters_.queue_depth > tern_counters_.max_queue_depth)
        tern_counters_.max_queue_depth = tern_counters_.queue_depth;
#endif
}

/* The waiting message *pp points at leaves its queue, to run. */
MSG_STEP tern_msg *msg_take_waiting(tern_msg **pp)
{
    tern_msg *m = *pp;
    *pp = m->next;
    m->next = NULL;
    TERN_STAT(tern_counters_.queue_depth--);
    return m;
}

/* m's handler is about to run. */
MSG_STEP void msg_handler_start(const tern_msg *m)
{
    TERN_STAT(msg_count32(&tern_counters_.dispatched));
    tern_trace(TERN_EV_HANDLER_START, m->dst, m->port);
}

/* m's handler returned st (interrupts disabled again): count an error,
 * free a heap payload it did not take, free m. Returns m's port. */
MSG_STEP tern_port msg_handler_end(tern_msg *m, tern_status st)
{
    tern_trace(TERN_EV_HANDLER_END, m->dst, m->port);
    if (st != TERN_OK)
        msg_count32(&tern_counters_.handler_errors);
    if ((m->flags & TERN_MSG_HEAP) && !(m->flags & TERN_MSG_TAKEN) && m->payload)
        heap_free(m->payload);
    tern_port port = m->port;
    msg_free(m);
    return port;
}

/* After task t handled a message on `port`: INIT makes it ready, FINAL
 * completes its finalization. True when the task is finished. */
MSG_STEP bool msg_task_handled(tern_tcb *t, tern_port port)
{
    if (port == TERN_PORT_INIT && t->state == TASK_CREATED) {
        msg_task_ready(t);
    } else if (port == TERN_PORT_FINAL && t->state == TASK_FINALIZING) {
        app_finalizer((tern_task_id)(t - tern_tasks));
        return true;
    }
    return false;
}

/* The top of the shared stack in the models that nest run-to-completion
 * handlers (sched.c; sched_hybrid.c's tasks that are not threads). */
typedef struct {
    int8_t level;      /* the top handler's priority, TERN_LEVEL_IDLE for none */
    tern_task_id task; /* its task, TERN_NO_TASK for none */
} msg_stack_top;

/* Run m's handler nested on the shared stack above *top, counting a
 * preemption of task `below` unless it is TERN_NO_TASK. `masked`: the
 * hardware already masks m's level and below (the level's own dispatch
 * vector runs it), so the level need not be set before the handler; it is
 * still restored after, since a nested handler may have raised it. Called
 * and returns with interrupts disabled; the handler runs with them
 * enabled. */
MSG_STEP void msg_run_nested(msg_stack_top *top, tern_msg *m, tern_task_id below, bool masked)
{
    tern_tcb *t = &tern_tasks[m->dst];
    const TERN_DESC tern_task_desc *d = t->desc;
    msg_stack_top prev = *top;

    t->active = 1;
    top->level = (int8_t)m->prio;
    top->task = m->dst;
#if TERN_STATS
    if (++tern_counters_.stack_depth > tern_counters_.max_stack_depth)
        tern_counters_.max_stack_depth = tern_counters_.stack_depth;
#endif
    if (below != TERN_NO_TASK) {
        TERN_STAT(msg_count32(&tern_counters_.preemptions));
        tern_trace(TERN_EV_PREEMPT, m->dst, below);
    }
    if (!masked)
        port_set_level(top->level);
    msg_handler_start(m);
    /* Read while masked: enabling interrupts is a compiler barrier, which
     * would have the task's entry found and read again after it. */
    tern_handler handler = d->handler;
    void *state = d->state;
    port_irq_enable();

    tern_status st = handler(state, m);

    (void)port_irq_save();
    tern_port port = msg_handler_end(m, st);
    t->active = 0;
    *top = prev;
    TERN_STAT(tern_counters_.stack_depth--);
    port_set_level(top->level);
    (void)msg_task_handled(t, port);
}

#endif
