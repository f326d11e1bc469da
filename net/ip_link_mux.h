/* The IP layer's link over BiPS's multiplexer (net/mux.h): the same
 * interface as ip_link_cc2420.h, but each 6LoWPAN frame goes into a TX TO
 * that is bound to CB or RB slot regions, and received frames come from an
 * RX TO. One radio per node: the link's state is its own.
 *
 * Pipelining. ip_node hands its link one frame at a time and the next on
 * ip_node_link_done. A slotted MAC must find the next frame queued when the
 * previous one is out (CB picks it at once, RB in the next own slot), or it
 * idles for the rest of the region; so this link reports a frame done as
 * soon as the TO has taken it, and ip_link_mux_pump (called by the task
 * after anything that may send) lets ip_node cut the next one, until the
 * datagram is queued or the TO is full. A frame the full TO refused is held
 * (ip_node waits for it) and queued again when a confirmation frees room.
 *
 * Nothing is lost silently: every frame queued is confirmed by the mux
 * (its mux_confirm message goes to the task, which passes it to
 * ip_link_mux_confirm) and counted ok, failed or late; a failed or late
 * frame also counts in ip_node's link_failures (its datagram is lost). A
 * confirmation the mux could not post is counted there (confirm_lost). */
#ifndef TERN_NET_IP_LINK_MUX_H
#define TERN_NET_IP_LINK_MUX_H

#include "cc2420.h"
#include "ip_node.h"
#include "mux.h"

typedef struct {
    uint32_t enqueued;  /* frames the TX TO took */
    uint32_t ok;        /* confirmed sent (MUX_OK) */
    uint32_t failed;    /* confirmed MUX_EFAILED after the TO's retransmissions */
    uint32_t late;      /* confirmed MUX_ELATE (EDF TOs) */
    uint32_t held;      /* times the TO was full and a frame waited for room */
    uint16_t outstanding; /* queued, not confirmed yet: enqueued - ok - failed - late */
} ip_link_mux_counters;

/* n: the node whose frames go out; to_id: its TX TO (depth frames deep);
 * confirm_port: the task port the mux confirms to (the caller's task);
 * offer: the MAC's hook for frames queued while its region runs (CB's
 * cb_offer; NULL for RB, which looks into its TOs at each own slot). */
void ip_link_mux_init(ip_node *n, uint8_t to_id, uint8_t depth, tern_port confirm_port, void (*offer)(void));

/* An ip_link_send_fn: NET_OK when queued or held; NET_ETOOBIG for a payload
 * longer than the TO's max_len; NET_EBUSY when the mux refused otherwise. */
net_status ip_link_mux_send(const uint8_t *payload, uint8_t len, const ll_addr *dst);

/* Let ip_node hand over further frames while the TO takes them; then the
 * MAC's offer hook. */
void ip_link_mux_pump(void);

/* A confirmation from the mux (the payload of a confirm_port message). */
void ip_link_mux_confirm(const mux_confirm *c);

/* A frame is held, or the TO holds `depth` frames: no room for more now. */
bool ip_link_mux_full(void);

/* A frame from the RX TO to the IP layer (now_ms: ip_node_input's clock);
 * false when it is not a data frame with both addresses. */
bool ip_link_mux_input(ip_node *n, const cc2420_rx_frame *f, uint32_t now_ms);

const ip_link_mux_counters *ip_link_mux_stats(void);

#endif
