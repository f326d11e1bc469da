/* net/mac_mb.c's configuration on the host: every refusal by name, and the
 * durations mb_timing_of derives from the CC2420's figures and d_maxOffset
 * (docs/bips.md, "MB"). The radio, the BCS and the multiplexer are stubs:
 * only mb_init and mb_timing_of run here; the slots run under tern-sim
 * (tests/sim/test_bips_mb.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mac_mb.h"

/* --- A schedule with one MB region (id 2) of 30 ms ------------------------------------------ */

static bcs_region region = {.id = 2, .protocol = BCS_MAC_MB, .start_us = 10000, .len_us = 30000};
static const bcs_macro_slot slots[] = {{.regions = &region, .n_regions = 1}};
static bcs_config bcs = {.macro_slot_us = 200000, .sync_us = 4000, .max_offset_us = 100, .slots = slots, .n_slots = 1};

/* {mode 0, mode 1, mode 2} for 3 slots */
static const uint16_t senders[] = {0, 3, 1, 1, 2, MB_NONE, 2, 3, 1};
static mb_schedule sched[2];

static mb_config good(void)
{
    sched[0] = (mb_schedule){.region_id = 2, .max_len = 21, .slot_us = 4000, .n_slots = 3, .n_modes = 3,
                             .senders = senders};
    sched[1] = sched[0];
    return (mb_config){.schedules = sched, .n_schedules = 1, .n_hops = 1, .node_id = 1};
}

static void refused(mb_config c, mb_status want, const char *why)
{
    mb_error e = {0};
    assert_int_equal(mb_init(&c, &bcs, &e), want);
    assert_int_equal(e.code, want);
    assert_non_null(strstr(e.text, why));
}

static void test_every_refusal_is_named(void **state)
{
    (void)state;
    mb_config c = good();
    assert_int_equal(mb_init(&c, &bcs, NULL), MB_OK);
    c.n_schedules = 0;
    refused(c, MB_EINVAL, "no schedules");
    c = good(), c.n_schedules = MB_MAX_SCHEDULES + 1;
    refused(c, MB_EINVAL, "schedules");
    c = good(), c.n_hops = 0;
    refused(c, MB_EINVAL, "n_hops");
    c = good(), c.n_hops = MB_MAX_HOPS + 1;
    refused(c, MB_EINVAL, "n_hops");
    c = good(), sched[0].n_slots = 0;
    refused(c, MB_EINVAL, "schedule 0: n_slots");
    c = good(), sched[0].n_slots = MB_MAX_SLOTS + 1;
    refused(c, MB_EINVAL, "n_slots");
    c = good(), sched[0].senders = NULL;
    refused(c, MB_EINVAL, "senders");
    c = good(), sched[0].n_modes = 0;
    refused(c, MB_EINVAL, "n_modes");
    c = good(), sched[0].n_modes = MB_MAX_MODES + 1;
    refused(c, MB_EINVAL, "n_modes");
    c = good(), sched[0].max_len = 126;
    refused(c, MB_EINVAL, "max_len");
    c = good(), c.n_schedules = 2;
    refused(c, MB_EDUPLICATE, "schedule 1: region id scheduled twice");
    c = good(), c.n_schedules = 2, sched[1].region_id = 5;
    refused(c, MB_ENOREGION, "schedule 1: no MB region");
    c = good(), sched[0].region_id = 5;
    refused(c, MB_ENOREGION, "no MB region"); /* and region 2 would have none */
    assert_int_equal(mb_init(NULL, &bcs, NULL), MB_EINVAL);
    assert_string_equal(mb_status_name(MB_ENOSCHEDULE), "MB_ENOSCHEDULE");
    assert_string_equal(mb_status_name(MB_STATUS_COUNT), "MB_E?");
}

static void test_slots_and_regions_too_short(void **state)
{
    (void)state;
    /* three modes, one hop, d 100 us, a 21-byte MPDU: 3,114 us a slot */
    mb_config c = good();
    sched[0].slot_us = 3113;
    refused(c, MB_ESLOT_SHORT, "slot_us <");
    c = good(), sched[0].slot_us = 3114;
    assert_int_equal(mb_init(&c, &bcs, NULL), MB_OK);
    /* 3 x 4 ms do not fit t1..t2 of a 12 ms region (12 - 0.1 - 0.192 ms) */
    c = good(), region.len_us = 12000;
    refused(c, MB_EREGION_SHORT, "n_slots * slot_us > t2 - t1");
    region.len_us = 12292;
    assert_int_equal(mb_init(&c, &bcs, NULL), MB_OK);
    region.len_us = 30000;
    /* a schedule for a region that is not MB's */
    c = good();
    region.protocol = BCS_MAC_CB;
    refused(c, MB_ENOREGION, "no MB region");
    region.protocol = BCS_MAC_MB;
}

static void test_an_mb_region_without_a_schedule(void **state)
{
    (void)state;
    static bcs_region two[] = {{.id = 2, .protocol = BCS_MAC_MB, .start_us = 10000, .len_us = 30000},
                               {.id = 6, .protocol = BCS_MAC_MB, .start_us = 50000, .len_us = 30000}};
    static const bcs_macro_slot s2[] = {{.regions = two, .n_regions = 2}};
    bcs_config b = bcs;
    b.slots = s2;
    mb_config c = good();
    mb_error e = {0};
    assert_int_equal(mb_init(&c, &b, &e), MB_ENOSCHEDULE);
    assert_non_null(strstr(e.text, "an MB region has no schedule"));
}

/* The durations of docs/bips.md's table: seed 004's two set-ups (two modes,
 * a 125-byte MPDU) and the apps' slots. */
static void test_the_durations_from_the_cc2420s_figures(void **state)
{
    (void)state;
    mb_timing t;
    mb_timing_of(100, 1, 2, 125, &t);
    assert_int_equal(t.hop_us, 128 + MB_RELAY_US + 16);
    assert_int_equal(t.lead_us, 100 + 320 + 16);                 /* d + RX again > 2d + CCA */
    assert_int_equal(t.window_us, 100 + 160 + 33 + 320 + 16);    /* d + burst + off + RX again */
    assert_int_equal(t.air_us, 192 + (6 + 125 + 2) * 32);
    assert_int_equal(t.region_min_us, 100 + 436 + 629 + 4448 + 192); /* 5,805 us; seed 004: 5.5 ms */
    assert_int_equal(t.slot_us, 436 + 629 + MB_SEND_MARGIN_US + 4448);
    mb_timing_of(338, 3, 2, 125, &t);
    assert_int_equal(t.lead_us, 2 * 338 + 128 + 16);             /* 2d + CCA now */
    assert_int_equal(t.window_us, 2 * 338 + 160 + 128 + 2 * 444 + 16);
    assert_int_equal(t.region_min_us, 338 + 820 + 1868 + 4448 + 338); /* 7,812 us; seed 004: 6.8 ms */
    mb_timing_of(100, 1, 3, 21, &t);                             /* apps/bips_mb: two bits */
    assert_int_equal(t.signal_us, 436 + 2 * 629);
    assert_int_equal(t.slot_us, 3114);
    mb_timing_of(100, 1, 1, 21, &t);                             /* one mode: plain TDMA */
    assert_int_equal(t.signal_us, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_refusal_is_named),
        cmocka_unit_test(test_slots_and_regions_too_short),
        cmocka_unit_test(test_an_mb_region_without_a_schedule),
        cmocka_unit_test(test_the_durations_from_the_cc2420s_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
