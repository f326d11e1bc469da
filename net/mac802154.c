/* 802.15.4 data frame headers. See mac802154.h. */
#include "mac802154.h"

#include <string.h>

#define FCF_DATA 0x0001
#define FCF_SECURITY 0x0008
#define FCF_PAN_COMPRESSION 0x0040
#define ADDR_SHORT 2
#define ADDR_EXT 3

/* Addresses go least significant byte first on air; ll_addr holds them
 * most significant first, as IPv6 interface identifiers do. */
static void put_addr(uint8_t *out, const ll_addr *a)
{
    for (uint8_t i = 0; i < a->len; i++)
        out[i] = a->b[a->len - 1 - i];
}

static void get_addr(const uint8_t *in, uint8_t len, ll_addr *a)
{
    a->len = len;
    for (uint8_t i = 0; i < len; i++)
        a->b[i] = in[len - 1 - i];
}

size_t mac802154_header(uint8_t out[MAC802154_HEADER_MAX], uint8_t seq, uint16_t pan,
                        const ll_addr *src, const ll_addr *dst)
{
    uint16_t fcf = FCF_DATA | FCF_PAN_COMPRESSION | (uint16_t)((dst->len == 8 ? ADDR_EXT : ADDR_SHORT) << 10) |
                   (uint16_t)((src->len == 8 ? ADDR_EXT : ADDR_SHORT) << 14);
    out[0] = (uint8_t)fcf;
    out[1] = (uint8_t)(fcf >> 8);
    out[2] = seq;
    out[3] = (uint8_t)pan;
    out[4] = (uint8_t)(pan >> 8);
    size_t n = 5;
    put_addr(out + n, dst);
    n += dst->len;
    put_addr(out + n, src);
    return n + src->len;
}

static uint8_t addr_len(unsigned mode) { return mode == ADDR_SHORT ? 2 : mode == ADDR_EXT ? 8 : 0; }

net_status mac802154_parse(const uint8_t *mpdu, size_t len, mac802154_frame *f)
{
    if (len < 3)
        return NET_ETRUNCATED;
    uint16_t fcf = (uint16_t)(mpdu[0] | mpdu[1] << 8);
    if ((fcf & 7) != FCF_DATA || (fcf & FCF_SECURITY))
        return NET_EUNSUPPORTED;
    uint8_t dlen = addr_len((fcf >> 10) & 3), slen = addr_len((fcf >> 14) & 3);
    if (!dlen || !slen)
        return NET_EUNSUPPORTED; /* 6LoWPAN needs both addresses here */
    bool compressed = fcf & FCF_PAN_COMPRESSION;
    size_t need = 3 + 2 + dlen + (compressed ? 0 : 2) + slen;
    if (len < need)
        return NET_ETRUNCATED;
    f->seq = mpdu[2];
    f->pan = (uint16_t)(mpdu[3] | mpdu[4] << 8);
    size_t n = 5;
    get_addr(mpdu + n, dlen, &f->dst);
    n += dlen + (compressed ? 0 : 2);
    get_addr(mpdu + n, slen, &f->src);
    f->payload = mpdu + need;
    f->payload_len = len - need;
    return NET_OK;
}
