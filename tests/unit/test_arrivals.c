/* The seed-000 arrival generator: fixed-point -ln and the mean of the
 * exponential gaps. tools/tests/test_arrivals.py checks the Python twin
 * against the arrivals_dump program built from the same C source. */
#include "../../bench/seed000/arrivals.h"
#include "fixture.h"

static void test_neg_ln_fixed_points(void **st)
{
    (void)st;
    assert_int_equal(arrivals_neg_ln_q16(1u << 24), 0);
    /* -ln(1/2) = ln 2 = 0.693147 -> 45426 in Q16 */
    assert_int_equal(arrivals_neg_ln_q16(1u << 23), 45426);
    /* -ln(2^-24) = 16.6355 -> 1090226 in Q16, within the table's error */
    uint32_t v = arrivals_neg_ln_q16(1);
    assert_in_range(v, 1090226 - 4, 1090226 + 4);
    /* monotonic: a smaller u is a longer gap */
    uint32_t prev = 0;
    for (uint32_t u = 1u << 24; u > 4099; u -= 4099) {
        uint32_t cur = arrivals_neg_ln_q16(u);
        assert_true(cur >= prev);
        prev = cur;
    }
}

static void test_gaps_have_the_requested_mean(void **st)
{
    (void)st;
    arrivals_rng r;
    arrivals_seed(&r, 1);
    const uint32_t mean = 4000000 / 255; /* n = 8 */
    uint64_t sum = 0;
    const int count = 200000;
    for (int i = 0; i < count; i++)
        sum += arrivals_next_gap(&r, mean);
    double m = (double)sum / count;
    assert_true(m > mean * 0.99 && m < mean * 1.01);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_neg_ln_fixed_points),
        cmocka_unit_test(test_gaps_have_the_requested_mean),
    };
    return cmocka_run_group_tests_name("arrivals", tests, NULL, NULL);
}
