/* BiPS's communication stack on tern (docs/bips.md): 3-5 MicaZ nodes in
 * tern-sim exchange frames through the multiplexer's TX and RX TOs in
 * contention-based (CB) slot regions, synchronized by beacons from node 0.
 *
 * Super slot: two macro slots of 1 s, each opening with a 3 ms sync phase:
 *   macro slot 0: region id 0 (CB) 10..110 ms, region id 1 (CB) 500..550 ms
 *   macro slot 1: region id 0 (CB) 10..110 ms
 * The rest is idle: the radio is off there.
 *
 * Two tasks share the multiplexer: `sensor` sends a broadcast every
 * BIPS_PERIOD_MS through TX TO 1 (FIFO, priority 0, regions 0 and 1);
 * `alarm` every BIPS_ALARM_MS through TX TO 2 (EDF with a deadline
 * BIPS_DEADLINE_MS ahead, priority 1, regions 0 and 1). RX TO 1 (regions 0
 * and 1) delivers every received frame to both. Traffic runs from
 * BIPS_START_MS to BIPS_STOP_MS (local time); at BIPS_END_MS every node
 * prints its counters and exits. Lines (tests/sim/test_bips.py reads them):
 *   enq to=1 tag=7                          mux_send accepted a frame
 *   enq to=1 tag=7 refused MUX_EFULL        ... or refused it
 *   conf to=1 tag=7 st=MUX_OK tries=1       its confirmation
 *   rx task=sensor from=2 to=1 tag=7        a frame delivered by RX TO 1
 * The payload is (TO id, tag low, tag high, node id, 4 filler bytes). */
#include <string.h>

#include "bcs.h"
#include "cc2420.h"
#include "mac_cb.h"
#include "mux.h"
#include "sync_beacon.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#ifndef BIPS_PERIOD_MS
#define BIPS_PERIOD_MS 250
#endif
#ifndef BIPS_ALARM_MS
#define BIPS_ALARM_MS 900
#endif
#ifndef BIPS_DEADLINE_MS
#define BIPS_DEADLINE_MS 3000
#endif
#ifndef BIPS_START_MS
#define BIPS_START_MS 2500 /* slaves are synchronized by the master's second beacon */
#endif
#ifndef BIPS_STOP_MS
#define BIPS_STOP_MS 7000
#endif
#ifndef BIPS_END_MS
#define BIPS_END_MS 9200 /* after the regions of 7..9 s have drained the TOs */
#endif

#define PAN_ID 0x22
#define PAYLOAD_LEN 8

enum { TASK_SENSOR = 0, TASK_ALARM = 1 };
#define PORT_RX TERN_PORT_APP(0)
#define PORT_CONF TERN_PORT_APP(1)
#define TIMER_SEND 0
#define TIMER_PHASE 1 /* start, stop, end */

enum { TO_SENSOR = 1, TO_ALARM = 2, RX_ALL = 1 };
enum { REGION_A = 0, REGION_B = 1 };

/* --- The communication schedule (the same on every node) ------------------------------- */

static const bcs_region slot0[] = {
    {.id = REGION_A, .protocol = BCS_MAC_CB, .start_us = 10000, .len_us = 100000},
    {.id = REGION_B, .protocol = BCS_MAC_CB, .start_us = 500000, .len_us = 50000},
};
static const bcs_region slot1[] = {
    {.id = REGION_A, .protocol = BCS_MAC_CB, .start_us = 10000, .len_us = 100000},
};
static const bcs_macro_slot slots[] = {
    {.regions = slot0, .n_regions = 2},
    {.regions = slot1, .n_regions = 1},
};
static const bcs_config schedule = {
    .macro_slot_us = 1000000,
    .sync_us = 3000,
    .max_offset_us = 100,
    .slots = slots,
    .n_slots = 2,
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_CB] = &mac_cb};

/* CB: windows of 8 and 4 backoff periods for priorities 0 and 1. */
static cb_config cb = {.cw_min = {8, 4, 4, 4}, .cw_max = 32, .max_backoffs = 4};

/* --- The multiplexer ---------------------------------------------------------------------- */

MUX_TX_STORAGE(to_sensor, 8, PAYLOAD_LEN);
MUX_TX_STORAGE(to_alarm, 4, PAYLOAD_LEN);
static const mux_tx_desc tx_tos[] = {
    {.id = TO_SENSOR, .priority = 0, .order = MUX_FIFO, .depth = 8, .max_len = PAYLOAD_LEN,
     .retries = 2, .regions = 1u << REGION_A | 1u << REGION_B, .entries = to_sensor_entries,
     .bytes = to_sensor_bytes},
    {.id = TO_ALARM, .priority = 1, .order = MUX_EDF, .depth = 4, .max_len = PAYLOAD_LEN,
     .retries = 3, .regions = 1u << REGION_A | 1u << REGION_B, .entries = to_alarm_entries,
     .bytes = to_alarm_bytes},
};
static const tern_endpoint rx_dests[] = {{TASK_SENSOR, PORT_RX}, {TASK_ALARM, PORT_RX}};
static const mux_rx_desc rx_tos[] = {
    {.id = RX_ALL, .regions = 1u << REGION_A | 1u << REGION_B, .n_dests = 2, .dests = rx_dests},
};
static mux_config mux = {.pan_id = PAN_ID, .tx = tx_tos, .n_tx = 2, .rx = rx_tos, .n_rx = 1};

/* --- Tasks --------------------------------------------------------------------------------- */

static uint16_t node_id;

typedef struct {
    const char *name;
    uint8_t to;
    uint16_t tag;
    uint8_t phase; /* 0 waiting to start, 1 sending, 2 stopped */
} sender;

static sender sensor_state = {.name = "sensor", .to = TO_SENSOR};
static sender alarm_state = {.name = "alarm", .to = TO_ALARM};

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static void print_stats(void)
{
    const bcs_counters *b = bcs_stats();
    tern_printf("stats bcs slots=%u regions=%u radio_offs=%u wake_late=%u off_refused=%u "
                "rx_outside=%u orphan=%u resyncs=%u late_events=%u late_steps=%x stack=%lu\n",
                b->slots_run, b->regions_run, b->radio_offs, b->wake_late, b->off_refused,
                b->rx_outside, b->tx_done_orphan, b->resyncs, b->late_events, b->late_steps,
                (unsigned long)port_stack_used());
    tern_printf("stats bcs_delay wake=%u rxon=%u start=%u handover=%u stop=%u end=%u\n",
                b->max_delay[0], b->max_delay[1], b->max_delay[2], b->max_delay[3],
                b->max_delay[4], b->max_delay[5]);
    for (uint8_t i = 0; i < mux.n_tx; i++) {
        const mux_tx_counters *t = mux_tx_stats(i);
        tern_printf("stats tx_to id=%u enqueued=%u full=%u sent=%u failed=%u late=%u retries=%u "
                    "confirm_lost=%u\n",
                    tx_tos[i].id, t->enqueued, t->full, t->sent, t->failed, t->late, t->retries,
                    t->confirm_lost);
    }
    const mux_rx_counters *r = mux_rx_stats(0);
    const mux_counters *m = mux_stats();
    tern_printf("stats rx_to id=%u delivered=%u no_memory=%u post_failed=%u no_to=%u "
                "malformed=%u foreign=%u\n",
                RX_ALL, r->delivered, r->no_memory, r->post_failed, m->rx_no_to, m->rx_malformed,
                m->rx_foreign);
    const cb_counters *c = cb_stats();
    tern_printf("stats cb tries=%u sent=%u cca_busy=%u failed=%u no_time=%u overrun=%u rx=%u\n",
                c->tries, c->sent, c->cca_busy, c->tries_failed, c->no_time, c->overrun, c->rx);
    const sync_beacon_counters *s = sync_beacon_stats();
    tern_printf("stats sync sent=%u failed=%u received=%u ignored=%u malformed=%u missed=%u "
                "delay=%lu max_corr=%lu\n",
                s->sent, s->send_failed, s->received, s->ignored, s->malformed, s->missed,
                (unsigned long)s->delay, (unsigned long)s->max_corr);
    const cc2420_counters *d = cc2420_stats();
    tern_printf("stats cc2420 rx=%u bad_crc=%u too_short=%u len_invalid=%u len_past_fifo=%u "
                "overflows=%u sfd_unknown=%u no_memory=%u tx=%u cca_busy=%u\n",
                d->rx_frames, d->rx_bad_crc, d->rx_too_short, d->rx_len_invalid,
                d->rx_len_past_fifo, d->rx_overflows, d->rx_sfd_unknown, d->rx_no_memory,
                d->tx_frames, d->tx_cca_busy);
}

static void radio_start(void)
{
    node_id = tern_sim_node_id();
    uint8_t channel = tern_sim_channel();
    tern_printf("bips node=%u role=%s model=%s\n", node_id, node_id == 0 ? "master" : "slave",
                tern_model_name);
    const cc2420_config rc = {
        .channel = channel,
        .pan_id = PAN_ID,
        .short_addr = node_id,
        .rx_task = TERN_NO_TASK,
        .tx_task = TERN_NO_TASK,
        .rx_isr = bcs_radio_rx,
        .tx_isr = bcs_radio_tx_done,
    };
    cc2420_status st = cc2420_init(&rc);
    if (st != CC2420_OK) {
        tern_printf("bips: cc2420_init: %s\n", cc2420_status_name(st));
        port_exit(2);
    }
    mux.short_addr = node_id;
    mux_error me;
    if (mux_start(&mux, &schedule, &me) != MUX_OK) {
        tern_printf("bips: mux: %s: %s\n", mux_status_name(me.code), me.text);
        port_exit(2);
    }
    cb.seed = (uint16_t)(0x5A17u + 977u * node_id);
    cb_init(&cb);
    sync_beacon_init(node_id == 0, PAN_ID, node_id);
    bcs_error be;
    if (bcs_start(&schedule, macs, &sync_beacon, node_id == 0, 5000, &be) != BCS_OK) {
        tern_printf("bips: bcs: %s: %s\n", bcs_status_name(be.code), be.text);
        port_exit(2);
    }
}

static void send_one(sender *s)
{
    uint8_t p[PAYLOAD_LEN] = {s->to, (uint8_t)s->tag, (uint8_t)(s->tag >> 8), (uint8_t)node_id,
                              0xA5, 0xA5, 0xA5, 0xA5};
    tern_time deadline = s->to == TO_ALARM ? tern_now() + ms(BIPS_DEADLINE_MS) : 0;
    mux_status st = mux_send(s->to, MUX_BROADCAST, p, sizeof p, deadline, s->tag, PORT_CONF);
    if (st == MUX_OK)
        tern_printf("enq to=%u tag=%u\n", s->to, s->tag);
    else
        tern_printf("enq to=%u tag=%u refused %s\n", s->to, s->tag, mux_status_name(st));
    s->tag++;
}

static void received(sender *s, const cc2420_rx_frame *f)
{
    uint8_t len;
    const uint8_t *p = mux_frame_payload(f, &len);
    if (len != PAYLOAD_LEN) {
        tern_printf("rx task=%s from=%u len=%u: not ours\n", s->name, mux_frame_src(f), len);
        return;
    }
    tern_printf("rx task=%s from=%u to=%u tag=%u\n", s->name, mux_frame_src(f), p[0],
                (unsigned)(p[1] | p[2] << 8));
}

static void confirmed(const mux_confirm *c)
{
    tern_printf("conf to=%u tag=%u st=%s tries=%u\n", c->to_id, c->tag,
                mux_status_name((mux_status)c->status), c->tries);
}

static tern_status sender_task(void *state, tern_msg *m)
{
    sender *s = state;
    uint32_t period = s->to == TO_SENSOR ? BIPS_PERIOD_MS : BIPS_ALARM_MS;
    switch (m->port) {
    case TERN_PORT_INIT:
        if (s->to == TO_SENSOR)
            radio_start();
        tern_timer_start(TIMER_PHASE, ms(BIPS_START_MS), 0);
        break;
    case TERN_PORT_TIMEOUT(TIMER_PHASE):
        if (s->phase == 0) {
            s->phase = 1;
            tern_timer_start(TIMER_SEND, ms(period), ms(period));
            tern_timer_start(TIMER_PHASE, ms(BIPS_STOP_MS - BIPS_START_MS), 0);
        } else if (s->phase == 1) {
            s->phase = 2;
            tern_timer_cancel(TIMER_SEND);
            if (s->to == TO_SENSOR)
                tern_timer_start(TIMER_PHASE, ms(BIPS_END_MS - BIPS_STOP_MS), 0);
        } else {
            print_stats();
            port_exit(0);
        }
        break;
    case TERN_PORT_TIMEOUT(TIMER_SEND):
        send_one(s);
        break;
    case PORT_RX:
        received(s, m->payload);
        break;
    case PORT_CONF:
        confirmed(m->payload);
        break;
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "sensor", .id = TASK_SENSOR, .priority = 1, .handler = sender_task,
         .state = &sensor_state, .n_in_ports = 2},
        {.name = "alarm", .id = TASK_ALARM, .priority = 1, .handler = sender_task,
         .state = &alarm_state, .n_in_ports = 2},
    };
    static const tern_app_desc app = {.name = "bips", .tasks = tasks, .n_tasks = 2};

    tern_init();
    tern_app_run(&app);
}
