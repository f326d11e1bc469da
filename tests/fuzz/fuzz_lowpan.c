/* Fuzz target: what a node's radio receives, through the network layer's
 * parsers (net/mac802154.c, net/lowpan.c, net/ipv6.c): an 802.15.4 frame
 * as the CC2420 delivers it (FCS removed), its 6LoWPAN payload into
 * reassembly, the datagram into UDP and ICMPv6.
 *
 * The input is a sequence of frames: [length byte][length bytes], fed in
 * order to one reassembly state, with time advancing by one unit a frame
 * (so timeouts happen too).
 *
 * Invariants: no out-of-bounds read or write, no undefined behaviour; a
 * frame is either refused with a named status, taken as a fragment, or
 * yields a datagram that is a valid IPv6 datagram (its header parses, its
 * length matches) no longer than the buffer it lives in; every reassembly
 * buffer is released by the time its timeout has passed; every frame is
 * counted: a refusal raises a drop counter, an accepted one the fragments
 * or datagrams taken. */
#include <string.h>

#include "fuzz.h"
#include "ipv6.h"
#include "lowpan.h"
#include "mac802154.h"

#define TIMEOUT 8

static uint32_t counted(const lowpan_reasm *r)
{
    uint32_t sum = r->count.frames + r->count.datagrams;
    for (int i = 0; i < NET_STATUS_COUNT; i++)
        sum += r->count.dropped[i];
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static lowpan_reasm r;
    lowpan_reasm_init(&r, TIMEOUT);
    fz_reader in = {data, size};
    uint32_t now = 0;
    while (in.n) {
        uint8_t len = fz_u8(&in);
        if (len > in.n)
            len = (uint8_t)in.n;
        /* a buffer of exactly the frame's size: ASan sees any over-read */
        uint8_t *frame = malloc(len ? len : 1);
        memcpy(frame, in.p, len);
        in.p += len;
        in.n -= len;
        now++;
        mac802154_frame f;
        if (mac802154_parse(frame, len, &f) == NET_OK) {
            CHECK(f.payload >= frame && f.payload + f.payload_len == frame + len, "payload outside the frame");
            CHECK(f.src.len == 2 || f.src.len == 8, "source address of %u bytes", f.src.len);
            const uint8_t *dg;
            size_t dg_len = 0;
            lowpan_reasm_expire(&r, now);
            uint32_t before = counted(&r);
            net_status s = lowpan_reasm_input(&r, f.payload, f.payload_len, &f.src, &f.dst, now, &dg, &dg_len);
            CHECK(s < NET_STATUS_COUNT, "status %d", s);
            CHECK(counted(&r) > before, "a frame left no count (%s)", net_status_name(s));
            if (s == NET_OK && dg) {
                ip6_header h;
                CHECK(ip6_read_header(dg, dg_len, &h) == NET_OK, "a delivered datagram does not parse");
                CHECK(dg_len <= LOWPAN_REASM_SIZE || dg == r.whole, "datagram longer than its buffer");
                udp_datagram u;
                if (udp_parse(dg, dg_len, &u) == NET_OK)
                    CHECK(u.payload + u.payload_len == dg + dg_len, "UDP payload past the datagram");
                uint8_t reply[LOWPAN_WHOLE_SIZE + 64];
                net_status why;
                ip6_addr self = ip6_link_local(&f.dst);
                size_t n = icmp6_echo_reply(dg, dg_len, &self, reply, sizeof reply, &why);
                CHECK((n == 0) == (why != NET_OK), "echo reply length %zu with %s", n, net_status_name(why));
            }
        }
        free(frame);
    }
    lowpan_reasm_expire(&r, now + TIMEOUT);
    for (int i = 0; i < LOWPAN_REASM_SLOTS; i++)
        CHECK(!r.slot[i].busy, "reassembly slot %d still busy after its timeout", i);
    return 0;
}
