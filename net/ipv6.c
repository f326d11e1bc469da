/* IPv6 headers, addresses from link-layer addresses, UDP, ICMPv6 echo.
 * See ipv6.h. */
#include "ipv6.h"

#include <string.h>

static const char *const status_names[NET_STATUS_COUNT] = {
    [NET_OK] = "NET_OK",
    [NET_ETRUNCATED] = "NET_ETRUNCATED",
    [NET_EBADVERSION] = "NET_EBADVERSION",
    [NET_EBADLENGTH] = "NET_EBADLENGTH",
    [NET_EBADCHECKSUM] = "NET_EBADCHECKSUM",
    [NET_EBADDISPATCH] = "NET_EBADDISPATCH",
    [NET_EUNSUPPORTED] = "NET_EUNSUPPORTED",
    [NET_ETOOBIG] = "NET_ETOOBIG",
    [NET_ENOBUFFER] = "NET_ENOBUFFER",
    [NET_EOVERLAP] = "NET_EOVERLAP",
    [NET_EMISMATCH] = "NET_EMISMATCH",
    [NET_ETIMEOUT] = "NET_ETIMEOUT",
    [NET_ENOTFORUS] = "NET_ENOTFORUS",
    [NET_EHOPLIMIT] = "NET_EHOPLIMIT",
    [NET_ENOROUTE] = "NET_ENOROUTE",
    [NET_ENOPORT] = "NET_ENOPORT",
    [NET_EBUSY] = "NET_EBUSY",
    [NET_ENOMEMORY] = "NET_ENOMEMORY",
    [NET_ENOTASK] = "NET_ENOTASK",
};

const char *net_status_name(net_status s)
{
    return (unsigned)s < NET_STATUS_COUNT ? status_names[s] : "NET_E?";
}

ll_addr ll_short(uint16_t addr)
{
    ll_addr ll = {.len = 2};
    net_put16(ll.b, addr);
    return ll;
}

/* The interface identifier (8 bytes) of a link-layer address. */
static void iid_of(const ll_addr *ll, uint8_t iid[8])
{
    if (ll->len == 8) {
        memcpy(iid, ll->b, 8);
        iid[0] ^= 0x02; /* universal/local bit */
        return;
    }
    static const uint8_t short_prefix[6] = {0, 0, 0, 0xff, 0xfe, 0};
    memcpy(iid, short_prefix, 6);
    iid[6] = ll->b[0];
    iid[7] = ll->b[1];
}

ip6_addr ip6_link_local(const ll_addr *ll)
{
    ip6_addr a = {{0xfe, 0x80}};
    iid_of(ll, a.b + 8);
    return a;
}

bool ip6_is_multicast(const ip6_addr *a) { return a->b[0] == 0xff; }

bool ip6_is_link_local(const ip6_addr *a) { return a->b[0] == 0xfe && a->b[1] == 0x80; }

bool ip6_equal(const ip6_addr *a, const ip6_addr *b) { return memcmp(a->b, b->b, 16) == 0; }

bool ip6_iid_from_ll(const ip6_addr *a, const ll_addr *ll)
{
    uint8_t iid[8];
    iid_of(ll, iid);
    return memcmp(a->b + 8, iid, 8) == 0;
}

void ip6_write_header(const ip6_header *h, uint8_t out[IP6_HEADER_LEN])
{
    out[0] = (uint8_t)(0x60 | h->traffic_class >> 4);
    out[1] = (uint8_t)(h->traffic_class << 4 | ((h->flow_label >> 16) & 0x0f));
    net_put16(out + 2, (uint16_t)h->flow_label);
    net_put16(out + 4, h->payload_len);
    out[6] = h->next_header;
    out[7] = h->hop_limit;
    memcpy(out + 8, h->src.b, 16);
    memcpy(out + 24, h->dst.b, 16);
}

net_status ip6_read_header(const uint8_t *in, size_t len, ip6_header *h)
{
    if (len < IP6_HEADER_LEN)
        return NET_ETRUNCATED;
    if ((in[0] >> 4) != 6)
        return NET_EBADVERSION;
    h->traffic_class = (uint8_t)(in[0] << 4 | in[1] >> 4);
    h->flow_label = (uint32_t)(in[1] & 0x0f) << 16 | net_get16(in + 2);
    h->payload_len = net_get16(in + 4);
    h->next_header = in[6];
    h->hop_limit = in[7];
    memcpy(h->src.b, in + 8, 16);
    memcpy(h->dst.b, in + 24, 16);
    if (h->payload_len != len - IP6_HEADER_LEN)
        return NET_EBADLENGTH;
    return NET_OK;
}

/* Ones' complement sum, 16 bits at a time, carries folded at the end. */
static uint32_t sum_bytes(uint32_t sum, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += net_get16(p + i);
    if (len & 1)
        sum += (uint32_t)p[len - 1] << 8;
    return sum;
}

uint16_t ip6_upper_checksum(const ip6_addr *src, const ip6_addr *dst, uint8_t next_header,
                            const uint8_t *upper, size_t len)
{
    uint32_t sum = sum_bytes(0, src->b, 16);
    sum = sum_bytes(sum, dst->b, 16);
    sum += ((uint32_t)len >> 16) + ((uint32_t)len & 0xffff) + next_header;
    sum = sum_bytes(sum, upper, len);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

size_t udp_build(const ip6_addr *src, const ip6_addr *dst, uint16_t src_port, uint16_t dst_port,
                 uint8_t hop_limit, const uint8_t *payload, size_t payload_len, uint8_t *out,
                 size_t cap)
{
    size_t udp_len = UDP_HEADER_LEN + payload_len;
    if (udp_len > 0xffff || IP6_HEADER_LEN + udp_len > cap)
        return 0;
    ip6_header h = {.payload_len = (uint16_t)udp_len, .next_header = IP6_NEXT_UDP,
                    .hop_limit = hop_limit, .src = *src, .dst = *dst};
    ip6_write_header(&h, out);
    uint8_t *udp = out + IP6_HEADER_LEN;
    net_put16(udp, src_port);
    net_put16(udp + 2, dst_port);
    net_put16(udp + 4, (uint16_t)udp_len);
    net_put16(udp + 6, 0);
    memmove(udp + UDP_HEADER_LEN, payload, payload_len);
    uint16_t sum = ip6_upper_checksum(src, dst, IP6_NEXT_UDP, udp, udp_len);
    net_put16(udp + 6, sum ? sum : 0xffff); /* 0 means "none", which IPv6 forbids */
    return IP6_HEADER_LEN + udp_len;
}

net_status udp_parse(const uint8_t *in, size_t len, udp_datagram *d)
{
    net_status s = ip6_read_header(in, len, &d->ip);
    if (s != NET_OK)
        return s;
    if (d->ip.next_header != IP6_NEXT_UDP)
        return NET_EUNSUPPORTED;
    const uint8_t *udp = in + IP6_HEADER_LEN;
    size_t udp_len = len - IP6_HEADER_LEN;
    if (udp_len < UDP_HEADER_LEN)
        return NET_ETRUNCATED;
    if (net_get16(udp + 4) != udp_len)
        return NET_EBADLENGTH;
    if (net_get16(udp + 6) == 0 || ip6_upper_checksum(&d->ip.src, &d->ip.dst, IP6_NEXT_UDP, udp, udp_len) != 0)
        return NET_EBADCHECKSUM;
    d->src_port = net_get16(udp);
    d->dst_port = net_get16(udp + 2);
    d->payload = udp + UDP_HEADER_LEN;
    d->payload_len = udp_len - UDP_HEADER_LEN;
    return NET_OK;
}

static size_t icmp6_echo(uint8_t type, const ip6_addr *src, const ip6_addr *dst, uint16_t id,
                         uint16_t seq, const uint8_t *data, size_t data_len, uint8_t *out, size_t cap)
{
    size_t icmp_len = 8 + data_len;
    if (icmp_len > 0xffff || IP6_HEADER_LEN + icmp_len > cap)
        return 0;
    ip6_header h = {.payload_len = (uint16_t)icmp_len, .next_header = IP6_NEXT_ICMP6,
                    .hop_limit = 64, .src = *src, .dst = *dst};
    ip6_write_header(&h, out);
    uint8_t *icmp = out + IP6_HEADER_LEN;
    icmp[0] = type;
    icmp[1] = 0;
    net_put16(icmp + 2, 0);
    net_put16(icmp + 4, id);
    net_put16(icmp + 6, seq);
    memmove(icmp + 8, data, data_len);
    net_put16(icmp + 2, ip6_upper_checksum(src, dst, IP6_NEXT_ICMP6, icmp, icmp_len));
    return IP6_HEADER_LEN + icmp_len;
}

size_t icmp6_echo_request(const ip6_addr *src, const ip6_addr *dst, uint16_t id, uint16_t seq,
                          const uint8_t *data, size_t data_len, uint8_t *out, size_t cap)
{
    return icmp6_echo(ICMP6_ECHO_REQUEST, src, dst, id, seq, data, data_len, out, cap);
}

size_t icmp6_echo_reply(const uint8_t *in, size_t len, const ip6_addr *self, uint8_t *out,
                        size_t cap, net_status *why)
{
    ip6_header h;
    net_status s = ip6_read_header(in, len, &h);
    const uint8_t *icmp = in + IP6_HEADER_LEN;
    size_t icmp_len = len - IP6_HEADER_LEN;
    if (s == NET_OK && h.next_header != IP6_NEXT_ICMP6)
        s = NET_EUNSUPPORTED;
    if (s == NET_OK && icmp_len < 8)
        s = NET_ETRUNCATED;
    if (s == NET_OK && ip6_upper_checksum(&h.src, &h.dst, IP6_NEXT_ICMP6, icmp, icmp_len) != 0)
        s = NET_EBADCHECKSUM;
    if (s == NET_OK && (icmp[0] != ICMP6_ECHO_REQUEST || icmp[1] != 0))
        s = NET_EUNSUPPORTED;
    size_t n = 0;
    if (s == NET_OK) {
        /* to a multicast request, answer from our own address */
        const ip6_addr *from = ip6_is_multicast(&h.dst) ? self : &h.dst;
        n = icmp6_echo(ICMP6_ECHO_REPLY, from, &h.src, net_get16(icmp + 4), net_get16(icmp + 6), icmp + 8,
                       icmp_len - 8, out, cap);
        if (n == 0)
            s = NET_ETOOBIG;
    }
    if (why)
        *why = s;
    return n;
}
