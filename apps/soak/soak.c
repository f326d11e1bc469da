/* The soak of issue 13 (docs/reliability.md, docs/sim/soak.toml): a
 * tern-sim network in which every node is at once a UDP client and an echo
 * server, for as long as the run lasts. Nodes sit on a grid SOAK_COLS wide
 * (the scenario places them so) and hear their eight neighbours only; a
 * datagram to a node further away is forwarded one grid step at a time
 * (route-over, net/ip_node.c), through hidden terminals and collisions.
 *
 * Each node sends one request at a time to a random other node, of a
 * random length (one frame or several fragments), after a random pause;
 * the echo comes back or the request times out. Every SOAK_REPORT_S it
 * prints a report line (a node that stalls stops printing them). Near the
 * end of the run (tern_sim_duration_s) every node stops sending, waits
 * until no request can still be under way anywhere, however far the
 * clocks (+-50 ppm at most) have drifted apart, and prints its final line:
 * requests sent = echoed + corrupt + timed out, the heap at its baseline
 * in one piece, every message posted dispatched, and the drops of the
 * kernel, the radio driver and the IP layer by reason. tests/sim/
 * test_soak.py balances them across the network. */
#include "cc2420.h"
#include "ip_link_cc2420.h"
#include "ip_node.h"
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/stats.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#ifndef SOAK_COLS
#define SOAK_COLS 5
#endif
#ifndef SOAK_MEAN_MS
#define SOAK_MEAN_MS 2000 /* mean pause between a node's requests */
#endif
#ifndef SOAK_MAX_LEN
#define SOAK_MAX_LEN 120 /* up to two fragments */
#endif
#define SOAK_REPLY_MS 800 /* four hops there and back, with fragments */
#define SOAK_REPORT_S 60
#define ECHO_PORT 7
#define CLIENT_PORT 0xf0b1
#define PAN_ID 0x23
#define HEADER 3 /* round (2 bytes) and sender id in every request */

enum { TASK_NET = 0 };
#define PORT_RX TERN_PORT_APP(0)
#define PORT_TX TERN_PORT_APP(1)
#define PORT_UDP TERN_PORT_APP(2)
/* TIMER_NEXT: the pause before a request, or the wait for its echo */
enum { TIMER_NEXT = 0, TIMER_REPORT = 1, TIMER_END = 2 };

static struct {
    uint16_t id, count;
    ip_node ip;
    uint32_t rng;
    uint16_t round;    /* the request out (or last out) */
    uint16_t want_len; /* its length */
    bool waiting;      /* for its echo */
    bool stopped;      /* no more requests: the end is near */
    uint32_t reports;
    size_t heap_baseline, heap_largest;
    /* every request ends exactly one way */
    uint32_t sent, echoed, corrupt, timeouts;
    uint32_t refused; /* udp_sendto said no: not sent */
    uint32_t stale;   /* echoes of requests that had already timed out */
    uint32_t served, serve_refused; /* requests echoed / not echoed (busy) */
} node;

/* 64-bit: an hour of the micaz clock is past 2^32 ticks */
static tern_time ms(uint32_t n) { return (tern_time)(tern_clock_hz() / 1000u) * n; }

/* A timer refused is a bug of this app, not a fault to ride out. */
static void timer(uint8_t k, tern_time delay, tern_time period)
{
    tern_status s = tern_timer_start(k, delay, period);
    if (s != TERN_OK) {
        tern_printf("soak: timer %u: %s\n", k, tern_status_name(s));
        port_exit(3);
    }
}

static uint32_t random32(void) /* xorshift32: the node's own sequence */
{
    node.rng ^= node.rng << 13;
    node.rng ^= node.rng >> 17;
    node.rng ^= node.rng << 5;
    return node.rng;
}

static int step(int from, int to) { return from < to ? from + 1 : from > to ? from - 1 : from; }

/* One grid step toward j, diagonals included: the eight neighbours are in range. */
static uint16_t next_hop_to(uint16_t j)
{
    int col = step(node.id % SOAK_COLS, j % SOAK_COLS);
    int row = step(node.id / SOAK_COLS, j / SOAK_COLS);
    return (uint16_t)(row * SOAK_COLS + col);
}

static uint8_t pattern(uint16_t round, uint16_t src, uint16_t i)
{
    return (uint8_t)(round * 31u + src * 7u + i);
}

static void send_request(void)
{
    uint16_t dst = (uint16_t)(random32() % (node.count - 1u));
    if (dst >= node.id)
        dst++;
    uint16_t len = (uint16_t)(HEADER + random32() % (SOAK_MAX_LEN - HEADER + 1u));
    size_t cap;
    uint8_t *data = udp_payload_buffer(&node.ip, &cap);
    node.round++;
    if (!data || cap < len) {
        node.refused++; /* still sending an echo: try at the next pause */
        return;
    }
    data[0] = (uint8_t)node.round;
    data[1] = (uint8_t)(node.round >> 8);
    data[2] = (uint8_t)node.id;
    for (uint16_t i = HEADER; i < len; i++)
        data[i] = pattern(node.round, node.id, i);
    ip6_addr to = ip6_example_global(dst);
    if (udp_sendto(&node.ip, &to, NULL, CLIENT_PORT, ECHO_PORT, data, len) != NET_OK) {
        node.refused++;
        return;
    }
    node.sent++;
    node.want_len = len;
    node.waiting = true;
    timer(TIMER_NEXT, ms(SOAK_REPLY_MS), 0);
}

static void pause_then_send(void)
{
    if (!node.stopped)
        timer(TIMER_NEXT, ms(1 + random32() % (2u * SOAK_MEAN_MS)), 0);
}

static void echo_back(const ip_udp_rx *d)
{
    if (udp_sendto(&node.ip, &d->src, NULL, ECHO_PORT, d->src_port, d->data, d->len) == NET_OK)
        node.served++;
    else
        node.serve_refused++;
}

static void echo_in(const ip_udp_rx *d)
{
    uint16_t round = d->len >= HEADER ? (uint16_t)(d->data[0] | d->data[1] << 8) : 0;
    if (!node.waiting || round != node.round) {
        node.stale++;
        return;
    }
    bool intact = d->len == node.want_len && d->data[2] == (uint8_t)node.id;
    for (uint16_t i = HEADER; intact && i < d->len; i++)
        intact = d->data[i] == pattern(round, node.id, i);
    if (intact)
        node.echoed++;
    else
        node.corrupt++;
    node.waiting = false;
    pause_then_send();
}

static uint32_t sum16(const uint16_t *v, int n)
{
    uint32_t s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

static void report(const char *what)
{
    const tern_counters *k = tern_stats();
    const cc2420_counters *r = cc2420_stats();
    const ip_node_counters *c = &node.ip.count;
    tern_printf("%s node=%u t=%lu sent=%lu echoed=%lu corrupt=%lu timeouts=%lu refused=%lu stale=%lu "
                "served=%lu serve_refused=%lu\n",
                what, node.id, (unsigned long)(tern_now() / ms(1000)), (unsigned long)node.sent,
                (unsigned long)node.echoed, (unsigned long)node.corrupt, (unsigned long)node.timeouts,
                (unsigned long)node.refused, (unsigned long)node.stale, (unsigned long)node.served,
                (unsigned long)node.serve_refused);
    tern_printf("%s node=%u heap=%u/%u largest=%u/%u posted=%lu dispatched=%lu queued=%u "
                "dropped=%lu,%lu,%lu,%lu,%lu,%lu alloc_failures=%lu stack=%lu\n",
                what, node.id, (unsigned)tern_heap_free_bytes(), (unsigned)node.heap_baseline,
                (unsigned)tern_heap_largest_free(), (unsigned)node.heap_largest,
                (unsigned long)k->posted, (unsigned long)k->dispatched, k->queue_depth,
                (unsigned long)k->dropped[0], (unsigned long)k->dropped[1],
                (unsigned long)k->dropped[2], (unsigned long)k->dropped[3],
                (unsigned long)k->dropped[4], (unsigned long)k->dropped[5],
                (unsigned long)k->alloc_failures, (unsigned long)k->max_stack_bytes);
    tern_printf("%s node=%u radio bad_crc=%u len_invalid=%u past_fifo=%u too_short=%u no_memory=%u "
                "post_failed=%u overflows=%u tx_busy=%u cca_busy=%u tx_failed=%u "
                "ip forwarded=%lu dropped=%lu reasm_dropped=%lu link_failures=%lu\n",
                what, node.id, r->rx_bad_crc, r->rx_len_invalid, r->rx_len_past_fifo, r->rx_too_short,
                r->rx_no_memory, r->rx_post_failed, r->rx_overflows, r->tx_busy, r->tx_cca_busy,
                r->tx_no_start + r->tx_no_sfd + r->tx_no_end + r->tx_post_failed,
                (unsigned long)c->forwarded, (unsigned long)sum16(c->dropped, NET_STATUS_COUNT),
                (unsigned long)sum16(node.ip.reasm.count.dropped, NET_STATUS_COUNT),
                (unsigned long)c->link_failures);
}

/* The end, on this node's clock: stop sending when no request sent before
 * then can still be under way when the last node checks, check before the
 * run ends on the slowest clock. Margins: 50 ppm of the run each way. */
static void schedule_end(uint32_t duration_s)
{
    uint32_t check_ms = duration_s * 1000u - 1000u - duration_s / 20u;
    uint32_t stop_ms = check_ms - 2u * SOAK_REPLY_MS - 1000u - duration_s / 10u;
    uint32_t now_ms = (uint32_t)(tern_now() / ms(1));
    timer(TIMER_REPORT, ms(SOAK_REPORT_S * 1000u), ms(SOAK_REPORT_S * 1000u));
    if (duration_s >= 10 && stop_ms > now_ms)
        timer(TIMER_END, ms(stop_ms - now_ms), ms(check_ms - stop_ms)); /* the stop, then the check */
}

static void frame_in(const cc2420_rx_frame *f)
{
    (void)ip_link_cc2420_input(&node.ip, f, (uint32_t)(tern_now() / ms(1)));
}

static void start(void)
{
    node.id = tern_sim_node_id();
    node.count = tern_sim_node_count();
    node.rng = 2654435761u * (node.id + 1u);
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
    if (st != CC2420_OK || node.count < 2 || node.count > IP_NODE_ROUTES + 1) {
        tern_printf("soak: cc2420_init %s, %u nodes (2..%u)\n", cc2420_status_name(st), node.count,
                    IP_NODE_ROUTES + 1);
        port_exit(2);
    }
    ll_addr me = ll_short(node.id);
    ip_link_cc2420_init(&me, PAN_ID);
    ip6_addr global = ip6_example_global(node.id);
    ip_node_init(&node.ip, &me, &global, ip_link_cc2420_send, 60000);
    for (uint16_t j = 0; j < node.count; j++) {
        if (j == node.id)
            continue;
        ll_addr next = ll_short(next_hop_to(j));
        ip6_addr dst = ip6_example_global(j);
        ip_node_route(&node.ip, &dst, &next);
    }
    ip_node_bind(&node.ip, CLIENT_PORT, TASK_NET, PORT_UDP);
    ip_node_bind(&node.ip, ECHO_PORT, TASK_NET, PORT_UDP);
    node.heap_baseline = tern_heap_free_bytes();
    node.heap_largest = tern_heap_largest_free();
    schedule_end(tern_sim_duration_s());
    tern_printf("soak node=%u of %u model=%s duration=%lu s\n", node.id, node.count, tern_model_name,
                (unsigned long)tern_sim_duration_s());
    pause_then_send();
}

static void end(void)
{
    const tern_counters *k = tern_stats();
    report("final");
    bool ok = !node.waiting && node.sent == node.echoed + node.corrupt + node.timeouts &&
              tern_heap_free_bytes() == node.heap_baseline &&
              tern_heap_largest_free() == node.heap_largest && k->posted == k->dispatched;
    port_exit(ok ? 0 : 1);
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
    case PORT_UDP: {
        const ip_udp_rx *d = m->payload;
        if (d->dst_port == ECHO_PORT)
            echo_back(d);
        else
            echo_in(d);
        break;
    }
    case TERN_PORT_TIMEOUT(TIMER_NEXT):
        if (node.waiting) { /* no echo in time */
            node.timeouts++;
            node.waiting = false;
            pause_then_send();
        } else {
            send_request();
            if (!node.waiting)
                pause_then_send(); /* refused: try again later */
        }
        break;
    case TERN_PORT_TIMEOUT(TIMER_REPORT):
        node.reports++;
        report("report");
        break;
    case TERN_PORT_TIMEOUT(TIMER_END):
        if (!node.stopped) {
            node.stopped = true;
            if (!node.waiting)
                tern_timer_cancel(TIMER_NEXT); /* the next request: never */
        } else
            end();
        break;
    }
    return TERN_OK;
}

/* Out of line: the 146-byte error report lives on this frame, which is
 * gone before tern_run, so the handlers get those bytes of stack. */
static __attribute__((noinline)) void start_app(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "net", .id = TASK_NET, .priority = 1, .handler = net_task, .n_in_ports = 3},
    };
    static const tern_app_desc app = {.name = "soak", .tasks = tasks, .n_tasks = 1};
    tern_app_error err;
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("soak: %s\n", err.text);
        port_exit(1);
    }
}

int main(void)
{
    tern_init();
    start_app();
    tern_run();
}
