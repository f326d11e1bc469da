/* IEEE 802.15.4 data frames as 6LoWPAN sends them: PAN id compression,
 * short or extended addresses. Building a header, and parsing a received
 * MPDU (FCS already checked and removed by the radio) without trusting
 * anything in it. */
#ifndef TERN_NET_MAC802154_H
#define TERN_NET_MAC802154_H

#include "ipv6.h"

#define MAC802154_HEADER_MAX 21 /* FCF 2, seq 1, PAN 2, two extended addresses */

/* A data frame header from src to dst in pan into out: its length. */
size_t mac802154_header(uint8_t out[MAC802154_HEADER_MAX], uint8_t seq, uint16_t pan,
                        const ll_addr *src, const ll_addr *dst);

typedef struct {
    uint8_t seq;
    uint16_t pan;
    ll_addr src, dst;
    const uint8_t *payload; /* inside the MPDU given */
    size_t payload_len;
} mac802154_frame;

/* NET_OK for a data frame with both addresses; NET_ETRUNCATED,
 * NET_EUNSUPPORTED (another frame type, security, missing addresses). */
net_status mac802154_parse(const uint8_t *mpdu, size_t len, mac802154_frame *f);

#endif
