/* BBS, black-burst synchronization over several hops, in the BCS's sync
 * phase (seed 004 §2 and §4.1; Gotzhein and Kuhn, "Black Burst
 * Synchronization (BBS) -- A protocol for deterministic tick and time
 * synchronization in wireless networks", Computer Networks 55(13), 2011;
 * docs/bips.md says what of it is built here).
 *
 * The sync phase holds n_rounds rounds of round_us, the first lead_us
 * after the phase's start. In round 0 the master sends a black burst (an
 * unmodulated carrier, cc2420_burst_on) at the round's start; a node that
 * first hears a burst in round r is at hop r + 1, sets its macro slot
 * start from the time it detected the burst (its CCA pin turning busy),
 * and -- unless r + 1 = n_rounds -- sends its own burst at the start of
 * round r + 1 of its newly set clock. The tick travels hop by hop; bursts
 * that overlap (several nodes of one hop) are still energy on the channel,
 * which is what makes black bursts collision-resistant: a receiver sees
 * the earliest of them.
 *
 * A burst's length carries a code, round * n_slots + macro slot index:
 * burst_us + code * step_us. A node not yet synchronized (sync_bbs_acquire,
 * from a task) measures it to learn its round and the macro slot number.
 * Synchronized, a node only listens from its round's expected time minus
 * window_us (at interrupt level, polling CCA until expected + window_us)
 * and sends at its round's start (polling the clock from a timer set a
 * little earlier): the sync phase is the protocol's, nothing else runs on
 * the radio there.
 *
 * The offset a node keeps from the master: per hop, the detection's
 * granularity (the polling loop) and the sender's start (the clock poll),
 * a few microseconds, plus the drift of its crystal against the master's
 * since the last sync phase: up to (|ppm_node| + |ppm_master|) x the macro
 * slot's length. docs/bips.md has what tern-sim measured. */
#ifndef TERN_NET_SYNC_BBS_H
#define TERN_NET_SYNC_BBS_H

#include <stdbool.h>
#include <stdint.h>

#include "bcs.h"

#define BBS_MAX_ROUNDS 4

typedef enum {
    BBS_OK = 0,
    BBS_EINVAL,        /* a zero or out-of-range field (named in the text) */
    BBS_EROUND_SHORT,  /* a round cannot hold its longest burst and its guards */
    BBS_ETOO_LONG,     /* the rounds do not fit the BCS's sync phase */
    BBS_ENOSYNC,       /* sync_bbs_acquire: no usable burst before the timeout */
    BBS_ESTATE,        /* not initialized, or the master acquiring */
    BBS_STATUS_COUNT
} bbs_status;

const char *bbs_status_name(bbs_status s);

typedef struct {
    uint8_t n_rounds;   /* hops the tick travels: nodes at hop n_rounds only listen */
    uint16_t lead_us;   /* sync phase start -> round 0 */
    uint16_t round_us;
    uint16_t burst_us;  /* the burst of code 0 */
    uint16_t step_us;   /* each code adds this much */
    uint16_t window_us; /* a synchronized node listens from expected - window to expected + window */
} bbs_config;

typedef struct {
    bbs_status code;
    char text[56];
} bbs_error;

typedef struct {
    uint16_t sent;         /* bursts sent */
    uint16_t send_failed;  /* cc2420_burst_on refused */
    uint16_t heard;        /* bursts used to synchronize */
    uint16_t missed;       /* sync phases without the expected burst in the window */
    uint16_t bad_code;     /* acquisition: a burst of no valid length (noise, a merge) */
    uint16_t mid_phase;    /* acquisition: a burst heard without having listened since round 0 */
    uint16_t late_send;    /* the send timer came after the burst's start: not sent */
    uint8_t hop;           /* 0: the master; 1..n_rounds; 0xFF: not yet known */
    int32_t last_corr;     /* the last correction of the macro slot start (ticks; + = later) */
    uint32_t max_corr;     /* the largest |correction| after acquisition (ticks) */
} sync_bbs_counters;

extern const bcs_sync sync_bbs;

/* Check against the BCS configuration (the rounds fit its sync phase) and
 * keep. Before bcs_start. */
bbs_status sync_bbs_init(const bbs_config *cfg, const bcs_config *bcs, bool master, bbs_error *err);

/* A node that is not the master, after bcs_start: listen (polling CCA,
 * from the calling task, interrupts enabled) until a burst heard after
 * listening through a whole round 0 gives the hop and the macro slot
 * start, then hand both to the BCS. Blocks up to timeout_ms (1..200,000:
 * BBS_EINVAL otherwise). */
bbs_status sync_bbs_acquire(uint32_t timeout_ms);

const sync_bbs_counters *sync_bbs_stats(void);

#endif
