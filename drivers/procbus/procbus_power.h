/* Power requests between processors over the processor bus (seed 002 III:
 * "all but one of the processors can be powered off, and be powered back on
 * by the remaining active processor by sending a message over the bus").
 *
 * ['P', 'D'] allows the receiver to power down whenever it has nothing to do
 * (tern_power_allow_down(true), tern/power.h); ['P', 'U'] forbids it again.
 * Any frame wakes a powered-down processor: a message to one of its tasks
 * is delivered as usual. The driver claims 'P' frames (procbus_claim), so
 * the bus manager never sees them. */
#ifndef TERN_PROCBUS_POWER_H
#define TERN_PROCBUS_POWER_H

#include <stdbool.h>
#include <stdint.h>

#include "procbus.h"

#define PROCBUS_POWER_KIND 'P'

typedef struct {
    uint16_t tx_requests; /* requests sent */
    uint16_t rx_down, rx_up;
    uint16_t rx_bad; /* a 'P' frame of another length or command: ignored */
} procbus_power_counters;

/* Take 'P' frames from now on (after procbus_init and tern_power_init). */
procbus_status procbus_power_init(void);
/* Ask processor dst to power down when idle (down) or to stay up. */
procbus_status procbus_power_request(uint8_t dst, bool down);
const procbus_power_counters *procbus_power_stats(void);

#endif
