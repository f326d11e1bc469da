/* MB, mode-based slots with fast mode-signaling (docs/bips.md,
 * docs/sim/bips_mb.toml): four MicaZ nodes, beacon-synchronized by node 0,
 * three MB regions (id 0) per 1 s macro slot, each of 7 slots of 4 ms:
 * slot 0 is left free (the BCS's t0 and t1 handlers run into it), slots
 * 1..6 have a mode-0 sender (periodic traffic), a mode-1 sender (alarms)
 * and, in slots 1, 3 and 6, a mode-2 sender (node 1's emergencies, above
 * node 3's alarms in those slots).
 * Every node sends
 *   - a periodic frame every 500 ms through TX TO 1 (priority 0: mode 0),
 *     8-byte payload;
 *   - nodes 1..3: alarms at pseudo-random times (one 50 ms tick in 8)
 *     through TX TO 2 (priority 1: mode 1), 10-byte payload;
 *   - node 1: emergencies (one tick in 16) through TX TO 3
 *     (priority 2: mode 2), 12-byte payload,
 * so the kinds of frame tell apart on air by their length.
 * The decided mode of every slot goes to pins PC1 (bit 0) and PC3 (bit 1)
 * on every node, as soon as its signaling ends; PC2 rises once, at the
 * local time the line "clock" gives. Lines (tests/sim/test_bips_mb.py):
 *   mb timing d=100 hops=1 modes=2 len=125 lead=.. window=.. region_min=..
 *   enq to=2 tag=7 t=<local us> | enq ... refused MUX_EFULL
 *   conf to=2 tag=7 st=MUX_OK tries=1 t=<local us>
 *   rx from=3 to=2 tag=7 t=<local us>
 *   stats ...
 * Built with MB_HOPS=3 it is apps/bips_mb3 (docs/sim/bips_mb3.toml): the
 * four nodes on a line, each hearing only its neighbours, synchronized by
 * BBS (d_maxOffset 338 us, seed 004's figure for three hops), mode bits
 * relayed over three hops, slots of 5 ms, traffic from 3.5 s on (the
 * third hop acquires BBS sync after ~2 s); two modes only (RAM). */
#include <avr/io.h>

#include "bcs.h"
#include "cc2420.h"
#include "mac_mb.h"
#include "mux.h"
#include "sync_bbs.h"
#include "sync_beacon.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern/time.h"
#include "tern_simavr_abi.h"

#ifndef MB_HOPS
#define MB_HOPS 1
#endif
#define TICK_MS 50
#define PERIODIC_TICKS 10  /* 500 ms */
#if MB_HOPS == 1
#define START_MS 2500      /* the slaves are synchronized by the second beacon */
#define STOP_MS 6000
#define END_MS 7200        /* the queues have drained by then */
#define SYNC_US 3000
#define MAX_OFFSET_US 100
#define REGION_US 29000
#define SLOT_US 4000
#else
#define START_MS 3500      /* BBS acquired on every hop (hop 3 after ~2 s) */
#define STOP_MS 7000
#define END_MS 8200
#define SYNC_US 6000
#define MAX_OFFSET_US 338
#define REGION_US 36000
#define SLOT_US 5000
#endif

#define PAN_ID 0x23
#define PERIODIC_PAYLOAD 8
#define ALARM_PAYLOAD 10
#define EMERG_PAYLOAD 12
/* One hop: three modes (two signaling bits), node 1's emergencies above
 * the alarms; three hops: two (RAM). */
#if MB_HOPS == 1
#define N_MODES 3
#define MAX_PAYLOAD EMERG_PAYLOAD
#else
#define N_MODES 2
#define MAX_PAYLOAD ALARM_PAYLOAD
#endif

#define PORT_RX TERN_PORT_APP(0)
#define PORT_CONF TERN_PORT_APP(1)
enum { TIMER_TICK = 0, TIMER_PHASE = 1 };
enum { TO_PERIODIC = 1, TO_ALARM = 2, TO_EMERG = 3, RX_ALL = 1 };
enum { REGION_MB = 0 };

/* --- Schedules (the same on every node) ------------------------------------------------- */

static const bcs_region slot0[] = {
    {.id = REGION_MB, .protocol = BCS_MAC_MB, .start_us = 10000, .len_us = REGION_US},
    {.id = REGION_MB, .protocol = BCS_MAC_MB, .start_us = 340000, .len_us = REGION_US},
    {.id = REGION_MB, .protocol = BCS_MAC_MB, .start_us = 670000, .len_us = REGION_US},
};
static const bcs_macro_slot slots[] = {{.regions = slot0, .n_regions = 3}};
static const bcs_config schedule = {
    .macro_slot_us = 1000000, .sync_us = SYNC_US, .max_offset_us = MAX_OFFSET_US, .slots = slots,
    .n_slots = 1,
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_MB] = &mac_mb};

/* {mode 0, mode 1, mode 2} per slot. Slots of 4 ms: mb_timing asks for
 * 3,114 us (lead 436, two mode bits of 629, send margin 300, a 21-byte
 * MPDU 1,120); the rest absorbs a slot timer delayed by the previous
 * frame's reception (its FIFOP interrupt and the copy to the heap: up to
 * ~600 us). 7 x 4 ms from t1 = 28 ms, within t2 - t1 = 29 - 0.1 - 0.192 ms.
 * Three hops: 4,044 us (lead 820, a bit of 1,868: its relays) in 5 ms;
 * the two senders of a slot are two or three hops apart, so a mode-0
 * sender learns of an alarm only through relays; a common neighbour
 * would see the collision if it did not. */
#if MB_HOPS == 1
static const uint16_t senders[] = {  /* {mode 0, mode 1, mode 2} */
    MB_NONE, MB_NONE, MB_NONE, /* slot 0: free */
    0, 3, 1,                   /* slot 1: n0's periodic frames, n3's alarms, n1's emergencies */
    1, 2, MB_NONE,
    2, 3, 1,
    3, 1, MB_NONE,
    0, 2, MB_NONE,
    1, 3, 1,
};
#else
static const uint16_t senders[] = {
    MB_NONE, MB_NONE, /* slot 0: free */
    0, 2,             /* slot 1: n0's periodic frames, n2's alarms */
    1, 3,
    3, 1,
    0, 3,
    2, 1,
    1, 2,
};
#endif
static const mb_schedule mb_schedules[] = {
    {.region_id = REGION_MB, .max_len = MUX_HDR_LEN + MAX_PAYLOAD, .slot_us = SLOT_US, .n_slots = 7,
     .n_modes = N_MODES, .senders = senders},
};

/* The decided mode on PC1 (bit 0) and PC3 (bit 1). */
static void mode_pin(uint8_t slot, uint8_t mode)
{
    (void)slot;
    uint8_t v = (uint8_t)((mode & 1u ? _BV(PC1) : 0) | (mode & 2u ? _BV(PC3) : 0));
    PORTC = (uint8_t)((PORTC & (uint8_t)~(_BV(PC1) | _BV(PC3))) | v);
}

static mb_config mb = {.schedules = mb_schedules, .n_schedules = 1, .n_hops = MB_HOPS, .decided = mode_pin};

#if MB_HOPS > 1
/* BBS as in apps/bips_bbs: three rounds of 1.5 ms from 1 ms into the
 * phase; bursts of 128, 256 and 384 us say the round. */
static const bbs_config bbs = {
    .n_rounds = 3, .lead_us = 1000, .round_us = 1500, .burst_us = 128, .step_us = 128, .window_us = 150,
};
#endif

/* Shallow: RAM (4 KB, the stack beside the BCS's interrupts is tight). */
MUX_TX_STORAGE(to_periodic, 2, PERIODIC_PAYLOAD);
MUX_TX_STORAGE(to_alarm, 3, ALARM_PAYLOAD);
#if N_MODES == 3
MUX_TX_STORAGE(to_emerg, 2, EMERG_PAYLOAD);
#endif
static const mux_tx_desc tx_tos[] = {
    {.id = TO_PERIODIC, .priority = 0, .order = MUX_FIFO, .depth = 2, .max_len = PERIODIC_PAYLOAD,
     .retries = 1, .regions = 1u << REGION_MB, .entries = to_periodic_entries, .bytes = to_periodic_bytes},
    {.id = TO_ALARM, .priority = 1, .order = MUX_FIFO, .depth = 3, .max_len = ALARM_PAYLOAD, .retries = 1,
     .regions = 1u << REGION_MB, .entries = to_alarm_entries, .bytes = to_alarm_bytes},
#if N_MODES == 3
    {.id = TO_EMERG, .priority = 2, .order = MUX_FIFO, .depth = 2, .max_len = EMERG_PAYLOAD, .retries = 1,
     .regions = 1u << REGION_MB, .entries = to_emerg_entries, .bytes = to_emerg_bytes},
#endif
};
static const tern_endpoint rx_dests[] = {{0, PORT_RX}};
static const mux_rx_desc rx_tos[] = {
    {.id = RX_ALL, .regions = 1u << REGION_MB, .n_dests = 1, .dests = rx_dests},
};
static mux_config mux = {.pan_id = PAN_ID, .tx = tx_tos, .n_tx = N_MODES, .rx = rx_tos, .n_rx = 1};

/* --- The task ----------------------------------------------------------------------------------- */

static uint16_t node_id;
static uint16_t tags[4];
static uint8_t phase; /* 0 waiting, 1 sending, 2 draining */
static uint8_t ticks;
static uint16_t lfsr;

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }
/* Local microseconds in 32-bit arithmetic (a 64-bit division in a task
 * costs stack the BCS's interrupts need too): wraps after 2^32 ticks. */
static unsigned long now_us(void)
{
    uint32_t t = (uint32_t)tern_now(), per10ms = tern_clock_hz() / 100u;
    return (unsigned long)(t / per10ms * 10000u + t % per10ms * 10000u / per10ms);
}

static void fail(const char *what, const char *code, const char *text)
{
    tern_printf("bips_mb: %s: %s: %s\n", what, code, text);
    port_exit(2);
}

static void print_timing(uint32_t d, uint8_t hops, uint8_t modes, uint8_t len)
{
    mb_timing t;
    mb_timing_of(d, hops, modes, len, &t);
    tern_printf("mb timing d=%lu hops=%u modes=%u len=%u hop=%lu lead=%lu window=%lu air=%lu "
                "region_min=%lu slot=%lu\n",
                (unsigned long)d, hops, modes, len, (unsigned long)t.hop_us, (unsigned long)t.lead_us,
                (unsigned long)t.window_us, (unsigned long)t.air_us, (unsigned long)t.region_min_us,
                (unsigned long)t.slot_us);
}

static void radio_start(void)
{
    node_id = tern_sim_node_id();
    tern_printf("bips_mb node=%u model=%s\n", node_id, tern_model_name);
    if (node_id == 0) { /* seed 004's minimal regions: beacons (1 hop), BBS over 3 hops */
        print_timing(100, 1, 2, 125);
        print_timing(338, 3, 2, 125);
        print_timing(schedule.max_offset_us, MB_HOPS, N_MODES, mb_schedules[0].max_len);
    }
    /* PC2 rises with this local time: the tests map local times to the
     * simulator's with it (the kernel clock starts after reset) */
    DDRC |= _BV(PC1) | _BV(PC2) | _BV(PC3);
    unsigned long t = now_us();
    PORTC |= _BV(PC2);
    tern_printf("clock t=%lu\n", t);
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
    mb.node_id = node_id;
    mb_error e;
    if (mb_init(&mb, &schedule, &e) != MB_OK)
        fail("mb", mb_status_name(e.code), e.text);
    bcs_error be;
#if MB_HOPS == 1
    sync_beacon_init(node_id == 0, PAN_ID, node_id);
    if (bcs_start(&schedule, macs, &sync_beacon, node_id == 0, 5000, &be) != BCS_OK)
        fail("bcs", bcs_status_name(be.code), be.text);
#else
    bbs_error se;
    if (sync_bbs_init(&bbs, &schedule, node_id == 0, &se) != BBS_OK)
        fail("bbs", bbs_status_name(se.code), se.text);
    if (bcs_start(&schedule, macs, &sync_bbs, node_id == 0, 5000, &be) != BCS_OK)
        fail("bcs", bcs_status_name(be.code), be.text);
    if (node_id != 0) {
        bbs_status a = sync_bbs_acquire(START_MS - 500);
        if (a != BBS_OK)
            fail("acquire", bbs_status_name(a), "");
        tern_printf("acquired hop=%u t=%lu\n", sync_bbs_stats()->hop, now_us());
    }
#endif
    /* Node 3 draws the same sequence as node 1: each of node 1's
     * emergencies (one tick in 16) comes with an alarm of node 3 (one in 8,
     * a superset), so the two meet in slots 1, 3 and 6 and the binary
     * countdown decides between modes 1 and 2. */
    lfsr = (uint16_t)(0xACE1u ^ (0x1F35u * (node_id == 3 ? 1u : node_id)));
}

static void send_one(uint8_t to)
{
    uint8_t p[EMERG_PAYLOAD] = {to, (uint8_t)tags[to], (uint8_t)(tags[to] >> 8), (uint8_t)node_id,
                                0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A};
    uint8_t len = to == TO_EMERG ? EMERG_PAYLOAD : to == TO_ALARM ? ALARM_PAYLOAD : PERIODIC_PAYLOAD;
    mux_status st = mux_send(to, MUX_BROADCAST, p, len, 0, tags[to], PORT_CONF);
    if (st == MUX_OK)
        tern_printf("enq to=%u tag=%u t=%lu\n", to, tags[to], now_us());
    else
        tern_printf("enq to=%u tag=%u refused %s\n", to, tags[to], mux_status_name(st));
    tags[to]++;
}

/* A 16-bit Galois LFSR step: the alarms' and emergencies' pseudo-random
 * times. */
static uint16_t random_step(void)
{
    lfsr = (uint16_t)((lfsr >> 1) ^ (-(lfsr & 1u) & 0xB400u));
    return lfsr;
}

static void print_stats(void)
{
    const bcs_counters *b = bcs_stats();
    tern_printf("stats bcs regions=%u rx_outside=%u orphan=%u late_events=%u radio_offs=%u wake_late=%u "
                "stack=%lu\n",
                b->regions_run, b->rx_outside, b->tx_done_orphan, b->late_events, b->radio_offs,
                b->wake_late, (unsigned long)port_stack_used());
    for (uint8_t i = 0; i < mux.n_tx; i++) {
        const mux_tx_counters *t = mux_tx_stats(i);
        tern_printf("stats tx_to%u enqueued=%u full=%u sent=%u failed=%u retries=%u confirm_lost=%u\n",
                    tx_tos[i].id, t->enqueued, t->full, t->sent, t->failed, t->retries, t->confirm_lost);
    }
    const mux_rx_counters *r = mux_rx_stats(0);
    const mux_counters *m = mux_stats();
    tern_printf("stats rx_to delivered=%u no_memory=%u post_failed=%u no_to=%u malformed=%u foreign=%u\n",
                r->delivered, r->no_memory, r->post_failed, m->rx_no_to, m->rx_malformed, m->rx_foreign);
#if MB_HOPS > 1
    const sync_bbs_counters *sb = sync_bbs_stats();
    tern_printf("stats bbs hop=%u sent=%u send_failed=%u heard=%u missed=%u late_send=%u\n", sb->hop, sb->sent,
                sb->send_failed, sb->heard, sb->missed, sb->late_send);
#endif
    const mb_counters *c = mb_stats();
    tern_printf("stats mb slots=%u requested=%u won=%u lost=%u sent=%u bursts=%u relayed=%u late=%u "
                "too_long=%u tx_failed=%u overrun=%u rx=%u rx_unexpected=%u mode0=%u mode1=%u "
                "mode2=%u max_delay=%u\n",
                c->slots, c->requested, c->won, c->lost, c->sent, c->bursts, c->relayed, c->late, c->too_long,
                c->tx_failed, c->overrun, c->rx, c->rx_unexpected, c->mode[0], c->mode[1], c->mode[2], c->max_delay);
}

static tern_status node_task(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT:
        radio_start(); /* BBS: returns synchronized, up to ~2 s later */
        tern_timer_start(TIMER_PHASE, ms(START_MS) - (uint32_t)tern_now(), 0);
        break;
    case TERN_PORT_TIMEOUT(TIMER_PHASE):
        if (phase == 0) {
            tern_timer_start(TIMER_TICK, ms(TICK_MS), ms(TICK_MS));
            tern_timer_start(TIMER_PHASE, ms(STOP_MS - START_MS), 0);
        } else if (phase == 1) {
            tern_timer_cancel(TIMER_TICK);
            tern_timer_start(TIMER_PHASE, ms(END_MS - STOP_MS), 0);
        } else {
            print_stats();
            port_exit(0);
        }
        phase++;
        break;
    case TERN_PORT_TIMEOUT(TIMER_TICK):
        if (++ticks % PERIODIC_TICKS == (uint8_t)(node_id % PERIODIC_TICKS))
            send_one(TO_PERIODIC);
        if (node_id != 0) {
            uint16_t r = random_step();
            if ((r & 7u) == 0) /* one tick in 8 */
                send_one(TO_ALARM);
            if (N_MODES == 3 && node_id == 1 && (r >> 3 & 15u) == 0) /* one in 16 */
                send_one(TO_EMERG);
        }
        break;
    case PORT_RX: {
        const cc2420_rx_frame *f = m->payload;
        uint8_t len;
        const uint8_t *p = mux_frame_payload(f, &len);
        tern_printf("rx from=%u to=%u tag=%u t=%lu\n", mux_frame_src(f), p[0], (unsigned)(p[1] | p[2] << 8),
                    now_us());
        break;
    }
    case PORT_CONF: {
        const mux_confirm *c = m->payload;
        tern_printf("conf to=%u tag=%u st=%s tries=%u t=%lu\n", c->to_id, c->tag,
                    mux_status_name((mux_status)c->status), c->tries, now_us());
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
    static const tern_app_desc app = {.name = "bips_mb", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
