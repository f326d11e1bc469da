/* UDP over 6LoWPAN between micaz nodes in a line (net/ip_node.c over the
 * CC2420 driver, CSMA through the chip's CCA), for tern-sim. Node i has the
 * global address 2001:db8::(i+1); the network description is a line, so its
 * route to node j goes through node i+1 or i-1 (route-over forwarding).
 *
 *   node 0      client: sends UDP_ROUNDS datagrams to the last node's
 *               global address, port 7, alternately UDP_SMALL bytes (one
 *               frame) and UDP_LARGE bytes (fragments), each when the echo
 *               of the last came back or after UDP_REPLY_MS (a timeout,
 *               counted); checks every echoed byte; prints a summary and
 *               exits 0 if every datagram came back intact, 1 otherwise.
 *   last node   echo server on port 7: sends every datagram back to its
 *               sender.
 *   the others  routers: forward.
 *   The server and the routers exit after UDP_IDLE_MS without a frame.
 *
 * Each line of the console: "tx n=3 len=200", "rx n=3 len=200 ok", and a
 * summary with the IP layer's counters. */
#include "cc2420.h"
#include "ip_link_cc2420.h"
#include "ip_node.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#ifndef UDP_ROUNDS
#define UDP_ROUNDS 10
#endif
#ifndef UDP_SMALL
#define UDP_SMALL 50
#endif
#ifndef UDP_LARGE
#define UDP_LARGE 200
#endif
#ifndef UDP_REPLY_MS
#define UDP_REPLY_MS 200
#endif
#ifndef UDP_IDLE_MS
#define UDP_IDLE_MS 1500
#endif
#define ECHO_PORT 7
#define CLIENT_PORT 0xf0b1
#define PAN_ID 0x22

enum { TASK_NET = 0 };
#define PORT_RX TERN_PORT_APP(0)  /* frames from the radio */
#define PORT_TX TERN_PORT_APP(1)  /* transmission outcomes */
#define PORT_UDP TERN_PORT_APP(2) /* datagrams from the IP layer */
#define TIMER 0

static struct {
    uint16_t id, count;
    ip_node ip;
    uint8_t round; /* client: the datagram out, 1-based */
    uint16_t echoed, timeouts, corrupt, refused;
} node;

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static bool is_server(void) { return node.id == node.count - 1 && node.id != 0; }

static uint16_t length_of(uint8_t round) { return round % 2 ? UDP_SMALL : UDP_LARGE; }

static void send_round(void)
{
    uint16_t len = length_of(node.round);
    size_t cap;
    uint8_t *data = udp_payload_buffer(&node.ip, &cap); /* built in place: no copy */
    if (!data || cap < len) {
        node.refused++;
        tern_printf("tx n=%u len=%u no buffer\n", node.round, len);
        return;
    }
    for (uint16_t i = 0; i < len; i++)
        data[i] = (uint8_t)(node.round * 31 + i);
    ip6_addr dst = ip6_example_global((uint16_t)(node.count - 1));
    net_status s = udp_sendto(&node.ip, &dst, NULL, CLIENT_PORT, ECHO_PORT, data, len);
    if (s != NET_OK)
        node.refused++;
    /* the status as a number: net_status_name's table would cost RAM here */
    tern_printf("tx n=%u len=%u status=%u\n", node.round, len, (unsigned)s);
    tern_timer_start(TIMER, ms(UDP_REPLY_MS), 0);
}

static void finish(void)
{
    const ip_node_counters *c = &node.ip.count;
    const lowpan_reasm_counters *r = &node.ip.reasm.count;
    uint32_t dropped = 0, reasm_dropped = 0;
    for (int i = 0; i < NET_STATUS_COUNT; i++) {
        dropped += c->dropped[i];
        reasm_dropped += r->dropped[i];
    }
    tern_printf("summary node=%u echoed=%u timeouts=%u corrupt=%u refused=%u sent=%lu received=%lu "
                "forwarded=%lu frames_out=%lu frames_in=%lu dropped=%lu reasm_dropped=%lu link_failures=%lu\n",
                node.id, node.echoed, node.timeouts, node.corrupt, node.refused,
                (unsigned long)c->sent, (unsigned long)c->received, (unsigned long)c->forwarded,
                (unsigned long)c->frames_out,
                (unsigned long)c->frames_in, (unsigned long)dropped, (unsigned long)reasm_dropped,
                (unsigned long)c->link_failures);
    bool ok = node.id != 0 || (node.echoed == UDP_ROUNDS && !node.corrupt && !node.timeouts);
    port_exit(ok ? 0 : 1);
}

static void next_round(void)
{
    if (node.round == UDP_ROUNDS)
        finish();
    node.round++;
    send_round();
}

static void datagram(const ip_udp_rx *d)
{
    if (is_server()) { /* echo it back to where it came from */
        net_status s = udp_sendto(&node.ip, &d->src, NULL, ECHO_PORT, d->src_port, d->data, d->len);
        if (s != NET_OK)
            node.refused++;
        return;
    }
    bool intact = d->len == length_of(node.round);
    for (uint16_t i = 0; intact && i < d->len; i++)
        intact = d->data[i] == (uint8_t)(node.round * 31 + i);
    tern_printf("rx n=%u len=%u %s\n", node.round, d->len, intact ? "ok" : "corrupt");
    if (intact)
        node.echoed++;
    else
        node.corrupt++;
    next_round();
}

static void frame_in(const cc2420_rx_frame *f)
{
    if (ip_link_cc2420_input(&node.ip, f, (uint32_t)(tern_now() / ms(1))) && node.id != 0)
        tern_timer_start(TIMER, ms(UDP_IDLE_MS), 0); /* still busy: the idle limit starts again */
}

static void start(void)
{
    node.id = tern_sim_node_id();
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
        tern_printf("udp: cc2420_init: %s\n", cc2420_status_name(st));
        port_exit(2);
    }
    node.count = tern_sim_node_count();
    ll_addr me = ll_short(node.id);
    ip_link_cc2420_init(&me, PAN_ID);
    ip6_addr global = ip6_example_global(node.id);
    ip_node_init(&node.ip, &me, &global, ip_link_cc2420_send, 60000 /* ms: RFC 4944's reassembly timeout */);
    for (uint16_t j = 0; j < node.count && j < IP_NODE_ROUTES; j++) {
        if (j == node.id)
            continue;
        ll_addr next = ll_short(j > node.id ? node.id + 1 : node.id - 1);
        ip6_addr dst = ip6_example_global(j);
        ip_node_route(&node.ip, &dst, &next);
    }
    if (node.id == 0) {
        ip_node_bind(&node.ip, CLIENT_PORT, TASK_NET, PORT_UDP);
        tern_timer_start(TIMER, ms(20), 0); /* the others are listening by then */
    } else {
        if (is_server())
            ip_node_bind(&node.ip, ECHO_PORT, TASK_NET, PORT_UDP);
        tern_timer_start(TIMER, ms(UDP_IDLE_MS), 0);
    }
    tern_printf("udp node=%u of %u model=%s\n", node.id, node.count, tern_model_name);
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
        break;
    case PORT_UDP:
        datagram(m->payload);
        break;
    case TERN_PORT_TIMEOUT(TIMER):
        if (node.id != 0)
            finish(); /* idle: the client is done */
        else if (node.round == 0)
            next_round();
        else {
            node.timeouts++;
            tern_printf("timeout n=%u\n", node.round);
            next_round();
        }
        break;
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "net", .id = TASK_NET, .priority = 1, .handler = net_task, .n_in_ports = 3},
    };
    static const tern_app_desc app = {.name = "udp", .tasks = tasks, .n_tasks = 1};
    tern_init();
    tern_app_run(&app);
}
