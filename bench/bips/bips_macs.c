/* MAC comparison (issue 11, experiment 4; `tern bench bips macs`,
 * docs/bips.md): ten MicaZ nodes, beacon-synchronized by node 0, the sink;
 * nodes 1..9 send it periodic frames (every PERIOD_TICKS x 50 ms, all in
 * the same tick) and sporadic ones (a pseudo-random draw per 50 ms tick,
 * one in SPORADIC_ONE_IN, at most one unconfirmed per node). The scenario
 * (tools/terntools/bipsbench.py) puts nodes 1 and 2 on either side of the
 * sink, out of each other's range: a hidden-terminal pair.
 *
 * One source, built once per variant (MACS_VARIANT): CB, RB, ACTP or MB
 * alone in a region of each 250 ms macro slot, or MIX: the four regions in
 * one macro slot on every node (seed 004 Fig. 2), periodic frames going
 * alternately to the RB and MB regions' TX TOs, sporadic ones to ACTP's
 * and CB's.
 *
 * Parameters (.tern_params): word 0 = seconds of traffic (default 10).
 * Lines (parsed by bipsbench.py):
 *   macs variant=CB node=3
 *   enq tag=7 to=1 t=<ticks>           | enq tag=7 to=1 refused <mux_status>
 *   conf tag=7 st=<mux_status: 0 MUX_OK> tries=1 sfd=<ticks>   (the sender's clock; tags
 *                                  are unique per node: sporadic ones have bit 15)
 *   rx from=3 tag=7                    (at the sink)
 *   stats ...                          at the end */
#include "bcs.h"
#include "cc2420.h"
#include "mux.h"
#include "sync_beacon.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"
#include "tern_simavr_abi.h"

#define V_CB 1
#define V_RB 2
#define V_ACTP 3
#define V_MB 4
#define V_MIX 5
#define HAS_CB (MACS_VARIANT == V_CB || MACS_VARIANT == V_MIX)
#define HAS_RB (MACS_VARIANT == V_RB || MACS_VARIANT == V_MIX)
#define HAS_ACTP (MACS_VARIANT == V_ACTP || MACS_VARIANT == V_MIX)
#define HAS_MB (MACS_VARIANT == V_MB || MACS_VARIANT == V_MIX)
#if HAS_CB
#include "mac_cb.h"
#endif
#if HAS_RB
#include "mac_rb.h"
#endif
#if HAS_ACTP
#include "mac_actp.h"
#endif
#if HAS_MB
#include "mac_mb.h"
#endif

TERN_PARAMS_DEFAULTS(10);

#define PAN_ID 0x24
#define SINK 0
#define SENDERS 9
#define TICK_MS 50
#define PERIOD_TICKS 20    /* 1 s: longer than the RB and ACTP bounds (bipsbench.py) */
#define SPORADIC_ONE_IN 16 /* per tick: ~one per 800 ms and node */
#define START_MS 2500      /* the senders are synchronized by then */
#define DRAIN_MS 1500      /* longer than any bound below: the queues are empty */
#define PAYLOAD 8
#define SPORADIC_TAG 0x8000u

#define PORT_RX TERN_PORT_APP(0)
#define PORT_CONF TERN_PORT_APP(1)
enum { TIMER_TICK = 0, TIMER_PHASE = 1 };

/* --- Schedules (the same on every node) --------------------------------------------------- */

enum { REGION_CB = 0, REGION_RB = 1, REGION_ACTP = 2, REGION_MB = 3 };
/* Region starts into the 250 ms macro slot: alone each MAC's region opens
 * 10 ms in; mixed, they follow one another. */
#if MACS_VARIANT == V_MIX
#define AT_RB 10000
#define AT_CB 55000
#define AT_ACTP 100000
#define AT_MB 200000
#define ACTP_LEN 95000
#else
#define AT_RB 10000
#define AT_CB 10000
#define AT_ACTP 10000
#define AT_MB 10000
#define ACTP_LEN 100000
#endif
static const bcs_region slot0[] = {
#if HAS_RB
    /* 19 slots of 2 ms (apps/bips_rb's: a 17-byte MPDU, the send margin, a
     * slot timer delayed by the previous slot's reception); slot 0 free */
    {.id = REGION_RB, .protocol = BCS_MAC_RB, .start_us = AT_RB, .len_us = 40000},
#endif
#if HAS_CB
    {.id = REGION_CB, .protocol = BCS_MAC_CB, .start_us = AT_CB, .len_us = 40000},
#endif
#if HAS_ACTP
    {.id = REGION_ACTP, .protocol = BCS_MAC_ACTP, .start_us = AT_ACTP, .len_us = ACTP_LEN},
#endif
#if HAS_MB
    /* 10 slots of 4 ms (mb_timing over 2 hops, 2 modes: ~2.9 ms); slot 0 free */
    {.id = REGION_MB, .protocol = BCS_MAC_MB, .start_us = AT_MB, .len_us = 41000},
#endif
};
static const bcs_macro_slot slots[] = {{.regions = slot0, .n_regions = sizeof slot0 / sizeof slot0[0]}};
static const bcs_config schedule = {
    .macro_slot_us = 250000, .sync_us = 3000, .max_offset_us = 100, .slots = slots, .n_slots = 1,
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {
#if HAS_CB
    [BCS_MAC_CB] = &mac_cb,
#endif
#if HAS_RB
    [BCS_MAC_RB] = &mac_rb,
#endif
#if HAS_ACTP
    [BCS_MAC_ACTP] = &mac_actp,
#endif
#if HAS_MB
    [BCS_MAC_MB] = &mac_mb,
#endif
};

#if HAS_CB
static cb_config cb = {.cw_min = {8, 4, 4, 4}, .cw_max = 32, .max_backoffs = 4};
#endif
#if HAS_RB
/* two slots per sender: with at most one periodic and one sporadic frame
 * unconfirmed, every frame goes in the first region after its enqueue */
static const uint16_t owners[] = {RB_FREE, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9};
static const rb_schedule rb_schedules[] = {
    {.region_id = REGION_RB, .max_len = MUX_HDR_LEN + PAYLOAD, .slot_us = 2000, .n_slots = 19, .owners = owners},
};
static rb_config rb = {.schedules = rb_schedules, .n_schedules = 1};
#endif
#if HAS_ACTP
/* radius 2: the sink relays each dominant bit, so the hidden pair never
 * wins the same round; start bit, 1 priority bit (sporadic above
 * periodic), 4 id bits */
static actp_config actp = {.prio_bits = 1, .id_bits = 4, .radius = 2, .max_len = MUX_HDR_LEN + PAYLOAD};
#endif
#if HAS_MB
/* {mode 0, mode 1} per slot: sender k's periodic frames in slot k, its
 * sporadic ones also in mode 1 of the slot j with
 * (j + 4) mod 9 + 1 = k; two hops (the
 * hidden pair hears each other's bursts through the sink's relays) */
static const uint16_t senders[] = {
    MB_NONE, MB_NONE, 1, 6, 2, 7, 3, 8, 4, 9, 5, 1, 6, 2, 7, 3, 8, 4, 9, 5,
};
static const mb_schedule mb_schedules[] = {
    {.region_id = REGION_MB, .max_len = MUX_HDR_LEN + PAYLOAD, .slot_us = 4000, .n_slots = 10, .n_modes = 2,
     .senders = senders},
};
static mb_config mb = {.schedules = mb_schedules, .n_schedules = 1, .n_hops = 2};
#endif

/* TX TOs: periodic (priority 0) and sporadic (priority 1) per region used. */
#define TO_DESC(id_, prio, region, name)                                                           \
    {.id = (id_), .priority = (prio), .order = MUX_FIFO, .depth = 2, .max_len = PAYLOAD, .retries = 1, \
     .regions = 1u << (region), .entries = name##_entries, .bytes = name##_bytes}
#if MACS_VARIANT == V_MIX
/* periodic: RB, MB alternately; sporadic: ACTP, CB alternately */
enum { TO_RB = 1, TO_MB = 2, TO_ACTP = 3, TO_CB = 4 };
MUX_TX_STORAGE(to_rb, 2, PAYLOAD);
MUX_TX_STORAGE(to_mb, 2, PAYLOAD);
MUX_TX_STORAGE(to_actp, 2, PAYLOAD);
MUX_TX_STORAGE(to_cb, 2, PAYLOAD);
static const mux_tx_desc tx_tos[] = {
    TO_DESC(TO_RB, 0, REGION_RB, to_rb), TO_DESC(TO_MB, 0, REGION_MB, to_mb),
    TO_DESC(TO_ACTP, 1, REGION_ACTP, to_actp), TO_DESC(TO_CB, 1, REGION_CB, to_cb),
};
#define RX_REGIONS (1u << REGION_CB | 1u << REGION_RB | 1u << REGION_ACTP | 1u << REGION_MB)
static uint8_t to_for(bool sporadic, uint16_t n) { return sporadic ? (n & 1 ? TO_CB : TO_ACTP) : (n & 1 ? TO_MB : TO_RB); }
#else
#if MACS_VARIANT == V_CB
#define THE_REGION REGION_CB
#elif MACS_VARIANT == V_RB
#define THE_REGION REGION_RB
#elif MACS_VARIANT == V_ACTP
#define THE_REGION REGION_ACTP
#else
#define THE_REGION REGION_MB
#endif
enum { TO_PERIODIC = 1, TO_SPORADIC = 2 };
MUX_TX_STORAGE(to_per, 2, PAYLOAD);
MUX_TX_STORAGE(to_spor, 2, PAYLOAD);
static const mux_tx_desc tx_tos[] = {
    TO_DESC(TO_PERIODIC, 0, THE_REGION, to_per), TO_DESC(TO_SPORADIC, 1, THE_REGION, to_spor),
};
#define RX_REGIONS (1u << THE_REGION)
static uint8_t to_for(bool sporadic, uint16_t n) { (void)n; return sporadic ? TO_SPORADIC : TO_PERIODIC; }
#endif
static const tern_endpoint rx_dests[] = {{0, PORT_RX}};
static const mux_rx_desc rx_tos[] = {{.id = 1, .regions = RX_REGIONS, .n_dests = 1, .dests = rx_dests}};
static mux_config mux = {.pan_id = PAN_ID, .tx = tx_tos, .n_tx = sizeof tx_tos / sizeof tx_tos[0],
                         .rx = rx_tos, .n_rx = 1};

/* --- The task --------------------------------------------------------------------------- */

static uint16_t node_id;
static uint16_t ticks, seq, spor_seq;
static uint16_t rnd;
static bool spor_out; /* a sporadic frame not yet confirmed */
static uint8_t phase; /* 0 waiting, 1 sending, 2 draining */

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

/* Status codes as numbers, not names: the *_status_name tables live in
 * RAM on the AVR (~500 bytes with all four MACs) and MIX needs it for its
 * stack. */
static void fail(const char *what, int code, const char *text)
{
    tern_printf("bips_macs: %s: status %d: %s\n", what, code, text);
    port_exit(2);
}

static void start(void)
{
    node_id = tern_sim_node_id();
    rnd = (uint16_t)(0x9E37u ^ (node_id * 0x2545u)) | 1u;
    tern_printf("macs variant=%s node=%u\n", VARIANT_NAME, node_id);
    const cc2420_config rc = {
        .channel = tern_sim_channel(),
        .pan_id = PAN_ID, .short_addr = node_id, .rx_task = TERN_NO_TASK, .tx_task = TERN_NO_TASK,
        .rx_isr = bcs_radio_rx, .tx_isr = bcs_radio_tx_done,
    };
    cc2420_status st = cc2420_init(&rc);
    if (st != CC2420_OK)
        fail("cc2420_init", (int)st, "");
    /* one error at a time: a union keeps start()'s frame small (in MIX the
     * five error structs would take ~340 bytes of a ~600-byte stack) */
    union {
        mux_error mux;
        bcs_error bcs;
#if HAS_RB
        rb_error rb;
#endif
#if HAS_ACTP
        actp_error actp;
#endif
#if HAS_MB
        mb_error mb;
#endif
    } e;
    mux.short_addr = node_id;
    if (mux_start(&mux, &schedule, &e.mux) != MUX_OK)
        fail("mux", (int)e.mux.code, e.mux.text);
#if HAS_CB
    cb.seed = (uint16_t)(node_id + 1u);
    cb_init(&cb);
#endif
#if HAS_RB
    rb.node_id = node_id;
    if (rb_init(&rb, &schedule, &e.rb) != RB_OK)
        fail("rb", (int)e.rb.code, e.rb.text);
#endif
#if HAS_ACTP
    actp.node_id = node_id;
    if (actp_init(&actp, &schedule, &e.actp) != ACTP_OK)
        fail("actp", (int)e.actp.code, e.actp.text);
    if (node_id == SINK)
        tern_printf("actp timing round_us=%lu\n", (unsigned long)actp_timing_of()->round_us);
#endif
#if HAS_MB
    mb.node_id = node_id;
    if (mb_init(&mb, &schedule, &e.mb) != MB_OK)
        fail("mb", (int)e.mb.code, e.mb.text);
#endif
    sync_beacon_init(node_id == SINK, PAN_ID, node_id);
    if (bcs_start(&schedule, macs, &sync_beacon, node_id == SINK, 5000, &e.bcs) != BCS_OK)
        fail("bcs", (int)e.bcs.code, e.bcs.text);
}

static uint16_t draw(void)
{
    rnd ^= (uint16_t)(rnd << 7);
    rnd ^= (uint16_t)(rnd >> 9);
    rnd ^= (uint16_t)(rnd << 8);
    return rnd;
}

static void send(bool sporadic)
{
    uint16_t n = sporadic ? spor_seq++ : seq++;
    uint16_t tag = (uint16_t)(n & 0x7FFFu) | (sporadic ? SPORADIC_TAG : 0u);
    uint8_t to = to_for(sporadic, n);
    uint8_t p[PAYLOAD] = {(uint8_t)tag, (uint8_t)(tag >> 8), (uint8_t)node_id, to};
    uint32_t t = (uint32_t)tern_now();
    mux_status st = mux_send(to, SINK, p, PAYLOAD, 0, tag, PORT_CONF);
    if (st == MUX_OK) {
        if (sporadic)
            spor_out = true;
        tern_printf("enq tag=%u to=%u t=%lu\n", tag, to, (unsigned long)t);
    } else {
        tern_printf("enq tag=%u to=%u refused %d\n", tag, to, (int)st);
    }
}

static void tick(void)
{
    if (ticks++ % PERIOD_TICKS == 0)
        send(false);
    if (!spor_out && draw() % SPORADIC_ONE_IN == 0)
        send(true);
}

static void print_stats(void)
{
    for (uint8_t i = 0; i < mux.n_tx; i++) {
        const mux_tx_counters *t = mux_tx_stats(i);
        tern_printf("stats tx_to id=%u enqueued=%u full=%u sent=%u failed=%u retries=%u\n", tx_tos[i].id,
                    t->enqueued, t->full, t->sent, t->failed, t->retries);
    }
#if HAS_RB
    const rb_counters *r = rb_stats();
    tern_printf("stats rb sent=%u late=%u empty=%u tx_failed=%u overrun=%u\n", r->sent, r->late, r->empty,
                r->tx_failed, r->overrun);
#endif
#if HAS_ACTP
    const actp_counters *a = actp_stats();
    tern_printf("stats actp rounds=%u won=%u lost=%u late=%u sent=%u overrun=%u disagree=%u\n", a->rounds,
                a->won, a->lost, a->late, a->sent, a->overrun, a->disagree);
#endif
#if HAS_MB
    const mb_counters *m = mb_stats();
    tern_printf("stats mb slots=%u won=%u lost=%u late=%u sent=%u overrun=%u rx_unexpected=%u\n", m->slots,
                m->won, m->lost, m->late, m->sent, m->overrun, m->rx_unexpected);
#endif
#if HAS_CB
    const cb_counters *c = cb_stats();
    tern_printf("stats cb sent=%u tries_failed=%u cca_busy=%u no_time=%u overrun=%u\n", c->sent, c->tries_failed,
                c->cca_busy, c->no_time, c->overrun);
#endif
    const mux_rx_counters *x = mux_rx_stats(0);
    tern_printf("stats rx_to delivered=%u no_memory=%u post_failed=%u foreign=%u\n", x->delivered, x->no_memory,
                x->post_failed, mux_stats()->rx_foreign);
    const bcs_counters *b = bcs_stats();
    tern_printf("stats bcs regions=%u radio_offs=%u late_events=%u orphan=%u stack=%lu\n", b->regions_run,
                b->radio_offs, b->late_events, b->tx_done_orphan, (unsigned long)port_stack_used());
}

static tern_status node_task(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT:
        start();
        tern_timer_start(TIMER_PHASE, ms(START_MS) - tern_now(), 0);
        break;
    case TERN_PORT_TIMEOUT(TIMER_PHASE):
        if (phase == 0) {
            if (node_id != SINK)
                tern_timer_start(TIMER_TICK, ms(TICK_MS), ms(TICK_MS));
            tern_timer_start(TIMER_PHASE, ms(1000u * tern_params[0]), 0);
        } else if (phase == 1) {
            tern_timer_cancel(TIMER_TICK);
            tern_timer_start(TIMER_PHASE, ms(DRAIN_MS), 0);
        } else {
            print_stats();
            port_exit(0);
        }
        phase++;
        break;
    case TERN_PORT_TIMEOUT(TIMER_TICK):
        tick();
        break;
    case PORT_RX: {
        const cc2420_rx_frame *f = m->payload;
        uint8_t len;
        const uint8_t *p = mux_frame_payload(f, &len);
        if (node_id == SINK && len >= 2)
            tern_printf("rx from=%u tag=%u\n", mux_frame_src(f), (unsigned)(p[0] | p[1] << 8));
        break;
    }
    case PORT_CONF: {
        const mux_confirm *c = m->payload;
        if (c->tag & SPORADIC_TAG)
            spor_out = false;
        tern_printf("conf tag=%u st=%u tries=%u sfd=%lu\n", c->tag, (unsigned)c->status,
                    c->tries, (unsigned long)(uint32_t)c->sfd);
        break;
    }
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "node", .id = 0, .priority = 1, .handler = node_task, .n_in_ports = 2},
    };
    static const tern_app_desc app = {.name = "bips_macs", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
