/* RB and CB in one macro slot (docs/bips.md, docs/sim/bips_rb.toml): four
 * MicaZ nodes, beacon-synchronized by node 0, each sending
 *   - a frame every PERIOD_MS through TX TO 1, bound to the RB region
 *     (TDMA: slot k belongs to node k % 4, two slots per node), and
 *   - a frame every PERIOD_MS, half a period later, through TX TO 2,
 *     bound to the CB region (CSMA/CA), with a longer payload, so that
 *     the two kinds of frame tell apart on air by their length.
 * (The micaz build has two timers per task: one ticks every half period
 * and alternates between the TOs.)
 * Macro slot of 1 s: sync phase 3 ms, RB region id 0 at 10 ms (19 ms),
 * CB region id 1 at 100 ms (60 ms). Lines (tests/sim/test_bips_rb.py):
 *   enq to=1 tag=7 | enq to=1 tag=7 refused MUX_EFULL
 *   conf to=1 tag=7 st=MUX_OK tries=1
 *   rx from=2 to=1 tag=7
 *   stats ... */
#include "bcs.h"
#include "cc2420.h"
#include "mac_cb.h"
#include "mac_rb.h"
#include "mux.h"
#include "sync_beacon.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#define PERIOD_MS 500     /* two RB slots per node and second: the TO keeps up */
#define START_MS 2500      /* the slaves are synchronized by the second beacon */
#define STOP_MS 5000
#define END_MS 6300        /* the queues have drained by then */

#define PAN_ID 0x22
#define RB_PAYLOAD 8
#define CB_PAYLOAD 10

#define PORT_RX TERN_PORT_APP(0)
#define PORT_CONF TERN_PORT_APP(1)
enum { TIMER_SEND = 0, TIMER_PHASE = 1 };
enum { TO_RB = 1, TO_CB = 2, RX_ALL = 1 };
enum { REGION_RB = 0, REGION_CB = 1 };

/* --- Schedules (the same on every node) ------------------------------------------------- */

static const bcs_region slot0[] = {
    {.id = REGION_RB, .protocol = BCS_MAC_RB, .start_us = 10000, .len_us = 19000},
    {.id = REGION_CB, .protocol = BCS_MAC_CB, .start_us = 100000, .len_us = 60000},
};
static const bcs_macro_slot slots[] = {{.regions = slot0, .n_regions = 2}};
static const bcs_config schedule = {
    .macro_slot_us = 1000000, .sync_us = 3000, .max_offset_us = 100, .slots = slots, .n_slots = 1,
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_CB] = &mac_cb, [BCS_MAC_RB] = &mac_rb};

/* 9 slots of 2 ms: a 17-byte MPDU takes 192 + 25 * 32 = 992 us, plus
 * d_maxOffset (100 us) and the send margin (300 us) that rb_init asks
 * for, plus 600 us for a slot timer delayed by the reception of the
 * previous slot's frame (rb max_delay). Slot 0 is left free: the BCS's
 * t0 and t1 handlers run until ~650 us after t1 (docs/bips.md), so a frame
 * there would rarely make it. */
static const uint16_t owners[] = {RB_FREE, 0, 1, 2, 3, 0, 1, 2, 3};
static const rb_schedule rb_schedules[] = {
    {.region_id = REGION_RB, .max_len = MUX_HDR_LEN + RB_PAYLOAD, .slot_us = 2000, .n_slots = 9,
     .owners = owners},
};
static rb_config rb = {.schedules = rb_schedules, .n_schedules = 1};
static cb_config cb = {.cw_min = {8, 8, 8, 8}, .cw_max = 32, .max_backoffs = 4};

MUX_TX_STORAGE(to_rb, 4, RB_PAYLOAD);
MUX_TX_STORAGE(to_cb, 4, CB_PAYLOAD);
static const mux_tx_desc tx_tos[] = {
    {.id = TO_RB, .priority = 1, .order = MUX_FIFO, .depth = 4, .max_len = RB_PAYLOAD, .retries = 1,
     .regions = 1u << REGION_RB, .entries = to_rb_entries, .bytes = to_rb_bytes},
    {.id = TO_CB, .priority = 0, .order = MUX_FIFO, .depth = 4, .max_len = CB_PAYLOAD, .retries = 2,
     .regions = 1u << REGION_CB, .entries = to_cb_entries, .bytes = to_cb_bytes},
};
static const tern_endpoint rx_dests[] = {{0, PORT_RX}};
static const mux_rx_desc rx_tos[] = {
    {.id = RX_ALL, .regions = 1u << REGION_RB | 1u << REGION_CB, .n_dests = 1, .dests = rx_dests},
};
static mux_config mux = {.pan_id = PAN_ID, .tx = tx_tos, .n_tx = 2, .rx = rx_tos, .n_rx = 1};

/* --- The task ----------------------------------------------------------------------------------- */

static uint16_t node_id;
static uint16_t tags[3];
static uint8_t phase; /* 0 waiting, 1 sending, 2 draining */
static uint8_t ticks;

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static void fail(const char *what, const char *code, const char *text)
{
    tern_printf("bips_rb: %s: %s: %s\n", what, code, text);
    port_exit(2);
}

static void radio_start(void)
{
    node_id = tern_sim_node_id();
    tern_printf("bips_rb node=%u model=%s\n", node_id, tern_model_name);
    const cc2420_config rc = {
        .channel = tern_sim_channel(),
        .pan_id = PAN_ID, .short_addr = node_id, .rx_task = TERN_NO_TASK, .tx_task = TERN_NO_TASK,
        .rx_isr = bcs_radio_rx, .tx_isr = bcs_radio_tx_done,
    };
    cc2420_status st = cc2420_init(&rc);
    if (st != CC2420_OK)
        fail("cc2420_init", cc2420_status_name(st), "");
    mux.short_addr = node_id;
    mux_error me;
    if (mux_start(&mux, &schedule, &me) != MUX_OK)
        fail("mux", mux_status_name(me.code), me.text);
    rb.node_id = node_id;
    rb_error re;
    if (rb_init(&rb, &schedule, &re) != RB_OK)
        fail("rb", rb_status_name(re.code), re.text);
    cb.seed = (uint16_t)(0x3C5Au + 733u * node_id);
    cb_init(&cb);
    sync_beacon_init(node_id == 0, PAN_ID, node_id);
    bcs_error be;
    if (bcs_start(&schedule, macs, &sync_beacon, node_id == 0, 5000, &be) != BCS_OK)
        fail("bcs", bcs_status_name(be.code), be.text);
}

static void send_one(uint8_t to)
{
    uint8_t p[CB_PAYLOAD] = {to, (uint8_t)tags[to], (uint8_t)(tags[to] >> 8), (uint8_t)node_id,
                             0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A};
    uint8_t len = to == TO_RB ? RB_PAYLOAD : CB_PAYLOAD;
    mux_status st = mux_send(to, MUX_BROADCAST, p, len, 0, tags[to], PORT_CONF);
    if (st == MUX_OK)
        tern_printf("enq to=%u tag=%u\n", to, tags[to]);
    else
        tern_printf("enq to=%u tag=%u refused %s\n", to, tags[to], mux_status_name(st));
    tags[to]++;
}

static void print_stats(void)
{
    const bcs_counters *b = bcs_stats();
    tern_printf("stats bcs regions=%u rx_outside=%u orphan=%u late_events=%u late_steps=%x stack=%lu\n",
                b->regions_run, b->rx_outside, b->tx_done_orphan, b->late_events, b->late_steps,
                (unsigned long)port_stack_used());
    for (uint8_t i = 0; i < mux.n_tx; i++) {
        const mux_tx_counters *t = mux_tx_stats(i);
        tern_printf("stats tx_to id=%u enqueued=%u full=%u sent=%u failed=%u retries=%u confirm_lost=%u\n",
                    tx_tos[i].id, t->enqueued, t->full, t->sent, t->failed, t->retries, t->confirm_lost);
    }
    const mux_rx_counters *r = mux_rx_stats(0);
    const mux_counters *m = mux_stats();
    tern_printf("stats rx_to delivered=%u no_memory=%u post_failed=%u no_to=%u malformed=%u foreign=%u\n",
                r->delivered, r->no_memory, r->post_failed, m->rx_no_to, m->rx_malformed, m->rx_foreign);
    const rb_counters *rc = rb_stats();
    tern_printf("stats rb slots_own=%u sent=%u empty=%u too_long=%u late=%u tx_failed=%u overrun=%u rx=%u "
                "max_delay=%u\n",
                rc->slots_own, rc->sent, rc->empty, rc->too_long, rc->late, rc->tx_failed, rc->overrun, rc->rx,
                rc->max_delay);
    const cb_counters *c = cb_stats();
    tern_printf("stats cb tries=%u sent=%u cca_busy=%u failed=%u no_time=%u overrun=%u rx=%u\n",
                c->tries, c->sent, c->cca_busy, c->tries_failed, c->no_time, c->overrun, c->rx);
}

static tern_status node_task(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT:
        radio_start();
        tern_timer_start(TIMER_PHASE, ms(START_MS), 0);
        break;
    case TERN_PORT_TIMEOUT(TIMER_PHASE):
        if (phase == 0) {
            tern_timer_start(TIMER_SEND, ms(PERIOD_MS / 2), ms(PERIOD_MS / 2));
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
        send_one(ticks++ % 2 ? TO_CB : TO_RB);
        break;
    case PORT_RX: {
        const cc2420_rx_frame *f = m->payload;
        uint8_t len;
        const uint8_t *p = mux_frame_payload(f, &len);
        tern_printf("rx from=%u to=%u tag=%u\n", mux_frame_src(f), p[0], (unsigned)(p[1] | p[2] << 8));
        break;
    }
    case PORT_CONF: {
        const mux_confirm *c = m->payload;
        tern_printf("conf to=%u tag=%u st=%s tries=%u\n", c->to_id, c->tag,
                    mux_status_name((mux_status)c->status), c->tries);
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
    static const tern_app_desc app = {.name = "bips_rb", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
