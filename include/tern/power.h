/* Processor power-down and the idle policy of seed 002's appendix.
 *
 * The idle path (kernel/idle.c) picks the deepest sleep state whose
 * residency fits the time to the next deadline. A board states each
 * state's residency as its break-even time: an idle gap shorter than
 * T_be = (E_W - P_S * T_W) / (P_I - P_S) costs more asleep (the wake-up's
 * energy E_W = P_W * T_W) than idling at P_I (TERN_BREAK_EVEN below;
 * docs/boards.md lists the figures per board).
 *
 * A processor can also be powered down by another: once allowed
 * (tern_power_allow_down, which the bus driver calls on the other
 * processor's request, drivers/procbus/procbus_power.h), it enters the
 * board's power-down state whenever it has nothing to do: no message ready
 * and no deadline within 2^32 - 1 ticks. Only an interrupt (a bus frame)
 * wakes it; its clock stops meanwhile, as on the real part.
 *
 * Nothing of this is linked unless the app calls tern_power_init(). */
#ifndef TERN_POWER_H
#define TERN_POWER_H

#include "tern/types.h"

/* T_be in the unit of t_w (cycles) from powers in any one unit (uW):
 * idle p_i, the deep state p_s, the transition p_w over t_w. */
#define TERN_BREAK_EVEN(p_i, p_s, p_w, t_w) \
    ((uint32_t)(((uint64_t)(p_w) * (t_w) - (uint64_t)(p_s) * (t_w)) / ((p_i) - (p_s))))

typedef enum {
    TERN_POWER_BREAK_EVEN, /* the residency rule: deep sleep only for gaps of T_be or longer */
    TERN_POWER_IDLE_ONLY,  /* never deeper than the shallowest state ("without") */
    TERN_POWER_DEEPEST,    /* the deepest timed state for every gap, however short */
} tern_power_policy;

typedef struct {
    uint32_t allowed, forbidden; /* requests to allow / forbid power-down */
    uint32_t downs;              /* times powered down (each ended by an interrupt) */
    uint32_t deep;               /* timed deep sleeps (states between idle and power-down) */
    uint32_t shallow;            /* sleeps in the shallowest state */
} tern_power_stats;

/* Sleep states: the board's real modes from now on (without this call the
 * AVR port accounts them and sleeps in idle), and the policy hook. */
void tern_power_init(tern_power_policy policy);
void tern_power_allow_down(bool allowed);
bool tern_power_down_allowed(void);
const tern_power_stats *tern_power_get_stats(void);

#endif
