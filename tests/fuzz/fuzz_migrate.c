/* Fuzz target: the task migrator (kernel/migrate.c) on three processors
 * in one process, each an engine with a small fake kernel (the task's
 * queue, its state, senders held by freeze, a routing entry), linked by
 * FIFO links as the processor bus is. The input is the schedule: which
 * link delivers next, requests (to any processor, for the task, a pinned
 * one or one that does not exist), posts to the task, the task handling a
 * message, SERIALIZE returning (its state, a failure, or any bytes),
 * DESERIALIZE failing, the clock jumping; and damage: a STATE or
 * STATE_PART whose image bytes are changed, cut short, lengthened or
 * replaced, whole (mtu 0) or in bus-sized fragments (mtu 58).
 *
 * In "chaos" inputs (first byte odd) any message may be damaged, header
 * included, and arbitrary messages are injected from any processor: the
 * engine cannot tell a forged message from a real one, so only the
 * memory-safety invariants hold there.
 *
 * Invariants, always: no out-of-bounds access or UB (each message is a
 * heap block of exactly its size); what the engine sends goes to another
 * processor of the bus, within the mtu; what attach (DESERIALIZE) is given
 * lies inside the image received (routes within TERN_MAX_OUT_PORTS, held
 * messages that iterate to n_msgs). Without chaos, also: the task is
 * attached on at most one processor at every instant; a message only
 * reaches the processor that holds it; a damaged image is either refused,
 * the source then reporting STAYED or LOST with a named status (never
 * TERN_OK), or accepted with a state the task can read; at the end, once
 * the links are drained, no migration is left half-way, the task runs on
 * exactly one processor that every routing entry names (or was killed
 * everywhere), and unless a damaged image was accepted, every message
 * posted was handled once, in each sender's order, or counted lost. */
#include <string.h>

#include "fuzz.h"
#include "tern/migrate.h"

#define NP 3
#define T 3      /* the migrating task */
#define PINNED 5 /* a task bound to processor 0 */
#define DATA 0xD0
#define QCAP 32
#define MAGIC 0x7E57F00Du
#define BUS_MTU 58 /* tern-sim's 64-byte bus frames less kernel/remote.c's header, CRC included */

typedef struct wire {
    struct wire *next;
    uint16_t len;
    uint8_t b[];
} wire;

typedef struct {
    uint8_t src;
    uint32_t seq;
} amsg;

/* The task's own state: SERIALIZE writes it, DESERIALIZE checks it. */
typedef struct {
    uint32_t magic;
    uint32_t last[NP]; /* the last sequence number handled from each sender */
    uint32_t handled;
    uint32_t check; /* of the fields above: a damaged state is refused */
} task_state;

typedef struct {
    tern_mig mig;
    uint8_t id, route;
    bool has_task, frozen, serialize_pending, fail_attach;
    amsg q[QCAP];
    unsigned nq;
    amsg held[QCAP];
    unsigned nheld;
    task_state ts;
    int outcome; /* -1, or the last tern_mig_outcome reported here */
    tern_status why;
} proc;

static struct {
    proc p[NP];
    wire *head[NP][NP], *tail[NP][NP];
    tern_time now;
    uint16_t mtu;
    bool chaos;
    bool tainted;  /* a damaged image was accepted: message accounting is off */
    bool damaged;  /* the STATE now on its way (or in fragments) was damaged */
    uint32_t seq[NP], posted, handled, dropped;
    const uint8_t *rx_buf; /* the message being received: attach reads inside it */
    uint16_t rx_len;
} w;

static uint32_t checksum(const task_state *s)
{
    uint32_t c = s->magic ^ 0x5A5A5A5Au;
    for (int i = 0; i < NP; i++)
        c = c * 31 + s->last[i];
    return c * 31 + s->handled;
}

static unsigned holders(void)
{
    unsigned n = 0;
    for (int i = 0; i < NP; i++)
        n += w.p[i].has_task;
    return n;
}

static void link_put(uint8_t from, uint8_t to, const uint8_t *b, uint16_t len)
{
    wire *x = malloc(sizeof *x + len);
    x->next = NULL;
    x->len = len;
    memcpy(x->b, b, len);
    if (w.tail[from][to])
        w.tail[from][to]->next = x;
    else
        w.head[from][to] = x;
    w.tail[from][to] = x;
}

/* --- the fake kernel ----------------------------------------------------------------- */

static void arrive(proc *p, amsg m)
{
    CHECK(w.chaos || p->has_task, "a message for the task reached processor %u, which has not got it",
          p->id);
    if (p->has_task && p->nq < QCAP)
        p->q[p->nq++] = m;
    else
        w.dropped++;
}

static void post(proc *p, amsg m)
{
    if (p->frozen) {
        if (p->nheld < QCAP)
            p->held[p->nheld++] = m;
        else
            w.dropped++;
        return;
    }
    if (p->route == p->id) {
        arrive(p, m);
        return;
    }
    if (p->route >= NP) { /* killed: counted, as the kernel's no_task */
        w.dropped++;
        return;
    }
    uint8_t b[6] = {DATA, m.src, (uint8_t)m.seq, (uint8_t)(m.seq >> 8), (uint8_t)(m.seq >> 16),
                    (uint8_t)(m.seq >> 24)};
    link_put(p->id, p->route, b, sizeof b);
}

static void handle(proc *p)
{
    if (!p->has_task || p->frozen || !p->nq)
        return;
    amsg m = p->q[0];
    memmove(p->q, p->q + 1, --p->nq * sizeof m);
    if (!w.tainted && !w.chaos && m.src < NP)
        CHECK(m.seq == p->ts.last[m.src] + 1, "from %u: message %u after %u", m.src, m.seq,
              p->ts.last[m.src]);
    if (m.src < NP)
        p->ts.last[m.src] = m.seq;
    p->ts.handled++;
    w.handled++;
}

static tern_status op_send(void *ctx, uint8_t module, const uint8_t *b, uint16_t len)
{
    proc *p = ctx;
    CHECK(module < NP && module != p->id, "processor %u sent to module %u", p->id, module);
    CHECK(!w.mtu || len <= w.mtu, "a message of %u bytes over a bus of %u", len, w.mtu);
    CHECK(len >= 6, "a message of %u bytes", len);
    link_put(p->id, module, b, len);
    return TERN_OK;
}

static tern_status op_multicast(void *ctx, const uint8_t *b, uint16_t len)
{
    proc *p = ctx;
    CHECK(!w.mtu || len <= w.mtu, "a multicast of %u bytes over a bus of %u", len, w.mtu);
    for (uint8_t j = 0; j < NP; j++)
        if (j != p->id || w.mtu) /* a bus multicast comes back to its sender too */
            link_put(p->id, j, b, len);
    return TERN_OK;
}

static uint8_t op_locate(void *ctx, tern_task_id t)
{
    proc *p = ctx;
    return t == T ? p->route : t == PINNED ? 0 : TERN_MIG_NOWHERE;
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
    if (t == T)
        p->frozen = true;
}

static void op_unfreeze(void *ctx, tern_task_id t)
{
    proc *p = ctx;
    if (t != T)
        return;
    p->frozen = false;
    unsigned n = p->nheld;
    p->nheld = 0;
    amsg held[QCAP];
    memcpy(held, p->held, n * sizeof held[0]);
    for (unsigned i = 0; i < n; i++)
        post(p, held[i]);
}

static void op_route(void *ctx, tern_task_id t, uint8_t module)
{
    proc *p = ctx;
    if (t == T)
        p->route = module;
}

static tern_status op_serialize(void *ctx, tern_task_id t)
{
    proc *p = ctx;
    CHECK(w.chaos || (t == T && p->has_task), "SERIALIZE of task %u on %u, which has not got it",
          t, p->id);
    p->serialize_pending = true; /* the handler runs later, as a message */
    return TERN_OK;
}

static tern_status op_detach(void *ctx, tern_task_id t, tern_mig_image *img, tern_mig_writer *wr)
{
    proc *p = ctx;
    if (t != T || !p->has_task) {
        CHECK(w.chaos, "detach of task %u on %u, which has not got it", t, p->id);
        return TERN_ENOTASK;
    }
    for (unsigned i = 0; i < p->nq; i++)
        if (tern_mig_put_msg(wr, p->q[i].src, TERN_PORT_APP(0), &p->q[i].seq,
                             sizeof p->q[i].seq) != TERN_OK)
            return TERN_ENOMEM;
    img->n_routes = 2;
    img->routes[0] = (tern_route)TERN_TO_TASK(7, TERN_PORT_APP(0));
    img->routes[1] = (tern_route)TERN_TO_GROUP(2);
    p->nq = 0;
    p->has_task = false;
    memset(&p->ts, 0xEE, sizeof p->ts); /* the state is gone from here */
    return TERN_OK;
}

/* Within the image received, or the source's own copy when it resumes the task. */
static bool inside(const proc *p, const uint8_t *b, uint16_t n)
{
    if (!n)
        return true;
    return (b >= w.rx_buf && b + n <= w.rx_buf + w.rx_len) ||
           (b >= p->mig.image && b + n <= p->mig.image + p->mig.image_len);
}

/* DESERIALIZE: everything decode handed over must lie inside the image
 * received; the task refuses a state it cannot read. */
static tern_status op_attach(void *ctx, const tern_mig_image *img)
{
    proc *p = ctx;
    CHECK(img->n_routes <= TERN_MAX_OUT_PORTS, "%u routes", img->n_routes);
    CHECK(inside(p, img->state, img->state_len), "state outside the image");
    CHECK(inside(p, img->msgs, img->msgs_len), "held messages outside the image");
    uint16_t off = 0;
    tern_mig_held h;
    unsigned n = 0;
    bool msgs_ok = true;
    while (tern_mig_msg_next(img, &off, &h)) {
        CHECK(inside(p, h.payload, h.len), "a held message outside the image");
        msgs_ok &= h.len == sizeof(uint32_t);
        n++;
    }
    CHECK(n == img->n_msgs && off == img->msgs_len, "%u held messages of %u, %u bytes of %u", n,
          img->n_msgs, off, img->msgs_len);
    if (img->task != T || p->fail_attach)
        return TERN_ENOMEM;
    task_state ts;
    if (img->state_len != sizeof ts || !msgs_ok || n > QCAP)
        return TERN_EINVAL;
    memcpy(&ts, img->state, sizeof ts);
    if (ts.magic != MAGIC || ts.check != checksum(&ts))
        return TERN_EINVAL;
    CHECK(w.chaos || holders() == 0, "task attached on %u while %u processor(s) hold it", p->id,
          holders());
    if (w.damaged)
        w.tainted = true;
    p->has_task = true;
    p->ts = ts;
    p->nq = 0;
    off = 0;
    while (tern_mig_msg_next(img, &off, &h)) {
        amsg m = {h.src, 0};
        memcpy(&m.seq, h.payload, sizeof m.seq);
        p->q[p->nq++] = m;
    }
    return TERN_OK;
}

static void op_killed(void *ctx, tern_task_id t, uint8_t lost)
{
    proc *p = ctx;
    if (t != T)
        return;
    CHECK(w.chaos || !p->has_task, "killed on %u, which holds the task", p->id);
    w.dropped += lost + p->nheld + (p->has_task ? p->nq : 0);
    p->nheld = 0;
    p->frozen = false;
    p->has_task = false;
    p->route = TERN_MIG_NOWHERE;
}

static void op_done(void *ctx, tern_task_id t, tern_mig_outcome o, tern_status why)
{
    proc *p = ctx;
    if (t != T)
        return;
    CHECK((o == TERN_MIG_MOVED) == (why == TERN_OK) || o == TERN_MIG_REFUSE || w.chaos,
          "outcome %d with %s", o, tern_status_name(why));
    p->outcome = (int)o;
    p->why = why;
}

static const tern_mig_ops ops = {
    .send = op_send, .multicast = op_multicast, .locate = op_locate, .movable = op_movable,
    .name = op_name, .global_now = op_now, .freeze = op_freeze, .unfreeze = op_unfreeze,
    .route = op_route, .serialize = op_serialize, .detach = op_detach, .attach = op_attach,
    .killed = op_killed, .done = op_done,
};

/* --- delivering, damaging ------------------------------------------------------------ */

static void receive(proc *p, uint8_t from, const uint8_t *b, uint16_t len)
{
    w.rx_buf = b;
    w.rx_len = len;
    if (len && b[0] == DATA) {
        if (len == 6)
            arrive(p, (amsg){b[1], (uint32_t)(b[2] | b[3] << 8 | b[4] << 16 | (uint32_t)b[5] << 24)});
        return;
    }
    /* A fragmented STATE is decoded from the engine's own reassembly buffer. */
    if (len >= 6 && b[0] == TERN_MIG_STATE_PART) {
        w.rx_buf = p->mig.image;
        w.rx_len = TERN_MIG_IMAGE_MAX;
    }
    bool last = len >= 6 && (b[0] == TERN_MIG_STATE || (b[0] == TERN_MIG_STATE_PART && b[5]));
    tern_mig_receive(&p->mig, from, b, len);
    if (last)
        w.damaged = false;
}

/* Deliver the head of link (i, j), perhaps damaged by the input. */
static void deliver(fz_reader *in, uint8_t i, uint8_t j, uint8_t how)
{
    wire *x = w.head[i][j];
    w.head[i][j] = x->next;
    if (!x->next)
        w.tail[i][j] = NULL;
    bool image = x->b[0] == TERN_MIG_STATE || x->b[0] == TERN_MIG_STATE_PART;
    uint16_t body = w.chaos ? 0 : 6; /* without chaos only the image is damaged */
    if ((how & 0xC0) == 0xC0 && (image || w.chaos) && x->b[0] != DATA && x->len > body) {
        uint16_t len = x->len;
        uint8_t *b = malloc(len + 256u);
        memcpy(b, x->b, len);
        uint8_t k = fz_u8(in);
        switch (how & 3) {
        case 0: b[body + k % (len - body)] = fz_u8(in); break;
        case 1: /* cut short; a fragment keeps a byte (one without is another fault) */
            len = (uint16_t)(body + 1 + k % (len - body));
            break;
        case 2:
            for (uint8_t n = 0; n < k % 32; n++)
                b[len++] = fz_u8(in);
            break;
        default: /* the image replaced */
            len = body;
            for (uint8_t n = 0; n < k && in->n; n++)
                b[len++] = fz_u8(in);
            if (len == body && b[0] == TERN_MIG_STATE_PART)
                b[len++] = 0;
        }
        if (w.mtu && len > w.mtu && !w.chaos)
            len = w.mtu; /* a bus frame holds no more */
        if (image)
            w.damaged = true;
        uint8_t *exact = malloc(len); /* exactly its size: ASan sees an over-read */
        memcpy(exact, b, len);
        free(b);
        receive(&w.p[j], i, exact, len);
        free(exact);
    } else {
        receive(&w.p[j], i, x->b, x->len);
    }
    free(x);
}

static bool pick_link(uint8_t sel, uint8_t *i, uint8_t *j)
{
    unsigned n = 0;
    for (uint8_t a = 0; a < NP; a++)
        for (uint8_t b = 0; b < NP; b++)
            n += w.head[a][b] != NULL;
    if (!n)
        return false;
    unsigned k = sel % n;
    for (uint8_t a = 0; a < NP; a++)
        for (uint8_t b = 0; b < NP; b++)
            if (w.head[a][b] && k-- == 0) {
                *i = a;
                *j = b;
                return true;
            }
    return false;
}

static void serialized(proc *p, fz_reader *in, uint8_t how)
{
    if (!p->serialize_pending)
        return;
    p->serialize_pending = false;
    p->ts.magic = MAGIC;
    p->ts.check = checksum(&p->ts);
    switch (how % 4) {
    case 1: /* the handler failed */
        tern_mig_serialized(&p->mig, T, NULL, 1);
        return;
    case 2: { /* any bytes, any length */
        uint16_t n = fz_u16(in) % 1600;
        uint8_t *b = malloc(n ? n : 1);
        for (uint16_t k = 0; k < n; k++)
            b[k] = fz_u8(in);
        tern_mig_serialized(&p->mig, T, b, n);
        free(b);
        return;
    }
    default:
        tern_mig_serialized(&p->mig, T, &p->ts, sizeof p->ts);
    }
}

static void free_links(void)
{
    for (int a = 0; a < NP; a++)
        for (int b = 0; b < NP; b++)
            while (w.head[a][b]) {
                wire *x = w.head[a][b];
                w.head[a][b] = x->next;
                free(x);
            }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader in = {data, size};
    memset(&w, 0, sizeof w);
    uint8_t mode = fz_u8(&in);
    w.chaos = mode & 1;
    w.mtu = mode & 2 ? BUS_MTU : 0;
    for (uint8_t i = 0; i < NP; i++) {
        proc *p = &w.p[i];
        p->id = i;
        p->route = 0;
        p->outcome = -1;
        CHECK(tern_mig_init(&p->mig, &ops, p, i, NP, w.mtu) == TERN_OK, "init refused");
    }
    w.p[0].has_task = true;
    w.p[0].ts.magic = MAGIC;

    unsigned steps = 0;
    while (in.n && steps++ < 2000) {
        uint8_t op = fz_u8(&in);
        proc *p = &w.p[(op >> 4) % NP];
        switch (op & 15) {
        case 0: case 1: case 2: case 3: case 4: { /* deliver */
            uint8_t i, j, sel = fz_u8(&in);
            if (pick_link(sel, &i, &j))
                deliver(&in, i, j, fz_u8(&in));
            break;
        }
        case 5: case 6: { /* a sender on p posts to the task */
            if (p->route >= NP || w.posted - w.handled - w.dropped >= QCAP - 8)
                break; /* killed, or enough in flight: no queue overflows */
            w.posted++;
            post(p, (amsg){p->id, ++w.seq[p->id]});
            break;
        }
        case 7:
            handle(p);
            break;
        case 8: { /* a request on p */
            uint8_t t = fz_u8(&in);
            tern_task_id task = t < 0xF0 ? T : t == 0xF0 ? PINNED : (tern_task_id)(t & 15);
            (void)tern_mig_request(&p->mig, task, fz_u8(&in) % (NP + 1));
            break;
        }
        case 9:
            serialized(p, &in, fz_u8(&in));
            break;
        case 10:
            p->fail_attach = !p->fail_attach;
            break;
        case 11:
            w.now += fz_span(&in) & 0xFFFFFFFFFFFFull; /* the clock never goes back */
            break;
        case 12:
            if (w.chaos) { /* any message, from any processor */
                uint8_t from = fz_u8(&in) % NP, n = fz_u8(&in);
                uint8_t *b = malloc(n ? n : 1);
                for (uint8_t k = 0; k < n; k++)
                    b[k] = fz_u8(&in);
                receive(p, from, b, n);
                free(b);
            }
            break;
        default:
            break;
        }
        CHECK(w.chaos || holders() <= 1, "the task is on %u processors", holders());
    }

    /* Drain: SERIALIZE returns, every link delivers, undamaged, the task
     * handles what waits. */
    for (int round = 0; round < 200; round++) {
        bool any = false;
        for (uint8_t i = 0; i < NP; i++) {
            if (w.p[i].serialize_pending) {
                serialized(&w.p[i], &in, 0);
                any = true;
            }
            w.p[i].fail_attach = false;
        }
        uint8_t a, b;
        while (pick_link(0, &a, &b)) {
            deliver(&in, a, b, 0);
            any = true;
        }
        for (uint8_t i = 0; i < NP; i++)
            while (w.p[i].has_task && !w.p[i].frozen && w.p[i].nq) {
                handle(&w.p[i]);
                any = true;
            }
        if (!any)
            break;
    }
    if (!w.chaos) {
        CHECK(holders() <= 1, "the task is on %u processors", holders());
        for (uint8_t i = 0; i < NP; i++) {
            CHECK(!tern_mig_busy(&w.p[i].mig, T), "processor %u: a migration never ended", i);
            CHECK(!w.p[i].frozen, "processor %u: senders still frozen", i);
        }
        if (holders() == 1) {
            uint8_t at = 0;
            while (!w.p[at].has_task)
                at++;
            for (uint8_t i = 0; i < NP; i++)
                CHECK(w.p[i].route == at, "processor %u routes to %u, the task is on %u", i,
                      w.p[i].route, at);
            if (!w.tainted)
                CHECK(w.p[at].ts.handled + w.dropped == w.posted,
                      "%u handled + %u dropped of %u posted", w.p[at].ts.handled, w.dropped,
                      w.posted);
        } else {
            for (uint8_t i = 0; i < NP; i++)
                CHECK(w.p[i].route == TERN_MIG_NOWHERE && w.p[i].outcome == TERN_MIG_LOST,
                      "the task is nowhere, but processor %u routes to %u (outcome %d)", i,
                      w.p[i].route, w.p[i].outcome);
        }
    }
    free_links();
    return 0;
}
