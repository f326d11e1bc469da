/* Idle accounting and sleep-state choice. */
#ifndef TERN_IDLE_H
#define TERN_IDLE_H

#include "tern/types.h"
#include "tern_rom.h"

#define TERN_MAX_SLEEP_STATES 4

/* A sleep state of the board, listed from shallowest to deepest. Entering it
 * pays off only when the idle period is at least `residency` ticks (the
 * break-even time), and waking costs `exit_latency` ticks. A board's table
 * is constant and TERN_FLASH: on the AVR it stays in flash, name too. */
typedef struct {
    const TERN_FLASH char *name;
    tern_time residency;
    tern_time exit_latency;
} tern_sleep_state;

/* The deepest state whose residency and exit latency both fit in
 * `available` ticks (seed 002 appendix; Zephyr's residency policy). State 0
 * (the shallowest) always qualifies. */
uint8_t tern_idle_choose(const TERN_FLASH tern_sleep_state *states, uint8_t n, tern_time available);

typedef struct {
    tern_time total;   /* ticks spent idle */
    uint32_t periods;  /* number of idle periods */
    tern_time longest;
    tern_time state_ticks[TERN_MAX_SLEEP_STATES];
    uint32_t state_periods[TERN_MAX_SLEEP_STATES];
} tern_idle_stats;

const tern_idle_stats *tern_idle_get_stats(void);

/* Called at the end of every idle period with its bounds and state, in the
 * idle loop (not in an interrupt); benchmarks record periods with it. */
typedef void (*tern_idle_hook)(tern_time start, tern_time end, uint8_t state);
void tern_idle_set_hook(tern_idle_hook hook);

/* Work the idle loop may do before sleeping (e.g. streaming records to the
 * console); its time is not counted as idle. Return true if it did work. */
typedef bool (*tern_idle_work)(void);
void tern_idle_set_work(tern_idle_work work);

#endif
