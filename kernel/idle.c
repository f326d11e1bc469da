/* The idle path: choose the deepest sleep state that pays off before the
 * next deadline, wait, and account every idle period (seed 000's i_k). */
#include <string.h>

#include "kernel.h"
#include "time64.h"

volatile uint8_t tern_idle_waiting;
/* The period's bounds: its start, and the clock's low 32 bits at the first
 * interrupt of the period (a period is shorter than 2^32 ticks: timer.c
 * always has a deadline programmed at most half a counter wrap ahead, and
 * it ends the period), so the wake-up, on every interrupt's path, stores
 * four bytes and the end is start + (wake_lo - start's low half). */
static tern_time start_time;
uint32_t idle_wake_lo;
/* Zeros when TERN_IDLE_STATS is 0. A period adds only to its state's sums
 * (the 32-bit low half, the high one on a carry); the totals over all
 * states are added up when they are read (tern_idle_get_stats). */
static tern_idle_stats stats;
static tern_time other_ticks;  /* periods in a state >= TERN_MAX_SLEEP_STATES */
static uint32_t other_periods; /* (idle_power may choose any) */
static tern_idle_hook hook;
/* call_hook, reached through this pointer that tern_idle_set_hook sets:
 * an image that sets no hook links none of it (288 bytes on the AVR). */
static void (*hook_caller)(uint8_t state);
static tern_idle_work work;
uint8_t (*idle_power)(uint8_t state, tern_time available);

void idle_reset(void)
{
#if TERN_IDLE_STATS
    memset(&stats, 0, sizeof stats);
    other_ticks = 0;
    other_periods = 0;
#endif
    hook_caller = NULL;
    work = NULL;
    idle_power = NULL;
    tern_idle_waiting = 0;
}

const tern_idle_stats *tern_idle_get_stats(void)
{
    tern_irq_state s = port_irq_save();
    stats.total = other_ticks;
    stats.periods = other_periods;
    for (uint8_t i = 0; i < TERN_MAX_SLEEP_STATES; i++) {
        stats.total += stats.state_ticks[i];
        stats.periods += stats.state_periods[i];
    }
    port_irq_restore(s);
    return &stats;
}


static void call_hook(uint8_t state);

void tern_idle_set_hook(tern_idle_hook h)
{
    hook = h;
    hook_caller = h ? call_hook : NULL;
}
void tern_idle_set_work(tern_idle_work w) { work = w; }

#if defined(__AVR__)
/* *need <= have, *need in flash: its halves read with two 32-bit LPM loads
 * (a 64-bit __flash read is a byte loop of its own). */
static bool fits(const TERN_FLASH tern_time *need, tern_time have)
{
    const TERN_FLASH uint32_t *w = (const TERN_FLASH uint32_t *)need;
    uint32_t nh = w[1], hh = t64_hi(have);
    return nh != hh ? nh < hh : w[0] <= (uint32_t)have;
}
#endif

uint8_t tern_idle_choose(const TERN_FLASH tern_sleep_state *states, uint8_t n, tern_time available)
{
    uint8_t best = 0;
    for (uint8_t i = 1; i < n; i++)
#if defined(__AVR__)
        if (fits(&states[i].residency, available) && fits(&states[i].exit_latency, available))
#else
        if (states[i].residency <= available && states[i].exit_latency <= available)
#endif
            best = i;
    return best;
}

/* Called by tern_isr_enter: the idle period ends when the CPU wakes, not
 * when the interrupt handler is done. (A vector that has read the clock
 * stores its low half itself: idle_note_wake_at, kernel.h.) */
void idle_note_wake(void)
{
    if (tern_idle_waiting) {
        tern_idle_waiting = 0;
        idle_wake_lo = (uint32_t)tern_now();
    }
}

/* Out of line on the AVR, where a call costs less than the registers a
 * caller would save for what the function keeps; inline elsewhere. */
#if defined(__AVR__)
#define AVR_OUT_OF_LINE __attribute__((noinline))
#else
#define AVR_OUT_OF_LINE inline
#endif

/* *t += x, x < 2^32: the 32-bit low half, the high half only on a carry */
static inline void add_ticks(tern_time *t, uint32_t x)
{
#if defined(__AVR__)
    uint32_t lo = t64_lo_at(t) + x;
    memcpy(t, &lo, sizeof lo);
    if (lo < x) {
        uint32_t hi = t64_hi_at(t) + 1;
        memcpy((uint8_t *)t + 4, &hi, sizeof hi);
    }
#else
    *t += x;
#endif
}

/* The period just ended, in ticks. */
static inline uint32_t period_length(void) { return idle_wake_lo - (uint32_t)start_time; }

#if TERN_IDLE_STATS
/* A period in a state past the per-state sums (no board has one) */
static __attribute__((noinline, cold)) void account_other(uint32_t length)
{
    add_ticks(&other_ticks, length);
    other_periods++;
}

/* The period just ended, spent in `state`. Out of line on the AVR: its
 * pointers and sums fit in the registers a call may clobber, and
 * idle_once saves none for them. */
static AVR_OUT_OF_LINE void account(uint8_t state)
{
    uint32_t length = period_length();
    /* longer than 2^32 never: on the AVR its high half stays 0 */
#if defined(__AVR__)
    if (t64_lo_at(&stats.longest) < length)
        memcpy(&stats.longest, &length, sizeof length);
#else
    if (length > stats.longest)
        stats.longest = length;
#endif
    if (state < TERN_MAX_SLEEP_STATES) {
        /* byte offsets below 256: 8-bit shifts, not a 16-bit index loop */
        uint8_t i = state;
        add_ticks((tern_time *)((uint8_t *)stats.state_ticks + (uint8_t)(i * 8u)), length);
        ++*(uint32_t *)((uint8_t *)stats.state_periods + (uint8_t)(i * 4u));
    } else {
        account_other(length);
    }
}
#endif

/* Out of line (a call through hook_caller): the hook's 64-bit arguments
 * take call-saved registers, which idle_once would otherwise save and
 * restore on every wake-up. */
static void call_hook(uint8_t state)
{
    hook(start_time, t64_add(start_time, period_length()), state);
}

/* The sleep state for the time to the next deadline, that time in
 * *available: out of line on the AVR, so that its 64-bit values are not
 * kept in idle_once's frame, whose saved registers are restored after the
 * wake-up, on the interrupt's path to its handler. */
static AVR_OUT_OF_LINE uint8_t choose(tern_time *available)
{
    tern_time now = tern_now();
    tern_time next = timer_next_deadline();
#if defined(__AVR__)
    /* capped at 2^32 - 1 ticks: no sleep state asks for more (the AVR port
     * ignores the length), and the difference stays in 32 bits */
    tern_time avail = next == UINT64_MAX ? UINT64_MAX : t64_until(next, now, UINT32_MAX);
#else
    tern_time avail = next == UINT64_MAX ? UINT64_MAX : next > now ? next - now : 0;
#endif
    uint8_t state = tern_idle_choose(port_board.sleep_states, port_board.n_sleep_states, avail);
    if (idle_power)
        state = idle_power(state, avail);
    *available = avail;
    return state;
}

bool idle_once(void)
{
    tern_irq_state s = port_irq_save();
    if (sched_has_ready()) {
        port_irq_restore(s);
        return true;
    }
    if (work) {
        port_irq_restore(s);
        if (work())
            return true;
        s = port_irq_save();
        if (sched_has_ready()) {
            port_irq_restore(s);
            return true;
        }
    }
    if (msg_remote) { /* the bus may be free, or room for a received frame */
        msg_remote->idle();
        if (sched_has_ready()) {
            port_irq_restore(s);
            return true;
        }
    }
    tern_time available;
    uint8_t state = choose(&available);
    tern_trace(TERN_EV_IDLE_ENTER, state, 0);
    start_time = tern_now();
    idle_wake_lo = (uint32_t)start_time; /* no interrupt: a period of 0 */
    tern_idle_waiting = 1;
    bool woken = port_idle(state, available);
    tern_idle_waiting = 0;
    tern_trace(TERN_EV_IDLE_EXIT, state, 0);
#if TERN_IDLE_STATS
    account(state);
#endif
    port_irq_restore(s);
    if (hook_caller)
        hook_caller(state);
    return woken;
}
