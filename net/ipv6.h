/* IPv6, UDP and ICMPv6 echo for tern nodes (RFC 8200, 768, 4443): the
 * header formats, addresses derived from 802.15.4 link-layer addresses, and
 * the checksums. Pure functions on caller-owned buffers: no allocation, no
 * kernel state, so the parsers can be tested and fuzzed on the host.
 *
 * Every parser takes the length it was given as the truth and never trusts
 * a length field: a header that claims more than is there is refused with a
 * named error (net_status), and the caller counts it. */
#ifndef TERN_NET_IPV6_H
#define TERN_NET_IPV6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    NET_OK = 0,
    NET_ETRUNCATED,   /* shorter than the header it must hold */
    NET_EBADVERSION,  /* IPv6 header without version 6 */
    NET_EBADLENGTH,   /* a length field disagrees with the bytes received */
    NET_EBADCHECKSUM, /* UDP or ICMPv6 checksum wrong (or UDP's zero) */
    NET_EBADDISPATCH, /* not a 6LoWPAN header this stack knows */
    NET_EUNSUPPORTED, /* a valid feature this stack leaves out (IPHC contexts, ...) */
    NET_ETOOBIG,      /* does not fit the buffer or the datagram limit */
    NET_ENOBUFFER,    /* every reassembly buffer is in use */
    NET_EOVERLAP,     /* a fragment overlaps one already received */
    NET_EMISMATCH,    /* a fragment disagrees with its datagram (size) */
    NET_ETIMEOUT,     /* a reassembly did not complete in time */
    NET_ENOTFORUS,    /* destination is neither ours nor multicast we hear */
    NET_EHOPLIMIT,    /* hop limit exhausted while forwarding */
    NET_ENOROUTE,     /* nowhere to forward to */
    NET_ENOPORT,      /* no task bound to the destination port (or no room to bind) */
    NET_EBUSY,        /* the previous datagram is still going out */
    NET_ENOMEMORY,    /* no heap block for the message that would deliver it */
    NET_ENOTASK,      /* the bound task refused the message (tern_send's error) */
    NET_STATUS_COUNT
} net_status;

/* "NET_ETRUNCATED" and so on. */
const char *net_status_name(net_status s);

typedef struct {
    uint8_t b[16];
} ip6_addr;

/* An 802.15.4 address: short (16 bits) or extended (EUI-64). */
typedef struct {
    uint8_t len; /* 2 or 8 */
    uint8_t b[8]; /* big-endian, as written in IPv6 interface identifiers */
} ll_addr;

#define IP6_HEADER_LEN 40
#define UDP_HEADER_LEN 8
#define IP6_NEXT_UDP 17
#define IP6_NEXT_ICMP6 58
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define IP6_MIN_MTU 1280

typedef struct {
    uint8_t traffic_class;
    uint32_t flow_label; /* 20 bits */
    uint16_t payload_len;
    uint8_t next_header;
    uint8_t hop_limit;
    ip6_addr src, dst;
} ip6_header;

/* 16 bits in network byte order (IPv6, UDP, 6LoWPAN headers). */
static inline uint16_t net_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static inline void net_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

ll_addr ll_short(uint16_t addr);
/* fe80::/64 with the interface identifier RFC 6282 derives from a
 * link-layer address: 0000:00ff:fe00:XXXX for a short one, the EUI-64 with
 * its universal/local bit inverted for an extended one. */
ip6_addr ip6_link_local(const ll_addr *ll);
bool ip6_is_multicast(const ip6_addr *a);
bool ip6_is_link_local(const ip6_addr *a); /* fe80::, never forwarded */
bool ip6_equal(const ip6_addr *a, const ip6_addr *b);
/* The interface identifier of a is the one ll implies. */
bool ip6_iid_from_ll(const ip6_addr *a, const ll_addr *ll);

void ip6_write_header(const ip6_header *h, uint8_t out[IP6_HEADER_LEN]);
/* Parse the 40-byte header of a datagram of len bytes; its payload length
 * must match what follows. */
net_status ip6_read_header(const uint8_t *in, size_t len, ip6_header *h);

/* The checksum of UDP and ICMPv6 over the pseudo-header and the upper-layer
 * packet (whose own checksum field counts as given: write 0 first when
 * computing). */
uint16_t ip6_upper_checksum(const ip6_addr *src, const ip6_addr *dst, uint8_t next_header,
                            const uint8_t *upper, size_t len);

/* A whole UDP datagram (IPv6 header, UDP header, payload) into out:
 * its length, or 0 when it does not fit cap. */
size_t udp_build(const ip6_addr *src, const ip6_addr *dst, uint16_t src_port, uint16_t dst_port,
                 uint8_t hop_limit, const uint8_t *payload, size_t payload_len, uint8_t *out,
                 size_t cap);

typedef struct {
    ip6_header ip;
    uint16_t src_port, dst_port;
    const uint8_t *payload; /* inside the datagram given */
    size_t payload_len;
} udp_datagram;

/* Parse a whole UDP datagram: IPv6 header, lengths, checksum. */
net_status udp_parse(const uint8_t *in, size_t len, udp_datagram *d);

/* An ICMPv6 echo reply to the echo request in `in` (a whole datagram, for
 * our address `self`) into out: its length, 0 when `in` is no echo request
 * (*why says why) or out is too small. */
size_t icmp6_echo_reply(const uint8_t *in, size_t len, const ip6_addr *self, uint8_t *out,
                        size_t cap, net_status *why);
/* An echo request with this identifier, sequence number and data. */
size_t icmp6_echo_request(const ip6_addr *src, const ip6_addr *dst, uint16_t id, uint16_t seq,
                          const uint8_t *data, size_t data_len, uint8_t *out, size_t cap);

#endif
