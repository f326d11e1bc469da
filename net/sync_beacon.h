/* Single-hop beacon synchronization in the BCS's sync phase (seed 004
 * §4.1 quotes d_maxOffset = 100 us for a beacon protocol with 1 s macro
 * slots).
 *
 * The master sends a beacon (an 802.15.4 beacon frame) at the start of
 * every macro slot's sync phase, without CCA (the phase is the master's).
 * Its payload names the macro slot (index in the super slot) and the
 * master's own delay from the macro slot's start to the SFD of its
 * previous beacon, measured by Timer1 input capture (cc2420_tx_result.sfd):
 * that delay is a constant of the master's code path and the chip (12
 * symbols of calibration, 5 bytes of preamble and SFD), so the previous
 * one is the current one.
 *
 * A receiver's SFD rises at the same instant as the sender's (the radio
 * delay of a few metres is nanoseconds; the chip's SFD detection delay is
 * the same at every receiver), and its time is captured in hardware
 * (cc2420_rx_frame.sfd), so a receiver sets its macro slot start to
 * sfd - delay. No drift compensation: between beacons each node runs on
 * its own crystal, so two nodes drift apart by (ppm_a - ppm_b) per
 * macro slot length until the next beacon. */
#ifndef TERN_NET_SYNC_BEACON_H
#define TERN_NET_SYNC_BEACON_H

#include <stdbool.h>
#include <stdint.h>

#include "bcs.h"

typedef struct {
    uint16_t sent;         /* master: beacons sent */
    uint16_t send_failed;  /* master: cc2420_send refused or the frame failed */
    uint16_t received;     /* beacons used to synchronize */
    uint16_t ignored;      /* beacons without a usable time (first one, no SFD) */
    uint16_t malformed;    /* beacon frames of a wrong length or PAN: dropped */
    uint16_t missed;       /* sync phases that passed without a beacon */
    uint32_t delay;        /* master: its last start->SFD delay (ticks) */
    int32_t last_corr;     /* the last correction of the slot start (ticks; + = later) */
    uint32_t max_corr;     /* the largest |correction| after the first sync (ticks) */
} sync_beacon_counters;

extern const bcs_sync sync_beacon;

void sync_beacon_init(bool master, uint16_t pan_id, uint16_t short_addr);
const sync_beacon_counters *sync_beacon_stats(void);

#endif
