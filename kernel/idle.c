/* The idle path: choose the deepest sleep state that pays off before the
 * next deadline, wait, and account every idle period (seed 000's i_k). */
#include <string.h>

#include "kernel.h"
#include "time64.h"

volatile uint8_t tern_idle_waiting;
static tern_time wake_time; /* clock at the first interrupt of the period */
static tern_idle_stats stats; /* zeros when TERN_IDLE_STATS is 0 */
static tern_idle_hook hook;
static tern_idle_work work;
uint8_t (*idle_power)(uint8_t state, tern_time available);

void idle_reset(void)
{
#if TERN_IDLE_STATS
    memset(&stats, 0, sizeof stats);
#endif
    hook = NULL;
    work = NULL;
    idle_power = NULL;
    tern_idle_waiting = 0;
}

const tern_idle_stats *tern_idle_get_stats(void) { return &stats; }
void tern_idle_set_hook(tern_idle_hook h) { hook = h; }
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

/* The idle period's end is read only for the statistics and the hook. */
#define WAKE_STAMPED (TERN_IDLE_STATS || hook)

/* Called by tern_isr_enter: the idle period ends when the CPU wakes, not
 * when the interrupt handler is done. */
void idle_note_wake(void)
{
    if (tern_idle_waiting) {
        tern_idle_waiting = 0;
        if (WAKE_STAMPED)
            wake_time = tern_now();
    }
}

#if defined(__AVR__)
/* The same with the clock that the interrupt has read already. */
void idle_note_wake_at(const tern_time *now)
{
    tern_idle_waiting = 0;
    if (WAKE_STAMPED) {
        uint32_t lo = t64_lo_at(now), hi = t64_hi_at(now); /* 4-byte copies inline */
        memcpy(&wake_time, &lo, sizeof lo);
        memcpy((uint8_t *)&wake_time + 4, &hi, sizeof hi);
    }
}
#endif

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
    tern_time now = tern_now();
    tern_time next = timer_next_deadline();
#if defined(__AVR__)
    /* capped at 2^32 - 1 ticks: no sleep state asks for more (the AVR port
     * ignores the length), and the difference stays in 32 bits */
    tern_time available = next == UINT64_MAX ? UINT64_MAX : t64_until(next, now, UINT32_MAX);
#else
    tern_time available = next == UINT64_MAX ? UINT64_MAX : next > now ? next - now : 0;
#endif
    uint8_t state = tern_idle_choose(port_board.sleep_states, port_board.n_sleep_states,
                                     available);
    if (idle_power)
        state = idle_power(state, available);
    tern_trace(TERN_EV_IDLE_ENTER, state, 0);
    tern_time start = tern_now();
    wake_time = start;
    tern_idle_waiting = 1;
    bool woken = port_idle(state, available);
    tern_idle_waiting = 0;
    tern_time end = wake_time;
    tern_trace(TERN_EV_IDLE_EXIT, state, 0);
#if TERN_IDLE_STATS
#if defined(__AVR__)
    /* Shorter than 2^32 ticks: the port always has a deadline programmed
     * at most half a counter wrap ahead (timer.c), and it ends the period.
     * The sums added in place in 32-bit steps, no 64-bit libgcc call. */
    uint32_t length = (uint32_t)end - (uint32_t)start;
    t64_add32_at(&stats.total, length);
    stats.periods++;
    if (t64_hi_at(&stats.longest) == 0 && t64_lo_at(&stats.longest) < length)
        stats.longest = length;
    if (state < TERN_MAX_SLEEP_STATES) {
        t64_add32_at(&stats.state_ticks[state], length);
        stats.state_periods[state]++;
    }
#else
    tern_time length = end - start;
    stats.total += length;
    stats.periods++;
    if (length > stats.longest)
        stats.longest = length;
    if (state < TERN_MAX_SLEEP_STATES) {
        stats.state_ticks[state] += length;
        stats.state_periods[state]++;
    }
#endif
#endif
    port_irq_restore(s);
    if (hook)
        hook(start, end, state);
    return woken;
}
