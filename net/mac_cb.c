/* CB: CSMA/CA in a slot region (mac_cb.h). Runs entirely at interrupt
 * level, driven by the BCS (configure, start, stop), its own timer channel
 * (backoffs) and the radio (transmission outcomes). */
#include "mac_cb.h"
#include "bcs_timer.h"
#include "mac_common.h"
#include "mux.h"
#include "tern/port.h"
#include "tern/time.h"

#define BACKOFF_US 320u    /* 20 symbols */

typedef enum { CB_IDLE, CB_WAIT, CB_BACKOFF, CB_TX } cb_state;

static const cb_config *cfg;
static cb_counters counters;
static const bcs_run *run;
static mux_entry *cur;  /* the frame being tried, reserved in the mux */
static uint8_t state;   /* cb_state */
static bool active;     /* between t1 and t2 of a region */
static uint8_t cw, backoffs;
static uint16_t rnd;
static uint32_t backoff_ticks;

void cb_init(const cb_config *c)
{
    cfg = c;
    rnd = c->seed ? c->seed : 1;
    backoff_ticks = 0;
}

const cb_counters *cb_stats(void) { return &counters; }

/* xorshift16: enough for backoff draws, a few cycles. */
static uint16_t draw(void)
{
    rnd ^= (uint16_t)(rnd << 7);
    rnd ^= (uint16_t)(rnd >> 9);
    rnd ^= (uint16_t)(rnd << 8);
    return rnd;
}

static void backoff(void)
{
    uint8_t slots = (uint8_t)(draw() % cw);
    state = CB_BACKOFF;
    bcs_timer_set(BCS_TIMER_MAC, tern_now() + (uint32_t)slots * backoff_ticks);
}

/* A fresh frame from the mux, or nothing more to do in this region. */
static void next(mux_entry *e)
{
    cur = e;
    if (!e) {
        state = CB_IDLE;
        return;
    }
    uint8_t p = mux_priority(e);
    cw = cfg->cw_min[p < CB_PRIORITIES ? p : CB_PRIORITIES - 1];
    if (cw == 0)
        cw = 1;
    backoffs = 0;
    backoff();
}

static void try_failed(void)
{
    counters.tries_failed++;
    mux_entry *e = cur;
    cur = NULL;
    mux_done(e, false, 0);
    next(mux_pick(run->region->id));
}

static void cb_configure(const bcs_run *r, mux_entry *first)
{
    run = r;
    if (!backoff_ticks)
        backoff_ticks = bcs_us_to_ticks(BACKOFF_US);
    cur = first;
    state = first ? CB_WAIT : CB_IDLE;
}

static void cb_start(void)
{
    active = true;
    if (state == CB_WAIT)
        next(cur);
}

static void cb_timer(void)
{
    if (state != CB_BACKOFF || !cur)
        return;
    /* Would it end before t2? The CCA strobe, calibration, the frame. */
    if (tern_now() + bcs_us_to_ticks(mac_air_us(cur->len)) > run->t2) {
        counters.no_time++;
        mux_release(cur);
        cur = NULL;
        state = CB_IDLE;
        return;
    }
    cc2420_status st = cc2420_send(cur->mpdu, cur->len, true);
    if (st == CC2420_OK) {
        counters.tries++;
        state = CB_TX;
        return;
    }
    if (st == CC2420_ECHANNEL_BUSY) {
        counters.cca_busy++;
        if (++backoffs <= cfg->max_backoffs) {
            cw = (uint8_t)(cw * 2u > cfg->cw_max ? cfg->cw_max : cw * 2u);
            backoff();
            return;
        }
    }
    try_failed();
}

static void cb_tx_done(const cc2420_tx_result *r)
{
    if (state != CB_TX || !cur)
        return;
    if (r->status != CC2420_OK) {
        try_failed();
        return;
    }
    counters.sent++;
    mux_entry *e = cur;
    cur = NULL;
    mux_done(e, true, r->sfd);
    next(mux_pick(run->region->id));
}

static void cb_stop(void)
{
    /* on air at t2 cannot happen (cb_timer checks the time) unless the radio is late */
    mac_region_stop(&cur, state == CB_TX, &counters.overrun);
    state = CB_IDLE;
    active = false;
}

void cb_offer(void)
{
    tern_irq_state s = port_irq_save(); /* the region's interrupts must not run in between */
    if (active && state == CB_IDLE) {
        counters.offers_taken++;
        next(mux_pick(run->region->id));
    }
    port_irq_restore(s);
}

static void cb_rx(cc2420_rx_frame *f)
{
    counters.rx++;
    mux_rx(f, run->region->id);
}

const bcs_mac mac_cb = {
    .name = "CB",
    .configure = cb_configure,
    .start = cb_start,
    .stop = cb_stop,
    .tx_done = cb_tx_done,
    .rx = cb_rx,
    .timer = cb_timer,
};
