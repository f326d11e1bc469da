/* Processor power-down and the idle policy (tern/power.h; seed 002 III-A
 * and appendix). The idle path asks idle_power which state to enter. */
#include <string.h>

#include "kernel.h"
#include "tern/port.h"
#include "tern/power.h"

/* The global clock (gtime.c), if the app keeps one: told that the local
 * clock is about to stand still. Weak, so that an app without time sync
 * links none of it. */
extern void tern_gtime_clock_stopped(void) __attribute__((weak));

static tern_power_policy policy;
static volatile bool down_allowed; /* set from the bus interrupt */
static tern_power_stats stats;

/* The deepest state is power-down when its residency is "never": the
 * residency rule alone never picks it. */
static bool has_power_down(void)
{
    const TERN_FLASH tern_sleep_state *s = &port_board.sleep_states[port_board.n_sleep_states - 1];
    return port_board.n_sleep_states > 1 && s->residency == UINT64_MAX;
}

static uint8_t choose(uint8_t state, tern_time available)
{
    uint8_t down = has_power_down() ? (uint8_t)(port_board.n_sleep_states - 1) : 0xFF;
    uint8_t deepest_timed = down != 0xFF ? (uint8_t)(down - 1) : (uint8_t)(port_board.n_sleep_states - 1);
    /* Nothing due: no deadline within 2^32 - 1 ticks, where the AVR's idle
     * path caps `available` (the run-limit guard of emulated runs is 600 s
     * away). The clock stops while powered down: such a deadline comes late
     * by that time. */
    if (down_allowed && down != 0xFF && available >= UINT32_MAX) {
        stats.downs++;
        if (tern_gtime_clock_stopped)
            tern_gtime_clock_stopped(); /* the next sync sample is a step */
        return down;
    }
    if (policy == TERN_POWER_IDLE_ONLY)
        state = 0;
    else if (policy == TERN_POWER_DEEPEST)
        state = deepest_timed;
    else if (state == down)
        state = deepest_timed; /* the residency rule picked "never": no deadline */
    if (state == 0)
        stats.shallow++;
    else
        stats.deep++;
    return state;
}

void tern_power_init(tern_power_policy p)
{
    memset(&stats, 0, sizeof stats);
    policy = p;
    down_allowed = false;
    idle_power = choose;
    port_sleep_modes(true);
}

void tern_power_allow_down(bool allowed)
{
    down_allowed = allowed;
    if (allowed)
        stats.allowed++;
    else
        stats.forbidden++;
}

bool tern_power_down_allowed(void) { return down_allowed; }
const tern_power_stats *tern_power_get_stats(void) { return &stats; }
