/* Remote tasks (kernel/remote.c) on the host, this process playing module 1
 * (bus address 0) of a node whose bus is a fake: frames sent are recorded,
 * the bus can be made busy, frames from "module 2" are handed to
 * tern_remote_receive as its driver would. Descriptions of several modules
 * are validated by name; the bus queue orders by destination priority;
 * received messages follow the local rules and errors; a multicast crosses
 * the bus once. */
#include <stdio.h>
#include <string.h>

#include "fixture.h"

/* ---- the fake bus ---- */

#define FRAMES 32
static struct {
    uint8_t dst, len, data[TERN_REMOTE_FRAME_MAX];
} sent[FRAMES];
static unsigned n_sent;
static unsigned room; /* frames the bus takes before it is busy */
static unsigned polls;

static tern_bus_result fake_send(uint8_t dst, const uint8_t *head, uint8_t head_len,
                                 const void *body, uint8_t body_len)
{
    uint8_t len = (uint8_t)(head_len + body_len);
    assert_true(len <= TERN_REMOTE_FRAME_MAX);
    if (!room)
        return TERN_BUS_BUSY;
    room--;
    assert_true(n_sent < FRAMES);
    sent[n_sent].dst = dst;
    sent[n_sent].len = len;
    memcpy(sent[n_sent].data, head, head_len);
    if (body_len)
        memcpy(sent[n_sent].data + head_len, body, body_len);
    n_sent++;
    return TERN_BUS_SENT;
}

static void offer(void);
static void fake_poll(void)
{
    polls++;
    offer();
}

static const tern_bus fake = {.send = fake_send, .poll = fake_poll, .address = 0, .count = 2,
                              .frame_max = 64, .retry_ticks = 50};

/* ---- the app: module 1 = this process, module 2 = the other end ---- */

enum { T_SRC, T_SINK, T_MEMBER, T_LOW, T_MID, T_HIGH, T_FAR_MEMBER };
#define IN TERN_PORT_APP(0)
#define M1 TERN_MODULE(0)
#define M2 TERN_MODULE(1)

static char log_[1024];
static unsigned rx_made, rx_arrived, rx_taken;

static tern_status sink(void *state, tern_msg *m)
{
    (void)state;
    if (m->port < TERN_PORT_APP0)
        return TERN_OK;
    char one[48];
    snprintf(one, sizeof one, "%s<%s:%.*s ", tern_task_name(tern_self()), tern_task_name(m->src),
             (int)m->len, m->payload ? (const char *)m->payload : "");
    strcat(log_, one);
    return TERN_OK;
}

static const tern_route src_routes[] = {TERN_TO_TASK(T_LOW, IN), TERN_TO_TASK(T_MID, IN),
                                        TERN_TO_TASK(T_HIGH, IN), TERN_TO_GROUP(4)};
static const tern_endpoint members[] = {{T_FAR_MEMBER, IN}, {T_MEMBER, IN}};
static const tern_group_desc groups[] = {{.id = 4, .n_members = 2, .members = members}};
static tern_task_desc tasks[] = {
    {.name = "src", .id = T_SRC, .priority = 2, .handler = sink, .module = M1, .n_in_ports = 1,
     .n_out_ports = 4,
     .routes = src_routes},
    {.name = "sink", .id = T_SINK, .priority = 3, .handler = sink, .module = M1, .n_in_ports = 1},
    {.name = "member", .id = T_MEMBER, .priority = 1, .handler = sink, .module = M1,
     .n_in_ports = 1},
    {.name = "low", .id = T_LOW, .priority = 1, .handler = sink, .module = M2, .n_in_ports = 1},
    {.name = "mid", .id = T_MID, .priority = 3, .handler = sink, .module = M2, .n_in_ports = 1},
    {.name = "high", .id = T_HIGH, .priority = 5, .handler = sink, .module = M2, .n_in_ports = 2,
     .flags = TERN_TASK_MOVABLE},
    {.name = "far_member", .id = T_FAR_MEMBER, .priority = 6, .handler = sink, .module = M2,
     .n_in_ports = 1},
};
static tern_app_desc app = {.name = "node", .tasks = tasks, .n_tasks = 7, .groups = groups,
                            .n_groups = 1, .n_modules = 2};

static size_t heap_free_at_start;

static void start(unsigned bus_room)
{
    host_reset(0);
    tern_init();
    n_sent = 0;
    polls = 0;
    room = bus_room;
    log_[0] = '\0';
    rx_made = rx_arrived = rx_taken = 0;
    assert_int_equal(tern_remote_attach(&fake), TERN_OK);
    tern_app_error err;
    if (tern_app_start(&app, &err) != TERN_OK)
        fail_msg("refused: %s", err.text);
    host_run_until(10); /* the INITs */
    heap_free_at_start = tern_heap_free_bytes();
}

/* Post from task `src`, as its handler would: a scripted interrupt cannot
 * post through a routing table, so the test runs inside src's handler. */
static uint8_t posts[8];
static uint8_t n_posts;
static tern_status post_all(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != IN)
        return TERN_OK;
    for (uint8_t i = 0; i < n_posts; i++) {
        char *p = tern_alloc(2);
        p[0] = (char)('a' + i);
        p[1] = '!';
        assert_int_equal(tern_post(posts[i], p, 2, TERN_MSG_HEAP), TERN_OK);
    }
    return TERN_OK;
}

static void post_from_src(const uint8_t *outs, uint8_t n, uint64_t at)
{
    memcpy(posts, outs, n);
    n_posts = n;
    inject_post(at, T_SRC);
}

/* ---- validation ---- */

static void expect_refused(tern_status code, const char *field, const char *words)
{
    tern_app_error err;
    assert_int_equal(tern_app_validate(&app, &err), code);
    assert_string_equal(err.field, field);
    if (!strstr(err.text, words))
        fail_msg("'%s' does not contain '%s'", err.text, words);
}

static void test_validation_names_task_and_module(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    assert_int_equal(tern_app_validate(&app, NULL), TERN_OK);

    tasks[4].module = TERN_MODULE(2);
    expect_refused(TERN_ERANGE, "module", "task 'mid': module: 3 is unknown: n_modules is 2");
    tasks[4].module = TERN_MODULE_THIS;
    expect_refused(TERN_EINVAL, "module", "task 'mid': module: missing (n_modules is 2)");
    tasks[4].module = M2;

    app.n_modules = 0; /* single-processor: no task may name a module */
    expect_refused(TERN_ERANGE, "module", "task 'src': module: 1 is unknown: n_modules is 0");
    app.n_modules = 2;

    tern_route nowhere[] = {TERN_TO_TASK(9, IN)};
    tasks[0].routes = nowhere;
    tasks[0].n_out_ports = 1;
    expect_refused(TERN_ENOTASK, "routes[].task", "task 'src': routes[].task: output 0 goes to task 9");
    tasks[0].routes = src_routes;
    tasks[0].n_out_ports = 4;

    /* Starting needs a bus, and one with as many processors as modules. */
    tern_app_error err;
    assert_int_equal(tern_app_start(&app, &err), TERN_ESTATE);
    assert_string_equal(err.field, "n_modules");
    tern_bus one = fake;
    one.count = 1;
    assert_int_equal(tern_remote_attach(&one), TERN_OK);
    assert_int_equal(tern_app_start(&app, &err), TERN_ERANGE);
    assert_non_null(strstr(err.text, "n_modules: 2, but the bus has 1"));
}

static void test_single_processor_flags(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    tern_task_desc t[] = {{.name = "roamer", .id = 1, .priority = 1, .handler = sink,
                           .flags = TERN_TASK_MOVABLE}};
    tern_app_desc one = {.name = "one", .tasks = t, .n_tasks = 1};
    tern_app_error err;
    assert_int_equal(tern_app_validate(&one, &err), TERN_EINVAL);
    assert_non_null(strstr(err.text, "task 'roamer': flags: movable, but n_modules is 0"));
}

/* A task that drives hardware starts where the description says that
 * hardware is, and never moves; refused by name otherwise. */
static void test_hardware_pins_a_task_to_a_module_that_has_it(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    tasks[4].flags = TERN_TASK_NEEDS_RADIO; /* 'mid', on module 1 */
    expect_refused(TERN_EPINNED, "module",
                   "task 'mid': module: needs hardware 0x10 that module 1 lacks (module_hw 0x00)");
    const uint8_t adc_only[] = {TERN_TASK_NEEDS_RADIO | TERN_TASK_NEEDS_ADC, TERN_TASK_NEEDS_ADC};
    app.module_hw = adc_only;
    expect_refused(TERN_EPINNED, "module", "needs hardware 0x10 that module 1 lacks (module_hw 0x20)");
    tasks[4].module = M1; /* where the radio is */
    assert_int_equal(tern_app_validate(&app, NULL), TERN_OK);
    tasks[4].flags |= TERN_TASK_MOVABLE;
    expect_refused(TERN_EPINNED, "flags",
                   "task 'mid': flags: movable, but it drives hardware (0x10) bound to its module");
    tasks[4].flags = 0;
    tasks[4].module = M2;
    app.module_hw = NULL;
    assert_int_equal(tern_app_validate(&app, NULL), TERN_OK);
}

/* The processor checks its own board: module_hw may claim for it only
 * what port_board.hw has (the host board: an ADC, no radio). A claim
 * beyond it refuses the start by name and counts it; nothing starts. */
static void test_a_processor_refuses_an_entry_its_board_lacks(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    assert_int_equal(tern_remote_attach(&fake), TERN_OK);
    const uint8_t radio_here[] = {TERN_HW_RADIO | TERN_HW_ADC, 0};
    app.module_hw = radio_here;
    assert_int_equal(tern_app_validate(&app, NULL), TERN_OK); /* the description is sound */
    tern_app_error err;
    assert_int_equal(tern_app_start(&app, &err), TERN_ENOHW);
    assert_string_equal(err.field, "module_hw");
    assert_string_equal(err.text, "app 'node': module_hw: module 0 claims hardware 0x30, its board has 0x20");
    assert_string_equal(tern_status_name(err.code), "TERN_ENOHW");
    assert_int_equal(tern_stats()->hw_refused, 1);
    assert_null(tern_remote_tcb_of(T_HIGH)); /* nothing instantiated, no remote TCB */
    host_run_until(10);
    assert_int_equal(tern_stats()->dispatched, 0);
    /* what the board has, or an entry for the other module: starts */
    const uint8_t adc_here[] = {TERN_HW_ADC, TERN_HW_RADIO};
    app.module_hw = adc_here;
    assert_int_equal(tern_app_start(&app, &err), TERN_OK);
    assert_int_equal(tern_stats()->hw_refused, 1);
    app.module_hw = NULL;
}

/* ---- the remote TCBs ---- */

static void test_remote_tcbs_for_the_other_module_only(void **st)
{
    (void)st;
    start(100);
    assert_null(tern_remote_tcb_of(T_SRC));
    assert_null(tern_remote_tcb_of(T_MEMBER));
    const tern_remote_tcb *h = tern_remote_tcb_of(T_HIGH);
    assert_non_null(h);
    assert_int_equal(h->module, 1);
    assert_int_equal(h->priority, 5);
    assert_int_equal(h->n_in_ports, 2);
    assert_int_equal(h->flags, TERN_TASK_MOVABLE);
    assert_true(sizeof(tern_remote_tcb) <= 6); /* seed 002: 6 bytes each */
    assert_string_equal(tern_task_name(T_HIGH), "high"); /* named, though not here */
    assert_int_equal(tern_remote_module_of(T_HIGH), 1);
    assert_int_equal(tern_remote_module_of(T_SRC), 0);
    assert_int_equal(tern_remote_module_of(12), TERN_REMOTE_NONE);
    /* the migrator moves it here, and back */
    assert_int_equal(tern_remote_set_module(T_HIGH, TERN_REMOTE_NONE), TERN_OK);
    assert_null(tern_remote_tcb_of(T_HIGH));
    assert_int_equal(tern_remote_set_module(T_HIGH, 0), TERN_EINVAL); /* ourselves */
    assert_int_equal(tern_remote_set_module(T_HIGH, 1), TERN_OK);
    assert_int_equal(tern_remote_set_module(12, 1), TERN_ENOTASK);
}

/* ---- the bus queue ---- */

static void test_bus_queue_orders_by_destination_priority(void **st)
{
    (void)st;
    start(0); /* the bus is busy: everything waits */
    tasks[T_SRC].handler = post_all;
    const uint8_t outs[] = {0, 2, 1, 2, 0}; /* low, high, mid, high, low */
    post_from_src(outs, 5, 20);
    host_run_until(30);
    assert_int_equal(n_sent, 0);
    assert_int_equal(tern_remote_stats()->queue_depth, 5);
    assert_int_equal(tern_remote_stats()->max_queue_depth, 5);
    room = 100; /* the bus frees: the retry alarm sends all, highest first */
    host_run_until(200);
    tasks[T_SRC].handler = sink;
    assert_int_equal(n_sent, 5);
    const char *want[] = {"\x05" "b!", "\x05" "d!", "\x04" "c!", "\x03" "a!", "\x03" "e!"};
    for (unsigned i = 0; i < 5; i++) {
        /* [kind, src, dst, port] + payload, to bus address 1 */
        assert_int_equal(sent[i].dst, 1);
        assert_int_equal(sent[i].len, TERN_REMOTE_HEADER + 2);
        uint16_t crc = tern_remote_frame_crc(sent[i].data, sent[i].len);
        assert_int_equal(sent[i].data[TERN_REMOTE_CRC_AT], (uint8_t)crc);
        assert_int_equal(sent[i].data[TERN_REMOTE_CRC_AT + 1], crc >> 8);
        assert_int_equal(sent[i].data[0], 'U');
        assert_int_equal(sent[i].data[1], T_SRC);
        assert_int_equal(sent[i].data[2], (uint8_t)want[i][0]);
        assert_int_equal(sent[i].data[3], IN);
        assert_memory_equal(sent[i].data + TERN_REMOTE_HEADER, want[i] + 1, 2);
    }
    const tern_remote_counters *c = tern_remote_stats();
    assert_int_equal(c->tx_frames, 5);
    assert_int_equal(c->tx_queued, 5);
    assert_int_equal(c->queue_depth, 0);
    assert_true(c->tx_busy > 0);
    assert_int_equal(tern_heap_free_bytes(), heap_free_at_start); /* every queued copy freed */
}

/* The bus queue takes at most TERN_REMOTE_QUEUE_MAX messages: the rest of
 * the pool stays for local messages. */
static void test_bus_queue_is_bounded(void **st)
{
    (void)st;
    start(0);
    unsigned ok = 0;
    for (unsigned i = 0; i < TERN_REMOTE_QUEUE_MAX + 3; i++)
        ok += tern_send(T_LOW, IN, "q", 1, 0) == TERN_OK;
    assert_int_equal(ok, TERN_REMOTE_QUEUE_MAX);
    assert_int_equal(tern_send(T_LOW, IN, "q", 1, 0), TERN_EFULL);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_QUEUE_FULL], 4);
    assert_int_equal(tern_send(T_SINK, IN, NULL, 0, 0), TERN_OK); /* local still has room */
    room = 100;
    host_run_until(500);
    assert_int_equal(n_sent, TERN_REMOTE_QUEUE_MAX);
}

static void test_free_bus_sends_at_once_and_errors_come_back(void **st)
{
    (void)st;
    start(100);
    host_run_until(20);
    /* From an interrupt handler, as a driver would. */
    char big[64] = {0};
    assert_int_equal(tern_send(T_LOW, IN, "hi", 2, 0), TERN_OK);
    assert_int_equal(n_sent, 1);
    assert_int_equal(sent[0].data[1], TERN_NO_TASK);
    /* The remote TCB knows the ports: refused at once, by name, counted. */
    assert_int_equal(tern_send(T_LOW, TERN_PORT_APP(1), "x", 1, 0), TERN_ENOPORT);
    assert_int_equal(tern_stats()->dropped[TERN_DROP_NO_PORT], 1);
    assert_int_equal(tern_send(T_HIGH, TERN_PORT_APP(1), "x", 1, 0), TERN_OK);
    assert_int_equal(tern_send(12, IN, "x", 1, 0), TERN_ENOTASK);
    assert_int_equal(tern_stats()->dropped[TERN_DROP_NO_TASK], 1);
    /* Longer than a frame holds. */
    assert_int_equal(tern_send(T_LOW, IN, big, 59, 0), TERN_ERANGE);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_TOO_LONG], 1);
    assert_int_equal(tern_send(T_LOW, IN, big, 58, 0), TERN_OK);
    /* Raw, to a module: the receiver will judge the port. */
    assert_int_equal(tern_remote_send_to(1, T_SRC, T_LOW, TERN_PORT_APP(7), "r", 1, 0), TERN_OK);
    assert_int_equal(tern_remote_send_to(0, T_SRC, T_LOW, IN, "r", 1, 0), TERN_EINVAL);
    assert_int_equal(tern_send(T_LOW, IN, NULL, 3, 0), TERN_EINVAL);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_INVALID], 2);
    assert_int_equal(n_sent, 4);
    assert_int_equal(sent[3].data[3], TERN_PORT_APP(7));
}

/* ---- for the migrator: freeze, move, unfreeze ---- */

static const tern_bus three = {.send = fake_send, .poll = fake_poll, .address = 0, .count = 3,
                               .frame_max = 64, .retry_ticks = 50};

/* While `high` is frozen its messages wait in the bus queue, in order,
 * and others pass them; moved to processor 2 and unfrozen, they go there;
 * moved here instead, they are delivered here. */
static void test_frozen_task_messages_wait_and_follow_it(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    n_sent = 0;
    room = 100;
    log_[0] = '\0';
    assert_int_equal(tern_remote_attach(&three), TERN_OK);
    assert_int_equal(tern_app_start(&app, NULL), TERN_OK);
    host_run_until(10);
    heap_free_at_start = tern_heap_free_bytes();
    assert_int_equal(tern_remote_freeze(T_HIGH), TERN_OK);
    assert_int_equal(tern_send(T_HIGH, IN, "h1", 2, 0), TERN_OK);
    assert_int_equal(tern_send(T_LOW, IN, "l1", 2, 0), TERN_OK);
    assert_int_equal(tern_remote_send_to(1, T_SRC, T_HIGH, IN, "h2", 2, 5), TERN_OK);
    host_run_until(500);
    assert_int_equal(n_sent, 1); /* only low's */
    assert_int_equal(sent[0].data[2], T_LOW);
    assert_int_equal(tern_remote_stats()->queue_depth, 2);
    assert_int_equal(tern_remote_set_module(T_HIGH, 2), TERN_OK);
    host_run_until(600);
    assert_int_equal(n_sent, 1); /* moved, still frozen */
    assert_int_equal(tern_remote_unfreeze(T_HIGH), TERN_OK);
    assert_int_equal(n_sent, 3);
    assert_int_equal(sent[1].dst, 2);
    assert_memory_equal(sent[1].data + TERN_REMOTE_HEADER, "h1", 2);
    assert_int_equal(sent[2].dst, 2);
    assert_memory_equal(sent[2].data + TERN_REMOTE_HEADER, "h2", 2);

    /* Frozen again, and it comes here: what waits is delivered here, in
     * order, once unfrozen (`sink` stands for a task the migrator attached
     * here; `high` was not instantiated here: refused, counted). */
    assert_int_equal(tern_remote_freeze(T_HIGH), TERN_OK);
    assert_int_equal(tern_remote_freeze(T_SINK), TERN_OK);
    assert_int_equal(tern_send(T_HIGH, IN, "h3", 2, 0), TERN_OK);
    assert_int_equal(tern_remote_send_to(1, T_SRC, T_SINK, IN, "s1", 2, 3), TERN_OK);
    assert_int_equal(tern_remote_send_to(2, T_SRC, T_SINK, IN, "s2", 2, 3), TERN_OK);
    assert_int_equal(tern_remote_set_module(T_HIGH, TERN_REMOTE_NONE), TERN_OK);
    assert_int_equal(tern_remote_set_module(T_SINK, TERN_REMOTE_NONE), TERN_OK);
    host_run_until(700);
    assert_int_equal(n_sent, 3);
    assert_string_equal(log_, "");
    assert_int_equal(tern_remote_unfreeze(T_SINK), TERN_OK);
    assert_int_equal(tern_remote_unfreeze(T_HIGH), TERN_OK);
    host_run_until(800);
    assert_string_equal(log_, "sink<src:s1 sink<src:s2 ");
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_NO_TASK], 1);
    assert_int_equal(tern_remote_stats()->queue_depth, 0);
    assert_int_equal(n_sent, 3);
    assert_int_equal(tern_heap_free_bytes(), heap_free_at_start);
}

/* ---- reception ---- */

/* The driver's side: frames arrive in order; the first one not taken
 * stays on the bus, offered again by poll(), and holds the others back. */
#define RX_FRAMES 64
static struct {
    uint8_t len, data[TERN_REMOTE_FRAME_MAX];
} rx[RX_FRAMES];
static void offer(void)
{
    while (rx_taken < rx_arrived &&
           tern_remote_receive(1, rx[rx_taken].data, rx[rx_taken].len))
        rx_taken++;
}

static void rx_irq(void *arg)
{
    (void)arg;
    rx_arrived++;
    offer();
}

static void inject_frame(uint64_t at, char kind, uint8_t src, uint8_t dst, uint8_t port,
                         const char *payload)
{
    assert_true(rx_made < RX_FRAMES);
    uint8_t *f = rx[rx_made].data;
    f[0] = (uint8_t)kind;
    f[1] = src;
    f[2] = dst;
    f[3] = port;
    uint8_t len = (uint8_t)(TERN_REMOTE_HEADER + strlen(payload));
    memcpy(f + TERN_REMOTE_HEADER, payload, strlen(payload));
    uint16_t crc = tern_remote_frame_crc(f, len);
    f[TERN_REMOTE_CRC_AT] = (uint8_t)crc;
    f[TERN_REMOTE_CRC_AT + 1] = (uint8_t)(crc >> 8);
    rx[rx_made].len = len;
    rx_made++;
    host_inject(at, rx_irq, NULL);
}

/* ---- a processor without power ---- */

/* Processor 1 NACKs (its driver says so): the frame is counted, peer_down;
 * what waits for it goes, counted, and the queue stops waiting behind it
 * (processor 2's message leaves); new sends to it are refused by name;
 * a NACK of another's frame (time sync's) marks it down without a count;
 * a frame from it brings it back. */
static void test_nacked_processor_is_down_until_it_speaks(void **st)
{
    (void)st;
    host_reset(0);
    tern_init();
    n_sent = 0;
    room = 1;
    log_[0] = '\0';
    rx_made = rx_arrived = rx_taken = 0;
    assert_int_equal(tern_remote_attach(&three), TERN_OK);
    assert_int_equal(tern_app_start(&app, NULL), TERN_OK);
    host_run_until(10);
    heap_free_at_start = tern_heap_free_bytes();
    const tern_remote_counters *c = tern_remote_stats();

    assert_int_equal(tern_send(T_LOW, IN, "l1", 2, 0), TERN_OK); /* leaves: room 1 */
    assert_int_equal(tern_send(T_LOW, IN, "l2", 2, 0), TERN_OK); /* the bus is busy: they wait */
    assert_int_equal(tern_remote_send_to(2, T_SRC, T_SINK, IN, "x1", 2, 0), TERN_OK);
    assert_int_equal(tern_send(T_MID, IN, "m1", 2, 0), TERN_OK);
    assert_int_equal(c->queue_depth, 3);
    assert_int_equal(n_sent, 1);
    assert_false(tern_remote_peer_down(1));

    tern_remote_nack(1, true); /* l1 was lost: processor 1 has no power */
    assert_true(tern_remote_peer_down(1));
    assert_false(tern_remote_peer_down(2));
    assert_int_equal(c->dropped[TERN_REMOTE_DROP_PEER_DOWN], 1 + 2); /* l1, then l2 and m1 */
    assert_int_equal(c->queue_depth, 1);                           /* x1, for processor 2 */
    room = 1;
    host_run_until(200);
    assert_int_equal(n_sent, 2);
    assert_int_equal(sent[1].dst, 2);
    assert_memory_equal(sent[1].data + TERN_REMOTE_HEADER, "x1", 2);
    assert_int_equal(c->queue_depth, 0);

    room = 10;
    assert_int_equal(tern_send(T_HIGH, IN, "h1", 2, 0), TERN_ETIMEOUT);
    assert_int_equal(tern_remote_send_to(1, T_SRC, T_LOW, IN, "r", 1, 0), TERN_ETIMEOUT);
    assert_int_equal(c->dropped[TERN_REMOTE_DROP_PEER_DOWN], 3 + 2);
    assert_string_equal(tern_remote_drop_name(TERN_REMOTE_DROP_PEER_DOWN), "peer_down");
    assert_int_equal(n_sent, 2);
    tern_remote_nack(2, false); /* not the bus manager's frame: not counted */
    assert_true(tern_remote_peer_down(2));
    assert_int_equal(c->dropped[TERN_REMOTE_DROP_PEER_DOWN], 5);

    /* A frame from processor 1: it is up again, and takes messages. */
    inject_frame(300, 'U', T_HIGH, T_SINK, IN, "up");
    host_run_until(400);
    assert_string_equal(log_, "sink<high:up ");
    assert_false(tern_remote_peer_down(1));
    assert_int_equal(tern_send(T_LOW, IN, "l3", 2, 0), TERN_OK);
    assert_int_equal(n_sent, 3);
    assert_int_equal(sent[2].dst, 1);
    assert_int_equal(tern_heap_free_bytes(), heap_free_at_start);
}

static void test_received_message_follows_local_rules(void **st)
{
    (void)st;
    start(100);
    inject_frame(20, 'U', T_HIGH, T_SINK, IN, "yo");
    host_run_until(30);
    assert_int_equal(rx_taken, 1);
    assert_string_equal(log_, "sink<high:yo ");
    assert_int_equal(tern_remote_stats()->rx_frames, 1);

    inject_frame(40, 'U', T_HIGH, T_SINK, TERN_PORT_APP(3), "no");
    host_run_until(50);
    assert_int_equal(rx_taken, 2); /* refused for good: released, counted */
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_NO_PORT], 1);
    assert_int_equal(tern_stats()->dropped[TERN_DROP_NO_PORT], 1);

    inject_frame(60, 'U', T_HIGH, T_LOW, IN, "no"); /* low is not here: never sent back */
    host_run_until(70);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_NO_TASK], 1);
    assert_int_equal(n_sent, 0);

    inject_frame(80, 'X', T_HIGH, T_SINK, IN, "");
    inject_frame(85, 'U', 0xFD, T_SINK, IN, "");
    host_run_until(90);
    assert_int_equal(tern_remote_receive(1, rx[0].data, 2), true); /* too short */
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_BAD_FRAME], 3);
    assert_string_equal(log_, "sink<high:yo ");

    /* Damaged on the bus: a bit of the payload, of the header, of the CRC:
     * dropped by name, nothing delivered. */
    for (unsigned at = 0; at < 3; at++) {
        inject_frame(100 + 10 * at, 'U', T_HIGH, T_SINK, IN, "ok");
        rx[rx_made - 1].data[at == 0 ? TERN_REMOTE_HEADER + 1 : at == 1 ? 2 : TERN_REMOTE_CRC_AT] ^= 0x10;
    }
    host_run_until(140);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_BAD_CRC], 3);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_BAD_FRAME], 3);
    assert_string_equal(tern_remote_drop_name(TERN_REMOTE_DROP_BAD_CRC), "bad_crc");
    /* the standard CRC-16/CCITT-FALSE: its check value over "123456789" */
    const uint8_t check[] = {'1', '2', '3', '4', 0, 0, '5', '6', '7', '8', '9'};
    assert_int_equal(tern_remote_frame_crc(check, sizeof check), 0x29B1);
    assert_string_equal(log_, "sink<high:yo ");

    /* The system ports of a local task are the local kernel's: INIT,
     * FINAL, SERIALIZE, DESERIALIZE from the bus are refused (no_port);
     * a TIMEOUT (a moved task's expiry, forwarded) is delivered. */
    inject_frame(150, 'U', T_HIGH, T_SINK, TERN_PORT_INIT, "i");
    inject_frame(151, 'U', T_HIGH, T_SINK, TERN_PORT_FINAL, "");
    inject_frame(152, 'U', T_HIGH, T_SINK, TERN_PORT_SERIALIZE, "");
    inject_frame(153, 'U', T_HIGH, T_SINK, TERN_PORT_DESERIALIZE, "state");
    inject_frame(154, 'U', TERN_NO_TASK, T_SINK, TERN_PORT_TIMEOUT(1), "");
    host_run_until(170);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_NO_PORT], 1 + 4);
    assert_int_equal(tern_stats()->dropped[TERN_DROP_NO_PORT], 1 + 4);
    assert_int_equal(tern_remote_stats()->rx_frames, 2); /* "yo" and the TIMEOUT */
    assert_string_equal(log_, "sink<high:yo ");
    assert_int_equal(tern_heap_free_bytes(), heap_free_at_start);
}

/* A higher-priority handler runs while a received message for a lower
 * one arrives: it waits, exactly as a local interrupt's post would. */
static tern_status slow(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != IN)
        return TERN_OK;
    strcat(log_, "slow+ ");
    host_work(100);
    strcat(log_, "slow- ");
    return TERN_OK;
}

static void test_received_message_waits_for_higher_priority(void **st)
{
    (void)st;
    tasks[T_SINK].handler = slow; /* priority 3 */
    start(100);
    inject_post(20, T_SINK);
    inject_frame(50, 'U', T_HIGH, T_MEMBER, IN, "m"); /* member: priority 1 */
    host_run_until(300);
    tasks[T_SINK].handler = sink;
    assert_string_equal(log_, "slow+ slow- member<high:m ");
}

/* 40 frames for `member` arrive while `sink` (higher) works: the message
 * pool fills, the frame that finds no room stays on the bus, and once the
 * pool drains the idle loop's poll takes it and the rest: all 40 arrive,
 * once each, in order. */
static void test_no_room_keeps_the_frame_on_the_bus(void **st)
{
    (void)st;
    tasks[T_SINK].handler = slow;
    start(100);
    inject_post(20, T_SINK);
    char seq[40][3];
    for (unsigned i = 0; i < 40; i++) {
        snprintf(seq[i], sizeof seq[i], "%02u", i);
        inject_frame(30 + i, 'U', T_HIGH, T_MEMBER, IN, seq[i]);
    }
    host_run_until(1000);
    tasks[T_SINK].handler = sink;
    assert_int_equal(rx_taken, 40);
    char want[40 * 17 + 16] = "slow+ slow- ";
    for (unsigned i = 0; i < 40; i++) {
        char one[24];
        snprintf(one, sizeof one, "member<high:%02u ", i);
        strcat(want, one);
    }
    assert_string_equal(log_, want);
    const tern_remote_counters *c = tern_remote_stats();
    assert_true(c->rx_deferred > 0);
    assert_int_equal(c->rx_frames, 40);
    assert_true(polls > 0);
    assert_int_equal(tern_heap_free_bytes(), heap_free_at_start);
}

static void test_multicast_crosses_the_bus_once(void **st)
{
    (void)st;
    start(100);
    tasks[T_SRC].handler = post_all;
    const uint8_t outs[] = {3};
    post_from_src(outs, 1, 20);
    host_run_until(100);
    tasks[T_SRC].handler = sink;
    assert_int_equal(n_sent, 1);
    assert_int_equal(sent[0].dst, TERN_BUS_ALL);
    assert_int_equal(sent[0].data[0], 'M');
    assert_int_equal(sent[0].data[2], 4); /* the group id */
    assert_string_equal(log_, "member<src:a! "); /* the one local member, once */
    assert_int_equal(tern_remote_stats()->tx_mcast, 1);

    /* From the other module: only this module's member, once. */
    log_[0] = '\0';
    inject_frame(200, 'M', T_HIGH, 4, 0, "zz");
    host_run_until(300);
    assert_string_equal(log_, "member<high:zz ");
    assert_int_equal(tern_remote_stats()->rx_mcast, 1);
    inject_frame(400, 'M', T_HIGH, 9, 0, "zz"); /* no such group */
    host_run_until(500);
    assert_int_equal(tern_remote_stats()->dropped[TERN_REMOTE_DROP_BAD_FRAME], 1);
    assert_int_equal(tern_heap_free_bytes(), heap_free_at_start);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation_names_task_and_module),
        cmocka_unit_test(test_single_processor_flags),
        cmocka_unit_test(test_hardware_pins_a_task_to_a_module_that_has_it),
        cmocka_unit_test(test_a_processor_refuses_an_entry_its_board_lacks),
        cmocka_unit_test(test_remote_tcbs_for_the_other_module_only),
        cmocka_unit_test(test_bus_queue_orders_by_destination_priority),
        cmocka_unit_test(test_bus_queue_is_bounded),
        cmocka_unit_test(test_free_bus_sends_at_once_and_errors_come_back),
        cmocka_unit_test(test_frozen_task_messages_wait_and_follow_it),
        cmocka_unit_test(test_nacked_processor_is_down_until_it_speaks),
        cmocka_unit_test(test_received_message_follows_local_rules),
        cmocka_unit_test(test_received_message_waits_for_higher_priority),
        cmocka_unit_test(test_no_room_keeps_the_frame_on_the_bus),
        cmocka_unit_test(test_multicast_crosses_the_bus_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
