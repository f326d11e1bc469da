/*
 * tun.h - a node's USART0 bridged to a TUN interface on the host (Linux,
 * IFF_TUN | IFF_NO_PI): the border router's SLIP line (net/slip.c) carries
 * IPv6 between the host's own stack and the simulated network.
 *
 * The simulator creates the interface, gives the host an address on it and
 * a route into the simulation through it (ioctl, no iproute2 needed), and
 * the interface vanishes with the process. What the node writes to USART0
 * is decoded as SLIP: a frame (END ... END) holding an IPv6 datagram goes
 * to the host, bytes outside frames are the node's console. A datagram from
 * the host is SLIP-encoded and fed to the node's UART receiver no faster
 * than its baud rate and never into a full receive FIFO.
 *
 * With the host in the loop, tern-sim paces itself (tern-sim.c,
 * tun_wait): simulated time never runs ahead of wall-clock time since the
 * start; while nodes have work it may fall behind. A run with a TUN is
 * therefore neither repeatable nor faster than real time.
 */
#ifndef TERN_SIM_TUN_H
#define TERN_SIM_TUN_H

#include <netinet/in.h>

#include "sim.h"

struct tun_config {
	char ifname[16];		/* e.g. tern0 */
	struct in6_addr host;		/* the host's address on the interface */
	uint8_t host_len;		/* ... and its prefix length */
	struct in6_addr route;		/* the simulated network's prefix, routed into the TUN */
	uint8_t route_len;
};

/* Parse "2001:db8::1/64": 0, or -1 for anything else. */
int tun_parse_prefix(const char *text, struct in6_addr *addr, uint8_t *len);

/* Create the interface and set it up, and bridge the node's USART0 to it.
 * NULL with a message (which names the system's error: no /dev/net/tun,
 * no CAP_NET_ADMIN, IPv6 disabled ...) when that cannot be done. */
struct tun *tun_attach(struct sim_node *node, const struct tun_config *cfg, char *err, size_t errlen);

/* Main thread, between windows: wait until wall-clock time since `wall0`
 * (seconds, CLOCK_MONOTONIC) reaches `target`, or until one of the
 * interfaces has a datagram from the host; take every datagram waiting and
 * hand them to their nodes at the returned time (>= now, <= target). A
 * signal ends the wait early (the caller checks its flag). */
sim_ps tun_wait(struct tun **tuns, size_t n, sim_ps now, sim_ps target, double wall0);

/* The node's byte out of USART0 (node.c's UART hook). */
void tun_uart_out(struct tun *t, uint8_t byte);

/* ", \"tun\": {...}" for summary.json: the interface's counters. */
void tun_summary(const struct tun *t, FILE *f);

#endif
