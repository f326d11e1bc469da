/* Threads (MANTIS, seed 000 III-B): every task is a thread with its own
 * stack; the highest-priority ready thread runs and preempts lower ones at
 * once; threads of one level share the CPU in round-robin quanta. This
 * file is the scheduler's core: creation, the switch, the quanta, and the
 * thread's own blocking calls (receive, sleep, yield, exit). Beside it:
 * the ready queues (thread_ready.c), semaphores and mutexes
 * (thread_sync.c), statistics (thread_stats.c). Which ready thread runs
 * is asked of the policy (policy_threads.c, policy_adaptive.c); the
 * context switch is the arch port's (context_*.c), which calls
 * thread_switch(). */
#include <string.h>

#include "thread_ready.h"

thread *thread_running;
bool threads_live; /* threads_start has run */

static uint8_t threads_used; /* slots of thread_table handed out */
static thread idle;
static thread *task_threads[TERN_MAX_TASKS];
static tern_alarm slice_alarm;
static uint32_t quantum; /* ticks */

static uint32_t pool_used;

_Static_assert((TERN_STACK_GUARD & (TERN_STACK_GUARD - 1)) == 0 && TERN_STACK_GUARD >= 32,
               "TERN_STACK_GUARD must be a power of two >= 32");

/* The clock when a thread gets the CPU (thread_stamp, thread.h), with
 * interrupts disabled. */
THREAD_HOT thread_stamp clock_stamp(void) { return clock_low_irqs_off(); }

static void slice_ends(tern_alarm *a, void *arg);

void threads_reset(void)
{
    memset(thread_table, 0, thread_table_len * sizeof(thread));
    threads_used = 0;
    memset(&idle, 0, sizeof idle);
    memset(task_threads, 0, sizeof task_threads);
    memset(&thread_stats, 0, sizeof thread_stats);
    ready_reset();
    thread_running = NULL;
    threads_live = false;
    pool_used = 0;
    /* at most 2^30 ticks: deadlines a quantum apart compare as signed
     * 32-bit differences */
    tern_time q = tern_cycles_to_ticks(TERN_SLICE_CYCLES);
    quantum = q < ((tern_time)1 << 30) ? (uint32_t)q : (uint32_t)1 << 30;
    tern_alarm_init(&slice_alarm, slice_ends, NULL);
    tpolicy_reset();
}

uint32_t thread_quantum(void) { return quantum; }
thread *thread_of(tern_task_id task) { return task < TERN_MAX_TASKS ? task_threads[task] : NULL; }
thread *thread_current(void) { return thread_running; }
bool threads_started(void) { return threads_live; }
bool threads_any_ready(void) { return ready_mask != 0; }
uint32_t threads_pool_used(void) { return pool_used; }

int8_t threads_level(void)
{
    const thread *run = thread_running;
    int8_t level = run && run->state == T_RUNNING ? run->prio : TERN_LEVEL_IDLE;
    const thread *top = ready_top();
    return top && top->prio > level ? top->prio : level;
}

/* --- Switching ------------------------------------------------------------ */

void thread_request_switch(void)
{
    if (threads_live)
        port_thread_switch();
}

/* After any change of readiness: ask for a switch only when one is due, so
 * the port does no work when nothing changed. */
void thread_reschedule(void)
{
    if (!threads_live)
        return;
    if (thread_running->state != T_RUNNING) {
        port_thread_switch();
        return;
    }
    thread *cand = tpolicy_pick();
    if (cand && (thread_running == &idle || tpolicy_preempts(thread_running, cand)))
        port_thread_switch();
}

/* The slice alarm is armed when a thread of the running level waits, and
 * cancelled only when idle runs (tickless): a switch to a thread with no
 * peer leaves it armed, so a ping-pong between two threads of one level
 * (each blocking in turn) does not arm and cancel it on every switch. A
 * stale alarm goes off at most once; slice_ends then renews the running
 * thread's quantum, as switch_out's modulo would have. Switching between
 * threads of one level leaves it armed when it goes off no later than the
 * incoming thread's quantum ends: re-arming costs a list insertion and a
 * clock read, an early alarm only a slice_ends that re-arms it for the
 * running thread. */
static uint32_t slice_due; /* low 32 bits of the armed deadline */

static __attribute__((noinline)) void slice_set(void)
{
    tern_time now = tern_now();
    const thread *run = thread_running;
    uint32_t used = (uint32_t)now - run->run_start;
    tern_time deadline = now + (used < run->quantum_left ? run->quantum_left - used : 0);
    slice_due = (uint32_t)deadline;
    tern_alarm_set(&slice_alarm, deadline, 0);
}

THREAD_HOT void arm_slice(void)
{
    if (thread_running == &idle) {
        if (slice_alarm.armed)
            tern_alarm_cancel(&slice_alarm);
    } else if (peer_ready(thread_running)) {
        thread_stamp due = thread_running->run_start + thread_running->quantum_left;
        if (!slice_alarm.armed || (int32_t)(slice_due - due) > 0)
            slice_set();
    }
}

void thread_requeue(thread *t, int8_t prio)
{
    ready_remove(t);
    t->prio = prio;
    ready_push(t, true);
}

void thread_make_ready(thread *t)
{
    ready_push(t, false);
    if (!threads_live)
        return;
    if (t->prio > thread_running->prio) { /* every policy preempts a lower level (idle's is -1) */
        port_thread_switch();
        return;
    }
    if (t->prio == thread_running->prio) /* a peer of the running thread */
        arm_slice();
    thread_reschedule();
}

/* Interrupt context: the running thread's quantum is over (or the alarm
 * was left armed for an earlier thread of the level: re-armed for this
 * one). It is preempted only when a peer waits and the policy agrees;
 * otherwise it gets a new quantum and runs on. */
static void slice_ends(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    if (!threads_live || thread_running == &idle)
        return;
    tern_time now = tern_now();
    if ((uint32_t)now - thread_running->run_start < thread_running->quantum_left) {
        arm_slice();
        return;
    }
    if (peer_ready(thread_running) && tpolicy_slice_preempts(thread_running)) {
        thread_running->expired = 1;
        thread_stats.slices++;
        port_thread_switch();
        return;
    }
    /* A fresh quantum makes the thread long (seed 003 5.3: "if a process has
     * a full quantum, it's a long process"): one that came back short has
     * used up its rest, so it is sliced again like any long one. Keeping it
     * short let it run unsliced through a whole preemption-free period while
     * its peers waited (seed003 with arrival seeds 2 and 3: a 1 s sensing
     * job held the CPU, forwarding jobs waited up to 962 ms). */
    thread_running->run_start = (thread_stamp)now;
    thread_running->quantum_left = quantum;
    thread_running->long_run = 1;
    arm_slice();
}

void thread_stack_overflow(const thread *t, const void *sp)
{
    /* the name with tern_puts: it may be in flash (TERN_DESC) */
    tern_puts(TERN_ROM_STR("\ntern: stack overflow in task '"));
    if (t->task == TERN_NO_TASK)
        tern_puts(TERN_ROM_STR("idle"));
    else
        tern_puts(tern_task_name(t->task));
    tern_printf("' (id %u): stack %lu bytes at %08lx, sp=%08lx\n", t->task,
                (unsigned long)t->stack_size, (unsigned long)(uintptr_t)t->stack_lo,
                (unsigned long)(uintptr_t)sp);
    port_exit(TERN_EXIT_STACK_OVERFLOW);
}

/* On every switch: the saved stack pointer must lie above the guard, and,
 * without an MPU guard, the guard's lowest and highest words must still
 * hold their paint (a frame may have jumped past the pointer check). With
 * the MPU guard the first write into it faults (cm_fault_explain), so the
 * paint cannot change unnoticed. */
static void check_stack(const thread *t, const void *sp)
{
    bool hit = (const uint8_t *)sp < t->stack_lo + TERN_STACK_GUARD;
#if !TERN_MPU_GUARD
    const uint32_t *g = (const uint32_t *)(const void *)t->stack_lo;
    hit = hit || g[0] != STACK_PAINT || g[TERN_STACK_GUARD / 4 - 1] != STACK_PAINT;
#endif
    if (hit)
        thread_stack_overflow(t, sp);
}

/* A thread other than idle leaves the CPU at `now`: what is left of its
 * quantum (seed 003 5.3). A thread that blocks keeps the rest and counts as
 * short (alpha) when it comes back; one preempted while ready gets a full
 * quantum (beta). 32-bit deltas: a run of 2^32 ticks or more (171 s at
 * mps2-an385's 25 MHz) is taken modulo 2^32, which only moves where in its
 * quantum such a thread stands when it blocks. */
THREAD_HOT void switch_out(thread *t, thread_stamp now, bool still_ready)
{
    if (still_ready || t->expired) {
        t->quantum_left = quantum;
        return;
    }
    uint32_t used = now - t->run_start;
    if (used < t->quantum_left) {
        t->quantum_left -= used;
    } else { /* it ran on alone past its quantum */
        uint32_t over = (used - t->quantum_left) % quantum;
        t->quantum_left = over ? quantum - over : quantum;
    }
}

/* Called by the port's switch routine, interrupts disabled, with the
 * running thread's saved stack pointer; returns the stack pointer of the
 * thread to run. `used`: the call is in assembly, which link-time
 * optimisation does not see. */
__attribute__((used)) void *thread_switch(void *sp)
{
    thread *prev = thread_running;
    prev->sp = sp;
    check_stack(prev, sp);
    bool still_ready = prev->state == T_RUNNING && prev != &idle;
    thread *cand = tpolicy_pick();
    if (still_ready) {
        bool go = cand && (prev->expired ? cand->prio >= prev->prio : tpolicy_preempts(prev, cand));
        if (!go) {
            if (prev->expired) { /* its peer left meanwhile: a new quantum, long */
                prev->expired = 0;
                prev->run_start = clock_stamp();
                prev->quantum_left = quantum;
                prev->long_run = 1;
                arm_slice();
            }
            return sp;
        }
    }
    thread *next = cand ? cand : &idle;
    if (next == prev) { /* yielded with nobody to yield to, or idle stays */
        if (prev->state == T_READY)
            ready_remove(prev);
        prev->state = T_RUNNING;
        return sp;
    }
    thread_stamp now = clock_stamp(); /* the one clock read of a switch */
#if TERN_THREAD_CAUSES
    bool sliced = prev->expired;
#endif
    if (prev != &idle) {
        switch_out(prev, now, still_ready);
        if (still_ready)
            ready_push(prev, !prev->expired); /* preempted by priority: resumes first */
        prev->expired = 0;
    }
    if (next != &idle)
        ready_remove(next);
    next->state = T_RUNNING;
    next->run_start = now;
    next->long_run = next->quantum_left >= quantum;
    thread_running = next;
    arm_slice();

    tpolicy_switched(prev, next);
    if (prev == &idle) {
        thread_stats.from_idle++;
    } else if (still_ready) {
        thread_stats.involuntary++;
#if TERN_THREAD_CAUSES
        thread_stats.preempted[prev->task]++;
        if (sliced && prev->long_run)
            thread_stats.sliced_long++;
        else if (sliced)
            thread_stats.sliced_short++;
#endif
        TERN_STAT(tern_counters_.preemptions++);
    } else {
        thread_stats.voluntary++;
    }
    TERN_STAT(tern_counters_.ctx_switches++);
    if (next != &idle)
        thread_stats.switched_in[next->task]++;
    tern_trace(TERN_EV_CTX_SWITCH, prev->task, next->task);
    port_thread_guard(next->stack_lo);
    return next->sp;
}

/* --- Creation and start ---------------------------------------------------- */

static void paint(uint8_t *lo, uint32_t size)
{
    for (uint32_t *p = (uint32_t *)(void *)lo; p < (uint32_t *)(void *)(lo + size); p++)
        *p = STACK_PAINT;
}

thread *thread_create(tern_task_id task, uint32_t stack_size, void (*entry)(void *),
                      void *arg)
{
    uint32_t size = stack_size ? stack_size : TERN_THREAD_STACK_DEFAULT;
    size = (size + TERN_STACK_GUARD - 1) & ~(TERN_STACK_GUARD - 1);
    if (size < 4 * TERN_STACK_GUARD || size > thread_stack_pool_bytes - pool_used) {
        tern_printf("tern: no room for the %lu-byte stack of task '", (unsigned long)size);
        tern_puts(tern_tasks[task].desc->name); /* may be in flash (TERN_DESC) */
        tern_printf("' (%lu of %lu pool bytes used, minimum %lu)\n", (unsigned long)pool_used,
                    (unsigned long)thread_stack_pool_bytes, (unsigned long)(4 * TERN_STACK_GUARD));
        return NULL;
    }
    if (threads_used >= thread_table_len) {
        tern_puts(TERN_ROM_STR("tern: no thread for task '"));
        tern_puts(tern_tasks[task].desc->name); /* may be in flash (TERN_DESC) */
        tern_printf("' (all %u slots used)\n", (unsigned)thread_table_len);
        return NULL;
    }
    thread *t = &thread_table[threads_used++];
    memset(t, 0, sizeof *t);
    pool_used += size;
    /* Handed out from the top down: what the pool has left stays below the
     * lowest stack, so an overflow past a guard runs into unused pool (the
     * broken guard is reported at the next switch) before it reaches what
     * lies under the pool (.bss on the AVR, where no MPU stops a write). */
    t->stack_lo = (uint8_t *)thread_stack_pool + thread_stack_pool_bytes - pool_used;
    t->stack_size = size;
    paint(t->stack_lo, size);
    t->sp = port_thread_init(t->stack_lo, size, entry, arg);
    t->prio = t->base_prio = (int8_t)tern_tasks[task].desc->priority;
    t->task = task;
    t->quantum_left = quantum;
    task_threads[task] = t;
    ready_push(t, false);
    return t;
}

void threads_start(void (*idle_entry)(void *))
{
    (void)port_irq_save(); /* port_thread_start enables them on the idle stack */
    idle.stack_lo = (uint8_t *)thread_idle_stack;
    idle.stack_size = thread_idle_stack_bytes;
    paint(idle.stack_lo, idle.stack_size);
    idle.prio = idle.base_prio = -1;
    idle.task = TERN_NO_TASK;
    idle.state = T_RUNNING;
    thread_running = &idle;
    threads_live = true;
    tpolicy_start();
    port_thread_guard(idle.stack_lo);
    if (ready_mask)
        port_thread_switch(); /* taken as soon as idle enables interrupts */
    port_thread_start(idle.stack_lo + idle.stack_size, idle_entry, NULL);
}

/* --- Blocking ------------------------------------------------------------ */

void mailbox_put(thread *t, tern_msg *m)
{
    m->next = NULL;
    if (t->mbox_tail)
        t->mbox_tail->next = m;
    else
        t->mbox_head = m;
    t->mbox_tail = m;
    if (t->state == T_RECV)
        thread_make_ready(t);
}

tern_msg *thread_receive(void)
{
    for (;;) {
        tern_irq_state s = port_irq_save();
        thread *t = thread_running;
        tern_msg *m = t->mbox_head;
        if (m) {
            t->mbox_head = m->next;
            if (!t->mbox_head)
                t->mbox_tail = NULL;
            m->next = NULL;
            TERN_STAT(tern_counters_.queue_depth--);
            port_irq_restore(s);
            return m;
        }
        thread_block(t, T_RECV);
        port_irq_restore(s);
    }
}

void thread_exit(void)
{
    (void)port_irq_save();
    if (slice_alarm.armed)
        tern_alarm_cancel(&slice_alarm);
    thread_block(thread_running, T_DEAD);
    port_irq_enable();
    for (;;) /* never scheduled again */
        ;
}

tern_status tern_yield(void)
{
    tern_irq_state s = port_irq_save();
    if (!thread_may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    if (ready[thread_running->prio].head) { /* a peer waits: go behind it */
        ready_push(thread_running, false);
        port_thread_switch();
    }
    port_irq_restore(s);
    return TERN_OK;
}

static void sleep_ends(tern_alarm *a, void *arg)
{
    (void)a;
    thread *t = arg;
    if (t->state == T_SLEEP)
        thread_make_ready(t);
}

tern_status tern_sleep(tern_time ticks)
{
    tern_irq_state s = port_irq_save();
    if (!thread_may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    thread *t = thread_running;
    tern_alarm_init(&t->wake, sleep_ends, t);
    tern_alarm_set(&t->wake, tern_now() + ticks, 0);
    thread_block(t, T_SLEEP);
    port_irq_restore(s);
    return TERN_OK;
}

int tern_thread_priority(void)
{
    if (!threads_live || sched_in_isr() || thread_running == &idle)
        return -1;
    return thread_running->prio;
}

bool tern_thread_short(void)
{
    return tern_thread_priority() >= 0 && !thread_running->long_run;
}
