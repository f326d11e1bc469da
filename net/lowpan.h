/* 6LoWPAN for IEEE 802.15.4: IPHC header compression with UDP next-header
 * compression (RFC 6282, stateless: no contexts) and fragmentation with
 * reassembly (RFC 4944, FRAG1/FRAGN). Pure functions and caller-owned
 * state, like ipv6.h: what arrives from the radio is parsed defensively,
 * refused by name and counted by reason, never read past its end. */
#ifndef TERN_NET_LOWPAN_H
#define TERN_NET_LOWPAN_H

#include "ipv6.h"

#define LOWPAN_DISPATCH_IPV6 0x41 /* uncompressed IPv6 follows */
#define LOWPAN_FRAG1_HEADER 4
#define LOWPAN_FRAGN_HEADER 5

/* The compressed headers of a whole IPv6 datagram (ip, len bytes) sent from
 * link-layer address src to dst: IPHC, and UDP's next-header compression
 * when the datagram is UDP. Returns their length (at most
 * LOWPAN_HEADER_MAX) and, in *consumed, how many bytes of the datagram they
 * stand for (40, or 48 with UDP); what follows goes as it is. 0 when the
 * datagram is not a valid IPv6 one (*why says why). */
#define LOWPAN_HEADER_MAX 48
size_t lowpan_compress_header(const uint8_t *ip, size_t len, const ll_addr *src, const ll_addr *dst,
                              uint8_t out[LOWPAN_HEADER_MAX], size_t *consumed, net_status *why);

/* Decompress the headers at the start of a 6LoWPAN payload (IPHC or the
 * uncompressed-IPv6 dispatch) into out. The IPv6 payload length and the UDP
 * length are left for the caller to fill once the datagram's size is known:
 * datagram_len (0: the rest of `in` is the whole payload) is the size of
 * the whole uncompressed datagram. Returns the bytes written to out (the
 * uncompressed headers) and in *used the bytes of `in` they took. */
net_status lowpan_decompress(const uint8_t *in, size_t len, const ll_addr *src, const ll_addr *dst,
                             size_t datagram_len, uint8_t *out, size_t cap, size_t *written,
                             size_t *used);

/* A whole unfragmented 6LoWPAN payload into the IPv6 datagram it carries. */
net_status lowpan_receive_whole(const uint8_t *in, size_t len, const ll_addr *src, const ll_addr *dst,
                                uint8_t *out, size_t cap, size_t *datagram_len);

/* --- fragmentation ------------------------------------------------------- */

/* Cuts a datagram into frames of at most frame_cap bytes of 6LoWPAN payload:
 * unfragmented if the compressed datagram fits, FRAG1 + FRAGN otherwise. */
typedef struct {
    const uint8_t *ip;
    size_t len;
    ll_addr src, dst;
    uint16_t tag;
    size_t frame_cap;
    size_t offset; /* bytes of the datagram sent so far (uncompressed) */
    bool started, done;
} lowpan_fragmenter;

void lowpan_fragment_start(lowpan_fragmenter *f, const uint8_t *ip, size_t len, const ll_addr *src,
                           const ll_addr *dst, uint16_t tag, size_t frame_cap);
/* The next frame's 6LoWPAN payload into out: its length, 0 when all were
 * given (f->done) or on an error (*why). */
size_t lowpan_fragment_next(lowpan_fragmenter *f, uint8_t *out, size_t cap, net_status *why);

/* --- reassembly ----------------------------------------------------------- */

#ifndef LOWPAN_REASM_SLOTS
#define LOWPAN_REASM_SLOTS 2
#endif
#ifndef LOWPAN_REASM_SIZE
#define LOWPAN_REASM_SIZE IP6_MIN_MTU /* the largest datagram reassembled */
#endif
#define LOWPAN_REASM_UNITS ((LOWPAN_REASM_SIZE + 7) / 8)

typedef struct {
    bool busy;
    ll_addr src, dst;
    uint16_t tag;
    uint16_t size;     /* datagram size, from the fragments */
    uint32_t started;  /* caller's time, for the timeout */
    uint16_t received; /* bytes of the datagram in so far */
    uint8_t have[(LOWPAN_REASM_UNITS + 7) / 8]; /* one bit per 8-byte unit */
    uint8_t data[LOWPAN_REASM_SIZE];
} lowpan_reasm_slot;

typedef struct {
    uint32_t frames;      /* fragments accepted */
    uint32_t datagrams;   /* reassembled completely */
    uint16_t dropped[NET_STATUS_COUNT]; /* fragments or datagrams refused, by reason */
} lowpan_reasm_counters;

/* An unfragmented frame's datagram: a 127-byte frame whose headers grow
 * from 6 compressed bytes to 48. */
#define LOWPAN_WHOLE_SIZE 176

typedef struct {
    lowpan_reasm_slot slot[LOWPAN_REASM_SLOTS];
    uint8_t whole[LOWPAN_WHOLE_SIZE];
    uint32_t timeout; /* in the caller's time units */
    lowpan_reasm_counters count;
} lowpan_reasm;

void lowpan_reasm_init(lowpan_reasm *r, uint32_t timeout);
/* Give up on datagrams older than the timeout (counted NET_ETIMEOUT). */
void lowpan_reasm_expire(lowpan_reasm *r, uint32_t now);

/* One received 6LoWPAN payload. When it completes a datagram (or is a
 * whole one), returns NET_OK with *datagram and *datagram_len set: the
 * datagram stays valid until the next call. NET_OK with *datagram NULL:
 * a fragment was taken and the datagram is not complete yet. Anything else
 * refused the frame (and counted it). */
net_status lowpan_reasm_input(lowpan_reasm *r, const uint8_t *in, size_t len, const ll_addr *src,
                              const ll_addr *dst, uint32_t now, const uint8_t **datagram,
                              size_t *datagram_len);

#endif
