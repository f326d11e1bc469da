/* The ready queues (thread_ready.c) for the thread scheduler's files: one
 * FIFO per priority level and the mask of non-empty levels. Pushing and
 * removing are defined here, static, for thread.c alone: called within
 * its unit, the compiler keeps the switch path's values in registers
 * across them (as a call into another unit does not let it: 3 to 15
 * instructions more per switch on Cortex-M3). */
#ifndef TERN_KERNEL_THREAD_READY_H
#define TERN_KERNEL_THREAD_READY_H

#include "thread.h"

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

extern ready_queue ready[TERN_PRIO_LEVELS]; /* one FIFO per level */
extern level_mask ready_mask;               /* bit k: level k has a ready thread */
#if !THREAD_WIDE_CPU /* a shift by a variable count is a loop: look the bit up */
extern const level_mask level_bits[TERN_PRIO_LEVELS];
#endif

_Static_assert(TERN_PRIO_LEVELS <= 32, "level_mask has at most 32 bits");

/* The highest set bit of a non-zero mask. */
THREAD_HOT int8_t top_level(level_mask m)
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

void ready_reset(void);

THREAD_HOT level_mask level_bit(int8_t p)
{
#if THREAD_WIDE_CPU
    return (level_mask)((level_mask)1 << p);
#else
    return level_bits[p];
#endif
}

/* A ready thread of t's level or above (above: it is about to preempt t):
 * some bit at t's level or higher is set, which is one comparison of the
 * mask, not the top level's search. */
THREAD_HOT bool peer_ready(const thread *t)
{
    return t->prio >= 0 && ready_mask >= level_bit(t->prio);
}

/* static, not inline: the compiler decides as it did when they were
 * thread.c's own (out of line); unused: thread_ready.c does without. On
 * a 32-bit CPU inline: the call saved and moved registers around a few
 * stores, ~5 instructions of each of a switch's two queue operations
 * (issue 17); the AVR keeps its image. */
#if THREAD_WIDE_CPU
#define READY_OP static inline __attribute__((always_inline, unused))
#else
#define READY_OP static __attribute__((unused))
#endif

/* Queue t at the tail of its level (at the head: it resumes first). */
READY_OP void ready_push(thread *t, bool at_head)
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

/* Take t out of its level's queue; a no-op when t is not queued. */
READY_OP void ready_remove(thread *t)
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

#endif
