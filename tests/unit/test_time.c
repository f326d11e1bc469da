/* The clock and timers: deadline order, periodic timers without drift,
 * cancel and restart, and a 32-bit counter wrap. */
#include <stdio.h>
#include <string.h>

#include "fixture.h"

static tern_status timer_task(void *state, tern_msg *m)
{
    uint64_t *busy = state;
    if (m->port == TERN_PORT_INIT) {
        assert_int_equal(tern_timer_start(0, 500, 1000), TERN_OK); /* 500, 1500, ... */
        assert_int_equal(tern_timer_start(1, 300, 0), TERN_OK);    /* cancelled below */
        assert_int_equal(tern_timer_cancel(1), TERN_OK);
        assert_int_equal(tern_timer_start(2, 100, 0), TERN_OK);    /* restarted below */
        assert_int_equal(tern_timer_start(2, 2200, 0), TERN_OK);
        assert_int_equal(tern_timer_start(4, 1, 0), TERN_ERANGE);
        /* deadlines past 2^64 would wrap into the past and fire at once:
         * refused, and timer 2 keeps its 2200 */
        assert_int_equal(tern_timer_start(2, UINT64_MAX, 1), TERN_ERANGE);
        assert_int_equal(tern_timer_start(2, 1, UINT64_MAX), TERN_ERANGE);
        return TERN_OK;
    }
    log_text("T%u@%llu", m->port - TERN_PORT_TIMEOUT0, (unsigned long long)host_time());
    if (busy && *busy) {
        host_work(*busy);
        *busy = 0;
    }
    return TERN_OK;
}

static void test_task_timers(void **st)
{
    (void)st;
    static uint64_t busy;
    static const tern_task_desc t[] = {
        {.name = "timers", .id = 0, .priority = 1, .handler = timer_task, .state = &busy}};
    static const tern_app_desc app = {"timers", t, 1, NULL, 0, 0, NULL};
    busy = 1700; /* the first TIMEOUT0 handler overruns the 1500 deadline */
    start_app(&app, 0);
    host_run_until(4000);
    /* 1500 is served late (at 2200, after the overrun), yet the next
     * deadlines stay on the 1000-tick grid: no drift. */
    assert_string_equal(log_get(), "T0@500 T0@2200 T2@2200 T0@2500 T0@3500");
}

static char calls[128];

static void note(tern_alarm *a, void *arg)
{
    (void)a;
    char buf[32];
    snprintf(buf, sizeof buf, "%s@%llu ", (const char *)arg, (unsigned long long)tern_now());
    strcat(calls, buf);
}

static void test_alarms_fire_in_deadline_order(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    calls[0] = '\0';
    tern_alarm a, b, c;
    tern_alarm_init(&a, note, "a");
    tern_alarm_init(&b, note, "b");
    tern_alarm_init(&c, note, "c");
    tern_alarm_set(&a, 300, 0);
    tern_alarm_set(&b, 100, 0);
    tern_alarm_set(&c, 200, 0);
    tern_alarm_set(&c, 250, 0); /* re-arming moves it */
    host_run_until(1000);
    assert_string_equal(calls, "b@100 c@250 a@300 ");
}

static void test_clock_crosses_32bit_wrap(void **st)
{
    (void)st;
    const uint64_t start = 0xFFFFFC00u; /* 1024 ticks before the counter wraps */
    host_reset(start);
    tern_init();
    calls[0] = '\0';
    tern_alarm p;
    tern_alarm_init(&p, note, "p");
    tern_alarm_set(&p, start + 1000, 1000);
    host_run_until(start + 3500);
    char expected[128];
    snprintf(expected, sizeof expected, "p@%llu p@%llu p@%llu ",
             (unsigned long long)(start + 1000), (unsigned long long)(start + 2000),
             (unsigned long long)(start + 3000));
    assert_string_equal(calls, expected);
    assert_true(tern_now() > 0xFFFFFFFFu);
    assert_int_equal(tern_now(), host_time());
}

static void test_clock_survives_long_idle(void **st)
{
    (void)st;
    /* No timers at all for several counter wraps: the kernel still wakes
     * every half wrap so the 64-bit clock sees each wrap. */
    host_reset(0);
    tern_init();
    calls[0] = '\0';
    tern_alarm late;
    tern_alarm_init(&late, note, "late");
    const uint64_t far = 5ull << 32;
    tern_alarm_set(&late, far, 0);
    host_run_until(far + 1);
    char expected[64];
    snprintf(expected, sizeof expected, "late@%llu ", (unsigned long long)far);
    assert_string_equal(calls, expected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_timers),
        cmocka_unit_test(test_alarms_fire_in_deadline_order),
        cmocka_unit_test(test_clock_crosses_32bit_wrap),
        cmocka_unit_test(test_clock_survives_long_idle),
    };
    return cmocka_run_group_tests_name("time", tests, NULL, NULL);
}
