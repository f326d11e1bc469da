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
 *   [7] addresses: 0 the thesis's fd0b:ad46:74e5:de4c::/64 (carried inline:
 *   tern's IPHC has no contexts), 1 link-local (fe80:: from the short
 *   address: elided by IPHC; one hop only)
 *
 * Each datagram carries its sequence number in its first 4 bytes and a
 * pattern after it, which the receiver checks. The link is plain CSMA:
 * the CC2420's CCA, and when the channel is busy a random backoff of 1-8
 * units of 320 us (802.15.4's unit backoff period), at most 5 tries.
 *
 * Console: the sender's "S001 TX ..." summary; the receiver's "B k n"
 * (datagrams received of loss block k) lines and "S001 RX ..." summary;
 * every node exits after idle_ms() without traffic (the sender when done). */
#include <avr/io.h>
#include <string.h>

#include "cc2420.h"
#include "ip_node.h"
#include "mac802154.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"
#include "tern_simavr_abi.h"

#define MAGIC 0x73303031u /* "s001" */
enum { MODE_LATENCY = 0, MODE_STREAM = 1 };
TERN_PARAMS_DEFAULTS(MAGIC, MODE_LATENCY, 50, 20, 50, 50000, 2000, 0);
enum { ADDR_ULA = 0, ADDR_LINK_LOCAL = 1 };

#define SINK_PORT 61616
#define SOURCE_PORT 61617
#define PAN_ID 0x22
#define IDLE_MS 1500
#define START_MS 20
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
    uint32_t mode, len, to_send, period_ms, signal_bytes, block, addressing;
    ip_node ip;
    uint8_t mac_seq;
    uint32_t rng;
    /* the frame the link is trying to send */
    uint8_t mpdu[125];
    uint8_t mpdu_len, tries;
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

/* Stream mode: the last frame of a datagram is out. */
static void sender_link_free(void)
{
    if (node.mode != MODE_STREAM || node.ip.sending)
        return;
    if (node.period_ms)
        tern_timer_start(TIMER_MAIN, ms(node.period_ms), 0);
    else
        send_next();
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
    port_exit(0);
}

static void frame_in(const cc2420_rx_frame *f)
{
    mac802154_frame m;
    if (mac802154_parse(f->data, f->len, &m) != NET_OK || m.pan != PAN_ID)
        return;
    if (!is_sender())
        tern_timer_start(TIMER_MAIN, ms(idle_ms()), 0);
    ip_node_input(&node.ip, m.payload, m.payload_len, &m.src, &m.dst, (uint32_t)(tern_now() / ms(1)));
}

static bool params_ok(void)
{
    node.mode = tern_params[1];
    node.len = tern_params[2];
    node.to_send = tern_params[3];
    node.period_ms = tern_params[4];
    node.signal_bytes = tern_params[5];
    node.block = tern_params[6];
    node.addressing = tern_params[7];
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
    const cc2420_config cfg = {
        .channel = tern_sim_channel(),
        .pan_id = PAN_ID,
        .short_addr = node.id,
        .rx_task = TASK_NET,
        .rx_port = PORT_RX,
        .tx_task = TASK_NET,
        .tx_port = PORT_TX,
    };
    cc2420_status st = cc2420_init(&cfg);
    if (st != CC2420_OK) {
        tern_printf("S001 cc2420_init: %s\n", cc2420_status_name(st));
        port_exit(2);
    }
    ll_addr me = ll_short(node.id);
    ip6_addr global = address_of(node.id);
    ip_node_init(&node.ip, &me, &global, link_send, 60000 /* ms: RFC 4944's reassembly timeout */);
    for (uint16_t j = 0; j < node.count && j < IP_NODE_ROUTES; j++) {
        if (j == node.id)
            continue;
        ll_addr next = ll_short(j > node.id ? node.id + 1 : node.id - 1);
        ip6_addr dst = address_of(j);
        ip_node_route(&node.ip, &dst, &next);
    }
    if (is_receiver())
        ip_node_bind(&node.ip, SINK_PORT, TASK_NET, PORT_UDP);
    tern_timer_start(TIMER_MAIN, ms(is_sender() ? START_MS : idle_ms()), 0);
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
            if (!is_sender() || !node.ip.sending)
                finish();
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
