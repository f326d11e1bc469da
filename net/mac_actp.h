/* ACTP, the Arbitrating and Cooperative Transfer Protocol (seed 004 §3.1;
 * Christmann, Gotzhein, Rohr, "The Arbitrating Value Transfer Protocol
 * (AVTP) -- Deterministic Binary Countdown in Wireless Multi-Hop
 * Networks", ICCCN 2012; docs/bips.md says what of it is built here and
 * where this implementation had to decide).
 *
 * Binary countdown with black bursts (net/blackburst.h) inside a slot
 * region, round after round. A round is an arbitration phase of n_bits
 * bits, then a frame phase in which the winner sends one frame:
 *
 *   arbitration value = 1 (start bit) | priority (prio_bits) | node id (id_bits)
 *
 * sent most significant bit first; 1 is dominant (a black burst), 0
 * recessive (silence). The priority is that of the TX TO the frame comes
 * from; the node id makes every value unique, so exactly one contender
 * wins within the arbitration radius. A contender that sends recessive and
 * hears a dominant bit withdraws: it loses the round, its frame goes back
 * to the multiplexer and contends again in the next round.
 *
 * Each bit is a bit round of `radius` burst slots (cooperative transfer):
 * contenders with a dominant bit send in slot 0; every node -- contender
 * or not -- that first hears a burst in slot s < radius - 1 sends one in
 * slot s + 1. A dominant bit so reaches every node within `radius` hops,
 * and a node learns each bit of the winning value: after the arbitration
 * every node within the radius knows the winner's priority and id (the
 * value transfer; counters value/agree). The start bit tells everyone
 * whether a frame follows; a round whose start bit nobody within the
 * radius sent ends there (no later bit can come).
 *
 * Bit sequences (the "cooperative transfer"): with data_bits > 0 the
 * value goes on with that many bits of the frame's payload (its first two
 * bytes, little-endian, low bits). Once the id bits have left one
 * contender per radius, these are the winner's alone: every node within
 * the radius -- not only the winner's neighbours -- receives them, relayed
 * hop by hop, at a constant time into the round, and each round's value
 * goes to the endpoint value_to as an actp_value message.
 *
 * With radius 2 no two winners are within two hops of each other, so a
 * winner's frame reaches all its neighbours without a collision even with
 * hidden terminals; with radius 1 two contenders two hops apart can both
 * win and collide at the node between them.
 *
 * Timing, from the CC2420's and from d_maxOffset (actp_timing, derived by
 * actp_init; docs/bips.md has the derivation):
 *   burst  = CCA's 8-symbol average (128 us) + 32 us,
 *   slot   = max(d_off + 128 + poll + relay path + 33 + 192,   a relay in time
 *                2 d_off + burst + 128,                        no burst heard in the next slot's window
 *                d_off + burst + poll + 24 + 320),             a sender listening again
 *   bit    = radius x slot,   arbitration = n_bits x bit,
 *   frame  = send path + 192 + the max_len frame + d_off + 320,
 *   round  = lead + arbitration + frame.
 * Delay bound: a frame that has j frames of higher arbitration value
 * within its radius ahead of it is on air in round j of the region, at a
 * fixed offset lead + arbitration + send path + 192 us after the round's
 * start.
 *
 * The arbitration phase of a round runs as one interrupt handler, polling
 * the clock and the CCA pin: the medium is ACTP's there, and each burst
 * must start within microseconds of its slot on every node. Other
 * interrupts wait up to lead + arbitration (counted: max_entry says how
 * late the handler itself came). */
#ifndef TERN_NET_MAC_ACTP_H
#define TERN_NET_MAC_ACTP_H

#include <stdint.h>

#include "bcs.h"
#include "tern/app.h"

#define ACTP_MAX_RADIUS 4
#define ACTP_MAX_DATA_BITS 16
/* start bit + up to 4 priority bits + up to 8 id bits + data bits */
#define ACTP_MAX_BITS (13 + ACTP_MAX_DATA_BITS)
/* The first round starts this long after t1: the BCS's t0 and t1
 * handlers run until ~650 us after t1 (docs/bips.md, "BCS event delays"). */
#define ACTP_FIRST_US 1000u
/* From the winner's poll of the frame phase's start to its STXON
 * (cc2420_send loading the TX FIFO): budgeted, measured in docs/bips.md. */
#define ACTP_SEND_US 200u

typedef enum {
    ACTP_OK = 0,
    ACTP_EINVAL,         /* a zero or out-of-range field (named in the text) */
    ACTP_ENOREGION,      /* the BCS configuration has no ACTP region */
    ACTP_EREGION_SHORT,  /* an ACTP region cannot hold one round */
    ACTP_STATUS_COUNT
} actp_status;

const char *actp_status_name(actp_status s);

typedef struct {
    uint8_t prio_bits; /* 0..4: a TO priority above 2^prio_bits - 1 is clipped (counted) */
    uint8_t id_bits;   /* 1..8: node ids must be below 2^id_bits */
    uint8_t radius;    /* arbitration radius in hops, 1..ACTP_MAX_RADIUS */
    uint8_t max_len;   /* MPDU bytes (header + payload, FCS excluded) a frame phase holds */
    uint8_t data_bits; /* 0..16 payload bits transferred by bursts after the id */
    const tern_endpoint *value_to; /* each round's transferred value (NULL: nobody) */
    uint16_t node_id;
} actp_config;

/* The payload of a value message (a heap block): what the round's bits
 * said, as every node within the radius perceived them. */
typedef struct {
    uint8_t region;  /* the region id */
    uint8_t round;   /* in the region */
    uint8_t prio;
    uint16_t winner; /* node id */
    uint16_t data;   /* data_bits of the winner's payload */
} actp_value;

/* What actp_init derived (microseconds). */
typedef struct {
    uint8_t n_bits;
    uint32_t burst_us, slot_us, bit_us, lead_us, arb_us, frame_us, round_us;
} actp_timing;

typedef struct {
    actp_status code;
    char text[64];
} actp_error;

typedef struct {
    uint16_t rounds;      /* rounds run (every node, contending or not) */
    uint16_t contended;   /* rounds this node contended in */
    uint16_t won;         /* ... and won (its frame then sent) */
    uint16_t lost;        /* ... and lost: the frame went back to the mux */
    uint16_t busy;        /* rounds whose start bit was dominant: someone within the radius won */
    uint16_t bursts;      /* own dominant bits sent */
    uint16_t relayed;     /* bursts sent to pass a dominant bit on (cooperation) */
    uint16_t late;        /* a round's handler came too late to take part: round skipped */
    uint16_t send_failed; /* cc2420_burst_on or cc2420_send refused */
    uint16_t sent;        /* frames on air completely */
    uint16_t tx_failed;   /* a frame that failed on air */
    uint16_t overrun;     /* a frame still on air at t2 (must stay 0) */
    uint16_t prio_clipped;/* a TO priority too large for prio_bits */
    uint16_t rx;          /* data frames passed to the mux */
    uint16_t agree;       /* received frames whose source is the id the arbitration transferred */
    uint16_t disagree;    /* ... and those whose source is not (must stay 0) */
    uint16_t value_lost;  /* a value message that could not be posted (heap, queue) */
    uint32_t value;       /* the last round's value (all n_bits) as this node perceived it */
    uint16_t max_entry;   /* the largest delay from a round's start to its handler (ticks) */
} actp_counters;

extern const bcs_mac mac_actp;

/* Check against the BCS configuration (every ACTP region holds at least
 * one round), derive the timing, keep the configuration. Before
 * bcs_start. */
actp_status actp_init(const actp_config *cfg, const bcs_config *bcs, actp_error *err);
const actp_timing *actp_timing_of(void);
const actp_counters *actp_stats(void);

#endif
