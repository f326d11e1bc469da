/* Application descriptions: every validation error names the task and the
 * field; two-stage creation holds messages until INIT; routing and
 * multicast deliver to the wired ports; bad destinations are refused and
 * counted. */
#include <string.h>

#include "fixture.h"

static tern_status noop(void *state, tern_msg *m)
{
    (void)state;
    (void)m;
    return TERN_OK;
}

/* ---- validation ---- */

static const tern_route to_b_port0[] = {TERN_TO_TASK(2, TERN_PORT_APP(0))};
static const uint8_t init_blob[TERN_MAX_INIT_DATA + 1];

static void expect_refused(const tern_app_desc *app, tern_status code, const char *field,
                           const char *words)
{
    tern_app_error err;
    tern_status st = tern_app_validate(app, &err);
    assert_int_equal(st, code);
    assert_int_equal(err.code, code);
    assert_string_equal(err.field, field);
    if (!strstr(err.text, words))
        fail_msg("'%s' does not contain '%s'", err.text, words);
}

static void test_refuses_bad_descriptions(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    tern_task_desc t[2] = {
        {.name = "sensor", .id = 1, .priority = 2, .handler = noop, .n_in_ports = 1},
        {.name = "radio", .id = 2, .priority = 3, .handler = noop, .n_in_ports = 1},
    };
    tern_app_desc app = {"demo", t, 2, NULL, 0, 0, NULL};
    assert_int_equal(tern_app_validate(&app, NULL), TERN_OK);

    t[1].id = 1;
    expect_refused(&app, TERN_EDUPLICATE, "id", "task 'radio': id: 1 is also the id of task 'sensor'");
    t[1].id = TERN_MAX_TASKS;
    expect_refused(&app, TERN_ERANGE, "id", "task 'radio'");
    t[1].id = 2;

    t[0].priority = TERN_PRIO_LEVELS;
    expect_refused(&app, TERN_ERANGE, "priority", "task 'sensor': priority: 8 is not below 8");
    t[0].priority = 2;

    t[0].handler = NULL;
    expect_refused(&app, TERN_EINVAL, "handler", "task 'sensor'");
    t[0].handler = noop;

    t[0].n_out_ports = 1;
    t[0].routes = to_b_port0;
    assert_int_equal(tern_app_validate(&app, NULL), TERN_OK);
    tern_route dangling[] = {TERN_TO_TASK(9, TERN_PORT_APP(0))};
    t[0].routes = dangling;
    expect_refused(&app, TERN_ENOTASK, "routes[].task", "task 'sensor': routes[].task: output 0 goes to task 9");
    tern_route bad_port[] = {TERN_TO_TASK(2, TERN_PORT_APP(1))};
    t[0].routes = bad_port;
    expect_refused(&app, TERN_ENOPORT, "routes[].port", "port 9 of 'radio', which has 1 app ports");
    tern_route system_port[] = {TERN_TO_TASK(2, TERN_PORT_INIT)}; /* would forge an INIT */
    t[0].routes = system_port;
    expect_refused(&app, TERN_ENOPORT, "routes[].port", "port 0 of 'radio'");
    tern_route no_group[] = {TERN_TO_GROUP(5)};
    t[0].routes = no_group;
    expect_refused(&app, TERN_ENOROUTE, "routes[].group", "group 5, which is not defined");
    t[0].n_out_ports = 0;

    t[1].init_data = init_blob;
    t[1].init_len = TERN_MAX_INIT_DATA + 1;
    expect_refused(&app, TERN_ERANGE, "init_len", "task 'radio': init_len: 65 bytes is above 64");
    t[1].init_len = 0;

    t[1].name = NULL;
    expect_refused(&app, TERN_EINVAL, "name", "task #1");
    t[1].name = "radio";

    t[0].n_in_ports = TERN_MAX_APP_PORTS + 1;
    expect_refused(&app, TERN_ERANGE, "n_in_ports", "task 'sensor'");
    t[0].n_in_ports = 1;

    tern_endpoint members[] = {{1, TERN_PORT_APP(0)}, {7, TERN_PORT_APP(0)}};
    tern_group_desc groups[] = {{3, 2, members}};
    app.groups = groups;
    app.n_groups = 1;
    expect_refused(&app, TERN_ENOTASK, "groups[].members[].task", "group 3 member 1 is task 7");
    members[1].task = 2;
    members[1].port = TERN_PORT_FINAL; /* a FINAL that would finalize nothing */
    expect_refused(&app, TERN_ENOPORT, "groups[].members[].port", "port 1 of 'radio'");
    members[1].port = TERN_PORT_APP(0);
    assert_int_equal(tern_app_validate(&app, NULL), TERN_OK);
    tern_group_desc twice[] = {{3, 2, members}, {3, 1, members}};
    app.groups = twice;
    app.n_groups = 2;
    expect_refused(&app, TERN_EDUPLICATE, "groups[].id", "group id 3 is defined twice");

    app.n_tasks = 0;
    expect_refused(&app, TERN_EINVAL, "tasks", "app 'demo': tasks: an app needs at least one task");
}

static void test_start_refuses_and_runs_nothing(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    tern_task_desc t[] = {{.name = "x", .id = 1, .priority = 99, .handler = noop}};
    tern_app_desc app = {"bad", t, 1, NULL, 0, 0, NULL};
    tern_app_error err;
    assert_int_equal(tern_app_start(&app, &err), TERN_ERANGE);
    host_run_until(100);
    assert_int_equal(tern_stats()->dispatched, 0);
    assert_int_equal(tern_stats()->posted, 0);
}

/* ---- two-stage creation ---- */

static char order[64];

static tern_status early_handler(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        strcat(order, "early.INIT ");
        /* "late" has not handled INIT yet: these must be held, in order */
        assert_int_equal(tern_post(0, "a", 1, 0), TERN_OK);
        assert_int_equal(tern_post(0, "b", 1, 0), TERN_OK);
    }
    return TERN_OK;
}

static tern_status late_handler(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        strcat(order, "late.INIT(");
        strncat(order, (const char *)m->payload, m->len);
        strcat(order, ") ");
    } else {
        strcat(order, "late.");
        strncat(order, (const char *)m->payload, m->len);
        strcat(order, " ");
    }
    return TERN_OK;
}

static void test_messages_before_init_are_held(void **st)
{
    (void)st;
    static const tern_route r[] = {TERN_TO_TASK(4, TERN_PORT_APP(0))};
    static const tern_task_desc t[] = {
        /* early is listed first and has the higher priority: its INIT runs
         * first under every model */
        {.name = "early", .id = 3, .priority = 7, .handler = early_handler, .n_out_ports = 1,
         .routes = r},
        {.name = "late", .id = 4, .priority = 0, .handler = late_handler, .n_in_ports = 1,
         .init_data = "cfg", .init_len = 3},
    };
    static const tern_app_desc app = {"hold", t, 2, NULL, 0, 0, NULL};
    order[0] = '\0';
    start_app(&app, 0);
    host_run_until(10);
    assert_string_equal(order, "early.INIT late.INIT(cfg) late.a late.b ");
    assert_int_equal(tern_stats()->held, 2);
    assert_int_equal(tern_stats()->dispatched, 4);
}

/* ---- routing, multicast, bad destinations ---- */

static int received[8];

static tern_status counting_handler(void *state, tern_msg *m)
{
    (void)state;
    if (m->port >= TERN_PORT_APP0)
        received[tern_self()] += m->port == TERN_PORT_APP(1) ? 100 : 1;
    return TERN_OK;
}

static tern_status router_handler(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    assert_int_equal(tern_post(0, NULL, 0, 0), TERN_OK);            /* -> task 2 port 1 */
    assert_int_equal(tern_post(1, NULL, 0, 0), TERN_OK);            /* -> group 0: 2, 3 */
    assert_int_equal(tern_post(2, NULL, 0, 0), TERN_ENOROUTE);      /* not wired */
    assert_int_equal(tern_post(9, NULL, 0, 0), TERN_ENOROUTE);      /* no such output */
    assert_int_equal(tern_send(6, TERN_PORT_APP(0), NULL, 0, 0), TERN_ENOTASK);
    assert_int_equal(tern_send(2, TERN_PORT_APP(2), NULL, 0, 0), TERN_ENOPORT);
    return TERN_OK;
}

static void test_routing_and_multicast(void **st)
{
    (void)st;
    static const tern_route routes[] = {
        TERN_TO_TASK(2, TERN_PORT_APP(1)), TERN_TO_GROUP(0), {TERN_ROUTE_NONE, 0, 0, 0}};
    static const tern_endpoint members[] = {{2, TERN_PORT_APP(0)}, {3, TERN_PORT_APP(0)}};
    static const tern_group_desc groups[] = {{0, 2, members}};
    static const tern_task_desc t[] = {
        {.name = "router", .id = 1, .priority = 1, .handler = router_handler, .n_in_ports = 1,
         .n_out_ports = 3, .routes = routes},
        {.name = "a", .id = 2, .priority = 2, .handler = counting_handler, .n_in_ports = 2},
        {.name = "b", .id = 3, .priority = 2, .handler = counting_handler, .n_in_ports = 1},
    };
    static const tern_app_desc app = {"route", t, 3, groups, 1, 0, NULL};
    memset(received, 0, sizeof received);
    start_app(&app, 0);
    inject_post(5, 1);
    host_run_until(100);
    assert_int_equal(received[2], 101);
    assert_int_equal(received[3], 1);
    const tern_counters *c = tern_stats();
    assert_int_equal(c->dropped[TERN_DROP_NO_ROUTE], 2);
    assert_int_equal(c->dropped[TERN_DROP_NO_TASK], 1);
    assert_int_equal(c->dropped[TERN_DROP_NO_PORT], 1);
}

/* ---- posts from an interrupt: the same checks as a task's ---- */

/* sched.c takes a shortcut for the common post from an interrupt (a ready
 * task's existing port, no heap payload: msg_plain); every other post
 * from an interrupt must get msg_check's error and counter, and be held
 * like a task's when its task has not handled INIT. */
static char isr_log[64];
static void *owned_by_task; /* allocated by "early": not the interrupt's to send */
static tern_status isr_status[8];

static tern_status busy_init(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        owned_by_task = tern_alloc(4);
        host_work(20); /* the interrupt at 5 comes now, before "late" handled INIT */
    }
    return TERN_OK;
}

static tern_status logging_handler(void *state, tern_msg *m)
{
    (void)state;
    strcat(isr_log, m->port == TERN_PORT_INIT ? "INIT" : m->payload ? (const char *)m->payload : "-");
    strcat(isr_log, " ");
    return TERN_OK;
}

static void isr_posts_early(void *arg)
{
    (void)arg;
    char *p = tern_alloc(2); /* an interrupt's block: the kernel owns it */
    assert_non_null(p);
    strcpy(p, "h");
    isr_status[0] = tern_send(6, TERN_PORT_APP(0), NULL, 0, 0);           /* no such task */
    isr_status[1] = tern_send(2, TERN_PORT_APP(1), NULL, 0, 0);           /* no such port */
    isr_status[2] = tern_send(2, TERN_PORT_APP(0), "a", 2, 0);            /* held for INIT */
    isr_status[3] = tern_send(2, TERN_PORT_APP(0), p, 2, TERN_MSG_HEAP);  /* held too */
    isr_status[4] = tern_send(2, TERN_PORT_APP(0), owned_by_task, 4, TERN_MSG_HEAP);
}

static void isr_posts_late(void *arg)
{
    (void)arg;
    assert_int_equal(tern_task_finalize(3), TERN_OK);
    isr_status[5] = tern_send(3, TERN_PORT_APP(0), NULL, 0, 0); /* being finalized */
    isr_status[6] = tern_send(2, TERN_PORT_APP(0), "b", 2, 0);  /* the shortcut */
}

static void test_interrupt_posts_are_checked(void **st)
{
    (void)st;
    static const tern_task_desc t[] = {
        {.name = "early", .id = 1, .priority = 7, .handler = busy_init},
        {.name = "late", .id = 2, .priority = 0, .handler = logging_handler, .n_in_ports = 1},
        {.name = "victim", .id = 3, .priority = 1, .handler = noop, .n_in_ports = 1},
    };
    static const tern_app_desc app = {"isr", t, 3, NULL, 0, 0, NULL};
    isr_log[0] = '\0';
    memset(isr_status, 0xff, sizeof isr_status);
    start_app(&app, 0);
    host_inject(5, isr_posts_early, NULL);
    host_inject(100, isr_posts_late, NULL);
    host_run_until(1000);
    assert_int_equal(isr_status[0], TERN_ENOTASK);
    assert_int_equal(isr_status[1], TERN_ENOPORT);
    assert_int_equal(isr_status[2], TERN_OK);
    assert_int_equal(isr_status[3], TERN_OK);
    assert_int_equal(isr_status[4], TERN_EOWNER);
    assert_int_equal(isr_status[5], TERN_ESTATE);
    assert_int_equal(isr_status[6], TERN_OK);
    assert_string_equal(isr_log, "INIT a h b ");
    const tern_counters *c = tern_stats();
    assert_int_equal(c->held, 2);
    assert_int_equal(c->dropped[TERN_DROP_NO_TASK], 1);
    assert_int_equal(c->dropped[TERN_DROP_NO_PORT], 1);
    assert_int_equal(c->dropped[TERN_DROP_NO_MEMORY], 1);
    assert_int_equal(c->dropped[TERN_DROP_FINALIZED], 1);
}

/* ---- a released held message among newer ones of its level ---- */

/* B's INIT runs first; meanwhile an interrupt posts to A and then to B,
 * both held (neither has handled INIT). B's INIT ends and releases B's
 * message to the queue; A's INIT then releases A's, which is older: the
 * models that order by priority, then creation, run it first; fifo runs
 * messages in the order they reached the queue, and it reached it last. */
static char release_log[64];

static tern_status b_init(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT)
        host_work(20); /* the interrupt at 5 */
    else
        strcat(release_log, "B ");
    return TERN_OK;
}

static tern_status a_log(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        strcat(release_log, "A ");
    return TERN_OK;
}

static void post_a_then_b(void *arg)
{
    (void)arg;
    assert_int_equal(tern_send(2, TERN_PORT_APP(0), NULL, 0, 0), TERN_OK); /* held */
    assert_int_equal(tern_send(1, TERN_PORT_APP(0), NULL, 0, 0), TERN_OK); /* held */
}

static void test_released_message_keeps_creation_order(void **st)
{
    (void)st;
    static const tern_task_desc t[] = {
        {.name = "B", .id = 1, .priority = 3, .handler = b_init, .n_in_ports = 1},
        {.name = "A", .id = 2, .priority = 3, .handler = a_log, .n_in_ports = 1},
    };
    static const tern_app_desc app = {"release", t, 2, NULL, 0, 0, NULL};
    release_log[0] = '\0';
    start_app(&app, 0);
    host_inject(5, post_a_then_b, NULL);
    host_run_until(1000);
    assert_string_equal(release_log, strcmp(tern_model_name, "fifo") ? "A B " : "B A ");
    assert_int_equal(tern_stats()->held, 2);
}

/* ---- message pool exhaustion ---- */

static tern_status slow_handler(void *state, tern_msg *m)
{
    (void)state;
    if (m->port >= TERN_PORT_APP0)
        host_work(10);
    return TERN_OK;
}

static int refused_posts;

static void burst(void *arg)
{
    (void)arg;
    for (int i = 0; i < TERN_MSG_POOL + 5; i++)
        if (tern_send(1, TERN_PORT_APP(0), NULL, 0, 0) == TERN_EFULL)
            refused_posts++;
}

static void test_full_pool_is_an_error_not_a_loss(void **st)
{
    (void)st;
    static const tern_task_desc t[] = {
        {.name = "sink", .id = 1, .priority = 1, .handler = slow_handler, .n_in_ports = 1}};
    static const tern_app_desc app = {"pool", t, 1, NULL, 0, 0, NULL};
    refused_posts = 0;
    start_app(&app, 0);
    host_inject(50, burst, NULL);
    host_run_until(100000);
    const tern_counters *c = tern_stats();
    assert_int_equal(refused_posts, 5);
    assert_int_equal(c->dropped[TERN_DROP_POOL_FULL], 5);
    assert_int_equal(c->dispatched, 1 + TERN_MSG_POOL); /* INIT + every accepted message */
    assert_int_equal(c->max_queue_depth, TERN_MSG_POOL);
}

/* With the pool empty FINAL cannot be posted: finalize says TERN_EFULL and
 * the task goes on as it was, so a retry finalizes it. */
static int finalize_status;

static void burst_then_finalize(void *arg)
{
    burst(arg);
    finalize_status = tern_task_finalize(1);
}

static void test_finalize_with_a_full_pool_can_be_retried(void **st)
{
    (void)st;
    static const tern_task_desc t[] = {
        {.name = "sink", .id = 1, .priority = 1, .handler = slow_handler, .n_in_ports = 1}};
    static const tern_app_desc app = {"pool", t, 1, NULL, 0, 0, NULL};
    start_app(&app, 0);
    host_inject(50, burst_then_finalize, NULL);
    host_run_until(100000);
    assert_int_equal(finalize_status, TERN_EFULL);
    assert_string_equal(tern_task_name(1), "sink");
    assert_int_equal(tern_send(1, TERN_PORT_APP(0), NULL, 0, 0), TERN_OK); /* still accepted */
    assert_int_equal(tern_task_finalize(1), TERN_OK);
    host_run_until(200000);
    assert_string_equal(tern_task_name(1), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refuses_bad_descriptions),
        cmocka_unit_test(test_start_refuses_and_runs_nothing),
        cmocka_unit_test(test_messages_before_init_are_held),
        cmocka_unit_test(test_routing_and_multicast),
        cmocka_unit_test(test_interrupt_posts_are_checked),
        cmocka_unit_test(test_released_message_keeps_creation_order),
        cmocka_unit_test(test_full_pool_is_an_error_not_a_loss),
        cmocka_unit_test(test_finalize_with_a_full_pool_can_be_retried),
    };
    return cmocka_run_group_tests_name("app", tests, NULL, NULL);
}
