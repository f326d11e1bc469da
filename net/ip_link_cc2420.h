/* The IP layer's link over the CC2420 driver, as the example apps use it:
 * one 802.15.4 data frame per 6LoWPAN payload each way (mac802154.c's header), sent
 * with CCA (cc2420_send), its outcome reported to the task the driver was
 * configured with, which calls ip_node_link_done. One radio per node: the
 * link keeps the node's address, PAN and sequence number itself. */
#ifndef TERN_NET_IP_LINK_CC2420_H
#define TERN_NET_IP_LINK_CC2420_H

#include "cc2420.h"
#include "ip_node.h"

void ip_link_cc2420_init(const ll_addr *self, uint16_t pan);

/* An ip_link_send_fn: NET_ETOOBIG when header and payload exceed a frame,
 * NET_EBUSY when the driver refused it (its counters say why). */
net_status ip_link_cc2420_send(const uint8_t *payload, uint8_t len, const ll_addr *dst);

/* A received frame to the IP layer (now_ms: ip_node_input's clock). false,
 * and the IP layer never sees it, when it is not a data frame of this PAN. */
bool ip_link_cc2420_input(ip_node *n, const cc2420_rx_frame *f, uint32_t now_ms);

/* The example apps' address plan: 2001:db8::(node + 1), docs/net.md. */
ip6_addr ip6_example_global(uint16_t node);

#endif
