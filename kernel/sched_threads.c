/* The message layer of the thread models (threads, adaptive); it replaces
 * sched.c in those builds. A message goes to its task's mailbox and wakes
 * the task's thread if it waits in receive; the thread runs the task's
 * handler for one message at a time, `loop { receive; handle }`, so the
 * application source is the same as under the run-to-completion models.
 * Checking, holding and finishing messages, routing and multicast are
 * msg.c's. */
#include "thread_task.h"

/* Every task is a thread: the pool holds every task's stack. With
 * TERN_THREAD_STACK_POOL 0 the port defines both instead (the AVR: all the
 * RAM that .data, .bss and main()'s stack leave, sized at reset). */
#if TERN_THREAD_STACK_POOL > 0
uint64_t thread_stack_pool[TERN_THREAD_STACK_POOL / 8] __attribute__((aligned(TERN_STACK_GUARD)));
const uint32_t thread_stack_pool_bytes = sizeof thread_stack_pool;
_Static_assert(TERN_THREAD_STACK_POOL % TERN_STACK_GUARD == 0,
               "TERN_THREAD_STACK_POOL must be a multiple of TERN_STACK_GUARD");
#endif

/* ... and every task has a thread object. */
thread thread_table[TERN_MAX_TASKS];
const uint8_t thread_table_len = TERN_MAX_TASKS;
uint64_t thread_idle_stack[TERN_IDLE_STACK / 8] __attribute__((aligned(TERN_STACK_GUARD)));
const uint32_t thread_idle_stack_bytes = sizeof thread_idle_stack;

void sched_reset(void)
{
    msg_reset();
    threads_reset();
}

tern_task_id sched_running_task(void)
{
    thread *t = thread_current();
    return t ? t->task : TERN_NO_TASK;
}

tern_task_id tern_self(void) { return tern_isr_nesting ? TERN_NO_TASK : sched_running_task(); }

/* A post from an interrupt: the common one (msg_plain: an existing port
 * of a task that has handled INIT, so its thread exists and nothing is
 * held; no heap payload) goes to the mailbox without msg_check's and
 * deliver's general steps, as sched.c's isr_post does (issue 17: ~20
 * instructions from an interrupt to the woken thread). Evaluated under the
 * mask: a nested interrupt may finalize the task. */
static __attribute__((noinline)) tern_status isr_post(tern_task_id dst, tern_port port,
                                                      void *payload, uint16_t len, uint8_t flags)
{
    tern_irq_state s = port_irq_save();
    thread *th;
    if (!msg_plain(dst, port, payload, flags) || !(th = thread_of(dst))) {
        port_irq_restore(s);
        return sched_send(TERN_NO_TASK, dst, port, payload, len, flags, false);
    }
    tern_msg *m = msg_make(TERN_NO_TASK, dst, port, payload, len, flags);
    if (m)
        to_mailbox(th, m);
    port_irq_restore(s);
    return m ? TERN_OK : TERN_EFULL;
}

tern_status tern_send(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                      uint8_t flags)
{
    if (tern_isr_nesting)
        return isr_post(dst, port, payload, len, flags);
    return sched_send(sched_running_task(), dst, port, payload, len, flags, false);
}

bool sched_in_isr(void) { return tern_isr_nesting > 0; }

bool sched_tasks_are_threads(void) { return true; }

void sched_release_held(tern_msg *m) { to_mailbox(thread_of(m->dst), m); }

/* The first message to a task creates its thread (tern_app_start's INIT),
 * so the stacks are sized from the description that is running. */
static thread *thread_for(tern_task_id dst)
{
    thread *t = thread_of(dst);
    return t ? t : task_thread_create(dst);
}

/* Deliver one checked message (msg_deliver_fn). A post never runs a
 * handler here: the woken thread preempts through the port's switch when
 * its priority is higher (at once from a task, after the outermost
 * interrupt handler otherwise). */
static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                           uint16_t len, uint8_t flags, bool enqueue_only)
{
    (void)enqueue_only; /* threads never run a handler inside a post */
    thread *th = thread_for(dst);
    if (!th) {
        msg_count_drop(dst, TERN_DROP_NO_MEMORY);
        return TERN_ENOMEM;
    }
    tern_msg *m = msg_make(src, dst, port, payload, len, flags);
    if (!m)
        return TERN_EFULL;
    if (!msg_hold(m))
        to_mailbox(th, m);
    return TERN_OK;
}

tern_status sched_send(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                       uint16_t len, uint8_t flags, bool enqueue_only)
{
    return msg_send(src, dst, port, payload, len, flags, enqueue_only, deliver);
}

void sched_drop_task_messages(tern_task_id id)
{
    thread *th = thread_of(id);
    if (th)
        msg_drop_waiting(&th->mbox_head, &th->mbox_tail, id);
    msg_drop_held(id);
}

void tern_isr_exit(void)
{
    tern_trace(TERN_EV_IRQ_EXIT, 0, 0);
    if (--tern_isr_nesting == 0)
        port_thread_isr_exit();
}

bool sched_has_ready(void) { return threads_any_ready(); }

/* The main loop's first call hands the CPU to the threads for good: main()'s
 * context is abandoned and the idle thread takes its place. */
bool sched_run_next(void) { threads_start(idle_thread); }

/* Only the stack model's software and hardware dispatch use these; a
 * thread switch goes through the port's own switch instead. */
void tern_sched_preempt(void) {}
void tern_sched_dispatch_level(uint8_t level) { (void)level; }
