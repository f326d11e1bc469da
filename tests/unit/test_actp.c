/* net/mac_actp.c's configuration on the host: every refusal by name, and
 * the timing actp_init derives from the CC2420's figures and d_maxOffset
 * (docs/bips.md, "Bit time"). The radio, the BCS and the multiplexer are
 * stubs: only actp_init runs here; the rounds run under tern-sim
 * (tests/sim/test_bips_actp.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mac_actp.h"

/* --- A schedule with one ACTP region of `len_us` -------------------------------------------- */

static bcs_region region = {.id = 3, .protocol = BCS_MAC_ACTP, .start_us = 10000, .len_us = 40000};
static const bcs_macro_slot slots[] = {{.regions = &region, .n_regions = 1}};
static bcs_config bcs = {.macro_slot_us = 200000, .sync_us = 4000, .max_offset_us = 100, .slots = slots, .n_slots = 1};

static actp_config good(void)
{
    return (actp_config){.prio_bits = 2, .id_bits = 2, .radius = 1, .max_len = 17, .node_id = 3};
}

static void refused(actp_config c, actp_status want, const char *why)
{
    actp_error e = {0};
    assert_int_equal(actp_init(&c, &bcs, &e), want);
    assert_int_equal(e.code, want);
    assert_non_null(strstr(e.text, why));
}

static void test_every_refusal_is_named(void **state)
{
    (void)state;
    actp_config c = good();
    c.prio_bits = 5;
    refused(c, ACTP_EINVAL, "prio_bits");
    c = good(), c.id_bits = 0;
    refused(c, ACTP_EINVAL, "id_bits");
    c = good(), c.radius = 0;
    refused(c, ACTP_EINVAL, "radius");
    c = good(), c.radius = ACTP_MAX_RADIUS + 1;
    refused(c, ACTP_EINVAL, "radius");
    c = good(), c.max_len = 8;
    refused(c, ACTP_EINVAL, "max_len");
    c = good(), c.node_id = 4; /* two id bits: 0..3 */
    refused(c, ACTP_EINVAL, "node_id");
    c = good(), c.data_bits = ACTP_MAX_DATA_BITS + 1;
    refused(c, ACTP_EINVAL, "data_bits");
    assert_int_equal(actp_init(NULL, &bcs, NULL), ACTP_EINVAL);
    assert_string_equal(actp_status_name(ACTP_EREGION_SHORT), "ACTP_EREGION_SHORT");
    assert_string_equal(actp_status_name(ACTP_STATUS_COUNT), "ACTP_E?");
}

static void test_a_region_too_short_for_one_round(void **state)
{
    (void)state;
    actp_config c = good();
    c.radius = 4, c.data_bits = 16; /* 21 bits x 4 slots: a 53 ms arbitration */
    refused(c, ACTP_EREGION_SHORT, "one round");
    region.protocol = BCS_MAC_CB;
    refused(good(), ACTP_ENOREGION, "no ACTP region");
    region.protocol = BCS_MAC_ACTP;
}

/* The slot is the largest of the relay, no-spill and listen-again
 * constraints, rounded up to a symbol: with d_maxOffset 100 us the
 * sender's listen-again one (100 + 160 + 16 + 24 + 320 = 620 -> 624);
 * with BBS's three-hop 338 us the no-spill one (2 x 338 + 160 + 128 = 964
 * -> 976). */
static void test_the_bit_time_from_the_cc2420s_figures(void **state)
{
    (void)state;
    actp_config c = good();
    assert_int_equal(actp_init(&c, &bcs, NULL), ACTP_OK);
    const actp_timing *t = actp_timing_of();
    assert_int_equal(t->n_bits, 5);
    assert_int_equal(t->burst_us, 160);
    assert_int_equal(t->slot_us, 624);
    assert_int_equal(t->bit_us, 624);
    assert_int_equal(t->lead_us, 300 + 225);
    assert_int_equal(t->arb_us, 5 * 624);
    assert_int_equal(t->frame_us, ACTP_SEND_US + 192 + (6 + 17 + 2) * 32 + 100 + 320);
    assert_int_equal(t->round_us, t->lead_us + t->arb_us + t->frame_us);

    c.radius = 2, c.data_bits = 8;
    assert_int_equal(actp_init(&c, &bcs, NULL), ACTP_OK);
    assert_int_equal(t->n_bits, 13);
    assert_int_equal(t->bit_us, 2 * 624);
    assert_int_equal(t->arb_us, 13 * 2 * 624);

    bcs.max_offset_us = 338;
    c = good();
    region.len_us = 60000;
    assert_int_equal(actp_init(&c, &bcs, NULL), ACTP_OK);
    assert_int_equal(t->slot_us, 976);
    assert_int_equal(t->lead_us, 300 + 338);
    bcs.max_offset_us = 100;
    region.len_us = 40000;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_refusal_is_named),
        cmocka_unit_test(test_a_region_too_short_for_one_round),
        cmocka_unit_test(test_the_bit_time_from_the_cc2420s_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
