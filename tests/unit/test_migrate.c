/* The task migrator (kernel/migrate.c) on N simulated processors in one
 * process. Each processor has a migrator engine and a small fake kernel
 * (the migrating task's queue, senders held by freeze, a routing entry, a
 * task timer); the processors talk over FIFO links, one per ordered pair,
 * which is what the processor bus guarantees. A seeded scheduler picks the
 * next event among all that are possible (deliver the head of a link, a
 * sender posts, the task handles a message, SERIALIZE returns, the clock
 * advances), so every seed tries another interleaving. After every event:
 * the task is attached on at most one processor. At the end: every sender's
 * messages were handled once each, in order (the task checks the sequence
 * numbers itself, and they travel inside its serialized state). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tern/migrate.h"

#define MAXP 5
#define T 3      /* the migrating task */
#define PINNED 5 /* a task bound to its processor's hardware */
#define SENDERS 3
#define DATA 0xD0 /* first byte of an application message on a link */

typedef struct wire {
    struct wire *next;
    uint16_t len;
    uint8_t b[];
} wire;

typedef struct {
    wire *head, *tail;
} link;

typedef struct {
    uint8_t src, port;
    uint32_t seq;
} amsg;

#define QCAP 256
typedef struct {
    amsg m[QCAP];
    unsigned head, n;
} queue;

/* The migrating task's own state: what SERIALIZE writes and DESERIALIZE
 * reads. It checks sequence numbers, so a lost, duplicated or reordered
 * message is caught by the task itself, wherever it runs. */
typedef struct {
    uint32_t last[SENDERS];
    uint32_t handled;
    uint32_t magic;
} task_state;

typedef struct {
    tern_mig mig;
    uint8_t id;
    bool has_task, frozen, killed;
    uint8_t route;
    queue q;    /* the task's queue, when it is here */
    queue held; /* messages to the task from this processor's senders, held by freeze */
    task_state ts;
    bool timer_on;
    tern_time deadline, period;
    bool serialize_pending;
    bool fail_attach; /* this processor's DESERIALIZE fails */
    bool dead;        /* stopped: takes no step, what reaches it is lost */
    int outcome;      /* -1 none, else tern_mig_outcome */
    tern_status why;
} proc;

static struct {
    unsigned n;
    proc p[MAXP];
    link l[MAXP][MAXP];
    tern_time now;
    uint64_t rng;
    uint32_t sent[SENDERS], budget;
    uint8_t sender_at[SENDERS];
    unsigned timeouts;
    uint8_t timeout_where;
    tern_time timeout_at;
    unsigned dropped; /* held or queued messages dropped because the task was killed */
    uint32_t handled_before, in_image; /* at detach */
    unsigned refusals;                 /* REFUSE outcomes seen by requesters */
    bool fail_serialize;
    uint16_t mtu; /* 0, or a bus frame's payload: STATE goes in fragments */
    uint16_t pad; /* bytes of task state beyond task_state */
    bool fuzz;    /* attach only reads the image, then refuses it */
    bool dead;    /* a processor has died */
    unsigned attach_calls;
} w;

/* tern-sim's processor bus as kernel/remote.c frames it: 64-byte frames, 6 of header (CRC included). */
#define BUS_MTU 58

static uint64_t rnd(void)
{
    uint64_t z = (w.rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void qpush(queue *q, amsg m)
{
    assert_true(q->n < QCAP);
    q->m[(q->head + q->n++) % QCAP] = m;
}

static amsg qpop(queue *q)
{
    amsg m = q->m[q->head];
    q->head = (q->head + 1) % QCAP;
    q->n--;
    return m;
}

static void link_put(uint8_t from, uint8_t to, const uint8_t *b, uint16_t len)
{
    wire *x = malloc(sizeof *x + len);
    assert_non_null(x);
    x->next = NULL;
    x->len = len;
    memcpy(x->b, b, len);
    link *l = &w.l[from][to];
    if (l->tail)
        l->tail->next = x;
    else
        l->head = x;
    l->tail = x;
}

/* --- the fake kernel: where a message to the task goes ------------------------------ */

/* A message to the task arrives at (or is posted on) processor p. */
static void arrive(proc *p, amsg m)
{
    /* The protocol's promise: a message only ever reaches the processor
     * that holds the task (held ones wait at senders until routes change). */
    assert_true(p->has_task);
    qpush(&p->q, m);
}

/* Post from processor p through its routing entry (the kernel's post). */
static void post(proc *p, amsg m)
{
    if (p->frozen) {
        qpush(&p->held, m);
        return;
    }
    assert_int_not_equal(p->route, TERN_MIG_NOWHERE);
    if (p->route == p->id) {
        arrive(p, m);
        return;
    }
    uint8_t b[7] = {DATA, m.src, m.port, (uint8_t)m.seq, (uint8_t)(m.seq >> 8),
                    (uint8_t)(m.seq >> 16), (uint8_t)(m.seq >> 24)};
    link_put(p->id, p->route, b, sizeof b);
}

static tern_status op_send(void *ctx, uint8_t module, const uint8_t *b, uint16_t len)
{
    proc *p = ctx;
    assert_true(module < w.n && module != p->id);
    assert_true(!w.mtu || len <= w.mtu);
    link_put(p->id, module, b, len);
    return TERN_OK;
}

static tern_status op_multicast(void *ctx, const uint8_t *b, uint16_t len)
{
    proc *p = ctx;
    assert_true(!w.mtu || len <= w.mtu);
    for (uint8_t j = 0; j < w.n; j++)
        if (j != p->id || w.mtu) /* a bus multicast comes back to its sender too */
            link_put(p->id, j, b, len);
    return TERN_OK;
}

static uint8_t op_locate(void *ctx, tern_task_id t)
{
    proc *p = ctx;
    if (t == PINNED)
        return 0;
    return t == T ? p->route : TERN_MIG_NOWHERE;
}

static bool op_movable(void *ctx, tern_task_id t)
{
    (void)ctx;
    return t == T;
}

static const char *op_name(void *ctx, tern_task_id t)
{
    (void)ctx;
    return t == T ? "filter" : t == PINNED ? "radio" : NULL;
}

static tern_time op_now(void *ctx)
{
    (void)ctx;
    return w.now;
}

static void op_freeze(void *ctx, tern_task_id t)
{
    proc *p = ctx;
    if (t != T)
        return; /* the other migrations of test_no_slot_declines: no senders */
    assert_false(p->frozen);
    p->frozen = true;
}

static void op_unfreeze(void *ctx, tern_task_id t)
{
    proc *p = ctx;
    assert_int_equal(t, T);
    assert_true(p->frozen);
    p->frozen = false;
    while (p->held.n)
        post(p, qpop(&p->held));
}

static void op_route(void *ctx, tern_task_id t, uint8_t module)
{
    proc *p = ctx;
    assert_int_equal(t, T);
    p->route = module;
}

static tern_status op_serialize(void *ctx, tern_task_id t)
{
    proc *p = ctx;
    assert_int_equal(t, T);
    assert_true(p->has_task);
    p->serialize_pending = true; /* the SERIALIZE handler runs later, as a message */
    return TERN_OK;
}

static tern_status op_detach(void *ctx, tern_task_id t, tern_mig_image *img, tern_mig_writer *wr)
{
    proc *p = ctx;
    assert_int_equal(t, T);
    assert_true(p->has_task && p->frozen);
    for (unsigned i = 0; i < p->q.n; i++) {
        amsg m = p->q.m[(p->q.head + i) % QCAP];
        if (tern_mig_put_msg(wr, m.src, m.port, &m.seq, sizeof m.seq) != TERN_OK)
            return TERN_ENOMEM;
    }
    img->n_routes = 2;
    img->routes[0] = (tern_route)TERN_TO_TASK(7, TERN_PORT_APP(0));
    img->routes[1] = (tern_route)TERN_TO_GROUP(2);
    if (p->timer_on) {
        img->timers[1].active = 1;
        img->timers[1].remaining = p->deadline > w.now ? p->deadline - w.now : 0;
        img->timers[1].period = p->period;
    }
    w.handled_before = p->ts.handled;
    w.in_image = p->q.n;
    p->q.n = 0;
    p->timer_on = false;
    p->has_task = false;
    memset(&p->ts, 0xEE, sizeof p->ts); /* the state is gone from here */
    return TERN_OK;
}

static tern_status op_attach(void *ctx, const tern_mig_image *img)
{
    proc *p = ctx;
    w.attach_calls++;
    if (w.fuzz) { /* read everything decode handed over, within its bounds */
        unsigned sum = 0;
        for (unsigned i = 0; i < img->state_len; i++)
            sum += img->state[i];
        uint16_t off = 0;
        tern_mig_held h;
        while (tern_mig_msg_next(img, &off, &h))
            for (unsigned i = 0; i < h.len; i++)
                sum += h.payload[i];
        assert_true(img->n_routes <= TERN_MAX_OUT_PORTS);
        return sum == 0xFFFFFFFFu ? TERN_OK : TERN_EINVAL;
    }
    assert_int_equal(img->task, T);
    assert_false(p->has_task);
    if (p->fail_attach)
        return TERN_ENOMEM;
    assert_int_equal(img->state_len, sizeof p->ts + w.pad);
    memcpy(&p->ts, img->state, sizeof p->ts);
    for (unsigned i = 0; i < w.pad; i++)
        assert_int_equal(img->state[sizeof p->ts + i], (uint8_t)(i * 7));
    assert_int_equal(p->ts.magic, 0x7E57);
    assert_int_equal(img->n_routes, 2);
    assert_int_equal(img->routes[0].task, 7);
    assert_int_equal(img->routes[1].kind, TERN_ROUTE_GROUP);
    p->has_task = true;
    p->q.n = 0;
    uint16_t off = 0;
    tern_mig_held h;
    unsigned n = 0;
    while (tern_mig_msg_next(img, &off, &h)) {
        amsg m = {h.src, h.port, 0};
        assert_int_equal(h.len, sizeof m.seq);
        memcpy(&m.seq, h.payload, sizeof m.seq);
        qpush(&p->q, m);
        n++;
    }
    assert_int_equal(n, img->n_msgs);
    for (unsigned k = 0; k < TERN_TIMERS_PER_TASK; k++)
        for (unsigned f = 0; f < img->timers[k].fired; f++)
            qpush(&p->q, (amsg){0xFF, TERN_PORT_TIMEOUT(k), 0});
    p->timer_on = img->timers[1].active;
    p->deadline = w.now + img->timers[1].remaining;
    p->period = img->timers[1].period;
    return TERN_OK;
}

static void op_killed(void *ctx, tern_task_id t, uint8_t lost)
{
    proc *p = ctx;
    assert_int_equal(t, T);
    assert_int_equal(lost, p->route == p->id ? w.in_image : 0);
    w.dropped += lost;
    assert_false(p->has_task);
    w.dropped += p->held.n;
    p->held.n = 0;
    p->frozen = false;
    p->killed = true;
    p->route = TERN_MIG_NOWHERE;
}

static void op_done(void *ctx, tern_task_id t, tern_mig_outcome o, tern_status why)
{
    proc *p = ctx;
    (void)t;
    w.refusals += o == TERN_MIG_REFUSE;
    p->outcome = (int)o;
    p->why = why;
}

static const tern_mig_ops ops = {
    .send = op_send, .multicast = op_multicast, .locate = op_locate, .movable = op_movable,
    .name = op_name, .global_now = op_now, .freeze = op_freeze, .unfreeze = op_unfreeze,
    .route = op_route, .serialize = op_serialize, .detach = op_detach, .attach = op_attach,
    .killed = op_killed, .done = op_done,
};

/* --- the world ----------------------------------------------------------------------- */

static void world_mtu(unsigned n, uint8_t src, uint64_t seed, uint32_t budget, uint16_t mtu)
{
    for (unsigned i = 0; i < MAXP; i++)
        for (unsigned j = 0; j < MAXP; j++)
            while (w.l[i][j].head) {
                wire *x = w.l[i][j].head;
                w.l[i][j].head = x->next;
                free(x);
            }
    memset(&w, 0, sizeof w);
    w.n = n;
    w.rng = seed;
    w.budget = budget;
    w.mtu = mtu;
    for (uint8_t i = 0; i < n; i++) {
        proc *p = &w.p[i];
        p->id = i;
        p->route = src;
        p->outcome = -1;
        assert_int_equal(tern_mig_init(&p->mig, &ops, p, i, (uint8_t)n, w.mtu), TERN_OK);
    }
    w.p[src].has_task = true;
    w.p[src].ts.magic = 0x7E57;
    for (unsigned s = 0; s < SENDERS; s++)
        w.sender_at[s] = (uint8_t)(s % n); /* on the source, the destination, a third */
}

/* Odd seeds run over a bus-like transport: frames of BUS_MTU bytes,
 * multicasts handed back to their sender. */
static void world(unsigned n, uint8_t src, uint64_t seed, uint32_t budget)
{
    world_mtu(n, src, seed, budget, seed & 1 ? BUS_MTU : 0);
}

static unsigned where_count(void)
{
    unsigned c = 0;
    for (unsigned i = 0; i < w.n; i++)
        c += w.p[i].has_task;
    return c;
}

static bool busy(void)
{
    for (unsigned i = 0; i < w.n; i++)
        if (!w.p[i].dead && tern_mig_busy(&w.p[i].mig, T))
            return true;
    return false;
}

/* The task handles the head of its queue. */
static void handle(proc *p)
{
    amsg m = qpop(&p->q);
    if (m.port == TERN_PORT_TIMEOUT(1)) {
        w.timeouts++;
        w.timeout_where = p->id;
        w.timeout_at = w.now;
        return;
    }
    assert_true(m.src < SENDERS);
    if (m.seq != p->ts.last[m.src] + 1)
        fail_msg("sender %u: got seq %u after %u on processor %u", m.src, m.seq,
                 p->ts.last[m.src], p->id);
    p->ts.last[m.src] = m.seq;
    p->ts.handled++;
}

static void deliver(uint8_t from, uint8_t to)
{
    link *l = &w.l[from][to];
    wire *x = l->head;
    l->head = x->next;
    if (!l->head)
        l->tail = NULL;
    proc *p = &w.p[to];
    if (p->dead) {
        /* lost with the processor (a frame already on the bus still
         * reaches the living: links from a dead one keep delivering) */
    } else if (x->b[0] == DATA) {
        amsg m = {x->b[1], x->b[2], 0};
        m.seq = (uint32_t)x->b[3] | (uint32_t)x->b[4] << 8 | (uint32_t)x->b[5] << 16 |
                (uint32_t)x->b[6] << 24;
        arrive(p, m);
    } else {
        tern_mig_receive(&p->mig, from, x->b, x->len);
    }
    free(x);
}

static void tick(void)
{
    w.now++;
    for (unsigned i = 0; i < w.n; i++) {
        proc *p = &w.p[i];
        if (p->dead)
            continue;
        tern_mig_poll(&p->mig);
        if (p->has_task && p->timer_on && p->deadline <= w.now) {
            qpush(&p->q, (amsg){0xFF, TERN_PORT_TIMEOUT(1), 0});
            if (p->period)
                p->deadline += p->period;
            else
                p->timer_on = false;
        }
    }
}

/* One event chosen by the seeded scheduler among all possible ones; false
 * when nothing but the clock could move. */
static bool step(bool clock)
{
    enum { N_EV = MAXP * MAXP + SENDERS + 2 * MAXP + 1 };
    int ev[N_EV];
    unsigned n = 0;
    for (unsigned i = 0; i < w.n; i++)
        for (unsigned j = 0; j < w.n; j++)
            if (w.l[i][j].head)
                ev[n++] = (int)(i * MAXP + j);
    for (unsigned s = 0; s < SENDERS; s++)
        if (w.sent[s] < w.budget && !w.p[w.sender_at[s]].killed && !w.p[w.sender_at[s]].dead)
            ev[n++] = 100 + (int)s;
    for (unsigned i = 0; i < w.n; i++) {
        proc *p = &w.p[i];
        if (p->dead)
            continue;
        if (p->has_task && !p->frozen && p->q.n)
            ev[n++] = 200 + (int)i;
        if (p->serialize_pending)
            ev[n++] = 300 + (int)i;
    }
    if (n == 0 && !clock)
        return false;
    if (clock)
        ev[n++] = 400;
    int e = ev[rnd() % n];
    if (e < 100) {
        deliver((uint8_t)(e / MAXP), (uint8_t)(e % MAXP));
    } else if (e < 200) {
        unsigned s = (unsigned)e - 100;
        post(&w.p[w.sender_at[s]], (amsg){(uint8_t)s, TERN_PORT_APP(0), ++w.sent[s]});
    } else if (e < 300) {
        handle(&w.p[e - 200]);
    } else if (e < 400) {
        proc *p = &w.p[e - 300];
        p->serialize_pending = false;
        static uint8_t buf[2 * TERN_MIG_IMAGE_MAX];
        memcpy(buf, &p->ts, sizeof p->ts);
        for (unsigned i = 0; i < w.pad; i++)
            buf[sizeof p->ts + i] = (uint8_t)(i * 7);
        if (w.fail_serialize)
            tern_mig_serialized(&p->mig, T, NULL, 1);
        else
            tern_mig_serialized(&p->mig, T, buf, (uint16_t)(sizeof p->ts + w.pad));
    } else {
        tick();
    }
    /* never on two processors; on exactly one unless in flight or killed */
    assert_true(where_count() <= 1);
    if (!busy() && !w.p[0].killed && !w.dead)
        assert_int_equal(where_count(), 1);
    return true;
}

static void run_to_end(void)
{
    for (unsigned guard = 0; step(false); guard++)
        assert_true(guard < 1000000);
}

static void free_links(void) { world(2, 0, 0, 0); }

static uint32_t total_handled(void)
{
    for (unsigned i = 0; i < w.n; i++)
        if (w.p[i].has_task)
            return w.p[i].ts.handled;
    return 0;
}

/* Every sender's messages handled once each, in order, on processor at. */
static void check_all_delivered(uint8_t at)
{
    assert_true(w.p[at].has_task);
    assert_int_equal(where_count(), 1);
    for (unsigned s = 0; s < SENDERS; s++) {
        assert_int_equal(w.sent[s], w.budget);
        assert_int_equal(w.p[at].ts.last[s], w.budget);
    }
    assert_int_equal(total_handled(), SENDERS * w.budget);
    for (unsigned i = 0; i < w.n; i++) {
        assert_int_equal(w.p[i].route, at);
        assert_false(w.p[i].frozen);
        assert_int_equal(w.p[i].held.n, 0);
        assert_int_equal(w.p[i].mig.stats.bad_messages, 0);
    }
}

/* --- tests --------------------------------------------------------------------------- */

/* 2..5 processors, three senders posting throughout, a request from any
 * processor at a random moment, a timer that may expire at any time:
 * 3,000 interleavings. */
static void test_moves_under_traffic(void **st)
{
    (void)st;
    unsigned timer_on_src = 0, timer_in_flight = 0;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        unsigned n = 2 + (unsigned)(seed % 4);
        world(n, 0, seed, 12);
        w.p[0].timer_on = true;
        w.p[0].deadline = 1 + rnd() % 8;
        tern_time deadline = w.p[0].deadline;
        uint8_t requester = (uint8_t)(rnd() % n);
        unsigned when = (unsigned)(rnd() % 30);
        for (unsigned i = 0; i < when; i++)
            step(true);
        assert_int_equal(tern_mig_request(&w.p[requester].mig, T, 1), TERN_OK);
        while (busy())
            assert_true(step(true));
        run_to_end();
        while (w.timeouts == 0) { /* let the timer come due if it has not */
            tick();
            run_to_end();
        }
        check_all_delivered(1);
        for (unsigned i = 0; i < n; i++)
            assert_int_equal(w.p[i].outcome, TERN_MIG_MOVED);
        assert_int_equal(w.p[0].mig.stats.moved, 1);
        assert_int_equal(w.timeouts, 1); /* exactly once, never lost, never twice */
        assert_true(w.timeout_at >= deadline);
        timer_on_src += w.timeout_where == 0;
        timer_in_flight += w.p[1].mig.stats.timers_fired;
        if (w.p[1].mig.stats.timers_fired)
            assert_int_equal(w.timeout_where, 1);
    }
    /* the schedules did put expiries before the move and in flight */
    assert_true(timer_on_src > 0 && timer_in_flight > 0);
    free_links();
}

/* The destination fails DESERIALIZE: the task goes on at the source with
 * everything that was sent to it, in order; nobody's routing changed. */
static void test_failed_deserialize_stays_at_source(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        unsigned n = 2 + (unsigned)(seed % 4);
        world(n, 0, seed, 10);
        w.p[1].fail_attach = true;
        for (unsigned i = 0, when = (unsigned)(rnd() % 20); i < when; i++)
            step(false);
        assert_int_equal(tern_mig_request(&w.p[(uint8_t)(seed % n)].mig, T, 1), TERN_OK);
        run_to_end();
        check_all_delivered(0);
        for (unsigned i = 0; i < n; i++) {
            assert_int_equal(w.p[i].outcome, TERN_MIG_STAYED);
            assert_int_equal(w.p[i].why, TERN_ENOMEM);
        }
        assert_int_equal(w.p[0].mig.stats.stayed, 1);
    }
    free_links();
}

/* A SERIALIZE handler that cannot serialize: nothing moves, all unfreeze. */
static void test_failed_serialize_stays(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        world(3, 0, seed, 8);
        w.fail_serialize = true;
        assert_int_equal(tern_mig_request(&w.p[2].mig, T, 1), TERN_OK);
        run_to_end();
        check_all_delivered(0);
        for (unsigned i = 0; i < 3; i++)
            assert_int_equal(w.p[i].outcome, TERN_MIG_STAYED);
    }
    free_links();
}

/* Deserialization fails on the destination and resuming fails on the
 * source: the task is killed everywhere; every message was handled or
 * dropped and counted, none twice. */
static void test_failed_resume_kills(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        world(3, 0, seed, 10);
        w.p[0].fail_attach = w.p[1].fail_attach = true;
        assert_int_equal(tern_mig_request(&w.p[0].mig, T, 1), TERN_OK);
        while (busy())
            assert_true(step(false));
        assert_int_equal(where_count(), 0);
        for (unsigned i = 0; i < 3; i++) {
            assert_int_equal(w.p[i].outcome, TERN_MIG_LOST);
            assert_true(w.p[i].killed);
            assert_false(w.p[i].frozen);
        }
        assert_int_equal(w.p[0].mig.stats.killed, 1);
        /* handled before the move, lost with the image, dropped from the
         * senders' holds: every sequence number accounted for once */
        uint32_t sent = w.sent[0] + w.sent[1] + w.sent[2];
        assert_int_equal(w.handled_before + w.dropped, sent);
        assert_int_equal(w.p[0].mig.stats.lost_msgs, w.in_image);
    }
    free_links();
}

/* A timer that expires while the task is in flight fires on the
 * destination, once; one that expires later keeps its global deadline. */
static void test_timer_expiring_in_flight_fires_on_destination(void **st)
{
    (void)st;
    for (int periodic = 0; periodic <= 1; periodic++) {
        world(3, 0, 42, 0);
        w.now = 1000;
        w.p[0].timer_on = true;
        w.p[0].deadline = 1010;
        w.p[0].period = periodic ? 100 : 0;
        assert_int_equal(tern_mig_request(&w.p[2].mig, T, 1), TERN_OK);
        /* run until the image is on its way to the destination */
        while (!w.l[0][1].head || w.p[0].has_task)
            assert_true(step(false));
        assert_int_equal(w.timeouts, 0);
        w.now = 1025; /* in flight past the deadline (tick() would fire only where the task is) */
        run_to_end();
        assert_true(w.p[1].has_task);
        assert_int_equal(w.timeouts, 1);
        assert_int_equal(w.timeout_where, 1);
        assert_int_equal(w.p[1].mig.stats.timers_fired, 1);
        if (periodic) {
            /* the next expiry stays on the 1010 + k*100 grid */
            assert_true(w.p[1].timer_on);
            assert_int_equal(w.p[1].deadline, 1110);
        } else {
            assert_false(w.p[1].timer_on);
        }
        for (int i = 0; i < 200; i++)
            tick();
        run_to_end();
        assert_int_equal(w.timeouts, periodic ? 3 : 1); /* 1110 and 1210 for the periodic one */
    }
    /* not due before arrival: the remaining ticks keep the global deadline */
    world(3, 0, 7, 0);
    w.now = 1000;
    w.p[0].timer_on = true;
    w.p[0].deadline = 1500;
    assert_int_equal(tern_mig_request(&w.p[0].mig, T, 2), TERN_OK);
    while (!w.l[0][2].head)
        assert_true(step(false));
    w.now = 1200;
    run_to_end();
    assert_true(w.p[2].has_task);
    assert_int_equal(w.p[2].deadline, 1500);
    assert_int_equal(w.timeouts, 0);
    free_links();
}

/* Task state of 0 B to 1 kB in 58-byte bus frames: STATE in fragments,
 * reassembled at the destination; a state too large for an image
 * (TERN_MIG_IMAGE_MAX) is refused by tern_mig_serialized and the task stays. */
static void test_state_sizes_over_bus_frames(void **st)
{
    (void)st;
    static const uint16_t pads[] = {0, 1, 31, 200, 1024};
    for (unsigned k = 0; k < sizeof pads / sizeof pads[0]; k++)
        for (uint64_t seed = 1; seed <= 40; seed++) {
            world_mtu(3, 0, seed, 6, BUS_MTU);
            w.pad = pads[k];
            assert_int_equal(tern_mig_request(&w.p[2].mig, T, 1), TERN_OK);
            run_to_end();
            check_all_delivered(1);
            assert_int_equal(w.p[1].mig.stats.bad_messages, 0);
        }
    world_mtu(3, 0, 5, 6, BUS_MTU);
    w.pad = TERN_MIG_IMAGE_MAX;
    assert_int_equal(tern_mig_request(&w.p[2].mig, T, 1), TERN_OK);
    run_to_end();
    check_all_delivered(0);
    for (unsigned i = 0; i < 3; i++)
        assert_int_equal(w.p[i].outcome, TERN_MIG_STAYED);
    free_links();
}

/* A processor whose migration slots are all taken (by two other
 * migrations it follows) declines to take part: the source gives up, the
 * task stays at the source with all its messages. */
static void test_no_slot_declines(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        world(3, 0, seed, 6);
        for (uint8_t t = 10; t < 10 + TERN_MIG_SLOTS; t++) {
            uint8_t freeze[6] = {TERN_MIG_FREEZE, t, 1, 0, 1, 0};
            tern_mig_receive(&w.p[2].mig, 1, freeze, sizeof freeze);
        }
        while (w.l[2][1].head) { /* their FROZEN replies, for nobody here */
            wire *x = w.l[2][1].head;
            w.l[2][1].head = x->next;
            free(x);
        }
        w.l[2][1].tail = NULL;
        assert_int_equal(tern_mig_request(&w.p[0].mig, T, 1), TERN_OK);
        run_to_end();
        check_all_delivered(0);
        assert_int_equal(w.p[0].outcome, TERN_MIG_STAYED);
        assert_int_equal(w.p[0].why, TERN_EFULL);
        assert_int_equal(w.p[1].outcome, TERN_MIG_STAYED);
        assert_int_equal(w.p[2].mig.stats.refused, 1);
    }
    free_links();
}

/* A STATE comes from the bus: a damaged one (bytes changed, cut short,
 * lengthened) is refused by decode or read within its bounds (ASan), never
 * trusted. 5,000 variants of a real image, whole and in fragments. */
static void test_damaged_state_is_refused(void **st)
{
    (void)st;
    for (uint16_t mtu = 0; mtu <= BUS_MTU; mtu = (uint16_t)(mtu + BUS_MTU)) {
        world_mtu(3, 0, 3, 4, mtu);
        w.pad = 40;
        for (int i = 0; i < 12; i++) /* some messages queued at the source */
            step(false);
        assert_int_equal(tern_mig_request(&w.p[0].mig, T, 1), TERN_OK);
        /* the source's image, once it is sent */
        while (w.p[0].mig.slots[0].role != TERN_MIG_SRC_SENT)
            assert_true(step(false));
        static uint8_t good[TERN_MIG_IMAGE_MAX], bad[TERN_MIG_IMAGE_MAX + 16];
        uint16_t len = w.p[0].mig.image_len;
        memcpy(good, w.p[0].mig.image, len);
        w.fuzz = true;
        proc *d = &w.p[1];
        while (!tern_mig_busy(&d->mig, T)) /* the destination has frozen */
            assert_true(step(false));
        uint32_t stale = d->mig.stats.stale, bad_before = d->mig.stats.bad_messages;
        for (int k = 0; k <= 2500; k++) {
            uint16_t n = len;
            memcpy(bad, good, len);
            unsigned how = k == 0 ? 3 : (unsigned)(rnd() % 3);
            unsigned calls = w.attach_calls;
            switch (how) {
            case 3: /* the image as sent: decoded (and refused by the fuzzing attach) */
                break;
            case 0: /* change a few bytes (not the header: that is another test) */
                for (int j = 0; j < 3; j++)
                    bad[6 + rnd() % (len - 6)] = (uint8_t)rnd();
                break;
            case 1: /* cut short */
                n = (uint16_t)(6 + rnd() % (len - 6));
                break;
            default: /* lengthened */
                n = (uint16_t)(len + 1 + rnd() % 16);
                for (uint16_t j = len; j < n; j++)
                    bad[j] = (uint8_t)rnd();
            }
            if (!mtu) {
                tern_mig_receive(&d->mig, 0, bad, n);
            } else {
                uint8_t f[BUS_MTU];
                for (uint16_t at = 0; at < n; at = (uint16_t)(at + BUS_MTU - 6)) {
                    uint16_t c = (uint16_t)(n - at < BUS_MTU - 6 ? n - at : BUS_MTU - 6);
                    memcpy(f, good, 5);
                    f[0] = TERN_MIG_STATE_PART;
                    f[5] = at + c == n;
                    memcpy(f + 6, bad + at, c);
                    tern_mig_receive(&d->mig, 0, f, (uint16_t)(6 + c));
                }
            }
            if (how == 3)
                assert_int_equal(w.attach_calls, calls + 1);
            if (how == 1 || how == 2) /* a length that does not add up: refused by decode */
                assert_int_equal(w.attach_calls, calls);
        }
        /* every damaged image was refused (RESULT fail), none acted on */
        assert_false(d->has_task);
        assert_true(tern_mig_busy(&d->mig, T));
        assert_int_equal(d->mig.stats.stale, stale);
        assert_int_equal(d->mig.stats.bad_messages, bad_before);
    }
    free_links();
}

/* A task bound to hardware is refused by name; so are unknown tasks and
 * processors, and a second request while the task is migrating. */
static void test_refusals_by_name(void **st)
{
    (void)st;
    world(3, 0, 1, 0);
    tern_mig *m = &w.p[2].mig;
    assert_int_equal(tern_mig_request(m, PINNED, 1), TERN_EPINNED);
    assert_string_equal(m->error,
                        "migration of task 'radio' refused: the task is not movable (TERN_EPINNED)");
    assert_int_equal(tern_mig_request(m, 9, 1), TERN_ENOTASK);
    assert_int_equal(tern_mig_request(m, T, 7), TERN_ERANGE);
    assert_int_equal(tern_mig_request(m, T, 0), TERN_EINVAL);
    assert_int_equal(m->stats.refused, 4);
    for (unsigned i = 0; i < 3; i++)
        for (unsigned j = 0; j < 3; j++)
            assert_null(w.l[i][j].head); /* nothing went on the bus */
    /* busy: the source refuses a second request, the requester hears why */
    assert_int_equal(tern_mig_request(&w.p[0].mig, T, 1), TERN_OK);
    assert_int_equal(tern_mig_request(&w.p[0].mig, T, 2), TERN_ESTATE);
    assert_int_equal(tern_mig_request(m, T, 2), TERN_OK); /* forwarded: p2 has not frozen yet */
    run_to_end();
    assert_int_equal(w.p[2].outcome, TERN_MIG_MOVED);
    assert_true(w.p[1].has_task);
    /* the forwarded request reaches the source before the requester's
     * FROZEN (FIFO link), so while it is busy: refused, and told */
    assert_int_equal(w.p[0].mig.stats.refused, 2);
    assert_int_equal(w.refusals, 1);
    /* malformed migrator messages are counted, not acted on */
    uint8_t junk[3] = {TERN_MIG_STATE, T, 0};
    tern_mig_receive(&w.p[2].mig, 0, junk, sizeof junk);
    uint8_t odd[5] = {99, T, 0, 1, 0};
    tern_mig_receive(&w.p[2].mig, 0, odd, sizeof odd);
    assert_int_equal(w.p[2].mig.stats.bad_messages, 2);
    /* a FREEZE naming the receiver as the source (fuzz_migrate's
     * migrate/freeze-from-self): no slot, no freeze, no FROZEN to itself */
    uint8_t self_src[6] = {TERN_MIG_FREEZE, T, 2, 1, 9, 0};
    tern_mig_receive(&w.p[2].mig, 0, self_src, sizeof self_src);
    assert_int_equal(w.p[2].mig.stats.bad_messages, 3);
    assert_false(tern_mig_busy(&w.p[2].mig, T));
    assert_false(w.p[2].frozen);
    assert_null(w.l[2][2].head);
    free_links();
}

/* A processor dies (stops: no step, what reaches it is lost) at a random
 * moment of a migration: the source (0), the destination (1) or a third.
 * The living give up by their deadlines (tern_mig_poll at every clock
 * step, timeout 50 steps) and agree: the task ended MOVED (on the
 * destination, every living route names it), STAYED (on the living
 * source) or LOST (on no living processor, every living route NOWHERE);
 * never on two processors; nobody left frozen or waiting; each timeout
 * counted where it happened. */
static void test_a_processor_dies_mid_migration(void **st)
{
    (void)st;
    unsigned by_outcome[3] = {0}, timeouts = 0;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        unsigned n = 2 + (unsigned)(seed % 3);
        world(n, 0, seed, 8);
        w.pad = seed % 5 == 0 ? 300 : 0; /* fragments over the bus-like seeds */
        for (unsigned i = 0; i < n; i++)
            w.p[i].mig.timeout = 50;
        uint8_t victim = (uint8_t)(rnd() % n);
        assert_int_equal(tern_mig_request(&w.p[(uint8_t)(seed / 3 % n)].mig, T, 1), TERN_OK);
        for (unsigned i = 0, when = (unsigned)(rnd() % 40); i < when; i++)
            (void)step(false);
        w.p[victim].dead = w.dead = true;
        for (unsigned guard = 0; busy() || step(false); guard++) {
            assert_true(guard < 100000);
            if (busy())
                (void)step(true);
        }
        int outcome = -1;
        unsigned holders = 0;
        for (unsigned i = 0; i < n; i++) {
            proc *p = &w.p[i];
            holders += p->has_task;
            timeouts += p->mig.stats.timeouts;
            if (p->dead)
                continue;
            assert_false(p->frozen);
            assert_int_equal(p->held.n, 0);
            assert_int_equal(tern_mig_deadline(&p->mig), 0);
            if (p->outcome < 0) /* the requester heard nothing: it is the victim's fault */
                continue;
            if (outcome < 0)
                outcome = p->outcome;
            assert_int_equal(p->outcome, outcome);
            if (p->mig.stats.timeouts)
                assert_int_equal(p->why, TERN_ETIMEOUT);
        }
        assert_true(holders <= 1);
        if (outcome < 0) { /* the source died before it heard the request */
            assert_true(w.p[0].dead && w.p[0].has_task);
            continue;
        }
        for (unsigned i = 0; i < n; i++) {
            proc *p = &w.p[i];
            if (p->dead)
                continue;
            if (outcome == TERN_MIG_MOVED) {
                assert_int_equal(p->route, 1);
                assert_true(w.p[1].has_task);
            } else if (outcome == TERN_MIG_STAYED) {
                assert_int_equal(p->route, 0);
                assert_true(w.p[0].has_task && !w.p[0].dead);
            } else {
                assert_int_equal(outcome, TERN_MIG_LOST);
                assert_false(p->has_task);
                assert_int_equal(p->route, TERN_MIG_NOWHERE);
            }
        }
        by_outcome[outcome == TERN_MIG_MOVED ? 0 : outcome == TERN_MIG_STAYED ? 1 : 2]++;
    }
    /* the deaths fell in every phase */
    assert_true(by_outcome[0] && by_outcome[1] && by_outcome[2] && timeouts);
    free_links();
}

/* The last fragment of a STATE cut down to its header (dropped as a bad
 * message): the destination waits for the rest, the source for RESULT.
 * The source gives up after its timeout: it sent the task away, so it
 * kills it (TERN_ETIMEOUT, the image's messages counted); the destination
 * and the third processor drop the partial state and their held messages. */
static void test_a_truncated_last_fragment_times_out(void **st)
{
    (void)st;
    world_mtu(3, 0, 7, 0, BUS_MTU);
    w.pad = 300;
    for (unsigned i = 0; i < 3; i++)
        w.p[i].mig.timeout = 50;
    assert_int_equal(tern_mig_request(&w.p[2].mig, T, 1), TERN_OK);
    for (unsigned guard = 0; !w.l[0][1].tail || w.l[0][1].tail->b[0] != TERN_MIG_STATE_PART ||
                             !w.l[0][1].tail->b[5];
         guard++) {
        assert_true(guard < 1000);
        assert_true(step(false));
    }
    w.l[0][1].tail->len = 6; /* the last fragment, header only */
    run_to_end();
    assert_true(tern_mig_busy(&w.p[0].mig, T) && tern_mig_busy(&w.p[1].mig, T));
    assert_int_equal(w.p[1].mig.stats.bad_messages, 1);
    for (unsigned i = 0; i < 49; i++)
        tick();
    assert_int_equal(w.p[0].mig.stats.timeouts, 0); /* not before its deadline */
    while (busy()) {
        tick();
        run_to_end();
    }
    assert_int_equal(w.p[0].mig.stats.timeouts, 1);
    assert_int_equal(w.p[0].mig.stats.killed, 1);
    assert_int_equal(w.p[1].mig.stats.timeouts + w.p[2].mig.stats.timeouts, 0);
    assert_int_equal(w.p[1].mig.stats.partial_dropped, 1);
    assert_int_equal(where_count(), 0);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(w.p[i].outcome, TERN_MIG_LOST);
        assert_int_equal(w.p[i].why, TERN_ETIMEOUT);
        assert_false(w.p[i].frozen);
    }
    assert_int_equal(w.p[0].mig.stats.lost_msgs, w.in_image);
    /* the destination's image is free again: it can be the source of another */
    assert_false(tern_mig_busy(&w.p[1].mig, T));
    free_links();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals_by_name),
        cmocka_unit_test(test_moves_under_traffic),
        cmocka_unit_test(test_failed_deserialize_stays_at_source),
        cmocka_unit_test(test_failed_serialize_stays),
        cmocka_unit_test(test_failed_resume_kills),
        cmocka_unit_test(test_timer_expiring_in_flight_fires_on_destination),
        cmocka_unit_test(test_state_sizes_over_bus_frames),
        cmocka_unit_test(test_no_slot_declines),
        cmocka_unit_test(test_damaged_state_is_refused),
        cmocka_unit_test(test_a_processor_dies_mid_migration),
        cmocka_unit_test(test_a_truncated_last_fragment_times_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
