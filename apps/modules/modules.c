/* One application over the two processors of a node (seed 002's
 * multi-processor CoMOS; tern/remote.h, docs/multiprocessor.md): the same
 * description is built into both images, each processor instantiates its
 * own tasks and reaches the other's through the bus manager.
 *
 * Module 1 (bus address 0) runs `driver`, `member_a` and `count_a`;
 * module 2 (address 1) runs `busy`, `low`, `mid`, `high`, `member_b1`,
 * `member_b2`, `count_b` and `driver_b`. What `driver` does, in phases:
 *
 *   R  posts to `busy` (priority 7, 20 ms of work) and then to `low`,
 *      `mid` and `high` (1, 3, 5). `busy` posts the same three locally
 *      (tag L) when it starts: every L and R message waits at module 2
 *      while `busy` runs, and then runs by priority, equal priorities in
 *      the order posted, remote and local alike:
 *        high L, high R, mid L, mid R, low L, low R
 *   M  posts to group 0 three times ({member_a, member_b1, member_b2});
 *      every member prints each multicast once.
 *   E  sends to a port that `low` lacks, twice: through the remote TCB
 *      (refused at once: TERN_ENOPORT, printed), and raw to module 2 with
 *      tern_remote_send_to (refused there, counted as no_port).
 *   Q  40 ms later, with module 2 idle, posts to `low`, `mid` and `high` in one go: the
 *      first takes the free bus, the other two wait in the bus queue,
 *      highest destination first: low Q, high Q, mid Q.
 *   P  PINGS round trips to `echo` on module 2, one at a time, timed on
 *      module 1's clock (simulated microseconds): min, max and mean.
 *   S  streams STREAM_N numbered messages to `count_b`, in bursts of
 *      BURST, while `driver_b` streams as many to `count_a`: each counter
 *      checks that every number comes once and in order.
 *
 * Each processor prints one summary line of its counters (the bus
 * manager's and the kernel's) and exits 0 once everything it expects has
 * come and everything it sent has left; a check that fails prints "bad"
 * and exits 4; WATCHDOG_MS without finishing exits 5. */
#include "procbus.h"
#include "procbus_remote.h"
#include "tern/port.h"
#include "tern/tern.h"

#define STREAM_N 200
#define BURST 4
#define BURST_MS 4
#define WATCHDOG_MS 3000
#define PINGS 10

enum {
    T_DRIVER, T_MEMBER_A, T_COUNT_A, /* module 1 */
    T_BUSY, T_LOW, T_MID, T_HIGH, T_MEMBER_B1, T_MEMBER_B2, T_COUNT_B, T_DRIVER_B, T_ECHO, /* module 2 */
    N_TASKS
};
_Static_assert(N_TASKS <= TERN_MAX_TASKS, "CMakeLists.txt sets TERN_MAX_TASKS");

#define PORT_IN TERN_PORT_APP(0)
enum { OUT_BUSY, OUT_LOW, OUT_MID, OUT_HIGH, OUT_GROUP, OUT_STREAM, OUT_PING };
enum { B_OUT_LOW, B_OUT_MID, B_OUT_HIGH };
#define TIMER_PHASE 0 /* the next phase, or the next burst of the stream */
#define TIMER_CHECK 1 /* finished? and the watchdog */

/* Every message of this app: a tag and a number. */
typedef struct {
    char tag;
    uint8_t seq_lo, seq_hi;
} note;

static struct {
    uint8_t phase;
    uint16_t sent, stream_retries;
    uint16_t expected_next; /* this module's counter: the next number due */
    uint16_t ran;           /* module 2: handlers of low/mid/high so far */
    uint8_t mcasts;         /* multicasts seen by this module's members */
    uint16_t checks;        /* TIMER_CHECK periods so far */
    uint8_t pongs;          /* module 1: round trips done */
    tern_time ping_sent;
    uint32_t rtt_min, rtt_max, rtt_sum; /* microseconds */
} me;

static uint32_t ms(uint32_t n) { return (uint32_t)((uint64_t)tern_clock_hz() * n / 1000u); }

static note make(char tag, uint16_t seq) { return (note){tag, (uint8_t)seq, (uint8_t)(seq >> 8)}; }

static uint16_t seq_of(const note *n) { return (uint16_t)(n->seq_lo | n->seq_hi << 8); }

static bool on_module_1(void) { return tern_remote_address() == 0; }

static _Noreturn void finish(int status)
{
    const tern_remote_counters *r = tern_remote_stats();
    const tern_counters *k = tern_stats();
    tern_printf("modules %u: summary tx_frames=%lu tx_mcast=%lu tx_queued=%lu tx_busy=%lu "
                "rx_frames=%lu rx_mcast=%lu rx_deferred=%lu max_bus_queue=%u",
                tern_remote_address(), (unsigned long)r->tx_frames, (unsigned long)r->tx_mcast,
                (unsigned long)r->tx_queued, (unsigned long)r->tx_busy,
                (unsigned long)r->rx_frames, (unsigned long)r->rx_mcast,
                (unsigned long)r->rx_deferred, r->max_queue_depth);
    for (uint8_t i = 0; i < TERN_REMOTE_DROP_REASONS; i++)
        tern_printf(" %s=%lu", tern_remote_drop_name((tern_remote_drop_reason)i),
                    (unsigned long)r->dropped[i]);
    tern_printf(" posted=%lu dispatched=%lu kernel_no_port=%lu kernel_pool_full=%lu "
                "stream_retries=%u\n",
                (unsigned long)k->posted, (unsigned long)k->dispatched,
                (unsigned long)k->dropped[TERN_DROP_NO_PORT],
                (unsigned long)k->dropped[TERN_DROP_POOL_FULL], me.stream_retries);
    port_exit(status);
}

static _Noreturn void bad(const char *what, unsigned a, unsigned b)
{
    tern_printf("modules %u: bad %s %u %u\n", tern_remote_address(), what, a, b);
    finish(4);
}

/* A heap payload: ownership travels with it, to a local task or onto the
 * bus (which frees it once copied), so the sender keeps no buffer. */
static tern_status post(uint8_t out, char tag, uint16_t seq)
{
    note *n = tern_alloc(sizeof *n);
    if (!n)
        return TERN_ENOMEM;
    *n = make(tag, seq);
    tern_status st = tern_post(out, n, sizeof *n, TERN_MSG_HEAP);
    if (st != TERN_OK)
        tern_free(n);
    return st;
}

/* Phase S: one burst of the stream to the other module's counter. A send
 * refused for want of room is retried with the next burst, same number. */
static void stream_burst(uint8_t out)
{
    for (uint8_t i = 0; i < BURST && me.sent < STREAM_N; i++) {
        tern_status st = post(out, 'S', me.sent);
        if (st == TERN_EFULL || st == TERN_ENOMEM) {
            me.stream_retries++;
            break;
        }
        if (st != TERN_OK)
            bad("stream post", me.sent, st);
        me.sent++;
    }
    if (me.sent < STREAM_N)
        tern_timer_start(TIMER_PHASE, ms(BURST_MS), 0);
}

static void ping(void);

static void phase(void)
{
    switch (me.phase++) {
    case 0: /* R, M, E */
        if (post(OUT_BUSY, 'R', 0) != TERN_OK || post(OUT_LOW, 'R', 1) != TERN_OK ||
            post(OUT_MID, 'R', 3) != TERN_OK || post(OUT_HIGH, 'R', 5) != TERN_OK)
            bad("post", 0, 0);
        for (uint8_t k = 1; k <= 3; k++)
            if (post(OUT_GROUP, 'M', k) != TERN_OK)
                bad("multicast", k, 0);
        {
            note n = make('E', 13);
            tern_status st = tern_send(T_LOW, TERN_PORT_APP(5), &n, sizeof n, 0);
            tern_printf("modules 0: send to 'low' port %u: %s\n", TERN_PORT_APP(5),
                        tern_status_name(st));
            if (st != TERN_ENOPORT)
                bad("missing port", st, 0);
            st = tern_remote_send_to(1, T_DRIVER, T_LOW, TERN_PORT_APP(5), &n, sizeof n, 1);
            if (st != TERN_OK)
                bad("send_to", st, 0);
        }
        tern_timer_start(TIMER_PHASE, ms(40), 0);
        break;
    case 1: /* Q */
        if (post(OUT_LOW, 'Q', 1) != TERN_OK || post(OUT_MID, 'Q', 3) != TERN_OK ||
            post(OUT_HIGH, 'Q', 5) != TERN_OK)
            bad("post", 1, 0);
        tern_timer_start(TIMER_PHASE, ms(10), 0);
        break;
    case 2: /* P: the next ping goes when its pong is back (pong()) */
        me.rtt_min = UINT32_MAX;
        ping();
        break;
    default: /* S */
        stream_burst(OUT_STREAM);
    }
}

/* Phase P: round trips to `echo` on module 2, timed on this module's clock. */
static void ping(void)
{
    me.ping_sent = tern_now();
    if (post(OUT_PING, 'P', me.pongs) != TERN_OK)
        bad("ping", me.pongs, 0);
}

static void pong(const tern_msg *m)
{
    const note *n = m->payload;
    uint32_t us = (uint32_t)((tern_now() - me.ping_sent) * 1000000u / tern_clock_hz());
    if (m->len != sizeof *n || n->tag != 'P' || seq_of(n) != me.pongs)
        bad("pong", seq_of(n), me.pongs);
    me.rtt_min = us < me.rtt_min ? us : me.rtt_min;
    me.rtt_max = us > me.rtt_max ? us : me.rtt_max;
    me.rtt_sum += us;
    if (++me.pongs < PINGS) {
        ping();
        return;
    }
    tern_printf("modules 0: round trip to module 2, %u pings: min %lu max %lu mean %lu us\n",
                PINGS, (unsigned long)me.rtt_min, (unsigned long)me.rtt_max,
                (unsigned long)(me.rtt_sum / PINGS));
    tern_timer_start(TIMER_PHASE, ms(10), 0); /* then S */
}

/* module 2: every ping back to its sender's port, same payload. */
static tern_status echo(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_IN)
        return TERN_OK;
    const note *n = m->payload;
    if (post(0, n->tag, seq_of(n)) != TERN_OK)
        bad("echo", seq_of(n), 0);
    return TERN_OK;
}

/* Everything this module expects has come, and all it sent has left. */
static bool finished(void)
{
    const tern_remote_counters *r = tern_remote_stats();
    bool received = me.expected_next == STREAM_N &&
                    (on_module_1() ? me.mcasts == 3 && me.pongs == PINGS : me.mcasts == 6 && me.ran == 9);
    return received && me.sent == STREAM_N && r->queue_depth == 0 && procbus_tx_free();
}

static void check(void)
{
    if (finished())
        finish(0);
    if (++me.checks * 10u >= WATCHDOG_MS) {
        tern_printf("modules %u: unfinished after %u ms: stream sent %u received %u, "
                    "multicasts %u, ran %u\n",
                    tern_remote_address(), WATCHDOG_MS, me.sent, me.expected_next, me.mcasts,
                    me.ran);
        finish(5);
    }
}

static tern_status driver(void *state, tern_msg *m)
{
    (void)state;
    bool b = tern_self() == T_DRIVER_B;
    if (m->port == TERN_PORT_INIT) {
        /* Module 2 (7.4 MHz, printing its first line) is up by 50 ms. */
        tern_timer_start(TIMER_PHASE, ms(b ? 150 : 50), 0);
        tern_timer_start(TIMER_CHECK, ms(10), ms(10));
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_PHASE)) {
        if (b)
            stream_burst(0);
        else
            phase();
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_CHECK)) {
        check();
    } else if (m->port == PORT_IN) {
        pong(m);
    }
    return TERN_OK;
}

/* The stream's receiving end: every number once, in order. */
static tern_status counter(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_IN)
        return TERN_OK;
    const note *n = m->payload;
    if (m->len != sizeof *n || n->tag != 'S' || seq_of(n) != me.expected_next)
        bad("stream", seq_of(n), me.expected_next);
    me.expected_next++;
    if (me.expected_next == STREAM_N)
        tern_printf("modules %u: %s: %u in order\n", tern_remote_address(),
                    tern_task_name(tern_self()), STREAM_N);
    return TERN_OK;
}

static tern_status member(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_IN)
        return TERN_OK;
    const note *n = m->payload;
    tern_printf("modules %u: %s got multicast %u from '%s'\n", tern_remote_address(),
                tern_task_name(tern_self()), seq_of(n), tern_task_name(m->src));
    me.mcasts++;
    return TERN_OK;
}

/* low, mid, high: print what ran, in order. */
static tern_status runner(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_IN)
        return TERN_OK;
    const note *n = m->payload;
    /* The line whole: under the stack model a message that arrives while
     * it prints starts a higher handler at once, whose line would land in
     * the middle of this one (the order of the starts is what is checked). */
    tern_irq_state s = port_irq_save();
    tern_printf("modules 1: ran %s %c\n", tern_task_name(tern_self()), n->tag);
    me.ran++; /* inside too: a handler preempting the increment would lose one */
    port_irq_restore(s);
    return TERN_OK;
}

static tern_status busy(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_IN)
        return TERN_OK;
    /* Before printing, which takes long enough for frames to arrive; all
     * three at once: the R frames come every TDMA slot (300 us), and on the
     * 7.37 MHz ATmega128 a frame's interrupt (its delivery at the same
     * priority) could otherwise come between two of these posts. */
    tern_irq_state s = port_irq_save();
    bool posted = post(B_OUT_LOW, 'L', 1) == TERN_OK && post(B_OUT_MID, 'L', 3) == TERN_OK &&
                  post(B_OUT_HIGH, 'L', 5) == TERN_OK;
    port_irq_restore(s);
    if (!posted)
        bad("local post", 0, 0);
    tern_printf("modules 1: busy starts\n");
    port_work((uint32_t)tern_ticks_to_cycles(ms(20))); /* the frames from module 1 arrive meanwhile */
    tern_printf("modules 1: busy ends\n");
    return TERN_OK;
}

#define M1 TERN_MODULE(0)
#define M2 TERN_MODULE(1)
#define IN1 .n_in_ports = 1

static const tern_route driver_routes[] = {
    [OUT_BUSY] = TERN_TO_TASK(T_BUSY, PORT_IN),     [OUT_LOW] = TERN_TO_TASK(T_LOW, PORT_IN),
    [OUT_MID] = TERN_TO_TASK(T_MID, PORT_IN),       [OUT_HIGH] = TERN_TO_TASK(T_HIGH, PORT_IN),
    [OUT_GROUP] = TERN_TO_GROUP(0),                 [OUT_STREAM] = TERN_TO_TASK(T_COUNT_B, PORT_IN),
    [OUT_PING] = TERN_TO_TASK(T_ECHO, PORT_IN),
};
static const tern_route echo_routes[] = {TERN_TO_TASK(T_DRIVER, PORT_IN)};
static const tern_route busy_routes[] = {
    [B_OUT_LOW] = TERN_TO_TASK(T_LOW, PORT_IN),
    [B_OUT_MID] = TERN_TO_TASK(T_MID, PORT_IN),
    [B_OUT_HIGH] = TERN_TO_TASK(T_HIGH, PORT_IN),
};
static const tern_route driver_b_routes[] = {TERN_TO_TASK(T_COUNT_A, PORT_IN)};
static const tern_endpoint group0[] = {
    {T_MEMBER_A, PORT_IN}, {T_MEMBER_B1, PORT_IN}, {T_MEMBER_B2, PORT_IN}};
static const tern_group_desc groups[] = {{.id = 0, .n_members = 3, .members = group0}};

static const tern_task_desc tasks[] = {
    {.name = "driver", .id = T_DRIVER, .priority = 2, .handler = driver, .module = M1, IN1,
     .n_out_ports = 7, .routes = driver_routes},
    {.name = "member_a", .id = T_MEMBER_A, .priority = 3, .handler = member, .module = M1, IN1,
     .flags = TERN_TASK_MOVABLE},
    {.name = "count_a", .id = T_COUNT_A, .priority = 4, .handler = counter, .module = M1, IN1},
    {.name = "busy", .id = T_BUSY, .priority = 7, .handler = busy, .module = M2, IN1,
     .n_out_ports = 3, .routes = busy_routes},
    {.name = "low", .id = T_LOW, .priority = 1, .handler = runner, .module = M2, IN1},
    {.name = "mid", .id = T_MID, .priority = 3, .handler = runner, .module = M2, IN1},
    {.name = "high", .id = T_HIGH, .priority = 5, .handler = runner, .module = M2, IN1},
    {.name = "member_b1", .id = T_MEMBER_B1, .priority = 2, .handler = member, .module = M2,
     IN1, .flags = TERN_TASK_MOVABLE},
    {.name = "member_b2", .id = T_MEMBER_B2, .priority = 6, .handler = member, .module = M2,
     IN1},
    {.name = "count_b", .id = T_COUNT_B, .priority = 4, .handler = counter, .module = M2, IN1},
    {.name = "driver_b", .id = T_DRIVER_B, .priority = 2, .handler = driver, .module = M2,
     .n_out_ports = 1, .routes = driver_b_routes},
    {.name = "echo", .id = T_ECHO, .priority = 6, .handler = echo, .module = M2, IN1,
     .n_out_ports = 1, .routes = echo_routes},
};
static const tern_app_desc app = {.name = "modules", .tasks = tasks, .n_tasks = N_TASKS,
                                  .groups = groups, .n_groups = 1, .n_modules = 2};

int main(void)
{
    tern_init();
    tern_status st = procbus_remote_attach();
    if (st != TERN_OK) {
        tern_printf("modules: no processor bus: %s\n", tern_status_name(st));
        return 2;
    }
    tern_printf("modules %u: of %u processors, board %s, model %s, %lu Hz\n",
                tern_remote_address(), procbus_count(), TERN_BOARD_NAME, TERN_MODEL_NAME,
                (unsigned long)tern_clock_hz());
    tern_app_run(&app);
}
