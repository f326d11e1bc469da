/* What the MAC protocols (CB, RB, ACTP, MB) and BBS share: the CC2420's
 * frame timing, a refusal's text, the scan of the BCS's regions that each
 * protocol's init validates against, and the end-of-frame and end-of-region
 * steps every frame-sending MAC takes. The two frame steps are inline:
 * they run in interrupt handlers whose timing the tests measure, and a call
 * into another file would add cycles there. */
#ifndef TERN_NET_MAC_COMMON_H
#define TERN_NET_MAC_COMMON_H

#include "bcs.h"
#include "cc2420.h"
#include "mux.h"
#include "tern/console.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAC_TURNAROUND_US 192u /* STXON(CCA) to the first preamble symbol */
#define MAC_BYTE_US 32u
#define MAC_SHR_PHR_BYTES 6u /* preamble 4, SFD 1, length 1 */
#define MAC_FCS_BYTES 2u
#define MAC_MAX_MPDU 125u /* 127 - FCS */

/* Time on air of an MPDU of `len` bytes, from the strobe on. */
static inline uint32_t mac_air_us(uint32_t mpdu_len)
{
    return MAC_TURNAROUND_US + (MAC_SHR_PHR_BYTES + mpdu_len + MAC_FCS_BYTES) * MAC_BYTE_US;
}

/* A refusal's text: "schedule N: " (schedule >= 0) and `why`, cut to `size`. */
void mac_refusal_text(char *text, size_t size, int schedule, const TERN_ROM char *why);

/* The region ids (bit i: id i) of the regions run by `protocol`. */
uint16_t mac_region_ids(const bcs_config *bcs, uint8_t protocol);

/* The shortest t2 - t1 (bcs.h) of the regions with this id run by
 * `protocol` (0 for a region too short to have one), UINT32_MAX if none. */
uint32_t mac_min_usable_us(const bcs_config *bcs, uint8_t protocol, uint8_t region_id);

/* A frame's outcome from the radio: counted, confirmed to the mux,
 * released (*cur = NULL). */
static inline void mac_frame_done(mux_entry **cur, const cc2420_tx_result *r, uint16_t *sent,
                                  uint16_t *tx_failed)
{
    bool ok = r->status == CC2420_OK;
    if (ok)
        (*sent)++;
    else
        (*tx_failed)++;
    mux_done(*cur, ok, ok ? r->sfd : 0);
    *cur = NULL;
}

/* The region ends (t2). A frame still on air cannot happen unless the
 * radio is late: counted, and a failed try, since its outcome will find no
 * region (the BCS counts it as tx_done_orphan). A frame only reserved
 * goes back to the mux untried. */
static inline void mac_region_stop(mux_entry **cur, bool on_air, uint16_t *overrun)
{
    if (on_air) {
        (*overrun)++;
        mux_done(*cur, false, 0);
    } else if (*cur) {
        mux_release(*cur);
    }
    *cur = NULL;
}

#endif
