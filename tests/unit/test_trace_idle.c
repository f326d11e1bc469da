/* Trace encoding and overflow, console formatting, idle accounting and
 * sleep-state choice. */
#include <string.h>

#include "fixture.h"

static void test_trace_encoding_is_little_endian(void **st)
{
    (void)st;
    tern_event ev = {.time = 0x12345678u, .type = TERN_EV_HANDLER_START, .a = 2, .b = 0x0102};
    char hex[17] = {0};
    tern_trace_encode(&ev, hex);
    /* the same vector is decoded by tools/tests/test_trace.py */
    assert_string_equal(hex, "7856341204020201");
}

static void test_trace_records_and_reports_overflow(void **st)
{
    (void)st;
    host_reset(1000);
    tern_init();
    for (int i = 0; i < TERN_TRACE_EVENTS + 3; i++)
        tern_trace(TERN_EV_MARK, (uint8_t)i, 0);
    tern_event evs[TERN_TRACE_EVENTS + 4];
    size_t n = tern_trace_read(evs, TERN_TRACE_EVENTS + 4);
    assert_int_equal(n, TERN_TRACE_EVENTS + 1);
    assert_int_equal(evs[0].a, 0);
    assert_int_equal(evs[0].time, 1000);
    assert_int_equal(evs[TERN_TRACE_EVENTS - 1].a, TERN_TRACE_EVENTS - 1);
    assert_int_equal(evs[TERN_TRACE_EVENTS].type, TERN_EV_OVERFLOW);
    assert_int_equal(evs[TERN_TRACE_EVENTS].b, 3);
    tern_trace(TERN_EV_MARK, 9, 0x0a0b);
    tern_trace_drain();
    assert_string_equal(host_console(), "T e80300000e090b0a\n");
}

static void test_printf_subset(void **st)
{
    (void)st;
    char buf[96];
    int n = tern_snprintf(buf, sizeof buf, "%s|%c|%d|%u|%x|%08x|%lu|%llu|%5d|%%", "ok", 'z', -42,
                          7u, 0xbeefu, 0xabu, 123456789ul, 18446744073709551615ull, 3);
    assert_string_equal(buf, "ok|z|-42|7|beef|000000ab|123456789|18446744073709551615|    3|%");
    assert_int_equal(n, (int)strlen(buf));
    assert_int_equal(tern_snprintf(buf, 4, "%s", "truncated"), 9);
    assert_string_equal(buf, "tru");
}

static const tern_sleep_state states[] = {
    {"wait", 0, 0}, {"sleep", 100, 10}, {"deep", 1000, 400}, {"off", 5000, 6000}};

static void test_idle_choose_deepest_that_fits(void **st)
{
    (void)st;
    assert_int_equal(tern_idle_choose(states, 4, 0), 0);
    assert_int_equal(tern_idle_choose(states, 4, 99), 0);
    assert_int_equal(tern_idle_choose(states, 4, 100), 1);
    assert_int_equal(tern_idle_choose(states, 4, 999), 1);
    assert_int_equal(tern_idle_choose(states, 4, 1000), 2);
    assert_int_equal(tern_idle_choose(states, 4, 5999), 2); /* residency fits, exit does not */
    assert_int_equal(tern_idle_choose(states, 4, 6000), 3);
    assert_int_equal(tern_idle_choose(states, 4, UINT64_MAX), 3);
}

static uint64_t hook_sum;
static uint32_t hook_periods;
static uint8_t last_state;

static void idle_hook(tern_time start, tern_time end, uint8_t state)
{
    hook_sum += end - start;
    hook_periods++;
    last_state = state;
}

static tern_status worker(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT)
        assert_int_equal(tern_timer_start(0, 2000, 2000), TERN_OK);
    else
        host_work(300);
    return TERN_OK;
}

static void test_idle_accounting(void **st)
{
    (void)st;
    static const tern_task_desc t[] = {
        {.name = "worker", .id = 0, .priority = 1, .handler = worker, .n_in_ports = 1}};
    static const tern_app_desc app = {"idle", t, 1, NULL, 0, 0, NULL};
    start_app(&app, 0);
    hook_sum = hook_periods = 0;
    tern_idle_set_hook(idle_hook);
    inject_post(500, 0);
    host_run_until(10000);
    /* busy: 300 at 500, 300 at each of 2000, 4000, 6000, 8000 = 1500 */
    const tern_idle_stats *s = tern_idle_get_stats();
    assert_int_equal(s->total, 10000 - 1500);
    assert_int_equal(hook_sum, s->total);
    assert_int_equal(hook_periods, s->periods);
    assert_int_equal(s->periods, 6);
    assert_int_equal(s->longest, 1700);
    /* the choice sees only known deadlines (the timer, >= 1200 ticks
     * away each time), not the injected interrupt at 500: every period
     * qualifies for the host's "deep" state (residency 1000) */
    assert_int_equal(s->state_periods[1], 6);
    assert_int_equal(s->state_ticks[1], s->total);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_encoding_is_little_endian),
        cmocka_unit_test(test_trace_records_and_reports_overflow),
        cmocka_unit_test(test_printf_subset),
        cmocka_unit_test(test_idle_choose_deepest_that_fits),
        cmocka_unit_test(test_idle_accounting),
    };
    return cmocka_run_group_tests_name("trace_idle", tests, NULL, NULL);
}
