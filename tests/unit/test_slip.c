/* net/slip.c on the host, under ASan and UBSan: frames round-trip whatever
 * bytes they hold, escapes are undone, a frame split anywhere (an ESC at
 * the end of one read) decodes the same, and oversize, badly escaped,
 * aborted and UART-damaged frames are dropped whole, counted by reason,
 * with the next frame intact; random line noise never writes past the
 * buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "slip.h"

/* slip_write's output goes here */
static uint8_t line[4096];
static size_t line_len;

static void put(void *ctx, uint8_t b)
{
    (void)ctx;
    assert_true(line_len < sizeof line);
    line[line_len++] = b;
}

static size_t encode(const uint8_t *p, size_t len)
{
    line_len = 0;
    size_t n = slip_write(p, len, SIZE_MAX, 0, put, NULL);
    assert_int_equal(n, line_len);
    return n;
}

/* Feed bytes; the length of the last whole frame (0: none), and how many
 * frames completed. */
static uint16_t feed(slip_rx *r, const uint8_t *p, size_t len, unsigned *frames)
{
    uint16_t last = 0;
    for (size_t i = 0; i < len; i++) {
        uint16_t n = slip_rx_byte(r, p[i]);
        if (n) {
            last = n;
            if (frames)
                (*frames)++;
        }
    }
    return last;
}

static unsigned total_dropped(const slip_rx *r)
{
    unsigned t = 0;
    for (int i = 0; i < SLIP_DROP_COUNT; i++)
        t += r->dropped[i];
    return t;
}

static void every_byte_round_trips(void **state)
{
    (void)state;
    uint8_t data[512];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)i; /* END and ESC twice each */
    size_t n = encode(data, sizeof data);
    assert_int_equal(n, 2 + sizeof data + 4); /* two END, four bytes escaped */
    assert_int_equal(line[0], SLIP_END);
    assert_int_equal(line[n - 1], SLIP_END);
    for (size_t i = 1; i + 1 < n; i++)
        assert_int_not_equal(line[i], SLIP_END); /* END only as the bracket */
    uint8_t buf[512];
    slip_rx r;
    slip_rx_init(&r, buf, sizeof buf);
    unsigned frames = 0;
    assert_int_equal(feed(&r, line, n, &frames), sizeof data);
    assert_int_equal(frames, 1);
    assert_memory_equal(buf, data, sizeof data);
    assert_int_equal(r.frames, 1);
    assert_int_equal(total_dropped(&r), 0);
}

static void escapes_are_undone(void **state)
{
    (void)state;
    const uint8_t in[] = {SLIP_END, 0x60, SLIP_ESC, SLIP_ESC_END, SLIP_ESC, SLIP_ESC_ESC, 0x01, SLIP_END};
    uint8_t buf[16];
    slip_rx r;
    slip_rx_init(&r, buf, sizeof buf);
    assert_int_equal(feed(&r, in, sizeof in, NULL), 4);
    const uint8_t want[] = {0x60, SLIP_END, SLIP_ESC, 0x01};
    assert_memory_equal(buf, want, sizeof want);
    /* idle ENDs between frames are not frames and not drops */
    const uint8_t idle[] = {SLIP_END, SLIP_END, SLIP_END};
    unsigned frames = 0;
    feed(&r, idle, sizeof idle, &frames);
    assert_int_equal(frames, 0);
    assert_int_equal(total_dropped(&r), 0);
}

/* A frame read in two pieces, split at every position (an ESC as the last
 * byte of the first piece among them), decodes as in one. */
static void split_anywhere_and_esc_at_buffer_end(void **state)
{
    (void)state;
    const uint8_t data[] = {0x60, SLIP_ESC, SLIP_END, 0x00, SLIP_END, SLIP_ESC, 0x7f};
    size_t n = encode(data, sizeof data);
    uint8_t copy[64];
    memcpy(copy, line, n);
    bool esc_last_seen = false;
    for (size_t cut = 0; cut <= n; cut++) {
        uint8_t buf[16];
        slip_rx r;
        slip_rx_init(&r, buf, sizeof buf);
        esc_last_seen |= cut > 0 && copy[cut - 1] == SLIP_ESC;
        assert_int_equal(feed(&r, copy, cut, NULL), cut == n ? sizeof data : 0);
        uint16_t got = feed(&r, copy + cut, n - cut, NULL);
        if (cut < n)
            assert_int_equal(got, sizeof data);
        assert_memory_equal(buf, data, sizeof data);
        assert_int_equal(total_dropped(&r), 0);
    }
    assert_true(esc_last_seen);
}

/* ESC then END: the frame was abandoned; counted, and the END still ends it. */
static void esc_end_aborts_the_frame(void **state)
{
    (void)state;
    const uint8_t in[] = {SLIP_END, 0x60, 0x61, SLIP_ESC, SLIP_END, 0x60, 0x62, SLIP_END};
    uint8_t buf[16];
    slip_rx r;
    slip_rx_init(&r, buf, sizeof buf);
    unsigned frames = 0;
    assert_int_equal(feed(&r, in, sizeof in, &frames), 2);
    assert_int_equal(frames, 1);
    assert_int_equal(buf[1], 0x62);
    assert_int_equal(r.dropped[SLIP_EBADESCAPE], 1);
}

static void bad_escape_drops_to_the_next_end(void **state)
{
    (void)state;
    /* ESC 0x41 is no escape: the rest of the frame, END-free, is skipped
     * (an ESC in it too) and the next frame comes through */
    const uint8_t in[] = {SLIP_END, 0x60, SLIP_ESC, 0x41, 0x01, SLIP_ESC, SLIP_ESC_END, SLIP_END,
                          0x60, 0x63, SLIP_END};
    uint8_t buf[16];
    slip_rx r;
    slip_rx_init(&r, buf, sizeof buf);
    unsigned frames = 0;
    assert_int_equal(feed(&r, in, sizeof in, &frames), 2);
    assert_int_equal(frames, 1);
    assert_int_equal(buf[1], 0x63);
    assert_int_equal(r.dropped[SLIP_EBADESCAPE], 1);
    assert_int_equal(total_dropped(&r), 1);
}

static void oversize_is_dropped_and_exactly_full_is_not(void **state)
{
    (void)state;
    uint8_t big[9], full[8];
    memset(big, 0x55, sizeof big);
    memset(full, 0x66, sizeof full);
    uint8_t buf[8 + 8]; /* the guard half must stay untouched */
    memset(buf, 0xee, sizeof buf);
    slip_rx r;
    slip_rx_init(&r, buf, 8);
    unsigned frames = 0;
    size_t n = encode(big, sizeof big);
    feed(&r, line, n, &frames);
    assert_int_equal(frames, 0);
    assert_int_equal(r.dropped[SLIP_EOVERSIZE], 1);
    n = encode(full, sizeof full);
    assert_int_equal(feed(&r, line, n, &frames), 8);
    assert_int_equal(frames, 1);
    assert_memory_equal(buf, full, 8);
    for (size_t i = 8; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xee);
    assert_int_equal(total_dropped(&r), 1);
}

static void uart_error_drops_the_frame_once(void **state)
{
    (void)state;
    uint8_t buf[16];
    slip_rx r;
    slip_rx_init(&r, buf, sizeof buf);
    const uint8_t head[] = {SLIP_END, 0x60, 0x61};
    feed(&r, head, sizeof head, NULL);
    slip_rx_drop(&r, SLIP_EUART);
    slip_rx_drop(&r, SLIP_EUART); /* a second error in the same frame: one drop */
    const uint8_t tail[] = {0x62, SLIP_END, 0x60, 0x64, SLIP_END};
    unsigned frames = 0;
    assert_int_equal(feed(&r, tail, sizeof tail, &frames), 2);
    assert_int_equal(frames, 1);
    assert_int_equal(buf[1], 0x64);
    assert_int_equal(r.dropped[SLIP_EUART], 1);
}

/* Noise before the first END is a frame like any other: the decoder cannot
 * tell, the IP layer refuses it by name (ip6_read_header). */
static void noise_before_the_first_end_is_handed_on(void **state)
{
    (void)state;
    const uint8_t in[] = {'a', 'b', 'c', SLIP_END, 0x60, SLIP_END};
    uint8_t buf[16];
    slip_rx r;
    slip_rx_init(&r, buf, sizeof buf);
    unsigned frames = 0;
    assert_int_equal(feed(&r, in, sizeof in, &frames), 1);
    assert_int_equal(frames, 2);
}

/* A byte replaced on the way out (the hop limit of a forwarded datagram),
 * escaped like the others. */
static void patched_byte_is_sent_escaped(void **state)
{
    (void)state;
    const uint8_t data[] = {0x60, 0, 0, 0, 0, 0, 0, 64, 1, 2};
    line_len = 0;
    size_t n = slip_write(data, sizeof data, 7, SLIP_END, put, NULL);
    assert_int_equal(n, 2 + sizeof data + 1);
    uint8_t buf[16];
    slip_rx r;
    slip_rx_init(&r, buf, sizeof buf);
    assert_int_equal(feed(&r, line, n, NULL), sizeof data);
    assert_int_equal(buf[7], SLIP_END);
    assert_int_equal(buf[8], 1);
}

/* Random bytes, then random corruptions of valid frames: the decoder never
 * writes out of bounds (ASan) or returns more than fits; every frame it
 * returns from the corrupted stream and every drop add up. */
static void random_line_noise(void **state)
{
    (void)state;
    uint64_t seed = 0x5eed;
    uint8_t *buf = malloc(64); /* heap: ASan sees a write past it */
    slip_rx r;
    slip_rx_init(&r, buf, 64);
    uint32_t frames = 0;
    for (int i = 0; i < 200000; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint8_t b = (uint8_t)(seed >> 56);
        if ((seed >> 20) % 48 == 0) /* END or ESC now and then: runs past 64 bytes too */
            b = (seed >> 30) % 2 ? SLIP_END : SLIP_ESC;
        uint16_t n = slip_rx_byte(&r, b);
        assert_true(n <= 64);
        frames += n != 0;
    }
    assert_int_equal(frames, r.frames);
    assert_true(r.frames > 0 && r.dropped[SLIP_EOVERSIZE] > 0 && r.dropped[SLIP_EBADESCAPE] > 0);
    free(buf);
    printf("noise: %u frames, %u oversize, %u bad escapes\n", (unsigned)r.frames,
           r.dropped[SLIP_EOVERSIZE], r.dropped[SLIP_EBADESCAPE]);
}

static void names(void **state)
{
    (void)state;
    assert_string_equal(slip_drop_name(SLIP_EOVERSIZE), "SLIP_EOVERSIZE");
    assert_string_equal(slip_drop_name(SLIP_ENOTASK), "SLIP_ENOTASK");
    assert_string_equal(slip_drop_name(SLIP_DROP_COUNT), "SLIP_?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_byte_round_trips),
        cmocka_unit_test(escapes_are_undone),
        cmocka_unit_test(split_anywhere_and_esc_at_buffer_end),
        cmocka_unit_test(esc_end_aborts_the_frame),
        cmocka_unit_test(bad_escape_drops_to_the_next_end),
        cmocka_unit_test(oversize_is_dropped_and_exactly_full_is_not),
        cmocka_unit_test(uart_error_drops_the_frame_once),
        cmocka_unit_test(noise_before_the_first_end_is_handed_on),
        cmocka_unit_test(patched_byte_is_sent_escaped),
        cmocka_unit_test(random_line_noise),
        cmocka_unit_test(names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
