/* A node's IPv6 layer over 6LoWPAN. See ip_node.h. */
#include "ip_node.h"

#include <string.h>

#include "tern/mem.h"
#include "tern/msg.h"
#include "tern/task.h"

#define ECHO_HOP_LIMIT 64

const ll_addr ip_uplink = {.len = 0};

void ip_node_init(ip_node *n, const ll_addr *ll, const ip6_addr *global, ip_link_send_fn send,
                  uint32_t reasm_timeout)
{
    memset(n, 0, sizeof *n);
    n->ll = *ll;
    n->link_local = ip6_link_local(ll);
    if (global)
        n->global = *global;
    n->link_send = send;
    lowpan_reasm_init(&n->reasm, reasm_timeout);
}

net_status ip_node_bind(ip_node *n, uint16_t port, tern_task_id task, tern_port task_port)
{
    for (int i = 0; i < IP_NODE_PORTS; i++)
        if (n->bound[i].port == 0 || n->bound[i].port == port) {
            n->bound[i].port = port;
            n->bound[i].task = task;
            n->bound[i].task_port = task_port;
            return NET_OK;
        }
    return NET_ENOPORT;
}

net_status ip_node_route_prefix(ip_node *n, const ip6_addr *dst, uint8_t prefix_len, const ll_addr *next_hop)
{
    if (n->n_routes == IP_NODE_ROUTES || prefix_len > 128)
        return NET_ETOOBIG;
    n->routes[n->n_routes++] = (ip_route){.dst = *dst, .prefix_len = prefix_len, .next_hop = *next_hop};
    return NET_OK;
}

net_status ip_node_route(ip_node *n, const ip6_addr *dst, const ll_addr *next_hop)
{
    return ip_node_route_prefix(n, dst, 128, next_hop);
}

void ip_node_set_uplink(ip_node *n, ip_uplink_send_fn send) { n->uplink_send = send; }

static bool prefix_matches(const ip6_addr *a, const ip6_addr *prefix, uint8_t bits)
{
    uint8_t whole = bits / 8, rest = bits % 8;
    if (memcmp(a->b, prefix->b, whole) != 0)
        return false;
    return rest == 0 || ((a->b[whole] ^ prefix->b[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/* The longest matching prefix's next hop. */
static const ll_addr *route_to(const ip_node *n, const ip6_addr *dst)
{
    const ip_route *best = NULL;
    for (uint8_t i = 0; i < n->n_routes; i++) {
        const ip_route *r = &n->routes[i];
        if (prefix_matches(dst, &r->dst, r->prefix_len) && (!best || r->prefix_len > best->prefix_len))
            best = r;
    }
    return best ? &best->next_hop : NULL;
}

/* The neighbour a link-local address with a short-address IID names. */
static bool neighbour_of(const ip6_addr *dst, ll_addr *ll)
{
    static const uint8_t short_ll[14] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0};
    if (memcmp(dst->b, short_ll, sizeof short_ll) != 0)
        return false;
    *ll = ll_short((uint16_t)(dst->b[14] << 8 | dst->b[15]));
    return true;
}

static bool all_zero16(const ip6_addr *a)
{
    static const ip6_addr zero;
    return ip6_equal(a, &zero);
}

static bool is_ours(const ip_node *n, const ip6_addr *a)
{
    static const ip6_addr all_nodes = {{0xff, 0x02, [15] = 1}};
    return ip6_equal(a, &n->link_local) || ip6_equal(a, &n->global) || ip6_equal(a, &all_nodes);
}

/* Hand the link the datagram's next frame; the datagram is lost (counted)
 * if the link refuses. */
static void next_frame(ip_node *n)
{
    net_status why;
    size_t len = lowpan_fragment_next(&n->frag, n->frame, sizeof n->frame, &why);
    if (len == 0 || n->link_send(n->frame, (uint8_t)len, &n->frag.dst) != NET_OK) {
        n->count.link_failures++;
        n->sending = false;
        return;
    }
    n->count.frames_out++;
}

/* Frame capacity for the 6LoWPAN payload: 127 bytes less the MAC header of
 * a data frame with PAN id compression and short addresses (9) and the FCS. */
#define LOWPAN_FRAME_CAP (127 - 9 - 2)

/* The datagram in n->tx out to next_hop: over the uplink at once, or cut
 * into frames for the link. */
static net_status send_datagram(ip_node *n, size_t len, const ll_addr *next_hop)
{
    if (next_hop->len == 0) {
        net_status s = n->uplink_send ? n->uplink_send(n->tx, len, n->tx[7]) : NET_ENOROUTE;
        if (s != NET_OK)
            n->count.link_failures++;
        return s;
    }
    n->sending = true;
    lowpan_fragment_start(&n->frag, n->tx, len, &n->ll, next_hop, ++n->tag, LOWPAN_FRAME_CAP);
    next_frame(n);
    return NET_OK;
}

net_status udp_sendto(ip_node *n, const ip6_addr *dst, const ll_addr *next_hop, uint16_t src_port,
                      uint16_t dst_port, const void *data, size_t len)
{
    net_status s = NET_OK;
    ll_addr neighbour;
    if (!next_hop)
        next_hop = route_to(n, dst);
    if (!next_hop && neighbour_of(dst, &neighbour))
        next_hop = &neighbour;
    if (n->sending)
        s = NET_EBUSY;
    else if (!next_hop)
        s = NET_ENOROUTE;
    const ip6_addr *src = ip6_is_multicast(dst) || ip6_is_link_local(dst) ||
                                  all_zero16(&n->global)
                              ? &n->link_local
                              : &n->global;
    size_t total = 0;
    if (s == NET_OK) {
        total = udp_build(src, dst, src_port, dst_port, ECHO_HOP_LIMIT, data, len, n->tx, sizeof n->tx);
        if (total == 0)
            s = NET_ETOOBIG;
    }
    if (s != NET_OK) {
        n->count.send_refused[s]++;
        return s;
    }
    n->count.sent++;
    return send_datagram(n, total, next_hop);
}

uint8_t *udp_payload_buffer(ip_node *n, size_t *cap)
{
    if (n->sending)
        return NULL;
    *cap = sizeof n->tx - IP6_HEADER_LEN - UDP_HEADER_LEN;
    return n->tx + IP6_HEADER_LEN + UDP_HEADER_LEN;
}

void ip_node_link_done(ip_node *n, bool ok)
{
    if (!n->sending)
        return;
    if (!ok) {
        n->count.link_failures++;
        n->sending = false;
        return;
    }
    if (n->frag.done) {
        n->sending = false;
        return;
    }
    next_frame(n);
}

static void drop(ip_node *n, net_status why) { n->count.dropped[why]++; }

static void deliver_udp(ip_node *n, const uint8_t *ip, size_t len)
{
    udp_datagram d;
    net_status s = udp_parse(ip, len, &d);
    if (s != NET_OK)
        return drop(n, s);
    for (int i = 0; i < IP_NODE_PORTS; i++) {
        if (n->bound[i].port == 0 || n->bound[i].port != d.dst_port)
            continue;
        ip_udp_rx *rx = tern_alloc(sizeof *rx + d.payload_len);
        if (!rx)
            return drop(n, NET_ENOMEMORY);
        rx->src = d.ip.src;
        rx->src_port = d.src_port;
        rx->dst_port = d.dst_port;
        rx->len = (uint16_t)d.payload_len;
        memcpy(rx->data, d.payload, d.payload_len);
        if (tern_send(n->bound[i].task, n->bound[i].task_port, rx, (uint16_t)(sizeof *rx + d.payload_len),
                      TERN_MSG_HEAP) != TERN_OK) {
            tern_free(rx); /* the kernel counted why it refused */
            return drop(n, NET_ENOTASK);
        }
        n->count.received++;
        return;
    }
    drop(n, NET_ENOPORT);
}

/* to: the neighbour the request came from; NULL (from the uplink): the
 * route back to its source. */
static void answer_echo(ip_node *n, const uint8_t *ip, size_t len, const ip6_header *h, const ll_addr *to)
{
    if (!to && !(to = route_to(n, &h->src)))
        return drop(n, NET_ENOROUTE);
    if (n->sending)
        return drop(n, NET_EBUSY); /* one datagram at a time: the request goes unanswered, counted */
    net_status why;
    size_t out = icmp6_echo_reply(ip, len, &n->link_local, n->tx, sizeof n->tx, &why);
    if (out == 0)
        return drop(n, why);
    n->count.echo_replies++;
    send_datagram(n, out, to);
}

/* Route-over: one hop less, the route's neighbour, re-fragmented for it. */
static void forward(ip_node *n, const uint8_t *ip, size_t len, const ip6_header *h)
{
    if (ip6_is_multicast(&h->dst) || ip6_is_link_local(&h->dst))
        return drop(n, NET_ENOTFORUS); /* link-scope: never forwarded */
    if (h->hop_limit <= 1)
        return drop(n, NET_EHOPLIMIT);
    const ll_addr *next = route_to(n, &h->dst);
    if (!next)
        return drop(n, NET_ENOROUTE);
    if (next->len == 0) { /* to the uplink: straight from where it lies */
        if (!n->uplink_send || n->uplink_send(ip, len, (uint8_t)(h->hop_limit - 1)) != NET_OK)
            return drop(n, NET_ENOROUTE);
        n->count.forwarded++;
        return;
    }
    if (n->sending)
        return drop(n, NET_EBUSY); /* one datagram out at a time: counted */
    if (len > sizeof n->tx)
        return drop(n, NET_ETOOBIG);
    memcpy(n->tx, ip, len);
    n->tx[7] = (uint8_t)(h->hop_limit - 1);
    n->count.forwarded++;
    send_datagram(n, len, next);
}

/* A whole datagram, from the neighbour src (NULL: from the uplink). */
static void ip_input(ip_node *n, const uint8_t *ip, size_t len, const ll_addr *src)
{
    ip6_header h;
    net_status s = ip6_read_header(ip, len, &h);
    if (s != NET_OK)
        return drop(n, s);
    if (!is_ours(n, &h.dst))
        return forward(n, ip, len, &h);
    if (h.next_header == IP6_NEXT_UDP)
        deliver_udp(n, ip, len);
    else if (h.next_header == IP6_NEXT_ICMP6)
        answer_echo(n, ip, len, &h, src);
    else
        drop(n, NET_EUNSUPPORTED);
}

void ip_node_input(ip_node *n, const uint8_t *payload, size_t len, const ll_addr *src,
                   const ll_addr *dst, uint32_t now)
{
    n->count.frames_in++;
    lowpan_reasm_expire(&n->reasm, now);
    const uint8_t *ip;
    size_t ip_len;
    if (lowpan_reasm_input(&n->reasm, payload, len, src, dst, now, &ip, &ip_len) != NET_OK || !ip)
        return; /* refused (counted in n->reasm.count) or waiting for fragments */
    ip_input(n, ip, ip_len, src);
}

void ip_node_input_ip(ip_node *n, const uint8_t *ip, size_t len) { ip_input(n, ip, len, NULL); }
