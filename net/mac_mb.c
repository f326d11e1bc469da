/* MB: mode-based slots with fast mode-signaling (mac_mb.h). Runs at
 * interrupt level: the BCS calls configure/start/stop, the MAC timer
 * channel opens each slot, and its handler does the slot's whole signaling
 * by polling (black bursts must start within microseconds of their time,
 * net/blackburst.h), then the winner's cc2420_send. The radio reports the
 * frame's end (tx_done), which arms the next slot.
 *
 * Times inside a region are 32-bit tick deltas on the low half of the
 * clock (port_counter_read), as in BBS and RB. */
#include "mac_mb.h"
#include "bcs_timer.h"
#include "blackburst.h"
#include "mac_common.h"
#include "mux.h"
#include "tern/port.h"
#include "tern/time.h"

/* The slot's timer fires this long before the first thing the handler must
 * do on time (the BCS timer's entry varies by ~75 us with what the CPU was
 * doing: docs/bips.md); the handler then polls the clock. */
#define EARLY_US 400u
#define NO_MODE 0xFF

typedef enum { MB_IDLE, MB_WAIT, MB_TX } mb_state;

static const mb_config *cfg;
static mb_counters counters;
static const bcs_run *run;
static const mb_schedule *sched; /* the running region's */
static uint8_t n_bits;           /* the running schedule's signaling bits */

/* Tick values computed once in mb_init: bcs_us_to_ticks divides 64-bit
 * numbers, thousands of cycles a slot's path must not spend. */
static struct {
    uint32_t window, listen, hop_budget, relay, burst, off, early, start_ahead;
    uint32_t lead[2]; /* without signaling (one mode), with it */
} tk;
static uint32_t slot_ticks_of[MB_MAX_SCHEDULES];
static uint32_t slot_ticks, lead_ticks; /* the running region's */
static uint32_t byte_ticks, turnaround_ticks;

static mux_entry *cur; /* reserved in the mux until sent or given back */
static uint8_t slot;   /* the slot armed or being sent in */
static uint8_t state;  /* mb_state */
static uint8_t decided[MB_MAX_SLOTS]; /* the running region's slots' modes (NO_MODE: not known) */

const mb_counters *mb_stats(void) { return &counters; }

static uint8_t bits_for(uint8_t n_modes) { return n_modes <= 1 ? 0 : n_modes <= 2 ? 1 : 2; }

static uint32_t max32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* --- Timing ----------------------------------------------------------------------------- */

/* Why these durations (all nodes' local slot starts within d = d_maxOffset
 * of each other; a CC2420's CCA turns busy up to BB_CCA_US after energy
 * starts and clear as long after it ends; after its own burst a node hears
 * again BB_RX_AGAIN_US later):
 *  - a bit's energy starts at most d after the earliest local bit start
 *    (initiators) plus (n_hops - 1) relays of at most hop_us each;
 *  - a listener polls CCA from its bit start - d until that latest start +
 *    the CCA delay (its clock may be d late): listen = 2d + (n-1) hop + CCA;
 *  - W keeps a bit's energy and CCA tail out of every node's next window
 *    (2d + burst + CCA) and lets every relay listen again before the next
 *    bit's earliest energy (d + burst + burst_off's writes + RX_AGAIN),
 *    plus the relays;
 *  - lead does the same for the previous slot's frame, which ends at its
 *    sender's slot end, up to d after the earliest node's. */
void mb_timing_of(uint32_t d, uint8_t n_hops, uint8_t n_modes, uint8_t max_len, mb_timing *t)
{
    uint8_t bits = bits_for(n_modes);
    uint32_t hops = n_hops ? n_hops - 1u : 0u;
    t->hop_us = BB_CCA_US + MB_RELAY_US + MB_SLOP_US;
    t->window_us = max32(2 * d + MB_BURST_US + BB_CCA_US, d + MB_BURST_US + MB_OFF_US + BB_RX_AGAIN_US) +
                   hops * t->hop_us + MB_SLOP_US;
    t->lead_us = bits ? max32(2 * d + BB_CCA_US, d + BB_RX_AGAIN_US) + MB_SLOP_US : d;
    t->signal_us = t->lead_us + bits * t->window_us;
    t->air_us = mac_air_us(max_len);
    uint32_t d_stop = d > BB_TURNAROUND_US ? d : BB_TURNAROUND_US; /* bcs_d_stop_us */
    t->region_min_us = d + t->signal_us + t->air_us + d_stop;
    t->slot_us = t->signal_us + MB_SEND_MARGIN_US + t->air_us;
}

/* --- Validation ------------------------------------------------------------------ */

static mb_status refuse(mb_error *err, mb_status code, int schedule, const TERN_ROM char *why)
{
    if (err) {
        err->code = code;
        err->schedule = (int8_t)schedule;
        mac_refusal_text(err->text, sizeof err->text, schedule, why);
    }
    return code;
}

static const mb_schedule *find(const mb_config *c, uint8_t region_id)
{
    for (uint8_t i = 0; i < c->n_schedules; i++)
        if (c->schedules[i].region_id == region_id)
            return &c->schedules[i];
    return NULL;
}

mb_status mb_init(const mb_config *c, const bcs_config *bcs, mb_error *err)
{
    if (!c || !bcs || !c->schedules || c->n_schedules == 0)
        return refuse(err, MB_EINVAL, -1, TERN_ROM_STR("no schedules"));
    if (c->n_schedules > MB_MAX_SCHEDULES)
        return refuse(err, MB_EINVAL, -1, TERN_ROM_STR("more than 2 schedules"));
    if (c->n_hops == 0 || c->n_hops > MB_MAX_HOPS)
        return refuse(err, MB_EINVAL, -1, TERN_ROM_STR("n_hops not in 1..4"));
    uint16_t scheduled = 0;
    for (int i = 0; i < c->n_schedules; i++) {
        const mb_schedule *s = &c->schedules[i];
        if (s->n_slots == 0 || s->n_slots > MB_MAX_SLOTS || !s->senders)
            return refuse(err, MB_EINVAL, i, TERN_ROM_STR("n_slots not in 1..16, or no senders"));
        if (s->n_modes == 0 || s->n_modes > MB_MAX_MODES)
            return refuse(err, MB_EINVAL, i, TERN_ROM_STR("n_modes not in 1..4"));
        if (s->max_len == 0 || s->max_len > MAC_MAX_MPDU)
            return refuse(err, MB_EINVAL, i, TERN_ROM_STR("max_len not in 1..125"));
        mb_timing t;
        mb_timing_of(bcs->max_offset_us, c->n_hops, s->n_modes, s->max_len, &t);
        if (s->slot_us < t.slot_us)
            return refuse(err, MB_ESLOT_SHORT, i,
                          TERN_ROM_STR("slot_us < lead + signaling + margin + max_len frame"));
        for (int j = 0; j < i; j++)
            if (c->schedules[j].region_id == s->region_id)
                return refuse(err, MB_EDUPLICATE, i, TERN_ROM_STR("region id scheduled twice"));
        uint32_t usable = mac_min_usable_us(bcs, BCS_MAC_MB, s->region_id);
        if (usable == UINT32_MAX)
            return refuse(err, MB_ENOREGION, i, TERN_ROM_STR("no MB region has this id"));
        if ((uint32_t)s->n_slots * s->slot_us > usable)
            return refuse(err, MB_EREGION_SHORT, i,
                          TERN_ROM_STR("n_slots * slot_us > t2 - t1 of a region"));
        scheduled |= (uint16_t)(1u << s->region_id); /* < BCS_REGION_IDS: a region has it */
        slot_ticks_of[i] = bcs_us_to_ticks(s->slot_us);
    }
    if (mac_region_ids(bcs, BCS_MAC_MB) & ~scheduled)
        return refuse(err, MB_ENOSCHEDULE, -1, TERN_ROM_STR("an MB region has no schedule"));
    uint32_t d = bcs->max_offset_us;
    mb_timing t0, t1;
    mb_timing_of(d, c->n_hops, 1, 1, &t0);
    mb_timing_of(d, c->n_hops, 2, 1, &t1);
    tk.lead[0] = bcs_us_to_ticks(t0.lead_us);
    tk.lead[1] = bcs_us_to_ticks(t1.lead_us);
    tk.window = bcs_us_to_ticks(t1.window_us);
    tk.off = bcs_us_to_ticks(d);
    /* a listener: from bit start - d to the latest relay's start + CCA */
    tk.listen = bcs_us_to_ticks(2 * d + (c->n_hops - 1u) * t1.hop_us + BB_CCA_US + MB_SLOP_US);
    /* a relay must start within the chain's budget: n_hops - 1 relays
     * after the latest initiator */
    tk.hop_budget = bcs_us_to_ticks(d + (c->n_hops - 1u) * t1.hop_us);
    tk.relay = bcs_us_to_ticks(MB_RELAY_US);
    tk.burst = bcs_us_to_ticks(MB_BURST_US);
    tk.early = bcs_us_to_ticks(EARLY_US);
    /* the handler must run before min(signaling - d, signaling - strobe lead) */
    tk.start_ahead = bcs_us_to_ticks(max32(d, BB_TURNAROUND_US + BB_ON_US));
    bb_init();
    byte_ticks = bcs_us_to_ticks(MAC_BYTE_US);
    turnaround_ticks = bcs_us_to_ticks(BB_TURNAROUND_US);
    cfg = c;
    return MB_OK;
}

/* --- Slots --------------------------------------------------------------------------- */

static uint16_t sender(uint8_t k, uint8_t m) { return sched->senders[(uint16_t)k * sched->n_modes + m]; }

static bool anyone(uint8_t k)
{
    for (uint8_t m = 0; m < sched->n_modes; m++)
        if (sender(k, m) != MB_NONE)
            return true;
    return false;
}

static uint32_t slot_start(uint8_t k) { return (uint32_t)run->t1 + (uint32_t)k * slot_ticks; }
static uint32_t signal_start(uint8_t k) { return slot_start(k) + lead_ticks; }

/* Arm the timer for the next slot from `from` on that has a sender in some
 * mode, or go idle keeping nothing reserved. */
static void arm_from(uint8_t from)
{
    while (from < sched->n_slots && !anyone(from))
        from++;
    slot = from;
    if (slot >= sched->n_slots) {
        if (cur)
            mux_release(cur);
        cur = NULL;
        state = MB_IDLE;
        return;
    }
    state = MB_WAIT;
    bcs_timer_set(BCS_TIMER_MAC, signal_start(slot) - tk.start_ahead - tk.early);
}

static void mb_configure(const bcs_run *r, mux_entry *first)
{
    run = r;
    sched = cfg ? find(cfg, r->region->id) : NULL;
    cur = first;
    state = MB_IDLE;
    for (uint8_t k = 0; k < MB_MAX_SLOTS; k++)
        decided[k] = NO_MODE;
    if (!sched) { /* cannot happen after mb_init; give the frame back */
        if (cur)
            mux_release(cur);
        cur = NULL;
        return;
    }
    slot_ticks = slot_ticks_of[sched - cfg->schedules];
    n_bits = bits_for(sched->n_modes);
    lead_ticks = tk.lead[n_bits ? 1 : 0];
    arm_from(0);
}

static void mb_start(void) {}

/* The mode this node requests in slot k for frame `e`: the highest mode
 * not above the frame's class in which the slot is this node's. */
static uint8_t request(uint8_t k, const mux_entry *e)
{
    if (!e)
        return NO_MODE;
    uint8_t m = mux_priority(e);
    if (m >= sched->n_modes)
        m = (uint8_t)(sched->n_modes - 1);
    for (;;) {
        if (sender(k, m) == cfg->node_id)
            return m;
        if (m == 0)
            return NO_MODE;
        m--;
    }
}

typedef enum { BIT_0, BIT_1, BIT_FAILED } bit_result;

/* One bit of binary countdown. `mine`: this node sends a 1. Returns the
 * bit as the network has it -- a burst sent, heard or relayed -- or
 * BIT_FAILED: this node's own burst did not go out, so it cannot tell
 * what the others decided and must stay silent in the slot. */
static bit_result signal_bit(uint32_t start, bool mine)
{
    bool late;
    if (mine) {
        if (bb_send(start, tk.burst, &late)) {
            counters.bursts++;
            return BIT_1;
        }
        if (late)
            counters.late++;
        else
            counters.tx_failed++;
        return BIT_FAILED;
    }
    bb_wait_until(start - tk.off);
    uint32_t at;
    if (!bb_detect(start - tk.off + tk.listen, &at))
        return BIT_0;
    /* Relay it unless the relay would start after the window's budget for
     * n_hops - 1 relays (then n_hops hops have heard it already). */
    if (cfg->n_hops > 1 && (int32_t)(at + tk.relay - (start + tk.hop_budget)) <= 0) {
        if (bb_send(at + tk.relay, tk.burst, &late))
            counters.relayed++;
        else if (late)
            counters.late++;
        else
            counters.tx_failed++;
    }
    return BIT_1;
}

static void send_data(void)
{
    if (cur->len > sched->max_len) {
        counters.too_long++;
        mux_done(cur, false, 0);
        cur = NULL;
        arm_from((uint8_t)(slot + 1));
        return;
    }
    if (cc2420_send(cur->mpdu, cur->len, false) != CC2420_OK) {
        counters.tx_failed++;
        mux_done(cur, false, 0);
        cur = NULL;
        arm_from((uint8_t)(slot + 1));
        return;
    }
    state = MB_TX;
}

static void mb_timer(void)
{
    if (state != MB_WAIT)
        return;
    uint32_t now = port_counter_read();
    uint32_t sig = signal_start(slot);
    uint32_t due = sig - tk.start_ahead - tk.early;
    uint32_t delay = now - due;
    if ((int32_t)delay > 0 && delay > counters.max_delay)
        counters.max_delay = delay > 0xFFFF ? 0xFFFF : (uint16_t)delay;
    if ((int32_t)(now - (sig - tk.start_ahead)) > 0) {
        counters.late++; /* cannot take part: neither signal nor send */
        arm_from((uint8_t)(slot + 1));
        return;
    }
    /* The best frame now: an alarm queued since the last pick must not
     * wait behind a periodic frame this slot cannot carry. */
    if (cur)
        mux_release(cur);
    cur = mux_pick(run->region->id);
    uint8_t req = request(slot, cur);
    bool contending = req != NO_MODE;
    counters.slots++;
    if (contending)
        counters.requested++;
    uint8_t mode = 0;
    bool failed = false;
    for (int8_t b = (int8_t)(n_bits - 1); b >= 0; b--) {
        uint32_t start = sig + (uint32_t)(n_bits - 1 - b) * tk.window;
        bool mine = contending && (req >> b & 1u);
        bit_result one = signal_bit(start, mine);
        if (one == BIT_FAILED) {
            failed = true; /* keeps listening and relaying the other bits */
            contending = false;
            continue;
        }
        if (one == BIT_1)
            mode |= (uint8_t)(1u << b);
        if (contending && one == BIT_1 && !mine)
            contending = false; /* a higher mode is signaled */
    }
    if (failed) { /* the mode is not known here: silent, the frame kept */
        arm_from((uint8_t)(slot + 1));
        return;
    }
    decided[slot] = mode;
    if (mode < MB_MAX_MODES)
        counters.mode[mode]++;
    if (cfg->decided)
        cfg->decided(slot, mode);
    if (req != NO_MODE && !contending)
        counters.lost++;
    if (!contending || req != mode) {
        arm_from((uint8_t)(slot + 1)); /* keeps cur for a later slot */
        return;
    }
    counters.won++;
    /* Data after the last window on every node: the relays of the last
     * bit are over and their senders listen again. The frame must end by
     * the slot's end and by t2. */
    uint32_t data = sig + (uint32_t)n_bits * tk.window;
    bb_wait_until(data);
    uint32_t air = turnaround_ticks + (MAC_SHR_PHR_BYTES + cur->len + MAC_FCS_BYTES) * byte_ticks;
    uint32_t end = port_counter_read() + air;
    if ((int32_t)(end - (slot_start(slot) + slot_ticks)) > 0 || (int32_t)(end - (uint32_t)run->t2) > 0) {
        counters.late++;
        arm_from((uint8_t)(slot + 1));
        return;
    }
    send_data();
}

static void mb_tx_done(const cc2420_tx_result *r)
{
    if (state != MB_TX || !cur)
        return;
    mac_frame_done(&cur, r, &counters.sent, &counters.tx_failed);
    arm_from((uint8_t)(slot + 1));
}

static void mb_stop(void)
{
    mac_region_stop(&cur, state == MB_TX, &counters.overrun);
    state = MB_IDLE;
}

static void mb_rx(cc2420_rx_frame *f)
{
    counters.rx++;
    /* Only the decided mode's sender may send in a slot: the frame's slot
     * from its SFD time (its interrupt may come after the next slot's
     * signaling, which masks interrupts). Not checked where this node
     * did not take part in the signaling (late). */
    uint32_t k = ((uint32_t)f->sfd - (uint32_t)run->t1) / slot_ticks;
    if (f->sfd && k < sched->n_slots && decided[k] < sched->n_modes &&
        mux_frame_src(f) != sender((uint8_t)k, decided[k]))
        counters.rx_unexpected++;
    mux_rx(f, run->region->id);
}

const bcs_mac mac_mb = {
    .name = "MB",
    .configure = mb_configure,
    .start = mb_start,
    .stop = mb_stop,
    .tx_done = mb_tx_done,
    .rx = mb_rx,
    .timer = mb_timer,
};

const char *mb_status_name(mb_status s)
{
    static const char *const names[MB_STATUS_COUNT] = {
        [MB_OK] = "MB_OK",
        [MB_EINVAL] = "MB_EINVAL",
        [MB_ENOSCHEDULE] = "MB_ENOSCHEDULE",
        [MB_ENOREGION] = "MB_ENOREGION",
        [MB_EDUPLICATE] = "MB_EDUPLICATE",
        [MB_ESLOT_SHORT] = "MB_ESLOT_SHORT",
        [MB_EREGION_SHORT] = "MB_EREGION_SHORT",
    };
    return (unsigned)s < MB_STATUS_COUNT ? names[s] : "MB_E?";
}
