/* The message scheduler of the run-to-completion models (fifo, priority,
 * stack): the ready queue, dispatch on the shared stack, and interrupt
 * exit. What differs between those models lives in policy_*.c; this file
 * only asks the policy where a message goes in the queue and whether it
 * may preempt. Checking, holding and finishing messages is msg.c's. */
#include "msg.h"

static tern_msg *queue;          /* ready messages, in policy order */
static msg_stack_top top = {TERN_LEVEL_IDLE, TERN_NO_TASK}; /* the handler running now */
#if !TERN_PORT_HW_DISPATCH
/* Software dispatch: what the interrupts posted, run when the outermost
 * one returns. A hardware-dispatch port pends the level's vector at once
 * instead: the vector cannot preempt a device interrupt anyway. */
static bool dispatch_pending;
static uint8_t dispatch_level;
#endif

void sched_reset(void)
{
    msg_reset();
    queue = NULL;
    top = (msg_stack_top){TERN_LEVEL_IDLE, TERN_NO_TASK};
#if !TERN_PORT_HW_DISPATCH
    dispatch_pending = false;
#endif
}

tern_task_id tern_self(void) { return tern_isr_nesting ? TERN_NO_TASK : top.task; }

tern_task_id sched_running_task(void) { return top.task; }

bool sched_in_isr(void) { return tern_isr_nesting > 0; }

void sched_stats_reset(void) {} /* the counters are all there is */

static void enqueue(tern_msg *m)
{
    policy_enqueue(&queue, m);
    msg_count_waiting();
}

/* First message that may run above `floor`: its task is not already on the
 * stack (seed 002: such messages wait) and its priority is strictly higher
 * than the handler below (seed 002 V-B: otherwise the stack top resumes).
 * The queue is in policy order, so the first match is the one to run.
 * Returns the link that points at it, so taking it needs no second walk. */
MSG_STEP tern_msg **pick_inline(int8_t floor)
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

/* The call, for every caller but the level vector's dispatch (hardware-
 * dispatch ports): that one has it inline, ~8 instructions less from an
 * interrupt to its handler on Cortex-M3, where a call saves and moves
 * registers, for 40 bytes; the AVR's image does not change. */
static __attribute__((noinline)) tern_msg **pick(int8_t floor) { return pick_inline(floor); }

void sched_release_held(tern_msg *m) { enqueue(m); }

/* The migrator (kernel/task_move.c): task id's oldest waiting message,
 * out of the queue; NULL when none waits. Not a hot path. */
tern_msg *sched_take_task_message(tern_task_id id)
{
    for (tern_msg **pp = &queue; *pp; pp = &(*pp)->next)
        if ((*pp)->dst == id)
            return msg_take_waiting(pp);
    return NULL;
}

/* Run one message's handler nested on the shared stack, above the handler
 * that runs now. */
static void run_msg(tern_msg *m) { msg_run_nested(&top, m, top.task, false); }

/* Run every queued message allowed above `floor`, highest first: what the
 * stack model does when a handler returns. */
static void drain_above(int8_t floor)
{
    tern_msg **pp;
    while ((pp = pick(floor)) != NULL)
        run_msg(msg_take_waiting(pp));
}

bool sched_has_ready(void) { return pick(TERN_LEVEL_IDLE) != NULL; }

bool sched_run_next(void)
{
    tern_irq_state s = port_irq_save();
    tern_msg **pp = pick(TERN_LEVEL_IDLE);
    if (pp)
        run_msg(msg_take_waiting(pp));
    port_irq_restore(s);
    return pp != NULL;
}

void tern_sched_preempt(void)
{
    tern_irq_state s = port_irq_save();
    drain_above(top.level);
    port_irq_restore(s);
}

/* The exception that runs a level's messages has that level's priority, so
 * it must not run a lower message itself: nothing of the levels in between
 * could preempt it. It leaves the highest remaining message to its own
 * vector, which the hardware takes when this one returns. */
void tern_sched_dispatch_level(uint8_t level)
{
    tern_irq_state s = port_irq_save();
    int8_t floor = top.level;
    tern_msg **pp;
    while ((pp = pick_inline(floor)) != NULL && (*pp)->prio >= level) {
        tern_msg *m = msg_take_waiting(pp);
        msg_run_nested(&top, m, top.task, m->prio == level);
    }
    if (pp)
        port_dispatch((*pp)->prio);
    port_irq_restore(s);
}

/* A made message goes to the queue, or runs at once when it may preempt
 * (a post from an interrupt pends the level's vector on a hardware-dispatch
 * port, else marks the dispatch for tern_isr_exit). */
MSG_STEP void place(tern_msg *m, bool enqueue_only, bool from_isr)
{
    bool now = !enqueue_only && !tern_tasks[m->dst].active &&
               policy_preempts(m->prio, top.level, from_isr);
    if (now && !from_isr) {
        int8_t level = top.level;
        run_msg(m);
        drain_above(level);
        return;
    }
    enqueue(m);
    if (now) {
#if TERN_PORT_HW_DISPATCH
        port_dispatch(m->prio);
#else
        if (!dispatch_pending || m->prio > dispatch_level)
            dispatch_level = m->prio;
        dispatch_pending = true;
#endif
    } else {
        TERN_STAT(msg_count32(&tern_counters_.queued));
    }
}

/* Deliver one checked message (msg_deliver_fn). */
static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                           uint16_t len, uint8_t flags, bool enqueue_only)
{
    tern_msg *m = msg_make(src, dst, port, payload, len, flags);
    if (!m)
        return TERN_EFULL;
    if (!msg_hold(m))
        place(m, enqueue_only, (m->flags & TERN_MSG_FROM_ISR) != 0);
    return TERN_OK;
}

/* The general post (msg_check), from a task or an interrupt: out of line
 * with tern_send's own five arguments, which its callers pass on where
 * they came; sched_send's seven take registers an AVR function must save,
 * and tern_send and isr_post saved them on every post. */
static __attribute__((noinline)) tern_status checked_post(tern_task_id dst, tern_port port,
                                                          void *payload, uint16_t len,
                                                          uint8_t flags)
{
    return sched_send(tern_self(), dst, port, payload, len, flags, false);
}

/* The common post: one that msg_check would pass and msg_hold would not
 * hold (msg_plain), made and placed at once, the same way and counted the
 * same as through sched_send, whose general path keeps 18 registers live
 * (an 8-bit CPU saves and restores each); the others go to checked_post.
 * One function for each context, each with its constant: an interrupt's
 * post never runs a handler itself. The task's state is read under the
 * mask: with nested interrupts (Cortex-M) a higher one could finalize or
 * move the task between an unmasked check and the post. */
MSG_STEP tern_status plain_post(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                               uint8_t flags, bool from_isr)
{
    tern_irq_state s = port_irq_save();
    if (__builtin_expect(!msg_plain(dst, port, payload, flags), 0)) {
        port_irq_restore(s);
        return checked_post(dst, port, payload, len, flags);
    }
    tern_msg *m = from_isr
        ? msg_make_flagged(TERN_NO_TASK, dst, port, payload, len, TERN_MSG_FROM_ISR)
        : msg_make_flagged(top.task, dst, port, payload, len, flags & TERN_MSG_HEAP);
    if (m)
        place(m, false, from_isr);
    port_irq_restore(s);
    return m ? TERN_OK : TERN_EFULL;
}

static __attribute__((noinline)) tern_status isr_post(tern_task_id dst, tern_port port,
                                                      void *payload, uint16_t len, uint8_t flags)
{
    return plain_post(dst, port, payload, len, flags, true);
}

static __attribute__((noinline)) tern_status task_post(tern_task_id dst, tern_port port,
                                                       void *payload, uint16_t len,
                                                       uint8_t flags)
{
    return plain_post(dst, port, payload, len, flags, false);
}

tern_status tern_send(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                      uint8_t flags)
{
    if (!tern_isr_nesting)
        return task_post(dst, port, payload, len, flags);
    return isr_post(dst, port, payload, len, flags);
}

tern_status sched_send(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                       uint16_t len, uint8_t flags, bool enqueue_only)
{
    return msg_send(src, dst, port, payload, len, flags, enqueue_only, deliver);
}

void sched_drop_task_messages(tern_task_id id)
{
    msg_drop_waiting(&queue, NULL, id);
    msg_drop_held(id);
}

void tern_isr_exit(void)
{
    tern_trace(TERN_EV_IRQ_EXIT, 0, 0);
#if TERN_PORT_HW_DISPATCH
    --tern_isr_nesting;
#else
    if (--tern_isr_nesting == 0 && dispatch_pending) {
        dispatch_pending = false;
        port_dispatch(dispatch_level);
    }
#endif
}
