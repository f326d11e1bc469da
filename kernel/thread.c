/* Threads (MANTIS, seed 000 III-B): every task is a thread with its own
 * stack; the highest-priority ready thread runs and preempts lower ones at
 * once; threads of one level share the CPU in round-robin quanta. Blocking
 * receive, sleep, semaphores and a mutex with priority inheritance block
 * the calling thread. Which ready thread runs is asked of the policy
 * (policy_threads.c, policy_adaptive.c); the context switch is the arch
 * port's (context_*.c), which calls thread_switch(). */
#include <string.h>

#include "thread.h"

#define STACK_PAINT 0x5453544bu /* "KTST" */

/* One bit per priority level, in the narrowest type that holds them: on an
 * 8-bit CPU every byte of a mask costs instructions on the switch path. */
#if TERN_PRIO_LEVELS <= 8
typedef uint8_t level_mask;
#elif TERN_PRIO_LEVELS <= 16
typedef uint16_t level_mask;
#else
typedef uint32_t level_mask;
#endif

typedef struct {
    thread *head, *tail;
} ready_queue;

tern_thread_stats thread_stats;

static uint8_t threads_used; /* slots of thread_table handed out */
static thread idle;
static thread *task_threads[TERN_MAX_TASKS];
static thread *current;
static ready_queue ready[TERN_PRIO_LEVELS]; /* one FIFO per level */
static level_mask ready_mask;               /* bit k: level k has a ready thread */
static bool started;
static tern_alarm slice_alarm;
static uint32_t quantum; /* ticks */

static uint32_t pool_used;

_Static_assert((TERN_STACK_GUARD & (TERN_STACK_GUARD - 1)) == 0 && TERN_STACK_GUARD >= 32,
               "TERN_STACK_GUARD must be a power of two >= 32");
_Static_assert(TERN_PRIO_LEVELS <= 32, "level_mask has at most 32 bits");

#if !THREAD_WIDE_CPU /* a shift by a variable count is a loop: look the bit up */
static const level_mask level_bits[TERN_PRIO_LEVELS] = {
#define B_(k) (level_mask)((level_mask)1 << (k))
    B_(0), B_(1), B_(2), B_(3), B_(4), B_(5), B_(6), B_(7),
#if TERN_PRIO_LEVELS > 8
    B_(8), B_(9), B_(10), B_(11), B_(12), B_(13), B_(14), B_(15),
#endif
#if TERN_PRIO_LEVELS > 16
    B_(16), B_(17), B_(18), B_(19), B_(20), B_(21), B_(22), B_(23),
    B_(24), B_(25), B_(26), B_(27), B_(28), B_(29), B_(30), B_(31),
#endif
#undef B_
};
#endif

#define HOT static inline __attribute__((always_inline)) /* -Os would call it */

HOT level_mask level_bit(int8_t p)
{
#if THREAD_WIDE_CPU
    return (level_mask)((level_mask)1 << p);
#else
    return level_bits[p];
#endif
}

/* The highest set bit of a non-zero mask. */
HOT int8_t top_level(level_mask m)
{
#if THREAD_WIDE_CPU
    return (int8_t)(31 - __builtin_clz((unsigned)m));
#else
    int8_t p = 0;
#if TERN_PRIO_LEVELS > 16
    if (m >> 16) {
        m >>= 16;
        p = 16;
    }
#endif
#if TERN_PRIO_LEVELS > 8
    if ((uint16_t)m >> 8) {
        m >>= 8;
        p += 8;
    }
#endif
    uint8_t b = (uint8_t)m;
    if (b & 0xf0u) {
        b >>= 4;
        p += 4;
    }
    if (b & 0x0cu) {
        b >>= 2;
        p += 2;
    }
    return (int8_t)(p + (b >> 1));
#endif
}

/* The clock when a thread gets the CPU (thread_stamp, thread.h), with
 * interrupts disabled. An 8-bit CPU needs only the low 32 bits: on a
 * 32-bit counter they are the raw count (clock.c only adds whole wraps
 * above it), without the 64-bit extension. */
HOT thread_stamp clock_stamp(void)
{
#if THREAD_WIDE_CPU
    return clock_now_irqs_off();
#else
    return port_board.counter_bits >= 32 ? port_counter_read() : (uint32_t)clock_now_irqs_off();
#endif
}

static void slice_ends(tern_alarm *a, void *arg);

void threads_reset(void)
{
    memset(thread_table, 0, thread_table_len * sizeof(thread));
    threads_used = 0;
    memset(&idle, 0, sizeof idle);
    memset(task_threads, 0, sizeof task_threads);
    memset(&thread_stats, 0, sizeof thread_stats);
    memset(ready, 0, sizeof ready);
    ready_mask = 0;
    current = NULL;
    started = false;
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
thread *thread_current(void) { return current; }
bool threads_started(void) { return started; }
bool threads_any_ready(void) { return ready_mask != 0; }
uint32_t threads_pool_used(void) { return pool_used; }

int8_t threads_level(void)
{
    int8_t level = current && current->state == T_RUNNING ? current->prio : TERN_LEVEL_IDLE;
    const thread *top = ready_top();
    return top && top->prio > level ? top->prio : level;
}

/* --- Ready queues: one FIFO per priority level --------------------------- */

static void ready_push(thread *t, bool at_head)
{
    ready_queue *q = &ready[t->prio];
    t->state = T_READY;
    if (!q->head) {
        t->next = NULL;
        q->head = q->tail = t;
        ready_mask |= level_bit(t->prio);
    } else if (at_head) {
        t->next = q->head;
        q->head = t;
    } else {
        t->next = NULL;
        q->tail->next = t;
        q->tail = t;
    }
}

static void ready_remove(thread *t)
{
    ready_queue *q = &ready[t->prio];
    if (q->head == t) { /* the usual case: the thread chosen to run */
        q->head = t->next;
    } else {
        thread *prev = q->head;
        while (prev && prev->next != t)
            prev = prev->next;
        if (!prev)
            return; /* not queued */
        prev->next = t->next;
        if (q->tail == t)
            q->tail = prev;
    }
    t->next = NULL;
    if (!q->head) {
        q->tail = NULL;
        ready_mask &= (level_mask)~level_bit(t->prio);
    }
}

thread *ready_top(void) { return ready_mask ? ready[top_level(ready_mask)].head : NULL; }

/* The first ready thread, highest level first, that `accept` takes. */
thread *ready_first(bool (*accept)(const thread *t))
{
    for (int8_t p = TERN_PRIO_LEVELS - 1; p >= 0; p--) {
        if (!(ready_mask & level_bit(p)))
            continue;
        for (thread *t = ready[p].head; t; t = t->next)
            if (accept(t))
                return t;
    }
    return NULL;
}

/* A ready thread of t's level or above (above: it is about to preempt t). */
HOT bool peer_ready(const thread *t)
{
    return t->prio >= 0 && ready_mask && top_level(ready_mask) >= t->prio;
}

/* --- Switching ------------------------------------------------------------ */

void thread_request_switch(void)
{
    if (started)
        port_thread_switch();
}

/* After any change of readiness: ask for a switch only when one is due, so
 * the port does no work when nothing changed. */
static void reschedule(void)
{
    if (!started)
        return;
    if (current->state != T_RUNNING) {
        port_thread_switch();
        return;
    }
    thread *cand = tpolicy_pick();
    if (cand && (current == &idle || tpolicy_preempts(current, cand)))
        port_thread_switch();
}

/* The slice alarm is armed only while a thread of the running level waits
 * (tickless). Switching between threads of one level leaves it armed when
 * it goes off no later than the incoming thread's quantum ends: re-arming
 * costs a list insertion and a clock read on every switch, an early
 * alarm only a slice_ends that re-arms it for the running thread. */
static uint32_t slice_due; /* low 32 bits of the armed deadline */

static __attribute__((noinline)) void slice_set(thread_stamp due)
{
#if THREAD_WIDE_CPU
    tern_time deadline = due; /* a past one goes off at once */
#else
    (void)due; /* only its low 32 bits: extended from a clock read */
    tern_time now = tern_now();
    uint32_t used = (uint32_t)now - current->run_start;
    tern_time deadline = now + (used < current->quantum_left ? current->quantum_left - used : 0);
#endif
    slice_due = (uint32_t)deadline;
    tern_alarm_set(&slice_alarm, deadline, 0);
}

HOT void arm_slice(void)
{
    if (current != &idle && peer_ready(current)) {
        thread_stamp due = current->run_start + current->quantum_left;
        if (!slice_alarm.armed || (int32_t)(slice_due - (uint32_t)due) > 0)
            slice_set(due);
    } else if (slice_alarm.armed) {
        tern_alarm_cancel(&slice_alarm);
    }
}

static void make_ready(thread *t)
{
    ready_push(t, false);
    if (started && current != &idle && t->prio == current->prio && !slice_alarm.armed)
        arm_slice();
    reschedule();
}

/* Interrupt context: the running thread's quantum is over (or the alarm
 * was left armed for an earlier thread of the level: re-armed for this
 * one). It is preempted only when a peer waits and the policy agrees;
 * otherwise it gets a new quantum and runs on. */
static void slice_ends(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    if (!started || current == &idle)
        return;
    tern_time now = tern_now();
    if ((uint32_t)now - (uint32_t)current->run_start < current->quantum_left) {
        arm_slice();
        return;
    }
    if (peer_ready(current) && tpolicy_slice_preempts(current)) {
        current->expired = 1;
        thread_stats.slices++;
        port_thread_switch();
        return;
    }
    current->run_start = (thread_stamp)now; /* long or short stays as it was dispatched */
    current->quantum_left = quantum;
    arm_slice();
}

void thread_stack_overflow(const thread *t, const void *sp)
{
    tern_printf("\ntern: stack overflow in task '%s' (id %u): stack %lu bytes at %08lx, "
                "sp=%08lx\n",
                t->task == TERN_NO_TASK ? "idle" : tern_task_name(t->task), t->task,
                (unsigned long)t->stack_size, (unsigned long)(uintptr_t)t->stack_lo,
                (unsigned long)(uintptr_t)sp);
    port_exit(TERN_EXIT_STACK_OVERFLOW);
}

/* On every switch: the saved stack pointer must lie above the guard, and
 * the guard's lowest and highest words must still hold their paint (a
 * frame may have jumped past the pointer check; on Cortex-M the MPU also
 * stops the first write into the guard). */
static void check_stack(const thread *t, const void *sp)
{
    const uint32_t *g = (const uint32_t *)(const void *)t->stack_lo;
    if ((const uint8_t *)sp < t->stack_lo + TERN_STACK_GUARD || g[0] != STACK_PAINT ||
        g[TERN_STACK_GUARD / 4 - 1] != STACK_PAINT)
        thread_stack_overflow(t, sp);
}

/* A thread other than idle leaves the CPU at `now`: what is left of its
 * quantum (seed 003 5.3). A thread that blocks keeps the rest and counts as
 * short (alpha) when it comes back; one preempted while ready gets a full
 * quantum (beta). 32-bit deltas: a run of 2^32 ticks or more (171 s at
 * mps2-an385's 25 MHz) is taken modulo 2^32, which only moves where in its
 * quantum such a thread stands when it blocks. */
HOT void switch_out(thread *t, thread_stamp now, bool still_ready)
{
    if (still_ready || t->expired) {
        t->quantum_left = quantum;
        return;
    }
    uint32_t used = (uint32_t)now - (uint32_t)t->run_start;
    if (used < t->quantum_left) {
        t->quantum_left -= used;
    } else { /* it ran on alone past its quantum */
        uint32_t over = (used - t->quantum_left) % quantum;
        t->quantum_left = over ? quantum - over : quantum;
    }
}

/* Called by the port's switch routine, interrupts disabled, with the
 * running thread's saved stack pointer; returns the stack pointer of the
 * thread to run. */
void *thread_switch(void *sp)
{
    thread *prev = current;
    prev->sp = sp;
    check_stack(prev, sp);
    bool still_ready = prev->state == T_RUNNING && prev != &idle;
    thread *cand = tpolicy_pick();
    if (still_ready) {
        bool go = cand && (prev->expired ? cand->prio >= prev->prio : tpolicy_preempts(prev, cand));
        if (!go) {
            if (prev->expired) { /* its peer left meanwhile: a new quantum */
                prev->expired = 0;
                prev->run_start = clock_stamp();
                prev->quantum_left = quantum;
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
    current = next;
    arm_slice();

    tpolicy_switched(prev, next);
    if (prev == &idle) {
        thread_stats.from_idle++;
    } else if (still_ready) {
        thread_stats.involuntary++;
        tern_counters_.preemptions++;
    } else {
        thread_stats.voluntary++;
    }
    tern_counters_.ctx_switches++;
    if (next != &idle)
        thread_stats.switched_in[next->task]++;
    tern_trace(TERN_EV_CTX_SWITCH, prev->task, next->task);
    port_thread_guard(next->stack_lo, TERN_STACK_GUARD);
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
        tern_printf("tern: no room for the %lu-byte stack of task '%s' (%lu of %lu pool "
                    "bytes used, minimum %lu)\n",
                    (unsigned long)size, tern_tasks[task].desc->name, (unsigned long)pool_used,
                    (unsigned long)thread_stack_pool_bytes, (unsigned long)(4 * TERN_STACK_GUARD));
        return NULL;
    }
    if (threads_used >= thread_table_len) {
        tern_printf("tern: no thread for task '%s' (all %u slots used)\n",
                    tern_tasks[task].desc->name, (unsigned)thread_table_len);
        return NULL;
    }
    thread *t = &thread_table[threads_used++];
    memset(t, 0, sizeof *t);
    t->stack_lo = (uint8_t *)thread_stack_pool + pool_used;
    t->stack_size = size;
    pool_used += size;
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
    current = &idle;
    started = true;
    tpolicy_start();
    port_thread_guard(idle.stack_lo, TERN_STACK_GUARD);
    if (ready_mask)
        port_thread_switch(); /* taken as soon as idle enables interrupts */
    port_thread_start(idle.stack_lo + idle.stack_size, idle_entry, NULL);
}

/* --- Blocking ------------------------------------------------------------ */

/* Mark the current thread blocked in `state` and request the switch. The
 * switch itself happens when the caller restores interrupts (enabled:
 * checked by may_block), so nothing between block() and that restore may
 * assume the thread has already been woken. */
static void block(uint8_t state)
{
    current->state = state;
    port_thread_switch();
}

/* Callers: a thread may block only with interrupts enabled, outside any
 * interrupt handler and not as idle. */
static bool may_block(tern_irq_state s)
{
    return started && s == 0 && !sched_in_isr() && current != &idle;
}

void mailbox_put(thread *t, tern_msg *m)
{
    m->next = NULL;
    if (t->mbox_tail)
        t->mbox_tail->next = m;
    else
        t->mbox_head = m;
    t->mbox_tail = m;
    if (t->state == T_RECV)
        make_ready(t);
}

tern_msg *thread_receive(void)
{
    for (;;) {
        tern_irq_state s = port_irq_save();
        thread *t = current;
        tern_msg *m = t->mbox_head;
        if (m) {
            t->mbox_head = m->next;
            if (!t->mbox_head)
                t->mbox_tail = NULL;
            m->next = NULL;
            tern_counters_.queue_depth--;
            port_irq_restore(s);
            return m;
        }
        block(T_RECV);
        port_irq_restore(s);
    }
}

void thread_exit(void)
{
    (void)port_irq_save();
    if (slice_alarm.armed)
        tern_alarm_cancel(&slice_alarm);
    block(T_DEAD);
    port_irq_enable();
    for (;;) /* never scheduled again */
        ;
}

tern_status tern_yield(void)
{
    tern_irq_state s = port_irq_save();
    if (!may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    if (ready[current->prio].head) { /* a peer waits: go behind it */
        ready_push(current, false);
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
        make_ready(t);
}

tern_status tern_sleep(tern_time ticks)
{
    tern_irq_state s = port_irq_save();
    if (!may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    thread *t = current;
    tern_alarm_init(&t->wake, sleep_ends, t);
    tern_alarm_set(&t->wake, tern_now() + ticks, 0);
    block(T_SLEEP);
    port_irq_restore(s);
    return TERN_OK;
}

int tern_thread_priority(void)
{
    if (!started || sched_in_isr() || current == &idle)
        return -1;
    return current->prio;
}

bool tern_thread_short(void)
{
    return tern_thread_priority() >= 0 && !current->long_run;
}

/* --- Wait lists: highest priority first, then oldest ------------------------ */

static void wait_insert(thread **list, thread *t)
{
    thread **pp = list;
    while (*pp && (*pp)->prio >= t->prio)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    t->wait_list = list;
}

static thread *wait_pop(thread **list)
{
    thread *t = *list;
    if (t) {
        *list = t->next;
        t->next = NULL;
        t->wait_list = NULL;
    }
    return t;
}

static void wait_remove(thread *t)
{
    thread **list = t->wait_list;
    for (thread **pp = list; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    t->next = NULL;
    t->wait_list = NULL;
}

/* --- Semaphores ------------------------------------------------------------- */

void tern_sem_init(tern_sem *sem, uint16_t count, uint16_t max)
{
    sem->waiters = NULL;
    sem->max = max ? max : 1;
    sem->count = count < sem->max ? count : sem->max;
}

tern_status tern_sem_try_take(tern_sem *sem)
{
    tern_irq_state s = port_irq_save();
    tern_status st = TERN_ESTATE;
    if (sem->count) {
        sem->count--;
        st = TERN_OK;
    }
    port_irq_restore(s);
    return st;
}

tern_status tern_sem_take(tern_sem *sem)
{
    tern_irq_state s = port_irq_save();
    if (sem->count) {
        sem->count--;
        port_irq_restore(s);
        return TERN_OK;
    }
    if (!may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    wait_insert(&sem->waiters, current);
    block(T_SEM); /* give hands the unit over: nothing to take on return */
    port_irq_restore(s);
    return TERN_OK;
}

tern_status tern_sem_give(tern_sem *sem)
{
    tern_irq_state s = port_irq_save();
    tern_status st = TERN_OK;
    thread *t = wait_pop(&sem->waiters);
    if (t)
        make_ready(t);
    else if (sem->count < sem->max)
        sem->count++;
    else
        st = TERN_EFULL;
    port_irq_restore(s);
    return st;
}

/* --- Mutex with priority inheritance ------------------------------------------ */

void tern_mutex_init(tern_mutex *m) { memset(m, 0, sizeof *m); }

/* Give t the effective priority p, moving it in whatever queue it is in;
 * follow the chain when t itself waits for a mutex. */
static void set_priority(thread *t, int8_t p)
{
    while (t && t->prio != p) {
        if (t->state == T_READY) {
            ready_remove(t);
            t->prio = p;
            ready_push(t, true);
            return;
        }
        t->prio = p;
        if (t->wait_list) {
            thread **list = t->wait_list;
            wait_remove(t);
            wait_insert(list, t);
        }
        if (t->state != T_MUTEX)
            return;
        thread *owner = t->blocked_on->owner;
        if (!owner || owner->prio >= p)
            return;
        t = owner;
    }
}

/* What t inherits: the best waiter of any mutex it holds, or its own. */
static int8_t inherited_priority(const thread *t)
{
    int8_t p = t->base_prio;
    for (const tern_mutex *m = t->held; m; m = m->next_held)
        if (m->waiters && m->waiters->prio > p)
            p = m->waiters->prio;
    return p;
}

tern_status tern_mutex_lock(tern_mutex *m)
{
    tern_irq_state s = port_irq_save();
    if (!may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    thread *self = current;
    if (m->owner == self) {
        m->depth++;
    } else if (!m->owner) {
        m->owner = self;
        m->depth = 1;
        m->next_held = self->held;
        self->held = m;
    } else {
        wait_insert(&m->waiters, self);
        self->blocked_on = m;
        if (m->owner->prio < self->prio)
            set_priority(m->owner, self->prio);
        block(T_MUTEX); /* the switch happens at the restore below; unlock
                         * makes us the owner and clears blocked_on */
    }
    port_irq_restore(s);
    return TERN_OK;
}

tern_status tern_mutex_unlock(tern_mutex *m)
{
    tern_irq_state s = port_irq_save();
    thread *self = current;
    if (!started || sched_in_isr() || m->owner != self) {
        port_irq_restore(s);
        return TERN_EOWNER;
    }
    if (--m->depth) {
        port_irq_restore(s);
        return TERN_OK;
    }
    for (tern_mutex **pp = &self->held; *pp; pp = &(*pp)->next_held) {
        if (*pp == m) {
            *pp = m->next_held;
            break;
        }
    }
    m->next_held = NULL;
    thread *t = wait_pop(&m->waiters);
    m->owner = t;
    if (t) {
        t->blocked_on = NULL;
        m->depth = 1;
        m->next_held = t->held;
        t->held = m;
        t->prio = inherited_priority(t);
        make_ready(t);
    }
    int8_t lent = self->prio;
    self->prio = inherited_priority(self); /* drop what this mutex lent */
    if (self->prio < lent)
        tpolicy_level_dropped();
    reschedule();
    port_irq_restore(s);
    return TERN_OK;
}

/* --- Statistics ------------------------------------------------------------- */

static uint32_t stack_depth(const thread *t)
{
    const uint32_t *p = (const uint32_t *)(const void *)t->stack_lo;
    const uint32_t *end = (const uint32_t *)(const void *)(t->stack_lo + t->stack_size);
    while (p < end && *p == STACK_PAINT)
        p++;
    return (uint32_t)((const uint8_t *)end - (const uint8_t *)p);
}

const tern_thread_stats *tern_thread_get_stats(void)
{
    for (int i = 0; i < TERN_MAX_TASKS; i++)
        thread_stats.stack_bytes[i] = task_threads[i] ? stack_depth(task_threads[i]) : 0;
    return &thread_stats;
}
