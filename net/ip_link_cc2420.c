/* The IP layer's link over the CC2420 (ip_link_cc2420.h). */
#include "ip_link_cc2420.h"

#include <string.h>

#include "mac802154.h"

static ll_addr self;
static uint16_t pan;
static uint8_t seq;

void ip_link_cc2420_init(const ll_addr *addr, uint16_t pan_id)
{
    self = *addr;
    pan = pan_id;
    seq = 0;
}

net_status ip_link_cc2420_send(const uint8_t *payload, uint8_t len, const ll_addr *dst)
{
    static uint8_t mpdu[125]; /* static: the AVR's main stack is small */
    size_t h = mac802154_header(mpdu, seq++, pan, &self, dst);
    if (h + len > sizeof mpdu)
        return NET_ETOOBIG;
    memcpy(mpdu + h, payload, len);
    return cc2420_send(mpdu, (uint8_t)(h + len), true) == CC2420_OK ? NET_OK : NET_EBUSY;
}

bool ip_link_cc2420_input(ip_node *n, const cc2420_rx_frame *f, uint32_t now_ms)
{
    mac802154_frame m;
    if (mac802154_parse(f->data, f->len, &m) != NET_OK || m.pan != pan)
        return false;
    ip_node_input(n, m.payload, m.payload_len, &m.src, &m.dst, now_ms);
    return true;
}

ip6_addr ip6_example_global(uint16_t node)
{
    ip6_addr a = {{0x20, 0x01, 0x0d, 0xb8}};
    a.b[14] = (uint8_t)((node + 1) >> 8);
    a.b[15] = (uint8_t)(node + 1);
    return a;
}
