/* The global clock (kernel/gtime.c) on the host's 1 MHz clock: one tick is
 * 1000 ns. Samples set the offset, then the rate; conversions both ways
 * agree; samples that go backwards or imply more than 1000 ppm are refused
 * and counted. One process, one clock: the steps run in order. */
#include "fixture.h"
#include "tern/gtime.h"

static void test_global_clock(void **st)
{
    (void)st;
    const tern_gtime_stats *s = tern_gtime_stats_get();

    /* before any sample: the local clock, as if it were the master's */
    assert_false(tern_global_synced());
    assert_int_equal(tern_global_from_local(1234), 1234000);
    assert_int_equal(tern_local_from_global(1234500), 1235); /* the first tick at or after */

    /* the first sample: the offset */
    tern_gtime_sample(1000000, 5000000000u);
    assert_true(tern_global_synced());
    assert_int_equal(tern_global_from_local(1000000), 5000000000u);
    assert_int_equal(tern_global_from_local(1000500), 5000500000u);
    assert_int_equal(tern_global_from_local(999000), 4999000000u); /* before the sample too */
    assert_int_equal(s->rate_ppb, 0);

    /* one second later the master's clock has run 40 us more: +40 ppm */
    tern_gtime_sample(2000000, 6000040000u);
    assert_int_equal(s->samples, 2);
    assert_int_equal(s->rate_ppb, 40000);
    assert_int_equal(s->last_error_ns, -40000); /* offset alone predicted 6.0 s */
    assert_int_equal(s->offset_only_error_ns, -40000);
    assert_int_equal(s->max_error_ns, 0);
    assert_int_equal(tern_global_from_local(2500000), 6000040000u + 500000000u + 20000u);
    assert_int_equal(tern_local_from_global(6500060000u), 2500000);
    for (tern_time l = 1500000; l < 12000000; l += 777777)
        assert_int_equal(tern_local_from_global(tern_global_from_local(l)), l);

    /* refused, counted, and the model unchanged */
    tern_gtime_sample(1999999, 6100000000u);              /* backwards */
    tern_gtime_sample(3000000, 7000040000u + 2000000u); /* 2000 ppm */
    tern_gtime_sample(2000500, 6000540020u);              /* 0.5 ms on: too close */
    assert_int_equal(s->refused, 3);
    assert_int_equal(s->samples, 2);
    assert_int_equal(s->rate_ppb, 40000);

    /* a later sample with the same rate: no error, same rate */
    tern_gtime_sample(3000000, 7000080000u);
    assert_int_equal(s->last_error_ns, 0);
    assert_int_equal(s->rate_ppb, 40000);
    /* and one 300 ns early: the error the rate did not predict */
    tern_gtime_sample(4000000, 8000119700u);
    assert_int_equal(s->last_error_ns, 300);
    assert_int_equal(s->max_error_ns, 300);
    assert_int_equal(s->offset_only_error_ns, -40000);
    assert_int_equal(s->rate_ppb, 39700); /* the new rate: that interval's */

    /* Power-down (kernel/power.c): the local clock stands still while
     * 300 ms of global time pass. First the sample at a 1 s interval, at
     * the same rate, before the model is told; then after it. */
    tern_gtime_sample(5000000, 9000159400u);
    assert_int_equal(s->last_error_ns, 0);
    assert_int_equal(s->rate_ppb, 39700);
    const tern_gtime lost = 300000000u;                        /* ns the clock stood */
    const tern_gtime truth_6s = 9000159400u + 1000039700u + lost; /* global at local 6 s */
    tern_gtime_sample(6000000, truth_6s);                     /* 300,000 ppm: refused */
    assert_int_equal(s->refused, 4);
    assert_int_equal(tern_global_from_local(6000000), truth_6s - lost); /* still 300 ms behind */
    tern_gtime_clock_stopped();
    assert_false(tern_global_synced()); /* until the next sample */
    tern_gtime_sample(6000000, truth_6s);
    assert_true(tern_global_synced());
    assert_int_equal(s->steps, 1);
    assert_int_equal(s->last_step_ns, -300000000);
    assert_int_equal(s->refused, 4);
    assert_int_equal(s->rate_ppb, 39700); /* the crystal's rate, kept */
    assert_int_equal(s->max_error_ns, 300); /* the step is not an error of the rate */
    /* back within the precision before the power-down: the model is exact
     * here again, and the next round's sample is predicted to the ns */
    assert_int_equal(tern_global_from_local(6500000), truth_6s + 500019850u);
    tern_gtime_sample(7000000, truth_6s + 1000039700u);
    assert_int_equal(s->last_error_ns, 0);
    assert_int_equal(s->steps, 1);

    /* the master's clock is the global clock */
    tern_gtime_set_master();
    assert_int_equal(tern_global_from_local(4000000), 4000000000u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_global_clock)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
