/* net/ipv6.c and net/lowpan.c on the host, under ASan and UBSan: IPHC and
 * UDP compression round trips (RFC 6282), fragmentation and reassembly in
 * any order (RFC 4944), and every way a received frame is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipv6.h"
#include "lowpan.h"

static const ll_addr node1 = {2, {0x00, 0x01}};
static const ll_addr node2 = {2, {0x00, 0x02}};
static const ll_addr eui1 = {8, {0x02, 0x12, 0x4b, 0x00, 0x01, 0x02, 0x03, 0x04}};
static const ll_addr eui2 = {8, {0x00, 0x12, 0x4b, 0x00, 0x0a, 0x0b, 0x0c, 0x0d}};

static ip6_addr addr(const char *hex)
{
    ip6_addr a;
    for (int i = 0; i < 16; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        a.b[i] = (uint8_t)v;
    }
    return a;
}

static size_t make_udp(uint8_t *out, size_t cap, ip6_addr src, ip6_addr dst, uint16_t sp, uint16_t dp,
                       size_t payload_len)
{
    uint8_t payload[1300];
    for (size_t i = 0; i < payload_len; i++)
        payload[i] = (uint8_t)(i * 7 + 3);
    size_t n = udp_build(&src, &dst, sp, dp, 64, payload, payload_len, out, cap);
    assert_true(n == IP6_HEADER_LEN + UDP_HEADER_LEN + payload_len);
    return n;
}

/* Compress, then receive as one frame; the datagram must come back as it was. */
static size_t round_trip(const uint8_t *ip, size_t len, const ll_addr *src, const ll_addr *dst)
{
    uint8_t frame[200], hc[LOWPAN_HEADER_MAX];
    size_t consumed;
    net_status why;
    size_t hlen = lowpan_compress_header(ip, len, src, dst, hc, &consumed, &why);
    assert_int_equal(why, NET_OK);
    assert_true(hlen > 0 && hlen + len - consumed <= sizeof frame);
    memcpy(frame, hc, hlen);
    memcpy(frame + hlen, ip + consumed, len - consumed);
    uint8_t back[1400];
    size_t back_len = 0;
    assert_int_equal(lowpan_receive_whole(frame, hlen + len - consumed, src, dst, back, sizeof back,
                                          &back_len),
                     NET_OK);
    assert_int_equal(back_len, len);
    assert_memory_equal(back, ip, len);
    return hlen;
}

static void link_local_udp_compresses_to_six_bytes(void **state)
{
    (void)state;
    uint8_t ip[200];
    ip6_addr a = ip6_link_local(&node1), b = ip6_link_local(&node2);
    size_t len = make_udp(ip, sizeof ip, a, b, 0xf0b1, 0xf0b2, 50);
    /* IPHC 2, NHC 1, both ports in one byte, checksum 2 */
    assert_int_equal(round_trip(ip, len, &node1, &node2), 6);
    udp_datagram d;
    assert_int_equal(udp_parse(ip, len, &d), NET_OK);
    assert_int_equal(d.src_port, 0xf0b1);
    assert_int_equal(d.payload_len, 50);
}

static void every_address_and_traffic_class_form_round_trips(void **state)
{
    (void)state;
    const char *srcs[] = {"fe800000000000000000000000000001", /* 64-bit IID inline */
                          "fe80000000000000000000fffe00abcd", /* 16-bit IID */
                          "20010db8000000000000000000000001", /* global, inline */
                          "00000000000000000000000000000000"};
    const char *dsts[] = {"ff020000000000000000000000000001", /* ff02::1: 8 bits */
                          "ff050000000000000000000000010003", /* 32 bits */
                          "ff0e0000000000000000000100020003", /* 48 bits */
                          "ff0e0000000000000000100000000001", /* inline */
                          "20010db8000000000000000000000002"};
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++)
        for (size_t j = 0; j < sizeof dsts / sizeof *dsts; j++) {
            uint8_t ip[200];
            size_t len = make_udp(ip, sizeof ip, addr(srcs[i]), addr(dsts[j]), 5683, 0xf012, 20);
            round_trip(ip, len, &node1, &node2);
            /* traffic class and flow label in all four TF forms */
            const uint8_t tcs[] = {0x00, 0xb8, 0x01, 0xb9};
            const uint32_t flows[] = {0, 0x12345, 0xfffff, 0};
            for (int k = 0; k < 4; k++) {
                ip[0] = (uint8_t)(0x60 | tcs[k] >> 4);
                ip[1] = (uint8_t)(tcs[k] << 4 | flows[k] >> 16);
                ip[2] = (uint8_t)(flows[k] >> 8);
                ip[3] = (uint8_t)flows[k];
                ip[7] = (uint8_t)(k == 3 ? 17 : 255); /* inline and compressed hop limits */
                round_trip(ip, len, &eui1, &eui2);
            }
        }
}

static void extended_addresses_are_derived_from_the_link_layer(void **state)
{
    (void)state;
    uint8_t ip[200];
    size_t len = make_udp(ip, sizeof ip, ip6_link_local(&eui1), ip6_link_local(&eui2), 1000, 2000, 10);
    /* both addresses elided, ports inline: 2 + 1 + 4 + 2 */
    assert_int_equal(round_trip(ip, len, &eui1, &eui2), 9);
    assert_true(ip6_iid_from_ll(&(ip6_addr){{0}}, &eui1) == false);
}

static void icmp_echo_is_answered_with_the_same_data(void **state)
{
    (void)state;
    ip6_addr a = ip6_link_local(&node1), b = ip6_link_local(&node2);
    uint8_t req[100], rep[100];
    const uint8_t data[] = "tern";
    size_t n = icmp6_echo_request(&a, &b, 7, 42, data, sizeof data, req, sizeof req);
    round_trip(req, n, &node1, &node2);
    net_status why;
    size_t m = icmp6_echo_reply(req, n, &b, rep, sizeof rep, &why);
    assert_int_equal(why, NET_OK);
    assert_int_equal(m, n);
    ip6_header h;
    assert_int_equal(ip6_read_header(rep, m, &h), NET_OK);
    assert_true(ip6_equal(&h.src, &b) && ip6_equal(&h.dst, &a));
    assert_int_equal(rep[IP6_HEADER_LEN], ICMP6_ECHO_REPLY);
    assert_memory_equal(rep + IP6_HEADER_LEN + 4, req + IP6_HEADER_LEN + 4, n - IP6_HEADER_LEN - 4);
    assert_int_equal(ip6_upper_checksum(&b, &a, IP6_NEXT_ICMP6, rep + IP6_HEADER_LEN, m - IP6_HEADER_LEN), 0);
    /* a reply is no request */
    assert_int_equal(icmp6_echo_reply(rep, m, &a, req, sizeof req, &why), 0);
    assert_int_equal(why, NET_EUNSUPPORTED);
}

static void bad_udp_is_refused_by_name(void **state)
{
    (void)state;
    uint8_t ip[200];
    udp_datagram d;
    size_t len = make_udp(ip, sizeof ip, ip6_link_local(&node1), ip6_link_local(&node2), 1, 2, 30);
    ip[IP6_HEADER_LEN + 8] ^= 1;
    assert_int_equal(udp_parse(ip, len, &d), NET_EBADCHECKSUM);
    ip[IP6_HEADER_LEN + 8] ^= 1;
    assert_int_equal(udp_parse(ip, len - 1, &d), NET_EBADLENGTH); /* IPv6 length says more */
    assert_int_equal(udp_parse(ip, 39, &d), NET_ETRUNCATED);
    ip[0] = 0x40;
    assert_int_equal(udp_parse(ip, len, &d), NET_EBADVERSION);
}

/* Every prefix of a valid compressed frame is refused, never read past. */
static void truncated_headers_are_refused(void **state)
{
    (void)state;
    uint8_t ip[200], hc[LOWPAN_HEADER_MAX], out[200];
    size_t len = make_udp(ip, sizeof ip, addr("20010db8000000000000000000000001"),
                          addr("ff0e0000000000000000100000000001"), 1000, 2000, 0);
    ip[7] = 17;
    size_t consumed;
    size_t hlen = lowpan_compress_header(ip, len, &node1, &node2, hc, &consumed, NULL);
    for (size_t cut = 0; cut < hlen; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees any over-read */
        memcpy(copy, hc, cut);
        size_t n;
        net_status got = lowpan_receive_whole(copy, cut, &node1, &node2, out, sizeof out, &n);
        free(copy);
        assert_int_equal(got, NET_ETRUNCATED);
    }
    uint8_t cid[] = {0x78, 0x80, 0x00};
    size_t n;
    assert_int_equal(lowpan_receive_whole(cid, sizeof cid, &node1, &node2, out, sizeof out, &n), NET_EUNSUPPORTED);
    uint8_t nalp[] = {0x00, 0x01};
    assert_int_equal(lowpan_receive_whole(nalp, sizeof nalp, &node1, &node2, out, sizeof out, &n), NET_EBADDISPATCH);
}

/* A 1,000-byte datagram in frames of 96 bytes, delivered in `order`. */
static void reassemble(const int *order, size_t n_frames_expected)
{
    static uint8_t ip[1100], frames[20][96];
    size_t frame_len[20];
    size_t len = make_udp(ip, sizeof ip, ip6_link_local(&node1), addr("20010db8000000000000000000000002"),
                          0xf0b1, 5683, 1000 - IP6_HEADER_LEN - UDP_HEADER_LEN);
    lowpan_fragmenter f;
    lowpan_fragment_start(&f, ip, len, &node1, &node2, 0x1234, sizeof frames[0]);
    size_t count = 0;
    net_status why;
    while (!f.done) {
        frame_len[count] = lowpan_fragment_next(&f, frames[count], sizeof frames[0], &why);
        assert_int_equal(why, NET_OK);
        assert_true(frame_len[count] > 0 && frame_len[count] <= sizeof frames[0]);
        count++;
    }
    assert_int_equal(count, n_frames_expected);
    static lowpan_reasm r;
    lowpan_reasm_init(&r, 100);
    const uint8_t *got = NULL;
    size_t got_len = 0;
    for (size_t i = 0; i < count; i++) {
        size_t k = order ? (size_t)order[i] : i;
        assert_int_equal(lowpan_reasm_input(&r, frames[k], frame_len[k], &node1, &node2, 1, &got, &got_len), NET_OK);
        assert_true((got != NULL) == (i == count - 1));
    }
    assert_int_equal(got_len, len);
    assert_memory_equal(got, ip, len);
    assert_int_equal(r.count.frames, count);
    assert_int_equal(r.count.datagrams, 1);
}

static void fragments_reassemble_in_any_order(void **state)
{
    (void)state;
    /* FRAG1: 4 + 24 bytes of headers (for 48) + 64 of payload; then
     * FRAGN of 88 bytes: 112 + 10 x 88 + 8 = 1,000 in 12 frames */
    reassemble(NULL, 12);
    const int reversed[] = {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    reassemble(reversed, 12);
    const int shuffled[] = {3, 0, 11, 10, 5, 1, 9, 2, 7, 4, 8, 6};
    reassemble(shuffled, 12);
}

static void fragment_faults_are_counted_and_lose_nothing_else(void **state)
{
    (void)state;
    static lowpan_reasm r;
    lowpan_reasm_init(&r, 100);
    const uint8_t *got;
    size_t n;
    /* FRAGN of a 200-byte datagram, tag 1: units 0..1 */
    uint8_t fragn[5 + 16] = {0xe0, 200, 0, 1, 0};
    assert_int_equal(lowpan_reasm_input(&r, fragn, sizeof fragn, &node1, &node2, 0, &got, &n), NET_OK);
    /* the same bytes again: the whole datagram is given up */
    assert_int_equal(lowpan_reasm_input(&r, fragn, sizeof fragn, &node1, &node2, 0, &got, &n), NET_EOVERLAP);
    assert_int_equal(r.count.dropped[NET_EOVERLAP], 1);
    assert_false(r.slot[0].busy || r.slot[1].busy);
    /* past the datagram's end */
    uint8_t past[5 + 16] = {0xe0, 200, 0, 2, 24};
    assert_int_equal(lowpan_reasm_input(&r, past, sizeof past, &node1, &node2, 0, &got, &n), NET_EMISMATCH);
    /* a non-final fragment that is not a multiple of 8 */
    uint8_t odd[5 + 12] = {0xe0, 200, 0, 3, 1};
    assert_int_equal(lowpan_reasm_input(&r, odd, sizeof odd, &node1, &node2, 0, &got, &n), NET_EMISMATCH);
    /* a datagram larger than a reassembly buffer */
    uint8_t big[5 + 8] = {0xe7, 0xff, 0, 4, 0};
    assert_int_equal(lowpan_reasm_input(&r, big, sizeof big, &node1, &node2, 0, &got, &n),
                     LOWPAN_REASM_SIZE < 2047 ? NET_ETOOBIG : NET_OK);
    /* headers cut short */
    assert_int_equal(lowpan_reasm_input(&r, fragn, 4, &node1, &node2, 0, &got, &n), NET_ETRUNCATED);
    /* every slot busy */
    for (uint8_t tag = 10; tag < 10 + LOWPAN_REASM_SLOTS; tag++) {
        fragn[3] = tag;
        assert_int_equal(lowpan_reasm_input(&r, fragn, sizeof fragn, &node1, &node2, 5, &got, &n), NET_OK);
    }
    fragn[3] = 99;
    assert_int_equal(lowpan_reasm_input(&r, fragn, sizeof fragn, &node1, &node2, 5, &got, &n), NET_ENOBUFFER);
    /* the same tag with another size replaces the old datagram, counted */
    uint8_t resized[5 + 16] = {0xe0, 208, 0, 10, 0};
    assert_int_equal(lowpan_reasm_input(&r, resized, sizeof resized, &node1, &node2, 5, &got, &n), NET_OK);
    assert_int_equal(r.count.dropped[NET_EMISMATCH], 3);
    /* and the rest time out */
    lowpan_reasm_expire(&r, 104);
    assert_int_equal(r.count.dropped[NET_ETIMEOUT], 0);
    lowpan_reasm_expire(&r, 105);
    assert_int_equal(r.count.dropped[NET_ETIMEOUT], LOWPAN_REASM_SLOTS);
    for (int i = 0; i < LOWPAN_REASM_SLOTS; i++)
        assert_false(r.slot[i].busy);
}

/* A sender's next datagram (its FRAG1) while every buffer holds an
 * incomplete one: its own oldest gives the buffer up, counted; another
 * sender's FRAG1 and a stray FRAGN evict nothing. */
static void a_senders_next_datagram_replaces_its_incomplete_one(void **state)
{
    (void)state;
    static uint8_t ip[300], frames[LOWPAN_REASM_SLOTS + 1][3][96];
    static size_t frame_len[LOWPAN_REASM_SLOTS + 1][3];
    size_t len = make_udp(ip, sizeof ip, ip6_link_local(&node1), ip6_link_local(&node2), 1, 2, 200);
    for (int d = 0; d <= LOWPAN_REASM_SLOTS; d++) {
        lowpan_fragmenter f;
        lowpan_fragment_start(&f, ip, len, &node1, &node2, (uint16_t)(100 + d), sizeof frames[d][0]);
        net_status why;
        for (int k = 0; k < 3; k++)
            frame_len[d][k] = lowpan_fragment_next(&f, frames[d][k], sizeof frames[d][k], &why);
        assert_true(f.done);
    }
    static lowpan_reasm r;
    lowpan_reasm_init(&r, 1000);
    const uint8_t *got;
    size_t n;
    /* every buffer takes the first two frames of a datagram of node1's */
    for (int d = 0; d < LOWPAN_REASM_SLOTS; d++)
        for (int k = 0; k < 2; k++)
            assert_int_equal(lowpan_reasm_input(&r, frames[d][k], frame_len[d][k], &node1, &node2,
                                                (uint32_t)d, &got, &n), NET_OK);
    /* node2's FRAG1 (the same bytes) finds no buffer: nothing of node1's is given up */
    assert_int_equal(lowpan_reasm_input(&r, frames[0][0], frame_len[0][0], &node2, &node1, 9, &got, &n),
                     NET_ENOBUFFER);
    assert_int_equal(r.count.dropped[NET_ENOBUFFER], 1);
    /* node1's next datagram: its oldest (tag 100) is given up, counted */
    const int d = LOWPAN_REASM_SLOTS;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(lowpan_reasm_input(&r, frames[d][k], frame_len[d][k], &node1, &node2, 10, &got, &n),
                         NET_OK);
        assert_true((got != NULL) == (k == 2));
    }
    assert_int_equal(n, len);
    assert_memory_equal(got, ip, len);
    assert_int_equal(r.count.dropped[NET_ENOBUFFER], 2);
    assert_int_equal(r.count.datagrams, 1);
    /* the others of node1's are still there, each missing its last frame */
    int busy = 0;
    for (int i = 0; i < LOWPAN_REASM_SLOTS; i++)
        busy += r.slot[i].busy;
    assert_int_equal(busy, LOWPAN_REASM_SLOTS - 1);
}

/* Random bytes and random corruptions of real frames: refused or taken,
 * never a crash or an out-of-bounds read (the sanitizers watch). */
static void random_frames_never_crash(void **state)
{
    (void)state;
    static lowpan_reasm r;
    lowpan_reasm_init(&r, 10);
    srand(1);
    uint8_t ip[300], hc[LOWPAN_HEADER_MAX];
    size_t len = make_udp(ip, sizeof ip, ip6_link_local(&node1), ip6_link_local(&node2), 1, 2, 200);
    lowpan_fragmenter f;
    uint8_t frames[4][100];
    size_t count = 0;
    lowpan_fragment_start(&f, ip, len, &node1, &node2, 7, sizeof frames[0]);
    while (!f.done && count < 4)
        lowpan_fragment_next(&f, frames[count++], sizeof frames[0], NULL);
    size_t consumed;
    size_t hlen = lowpan_compress_header(ip, len, &node1, &node2, hc, &consumed, NULL);
    for (int i = 0; i < 20000; i++) {
        size_t n = (size_t)(rand() % 128);
        uint8_t *buf = malloc(n ? n : 1);
        if (i % 2 && n) {
            const uint8_t *base = i % 4 == 1 ? frames[rand() % count] : hc;
            size_t base_len = i % 4 == 1 ? 100 : hlen;
            for (size_t k = 0; k < n; k++)
                buf[k] = k < base_len ? base[k] : (uint8_t)rand();
            buf[rand() % n] ^= (uint8_t)(1 << rand() % 8);
        } else {
            for (size_t k = 0; k < n; k++)
                buf[k] = (uint8_t)rand();
        }
        const uint8_t *got;
        size_t got_len;
        net_status s = lowpan_reasm_input(&r, buf, n, &node1, &node2, (uint32_t)i, &got, &got_len);
        if (s == NET_OK && got) {
            ip6_header h;
            assert_int_equal(ip6_read_header(got, got_len, &h), NET_OK);
        }
        lowpan_reasm_expire(&r, (uint32_t)i);
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(link_local_udp_compresses_to_six_bytes),
        cmocka_unit_test(every_address_and_traffic_class_form_round_trips),
        cmocka_unit_test(extended_addresses_are_derived_from_the_link_layer),
        cmocka_unit_test(icmp_echo_is_answered_with_the_same_data),
        cmocka_unit_test(bad_udp_is_refused_by_name),
        cmocka_unit_test(truncated_headers_are_refused),
        cmocka_unit_test(fragments_reassemble_in_any_order),
        cmocka_unit_test(fragment_faults_are_counted_and_lose_nothing_else),
        cmocka_unit_test(a_senders_next_datagram_replaces_its_incomplete_one),
        cmocka_unit_test(random_frames_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
