/* Seed 001's network experiment (thesis chapter 5.2, tables 6.4-6.6) on
 * tern-sim: UDP over 6LoWPAN (net/ip_node.c) between radio nodes in a line,
 * node 0 the sender, the last node the receiver, the others routers
 * (route-over). Driven by tools/terntools/seed001.py (`tern bench seed001
 * net`), which patches the run parameters into .tern_params and reads the
 * logic analyser's pins as the thesis read its oscilloscope:
 *
 *   PC1 (sender)    raised just before udp_sendto, lowered after it returns
 *   PC2 (receiver)  latency: raised as the datagram's message is taken
 *                   (the "receive call returns"), lowered after;
 *                   stream: raised each time another signal_bytes bytes
 *                   have been received (the thesis's throughput signal)
 *
 * Parameters, 8 little-endian u32 words:
 *   [0] magic "s001"  [1] mode: 0 latency (one datagram every period_ms),
 *   1 stream (each datagram as soon as the last is out, plus gap_ms)
 *   [2] payload bytes  [3] datagrams to send  [4] period_ms / gap_ms
 *   [5] signal_bytes (stream)  [6] datagrams per loss block
 *   [7] bits 0-7 addresses: 0 the thesis's fd0b:ad46:74e5:de4c::/64 (carried
 *   inline: tern's IPHC has no contexts), 1 link-local (fe80:: from the
 *   short address: elided by IPHC; one hop only); bits 8-15 the link:
 *   0 plain CSMA on the driver, 1 BiPS CB, 2 BiPS RB (builds with
 *   SEED001_BIPS only, i.e. micaz-1284p; two nodes)
 *
 * Each datagram carries its sequence number in its first 4 bytes and a
 * pattern after it, which the receiver checks. Link 0 is plain CSMA:
 * the CC2420's CCA, and when the channel is busy a random backoff of 1-8
 * units of 320 us (802.15.4's unit backoff period), at most 5 tries.
 * Links 1 and 2 are BiPS's stack (net/bcs.c, mux.c, ip_link_mux.c) with
 * beacon sync from node 0 and one macro slot of 164 ms: a 3 ms sync phase
 * and one region of 161 ms, CB (CSMA/CA) or RB (32 TDMA slots of 4.9 ms,
 * slot 0 the receiver's, the others the sender's); why, docs/seed001.
 *
 * Console: the sender's "S001 TX ..." summary; the receiver's "B k n"
 * (datagrams received of loss block k) lines and "S001 RX ..." summary;
 * every node exits after idle_ms() without traffic (the sender when done). */
#include <avr/io.h>
#include <string.h>

#include "cc2420.h"
#include "ip_node.h"
#include "mac802154.h"
#if SEED001_BIPS
#include "bcs.h"
#include "ip_link_mux.h"
#include "mac_cb.h"
#include "mac_rb.h"
#include "sync_beacon.h"
#endif
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"
#include "tern_simavr_abi.h"

#define MAGIC 0x73303031u /* "s001" */
enum { MODE_LATENCY = 0, MODE_STREAM = 1 };
TERN_PARAMS_DEFAULTS(MAGIC, MODE_LATENCY, 50, 20, 50, 50000, 2000, 0);
enum { ADDR_ULA = 0, ADDR_LINK_LOCAL = 1 };
enum { LINK_CSMA = 0, LINK_CB = 1, LINK_RB = 2 };

#define SINK_PORT 61616
#define SOURCE_PORT 61617
#define PAN_ID 0x22
#define IDLE_MS 1500
#define START_MS 20
#define START_BIPS_MS 600 /* the receiver has heard two beacons (164 ms apart) */
#define BACKOFF_UNIT_US 320
#define CSMA_TRIES 5
#ifndef LOSS_BLOCKS
#define LOSS_BLOCKS 64 /* per-block counts the receiver keeps (CMakeLists.txt: fewer on a micaz) */
#endif

#define PROBE_TX _BV(PC1)
#define PROBE_RX _BV(PC2)

enum { TASK_NET = 0 };
#define PORT_RX TERN_PORT_APP(0)  /* frames from the radio */
#define PORT_TX TERN_PORT_APP(1)  /* transmission outcomes */
#define PORT_UDP TERN_PORT_APP(2) /* datagrams from the IP layer */
#define TIMER_MAIN 0              /* sender: the next datagram; others: idle */
#define TIMER_BACKOFF 1

static struct {
    uint16_t id, count;
    uint32_t mode, len, to_send, period_ms, signal_bytes, block, addressing, link;
    ip_node ip;
    uint8_t mac_seq;
    uint32_t rng;
    /* the frame the link is trying to send */
    uint8_t mpdu[125];
    uint8_t mpdu_len, tries;
    bool draining; /* the sender's last wait for its link */
    /* sender */
    uint32_t sent, refused, busy_drops;
    uint32_t bytes_sent;
    /* receiver */
    uint32_t received, corrupt, out_of_order, bytes, next_signal;
    int32_t last_seq;
    uint16_t blocks[LOSS_BLOCKS];
} node;

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

/* Routers and the receiver give up this long after their last frame: a
 * few latency periods, so that lost datagrams do not end the run early. */
static uint32_t idle_ms(void) { return IDLE_MS + 4u * node.period_ms; }

static bool is_sender(void) { return node.id == 0; }
static bool is_receiver(void) { return node.id == node.count - 1 && node.id != 0; }

/* The thesis's addresses: fd0b:ad46:74e5:de4c::/64, node i at ::(i+1). */
static ip6_addr address_of(uint16_t id)
{
    ip6_addr a = {{0xfd, 0x0b, 0xad, 0x46, 0x74, 0xe5, 0xde, 0x4c}};
    a.b[14] = (uint8_t)((id + 1) >> 8);
    a.b[15] = (uint8_t)(id + 1);
    return a;
}

/* --- the link: CCA, then random backoff -------------------------------- */

static uint8_t random_backoff(void)
{
    node.rng = node.rng * 1103515245u + 12345u;
    return (uint8_t)(1 + (node.rng >> 16) % 8);
}

/* The frame in node.mpdu: sent, or a backoff started (PORT_TX or
 * TIMER_BACKOFF follows), or false: refused. */
static bool link_try(void)
{
    cc2420_status st = cc2420_send(node.mpdu, node.mpdu_len, true);
    if (st == CC2420_OK)
        return true;
    if (st == CC2420_ECHANNEL_BUSY && ++node.tries < CSMA_TRIES) {
        tern_timer_start(TIMER_BACKOFF, ms(1) * BACKOFF_UNIT_US / 1000u * random_backoff(), 0);
        return true;
    }
    node.busy_drops++;
    return false;
}

static net_status link_send(const uint8_t *payload, uint8_t len, const ll_addr *dst)
{
    size_t h = mac802154_header(node.mpdu, node.mac_seq++, PAN_ID, &node.ip.ll, dst);
    if (h + len > sizeof node.mpdu)
        return NET_ETOOBIG;
    memcpy(node.mpdu + h, payload, len);
    node.mpdu_len = (uint8_t)(h + len);
    node.tries = 0;
    return link_try() ? NET_OK : NET_EBUSY;
}

/* --- the link over BiPS (links 1, 2) ------------------------------------- */

#if SEED001_BIPS
/* One macro slot of 164 ms (docs/seed001/README.md, "over BiPS"): a 3 ms
 * sync phase, then a region of 161 ms, all of the rest but the guard:
 * 32 RB slots of 4.9 ms (RB_MAX_SLOTS) from t1 = t0 + 0.1 ms end at
 * 156.9 ms, before t2 = t3 - 0.192 ms (CB uses the rest too). 164 ms
 * divides neither of the latency runs' periods (50, 200 ms), so their
 * datagrams meet the schedule at 82 and 41 different phases. */
#define MACRO_SLOT_US 164000u
#define SYNC_US 3000u
#define REGION_US (MACRO_SLOT_US - SYNC_US)
#define MAX_OFFSET_US 100u
enum { REGION_CB = 0, REGION_RB = 1, TO_IP = 1, RX_IP = 1 };
#define TO_DEPTH 12 /* a 1,000-byte datagram's 10 frames and the next one's first */
#define RB_SLOT_US 4900u
#define RB_SLOTS 32

static const bcs_region cb_region[] = {
    {.id = REGION_CB, .protocol = BCS_MAC_CB, .start_us = SYNC_US, .len_us = REGION_US}};
static const bcs_region rb_region[] = {
    {.id = REGION_RB, .protocol = BCS_MAC_RB, .start_us = SYNC_US, .len_us = REGION_US}};
static const bcs_macro_slot cb_slots[] = {{.regions = cb_region, .n_regions = 1}};
static const bcs_macro_slot rb_slots[] = {{.regions = rb_region, .n_regions = 1}};
static const bcs_config schedules[2] = {
    {.macro_slot_us = MACRO_SLOT_US, .sync_us = SYNC_US, .max_offset_us = MAX_OFFSET_US, .slots = cb_slots,
     .n_slots = 1},
    {.macro_slot_us = MACRO_SLOT_US, .sync_us = SYNC_US, .max_offset_us = MAX_OFFSET_US, .slots = rb_slots,
     .n_slots = 1},
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_CB] = &mac_cb, [BCS_MAC_RB] = &mac_rb};

/* A slot holds a full frame (125-byte MPDU: 4,448 us with the turnaround)
 * plus d_maxOffset and RB_SEND_MARGIN_US: 4,848 us; 4.9 ms (the sender
 * never receives, so no slot timer is delayed by a reception as in
 * apps/bips_rb). Slot 0 is the receiver's: the BCS's t0/t1 handlers make
 * a frame there late often (docs/bips.md), and the receiver sends nothing
 * in this experiment. */
static uint16_t owners[RB_SLOTS];
static const rb_schedule rb_schedules[] = {
    {.region_id = REGION_RB, .max_len = MUX_HDR_LEN + MUX_MAX_PAYLOAD, .slot_us = RB_SLOT_US,
     .n_slots = RB_SLOTS, .owners = owners},
};
static rb_config rb = {.schedules = rb_schedules, .n_schedules = 1};
/* Two nodes, one sending: a small window (0 or 1 backoff periods) keeps
 * the frames back to back; cw_max and 4 backoffs for a busy channel. */
static cb_config cb = {.cw_min = {2, 2, 2, 2}, .cw_max = 16, .max_backoffs = 4};

MUX_TX_STORAGE(to_ip, TO_DEPTH, MUX_MAX_PAYLOAD);
static mux_tx_desc tx_tos[] = {
    {.id = TO_IP, .priority = 0, .order = MUX_FIFO, .depth = TO_DEPTH, .max_len = MUX_MAX_PAYLOAD,
     .retries = 0, .entries = to_ip_entries, .bytes = to_ip_bytes},
};
static const tern_endpoint rx_dests[] = {{TASK_NET, PORT_RX}};
static mux_rx_desc rx_tos[] = {{.id = RX_IP, .n_dests = 1, .dests = rx_dests}};
static mux_config mux = {.pan_id = PAN_ID, .tx = tx_tos, .n_tx = 1, .rx = rx_tos, .n_rx = 1};

static void bips_fail(const char *what, const char *code, const char *text)
{
    tern_printf("S001 %s: %s: %s\n", what, code, text);
    port_exit(2);
}

/* The radio under the BCS; the TX TO bound to the link's region. */
static void bips_start(void)
{
    const bcs_config *sched = &schedules[node.link == LINK_RB];
    /* both TOs bound to the one region the schedule has */
    tx_tos[0].regions = rx_tos[0].regions = (uint16_t)(1u << (node.link == LINK_RB ? REGION_RB : REGION_CB));
    mux.short_addr = node.id;
    mux_error me;
    if (mux_start(&mux, sched, &me) != MUX_OK)
        bips_fail("mux", mux_status_name(me.code), me.text);
    owners[0] = 1;
    for (uint8_t k = 1; k < RB_SLOTS; k++)
        owners[k] = 0;
    if (node.link == LINK_RB) {
        rb.node_id = node.id;
        rb_error re;
        if (rb_init(&rb, sched, &re) != RB_OK)
            bips_fail("rb", rb_status_name(re.code), re.text);
    } else {
        cb.seed = (uint16_t)(0x3C5Au + 733u * node.id);
        cb_init(&cb);
    }
    sync_beacon_init(node.id == 0, PAN_ID, node.id);
    bcs_error be;
    if (bcs_start(sched, macs, &sync_beacon, node.id == 0, 5000, &be) != BCS_OK)
        bips_fail("bcs", bcs_status_name(be.code), be.text);
    ip_link_mux_init(&node.ip, TO_IP, TO_DEPTH, PORT_TX, node.link == LINK_CB ? cb_offer : NULL);
}

static void bips_summary(void)
{
    const ip_link_mux_counters *l = ip_link_mux_stats();
    const mux_tx_counters *t = mux_tx_stats(0);
    const mux_counters *m = mux_stats();
    const bcs_counters *b = bcs_stats();
    tern_printf("S001 LINK node=%u enqueued=%lu ok=%lu failed=%lu late=%lu held=%lu outstanding=%u "
                "confirm_lost=%u mux_full=%u rx_no_to=%u rx_malformed=%u rx_foreign=%u rx_outside=%u "
                "overrun_cb=%u overrun_rb=%u no_time=%u rb_late=%u regions=%u slots=%u late_events=%u late_steps=%u\n",
                node.id, (unsigned long)l->enqueued, (unsigned long)l->ok, (unsigned long)l->failed,
                (unsigned long)l->late, (unsigned long)l->held, l->outstanding, t->confirm_lost, t->full,
                m->rx_no_to, m->rx_malformed, m->rx_foreign, b->rx_outside, cb_stats()->overrun,
                rb_stats()->overrun, cb_stats()->no_time, rb_stats()->late, b->regions_run, b->slots_run,
                b->late_events, b->late_steps);
}
#define USES_BIPS() (node.link != LINK_CSMA)
#else
#define USES_BIPS() false
#endif

/* The sender may queue another datagram: the link has room for it. */
static bool link_ready(void)
{
#if SEED001_BIPS
    if (USES_BIPS())
        return !node.ip.sending && !ip_link_mux_full();
#endif
    return !node.ip.sending;
}

/* Nothing of ours left in the link (the sender's finish waits for it). */
static bool link_idle(void)
{
#if SEED001_BIPS
    if (USES_BIPS())
        return !node.ip.sending && !ip_link_mux_full() && ip_link_mux_stats()->outstanding == 0;
#endif
    return !node.ip.sending;
}

static void link_pump(void)
{
#if SEED001_BIPS
    if (USES_BIPS())
        ip_link_mux_pump();
#endif
}

/* --- sender ------------------------------------------------------------- */

static void send_next(void)
{
    if (node.sent + node.refused == node.to_send) {
        tern_timer_start(TIMER_MAIN, ms(idle_ms()), 0); /* the last one's way through */
        return;
    }
    size_t cap;
    uint8_t *data = udp_payload_buffer(&node.ip, &cap);
    if (!data || cap < node.len) {
        node.refused++;
        return;
    }
    uint32_t seq = node.sent + node.refused;
    data[0] = (uint8_t)(seq >> 24);
    data[1] = (uint8_t)(seq >> 16);
    data[2] = (uint8_t)(seq >> 8);
    data[3] = (uint8_t)seq;
    for (uint16_t i = 4; i < node.len; i++)
        data[i] = (uint8_t)(seq * 31u + i);
    uint16_t last = (uint16_t)(node.count - 1);
    ll_addr peer = ll_short(last);
    ip6_addr dst = node.addressing == ADDR_LINK_LOCAL ? ip6_link_local(&peer) : address_of(last);
    PORTC |= PROBE_TX;
    net_status s = udp_sendto(&node.ip, &dst, NULL, SOURCE_PORT, SINK_PORT, data, node.len);
    PORTC &= (uint8_t)~PROBE_TX;
    link_pump();
    if (s == NET_OK) {
        node.sent++;
        node.bytes_sent += node.len;
    } else {
        node.refused++;
    }
    if (node.mode == MODE_STREAM && s != NET_OK)
        tern_timer_start(TIMER_MAIN, ms(1), 0); /* no PORT_TX will come for it */
    else if (node.mode == MODE_LATENCY)
        tern_timer_start(TIMER_MAIN, ms(node.period_ms), 0);
}

/* Stream mode: the last frame of a datagram is out (CSMA), or one frame
 * was confirmed (BiPS: fill the TO again, so that the MAC finds the next
 * frame queued as the last one ends). */
static void sender_link_free(void)
{
    if (node.mode != MODE_STREAM || !link_ready())
        return;
    if (node.period_ms) {
        tern_timer_start(TIMER_MAIN, ms(node.period_ms), 0);
        return;
    }
    do
        send_next();
    while (USES_BIPS() && link_ready() && node.sent + node.refused < node.to_send);
}

/* --- receiver ----------------------------------------------------------- */

static void datagram(const ip_udp_rx *d)
{
    bool latency = node.mode == MODE_LATENCY;
    if (latency)
        PORTC |= PROBE_RX; /* first: the thesis raised its pin right after the receive call */
    bool intact = d->len == node.len && d->len >= 4;
    uint32_t seq = intact ? (uint32_t)d->data[0] << 24 | (uint32_t)d->data[1] << 16 |
                                (uint32_t)d->data[2] << 8 | d->data[3]
                          : 0;
    for (uint16_t i = 4; intact && i < d->len; i++)
        intact = d->data[i] == (uint8_t)(seq * 31u + i);
    if (!intact) {
        node.corrupt++;
    } else {
        node.received++;
        if ((int32_t)seq <= node.last_seq)
            node.out_of_order++;
        node.last_seq = (int32_t)seq;
        uint32_t b = seq / node.block;
        if (b < LOSS_BLOCKS)
            node.blocks[b]++;
        node.bytes += d->len;
        if (!latency && node.bytes >= node.next_signal) {
            PORTC |= PROBE_RX;
            node.next_signal += node.signal_bytes;
        }
    }
    PORTC &= (uint8_t)~PROBE_RX;
}

/* --- common --------------------------------------------------------------- */

static void finish(void)
{
    const ip_node_counters *c = &node.ip.count;
    uint32_t dropped = 0, reasm_dropped = 0;
    for (int i = 0; i < NET_STATUS_COUNT; i++) {
        dropped += c->dropped[i];
        reasm_dropped += node.ip.reasm.count.dropped[i];
    }
    if (is_receiver()) {
        for (uint8_t b = 0; b < LOSS_BLOCKS && (uint32_t)b * node.block < node.to_send; b++)
            tern_printf("B %u %u\n", b, node.blocks[b]);
    }
    tern_printf("S001 %s node=%u sent=%lu refused=%lu busy_drops=%lu received=%lu bytes=%lu corrupt=%lu "
                "out_of_order=%lu forwarded=%lu frames_out=%lu frames_in=%lu dropped=%lu "
                "reasm_dropped=%lu link_failures=%lu\n",
                is_sender() ? "TX" : is_receiver() ? "RX" : "FW", node.id, (unsigned long)node.sent,
                (unsigned long)node.refused, (unsigned long)node.busy_drops, (unsigned long)node.received,
                (unsigned long)node.bytes, (unsigned long)node.corrupt, (unsigned long)node.out_of_order,
                (unsigned long)c->forwarded, (unsigned long)c->frames_out, (unsigned long)c->frames_in,
                (unsigned long)dropped, (unsigned long)reasm_dropped, (unsigned long)c->link_failures);
    /* the refusals by reason (net_status numbers: ipv6.h) */
    for (int i = 0; i < NET_STATUS_COUNT; i++)
        if (c->dropped[i] || node.ip.reasm.count.dropped[i])
            tern_printf("D %d %u %u\n", i, c->dropped[i], node.ip.reasm.count.dropped[i]);
#if SEED001_BIPS
    if (USES_BIPS())
        bips_summary();
#endif
    port_exit(0);
}

static void frame_in(const cc2420_rx_frame *f)
{
    uint32_t now = (uint32_t)(tern_now() / ms(1));
#if SEED001_BIPS
    if (USES_BIPS()) {
        if (!ip_link_mux_input(&node.ip, f, now))
            return;
        if (!is_sender())
            tern_timer_start(TIMER_MAIN, ms(idle_ms()), 0);
        ip_link_mux_pump(); /* a router's forwarded frames */
        return;
    }
#endif
    mac802154_frame m;
    if (mac802154_parse(f->data, f->len, &m) != NET_OK || m.pan != PAN_ID)
        return;
    if (!is_sender())
        tern_timer_start(TIMER_MAIN, ms(idle_ms()), 0);
    ip_node_input(&node.ip, m.payload, m.payload_len, &m.src, &m.dst, now);
}

static bool params_ok(void)
{
    node.mode = tern_params[1];
    node.len = tern_params[2];
    node.to_send = tern_params[3];
    node.period_ms = tern_params[4];
    node.signal_bytes = tern_params[5];
    node.block = tern_params[6];
    node.addressing = tern_params[7] & 0xFFu;
    node.link = tern_params[7] >> 8;
#if SEED001_BIPS
    if (node.link > LINK_RB || (node.link != LINK_CSMA && node.count != 2))
        return false;
#else
    if (node.link != LINK_CSMA)
        return false;
#endif
    return tern_params[0] == MAGIC && node.addressing <= ADDR_LINK_LOCAL &&
           (node.addressing == ADDR_ULA || node.count == 2) && node.mode <= MODE_STREAM && node.len >= 4 &&
           node.len <= IP_NODE_TX_SIZE - 48 && node.block > 0 && node.signal_bytes > 0 &&
           (node.mode == MODE_STREAM || node.period_ms > 0);
}

static void start(void)
{
    node.id = tern_sim_node_id();
    node.count = tern_sim_node_count();
    node.rng = 0x5eed0001u ^ node.id;
    node.last_seq = -1;
    if (!params_ok()) {
        tern_printf("S001 bad parameters\n");
        port_exit(2);
    }
    node.next_signal = node.signal_bytes;
    DDRC |= PROBE_TX | PROBE_RX;
    PORTC &= (uint8_t)~(PROBE_TX | PROBE_RX);
    cc2420_config cfg = {
        .channel = tern_sim_channel(),
        .pan_id = PAN_ID,
        .short_addr = node.id,
        .rx_task = TASK_NET,
        .rx_port = PORT_RX,
        .tx_task = TASK_NET,
        .tx_port = PORT_TX,
    };
#if SEED001_BIPS
    if (USES_BIPS()) { /* the BCS takes the radio's interrupts; the mux posts to PORT_RX, PORT_TX */
        cfg.rx_task = cfg.tx_task = TERN_NO_TASK;
        cfg.rx_isr = bcs_radio_rx;
        cfg.tx_isr = bcs_radio_tx_done;
    }
#endif
    cc2420_status st = cc2420_init(&cfg);
    if (st != CC2420_OK) {
        tern_printf("S001 cc2420_init: %s\n", cc2420_status_name(st));
        port_exit(2);
    }
    ll_addr me = ll_short(node.id);
    ip6_addr global = address_of(node.id);
    ip_link_send_fn send = link_send;
#if SEED001_BIPS
    if (USES_BIPS())
        send = ip_link_mux_send;
#endif
    ip_node_init(&node.ip, &me, &global, send, 60000 /* ms: RFC 4944's reassembly timeout */);
    for (uint16_t j = 0; j < node.count && j < IP_NODE_ROUTES; j++) {
        if (j == node.id)
            continue;
        ll_addr next = ll_short(j > node.id ? node.id + 1 : node.id - 1);
        ip6_addr dst = address_of(j);
        ip_node_route(&node.ip, &dst, &next);
    }
    if (is_receiver())
        ip_node_bind(&node.ip, SINK_PORT, TASK_NET, PORT_UDP);
#if SEED001_BIPS
    if (USES_BIPS())
        bips_start();
#endif
    tern_timer_start(TIMER_MAIN, ms(is_sender() ? (USES_BIPS() ? START_BIPS_MS : START_MS) : idle_ms()), 0);
}

static tern_status net_task(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT:
        start();
        break;
    case PORT_RX:
        frame_in(m->payload);
        break;
    case PORT_TX:
#if SEED001_BIPS
        if (USES_BIPS())
            ip_link_mux_confirm(m->payload);
        else
#endif
            ip_node_link_done(&node.ip, ((const cc2420_tx_result *)m->payload)->status == CC2420_OK);
        if (is_sender())
            sender_link_free();
        break;
    case PORT_UDP:
        datagram(m->payload);
        break;
    case TERN_PORT_TIMEOUT(TIMER_BACKOFF):
        if (!link_try()) {
            ip_node_link_done(&node.ip, false); /* the datagram is lost, counted */
            if (is_sender())
                sender_link_free();
        }
        break;
    case TERN_PORT_TIMEOUT(TIMER_MAIN):
        if (!is_sender() || node.sent + node.refused == node.to_send) {
            /* the sender waits once more for frames still queued (BiPS);
             * those never confirmed show as outstanding in its summary */
            if (!is_sender() || link_idle() || node.draining) {
                finish();
            } else {
                node.draining = true;
                tern_timer_start(TIMER_MAIN, ms(idle_ms()), 0);
            }
            break;
        }
        send_next();
        break;
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "net", .id = TASK_NET, .priority = 1, .handler = net_task, .n_in_ports = 3},
    };
    static const tern_app_desc app = {.name = "seed001_net", .tasks = tasks, .n_tasks = 1};
    tern_init();
    tern_app_run(&app);
}
