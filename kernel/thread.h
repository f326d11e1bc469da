/* Kernel-internal side of the thread models: the thread object, the
 * scheduler's entry points for the message layer (sched_threads.c) and the
 * policy hooks (policy_threads.c, policy_adaptive.c), and what an arch
 * port implements to switch contexts. */
#ifndef TERN_KERNEL_THREAD_H
#define TERN_KERNEL_THREAD_H

#include <limits.h>

#include "kernel.h"
#include "tern/thread.h"

/* A CPU whose int has 32 bits (Cortex-M) adds 64-bit numbers, shifts by a
 * variable count and counts leading zeros in an instruction or two; an
 * 8-bit one (the AVR: 16-bit int) pays a loop or a libgcc call for each,
 * so the switch path takes other roads there (thread.c). */
#if UINT_MAX >= 0xffffffffu
#define THREAD_WIDE_CPU 1
#else
#define THREAD_WIDE_CPU 0
#endif

/* The clock's low 32 bits when a thread got the CPU: all the quantum
 * arithmetic needs (32-bit deltas), and on a 32-bit counter the raw count,
 * read without extending it to 64 bits on every switch; setting the slice
 * alarm, rarer than a switch, reads the whole clock. */
typedef uint32_t thread_stamp;

/* The Cortex-M port makes the running thread's guard read-only with the
 * MPU (context_cm.c), so the first write into it faults; TERN_MPU_GUARD=0
 * builds without (tests/target/apps/overflow). The AVR has no MPU. */
#ifndef TERN_MPU_GUARD
#if defined(__arm__)
#define TERN_MPU_GUARD 1
#else
#define TERN_MPU_GUARD 0
#endif
#endif

typedef enum {
    T_READY = 0, /* in a ready queue */
    T_RUNNING,   /* the current thread */
    T_RECV,      /* blocked in receive: mailbox empty */
    T_SEM,       /* blocked on a semaphore */
    T_MUTEX,     /* blocked on a mutex */
    T_SLEEP,     /* tern_sleep */
    T_DEAD,      /* its task was finalized */
} thread_state;

typedef struct thread {
    /* the switch path's fields first: small offsets load in one
     * instruction on the AVR */
    void *sp;              /* saved stack pointer while switched out */
    struct thread *next;   /* ready queue or wait list */
    uint8_t *stack_lo;     /* lowest byte: the guard starts here */
    int8_t prio;           /* effective: base or inherited; idle = -1 */
    uint8_t state;         /* thread_state */
    uint8_t task;          /* task id, TERN_NO_TASK for idle */
    uint8_t expired;       /* its quantum ran out with a peer waiting */
    uint8_t long_run;      /* holds a full quantum: got the CPU with one, or
                              was given a fresh one while running (seed 003 beta) */
    int8_t base_prio;
    thread_stamp run_start; /* the clock when it last got the CPU */
    uint32_t quantum_left; /* ticks of its quantum still unused */
    uint32_t stack_size;
    tern_msg *mbox_head, *mbox_tail; /* messages for the task, arrival order */
    tern_mutex *held;      /* mutexes it owns (for inheritance) */
    tern_mutex *blocked_on;
    void *wait_list;       /* the list (thread **) it waits in, if any */
    tern_alarm wake;       /* tern_sleep */
} thread;

/* Scheduler (thread.c); interrupts disabled unless said otherwise. */
void threads_reset(void);
thread *thread_create(tern_task_id task, uint32_t stack_size, void (*entry)(void *),
                      void *arg);
thread *thread_of(tern_task_id task);
thread *thread_current(void);
bool threads_started(void);
bool threads_any_ready(void); /* a thread other than idle could run */
/* The highest priority among the running thread (if it still runs) and the
 * ready ones: the level a thread holds or is about to take (hybrid's
 * dispatch floor); TERN_LEVEL_IDLE when only idle could run. */
int8_t threads_level(void);
uint32_t threads_pool_used(void); /* stack pool bytes handed out so far */
/* The stack pool every thread_create takes from, defined by the model's
 * message layer (sched_threads.c: room for every task; sched_hybrid.c: only
 * for the flagged ones), aligned to TERN_STACK_GUARD and, where it is a
 * static array, a multiple of it in size (stacks are handed out from its
 * top, and the MPU guard wants each one aligned). */
extern uint64_t thread_stack_pool[];
extern const uint32_t thread_stack_pool_bytes;
/* The idle thread's stack, also the message layer's (TERN_IDLE_STACK in
 * the thread models; hybrid's idle runs no handler, interrupts use the
 * main stack). */
extern uint64_t thread_idle_stack[];
extern const uint32_t thread_idle_stack_bytes;
/* The thread objects, one per thread task, taken in creation order; also
 * defined by the message layer (threads: TERN_MAX_TASKS of them). */
extern struct thread thread_table[];
extern const uint8_t thread_table_len;
_Noreturn void threads_start(void (*idle_entry)(void *)); /* interrupts enabled */
void mailbox_put(thread *t, tern_msg *m);
tern_msg *thread_receive(void); /* blocks; interrupts enabled, returns the same way */
_Noreturn void thread_exit(void);
/* Report an overflow of t's stack (sp: where it was found) and stop with
 * TERN_EXIT_STACK_OVERFLOW. */
_Noreturn void thread_stack_overflow(const thread *t, const void *sp);

/* Policy hooks (policy_threads.c / policy_adaptive.c). */
void tpolicy_reset(void);
void tpolicy_start(void);
/* A switch from prev to next has just been made (either may be idle). */
void tpolicy_switched(const thread *prev, const thread *next);
/* The ready thread to run next, not yet removed; NULL if none. */
thread *tpolicy_pick(void);
/* May ready thread `cand` take the CPU from running thread `run` now?
 * Always when cand's level is above run's (thread_make_ready wakes such a
 * thread without asking). */
bool tpolicy_preempts(const thread *run, const thread *cand);
/* `run` used its quantum and a peer is ready: preempt it? */
bool tpolicy_slice_preempts(const thread *run);
/* The running thread's priority fell without a switch (a mutex it unlocked
 * returned the priority it had lent). */
void tpolicy_level_dropped(void);

/* hybrid (sched_hybrid.c): the thread level may have dropped; pend the
 * vector of the highest run-to-completion message now allowed. */
void sched_hybrid_level_dropped(void);

/* For the policies: ready queues and the quantum. */
thread *ready_top(void); /* the thread at the head of the highest ready level */
thread *ready_first(bool (*accept)(const thread *t)); /* the first one accept takes */
uint32_t thread_quantum(void); /* ticks */
void thread_request_switch(void);
extern tern_thread_stats thread_stats;

/* --- What an arch port implements (arch/<cpu>/context_*.c) -------------
 * A thread's context lives on its own stack. The port builds the first
 * frame, starts the first thread, and performs a switch when asked: it saves
 * the running thread's registers, calls thread_switch(sp), and restores the
 * registers from the stack pointer it returns. A requested switch must wait
 * until interrupts are enabled and no interrupt handler is running
 * (Cortex-M: PendSV at the lowest priority; AVR: at the outermost interrupt
 * exit and when a critical section ends). */
void *port_thread_init(uint8_t *stack_lo, uint32_t size, void (*entry)(void *), void *arg);
_Noreturn void port_thread_start(uint8_t *stack_top, void (*entry)(void *), void *arg);
void port_thread_switch(void);
/* The outermost interrupt handler is about to return (interrupts still
 * disabled): a port that defers switches in software takes a requested
 * one here. Optional: a weak no-op by default (thread_task.h). */
void port_thread_isr_exit(void);
/* The thread whose stack starts at stack_lo is about to run: protect its
 * TERN_STACK_GUARD guard bytes if the CPU can (MPU); a no-op otherwise.
 * Called on every switch, and once before port_thread_start. */
void port_thread_guard(uint8_t *stack_lo);
/* The port's switch routine calls it with interrupts disabled. */
void *thread_switch(void *sp);

/* Shared by the scheduler's files (thread.c, thread_ready.c, thread_sync.c,
 * thread_stats.c). */
#define STACK_PAINT 0x5453544bu /* "KTST": an unused stack word */
#define THREAD_HOT static inline __attribute__((always_inline)) /* -Os would call it */
extern thread *thread_running; /* idle when no task's thread runs */
extern bool threads_live;      /* threads_start has run */
/* Make t ready and request a switch if it is due now. */
void thread_make_ready(thread *t);
/* Ready thread t takes priority prio, at the head of that level (it was
 * already waiting). */
void thread_requeue(thread *t, int8_t prio);
/* After any change of readiness: request a switch only when one is due. */
void thread_reschedule(void);
/* A thread may block only with interrupts enabled (s == 0), outside any
 * interrupt handler and not as idle (the one thread of level -1). Inline:
 * every blocking call's first test, one sched_in_isr and no call of its
 * own (tern_yield's whole cost is a few instructions more). */
THREAD_HOT bool thread_may_block(tern_irq_state s)
{
    return threads_live && s == 0 && !sched_in_isr() && thread_running->prio >= 0;
}
/* Mark the running thread (self) blocked in `state` and request the switch. The
 * switch itself happens when the caller restores interrupts (enabled:
 * checked by thread_may_block), so nothing between thread_block() and that
 * restore may assume the thread has already been woken. */
static inline void thread_block(thread *self, uint8_t state)
{
    self->state = state;
    port_thread_switch();
}

#endif
