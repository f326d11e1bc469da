/* Processor time sync over the processor bus (seed 002's TIMESYNC task):
 * the master broadcasts a timestamped SYNC frame every period; the bus
 * drives every end's Timer1 input capture pin at the frame's start, so the
 * master and each receiver capture the same instant, each on its own
 * clock; a FOLLOW frame then carries the master's capture (as global time)
 * and each receiver hands the pair to the global clock (tern/gtime.h),
 * which keeps its offset and rate to the master's.
 *
 * Two frames, because the master learns its frame's start only once the
 * bus's TDMA slot has come (as PTP's two-step clocks do). Frames are
 * ['T', 'S', seq] and ['T', 'F', seq, global time: 8 bytes, little-endian];
 * the driver claims them (procbus_claim), so the bus manager never sees
 * them. Only SYNC frames are stamped: a capture belongs to the last SYNC.
 *
 * Uses Timer1's capture unit (ICP1) and its vector: not with the CC2420
 * driver, which uses it for SFD (the module boards have no radio). */
#ifndef TERN_PROCBUS_SYNC_H
#define TERN_PROCBUS_SYNC_H

#include <stdint.h>

#include "procbus.h"

#define PROCBUS_SYNC_KIND 'T' /* first byte of a sync frame */

typedef struct {
    /* master */
    uint16_t tx_sync;     /* SYNC frames sent */
    uint16_t tx_follow;   /* FOLLOW frames sent */
    uint16_t tx_retries;  /* the bus was busy: tried again 100 us later */
    uint16_t tx_failed;   /* refused otherwise (PROCBUS_EREFUSED...): the round is lost */
    uint16_t rounds_lost; /* a round began before the last one's FOLLOW had left */
    /* the others */
    uint16_t rx_sync;       /* SYNC frames with a capture */
    uint16_t rx_samples;    /* FOLLOW frames matched to their SYNC: samples taken */
    uint16_t rx_no_capture; /* SYNC without a capture since the last: no sample */
    uint16_t rx_unmatched;  /* FOLLOW whose SYNC was not seen (or captured) */
    uint16_t rx_bad;        /* wrong length or kind, or not from the master */
} procbus_sync_counters;

/* Starts time sync on an initialised procbus (procbus_init, or
 * procbus_remote_attach under the bus manager): this processor is the
 * master if its address is `master` (then it sends a round every
 * period_ms), else it follows the master's rounds. From a task, once.
 * PROCBUS_ESTATE without a bus, PROCBUS_EINVAL for a master beyond the bus
 * or a period of 0. */
procbus_status procbus_sync_start(uint8_t master, uint32_t period_ms);

/* The master's period from now on (the seed: a task may change the sync
 * rate at run time, e.g. less often with better crystals). PROCBUS_ESTATE
 * on any other processor (or before procbus_sync_start), PROCBUS_EINVAL
 * for 0. */
procbus_status procbus_sync_set_period(uint32_t period_ms);

const procbus_sync_counters *procbus_sync_stats(void);

#endif
