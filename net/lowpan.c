/* 6LoWPAN: IPHC (RFC 6282, stateless) with UDP next-header compression,
 * fragmentation and reassembly (RFC 4944). See lowpan.h. */
#include "lowpan.h"

#include <string.h>

#define IPHC_DISPATCH 0x60 /* 011x xxxx */
#define IPHC_MASK 0xe0
#define FRAG1_DISPATCH 0xc0 /* 11000xxx */
#define FRAGN_DISPATCH 0xe0 /* 11100xxx */
#define FRAG_MASK 0xf8
#define NHC_UDP 0xf0 /* 11110CPP */
#define NHC_UDP_MASK 0xf8
#define DATAGRAM_SIZE_MAX 2047 /* 11 bits of the fragment headers */

static bool all_zero(const uint8_t *p, size_t n)
{
    while (n--)
        if (*p++)
            return false;
    return true;
}

/* --- compression ---------------------------------------------------------- */

/* SAM/DAM for a unicast address, and the inline bytes it needs. */
static uint8_t unicast_mode(const ip6_addr *a, const ll_addr *ll, uint8_t *out, size_t *n)
{
    static const uint8_t link_local[8] = {0xfe, 0x80};
    static const uint8_t short_iid[6] = {0, 0, 0, 0xff, 0xfe, 0};
    if (memcmp(a->b, link_local, 8) == 0) {
        if (ip6_iid_from_ll(a, ll))
            return 3; /* all from the link-layer address */
        if (memcmp(a->b + 8, short_iid, 6) == 0) {
            memcpy(out + *n, a->b + 14, 2);
            *n += 2;
            return 2;
        }
        memcpy(out + *n, a->b + 8, 8);
        *n += 8;
        return 1;
    }
    memcpy(out + *n, a->b, 16);
    *n += 16;
    return 0;
}

static uint8_t multicast_mode(const ip6_addr *a, uint8_t *out, size_t *n)
{
    if (a->b[1] == 0x02 && all_zero(a->b + 2, 13)) { /* ff02::00XX */
        out[(*n)++] = a->b[15];
        return 3;
    }
    if (all_zero(a->b + 2, 11)) { /* ffXX::00XX:XXXX */
        out[(*n)++] = a->b[1];
        memcpy(out + *n, a->b + 13, 3);
        *n += 3;
        return 2;
    }
    if (all_zero(a->b + 2, 9)) { /* ffXX::00XX:XXXX:XXXX */
        out[(*n)++] = a->b[1];
        memcpy(out + *n, a->b + 11, 5);
        *n += 5;
        return 1;
    }
    memcpy(out + *n, a->b, 16);
    *n += 16;
    return 0;
}

size_t lowpan_compress_header(const uint8_t *ip, size_t len, const ll_addr *src, const ll_addr *dst,
                              uint8_t out[LOWPAN_HEADER_MAX], size_t *consumed, net_status *why)
{
    ip6_header h;
    net_status s = ip6_read_header(ip, len, &h);
    if (why)
        *why = s;
    if (s != NET_OK)
        return 0;
    const uint8_t *udp = ip + IP6_HEADER_LEN;
    bool nhc_udp = h.next_header == IP6_NEXT_UDP && h.payload_len >= UDP_HEADER_LEN &&
                   net_get16(udp + 4) == h.payload_len;

    size_t n = 2;
    uint8_t ecn = h.traffic_class & 3, dscp = h.traffic_class >> 2, tf;
    if (h.traffic_class == 0 && h.flow_label == 0) {
        tf = 3;
    } else if (h.flow_label == 0) {
        tf = 2;
        out[n++] = (uint8_t)(ecn << 6 | dscp);
    } else if (dscp == 0) {
        tf = 1;
        out[n++] = (uint8_t)(ecn << 6 | ((h.flow_label >> 16) & 0x0f));
        net_put16(out + n, (uint16_t)h.flow_label);
        n += 2;
    } else {
        tf = 0;
        out[n++] = (uint8_t)(ecn << 6 | dscp);
        out[n++] = (uint8_t)((h.flow_label >> 16) & 0x0f);
        net_put16(out + n, (uint16_t)h.flow_label);
        n += 2;
    }
    if (!nhc_udp)
        out[n++] = h.next_header;
    uint8_t hlim;
    switch (h.hop_limit) {
    case 1: hlim = 1; break;
    case 64: hlim = 2; break;
    case 255: hlim = 3; break;
    default: hlim = 0; out[n++] = h.hop_limit; break;
    }
    uint8_t sam = unicast_mode(&h.src, src, out, &n);
    bool m = ip6_is_multicast(&h.dst);
    uint8_t dam = m ? multicast_mode(&h.dst, out, &n) : unicast_mode(&h.dst, dst, out, &n);
    out[0] = (uint8_t)(IPHC_DISPATCH | tf << 3 | (nhc_udp ? 4 : 0) | hlim);
    out[1] = (uint8_t)(sam << 4 | (m ? 8 : 0) | dam);
    *consumed = IP6_HEADER_LEN;

    if (nhc_udp) {
        uint16_t sp = net_get16(udp), dp = net_get16(udp + 2);
        if ((sp & 0xfff0) == 0xf0b0 && (dp & 0xfff0) == 0xf0b0) {
            out[n++] = NHC_UDP | 3;
            out[n++] = (uint8_t)((sp & 0x0f) << 4 | (dp & 0x0f));
        } else if ((dp & 0xff00) == 0xf000) {
            out[n++] = NHC_UDP | 1;
            net_put16(out + n, sp);
            out[n + 2] = (uint8_t)dp;
            n += 3;
        } else if ((sp & 0xff00) == 0xf000) {
            out[n++] = NHC_UDP | 2;
            out[n++] = (uint8_t)sp;
            net_put16(out + n, dp);
            n += 2;
        } else {
            out[n++] = NHC_UDP;
            memcpy(out + n, udp, 4);
            n += 4;
        }
        memcpy(out + n, udp + 6, 2); /* the checksum, always carried */
        n += 2;
        *consumed += UDP_HEADER_LEN;
    }
    return n;
}

/* --- decompression ----------------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    size_t left;
    bool short_read;
} reader;

/* Once a read has come up short, every later one does too. */
static const uint8_t *take(reader *r, size_t n)
{
    if (r->short_read || r->left < n) {
        r->short_read = true;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    r->left -= n;
    return at;
}

static void read_into(reader *r, uint8_t *dst, size_t n)
{
    const uint8_t *at = take(r, n);
    if (at)
        memcpy(dst, at, n);
}

static uint8_t read8(reader *r)
{
    const uint8_t *at = take(r, 1);
    return at ? *at : 0;
}

static net_status unicast_address(reader *r, uint8_t mode, const ll_addr *ll, ip6_addr *a)
{
    static const uint8_t short_iid[6] = {0, 0, 0, 0xff, 0xfe, 0};
    memset(a, 0, sizeof *a);
    a->b[0] = 0xfe;
    a->b[1] = 0x80;
    switch (mode) {
    case 0: read_into(r, a->b, 16); break;
    case 1: read_into(r, a->b + 8, 8); break;
    case 2:
        memcpy(a->b + 8, short_iid, 6);
        read_into(r, a->b + 14, 2);
        break;
    default:
        if (ll->len != 2 && ll->len != 8)
            return NET_EBADDISPATCH; /* nothing to derive it from */
        *a = ip6_link_local(ll);
        break;
    }
    return NET_OK;
}

static void multicast_address(reader *r, uint8_t mode, ip6_addr *a)
{
    memset(a, 0, sizeof *a);
    a->b[0] = 0xff;
    switch (mode) {
    case 0: read_into(r, a->b, 16); break;
    case 1:
        a->b[1] = read8(r);
        read_into(r, a->b + 11, 5);
        break;
    case 2:
        a->b[1] = read8(r);
        read_into(r, a->b + 13, 3);
        break;
    default:
        a->b[1] = 0x02;
        a->b[15] = read8(r);
        break;
    }
}

net_status lowpan_decompress(const uint8_t *in, size_t len, const ll_addr *src, const ll_addr *dst,
                             size_t datagram_len, uint8_t *out, size_t cap, size_t *written,
                             size_t *used)
{
    if (len < 1)
        return NET_ETRUNCATED;
    if (in[0] == LOWPAN_DISPATCH_IPV6) {
        if (len < 1 + IP6_HEADER_LEN)
            return NET_ETRUNCATED;
        if (cap < IP6_HEADER_LEN)
            return NET_ETOOBIG;
        memcpy(out, in + 1, IP6_HEADER_LEN);
        *written = IP6_HEADER_LEN;
        *used = 1 + IP6_HEADER_LEN;
        return NET_OK;
    }
    if ((in[0] & 0xc0) == 0x80)
        return NET_EUNSUPPORTED; /* mesh header: route-over only here */
    if ((in[0] & IPHC_MASK) != IPHC_DISPATCH)
        return NET_EBADDISPATCH;
    if (len < 2)
        return NET_ETRUNCATED;
    reader r = {in + 2, len - 2, false};
    uint8_t tf = (in[0] >> 3) & 3, nh = (in[0] >> 2) & 1, hlim = in[0] & 3;
    bool cid = in[1] & 0x80, sac = in[1] & 0x40, m = in[1] & 0x08, dac = in[1] & 0x04;
    uint8_t sam = (in[1] >> 4) & 3, dam = in[1] & 3;
    if (cid || (sac && sam != 0) || dac)
        return NET_EUNSUPPORTED; /* context-based compression */

    ip6_header h = {0};
    uint8_t b0 = 0, b1 = 0;
    switch (tf) {
    case 0:
        b0 = read8(&r);
        b1 = read8(&r);
        h.traffic_class = (uint8_t)((b0 & 0x3f) << 2 | b0 >> 6);
        h.flow_label = (uint32_t)(b1 & 0x0f) << 16;
        h.flow_label |= (uint32_t)read8(&r) << 8;
        h.flow_label |= read8(&r);
        break;
    case 1:
        b0 = read8(&r);
        h.traffic_class = (uint8_t)(b0 >> 6);
        h.flow_label = (uint32_t)(b0 & 0x0f) << 16;
        h.flow_label |= (uint32_t)read8(&r) << 8;
        h.flow_label |= read8(&r);
        break;
    case 2:
        b0 = read8(&r);
        h.traffic_class = (uint8_t)((b0 & 0x3f) << 2 | b0 >> 6);
        break;
    default: break;
    }
    if (!nh)
        h.next_header = read8(&r);
    static const uint8_t hop_limits[4] = {0, 1, 64, 255};
    h.hop_limit = hlim ? hop_limits[hlim] : read8(&r);
    net_status s = NET_OK;
    if (sac)
        memset(&h.src, 0, sizeof h.src); /* SAC=1, SAM=00: the unspecified address */
    else
        s = unicast_address(&r, sam, src, &h.src);
    if (s == NET_OK) {
        if (m)
            multicast_address(&r, dam, &h.dst);
        else
            s = unicast_address(&r, dam, dst, &h.dst);
    }
    if (s != NET_OK)
        return s;

    uint8_t udp[UDP_HEADER_LEN];
    if (nh) {
        uint8_t nhc = read8(&r);
        if (r.short_read)
            return NET_ETRUNCATED;
        if ((nhc & NHC_UDP_MASK) != NHC_UDP)
            return NET_EUNSUPPORTED; /* extension header compression */
        if (nhc & 4)
            return NET_EUNSUPPORTED; /* checksum elided: not ours to recompute */
        uint16_t sp, dp;
        switch (nhc & 3) {
        case 0:
            sp = (uint16_t)(read8(&r) << 8);
            sp |= read8(&r);
            dp = (uint16_t)(read8(&r) << 8);
            dp |= read8(&r);
            break;
        case 1:
            sp = (uint16_t)(read8(&r) << 8);
            sp |= read8(&r);
            dp = (uint16_t)(0xf000 | read8(&r));
            break;
        case 2:
            sp = (uint16_t)(0xf000 | read8(&r));
            dp = (uint16_t)(read8(&r) << 8);
            dp |= read8(&r);
            break;
        default: {
            uint8_t ports = read8(&r);
            sp = (uint16_t)(0xf0b0 | ports >> 4);
            dp = (uint16_t)(0xf0b0 | (ports & 0x0f));
            break;
        }
        }
        h.next_header = IP6_NEXT_UDP;
        net_put16(udp, sp);
        net_put16(udp + 2, dp);
        read_into(&r, udp + 6, 2);
    }
    if (r.short_read)
        return NET_ETRUNCATED;

    size_t headers = IP6_HEADER_LEN + (nh ? UDP_HEADER_LEN : 0);
    size_t total = datagram_len ? datagram_len : headers + r.left;
    if (total < headers || total - IP6_HEADER_LEN > 0xffff)
        return NET_EMISMATCH;
    if (cap < headers)
        return NET_ETOOBIG;
    h.payload_len = (uint16_t)(total - IP6_HEADER_LEN);
    ip6_write_header(&h, out);
    if (nh) {
        net_put16(udp + 4, h.payload_len);
        memcpy(out + IP6_HEADER_LEN, udp, UDP_HEADER_LEN);
    }
    *written = headers;
    *used = len - r.left;
    return NET_OK;
}

net_status lowpan_receive_whole(const uint8_t *in, size_t len, const ll_addr *src, const ll_addr *dst,
                                uint8_t *out, size_t cap, size_t *datagram_len)
{
    size_t written, used;
    net_status s = lowpan_decompress(in, len, src, dst, 0, out, cap, &written, &used);
    if (s != NET_OK)
        return s;
    size_t rest = len - used;
    if (written + rest > cap)
        return NET_ETOOBIG;
    memcpy(out + written, in + used, rest);
    ip6_header h;
    s = ip6_read_header(out, written + rest, &h); /* the uncompressed dispatch's own length */
    if (s == NET_OK)
        *datagram_len = written + rest;
    return s;
}

/* --- fragmentation -------------------------------------------------------- */

void lowpan_fragment_start(lowpan_fragmenter *f, const uint8_t *ip, size_t len, const ll_addr *src,
                           const ll_addr *dst, uint16_t tag, size_t frame_cap)
{
    *f = (lowpan_fragmenter){.ip = ip, .len = len, .src = *src, .dst = *dst, .tag = tag,
                             .frame_cap = frame_cap};
}

static void frag_header(uint8_t *out, uint8_t dispatch, size_t size, uint16_t tag)
{
    out[0] = (uint8_t)(dispatch | (size >> 8 & 7));
    out[1] = (uint8_t)size;
    net_put16(out + 2, tag);
}

size_t lowpan_fragment_next(lowpan_fragmenter *f, uint8_t *out, size_t cap, net_status *why)
{
    net_status s = NET_OK;
    size_t n = 0, frame = f->frame_cap < cap ? f->frame_cap : cap;
    if (f->done)
        goto out;
    if (!f->started) {
        uint8_t hc[LOWPAN_HEADER_MAX];
        size_t consumed;
        size_t hlen = lowpan_compress_header(f->ip, f->len, &f->src, &f->dst, hc, &consumed, &s);
        if (hlen == 0)
            goto out;
        f->started = true;
        size_t rest = f->len - consumed;
        if (hlen + rest <= frame) { /* fits one frame: no fragment header */
            memcpy(out, hc, hlen);
            memcpy(out + hlen, f->ip + consumed, rest);
            n = hlen + rest;
            f->done = true;
            goto out;
        }
        if (f->len > DATAGRAM_SIZE_MAX) {
            s = NET_ETOOBIG;
            goto out;
        }
        /* FRAG1: the headers and as much payload as keeps the next
         * offset a multiple of 8 bytes of the uncompressed datagram */
        if (frame < LOWPAN_FRAG1_HEADER + hlen) {
            s = NET_ETOOBIG;
            goto out;
        }
        size_t room = frame - LOWPAN_FRAG1_HEADER - hlen;
        size_t end = (consumed + room) / 8 * 8;
        if (end <= consumed) {
            s = NET_ETOOBIG;
            goto out;
        }
        frag_header(out, FRAG1_DISPATCH, f->len, f->tag);
        memcpy(out + LOWPAN_FRAG1_HEADER, hc, hlen);
        memcpy(out + LOWPAN_FRAG1_HEADER + hlen, f->ip + consumed, end - consumed);
        n = LOWPAN_FRAG1_HEADER + hlen + end - consumed;
        f->offset = end;
        goto out;
    }
    size_t chunk = (frame - LOWPAN_FRAGN_HEADER) / 8 * 8;
    if (frame <= LOWPAN_FRAGN_HEADER || chunk == 0) {
        s = NET_ETOOBIG;
        goto out;
    }
    if (chunk > f->len - f->offset)
        chunk = f->len - f->offset;
    frag_header(out, FRAGN_DISPATCH, f->len, f->tag);
    out[4] = (uint8_t)(f->offset / 8);
    memcpy(out + LOWPAN_FRAGN_HEADER, f->ip + f->offset, chunk);
    n = LOWPAN_FRAGN_HEADER + chunk;
    f->offset += chunk;
    f->done = f->offset == f->len;
out:
    if (why)
        *why = s;
    return n;
}

/* --- reassembly ------------------------------------------------------------- */

void lowpan_reasm_init(lowpan_reasm *r, uint32_t timeout)
{
    memset(r, 0, sizeof *r);
    r->timeout = timeout;
}

static bool same_ll(const ll_addr *a, const ll_addr *b)
{
    return a->len == b->len && memcmp(a->b, b->b, a->len) == 0;
}

static net_status refuse(lowpan_reasm *r, net_status why)
{
    r->count.dropped[why]++;
    return why;
}

/* Give a slot up, counting the datagram it held as dropped for `why`. */
static void abandon(lowpan_reasm *r, lowpan_reasm_slot *slot, net_status why)
{
    slot->busy = false;
    r->count.dropped[why]++;
}

void lowpan_reasm_expire(lowpan_reasm *r, uint32_t now)
{
    for (int i = 0; i < LOWPAN_REASM_SLOTS; i++)
        if (r->slot[i].busy && now - r->slot[i].started >= r->timeout)
            abandon(r, &r->slot[i], NET_ETIMEOUT);
}

static lowpan_reasm_slot *find_slot(lowpan_reasm *r, const ll_addr *src, const ll_addr *dst,
                                    uint16_t tag, uint16_t size, uint32_t now, bool first,
                                    net_status *why)
{
    lowpan_reasm_slot *free_slot = NULL;
    for (int i = 0; i < LOWPAN_REASM_SLOTS; i++) {
        lowpan_reasm_slot *s = &r->slot[i];
        if (!s->busy) {
            if (!free_slot)
                free_slot = s;
            continue;
        }
        if (s->tag == tag && same_ll(&s->src, src) && same_ll(&s->dst, dst)) {
            if (s->size == size)
                return s;
            /* the same tag with another size: the old datagram is lost */
            abandon(r, s, NET_EMISMATCH);
            if (!free_slot)
                free_slot = s;
        }
    }
    if (!free_slot && first) {
        /* A sender's next datagram while every buffer is taken: the one it
         * left incomplete will not complete (its frames arrive in order and
         * lost ones are not sent again), so its oldest gives its buffer up,
         * counted, instead of blocking every later datagram until the
         * timeout. A FRAG1 only: a stray FRAGN evicts nothing. */
        for (int i = 0; i < LOWPAN_REASM_SLOTS; i++) {
            lowpan_reasm_slot *s = &r->slot[i];
            if (same_ll(&s->src, src) && (!free_slot || (int32_t)(s->started - free_slot->started) < 0))
                free_slot = s;
        }
        if (free_slot)
            abandon(r, free_slot, NET_ENOBUFFER);
    }
    if (!free_slot) {
        *why = NET_ENOBUFFER;
        return NULL;
    }
    *free_slot = (lowpan_reasm_slot){.busy = true, .src = *src, .dst = *dst, .tag = tag,
                                     .size = size, .started = now};
    return free_slot;
}

/* Mark bytes [from, to) as received; false if any 8-byte unit was already. */
static bool claim(lowpan_reasm_slot *s, size_t from, size_t to)
{
    size_t first = from / 8, last = (to + 7) / 8;
    for (size_t u = first; u < last; u++)
        if (s->have[u / 8] & (1u << (u % 8)))
            return false;
    for (size_t u = first; u < last; u++)
        s->have[u / 8] |= (uint8_t)(1u << (u % 8));
    return true;
}

net_status lowpan_reasm_input(lowpan_reasm *r, const uint8_t *in, size_t len, const ll_addr *src,
                              const ll_addr *dst, uint32_t now, const uint8_t **datagram,
                              size_t *datagram_len)
{
    *datagram = NULL;
    if (len < 1)
        return refuse(r, NET_ETRUNCATED);
    uint8_t kind = in[0] & FRAG_MASK;
    if (kind != FRAG1_DISPATCH && kind != FRAGN_DISPATCH) {
        net_status s = lowpan_receive_whole(in, len, src, dst, r->whole, sizeof r->whole, datagram_len);
        if (s != NET_OK)
            return refuse(r, s);
        *datagram = r->whole;
        r->count.datagrams++;
        return NET_OK;
    }
    size_t hdr = kind == FRAG1_DISPATCH ? LOWPAN_FRAG1_HEADER : LOWPAN_FRAGN_HEADER;
    if (len <= hdr)
        return refuse(r, NET_ETRUNCATED);
    uint16_t size = (uint16_t)((in[0] & 7) << 8 | in[1]), tag = net_get16(in + 2);
    if (size > LOWPAN_REASM_SIZE)
        return refuse(r, NET_ETOOBIG);
    if (size < IP6_HEADER_LEN)
        return refuse(r, NET_EMISMATCH);

    /* What this fragment holds, uncompressed, and where it goes. */
    uint8_t headers[IP6_HEADER_LEN + UDP_HEADER_LEN];
    size_t written = 0, offset = 0;
    const uint8_t *data = in + hdr;
    size_t data_len = len - hdr;
    if (kind == FRAG1_DISPATCH) {
        size_t used;
        net_status s = lowpan_decompress(data, data_len, src, dst, size, headers, sizeof headers,
                                         &written, &used);
        if (s != NET_OK)
            return refuse(r, s);
        data += used;
        data_len -= used;
    } else {
        offset = (size_t)in[4] * 8;
    }
    size_t end = offset + written + data_len;
    if (end > size || (end < size && end % 8 != 0))
        return refuse(r, NET_EMISMATCH); /* past the datagram, or a hole-making length */

    net_status why = NET_OK;
    lowpan_reasm_slot *slot = find_slot(r, src, dst, tag, size, now, kind == FRAG1_DISPATCH, &why);
    if (!slot)
        return refuse(r, why);
    if (!claim(slot, offset, end)) {
        abandon(r, slot, NET_EOVERLAP);
        return NET_EOVERLAP;
    }
    memcpy(slot->data + offset, headers, written);
    memcpy(slot->data + offset + written, data, data_len);
    slot->received = (uint16_t)(slot->received + (end - offset));
    r->count.frames++;
    if (slot->received < slot->size)
        return NET_OK;
    slot->busy = false;
    ip6_header h;
    net_status s = ip6_read_header(slot->data, slot->size, &h);
    if (s != NET_OK)
        return refuse(r, s);
    r->count.datagrams++;
    *datagram = slot->data;
    *datagram_len = slot->size;
    return NET_OK;
}
