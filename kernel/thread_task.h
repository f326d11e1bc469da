/* What the two message layers that run tasks as threads (sched_threads.c:
 * every task; sched_hybrid.c: the flagged ones) do alike: a task's
 * mailbox, the body of its thread, the idle thread, the statistics
 * reset. Included by each (one of them is linked per build), so both
 * compile these as before, in their own unit: the thread path's length is
 * part of what the thread tests time. */
#ifndef TERN_KERNEL_THREAD_TASK_H
#define TERN_KERNEL_THREAD_TASK_H

#include <string.h>

#include "msg.h"
#include "thread.h"

/* A message for a thread task: into its mailbox, waking it if it waits. */
static void to_mailbox(thread *t, tern_msg *m)
{
    if (t->state != T_RECV)
        TERN_STAT(tern_counters_.queued++);
    msg_count_waiting();
    mailbox_put(t, m);
}

/* The body of a task's thread: `loop { receive; handle }`. */
static void task_thread(void *arg)
{
    tern_task_id id = (tern_task_id)(uintptr_t)arg;
    tern_tcb *t = &tern_tasks[id];
    for (;;) {
        tern_msg *m = thread_receive();
        tern_irq_state s = port_irq_save();
        msg_handler_start(m);
        port_irq_restore(s);

        tern_status st = t->desc->handler(t->desc->state, m);

        s = port_irq_save();
        bool finished = msg_task_handled(t, msg_handler_end(m, st));
        port_irq_restore(s);
        if (finished)
            thread_exit();
    }
}

/* The first message to a task (tern_app_start's INIT) creates its thread,
 * so the stack is sized from the description that is running. NULL: no
 * room (thread_create said why). */
static thread *task_thread_create(tern_task_id dst)
{
    return thread_create(dst, tern_tasks[dst].desc->stack_size, task_thread,
                         (void *)(uintptr_t)dst);
}

/* The idle thread: account idle periods and sleep, forever. */
static void idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        (void)idle_once();
}

/* tern_stats_reset: the switch counters and quanta restart; each stack's
 * deepest use stays. */
void sched_stats_reset(void)
{
    uint32_t stacks[TERN_MAX_TASKS];
    memcpy(stacks, thread_stats.stack_bytes, sizeof stacks);
    memset(&thread_stats, 0, sizeof thread_stats);
    memcpy(thread_stats.stack_bytes, stacks, sizeof stacks);
}

/* Where no hardware defers a requested switch past the last interrupt
 * handler (Cortex-M's PendSV does), the port takes it here (AVR). */
__attribute__((weak)) void port_thread_isr_exit(void) {}

#endif
