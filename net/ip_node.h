/* A node's IPv6 layer: its addresses, UDP ports bound to task ports, ICMPv6
 * echo, and 6LoWPAN over an 802.15.4 link that the caller supplies (a
 * driver, later the BiPS multiplexer).
 *
 * Sending is one datagram at a time: udp_sendto builds it, cuts it into
 * frames and hands the link the first; ip_node_link_done (called when the
 * link has sent a frame) hands it the next. Receiving: every 6LoWPAN frame
 * goes to ip_node_input, which reassembles, checks and delivers a UDP
 * datagram to the task port bound to its destination port as a message
 * whose payload (an ip_udp_rx, a heap block) the task owns; echo requests
 * are answered. Nothing is dropped without a reason in the counters. */
#ifndef TERN_NET_IP_NODE_H
#define TERN_NET_IP_NODE_H

#include "lowpan.h"
#include "tern/types.h"

#ifndef IP_NODE_TX_SIZE
#define IP_NODE_TX_SIZE 256 /* the largest datagram this node sends */
#endif
#ifndef IP_NODE_PORTS
#define IP_NODE_PORTS 4
#endif
#ifndef IP_NODE_ROUTES
#define IP_NODE_ROUTES 8
#endif

/* Hands one 6LoWPAN payload to the link for dst (broadcast: short 0xffff).
 * NET_OK: under way, ip_node_link_done follows. */
typedef net_status (*ip_link_send_fn)(const uint8_t *payload, uint8_t len, const ll_addr *dst);

/* A second interface that carries whole IPv6 datagrams (a border router's
 * SLIP line): sends ip[0..len) at once, with byte 7 (the hop limit) sent as
 * hop_limit, so that a forwarded datagram needs no copy. */
typedef net_status (*ip_uplink_send_fn)(const uint8_t *ip, size_t len, uint8_t hop_limit);

/* The payload of a received-datagram message. */
typedef struct {
    ip6_addr src;
    uint16_t src_port, dst_port;
    uint16_t len;
    uint8_t data[];
} ip_udp_rx;

/* Route-over forwarding: datagrams to dst (its first prefix_len bits) go
 * to the neighbour next_hop; a next_hop of length 0 is the uplink. */
typedef struct {
    ip6_addr dst;
    uint8_t prefix_len;
    ll_addr next_hop;
} ip_route;

/* The next_hop of a route to the uplink. */
extern const ll_addr ip_uplink;

typedef struct {
    uint32_t sent, received;          /* datagrams */
    uint32_t forwarded;
    uint32_t frames_out, frames_in;
    uint32_t echo_replies;
    uint16_t dropped[NET_STATUS_COUNT]; /* datagrams received and refused, by reason */
    uint16_t send_refused[NET_STATUS_COUNT]; /* udp_sendto refusals, by reason */
    uint32_t link_failures;           /* frames the link could not send: datagram lost, counted */
} ip_node_counters;

typedef struct {
    ll_addr ll;
    ip6_addr link_local, global; /* global all zero: none */
    ip_link_send_fn link_send;
    ip_uplink_send_fn uplink_send; /* NULL: none */
    lowpan_reasm reasm;
    struct {
        uint16_t port;
        tern_task_id task;
        tern_port task_port;
    } bound[IP_NODE_PORTS];
    ip_route routes[IP_NODE_ROUTES];
    uint8_t n_routes;
    uint8_t tx[IP_NODE_TX_SIZE];
    uint8_t frame[127]; /* the frame being handed to the link: kept off a small stack */
    lowpan_fragmenter frag;
    bool sending;
    uint16_t tag;
    ip_node_counters count;
} ip_node;

/* reasm_timeout: in the units of the `now` given to ip_node_input. */
void ip_node_init(ip_node *n, const ll_addr *ll, const ip6_addr *global, ip_link_send_fn send,
                  uint32_t reasm_timeout);
/* Deliver datagrams to UDP port `port` to (task, task_port). */
net_status ip_node_bind(ip_node *n, uint16_t port, tern_task_id task, tern_port task_port);
/* Forward datagrams to dst through the neighbour next_hop (NET_ETOOBIG when
 * the table is full); a datagram for neither us nor a route is dropped,
 * counted NET_ENOROUTE, and one whose hop limit runs out NET_EHOPLIMIT. */
net_status ip_node_route(ip_node *n, const ip6_addr *dst, const ll_addr *next_hop);
/* The same for every address under dst/prefix_len; the longest matching
 * prefix wins. next_hop &ip_uplink: the uplink (ip_node_set_uplink). */
net_status ip_node_route_prefix(ip_node *n, const ip6_addr *dst, uint8_t prefix_len, const ll_addr *next_hop);
/* Give the node an uplink; datagrams from it come in by ip_node_input_ip. */
void ip_node_set_uplink(ip_node *n, ip_uplink_send_fn send);
/* Send a UDP datagram; next_hop NULL: the route's, or for a link-local
 * destination the neighbour its address names. NET_EBUSY while the previous
 * datagram is still going out, NET_ENOROUTE with nowhere to send it. */
net_status udp_sendto(ip_node *n, const ip6_addr *dst, const ll_addr *next_hop, uint16_t src_port,
                      uint16_t dst_port, const void *data, size_t len);
/* Where a payload built in place for udp_sendto goes (cap bytes at most):
 * passing it as `data` then copies nothing, which saves a buffer of the
 * datagram's size on a node with 4 KB of RAM. NULL while sending. */
uint8_t *udp_payload_buffer(ip_node *n, size_t *cap);
/* The link sent the last frame handed to it (ok), or could not. */
void ip_node_link_done(ip_node *n, bool ok);
/* A received 6LoWPAN payload from link-layer src to dst. */
void ip_node_input(ip_node *n, const uint8_t *payload, size_t len, const ll_addr *src,
                   const ll_addr *dst, uint32_t now);
/* A whole IPv6 datagram from the uplink: ours is delivered (an echo request
 * answered along the route back), anything else forwarded. */
void ip_node_input_ip(ip_node *n, const uint8_t *ip, size_t len);

#endif
