/* Tickless timers: every alarm (and every task timer, which is an alarm
 * that posts to TIMEOUTk) sits in a list sorted by deadline, and the
 * port's single one-shot is programmed for the head, never more than
 * half a counter wrap (the horizon) ahead, so that the clock extension
 * sees every wrap. Periodic alarms advance from their previous deadline,
 * never from "now", so they do not drift however late an interrupt is
 * served.
 *
 * On the 8-bit CPU (the AVR) the hot paths work on the 32-bit tick, the
 * clock's low half (the port's counter itself), never on 64 bits: an
 * alarm due less than the horizon after the clock when it is placed (or
 * less than NEAR_LATE before it) is near: it goes to `alarms`, sorted by
 * the signed 32-bit difference of its deadline's low half from the clock,
 * and the interrupt's due test, the re-arm of a periodic alarm whose
 * period is below the horizon, and the programming of the port read only
 * that low half. Any other alarm is far: it waits in `far`, sorted by the
 * 64-bit deadline. Since the port is programmed at most the horizon ahead,
 * an (intermediate) interrupt comes at least once per horizon, and each
 * programming moves the far alarms that have come within the horizon to
 * the near list (pull_far) before they are due; a far alarm placed long
 * after its deadline runs at the next interrupt (run_far). The 64-bit
 * deadline and period stay in tern_alarm, the public record of the
 * tern_time API; the interrupt adds the period to it on its halves.
 * Exact as long as a near alarm runs less than 2^31 - NEAR_LATE ticks
 * after its deadline (the clock extension already needs a read per wrap:
 * this asks no more). */
#include <stddef.h>
#include <string.h>

#include "kernel.h"
#include "time64.h"

static tern_alarm *alarms; /* sorted by deadline, then insertion order */
/* The hardware one-shot is set for the current head: the clock interrupt
 * need not program it again after a callback re-armed its alarm. */
static bool programmed;

/* tern_alarm.armed: non-zero while in a list; PERIODIC, it has a period,
 * so that the clock interrupt tests one byte, not eight. */
#define ARMED 1
#define PERIODIC 2

static void program_at(const tern_time *now);

/* Program the hardware for the head as seen at a fresh clock read. */
static void program(void)
{
    tern_time now = tern_now();
    program_at(&now);
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

/* The 32-bit tick (above) on the 8-bit CPU; the host's unit tests build
 * it too (-DTERN_TICK32=1, tests/unit/CMakeLists.txt). */
#ifndef TERN_TICK32
#if defined(__AVR__)
#define TERN_TICK32 1
#else
#define TERN_TICK32 0
#endif
#endif

#if TERN_TICK32
/* Half a wrap of the 32-bit counter, the tick (avr_board.c). */
#define horizon (UINT32_C(1) << 31)
_Static_assert(TERN_COUNTER_BITS == 32, "the tick is the 32-bit counter");
/* How long before the clock a deadline may be and still be placed near
 * (below: far, and run at the next interrupt). */
#define NEAR_LATE (UINT32_C(1) << 30)
#define SHORT 4 /* its period is below the horizon: a re-arm stays near */
#define FAR 8   /* in `far` */

static tern_alarm *far; /* sorted by 64-bit deadline, then insertion order */
static tern_time isr_now; /* the clock at the deadline interrupt */

static inline __attribute__((always_inline)) uint32_t low(const tern_alarm *a)
{
    return t64_lo_at(&a->deadline);
}

/* a's deadline less the tick `ref`, signed: exact for a near alarm while
 * ref is the clock's low half at most a little old */
static inline __attribute__((always_inline)) int32_t ahead(const tern_alarm *a, uint32_t ref)
{
    return (int32_t)(low(a) - ref);
}

/* Into the near list, after every alarm due no later (`first`: before
 * those due at the same time, for a far alarm that comes near: they were
 * all armed after it). */
static void insert_near(tern_alarm *a, uint32_t ref, bool first)
{
    int32_t d = ahead(a, ref);
    tern_alarm **pp = &alarms;
    while (*pp && (ahead(*pp, ref) < d || (!first && ahead(*pp, ref) == d)))
        pp = &(*pp)->next;
    a->next = *pp;
    *pp = a;
    programmed = false;
}

/* *d = *x - *y; true if *x < *y. Byte by byte on the AVR: the smallest
 * code for the far list's 64-bit arithmetic, which is off the hot paths
 * (avr-gcc keeps 64-bit values in eight registers each, saved). */
static __attribute__((noinline)) bool sub_at(tern_time *d, const tern_time *x, const tern_time *y)
{
#if defined(__AVR__)
    const uint8_t *p = (const uint8_t *)x, *q = (const uint8_t *)y;
    uint8_t *r = (uint8_t *)d, borrow = 0;
    for (uint8_t i = 0; i < sizeof *d; i++) {
        uint16_t v = (uint16_t)p[i] - q[i] - borrow;
        r[i] = (uint8_t)v;
        borrow = (uint8_t)(v >> 15);
    }
    return borrow;
#else
    *d = *x - *y;
    return *x < *y;
#endif
}

static __attribute__((noinline)) bool lt_at(const tern_time *x, const tern_time *y)
{
    tern_time d;
    return sub_at(&d, x, y);
}

/* Is a near at the clock *now: its deadline less than the horizon after
 * it, and no more than NEAR_LATE before? (The 64-bit difference: its
 * high half is 0, or all ones for a passed deadline.) */
static __attribute__((noinline)) bool is_near(const tern_alarm *a, const tern_time *now)
{
    tern_time d;
    (void)sub_at(&d, &a->deadline, now);
    uint32_t lo = t64_lo_at(&d), hi = t64_hi_at(&d);
    return hi == 0 ? lo < horizon : hi == UINT32_MAX && lo > 0u - NEAR_LATE;
}

/* Out of the list it is in (interrupts masked). */
static void unlink_alarm(tern_alarm *a)
{
    for (tern_alarm **pp = a->armed & FAR ? &far : &alarms; *pp; pp = &(*pp)->next) {
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    }
    a->armed = 0;
    programmed = false;
}

static void probe_far(const tern_time *now);

/* a, its deadline and period stored, into the list it belongs in at the
 * clock *now, flagged. Out of the hot path (tern_alarm_set, a far or long
 * periodic alarm's re-arm). */
static __attribute__((noinline)) void place(tern_alarm *a, const tern_time *now)
{
    uint8_t armed = ARMED;
    uint32_t pl = t64_lo_at(&a->period), ph = t64_hi_at(&a->period);
    if (pl | ph)
        armed |= ph == 0 && pl < horizon ? PERIODIC | SHORT : PERIODIC;
    if (is_near(a, now)) {
        insert_near(a, t64_lo_at(now), false);
        a->armed = armed;
        return;
    }
    tern_alarm **pp = &far;
    while (*pp && !lt_at(&a->deadline, &(*pp)->deadline))
        pp = &(*pp)->next;
    a->next = *pp;
    *pp = a;
    a->armed = armed | FAR;
    probe_far(now);
}

/* The far list's watch: a near alarm of the kernel's own, due a horizon
 * less one tick ahead (the far head, a horizon or more ahead, is then
 * near, or the probe looks again: a wake-up per horizon, as an empty list
 * has for the clock extension), or, for a far head long passed, at once
 * and before every near alarm. The hot paths never look at the far list. */
static tern_alarm probe;

static void probe_fired(tern_alarm *p, void *arg);

/* The watch for the far list at the clock *now, or none. */
static __attribute__((noinline)) void probe_far(const tern_time *now)
{
    if (probe.armed)
        unlink_alarm(&probe);
    if (!far)
        return;
    /* a horizon less one tick on, or NEAR_LATE back (long passed) */
    tern_time step = lt_at(&far->deadline, now) ? (tern_time)0 - NEAR_LATE : horizon - 1;
    probe.deadline = *now;
    (void)add_over(&probe.deadline, &step);
    probe.fn = probe_fired;
    insert_near(&probe, t64_lo_at(now), true);
    probe.armed = ARMED;
}

/* The port's one-shot at the near head's deadline (less than the horizon
 * ahead, or passed: the port fires at once), or the horizon ahead for an
 * intermediate interrupt that keeps the clock extension exact. `now` may
 * be a little old (the clock interrupt's, after callbacks ran): the port
 * compares the deadline with the counter it reads anyway, so no lag
 * needs subtracting. */
static void program_at(const tern_time *now)
{
    programmed = true;
    port_deadline_at(alarms ? low(alarms) : t64_lo_at(now) + horizon);
}

/* (With far alarms, the near head is the probe at the latest.) The probe
 * is the kernel's own watch, not a deadline anyone waits for: at the head,
 * the next is the far head's, so that the idle path still sees nothing due
 * for 2^32 - 1 ticks and may power down (kernel/power.c). */
tern_time timer_next_deadline(void)
{
    if (alarms == &probe && far)
        return far->deadline;
    return alarms ? alarms->deadline : UINT64_MAX;
}

/* A periodic alarm's next deadline, one period on (on halves, in place):
 * out of line, so that the clock interrupt keeps few registers live when
 * none is periodic. A period below the horizon keeps it near: its new
 * deadline is at most that far after the clock. */
static __attribute__((noinline)) void rearm(tern_alarm *a, uint8_t armed)
{
    uint32_t pl = t64_lo_at(&a->period), ph = t64_hi_at(&a->period);
    uint32_t dl = low(a) + pl;
    uint32_t dh = t64_hi_at(&a->deadline) + ph + (dl < pl);
    memcpy(&a->deadline, &dl, sizeof dl);
    memcpy((uint8_t *)&a->deadline + 4, &dh, sizeof dh);
    if (armed & SHORT) {
        insert_near(a, t64_lo_at(&isr_now), false);
        a->armed = armed;
    } else {
        place(a, &isr_now);
    }
}

/* Run alarm a, just taken off its list. */
static inline __attribute__((always_inline)) void fire(tern_alarm *a)
{
    uint8_t armed = a->armed;
    a->armed = 0;
    programmed = false; /* a callback may have programmed it for a */
    if (armed & PERIODIC)
        rearm(a, armed);
    a->fn(a, a->arg);
}

/* The probe's callback: far alarms long passed run now (their deadlines
 * come before every near one's; a re-arm is placed anew, it may be long
 * passed too), those now within the horizon go to the near list (before
 * the near alarms due at the same time: those were all armed after
 * them), and the probe watches the next. */
static void probe_fired(tern_alarm *p, void *arg)
{
    (void)p, (void)arg;
    tern_alarm *a;
    while ((a = far) != NULL && !lt_at(&isr_now, &a->deadline)) {
        far = a->next;
        a->armed &= (uint8_t)~SHORT;
        fire(a);
    }
    while ((a = far) != NULL && is_near(a, &isr_now)) {
        far = a->next;
        a->armed &= (uint8_t)~FAR;
        insert_near(a, t64_lo_at(&isr_now), true);
    }
    probe_far(&isr_now);
}

/* The deadline interrupt: run every alarm due at the clock the vector
 * read, in deadline order; one that came due only since is left to the
 * port, which is given its deadline and fires at once when it has passed
 * (port_deadline_at), so no read is spent on the common case of none. */
static void clock_isr(void)
{
    programmed = false; /* the one-shot that brought us here has fired */
    tern_alarm *a;
    while ((a = alarms) != NULL && ahead(a, t64_lo_at(&isr_now)) <= 0) {
        alarms = a->next; /* unlink_alarm of the head, without the walk */
        fire(a);
    }
    if (!programmed)
        program_at(&isr_now);
}

void tern_clock_isr(void)
{
    isr_now = tern_now();
    clock_isr();
}

#if defined(__AVR__)
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
#endif

void timer_reset(void)
{
    alarms = far = NULL;
    probe.armed = 0;
}

/* Into its list for the deadline and period stored in it, out of the one
 * it is in first, interrupts masked by the caller (s: how to put them
 * back). Out of line, so that tern_alarm_set's 64-bit arguments are
 * stored before any call, not kept across them. */
static __attribute__((noinline)) void arm(tern_alarm *a, tern_irq_state s)
{
    if (a->armed)
        unlink_alarm(a);
    tern_time now = tern_now();
    place(a, &now);
    program_at(&now);
    port_irq_restore(s);
}

#if defined(TERN_IRQ_STATE_IS_SREG)
_Static_assert(offsetof(tern_alarm, deadline) == 2 && offsetof(tern_alarm, period) == 10,
               "tern_alarm_set stores the deadline at offset 2, the period at 10");
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
#endif
#else
/* Half a counter wrap: the furthest a deadline is ever programmed. */
static tern_time horizon;
/* Ticks from program()'s clock read to the moment the hardware one-shot
 * starts counting: programmed that much shorter, the deadline interrupt
 * comes at the deadline instead of that late. */
static tern_time lag;

static void program_at(const tern_time *now)
{
    tern_time delta = horizon;
    if (alarms && alarms->deadline < *now + delta)
        delta = alarms->deadline > *now + lag ? alarms->deadline - *now - lag : 1;
    port_deadline_set((uint32_t)delta);
    programmed = true;
}

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
    lag = t1 - t0 > 2 * pair ? t1 - t0 - 2 * pair : 0;
}

void timer_reset(void)
{
    horizon = (tern_time)1 << (TERN_COUNTER_BITS - 1);
    measure_lag();
}

tern_time timer_next_deadline(void) { return alarms ? alarms->deadline : UINT64_MAX; }

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

/* Into the list, after every alarm due no later, armed as `armed` says. */
static void insert(tern_alarm *a, uint8_t armed)
{
    tern_alarm **pp = &alarms;
    while (*pp && a->deadline >= (*pp)->deadline)
        pp = &(*pp)->next;
    a->next = *pp;
    *pp = a;
    a->armed = armed;
    programmed = false;
}

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
        program_at(&now);
}

void tern_clock_isr(void) { clock_isr(tern_now()); }

/* Into the list for the deadline and period stored in it, out of the
 * list first if it is in, interrupts masked by the caller (s: how to put
 * them back). */
static void arm(tern_alarm *a, tern_irq_state s)
{
    if (a->armed)
        unlink_alarm(a);
    insert(a, a->period ? ARMED | PERIODIC : ARMED);
    program();
    port_irq_restore(s);
}
#endif

/* The assembly form above takes its place on the AVR's tick. */
#if !(TERN_TICK32 && defined(TERN_IRQ_STATE_IS_SREG))
void tern_alarm_set(tern_alarm *a, tern_time deadline, tern_time period)
{
    tern_irq_state s = port_irq_save();
    a->deadline = deadline;
    a->period = period;
    arm(a, s);
}
#endif

void tern_alarm_init(tern_alarm *a, tern_alarm_fn fn, void *arg)
{
    a->next = NULL;
    a->deadline = 0;
    a->period = 0;
    a->fn = fn;
    a->arg = arg;
    a->armed = 0;
}

void tern_alarm_cancel(tern_alarm *a)
{
    tern_irq_state s = port_irq_save();
    if (a->armed) {
        unlink_alarm(a);
        program();
    }
    port_irq_restore(s);
}

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
