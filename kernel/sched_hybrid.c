/* The message layer of the hybrid model; it replaces sched.c in that build.
 *
 * Two kinds of task share one priority scale (0 .. TERN_PRIO_LEVELS-1):
 *  - a task flagged TERN_TASK_THREAD is a thread with its own stack
 *    (thread.c), `loop { receive; handle }`, and may block;
 *  - every other task runs to completion on the one shared (main) stack
 *    by the stack model's rules (policy_hybrid.c = policy_stack.c):
 *    nested preemption by priority, messages to a task already on the
 *    stack wait, dispatch through the NVIC's per-level vectors.
 *
 * Run-to-completion handlers always run in handler mode on the main stack,
 * in the dispatch vector of their level (port_dispatch), above whatever
 * thread was running: never on a thread's private stack. Threads run in
 * thread mode, and a thread switch (PendSV, the lowest exception) happens
 * only once no handler is running or pending.
 *
 * The thread level B (threads_level(): the highest priority among the
 * running thread and the ready ones, -1 when only idle could run) is the
 * floor below the whole handler stack: a run-to-completion message of
 * priority q starts only when q > B, i.e. only a strictly higher priority
 * preempts a thread, and a ready thread of higher priority than q goes
 * first. Messages at or below B wait in the queue; when B drops (the thread
 * blocks, its inherited priority ends) the highest waiting one gets its
 * vector pended and runs before the next thread resumes. With no flagged
 * task B is -1 throughout and the dispatch is exactly the stack model's.
 *
 * Checking, holding and finishing messages, routing and multicast are
 * msg.c's. */
#include "policy_order.h"
#include "thread_task.h"

#ifndef TERN_HYBRID_STACK_POOL
#define TERN_HYBRID_STACK_POOL 2048 /* bytes: room for two default thread stacks */
#endif
#ifndef TERN_HYBRID_THREADS
#define TERN_HYBRID_THREADS 4 /* flagged tasks at most */
#endif
/* The idle thread runs only the idle path and the app's idle hook and
 * work: handlers and interrupts use the main stack. */
#ifndef TERN_HYBRID_IDLE_STACK
#define TERN_HYBRID_IDLE_STACK 512
#endif

/* Only the flagged tasks take a stack from the pool. */
uint64_t thread_stack_pool[TERN_HYBRID_STACK_POOL / 8] __attribute__((aligned(TERN_STACK_GUARD)));
const uint32_t thread_stack_pool_bytes = sizeof thread_stack_pool;
_Static_assert(TERN_HYBRID_STACK_POOL % TERN_STACK_GUARD == 0,
               "TERN_HYBRID_STACK_POOL must be a multiple of TERN_STACK_GUARD");
thread thread_table[TERN_HYBRID_THREADS];
const uint8_t thread_table_len = TERN_HYBRID_THREADS;
uint64_t thread_idle_stack[TERN_HYBRID_IDLE_STACK / 8] __attribute__((aligned(TERN_STACK_GUARD)));
const uint32_t thread_idle_stack_bytes = sizeof thread_idle_stack;

static tern_msg *queue;          /* ready run-to-completion messages, by priority */
static msg_stack_top top = {TERN_LEVEL_IDLE, TERN_NO_TASK}; /* the handler on top of the shared stack */
static bool dispatch_pending;
static uint8_t dispatch_level; /* the highest level posted by the interrupts */
static bool started;    /* the threads run: handlers may be dispatched */
static bool any_thread; /* a flagged task has its thread (else B is -1) */

void sched_reset(void)
{
    msg_reset();
    queue = NULL;
    top = (msg_stack_top){TERN_LEVEL_IDLE, TERN_NO_TASK};
    dispatch_pending = false;
    started = false;
    any_thread = false;
    threads_reset();
}

static bool is_thread_task(tern_task_id id)
{
    return (tern_tasks[id].desc->flags & TERN_TASK_THREAD) != 0;
}

/* B, the floor below the whole nest of handlers (see the top). An app
 * without a flagged task has only the idle thread: B is -1, no question. */
static int8_t thread_level(void) { return any_thread ? threads_level() : TERN_LEVEL_IDLE; }

/* The task of the running thread (TERN_NO_TASK for idle). */
static tern_task_id sched_thread_task(void)
{
    thread *t = thread_current();
    return t ? t->task : TERN_NO_TASK;
}

/* The handler on top of the shared stack, else the running thread's task. */
tern_task_id sched_running_task(void)
{
    return top.task != TERN_NO_TASK ? top.task : sched_thread_task();
}

tern_task_id tern_self(void) { return tern_isr_nesting ? TERN_NO_TASK : sched_running_task(); }

tern_status tern_send(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                      uint8_t flags)
{
    tern_task_id self = tern_isr_nesting           ? TERN_NO_TASK
                        : top.task != TERN_NO_TASK ? top.task
                                                   : sched_thread_task(); /* tern_self() */
    return sched_send(self, dst, port, payload, len, flags, false);
}

/* Not in a thread's own context: an interrupt, or a run-to-completion
 * handler (which runs in a dispatch exception). thread.c refuses to block
 * here (TERN_ESTATE). */
bool sched_in_isr(void) { return tern_isr_nesting > 0 || top.task != TERN_NO_TASK; }

/* TERN_TASK_THREAD is honoured: the flagged tasks become threads. */
bool sched_tasks_are_threads(void) { return true; }

/* --- Run-to-completion tasks: the stack model on the main stack ---------- */

static void enqueue(tern_msg *m)
{
    insert_by_priority(&queue, m);
    msg_count_waiting();
}

/* First message that may run above `floor` and above the thread level:
 * its task is not already on the stack and its priority is strictly
 * higher than both (sched.c's pick, with the threads as the bottom). */
static tern_msg **pick(int8_t floor)
{
    int8_t b = thread_level();
    if (b > floor)
        floor = b;
    for (tern_msg **pp = &queue; *pp; pp = &(*pp)->next) {
        tern_msg *m = *pp;
        if (tern_tasks[m->dst].active)
            continue;
        if ((int8_t)m->prio > floor)
            return pp;
    }
    return NULL;
}

/* Pend the vector of the highest message allowed above the running
 * handlers and the threads, if any: it runs as soon as the hardware lets
 * it (at once from a thread, after the outermost interrupt otherwise). */
static void dispatch_next(void)
{
    tern_msg **pp = pick(top.level);
    if (pp)
        port_dispatch((*pp)->prio);
}

/* Run one message's handler nested on the shared stack (always in handler
 * mode here). Called and returns with interrupts disabled. */
static void run_msg(tern_msg *m)
{
    /* what it preempts: the handler below, else a task's thread */
    tern_task_id below = top.task != TERN_NO_TASK || !any_thread ? top.task : sched_thread_task();
    msg_run_nested(&top, m, below, false);
}

static void drain_above(int8_t floor)
{
    tern_msg **pp;
    while ((pp = pick(floor)) != NULL)
        run_msg(msg_take_waiting(pp));
}

/* The dispatch vector of `level` (Cortex-M: cm_level_irq): run the
 * messages of that level and above, leave the highest lower one to its own
 * vector (sched.c, with the thread level as the floor). */
void tern_sched_dispatch_level(uint8_t level)
{
    tern_irq_state s = port_irq_save();
    int8_t floor = top.level;
    tern_msg **pp;
    while ((pp = pick(floor)) != NULL && (*pp)->prio >= level)
        run_msg(msg_take_waiting(pp));
    if (pp)
        port_dispatch((*pp)->prio);
    port_irq_restore(s);
}

/* Software-dispatch ports only (hybrid runs where the NVIC dispatches). */
void tern_sched_preempt(void)
{
    tern_irq_state s = port_irq_save();
    drain_above(top.level);
    port_irq_restore(s);
}

/* The thread level dropped (policy_hybrid.c: a switch to a lower thread or
 * idle, or an inherited priority returned): what waited may run now. */
void sched_hybrid_level_dropped(void)
{
    if (top.level == TERN_LEVEL_IDLE)
        dispatch_next();
}

/* --- Thread tasks: mailboxes (thread_task.h) ----------------------------- */

/* A held message, released by its task's INIT: to the task's queue or
 * mailbox. */
void sched_release_held(tern_msg *m)
{
    if (is_thread_task(m->dst))
        to_mailbox(thread_of(m->dst), m);
    else
        enqueue(m);
}

/* --- Posting ------------------------------------------------------------ */

/* A run-to-completion message that is not held: start it now, pend its
 * vector, or queue it, by the rules at the top of this file. */
static void deliver_rtc(tern_msg *m, bool enqueue_only)
{
    tern_tcb *t = &tern_tasks[m->dst];
    bool from_isr = tern_isr_nesting > 0;
    bool now = !enqueue_only && started && !t->active &&
               policy_preempts(m->prio, top.level, from_isr) &&
               (int8_t)m->prio > thread_level();
    if (now && !from_isr && top.task != TERN_NO_TASK) {
        /* posted by a handler on the shared stack: nested at once */
        int8_t level = top.level;
        run_msg(m);
        drain_above(level);
        return;
    }
    enqueue(m);
    if (!now) {
        TERN_STAT(tern_counters_.queued++);
    } else if (from_isr) { /* pended by the outermost interrupt's exit */
        if (!dispatch_pending || m->prio > dispatch_level)
            dispatch_level = m->prio;
        dispatch_pending = true;
    } else {
        port_dispatch(m->prio); /* from a thread: taken when its critical section ends */
    }
}

/* Deliver one checked message (msg_deliver_fn). */
static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                           uint16_t len, uint8_t flags, bool enqueue_only)
{
    thread *th = NULL;
    if (is_thread_task(dst)) {
        th = thread_of(dst);
        if (!th) { /* the first message (INIT) creates the thread */
            th = task_thread_create(dst);
            any_thread |= th != NULL;
        }
        if (!th) {
            msg_count_drop(dst, TERN_DROP_NO_MEMORY);
            return TERN_ENOMEM;
        }
    }
    tern_msg *m = msg_make(src, dst, port, payload, len, flags);
    if (!m)
        return TERN_EFULL;
    if (msg_hold(m))
        return TERN_OK;
    if (th)
        to_mailbox(th, m); /* wakes the thread; a switch follows if it preempts */
    else
        deliver_rtc(m, enqueue_only);
    return TERN_OK;
}

tern_status sched_send(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                       uint16_t len, uint8_t flags, bool enqueue_only)
{
    return msg_send(src, dst, port, payload, len, flags, enqueue_only, deliver);
}

void sched_drop_task_messages(tern_task_id id)
{
    msg_drop_waiting(&queue, NULL, id);
    thread *th = is_thread_task(id) ? thread_of(id) : NULL;
    if (th)
        msg_drop_waiting(&th->mbox_head, &th->mbox_tail, id);
    msg_drop_held(id);
}

/* --- Interrupts, idle, start -------------------------------------------- */

void tern_isr_exit(void)
{
    tern_trace(TERN_EV_IRQ_EXIT, 0, 0);
    if (--tern_isr_nesting == 0) {
        if (dispatch_pending) {
            dispatch_pending = false;
            if (any_thread)
                dispatch_next(); /* the thread level may have risen meanwhile */
            else
                port_dispatch(dispatch_level); /* as sched.c */
        }
        port_thread_isr_exit();
    }
}

/* Asked by idle with interrupts disabled: a thread is ready, or a handler
 * may run (its vector is pended again, so it runs once idle unmasks). */
bool sched_has_ready(void)
{
    if (threads_any_ready())
        return true;
    tern_msg **pp = pick(top.level);
    if (pp)
        port_dispatch((*pp)->prio);
    return pp != NULL;
}

/* The main loop's first call hands the CPU to the threads for good: the
 * idle thread takes main()'s place, and the queued INITs of the
 * run-to-completion tasks are dispatched above it (policy_hybrid.c's
 * tpolicy_start). */
bool sched_run_next(void)
{
    (void)port_irq_save(); /* threads_start enables them on the idle stack */
    started = true;
    threads_start(idle_thread);
}
