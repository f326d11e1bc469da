/* Power requests over the processor bus (procbus_power.h). */
#include "procbus_power.h"

#include "tern/power.h"

static procbus_power_counters counters;

/* A claimed frame, in the bus interrupt. */
static bool on_frame(uint8_t src, const uint8_t *d, uint8_t len)
{
    (void)src;
    if (len == 2 && (d[1] == 'D' || d[1] == 'U')) {
        bool down = d[1] == 'D';
        if (down)
            counters.rx_down++;
        else
            counters.rx_up++;
        tern_power_allow_down(down);
    } else {
        counters.rx_bad++;
    }
    return true;
}

procbus_status procbus_power_init(void) { return procbus_claim(PROCBUS_POWER_KIND, on_frame); }

procbus_status procbus_power_request(uint8_t dst, bool down)
{
    const uint8_t frame[2] = {PROCBUS_POWER_KIND, down ? 'D' : 'U'};
    procbus_status st = procbus_send(dst, frame, sizeof frame);
    if (st == PROCBUS_OK)
        counters.tx_requests++;
    return st;
}

const procbus_power_counters *procbus_power_stats(void) { return &counters; }
