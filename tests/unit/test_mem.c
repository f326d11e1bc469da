/* Heap (first fit, coalescing, owners, exhaustion, leaks) and payload
 * ownership travelling with messages. */
#include <string.h>

#include "fixture.h"

static void fresh(void)
{
    host_reset(0);
    tern_init();
}

static void test_first_fit_and_coalescing(void **st)
{
    (void)st;
    fresh();
    size_t empty = tern_heap_free_bytes();
    assert_int_equal(tern_heap_largest_free(), empty);
    uint8_t *a = tern_alloc(16), *b = tern_alloc(32), *c = tern_alloc(16);
    assert_non_null(a);
    assert_true(a < b && b < c); /* address order */
    tern_free(a);
    uint8_t *d = tern_alloc(8); /* first fit: the lowest hole that fits */
    assert_ptr_equal(d, a);
    tern_free(b);
    uint8_t *e = tern_alloc(40); /* does not fit in b's 32-byte hole */
    assert_true(e > c);
    tern_free(c);
    tern_free(d);
    tern_free(e);
    tern_free(e); /* double free: ignored, nothing corrupted */
    assert_int_equal(tern_heap_free_bytes(), empty);
    assert_int_equal(tern_heap_largest_free(), empty); /* all merged back */
}

static void test_exhaustion_is_an_error(void **st)
{
    (void)st;
    fresh();
    assert_null(tern_alloc(TERN_HEAP_SIZE));
    assert_int_equal(tern_stats()->alloc_failures, 1);
    assert_null(tern_alloc(SIZE_MAX)); /* rounding up must not wrap to a small block */
    assert_int_equal(tern_stats()->alloc_failures, 2);
    void *p = tern_alloc(100);
    assert_non_null(p);
    assert_null(tern_realloc(p, TERN_HEAP_SIZE));
    assert_int_equal(tern_heap_used_by(TERN_OWNER_KERNEL), tern_heap_used_by(TERN_OWNER_KERNEL));
    memset(p, 7, 100); /* still valid after the failed realloc */
    void *q = tern_realloc(p, 300);
    assert_non_null(q);
    assert_int_equal(((uint8_t *)q)[99], 7);
    tern_free(q);
}

static void test_shrinking_returns_the_tail(void **st)
{
    (void)st;
    fresh();
    size_t empty = tern_heap_free_bytes();
    uint8_t *big = tern_alloc(1024), *after = tern_alloc(16);
    assert_non_null(after);
    memset(big, 5, 1024);
    size_t before = tern_heap_free_bytes();
    uint8_t *small = tern_realloc(big, 100);
    assert_ptr_equal(small, big); /* in place, contents kept */
    assert_int_equal(small[99], 5);
    assert_true(tern_heap_free_bytes() >= before + 1024 - 100 - 32); /* less headers and rounding */
    uint8_t *again = tern_alloc(800); /* the tail is a free block again */
    assert_true(again > small && again < after);
    assert_ptr_equal(tern_realloc(small, 100), small); /* same size: nothing to give back */
    tern_free(again);
    tern_free(small);
    tern_free(after);
    assert_int_equal(tern_heap_free_bytes(), empty);
    assert_int_equal(tern_heap_largest_free(), empty); /* the tail merged back */
}

/* sender allocates and posts; receiver takes or not */
static int taken_value;
static size_t used_by_receiver;

static tern_status sender(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    int *v = tern_alloc(sizeof *v);
    assert_non_null(v);
    *v = 42;
    assert_int_equal(tern_heap_used_by(tern_self()), tern_heap_used_by(tern_self()));
    assert_int_equal(tern_post(0, v, sizeof *v, TERN_MSG_HEAP), TERN_OK);
    /* a block the sender does not own cannot be posted */
    int local = 1;
    assert_int_equal(tern_post(0, &local, sizeof local, TERN_MSG_HEAP), TERN_EOWNER);
    return TERN_OK;
}

static tern_status receiver(void *state, tern_msg *m)
{
    bool *take = state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    if (*take) {
        int *v = tern_take(m);
        assert_non_null(v);
        taken_value = *v;
        used_by_receiver = tern_heap_used_by(tern_self());
        tern_free(v);
    }
    return TERN_OK;
}

static void run_transfer(bool take)
{
    static bool take_flag;
    static const tern_route r[] = {TERN_TO_TASK(2, TERN_PORT_APP(0))};
    static const tern_task_desc t[] = {
        {.name = "sender", .id = 1, .priority = 1, .handler = sender, .n_in_ports = 1,
         .n_out_ports = 1, .routes = r},
        {.name = "receiver", .id = 2, .priority = 2, .handler = receiver, .state = &take_flag,
         .n_in_ports = 1},
    };
    static const tern_app_desc app = {"own", t, 2, NULL, 0, 0, NULL};
    take_flag = take;
    taken_value = 0;
    used_by_receiver = 0;
    start_app(&app, 0);
    size_t empty = tern_heap_free_bytes();
    inject_post(10, 1);
    host_run_until(100);
    assert_int_equal(tern_heap_free_bytes(), empty); /* nothing leaked either way */
}

static void test_payload_ownership_travels(void **st)
{
    (void)st;
    run_transfer(true);
    assert_int_equal(taken_value, 42);
    assert_true(used_by_receiver >= sizeof(int));
    run_transfer(false); /* not taken: the kernel frees it after the handler */
    assert_int_equal(taken_value, 0);
}

static tern_status copy_taker(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    char *p = tern_take(m); /* not a heap payload: a private copy */
    assert_non_null(p);
    assert_ptr_not_equal(p, m->payload);
    assert_memory_equal(p, "abc", 3);
    tern_free(p);
    return TERN_OK;
}

static void post_static(void *arg)
{
    (void)arg;
    assert_int_equal(tern_send(1, TERN_PORT_APP(0), "abc", 3, 0), TERN_OK);
}

static void test_take_copies_static_payload(void **st)
{
    (void)st;
    static const tern_task_desc t[] = {
        {.name = "taker", .id = 1, .priority = 1, .handler = copy_taker, .n_in_ports = 1}};
    static const tern_app_desc app = {"copy", t, 1, NULL, 0, 0, NULL};
    start_app(&app, 0);
    size_t empty = tern_heap_free_bytes();
    host_inject(5, post_static, NULL);
    host_run_until(50);
    assert_int_equal(tern_heap_free_bytes(), empty);
    assert_int_equal(tern_stats()->dispatched, 2);
}

static tern_status leaky(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        assert_non_null(tern_alloc(10));
        assert_non_null(tern_alloc(20));
        assert_int_equal(tern_timer_start(0, 1000, 1000), TERN_OK);
    }
    if (m->port == TERN_PORT_TIMEOUT0)
        fail_msg("timer of a finalized task fired");
    return TERN_OK;
}

static void finalize_leaky(void *arg)
{
    (void)arg;
    assert_int_equal(tern_task_finalize(5), TERN_OK);
    /* the task is going: new messages are refused and counted */
    assert_int_equal(tern_send(5, TERN_PORT_APP(0), NULL, 0, 0), TERN_ESTATE);
}

static void test_leak_report_on_finalize(void **st)
{
    (void)st;
    static const tern_task_desc t[] = {
        {.name = "leaky", .id = 5, .priority = 1, .handler = leaky, .n_in_ports = 1}};
    static const tern_app_desc app = {"leak", t, 1, NULL, 0, 0, NULL};
    start_app(&app, 0);
    host_inject(100, finalize_leaky, NULL);
    host_run_until(5000);
    /* sizes are reported as allocated, i.e. rounded up to the heap's alignment */
    assert_non_null(strstr(host_console(), "tern: task 'leaky' leaked "));
    assert_non_null(strstr(host_console(), " bytes in 2 blocks (reclaimed)"));
    assert_int_equal(tern_stats()->leaks_reported, 2);
    assert_int_equal(tern_heap_used_by(5), 0);
    assert_int_equal(tern_stats()->dropped[TERN_DROP_FINALIZED], 1);
    assert_int_equal(tern_send(5, TERN_PORT_APP(0), NULL, 0, 0), TERN_ENOTASK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_fit_and_coalescing),
        cmocka_unit_test(test_exhaustion_is_an_error),
        cmocka_unit_test(test_shrinking_returns_the_tail),
        cmocka_unit_test(test_payload_ownership_travels),
        cmocka_unit_test(test_take_copies_static_payload),
        cmocka_unit_test(test_leak_report_on_finalize),
    };
    return cmocka_run_group_tests_name("mem", tests, NULL, NULL);
}
