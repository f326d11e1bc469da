/* A border router and the nodes behind it (net/slip.c, net/ip_node.c over
 * the CC2420), for tern-sim with a TUN interface (docs/net.md, "Border
 * router"). Node i has the global address 2001:db8::(i+1); the network
 * description is a line: node 0 at one end, node i's neighbours are i-1
 * and i+1.
 *
 *   node 0      the border router: its USART0 is a SLIP line to the host,
 *               whose prefix 2001:db8:1::/64 it routes there (the uplink);
 *               datagrams from the host to the nodes go out on the radio.
 *   the others  routers (route-over, towards node 0 for the host's prefix)
 *               and a UDP echo server on port 7; every node answers ICMPv6
 *               echo requests (ping -6).
 *
 * Nobody exits: the host is in the loop until tern-sim stops. Every
 * BORDER_REPORT_S seconds each node prints its counters, e.g.
 * "stats ip node=0 forwarded=12 ... slip_frames=9 slip_dropped=0". */
#include "avr.h"
#include "cc2420.h"
#include "ip_link_cc2420.h"
#include "ip_node.h"
#include "slip.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#ifndef BORDER_REPORT_S
#define BORDER_REPORT_S 2
#endif
#define ECHO_PORT 7
#define PAN_ID 0x22

enum { TASK_NET = 0 };
#define PORT_RX TERN_PORT_APP(0)   /* frames from the radio */
#define PORT_TX TERN_PORT_APP(1)   /* transmission outcomes */
#define PORT_UDP TERN_PORT_APP(2)  /* datagrams from the IP layer */
#define PORT_SLIP TERN_PORT_APP(3) /* datagrams from the SLIP line */
#define TIMER 0

static struct {
    uint16_t id, count;
    ip_node ip;
    uint16_t echoed, refused;
} node;

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

/* The uplink: the datagram as one SLIP frame, sent before this returns. */
static net_status slip_send(const uint8_t *ip, size_t len, uint8_t hop_limit)
{
    slip_uart_send(ip, len, 7, hop_limit);
    return NET_OK;
}

static void report(void)
{
    const ip_node_counters *c = &node.ip.count;
    const lowpan_reasm_counters *r = &node.ip.reasm.count;
    uint32_t dropped = 0, reasm_dropped = 0;
    for (int i = 0; i < NET_STATUS_COUNT; i++) {
        dropped += c->dropped[i];
        reasm_dropped += r->dropped[i];
    }
    tern_printf("stats ip node=%u sent=%lu received=%lu forwarded=%lu echo_replies=%lu udp_echoed=%u "
                "refused=%u frames_out=%lu frames_in=%lu dropped=%lu reasm_dropped=%lu link_failures=%lu\n",
                node.id, (unsigned long)c->sent, (unsigned long)c->received, (unsigned long)c->forwarded,
                (unsigned long)c->echo_replies, node.echoed, node.refused, (unsigned long)c->frames_out,
                (unsigned long)c->frames_in, (unsigned long)dropped, (unsigned long)reasm_dropped,
                (unsigned long)c->link_failures);
    /* the reasons by number (net_status): where to look when a count is not 0 */
    for (int i = 0; i < NET_STATUS_COUNT; i++)
        if (c->dropped[i])
            tern_printf("stats dropped node=%u reason=%d count=%u\n", node.id, i, c->dropped[i]);
    /* painted main stack and the heap: what the network path needs of the 4 KB */
    const tern_counters *k = tern_stats();
    tern_printf("stats memory node=%u stack_used=%lu of=%lu alloc_failures=%lu\n", node.id,
                (unsigned long)port_stack_used(), (unsigned long)port_stack_size(),
                (unsigned long)k->alloc_failures);
    if (node.id == 0) {
        const slip_rx *s = slip_uart_counters();
        tern_printf("stats slip frames=%lu oversize=%u bad_escape=%u uart=%u no_memory=%u no_task=%u\n",
                    (unsigned long)s->frames, s->dropped[SLIP_EOVERSIZE], s->dropped[SLIP_EBADESCAPE],
                    s->dropped[SLIP_EUART], s->dropped[SLIP_ENOMEMORY], s->dropped[SLIP_ENOTASK]);
    }
}

static void datagram(const ip_udp_rx *d)
{
    net_status s = udp_sendto(&node.ip, &d->src, NULL, ECHO_PORT, d->src_port, d->data, d->len);
    if (s == NET_OK)
        node.echoed++;
    else
        node.refused++;
}

static void frame_in(const cc2420_rx_frame *f)
{
    (void)ip_link_cc2420_input(&node.ip, f, (uint32_t)(tern_now() / ms(1)));
}

static void start(void)
{
    node.id = tern_sim_node_id();
    node.count = tern_sim_node_count();
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
        tern_printf("border: cc2420_init: %s\n", cc2420_status_name(st));
        port_exit(2);
    }
    ll_addr me = ll_short(node.id);
    ip_link_cc2420_init(&me, PAN_ID);
    ip6_addr global = ip6_example_global(node.id);
    ip_node_init(&node.ip, &me, &global, ip_link_cc2420_send, 60000 /* ms: RFC 4944's reassembly timeout */);
    /* the line: every other node through the neighbour on its side */
    for (uint16_t j = 0; j < node.count && node.ip.n_routes < IP_NODE_ROUTES - 1; j++) {
        if (j == node.id)
            continue;
        ll_addr next = ll_short(j > node.id ? node.id + 1 : node.id - 1);
        ip6_addr dst = ip6_example_global(j);
        ip_node_route(&node.ip, &dst, &next);
    }
    /* the host's prefix: up the line, and from node 0 over SLIP */
    const ip6_addr host_prefix = {{0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01}};
    if (node.id == 0) {
        ip_node_set_uplink(&node.ip, slip_send);
        ip_node_route_prefix(&node.ip, &host_prefix, 64, &ip_uplink);
    } else {
        ll_addr up = ll_short(node.id - 1);
        ip_node_route_prefix(&node.ip, &host_prefix, 64, &up);
        ip_node_bind(&node.ip, ECHO_PORT, TASK_NET, PORT_UDP);
    }
    tern_printf("border node=%u of %u model=%s%s\n", node.id, node.count, tern_model_name,
                node.id == 0 ? " slip" : "");
    /* the console's last line is out before SLIP frames may follow it */
    if (node.id == 0)
        slip_uart_init(TASK_NET, PORT_SLIP);
    tern_timer_start(TIMER, ms(BORDER_REPORT_S * 1000u), ms(BORDER_REPORT_S * 1000u));
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
    case PORT_SLIP:
        ip_node_input_ip(&node.ip, m->payload, m->len);
        break;
    case TERN_PORT_TIMEOUT(TIMER):
        report();
        break;
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "net", .id = TASK_NET, .priority = 1, .handler = net_task, .n_in_ports = 4},
    };
    static const tern_app_desc app = {.name = "border_router", .tasks = tasks, .n_tasks = 1};
    tern_init();
    tern_app_run(&app);
}
