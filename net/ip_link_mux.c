/* The IP layer's link over the multiplexer (ip_link_mux.h). */
#include "ip_link_mux.h"

#include "mac802154.h"

static ip_node *node;
static uint8_t to, depth;
static tern_port confirm_port;
static void (*offer)(void);
static uint16_t tag;
static bool accepted; /* the last frame was queued: ip_node may cut the next */
static struct {
    const uint8_t *payload; /* ip_node's frame buffer, stable until link_done */
    uint8_t len;
    uint16_t dst;
    bool waiting;
} held;
static ip_link_mux_counters counters;

void ip_link_mux_init(ip_node *n, uint8_t to_id, uint8_t d, tern_port port, void (*offer_hook)(void))
{
    offer = offer_hook;
    node = n;
    to = to_id;
    depth = d;
    confirm_port = port;
    accepted = held.waiting = false;
}

const ip_link_mux_counters *ip_link_mux_stats(void) { return &counters; }

bool ip_link_mux_full(void) { return held.waiting || counters.outstanding >= depth; }

static mux_status enqueue(const uint8_t *payload, uint8_t len, uint16_t dst)
{
    mux_status s = mux_send(to, dst, payload, len, 0, tag, confirm_port);
    if (s == MUX_OK) {
        tag++;
        counters.enqueued++;
        counters.outstanding++;
        accepted = true;
    }
    return s;
}

net_status ip_link_mux_send(const uint8_t *payload, uint8_t len, const ll_addr *dst)
{
    /* the mux addresses by short address: ip_node's neighbours are ll_short ones */
    uint16_t d = dst->len == 2 ? (uint16_t)(dst->b[0] << 8 | dst->b[1]) : MUX_BROADCAST;
    switch (enqueue(payload, len, d)) {
    case MUX_OK:
        return NET_OK;
    case MUX_EFULL: /* the mux counted it (full); queued again on a confirmation */
        counters.held++;
        held.payload = payload;
        held.len = len;
        held.dst = d;
        held.waiting = true;
        return NET_OK;
    case MUX_ETOOLONG:
        return NET_ETOOBIG;
    default:
        return NET_EBUSY;
    }
}

void ip_link_mux_pump(void)
{
    /* ip_node_link_done cuts the next frame and calls ip_link_mux_send,
     * which sets `accepted` again if the TO took it: a loop, not recursion */
    while (accepted) {
        accepted = false;
        ip_node_link_done(node, true);
    }
    if (offer && counters.outstanding)
        offer();
}

void ip_link_mux_confirm(const mux_confirm *c)
{
    if (counters.outstanding)
        counters.outstanding--;
    if (c->status == MUX_OK) {
        counters.ok++;
    } else {
        if (c->status == MUX_ELATE)
            counters.late++;
        else
            counters.failed++;
        node->count.link_failures++; /* its datagram will not be whole at the receiver */
    }
    if (held.waiting && enqueue(held.payload, held.len, held.dst) == MUX_OK)
        held.waiting = false;
    ip_link_mux_pump();
}

bool ip_link_mux_input(ip_node *n, const cc2420_rx_frame *f, uint32_t now_ms)
{
    mac802154_frame m; /* the mux checked PAN and destination already */
    if (mac802154_parse(f->data, f->len, &m) != NET_OK)
        return false;
    ip_node_input(n, m.payload, m.payload_len, &m.src, &m.dst, now_ms);
    return true;
}
