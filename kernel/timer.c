/* Tickless timers: every alarm (and every task timer, which is an alarm
 * that posts to TIMEOUTk) sits in one list sorted by absolute deadline, and
 * the port's single one-shot is programmed for the head. Periodic alarms
 * advance from their previous deadline, never from "now", so they do not
 * drift however late an interrupt is served. */
#include <stddef.h>
#include <string.h>

#include "kernel.h"
#include "time64.h"

static tern_alarm *alarms; /* sorted by deadline, then insertion order */
#if defined(__AVR__)
typedef uint32_t timer_ticks;
#else
typedef tern_time timer_ticks;
/* Ticks from program()'s clock read to the moment the hardware one-shot
 * starts counting: programmed that much shorter, the deadline interrupt
 * comes at the deadline instead of that late. (The AVR port is given the
 * deadline itself, a counter value: no lag.) */
static timer_ticks lag;
#endif
/* Half a counter wrap: the furthest a deadline is ever programmed. A
 * constant on the AVR, whose boards all count 32 bits (avr_board.c). */
#if defined(__AVR__)
#define horizon (UINT32_C(1) << 31)
#else
static timer_ticks horizon;
#endif
/* The hardware one-shot is set for the current head: the clock interrupt
 * need not program it again after a callback re-armed its alarm. */
static bool programmed;

static void program(void);

#if !defined(__AVR__)
/* The lag, measured once: the ticks of a program() bracketed by two
 * clock reads, minus two reads (each bracket holds at most one read's
 * worth besides the lag), so it is never over-estimated and a deadline
 * never comes early. Timed with a probe alarm at the head, half the
 * horizon out: the branch that programs a real deadline, not the shorter
 * one of an empty list. */
static void measure_lag(void)
{
    tern_alarm probe;
    tern_alarm_init(&probe, NULL, NULL);
    probe.deadline = tern_now() + horizon / 2;
    alarms = &probe;
    lag = 0;
    tern_time t0 = tern_now();
    program();
    tern_time t1 = tern_now();
    tern_time pair = tern_now() - t1;
    port_deadline_cancel();
    alarms = NULL;
    lag = t1 - t0 > 2 * pair ? (timer_ticks)(t1 - t0 - 2 * pair) : 0;
}
#endif

void timer_reset(void)
{
#if !defined(__AVR__)
    horizon = (timer_ticks)1 << (TERN_COUNTER_BITS - 1);
    measure_lag();
#endif
}

tern_time timer_next_deadline(void) { return alarms ? alarms->deadline : UINT64_MAX; }

/* Program the hardware for the head as seen at `now` (a fresh clock
 * read), at most half a wrap ahead so the clock extension always sees
 * every wrap. */
#if defined(__AVR__)
/* On the 8-bit CPU in 32-bit steps on the deadline's halves, read in
 * place. A deadline less than the horizon ahead of `now` goes to the port
 * as what it is, a value of the 32-bit counter (the clock's low half): the
 * port compares it with the counter it reads anyway, so `now` may be a
 * little old (the clock interrupt's, after callbacks ran) and no lag needs
 * subtracting. */

/* The head's deadline as seen at `now`, in general: the 64-bit
 * difference on 32-bit halves. Needed only when the high halves differ
 * (near a wrap of the low half, once per 2^32 ticks). */
static __attribute__((noinline)) void program_across(tern_time now)
{
    const tern_alarm *a = alarms;
    uint32_t nl = (uint32_t)now, nh = t64_hi(now);
    uint32_t dl = t64_lo_at(&a->deadline), dh = t64_hi_at(&a->deadline);
    uint32_t at = nl + horizon;
    /* passed as the due test sees it (unsigned): a deadline more than
     * 2^63 ahead is not "passed", which would fire the interrupt at once
     * and again, the alarm never due */
    if (dh < nh || (dh == nh && dl < nl))
        at = nl; /* the port fires at once */
    else if (dh - nh - (dl < nl) == 0 && dl - nl < horizon)
        at = dl;
    port_deadline_at(at);
}

_Static_assert(offsetof(tern_alarm, deadline) == 2, "program_at reads the deadline at offset 2");
_Static_assert(horizon == UINT32_C(0x80000000), "program_at adds the horizon to bit 31");

/* The common case in assembly: avr-gcc keeps the low halves, their
 * difference and two pointers live at once and saves six registers around
 * them (110 cycles; this takes ~45). `now` comes in r18..r25 (as
 * tern_now() returns it: no stack frame in program()). With the high
 * halves equal, one compare of the low halves gives both answers: C, the
 * deadline has passed (the port is given `now`, which has passed too, and
 * fires at once); N, bit 31 of the difference, it is a horizon or more
 * away. */
static __attribute__((naked, noinline)) void program_at(tern_time now)
{
    (void)now;
    __asm__ volatile("ldi r30, 1\n\t"
                     "sts %[programmed], r30\n\t"
                     "lds r26, %[alarms]\n\t"  /* X = the head */
                     "lds r27, %[alarms]+1\n\t"
                     "sbiw r26, 0\n\t"
                     "breq 2f\n\t"             /* none: the horizon */
                     "adiw r26, 6\n\t"         /* its deadline's high half */
                     "ld __tmp_reg__, X+\n\t"  /* against now's, r22..r25 */
                     "cp __tmp_reg__, r22\n\t"
                     "ld __tmp_reg__, X+\n\t"
                     "cpc __tmp_reg__, r23\n\t"
                     "ld __tmp_reg__, X+\n\t"
                     "cpc __tmp_reg__, r24\n\t"
                     "ld __tmp_reg__, X+\n\t"
                     "cpc __tmp_reg__, r25\n\t"
                     "brne 4f\n\t"
                     "sbiw r26, 8\n\t"         /* the low half, into r22..r25: */
                     "ld r22, X+\n\t"          /* port_deadline_at's argument */
                     "ld r23, X+\n\t"
                     "ld r24, X+\n\t"
                     "ld r25, X\n\t"
                     "cp r22, r18\n\t"         /* deadline - now */
                     "cpc r23, r19\n\t"
                     "cpc r24, r20\n\t"
                     "cpc r25, r21\n\t"
                     "brlo 3f\n\t"             /* passed: now */
                     "brmi 2f\n\t"             /* a horizon or more: now + horizon */
                     "jmp port_deadline_at\n"   /* the deadline */
                     "2:\n\t"
                     "subi r21, 0x80\n"         /* + 2^31 */
                     "3:\n\t"
                     "movw r22, r18\n\t"
                     "movw r24, r20\n\t"
                     "jmp port_deadline_at\n"
                     "4:\n\t"
                     "jmp %x[across]\n"         /* now still in r18..r25 */
                     :
                     : [programmed] "i"(&programmed), [alarms] "i"(&alarms),
                       [across] "i"(program_across)
                     : "memory"); /* it writes `programmed`, reads `alarms` */
}
#else
static void program_at(tern_time now)
{
    tern_time delta = horizon;
    if (alarms && alarms->deadline < now + delta)
        delta = alarms->deadline > now + lag ? alarms->deadline - now - lag : 1;
    port_deadline_set((uint32_t)delta);
    programmed = true;
}
#endif

static void program(void) { program_at(tern_now()); }

static void unlink_alarm(tern_alarm *a)
{
    for (tern_alarm **pp = &alarms; *pp; pp = &(*pp)->next) {
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    }
    a->armed = 0;
    programmed = false;
}

/* tern_alarm.armed: non-zero while in the list; PERIODIC, it has a
 * period, so that the clock interrupt tests one byte, not eight. */
#define ARMED 1
#define PERIODIC 2

/* Does a's deadline come before b's? On the AVR on 32-bit halves read in
 * place (by value, two 64-bit deadlines took avr-gcc 18 saved registers
 * and a stack frame). */
static inline __attribute__((always_inline)) bool before(const tern_alarm *a, const tern_alarm *b)
{
#if defined(__AVR__)
    uint32_t ah = t64_hi_at(&a->deadline), bh = t64_hi_at(&b->deadline);
    if (ah != bh)
        return ah < bh;
    return t64_lo_at(&a->deadline) < t64_lo_at(&b->deadline);
#else
    return a->deadline < b->deadline;
#endif
}

/* Into the list, after every alarm due no later, armed as `armed` says. */
static void insert(tern_alarm *a, uint8_t armed)
{
    tern_alarm **pp = &alarms;
    while (*pp && !before(a, *pp))
        pp = &(*pp)->next;
    a->next = *pp;
    *pp = a;
    a->armed = armed;
    programmed = false;
}

void tern_alarm_init(tern_alarm *a, tern_alarm_fn fn, void *arg)
{
    a->next = NULL;
    a->deadline = 0;
    a->period = 0;
    a->fn = fn;
    a->arg = arg;
    a->armed = 0;
}

/* Into the list for the deadline and period stored in it, out of the
 * list first if it is in, interrupts masked by the caller (s: how to put
 * them back). Out of line, so that tern_alarm_set's 64-bit arguments are
 * stored before any call, not kept across them (on the AVR that saved 16
 * registers). The walk of unlink_alarm does not read them. */
static __attribute__((noinline)) void arm(tern_alarm *a, tern_irq_state s)
{
#if defined(__AVR__)
    bool periodic = (t64_lo_at(&a->period) | t64_hi_at(&a->period)) != 0;
#else
    bool periodic = a->period != 0;
#endif
    if (a->armed)
        unlink_alarm(a);
    insert(a, periodic ? ARMED | PERIODIC : ARMED);
    program();
    port_irq_restore(s);
}

#if defined(TERN_IRQ_STATE_IS_SREG)
_Static_assert(offsetof(tern_alarm, period) == 10, "tern_alarm_set stores the period at offset 10");
_Static_assert(sizeof(tern_irq_state) == 1, "arm's s is one register");

/* In assembly on the AVR (run-to-completion models, whose saved interrupt
 * state is SREG): avr-gcc saves the ten call-saved registers the
 * arguments arrive in (r8..r23) and sets up a frame even when it only
 * stores them. The deadline comes in r16..r23, the period in r8..r15,
 * low byte first. */
__attribute__((naked)) void tern_alarm_set(tern_alarm *a, tern_time deadline, tern_time period)
{
    (void)a, (void)deadline, (void)period;
    __asm__ volatile("movw r30, r24\n\t"
                     "in __tmp_reg__, __SREG__\n\t"
                     "cli\n\t"
                     "std Z+2, r16\n\t"
                     "std Z+3, r17\n\t"
                     "std Z+4, r18\n\t"
                     "std Z+5, r19\n\t"
                     "std Z+6, r20\n\t"
                     "std Z+7, r21\n\t"
                     "std Z+8, r22\n\t"
                     "std Z+9, r23\n\t"
                     "std Z+10, r8\n\t"
                     "std Z+11, r9\n\t"
                     "std Z+12, r10\n\t"
                     "std Z+13, r11\n\t"
                     "std Z+14, r12\n\t"
                     "std Z+15, r13\n\t"
                     "std Z+16, r14\n\t"
                     "std Z+17, r15\n\t"
                     "mov r22, __tmp_reg__\n\t" /* arm's s */
                     "jmp %x[arm]\n"             /* a still in r24:r25 */
                     :
                     : [arm] "i"(arm)
                     : "memory");
}
#else
void tern_alarm_set(tern_alarm *a, tern_time deadline, tern_time period)
{
    tern_irq_state s = port_irq_save();
    a->deadline = deadline;
    a->period = period;
    arm(a, s);
}
#endif

void tern_alarm_cancel(tern_alarm *a)
{
    tern_irq_state s = port_irq_save();
    if (a->armed) {
        unlink_alarm(a);
        program();
    }
    port_irq_restore(s);
}

/* The deadline interrupt: run every alarm that is due, in deadline order.
 * The clock is the costliest part of this path: it is read once, and again
 * after a callback only when another alarm waits. */
#if defined(__AVR__)
/* On the 8-bit CPU, the clock as two 32-bit halves and the alarm's 64-bit
 * fields read in place (a 64-bit value in a struct costs avr-gcc a
 * register file's worth of moves and a libgcc compare). The clock is
 * read once, by the vector: after a callback, the alarms due at that
 * read run; one that came due only since is left to the port, which is
 * given its deadline and fires at once when it has passed
 * (port_deadline_at), so no read is spent on the common case of none. */
static tern_time isr_now; /* the clock at the deadline interrupt */

/* Is alarm a due at isr_now? (The high halves' inequality first: equal,
 * the common case, they are compared once.) */
static inline __attribute__((always_inline)) bool due(const tern_alarm *a)
{
    uint32_t dh = t64_hi_at(&a->deadline), nh = t64_hi_at(&isr_now);
    if (dh != nh)
        return dh < nh;
    return t64_lo_at(&a->deadline) <= t64_lo_at(&isr_now);
}

/* A periodic alarm's next deadline, one period on: out of line, so that
 * the clock interrupt keeps few registers live when none is periodic. */
static __attribute__((noinline)) void rearm(tern_alarm *a)
{
    uint32_t pl = t64_lo_at(&a->period), ph = t64_hi_at(&a->period);
    uint32_t dl = t64_lo_at(&a->deadline) + pl;
    uint32_t dh = t64_hi_at(&a->deadline) + ph + (dl < pl);
    memcpy(&a->deadline, &dl, sizeof dl);
    memcpy((uint8_t *)&a->deadline + 4, &dh, sizeof dh);
    insert(a, ARMED | PERIODIC);
}

static void clock_isr(void)
{
    programmed = false; /* the one-shot that brought us here has fired */
    tern_alarm *a;
    while ((a = alarms) != NULL && due(a)) {
        alarms = a->next; /* unlink_alarm of the head, without the walk */
        uint8_t armed = a->armed;
        a->armed = 0;
        programmed = false; /* a callback may have programmed it for a */
        if (armed & PERIODIC)
            rearm(a);
        a->fn(a, a->arg);
    }
    if (!programmed)
        program_at(isr_now);
}

void tern_clock_isr(void)
{
    isr_now = tern_now();
    clock_isr();
}

/* A vector that read the counter to check its deadline passes that read,
 * interrupts masked since: it is the clock and the wake-up (no second
 * read). */
void tern_clock_vector(uint32_t counter)
{
    clock_at(&isr_now, counter);
    isr_enter_at(&isr_now);
    clock_isr();
    tern_isr_exit();
}
#else
static void clock_isr(tern_time now)
{
    programmed = false; /* the one-shot that brought us here has fired */
    while (alarms && now >= alarms->deadline) {
        tern_alarm *a = alarms;
        unlink_alarm(a);
        if (a->period) {
            a->deadline += a->period;
            insert(a, ARMED | PERIODIC);
        }
        a->fn(a, a->arg);
        if (alarms)
            now = tern_now();
    }
    if (!programmed)
        program_at(now);
}

void tern_clock_isr(void) { clock_isr(tern_now()); }
#endif

static void timer_fired(tern_alarm *a, void *arg)
{
    tern_task_id task = (tern_task_id)(uintptr_t)arg;
    uint8_t k = (uint8_t)(a - tern_tasks[task].timers);
    sched_send(TERN_NO_TASK, task, TERN_PORT_TIMEOUT(k), NULL, 0, 0, false);
}

_Static_assert(offsetof(tern_alarm, period) == offsetof(tern_alarm, deadline) + sizeof(tern_time),
               "timer_arm_at copies the deadline and the period as one");

/* Task's timer k, re-armed in place for t[0] with period t[1]:
 * tern_alarm_set's arm takes a running timer out of the list itself, so
 * the hardware is programmed once. The times come in memory: on the AVR
 * a 64-bit value in registers is saved and moved around by every caller. */
static void timer_arm_at(tern_task_id task, uint8_t k, const tern_time t[2])
{
    tern_alarm *a = &tern_tasks[task].timers[k];
    tern_irq_state s = port_irq_save(); /* a running one may fire meanwhile */
    a->fn = timer_fired;
    a->arg = (void *)(uintptr_t)task;
    memcpy(&a->deadline, t, 2 * sizeof *t);
    arm(a, s);
}

void timer_arm_for(tern_task_id task, uint8_t k, tern_time deadline, tern_time period)
{
    tern_time t[2] = {deadline, period};
    timer_arm_at(task, k, t);
}

/* *t += *x; true if that wrapped past 2^64. Byte by byte on the AVR: the
 * smallest code there (avr-gcc moves a 64-bit operand through eight
 * registers, or calls libgcc), and off the hot paths. */
static __attribute__((noinline)) bool add_over(tern_time *t, const tern_time *x)
{
#if defined(__AVR__)
    uint8_t *p = (uint8_t *)t;
    const uint8_t *q = (const uint8_t *)x;
    uint16_t c = 0;
    for (uint8_t i = 0; i < sizeof *t; i++) {
        c += (uint16_t)p[i] + q[i];
        p[i] = (uint8_t)c;
        c >>= 8;
    }
    return c != 0;
#else
    return __builtin_add_overflow(*t, *x, t);
#endif
}

/* t[0], the delay, becomes the deadline. */
static __attribute__((noinline)) tern_status timer_start(uint8_t k, tern_time t[2])
{
    tern_task_id self = tern_self();
    if (self == TERN_NO_TASK)
        return TERN_ESTATE;
    if ((unsigned)k + 1 > TERN_TIMERS_PER_TASK) /* k >= ..., also when it is 0 */
        return TERN_ERANGE;
    /* A deadline past 2^64 ticks would wrap into the past: the timer
     * would fire at once, and a periodic one re-arm into the past forever
     * inside the clock interrupt. Refused; a running timer k goes on. */
    tern_time now = tern_now();
    if (add_over(&t[0], &now))
        return TERN_ERANGE;
    tern_time next = t[0]; /* the deadline after it */
    if (add_over(&next, &t[1]))
        return TERN_ERANGE;
    timer_arm_at(self, k, t);
    return TERN_OK;
}

tern_status tern_timer_start(uint8_t k, tern_time delay, tern_time period)
{
    tern_time t[2] = {delay, period};
    return timer_start(k, t);
}

tern_status tern_timer_cancel(uint8_t k)
{
    tern_task_id self = tern_self();
    if (self == TERN_NO_TASK)
        return TERN_ESTATE;
    if ((unsigned)k + 1 > TERN_TIMERS_PER_TASK)
        return TERN_ERANGE;
    tern_alarm_cancel(&tern_tasks[self].timers[k]);
    return TERN_OK;
}
