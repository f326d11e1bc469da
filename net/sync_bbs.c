/* BBS: black-burst synchronization over hops (sync_bbs.h).
 *
 * Times inside a sync phase are 32-bit tick deltas on the low half of the
 * clock (port_counter_read): the phase lasts milliseconds, and the 64-bit
 * reads of tern_now would cost hundreds of cycles each on the AVR. */
#include "sync_bbs.h"
#include "bcs_timer.h"
#include "mac_common.h" /* mac_refusal_text */
#include "tern/console.h"
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/time.h"

#define TURNAROUND_US 192u /* STXON -> energy on the air */
#define SYMBOL_US 16u      /* SRFOFF ends a burst one symbol later */
/* A timer is set this long before a step that must be exact; the handler
 * then polls the clock (entry into the BCS's timer interrupt: ~75 us). */
#define EARLY_US 300u
/* cc2420_burst_on writes MDMCTRL1 and DACTST before its STXON: the
 * strobe goes out this much after the call (measured under tern-sim as
 * the carrier's start against the clock poll's target). */
#define BURST_ON_US 33u
/* From the energy reaching a receiver to its clock read (the polling
 * loop, the counter read), and what is left of the sender's start: one
 * figure, since only their sum shifts each hop. Measured under tern-sim:
 * the hop-1 node's region starts against the master's (docs/bips.md). */
#define DETECT_US 20u
#define NOT_KNOWN 0xFF

typedef enum { B_IDLE, B_LISTEN, B_SEND } bbs_step;

static const bbs_config *cfg;
static uint8_t n_codes, n_slots;
static bool master;
static sync_bbs_counters counters;
static uint32_t lead_t, round_t, burst_t, step_t, window_t, turnaround_t, early_t, detect_t, symbol_t;
static uint32_t burst_on_t;

/* The running phase. */
static uint8_t step;
static uint8_t slot_index;
static uint32_t phase_start; /* low half of the macro slot's start */
static uint32_t listen_until;

const sync_bbs_counters *sync_bbs_stats(void) { return &counters; }

static bbs_status refuse(bbs_error *err, bbs_status code, const TERN_ROM char *why)
{
    if (err) {
        err->code = code;
        mac_refusal_text(err->text, sizeof err->text, -1, why);
    }
    return code;
}

bbs_status sync_bbs_init(const bbs_config *c, const bcs_config *bcs, bool is_master, bbs_error *err)
{
    if (!c || !bcs)
        return refuse(err, BBS_EINVAL, TERN_ROM_STR("no configuration"));
    if (c->n_rounds == 0 || c->n_rounds > BBS_MAX_ROUNDS)
        return refuse(err, BBS_EINVAL, TERN_ROM_STR("n_rounds not in 1..4"));
    if (c->burst_us < 64 || c->step_us < 64 || c->window_us == 0)
        return refuse(err, BBS_EINVAL, TERN_ROM_STR("burst_us, step_us < 64 us or window_us 0"));
    /* The master's round-0 burst is timed from a timer EARLY_US before
     * its STXON, which must come after the phase's start. */
    if (c->lead_us < TURNAROUND_US + EARLY_US + c->window_us)
        return refuse(err, BBS_EINVAL, TERN_ROM_STR("lead_us < 192 + 300 us + window_us"));
    uint32_t codes = (uint32_t)c->n_rounds * bcs->n_slots;
    uint32_t longest = c->burst_us + (codes - 1) * c->step_us + SYMBOL_US;
    /* A round: the longest burst, its sender back in RX, and the next
     * sender's early timer, all before the next round's STXON. */
    if (c->round_us < longest + c->window_us + TURNAROUND_US + EARLY_US)
        return refuse(err, BBS_EROUND_SHORT,
                      TERN_ROM_STR("round_us < longest burst + window + 192 + 300 us"));
    if (c->lead_us + (uint32_t)c->n_rounds * c->round_us > bcs->sync_us)
        return refuse(err, BBS_ETOO_LONG, TERN_ROM_STR("lead_us + n_rounds * round_us > sync_us"));
    cfg = c;
    master = is_master;
    n_slots = bcs->n_slots;
    n_codes = (uint8_t)codes;
    counters.hop = is_master ? 0 : NOT_KNOWN;
    lead_t = bcs_us_to_ticks(c->lead_us);
    round_t = bcs_us_to_ticks(c->round_us);
    burst_t = bcs_us_to_ticks(c->burst_us);
    step_t = bcs_us_to_ticks(c->step_us);
    window_t = bcs_us_to_ticks(c->window_us);
    turnaround_t = bcs_us_to_ticks(TURNAROUND_US);
    early_t = bcs_us_to_ticks(EARLY_US);
    detect_t = bcs_us_to_ticks(DETECT_US);
    symbol_t = bcs_us_to_ticks(SYMBOL_US);
    burst_on_t = bcs_us_to_ticks(BURST_ON_US);
    return BBS_OK;
}

/* The start of round r of the phase starting at `start`. */
static uint32_t round_start(uint32_t start, uint8_t r) { return start + lead_t + r * round_t; }

static void wait_until(uint32_t t)
{
    while ((int32_t)(port_counter_read() - t) < 0)
        ;
}

/* --- Sending: our round's burst, timed by polling the clock ------------------------ */

static void plan_send(void)
{
    step = B_SEND;
    uint8_t r = counters.hop; /* hop h sends in round h (the master, hop 0, in round 0) */
    bcs_timer_set(BCS_TIMER_MAC, round_start(phase_start, r) - turnaround_t - burst_on_t - early_t);
}

static void send(void)
{
    uint8_t r = counters.hop;
    uint32_t on_air = round_start(phase_start, r);
    uint32_t strobe_at = on_air - turnaround_t - burst_on_t; /* the call, that is */
    step = B_IDLE;
    if ((int32_t)(port_counter_read() - strobe_at) > 0) {
        counters.late_send++;
        return;
    }
    uint8_t code = (uint8_t)(r * n_slots + slot_index);
    wait_until(strobe_at);
    if (cc2420_burst_on() != CC2420_OK) {
        counters.send_failed++;
        return;
    }
    /* SRFOFF stops the carrier a symbol after the strobe */
    wait_until(on_air + burst_t + code * step_t - symbol_t);
    (void)cc2420_burst_off();
    counters.sent++;
}

/* --- Listening, synchronized: a window around the expected burst ------------------- */

/* Polls CCA until it is busy or `until` passes; returns the clock at the
 * busy sample (true) or false. Interrupts are masked (a handler). */
static bool poll_busy(uint32_t until, uint32_t *at)
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

static void synchronized_to(uint32_t detected, uint8_t r, uint8_t slot)
{
    uint32_t start = detected - detect_t - lead_t - r * round_t;
    int32_t corr = (int32_t)(start - phase_start);
    counters.last_corr = corr;
    uint32_t mag = corr < 0 ? (uint32_t)-corr : (uint32_t)corr;
    if (mag > counters.max_corr)
        counters.max_corr = mag;
    counters.heard++;
    phase_start = start;
    /* the 64-bit start: now, less how long ago it was */
    tern_time now = tern_now();
    bcs_sync_adjust(now - (uint32_t)((uint32_t)now - start), slot);
}

static void listen(void)
{
    uint8_t r = (uint8_t)(counters.hop - 1);
    uint32_t at;
    step = B_IDLE;
    if (!poll_busy(listen_until, &at)) {
        counters.missed++;
        return;
    }
    synchronized_to(at, r, slot_index);
    if (counters.hop < cfg->n_rounds)
        plan_send();
}

/* --- The BCS's hooks ------------------------------------------------------------------ */

static void bbs_phase(tern_time start, uint8_t slot)
{
    if (!cfg || counters.hop == NOT_KNOWN)
        return;
    phase_start = (uint32_t)start;
    slot_index = slot;
    if (master) {
        plan_send();
        return;
    }
    uint32_t expected = round_start(phase_start, (uint8_t)(counters.hop - 1));
    listen_until = expected + window_t;
    step = B_LISTEN;
    bcs_timer_set(BCS_TIMER_MAC, expected - window_t - early_t);
}

static void bbs_timer(void)
{
    if (step == B_SEND)
        send();
    else if (step == B_LISTEN)
        listen();
}

/* BBS sends no frames: a beacon frame is someone else's, and nothing is
 * waited for. */
static void bbs_rx(cc2420_rx_frame *f) { tern_free(f); }
static void bbs_tx_done(const cc2420_tx_result *r) { (void)r; }

const bcs_sync sync_bbs = {
    .name = "BBS",
    .phase = bbs_phase,
    .rx = bbs_rx,
    .tx_done = bbs_tx_done,
    .timer = bbs_timer,
};

/* --- Acquisition, from a task --------------------------------------------------------- */

/* One CCA sample and the clock, together. */
static bool sample(uint32_t *t)
{
    tern_irq_state s = port_irq_save();
    bool clear = cc2420_channel_clear();
    *t = port_counter_read();
    port_irq_restore(s);
    return clear;
}

bbs_status sync_bbs_acquire(uint32_t timeout_ms)
{
    if (!cfg || master)
        return BBS_ESTATE;
    if (timeout_ms == 0 || timeout_ms > 200000u)
        return BBS_EINVAL;
    /* 32-bit ticks: a timeout below 2^31 ticks (4.8 min at 7.37 MHz);
     * tern_now's 64-bit read would blind the loop for ~75 us. */
    uint32_t timeout = (tern_clock_hz() / 1000u) * timeout_ms;
    uint32_t t, listening_since, began;
    (void)sample(&listening_since);
    began = listening_since;
    while ((int32_t)((t = port_counter_read()) - began) < (int32_t)timeout) {
        if (sample(&t))
            continue;
        uint32_t on = t;
        while (!sample(&t) && (int32_t)(t - on) < (int32_t)(burst_t + n_codes * step_t))
            ;
        uint32_t len = t - on; /* burst_us + code * step_us, + the symbol after SRFOFF */
        uint32_t code = (len + step_t / 2 - burst_t) / step_t;
        if (len + step_t / 2 < burst_t || code >= n_codes) {
            counters.bad_code++;
            listening_since = t;
            continue;
        }
        uint8_t r = (uint8_t)(code / n_slots);
        uint32_t start = on - detect_t - lead_t - r * round_t;
        if ((int32_t)(listening_since - (start + lead_t - window_t)) > 0) {
            counters.mid_phase++; /* an earlier round may have passed unheard */
            listening_since = t;
            continue;
        }
        counters.hop = (uint8_t)(r + 1);
        phase_start = start;
        tern_irq_state s = port_irq_save();
        tern_time now = tern_now();
        bcs_sync_adjust(now - (uint32_t)((uint32_t)now - start), (uint8_t)(code % n_slots));
        port_irq_restore(s);
        counters.max_corr = 0;
        return BBS_OK;
    }
    return BBS_ENOSYNC;
}

const char *bbs_status_name(bbs_status s)
{
    static const char *const names[BBS_STATUS_COUNT] = {
        [BBS_OK] = "BBS_OK",
        [BBS_EINVAL] = "BBS_EINVAL",
        [BBS_EROUND_SHORT] = "BBS_EROUND_SHORT",
        [BBS_ETOO_LONG] = "BBS_ETOO_LONG",
        [BBS_ENOSYNC] = "BBS_ENOSYNC",
        [BBS_ESTATE] = "BBS_ESTATE",
    };
    return (unsigned)s < BBS_STATUS_COUNT ? names[s] : "BBS_E?";
}
