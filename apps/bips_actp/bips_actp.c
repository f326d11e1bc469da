/* ACTP under contention (docs/bips.md, docs/sim/bips_actp*.toml): MicaZ
 * nodes synchronized by BBS (node 0 the master), each sending one frame
 * every PERIOD_MS through its TX TO bound to an ACTP region. The TOs'
 * priorities differ by node -- node k's is 3 - k, against the order of
 * the ids, so the priority decides, not the id tie-break -- and every node
 * contends in the same rounds: the arbitration orders them. Built twice:
 * bips_actp with arbitration radius 1 (one broadcast domain) and
 * bips_actp2 with radius 2 (a line two hops long, where nodes 0 and 2 are
 * hidden from each other). In a network of three nodes (the line
 * scenarios) node 1 sends nothing: it is only the relay between the
 * hidden pair, so with radius 2 node 2 can learn node 0's bits only from
 * its relays, and with radius 1 (docs/sim/bips_actp_hidden.toml) the pair
 * wins the same rounds and collides at node 1.
 *
 * Macro slots of 200 ms: the BBS sync phase (4 ms), the ACTP region id 0
 * 10..50 ms; the radio is off in the rest. Each enqueue toggles PC1 (a
 * logic-analyser probe: the enqueue's simulated time). Lines
 * (tests/sim/test_bips_actp.py):
 *   actp timing n_bits=5 slot_us=... round_us=... rounds=...
 *   enq tag=7 | enq tag=7 refused MUX_EFULL
 *   conf tag=7 st=MUX_OK tries=1
 *   rx from=2 tag=7
 *   val from=2 prio=1 data=7 round=1   (what a round's bits said)
 *   stats ... */
#include <avr/io.h>

#include "bcs.h"
#include "cc2420.h"
#include "mac_actp.h"
#include "mux.h"
#include "sync_bbs.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#define PERIOD_MS 200
#define START_MS 2500 /* every node synchronized (hop 2: ~1.2 s) */
#define STOP_MS 6500
#define END_MS 7000   /* the queues have drained by then */
#define ACQUIRE_MS 5000

#define PAN_ID 0x22
#define PAYLOAD 8

#define PORT_RX TERN_PORT_APP(0)
#define PORT_CONF TERN_PORT_APP(1)
#define PORT_VALUE TERN_PORT_APP(2)
enum { TIMER_SEND = 0, TIMER_PHASE = 1 };
enum { TO_ACTP = 1, RX_ALL = 1, REGION_ACTP = 0 };

/* --- Configuration (the same on every node) ---------------------------------------------- */

static const bcs_region slot0[] = {
    {.id = REGION_ACTP, .protocol = BCS_MAC_ACTP, .start_us = 10000, .len_us = 40000},
};
static const bcs_macro_slot slots[] = {{.regions = slot0, .n_regions = 1}};
/* d_maxOffset 100 us: BBS over two hops keeps regions 10..50 ms into
 * the macro slot within ~25 us of the master's (docs/bips.md). */
static const bcs_config schedule = {
    .macro_slot_us = 200000, .sync_us = 4000, .max_offset_us = 100, .slots = slots, .n_slots = 1,
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_ACTP] = &mac_actp};
/* Two rounds of 1.5 ms from 1 ms into the phase: ticks over two hops. */
static const bbs_config bbs = {
    .n_rounds = 2, .lead_us = 1000, .round_us = 1500, .burst_us = 128, .step_us = 128, .window_us = 150,
};
/* Arbitration values: start bit, 2 priority bits, 2 id bits (ids 0..3);
 * bips_actp2 goes on with 8 data bits, the low byte of the frame's tag,
 * which reach every node of the line, two hops, as value messages. */
static const tern_endpoint value_to = {0, PORT_VALUE};
static actp_config actp = {.prio_bits = 2, .id_bits = 2, .radius = ACTP_RADIUS, .max_len = MUX_HDR_LEN + PAYLOAD,
                           .data_bits = ACTP_DATA_BITS, .value_to = &value_to};

MUX_TX_STORAGE(to_actp, 4, PAYLOAD);
static mux_tx_desc tx_tos[] = {
    {.id = TO_ACTP, .priority = 0, .order = MUX_FIFO, .depth = 4, .max_len = PAYLOAD, .retries = 1,
     .regions = 1u << REGION_ACTP, .entries = to_actp_entries, .bytes = to_actp_bytes},
};
static const tern_endpoint rx_dests[] = {{0, PORT_RX}};
static const mux_rx_desc rx_tos[] = {
    {.id = RX_ALL, .regions = 1u << REGION_ACTP, .n_dests = 1, .dests = rx_dests},
};
static mux_config mux = {.pan_id = PAN_ID, .tx = tx_tos, .n_tx = 1, .rx = rx_tos, .n_rx = 1};

/* --- The task ------------------------------------------------------------------------------ */

static uint16_t node_id;
static bool sends; /* not the relay of a three-node line */
static uint16_t tag;
static uint8_t phase; /* 0 waiting, 1 sending, 2 draining */

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static void fail(const char *what, const char *code, const char *text)
{
    tern_printf(APP_NAME ": %s: %s: %s\n", what, code, text);
    port_exit(2);
}

static void start(void)
{
    node_id = tern_sim_node_id();
    tern_printf(APP_NAME " node=%u model=%s radius=%u\n", node_id, tern_model_name, ACTP_RADIUS);
    DDRC |= _BV(PC1);
    const cc2420_config rc = {
        .channel = tern_sim_channel(),
        .pan_id = PAN_ID, .short_addr = node_id, .rx_task = TERN_NO_TASK, .tx_task = TERN_NO_TASK,
        .rx_isr = bcs_radio_rx, .tx_isr = bcs_radio_tx_done,
    };
    cc2420_status st = cc2420_init(&rc);
    if (st != CC2420_OK)
        fail("cc2420_init", cc2420_status_name(st), "");
    tx_tos[0].priority = (uint8_t)(3u - (node_id & 3u));
    sends = !(tern_sim_node_count() == 3 && node_id == 1);
    mux.short_addr = node_id;
    mux_error me;
    if (mux_start(&mux, &schedule, &me) != MUX_OK)
        fail("mux", mux_status_name(me.code), me.text);
    actp.node_id = node_id;
    actp_error ae;
    if (actp_init(&actp, &schedule, &ae) != ACTP_OK)
        fail("actp", actp_status_name(ae.code), ae.text);
    const actp_timing *t = actp_timing_of();
    tern_printf("actp timing n_bits=%u burst_us=%lu slot_us=%lu bit_us=%lu lead_us=%lu arb_us=%lu "
                "frame_us=%lu round_us=%lu first_us=%u send_us=%u prio=%u\n",
                t->n_bits, (unsigned long)t->burst_us, (unsigned long)t->slot_us,
                (unsigned long)t->bit_us, (unsigned long)t->lead_us, (unsigned long)t->arb_us,
                (unsigned long)t->frame_us, (unsigned long)t->round_us, ACTP_FIRST_US, ACTP_SEND_US,
                tx_tos[0].priority);
    bbs_error se;
    if (sync_bbs_init(&bbs, &schedule, node_id == 0, &se) != BBS_OK)
        fail("bbs", bbs_status_name(se.code), se.text);
    bcs_error be;
    if (bcs_start(&schedule, macs, &sync_bbs, node_id == 0, 5000, &be) != BCS_OK)
        fail("bcs", bcs_status_name(be.code), be.text);
    if (node_id != 0) {
        bbs_status a = sync_bbs_acquire(ACQUIRE_MS);
        if (a != BBS_OK)
            fail("acquire", bbs_status_name(a), "");
        tern_printf("acquired hop=%u at_ms=%lu\n", sync_bbs_stats()->hop,
                    (unsigned long)(tern_now() / ms(1)));
    }
}

static void send_one(void)
{
    uint8_t p[PAYLOAD] = {(uint8_t)tag, (uint8_t)(tag >> 8), (uint8_t)node_id, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5};
    PORTC ^= _BV(PC1); /* the enqueue's time, for the logic analyser */
    mux_status st = mux_send(TO_ACTP, MUX_BROADCAST, p, PAYLOAD, 0, tag, PORT_CONF);
    if (st == MUX_OK)
        tern_printf("enq tag=%u\n", tag);
    else
        tern_printf("enq tag=%u refused %s\n", tag, mux_status_name(st));
    tag++;
}

static void print_stats(void)
{
    const actp_counters *a = actp_stats();
    tern_printf("stats actp rounds=%u contended=%u won=%u lost=%u busy=%u bursts=%u relayed=%u late=%u "
                "send_failed=%u sent=%u tx_failed=%u overrun=%u prio_clipped=%u rx=%u agree=%u "
                "disagree=%u value_lost=%u max_entry=%u\n",
                a->rounds, a->contended, a->won, a->lost, a->busy, a->bursts, a->relayed, a->late,
                a->send_failed, a->sent, a->tx_failed, a->overrun, a->prio_clipped, a->rx, a->agree,
                a->disagree, a->value_lost, a->max_entry);
    const mux_tx_counters *t = mux_tx_stats(0);
    tern_printf("stats tx_to enqueued=%u full=%u sent=%u failed=%u retries=%u confirm_lost=%u\n", t->enqueued,
                t->full, t->sent, t->failed, t->retries, t->confirm_lost);
    const bcs_counters *b = bcs_stats();
    tern_printf("stats bcs slots=%u regions=%u radio_offs=%u wake_late=%u rx_outside=%u orphan=%u "
                "late_events=%u stack=%lu\n",
                b->slots_run, b->regions_run, b->radio_offs, b->wake_late, b->rx_outside, b->tx_done_orphan,
                b->late_events, (unsigned long)port_stack_used());
    const sync_bbs_counters *s = sync_bbs_stats();
    tern_printf("stats bbs hop=%u heard=%u missed=%u late_send=%u\n", s->hop, s->heard, s->missed,
                s->late_send);
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
            if (sends)
                tern_timer_start(TIMER_SEND, ms(PERIOD_MS), ms(PERIOD_MS));
            tern_timer_start(TIMER_PHASE, ms(STOP_MS - START_MS), 0);
        } else if (phase == 1) {
            tern_timer_cancel(TIMER_SEND);
            tern_timer_start(TIMER_PHASE, ms(END_MS - STOP_MS), 0);
        } else {
            print_stats();
            port_exit(0);
        }
        phase++;
        break;
    case TERN_PORT_TIMEOUT(TIMER_SEND):
        send_one();
        break;
    case PORT_RX: {
        const cc2420_rx_frame *f = m->payload;
        uint8_t len;
        const uint8_t *p = mux_frame_payload(f, &len);
        tern_printf("rx from=%u tag=%u\n", mux_frame_src(f), (unsigned)(p[0] | p[1] << 8));
        break;
    }
    case PORT_VALUE: {
        const actp_value *v = m->payload;
        tern_printf("val from=%u prio=%u data=%u round=%u\n", v->winner, v->prio, v->data, v->round);
        break;
    }
    case PORT_CONF: {
        const mux_confirm *c = m->payload;
        tern_printf("conf tag=%u st=%s tries=%u\n", c->tag, mux_status_name((mux_status)c->status), c->tries);
        break;
    }
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "node", .id = 0, .priority = 1, .handler = node_task, .n_in_ports = 3},
    };
    static const tern_app_desc app = {.name = APP_NAME, .tasks = tasks, .n_tasks = 1};
    tern_app_error err;

    tern_init();
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf(APP_NAME ": %s\n", err.text);
        return 1;
    }
    tern_run();
}
