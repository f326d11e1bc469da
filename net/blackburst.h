/* Black bursts (seed 004 §3.1): energy on the channel without a frame, the
 * collision-resistant primitive of BBS (net/sync_bbs.c) and ACTP
 * (net/mac_actp.c): overlapping bursts of several senders are still just
 * energy, so a receiver learns "someone sent" whatever the overlap.
 *
 * Both halves are timed by polling the clock, at interrupt level (or with
 * interrupts masked): a burst must start within microseconds of its time
 * on every sender, which no timer interrupt's entry guarantees (its entry
 * varies with what the CPU was doing). Times are 32-bit deltas on the low
 * half of the kernel clock (port_counter_read): bursts last microseconds
 * to milliseconds, and tern_now's 64-bit read costs hundreds of cycles.
 *
 * The CC2420's timing, from its datasheet:
 *   STXON -> carrier on the air      12 symbols (192 us) + BB_ON_US for
 *                                    cc2420_burst_on's register writes;
 *   SRFOFF -> carrier off            1 symbol (16 us);
 *   after the burst, listening again 12 symbols after SRXON (which
 *                                    cc2420_burst_off strobes BB_OFF_US
 *                                    after the carrier's end), RSSI/CCA
 *                                    valid 8 symbols later:
 *                                    BB_RX_AGAIN_US = 320 us;
 *   CCA follows RSSI averaged over 8 symbols: a real receiver needs up
 *                                    to BB_CCA_US = 128 us of energy
 *                                    before its CCA pin turns busy, and
 *                                    as long after the energy ends to
 *                                    turn clear. (tern-sim's CCA follows
 *                                    the energy at once: protocols budget
 *                                    the datasheet's figure.) */
#ifndef TERN_NET_BLACKBURST_H
#define TERN_NET_BLACKBURST_H

#include <stdbool.h>
#include <stdint.h>

#include "cc2420.h"
#include "tern/port.h"

#define BB_TURNAROUND_US 192u /* STXON -> energy on the air */
#define BB_SYMBOL_US 16u      /* SRFOFF ends a burst one symbol later */
/* cc2420_burst_on writes MDMCTRL1 and DACTST before its STXON: the strobe
 * goes out this much after the call (measured under tern-sim as the
 * carrier's start against the clock poll's target). */
#define BB_ON_US 33u
#define BB_CCA_US 128u      /* CCA's RSSI average: 8 symbols */
#define BB_RX_AGAIN_US 320u /* SRXON -> CCA valid again: 12 + 8 symbols */
/* cc2420_burst_off's SRXON comes after its SRFOFF and two register writes:
 * the carrier's end to SRXON, measured under tern-sim (CCA pin PD6 on the
 * logic analyser: clear again 342 us after the carrier's end). */
#define BB_OFF_US 24u

/* Tick figures of the constants above; bb_init() sets them (from any
 * protocol's init: the clock rate does not change). */
typedef struct {
    uint32_t turnaround, on, symbol;
} bb_ticks;
extern bb_ticks bb_t;
void bb_init(void);

/* The three below are inline: a call into another file costs cycles
 * between the clock poll and the strobe (measured: BBS's hop-1 tick moved
 * by 4 us when they were calls). */

/* Poll the clock until `t` (a no-op for a past t). */
static inline void bb_wait_until(uint32_t t)
{
    while ((int32_t)(port_counter_read() - t) < 0)
        ;
}

/* Put a burst on the air from `on_air` (the clock's low half) for
 * `len` ticks: strobes at on_air - turnaround - on, stops it a symbol
 * before on_air + len. Blocks for the burst's length. Answers false,
 * sending nothing, when it is called too late to start on time
 * (*late set) or when cc2420_burst_on refuses (*late clear). */
static inline bool bb_send(uint32_t on_air, uint32_t len, bool *late)
{
    uint32_t strobe_at = on_air - bb_t.turnaround - bb_t.on; /* the call, that is */
    *late = (int32_t)(port_counter_read() - strobe_at) > 0;
    if (*late)
        return false;
    bb_wait_until(strobe_at);
    if (cc2420_burst_on() != CC2420_OK)
        return false;
    /* SRFOFF stops the carrier a symbol after the strobe */
    bb_wait_until(on_air + len - bb_t.symbol);
    (void)cc2420_burst_off();
    return true;
}

/* Poll CCA until it reads busy (true, *at = the clock there) or `until`
 * passes (false). The radio must be listening with CCA valid. Sixteen
 * samples per clock read: the pin is one IN instruction, the clock read
 * tens of cycles; *at is read right at the busy sample. */
static inline bool bb_detect(uint32_t until, uint32_t *at)
{
    for (;;) {
        for (uint8_t i = 0; i < 16; i++) {
            if (!cc2420_channel_clear()) {
                *at = port_counter_read();
                return true;
            }
        }
        if ((int32_t)(port_counter_read() - until) > 0)
            return false;
    }
}

#endif
