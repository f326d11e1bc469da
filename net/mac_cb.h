/* CB, the contention-based MAC protocol (seed 004 §3.1): CSMA/CA inside a
 * slot region. Before each try a node waits a random backoff of
 * 0..CW-1 backoff periods (20 symbols, 320 us, as 802.15.4's unit), then
 * sends with the chip's clear-channel assessment (STXONCCA); a busy
 * channel doubles CW (up to cw_max) and backs off again, at most
 * max_backoffs times, after which the try has failed and the multiplexer
 * decides about a retransmission. The initial CW depends on the priority
 * of the frame's TX TO (cw_min[priority]): smaller windows win more often.
 * A try that could not end before t2 is not started: the frame goes back
 * to its TO for the next region bound to it. */
#ifndef TERN_NET_MAC_CB_H
#define TERN_NET_MAC_CB_H

#include <stdint.h>

#include "bcs.h"

#define CB_PRIORITIES 4

typedef struct {
    uint8_t cw_min[CB_PRIORITIES]; /* by TX TO priority (higher ones: the last entry) */
    uint8_t cw_max;
    uint8_t max_backoffs;          /* CCA failures per try */
    uint16_t seed;                 /* of the backoff draws: make it the node's */
} cb_config;

typedef struct {
    uint16_t tries;       /* transmissions started */
    uint16_t sent;        /* ... and completed */
    uint16_t cca_busy;    /* STXONCCA refused */
    uint16_t tries_failed;/* max_backoffs exhausted, or a radio error */
    uint16_t no_time;     /* a frame given back: it would not end before t2 */
    uint16_t overrun;     /* a transmission still under way at t2 (must stay 0) */
    uint16_t rx;          /* data frames passed to the mux */
    uint16_t offers_taken;/* cb_offer found CB idle in its region and picked */
} cb_counters;

extern const bcs_mac mac_cb;

void cb_init(const cb_config *cfg);
/* From a task, after mux_send: CB picks from its TOs at t0 and after each
 * frame, so a frame queued while CB sits idle in a running region would
 * wait for the next region; this hands it to CB now. */
void cb_offer(void);
const cb_counters *cb_stats(void);

#endif
