/* ACTP: binary countdown with black bursts in a slot region (mac_actp.h).
 *
 * Runs at interrupt level: the BCS calls configure/stop, the MAC timer
 * channel starts each round, whose arbitration phase is one handler
 * polling the clock and CCA; the winner's frame goes out from there and
 * its outcome comes back through tx_done. Times inside a round are 32-bit
 * tick deltas on the low half of the clock (port_counter_read). */
#include "mac_actp.h"
#include "bcs_timer.h"
#include "blackburst.h"
#include "mac_common.h"
#include "mux.h"
#include "tern/console.h"
#include "tern/mem.h"
#include "tern/task.h"
#include "tern/port.h"
#include "tern/time.h"

/* A burst lasts CCA's average and this much more, so that a receiver's
 * polling loop (a clock read between 16 CCA samples) sees it busy. */
#define BURST_MARGIN_US 32u
/* bb_detect: one pass of 16 samples and a clock read; also bb_send's
 * clock poll, by which a strobe may come late */
#define POLL_US 16u
#define RELAY_US 24u /* from a detection to the relay's strobe poll: this loop's bookkeeping */
/* The round's timer fires this long before the round's first action (a
 * burst's strobe or a listening window): the BCS timer's entry varies by
 * ~75 us with what the CPU was doing (docs/bips.md), more behind the
 * previous round's frame reception. */
#define EARLY_US 300u

static const actp_config *cfg;
static actp_timing timing;
static actp_counters counters;
static uint8_t rounds_of[BCS_REGION_IDS]; /* rounds an ACTP region of that id holds */
/* Tick figures computed once in actp_init: bcs_us_to_ticks divides 64-bit
 * numbers, thousands of cycles a round must not spend. */
static uint32_t slot_t, bit_t, burst_t, off_t, cca_t, lead_t, round_t, first_t, action_t;
static uint16_t id_mask, data_mask;
static uint8_t prio_max;

/* The running region. */
static const bcs_run *run;
static mux_entry *cur;    /* reserved in the mux: contending, or on air */
static bool tx_pending;   /* cur is on air: its outcome comes through tx_done */
static bool active;       /* rounds are armed */
static uint8_t round_no, n_rounds;

const actp_counters *actp_stats(void) { return &counters; }
const actp_timing *actp_timing_of(void) { return &timing; }

/* --- Validation and timing ---------------------------------------------------------- */

static actp_status refuse(actp_error *err, actp_status code, const TERN_ROM char *why)
{
    if (err) {
        err->code = code;
        mac_refusal_text(err->text, sizeof err->text, -1, why);
    }
    return code;
}

static uint32_t max3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* The slot, from the CC2420's timing (blackburst.h) and d_maxOffset
 * (`off`: any two nodes' clocks differ by at most that much):
 *   relay    a burst of slot s reaches a listener by its s + off and its
 *            CCA turns busy up to 128 us later (+ one polling pass); the
 *            relay's strobe is 33 + 192 us before its slot s + 1;
 *   no spill the burst of slot s ends by s + off + burst on a listener's
 *            clock and its CCA may stay busy 128 us more; slot s + 1's
 *            window opens at s + 1 - off;
 *   again    a sender's CCA is valid 24 + 320 us after its burst ends
 *            (which may be a poll late), before the next window it may
 *            need, slot s + 1 - off.
 * Rounded up to a symbol. */
static void derive(const actp_config *c, uint32_t off)
{
    uint32_t burst = BB_CCA_US + BURST_MARGIN_US;
    uint32_t relay = off + BB_CCA_US + POLL_US + RELAY_US + BB_ON_US + BB_TURNAROUND_US;
    uint32_t spill = 2 * off + burst + BB_CCA_US;
    uint32_t again = off + burst + POLL_US + BB_OFF_US + BB_RX_AGAIN_US;
    uint32_t slot = (max3(relay, spill, again) + BB_SYMBOL_US - 1) / BB_SYMBOL_US * BB_SYMBOL_US;
    uint32_t action = off > BB_TURNAROUND_US + BB_ON_US ? off : BB_TURNAROUND_US + BB_ON_US;
    timing.n_bits = (uint8_t)(1 + c->prio_bits + c->id_bits + c->data_bits);
    timing.burst_us = burst;
    timing.slot_us = slot;
    timing.bit_us = slot * c->radius;
    timing.lead_us = EARLY_US + action;
    timing.arb_us = timing.bit_us * timing.n_bits;
    /* the winner's send path and turnaround, the frame, its end reaching
     * the farthest clock, the winner listening again */
    timing.frame_us = ACTP_SEND_US + BB_TURNAROUND_US +
                      (MAC_SHR_PHR_BYTES + c->max_len + MAC_FCS_BYTES) * MAC_BYTE_US + off + BB_RX_AGAIN_US;
    timing.round_us = timing.lead_us + timing.arb_us + timing.frame_us;
    slot_t = bcs_us_to_ticks(slot);
    bit_t = slot_t * c->radius; /* the slots' own sum: no rounding apart */
    burst_t = bcs_us_to_ticks(burst);
    off_t = bcs_us_to_ticks(off);
    cca_t = bcs_us_to_ticks(BB_CCA_US);
    lead_t = bcs_us_to_ticks(timing.lead_us);
    round_t = bcs_us_to_ticks(timing.round_us);
    first_t = bcs_us_to_ticks(ACTP_FIRST_US);
    action_t = bcs_us_to_ticks(action);
}

actp_status actp_init(const actp_config *c, const bcs_config *bcs, actp_error *err)
{
    if (!c || !bcs)
        return refuse(err, ACTP_EINVAL, TERN_ROM_STR("no configuration"));
    if (c->prio_bits > 4 || c->id_bits == 0 || c->id_bits > 8)
        return refuse(err, ACTP_EINVAL, TERN_ROM_STR("prio_bits not in 0..4 or id_bits not in 1..8"));
    if (c->radius == 0 || c->radius > ACTP_MAX_RADIUS)
        return refuse(err, ACTP_EINVAL, TERN_ROM_STR("radius not in 1..4"));
    if (c->max_len < MUX_HDR_LEN || c->max_len > MAC_MAX_MPDU)
        return refuse(err, ACTP_EINVAL, TERN_ROM_STR("max_len not in 9..125"));
    if (c->node_id >> c->id_bits)
        return refuse(err, ACTP_EINVAL, TERN_ROM_STR("node_id does not fit id_bits"));
    if (c->data_bits > ACTP_MAX_DATA_BITS)
        return refuse(err, ACTP_EINVAL, TERN_ROM_STR("data_bits not in 0..16"));
    derive(c, bcs->max_offset_us);
    uint16_t ids = mac_region_ids(bcs, BCS_MAC_ACTP);
    if (!ids)
        return refuse(err, ACTP_ENOREGION, TERN_ROM_STR("no ACTP region"));
    for (uint8_t i = 0; i < BCS_REGION_IDS; i++) {
        rounds_of[i] = 0xFF;
        if (!(ids >> i & 1u))
            continue;
        /* rounds from t1 + ACTP_FIRST_US to t2 */
        uint32_t usable = mac_min_usable_us(bcs, BCS_MAC_ACTP, i);
        uint32_t n = usable > ACTP_FIRST_US ? (usable - ACTP_FIRST_US) / timing.round_us : 0;
        if (n == 0)
            return refuse(err, ACTP_EREGION_SHORT, TERN_ROM_STR("an ACTP region cannot hold one round"));
        rounds_of[i] = (uint8_t)(n > 0xFE ? 0xFE : n);
    }
    id_mask = (uint16_t)((1u << c->id_bits) - 1);
    data_mask = (uint16_t)((1ul << c->data_bits) - 1);
    prio_max = (uint8_t)((1u << c->prio_bits) - 1);
    bb_init();
    cfg = c;
    return ACTP_OK;
}

/* --- Rounds ------------------------------------------------------------------------------ */

static uint32_t round_start(uint8_t k) { return (uint32_t)run->t1 + first_t + (uint32_t)k * round_t; }

static void arm_next(void)
{
    round_no++;
    active = round_no < n_rounds;
    if (active)
        bcs_timer_set(BCS_TIMER_MAC, run->t1 + first_t + (uint32_t)round_no * round_t);
}

static void actp_configure(const bcs_run *r, mux_entry *first)
{
    run = r;
    cur = first;
    tx_pending = false;
    round_no = 0;
    n_rounds = cfg ? rounds_of[r->region->id] : 0;
    active = n_rounds != 0 && n_rounds != 0xFF;
    if (!active) { /* cannot happen after actp_init; give the frame back */
        if (cur)
            mux_release(cur);
        cur = NULL;
        return;
    }
    bcs_timer_set(BCS_TIMER_MAC, r->t1 + first_t);
}

static void actp_start(void) {}

/* This node's value for the frame it holds: start bit, priority, id, and
 * the data bits from the payload's first two bytes. */
static uint32_t value_of(mux_entry *e)
{
    uint8_t prio = mux_priority(e);
    if (prio > prio_max) {
        counters.prio_clipped++;
        prio = prio_max;
    }
    uint32_t v = (uint32_t)1 << (cfg->prio_bits + cfg->id_bits) | (uint32_t)prio << cfg->id_bits | cfg->node_id;
    if (cfg->data_bits) {
        const uint8_t *p = e->mpdu + MUX_HDR_LEN;
        uint8_t n = (uint8_t)(e->len - MUX_HDR_LEN);
        uint16_t data = (uint16_t)((n > 0 ? p[0] : 0) | (n > 1 ? p[1] : 0) << 8);
        v = v << cfg->data_bits | (data & data_mask);
    }
    return v;
}

/* Every node within the radius learnt the round's bits: to value_to. */
static void post_value(uint32_t seen)
{
    if (!cfg->value_to)
        return;
    actp_value *m = tern_alloc(sizeof *m);
    if (!m) {
        counters.value_lost++;
        return;
    }
    uint32_t arb = seen >> cfg->data_bits;
    m->region = run->region->id;
    m->round = round_no;
    m->prio = (uint8_t)(arb >> cfg->id_bits & prio_max);
    m->winner = (uint16_t)(arb & id_mask);
    m->data = (uint16_t)(seen & data_mask);
    if (tern_send(cfg->value_to->task, cfg->value_to->port, m, sizeof *m, TERN_MSG_HEAP) != TERN_OK) {
        counters.value_lost++;
        tern_free(m);
    }
}

/* One bit: `radius` burst slots from t. Answers whether the bit was
 * dominant within the radius (sent or heard). */
static bool bit_round(uint32_t t, bool mine)
{
    bool sent = false, heard = false;
    uint8_t heard_in = 0;
    for (uint8_t s = 0; s < cfg->radius; s++, t += slot_t) {
        bool relay = heard && !sent && (uint8_t)(heard_in + 1) == s;
        if ((s == 0 && mine) || relay) {
            bool late;
            if (!bb_send(t, burst_t, &late))
                counters.send_failed++; /* late included: the round's start check makes it rare */
            else if (relay)
                counters.relayed++;
            else
                counters.bursts++;
            sent = true;
        } else if (!sent && !heard) {
            uint32_t at;
            bb_wait_until(t - off_t);
            if (bb_detect(t + off_t + cca_t, &at)) {
                heard = true;
                heard_in = s;
            }
        }
    }
    return sent || heard;
}

static void actp_timer(void)
{
    if (!active)
        return;
    uint32_t begin = round_start(round_no);
    uint32_t entry = port_counter_read() - begin;
    if ((int32_t)entry > 0 && entry > counters.max_entry)
        counters.max_entry = entry > 0xFFFF ? 0xFFFF : (uint16_t)entry;
    counters.rounds++;
    if (!cur && !tx_pending)
        cur = mux_pick(run->region->id);
    if (cur && !tx_pending && cur->len > cfg->max_len) {
        counters.send_failed++;
        mux_done(cur, false, 0); /* a failed try: MUX_EFAILED after the retries */
        cur = NULL;
    }
    bool contending = cur && !tx_pending;
    uint32_t value = contending ? value_of(cur) : 0;
    uint32_t t = begin + lead_t; /* bit 0, slot 0 */
    if ((int32_t)(port_counter_read() - (t - action_t)) > 0) {
        counters.late++;
        if (contending) {
            mux_release(cur);
            cur = NULL;
        }
        arm_next();
        return;
    }
    if (contending)
        counters.contended++;
    uint32_t seen = 0;
    for (int8_t b = (int8_t)(timing.n_bits - 1); b >= 0; b--, t += bit_t) {
        bool mine = contending && (value >> b & 1u);
        bool dominant = bit_round(t, mine);
        if (!seen && !dominant) {
            /* no start bit: no contender within the radius, so no later
             * bit either (relays reach `radius` hops only): the rest of
             * the round is idle, and the CPU is given back */
            counters.value = 0;
            arm_next();
            return;
        }
        seen = seen << 1 | dominant;
        if (contending && !mine && dominant)
            contending = false; /* a higher value within the radius: withdraw */
    }
    counters.value = seen; /* its start bit set: the idle rounds ended above */
    counters.busy++;
    post_value(seen);
    if (cur && !tx_pending) {
        if (contending) {
            counters.won++;
            bb_wait_until(t); /* the frame phase */
            if (cc2420_send(cur->mpdu, cur->len, false) == CC2420_OK) {
                tx_pending = true;
            } else {
                counters.send_failed++;
                mux_done(cur, false, 0);
                cur = NULL;
            }
        } else {
            counters.lost++;
            mux_release(cur); /* contends again next round, or in the next region */
            cur = NULL;
        }
    }
    arm_next();
}

static void actp_tx_done(const cc2420_tx_result *r)
{
    if (!tx_pending || !cur)
        return;
    mac_frame_done(&cur, r, &counters.sent, &counters.tx_failed);
    tx_pending = false;
}

static void actp_stop(void)
{
    mac_region_stop(&cur, tx_pending, &counters.overrun);
    tx_pending = false;
    active = false;
}

static void actp_rx(cc2420_rx_frame *f)
{
    counters.rx++;
    /* the arbitration transferred the winner's id to every node within the
     * radius: the frame's source must be it */
    if (f->len >= MUX_HDR_LEN && counters.value >> (timing.n_bits - 1)) {
        if (mux_frame_src(f) == (counters.value >> cfg->data_bits & id_mask))
            counters.agree++;
        else
            counters.disagree++;
    }
    mux_rx(f, run->region->id);
}

const bcs_mac mac_actp = {
    .name = "ACTP",
    .configure = actp_configure,
    .start = actp_start,
    .stop = actp_stop,
    .tx_done = actp_tx_done,
    .rx = actp_rx,
    .timer = actp_timer,
};

const char *actp_status_name(actp_status s)
{
    static const char *const names[ACTP_STATUS_COUNT] = {
        [ACTP_OK] = "ACTP_OK",
        [ACTP_EINVAL] = "ACTP_EINVAL",
        [ACTP_ENOREGION] = "ACTP_ENOREGION",
        [ACTP_EREGION_SHORT] = "ACTP_EREGION_SHORT",
    };
    return (unsigned)s < ACTP_STATUS_COUNT ? names[s] : "ACTP_E?";
}
