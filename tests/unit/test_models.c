/* Dispatch order under each run-to-completion model. The same scenarios
 * run against fifo, priority and stack builds; each scenario states the
 * timeline every model must produce ("S<task>@<t>" handler start,
 * "E<task>@<t>" handler end, times in ticks). */
#include <string.h>

#include "fixture.h"

static const char *expect(const char *fifo, const char *priority, const char *stack)
{
    if (!strcmp(tern_model_name, "fifo"))
        return fifo;
    if (!strcmp(tern_model_name, "priority"))
        return priority;
    return stack;
}

static script s_low, s_mid, s_high, s_mid2;

static const tern_task_desc three_tasks[] = {
    SCRIPTED("low", 0, 1, &s_low),
    SCRIPTED("mid", 1, 4, &s_mid),
    SCRIPTED("high", 2, 6, &s_high),
    SCRIPTED("mid2", 3, 4, &s_mid2),
};
static const tern_app_desc app = {"models", three_tasks, 4, NULL, 0, 0, NULL};

static void reset_scripts(void)
{
    script idle = {.work = 100, .post_task = TERN_NO_TASK};
    s_low = s_mid = s_high = s_mid2 = idle;
}

/* Interrupts post to low, mid and high 10 ticks apart. */
static void test_interrupts_rising_priority(void **st)
{
    (void)st;
    reset_scripts();
    start_app(&app, 0);
    inject_post(0, 0);
    inject_post(10, 1);
    inject_post(20, 2);
    host_run_until(1000);
    assert_string_equal(log_get(),
        expect("S0@0 E0@100 S1@100 E1@200 S2@200 E2@300",
               "S0@0 E0@100 S2@100 E2@200 S1@200 E1@300",
               /* each strictly higher interrupt post nests at once */
               "S0@0 S1@10 S2@20 E2@120 E1@210 E0@300"));
}

/* From an interrupt, equal priority never preempts (seed 002 V-B). */
static void test_interrupt_equal_priority_waits(void **st)
{
    (void)st;
    reset_scripts();
    start_app(&app, 0);
    inject_post(0, 1);
    inject_post(10, 3);
    host_run_until(1000);
    assert_string_equal(log_get(), "S1@0 E1@100 S3@100 E3@200");
}

/* A task posting to an equal-priority task: in stack it runs at once. */
static void test_task_post_equal_priority(void **st)
{
    (void)st;
    reset_scripts();
    s_mid.post_task = 3;
    s_mid.post_port = TERN_PORT_APP(0);
    s_mid.post_after = 50;
    start_app(&app, 0);
    inject_post(0, 1);
    host_run_until(1000);
    assert_string_equal(log_get(),
        expect("S1@0 E1@100 S3@100 E3@200", "S1@0 E1@100 S3@100 E3@200",
               "S1@0 S3@50 E3@150 E1@200"));
}

/* A task posting to a lower-priority task never preempts. */
static void test_task_post_lower_priority_queues(void **st)
{
    (void)st;
    reset_scripts();
    s_high.post_task = 0;
    s_high.post_port = TERN_PORT_APP(0);
    s_high.post_after = 50;
    start_app(&app, 0);
    inject_post(0, 2);
    host_run_until(1000);
    assert_string_equal(log_get(), "S2@0 E2@100 S0@100 E0@200");
}

/* A message to a task already on the stack waits until it has left it. */
static void test_task_on_stack_is_queued(void **st)
{
    (void)st;
    reset_scripts();
    s_mid.post_task = 2; /* mid -> high at 50 */
    s_mid.post_port = TERN_PORT_APP(0);
    s_mid.post_after = 50;
    s_mid.max_posts = 1;
    s_high.post_task = 1; /* high -> mid (mid is on the stack) at 10 */
    s_high.post_port = TERN_PORT_APP(0);
    s_high.post_after = 10;
    start_app(&app, 0);
    inject_post(0, 1);
    host_run_until(1000);
    assert_string_equal(log_get(),
        expect("S1@0 E1@100 S2@100 E2@200 S1@200 E1@300",
               "S1@0 E1@100 S2@100 E2@200 S1@200 E1@300",
               "S1@0 S2@50 E2@150 E1@200 S1@200 E1@300"));
    assert_int_equal(tern_stats()->max_stack_depth, !strcmp(tern_model_name, "stack") ? 2 : 1);
}

/* When a handler returns, the highest queued message above the handler
 * below it runs next, then the next highest; the lowest resumes last. */
static void test_return_runs_highest_queued_first(void **st)
{
    (void)st;
    reset_scripts();
    start_app(&app, 0);
    inject_post(0, 0);  /* low starts */
    inject_post(10, 2); /* high */
    inject_post(20, 1); /* mid, queued behind high in stack */
    inject_post(30, 3); /* mid2, same priority as mid, created later */
    host_run_until(2000);
    assert_string_equal(log_get(),
        expect("S0@0 E0@100 S2@100 E2@200 S1@200 E1@300 S3@300 E3@400",
               "S0@0 E0@100 S2@100 E2@200 S1@200 E1@300 S3@300 E3@400",
               "S0@0 S2@10 E2@110 S1@110 E1@210 S3@210 E3@310 E0@400"));
    const tern_counters *c = tern_stats();
    assert_int_equal(c->dispatched, 4 + 4); /* 4 INIT + 4 app messages */
    assert_int_equal(c->preemptions, !strcmp(tern_model_name, "stack") ? 3 : 0);
    assert_int_equal(c->queue_depth, 0);
}

/* An interrupt that arrives while interrupts are masked is not lost: it
 * fires when they are enabled again. */
static void test_no_message_lost_under_load(void **st)
{
    (void)st;
    reset_scripts();
    s_low.work = 7;
    s_mid.work = 13;
    s_high.work = 3;
    start_app(&app, 0);
    for (uint64_t t = 0; t < 60; t++)
        inject_post(t * 5, (tern_task_id)(t % 3));
    host_run_until(100000);
    const tern_counters *c = tern_stats();
    assert_int_equal(c->posted, 4 + 60);
    assert_int_equal(c->dispatched, 4 + 60);
    for (int r = 0; r < TERN_DROP_REASONS; r++)
        assert_int_equal(c->dropped[r], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interrupts_rising_priority),
        cmocka_unit_test(test_interrupt_equal_priority_waits),
        cmocka_unit_test(test_task_post_equal_priority),
        cmocka_unit_test(test_task_post_lower_priority_queues),
        cmocka_unit_test(test_task_on_stack_is_queued),
        cmocka_unit_test(test_return_runs_highest_queued_first),
        cmocka_unit_test(test_no_message_lost_under_load),
    };
    return cmocka_run_group_tests_name(tern_model_name, tests, NULL, NULL);
}
