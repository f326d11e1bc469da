/* The clock and timers: deadline order, periodic timers without drift,
 * cancel and restart, and a 32-bit counter wrap; deadlines and periods
 * beyond half a wrap, and deadlines long passed (kernel/timer.c keeps
 * those apart on 8-bit CPUs: test_time_tick32 builds that variant). */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "tern/port.h"

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

static char calls[512];

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

#define HALF_WRAP (1ull << 31)

/* Deadlines passed when they are set run at once: within a tick (the
 * host port's shortest one-shot, the way the 64-bit list programs it).
 * note_due logs such a run at `passed_at`, other runs as note does. */
static uint64_t passed_at;

static void note_due(tern_alarm *a, void *arg)
{
    (void)a;
    uint64_t t = tern_now();
    char buf[32];
    snprintf(buf, sizeof buf, "%s@%llu ", (const char *)arg,
             (unsigned long long)(t <= passed_at + 1 ? passed_at : t));
    strcat(calls, buf);
}

static void nothing(tern_alarm *a, void *arg) { (void)a, (void)arg; }

/* The host and the kernel's clock run to `t` (the kernel's clock starts
 * at the counter's value, and wakes every half wrap once a deadline has
 * been set: one is). */
static void run_to(uint64_t t)
{
    static tern_alarm w;
    host_reset(0);
    tern_init();
    tern_alarm_init(&w, nothing, NULL);
    tern_alarm_set(&w, t, 0);
    host_run_until(t);
    assert_int_equal(tern_now(), t);
    calls[0] = '\0';
}

static void test_far_alarm_keeps_insertion_order(void **st)
{
    (void)st;
    /* f is armed more than half a wrap ahead, n later for the same
     * deadline: f was armed first, so it runs first */
    host_reset(0);
    tern_init();
    calls[0] = '\0';
    tern_alarm f, n, e;
    tern_alarm_init(&f, note, "f");
    tern_alarm_init(&n, note, "n");
    tern_alarm_init(&e, note, "e");
    const uint64_t d = HALF_WRAP + 100;
    tern_alarm_set(&f, d, 0);
    tern_alarm_set(&e, d - 1, 0);
    host_run_until(1000);
    tern_alarm_set(&n, d, 0);
    host_run_until(d + 10);
    char expected[96];
    snprintf(expected, sizeof expected, "e@%llu f@%llu n@%llu ", (unsigned long long)(d - 1),
             (unsigned long long)d, (unsigned long long)d);
    assert_string_equal(calls, expected);
}

static void test_long_passed_deadlines_run_at_once_in_order(void **st)
{
    (void)st;
    const uint64_t start = 3ull << 32;
    run_to(start);
    passed_at = start;
    tern_alarm a, b, c;
    tern_alarm_init(&a, note_due, "a");
    tern_alarm_init(&b, note_due, "b");
    tern_alarm_init(&c, note_due, "c");
    tern_irq_state s = port_irq_save(); /* all three set before any runs */
    tern_alarm_set(&b, start - 10, 0);  /* just passed */
    tern_alarm_set(&c, start + 50, 0);  /* ahead */
    tern_alarm_set(&a, 5, 0);           /* passed three wraps ago */
    port_irq_restore(s);
    host_run_until(start + 100);
    char expected[96];
    snprintf(expected, sizeof expected, "a@%llu b@%llu c@%llu ", (unsigned long long)start,
             (unsigned long long)start, (unsigned long long)(start + 50));
    assert_string_equal(calls, expected);
}

static void test_long_periods_and_catch_up(void **st)
{
    (void)st;
    /* a period of one and a half wraps' halves, one of a quarter wrap,
     * and a periodic alarm armed two wraps late, which catches up at once
     * (every deadline it missed runs, as the interrupt sees them due) */
    const uint64_t start = 1ull << 33;
    run_to(start);
    passed_at = start;
    tern_alarm l, q, c;
    tern_alarm_init(&l, note_due, "l");
    tern_alarm_init(&q, note_due, "q");
    tern_alarm_init(&c, note_due, "c");
    tern_alarm_set(&c, start - (1ull << 32), 1ull << 30);
    tern_alarm_set(&l, start + 100, 3 * HALF_WRAP);
    tern_alarm_set(&q, start + 200, HALF_WRAP / 2);
    host_run_until(start + 3 * HALF_WRAP + 150);
    tern_alarm_cancel(&c);
    tern_alarm_cancel(&q);
    tern_alarm_cancel(&l);
    char expected[512] = "", buf[32];
    for (int i = 0; i < 5; i++) { /* start - 2^32, ..., start */
        snprintf(buf, sizeof buf, "c@%llu ", (unsigned long long)start);
        strcat(expected, buf);
    }
    /* then in deadline order: c every 2^30, q every 2^30 from 200, l at
     * 100 and 3 * 2^31 + 100 */
    uint64_t next_c = start + (1ull << 30), next_q = start + 200, next_l = start + 100;
    const uint64_t end = start + 3 * HALF_WRAP + 150;
    for (;;) {
        uint64_t m = next_c < next_q ? next_c : next_q;
        m = next_l < m ? next_l : m;
        if (m > end)
            break;
        const char *who = m == next_l ? "l" : m == next_c ? "c" : "q";
        snprintf(buf, sizeof buf, "%s@%llu ", who, (unsigned long long)m);
        strcat(expected, buf);
        if (m == next_l)
            next_l += 3 * HALF_WRAP;
        else if (m == next_c)
            next_c += 1ull << 30;
        else
            next_q += HALF_WRAP / 2;
    }
    assert_string_equal(calls, expected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_timers),
        cmocka_unit_test(test_alarms_fire_in_deadline_order),
        cmocka_unit_test(test_clock_crosses_32bit_wrap),
        cmocka_unit_test(test_clock_survives_long_idle),
        cmocka_unit_test(test_far_alarm_keeps_insertion_order),
        cmocka_unit_test(test_long_passed_deadlines_run_at_once_in_order),
        cmocka_unit_test(test_long_periods_and_catch_up),
    };
    return cmocka_run_group_tests_name("time", tests, NULL, NULL);
}
