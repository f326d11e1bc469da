/* Blocking services of the thread models (`threads`, `adaptive`): every
 * task is a thread with its own stack that runs `loop { receive; handle }`,
 * so a handler may block. `hybrid` gives a thread only to the tasks flagged
 * TERN_TASK_THREAD; there a run-to-completion handler counts as an
 * interrupt. Only built into those kernels; calling a blocking function
 * from an interrupt, from idle or with interrupts masked returns
 * TERN_ESTATE instead of blocking. */
#ifndef TERN_THREAD_H
#define TERN_THREAD_H

#include "tern/types.h"

#ifndef TERN_THREAD_STACK_DEFAULT
#define TERN_THREAD_STACK_DEFAULT 1024 /* bytes, for a task whose stack_size is 0 */
#endif
#ifndef TERN_THREAD_STACK_POOL
#define TERN_THREAD_STACK_POOL 16384 /* bytes shared by every thread stack */
#endif
#ifndef TERN_IDLE_STACK
#define TERN_IDLE_STACK 1024 /* the idle thread runs the idle hooks and work */
#endif
/* Round-robin quantum between threads of one priority level, in CPU cycles
 * (instructions on QEMU boards): 10 ms of the 4 MHz sensor CPU. */
#ifndef TERN_SLICE_CYCLES
#define TERN_SLICE_CYCLES 40000u
#endif
/* 1: count involuntary switches by cause and by thread (sliced_long,
 * sliced_short, preempted[] below). It costs a few instructions on every
 * involuntary switch, so it is off unless a benchmark asks for it
 * (bench/seed003). */
#ifndef TERN_THREAD_CAUSES
#define TERN_THREAD_CAUSES 0
#endif
/* adaptive (seed 003 5.2): every DELTA quanta a preemption-free period
 * begins, lasting at most PF_QUANTA quanta. */
#ifndef TERN_ADAPTIVE_DELTA
#define TERN_ADAPTIVE_DELTA 100u
#endif
#ifndef TERN_ADAPTIVE_PF_QUANTA
#define TERN_ADAPTIVE_PF_QUANTA TERN_ADAPTIVE_DELTA
#endif
/* Bytes at the bottom of every thread stack that must never be written:
 * checked on every context switch, and an MPU no-write region where the
 * CPU has one. A power of two >= 32 (the smallest MPU region). */
#ifndef TERN_STACK_GUARD
#define TERN_STACK_GUARD 32u
#endif
/* Exit status of a run stopped because a thread overflowed its stack. */
#define TERN_EXIT_STACK_OVERFLOW 4

/* Give up the CPU to the next ready thread of the same priority. */
tern_status tern_yield(void);

/* Block the calling thread for `ticks` board clock ticks. */
tern_status tern_sleep(tern_time ticks);

/* Counting semaphore (a binary one has max 1). give is interrupt-safe and
 * hands the unit to the highest-priority waiter (oldest first among equals). */
typedef struct tern_sem {
    struct thread *waiters;
    uint16_t count, max;
} tern_sem;

void tern_sem_init(tern_sem *s, uint16_t count, uint16_t max);
tern_status tern_sem_take(tern_sem *s);     /* blocks while count is 0 */
tern_status tern_sem_try_take(tern_sem *s); /* TERN_ESTATE when count is 0 */
tern_status tern_sem_give(tern_sem *s);     /* TERN_EFULL when already at max */

/* Mutex with priority inheritance: while a thread of higher priority waits,
 * the owner runs at that priority (transitively through chains of
 * mutexes). Only the owner may unlock (TERN_EOWNER otherwise). */
typedef struct tern_mutex {
    struct thread *owner;
    struct thread *waiters;
    struct tern_mutex *next_held; /* the owner's other mutexes */
    uint16_t depth;               /* recursive locks by the owner */
} tern_mutex;

void tern_mutex_init(tern_mutex *m);
tern_status tern_mutex_lock(tern_mutex *m);
tern_status tern_mutex_unlock(tern_mutex *m);

/* The running thread's effective priority (raised by inheritance), -1 in
 * interrupt or idle. */
int tern_thread_priority(void);

/* True when the running thread got the CPU with part of its quantum
 * already used (seed 003's short process, alpha) and has not been given a
 * fresh one since (the kernel gives it when the quantum's end is checked:
 * a peer of its level waits); false when it holds a full quantum (long,
 * beta), and in interrupt or idle. */
bool tern_thread_short(void);

/* Context switches by kind (tern_counters.ctx_switches is their sum). */
typedef struct {
    uint32_t voluntary;     /* the thread blocked, slept or yielded */
    uint32_t involuntary;   /* preempted while still ready: priority or slice */
    uint32_t from_idle;     /* the idle thread gave way to a woken thread */
    uint32_t slices;        /* quanta that expired with another thread waiting */
#if TERN_THREAD_CAUSES
    /* involuntary switches whose cause was the end of a quantum, by the
     * quantum the thread held (seed 003 5.3): long (beta) or short
     * (alpha); the rest of `involuntary` are priority preemptions and the
     * long threads adaptive preempts when a period begins */
    uint32_t sliced_long;
    uint32_t sliced_short;
#endif
    uint32_t pf_entered;    /* adaptive: preemption-free periods begun */
    uint32_t pf_left;       /* ... and ended */
    uint32_t pf_long_preempted; /* long threads preempted when a period began */
    uint32_t switched_in[TERN_MAX_TASKS]; /* switches that gave each task the CPU */
#if TERN_THREAD_CAUSES
    uint32_t preempted[TERN_MAX_TASKS];   /* involuntary switches that took it away */
#endif
    uint32_t stack_bytes[TERN_MAX_TASKS]; /* deepest use of each task's stack */
} tern_thread_stats;

/* Fills stack_bytes by scanning the painted stacks (a few instructions per
 * unused stack word) and returns the kernel's own statistics: the
 * counters in it are updated in place, so a caller that needs only them
 * may keep the pointer and read them with interrupts masked. */
const tern_thread_stats *tern_thread_get_stats(void);

/* adaptive: true while a preemption-free period runs. */
bool tern_adaptive_in_pf(void);

#endif
