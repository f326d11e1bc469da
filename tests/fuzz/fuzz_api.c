/* Fuzz target: sequences of API calls against the kernel's counters.
 *
 * The input's first bytes build a valid application (1-6 tasks, routes to
 * tasks and groups); the rest is a program of operations read in turn by
 * whoever runs next: the main loop, every handler (a few operations in
 * the handler's context) and interrupts the program injects (one or two
 * in interrupt context). Operations: send to tasks and ports that exist or
 * not, post through routes, heap payloads owned or not, interrupts,
 * timers with delays and periods up to 2^64, alloc/realloc/free, take,
 * finalize, run the clock.
 *
 * Invariants:
 *  - a refused send changes exactly one counter: dropped[] of the reason
 *    its status names (nothing posted, nothing dispatched);
 *  - every handler call is a distinct posted message (by its sequence
 *    number) for a task that exists, on a port it has;
 *  - a heap block keeps its contents while owned, in transit and after
 *    realloc (each carries a pattern); a heap payload arrives intact;
 *  - a timer's first TIMEOUT comes no earlier than its delay;
 *  - at the end, with every task finalized: every posted message was
 *    dispatched or dropped (posted - dispatched <= dropped[FINALIZED]),
 *    nothing waits, the leaks reported are the blocks the tasks left, the
 *    message pool holds all TERN_MSG_POOL messages again, and the heap is
 *    back to its baseline, in one piece. */
#include <string.h>

#include "fuzz.h"
#include "host.h"
#include "kernel.h"
#include "msg.h" /* the kernel's own: msg_next_seq */

#define MAX_APP_TASKS 6
#define ANY_TASK (TERN_MAX_TASKS + 2)
#define MAX_BLOCKS 64
#define MAX_SEQ 65536
#define HANDLER_BUDGET 20000 /* handler calls per input: periodic timers end there */
#define CTX_KERNEL TERN_OWNER_KERNEL
/* Long enough for everything queued to run: once any alarm was used the
 * kernel keeps a deadline half a counter wrap ahead (clock extension), so
 * the host never runs out of things that could wake it. */
#define SETTLE ((uint64_t)1 << 34)

static fz_reader in;

/* --- the application -------------------------------------------------------------- */

static tern_task_desc tasks[MAX_APP_TASKS];
static tern_route routes[MAX_APP_TASKS][4];
static tern_group_desc groups[2];
static tern_endpoint members[2][3];
static tern_app_desc app;

/* A timer as last started or cancelled: its TIMEOUT messages posted
 * since (sequence number from `since` on) must match; older ones were
 * already on their way. */
typedef struct {
    uint32_t since;
    tern_time armed_at, delay; /* first TIMEOUT no earlier than armed_at + delay */
    bool armed, fired;
} timer_log;
static timer_log timers[TERN_MAX_TASKS][TERN_TIMERS_PER_TASK];

/* --- what the harness knows ------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t size;
    uint8_t owner; /* task id or CTX_KERNEL */
} block;
static block blocks[MAX_BLOCKS];
static size_t n_blocks;

static uint8_t seen[MAX_SEQ / 8];
static unsigned handler_calls, expected_leaks, refused_finalized, pending_irqs;
static uint8_t next_pattern;
static bool budget_spent;

/* Every block and payload carries its own pattern, p[i] = p[0] + i, so a
 * copy (a multicast's) checks as well as the original. */
static void fill(uint8_t *p, size_t n)
{
    uint8_t first = ++next_pattern;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(first + i);
}

static void verify(const uint8_t *p, size_t n, const char *where)
{
    for (size_t i = 1; i < n; i++)
        CHECK(p[i] == (uint8_t)(p[0] + i), "%s: block %p byte %zu of %zu overwritten", where,
              (const void *)p, i, n);
}

static uint8_t context(void)
{
    tern_task_id self = tern_self();
    return self == TERN_NO_TASK ? CTX_KERNEL : self;
}

/* A block the current context owns, chosen by the input, or NULL. */
static block *pick_block(void)
{
    uint8_t want = context(), k = fz_u8(&in);
    size_t mine = 0;
    for (size_t i = 0; i < n_blocks; i++)
        mine += blocks[i].owner == want;
    if (!mine)
        return NULL;
    k = (uint8_t)(k % mine);
    for (size_t i = 0; i < n_blocks; i++)
        if (blocks[i].owner == want && k-- == 0)
            return &blocks[i];
    return NULL;
}

static void forget(block *b) { *b = blocks[--n_blocks]; }

/* --- counting ------------------------------------------------------------------- */

static int reason_of(tern_status st)
{
    switch (st) {
    case TERN_ENOTASK: return TERN_DROP_NO_TASK;
    case TERN_ENOPORT: return TERN_DROP_NO_PORT;
    case TERN_ENOROUTE: return TERN_DROP_NO_ROUTE;
    case TERN_EFULL: return TERN_DROP_POOL_FULL;
    case TERN_ESTATE: return TERN_DROP_FINALIZED;
    case TERN_EOWNER: return TERN_DROP_NO_MEMORY;
    default: return -1;
    }
}

/* A single-destination post returned st: a refusal moved exactly its own
 * drop counter, a success posted at least the message itself. */
static void check_post(const tern_counters *before, tern_status st, const char *what)
{
    const tern_counters *c = tern_stats();
    if (st == TERN_OK) {
        CHECK(c->posted > before->posted, "%s: TERN_OK but nothing posted", what);
        return;
    }
    int why = reason_of(st);
    CHECK(why >= 0, "%s: unexpected %s", what, tern_status_name(st));
    for (int r = 0; r < TERN_DROP_REASONS; r++)
        CHECK(c->dropped[r] == before->dropped[r] + (r == why), "%s: %s moved dropped[%d] by %d",
              what, tern_status_name(st), r, (int)(c->dropped[r] - before->dropped[r]));
    CHECK(c->posted == before->posted && c->dispatched == before->dispatched,
          "%s refused with %s but posted or dispatched", what, tern_status_name(st));
    if (st == TERN_ESTATE)
        refused_finalized++;
}

/* --- operations ----------------------------------------------------------------- */

enum { OP_SEND, OP_POST, OP_WORK, OP_IRQ, OP_TIMER, OP_CANCEL, OP_ALLOC, OP_FREE, OP_REALLOC,
       OP_FINALIZE, OP_RUN, OP_TAKE, OP_COUNT };

static const uint8_t static_payload[64];

static void isr_ops(void *arg);
static void run_ops(unsigned n, tern_msg *current);

/* The payload of a send or post: none, a constant, a heap block the
 * sender owns, or a heap flag on memory it does not own. */
typedef struct {
    void *p;
    uint16_t len;
    uint8_t flags;
    uint8_t *owned; /* the sender's block, when it sends one */
    size_t size;    /* its size */
} payload;

static void choose_payload(payload *pl)
{
    memset(pl, 0, sizeof *pl);
    switch (fz_u8(&in) % 4) {
    case 1:
        pl->p = (void *)static_payload;
        pl->len = fz_u8(&in) % sizeof static_payload;
        break;
    case 2: {
        block *b = pick_block();
        if (b) {
            pl->owned = b->p;
            pl->size = b->size;
            pl->p = b->p;
            pl->len = (uint16_t)b->size; /* blocks are smaller than the heap */
            pl->flags = TERN_MSG_HEAP;
            /* Out of the table for the whole call: the send may run handlers
             * and interrupts nested (the stack model), which must not free
             * or send a block already on its way, nor have their own new
             * block at the same address taken for it afterwards. */
            forget(b);
        }
        break;
    }
    case 3: /* not the sender's: another's block or not the heap at all */
        /* (asked of the kernel: a record may be one a send still under way
         * has not settled, its block already taken by this very task) */
        pl->p = n_blocks && heap_check_owner(blocks[0].p, context()) != TERN_OK
                    ? blocks[0].p
                    : (void *)static_payload;
        pl->len = 1;
        pl->flags = TERN_MSG_HEAP;
        break;
    default:
        break;
    }
}

/* After a send or post: a block sent is no longer the sender's; one
 * refused is again (it left the table for the call). A single destination
 * says so by its status; a multicast does not say which members failed,
 * so the kernel's ownership tag is asked, unless the address is in the
 * table again: then the original was delivered, and a block allocated by
 * a handler or interrupt nested in the post, or taken by its receiver,
 * lies there now. */
static void settle_payload(const payload *pl, tern_status st, bool multicast)
{
    if (!pl->owned)
        return;
    if (multicast) {
        if (heap_check_owner(pl->owned, context()) != TERN_OK)
            return;
        for (size_t i = 0; i < n_blocks; i++)
            if (blocks[i].p == pl->owned)
                return;
    } else if (st == TERN_OK) {
        return;
    }
    verify(pl->owned, pl->size, "refused payload");
    if (n_blocks == MAX_BLOCKS) /* nested operations filled the table meanwhile */
        tern_free(pl->owned);
    else
        blocks[n_blocks++] = (block){pl->owned, pl->size, context()};
}

static void op_send(void)
{
    tern_task_id dst = fz_u8(&in) % ANY_TASK;
    /* INIT, FINAL and application ports; the TIMEOUT ports stay the
     * timers' own so their timing can be checked. */
    tern_port port = fz_u8(&in) % 14;
    if (port >= TERN_PORT_TIMEOUT0 && port < TERN_PORT_APP0)
        port = TERN_PORT_APP(port - TERN_PORT_TIMEOUT0);
    payload pl;
    choose_payload(&pl);
    /* Interrupts masked from the call to the check: one due meanwhile
     * would fire as the kernel unmasks them and post on its own. */
    tern_irq_state s = port_irq_save();
    tern_counters before = *tern_stats(); /* local: handlers nested in the send post too */
    tern_status st = tern_send(dst, port, pl.p, pl.len, pl.flags);
    check_post(&before, st, "tern_send");
    settle_payload(&pl, st, false);
    port_irq_restore(s);
}

static void op_post(void)
{
    uint8_t out = fz_u8(&in) % 5;
    payload pl;
    choose_payload(&pl);
    tern_task_id self = tern_self();
    tern_irq_state s = port_irq_save(); /* as in op_send */
    tern_counters before = *tern_stats();
    tern_status st = tern_post(out, pl.p, pl.len, pl.flags);
    if (self == TERN_NO_TASK) {
        CHECK(st == TERN_ESTATE, "tern_post outside a task gave %s", tern_status_name(st));
        settle_payload(&pl, st, false);
        port_irq_restore(s);
        return;
    }
    const tern_task_desc *d = tern_tasks[self].desc;
    bool multicast = out < d->n_out_ports && d->routes[out].kind == TERN_ROUTE_GROUP;
    if (multicast) {
        /* Each member is posted or dropped by a reason: the total moves by
         * at least the number of members. */
        const tern_counters *c = tern_stats();
        unsigned moved = c->posted - before.posted;
        for (int r = 0; r < TERN_DROP_REASONS; r++)
            moved += c->dropped[r] - before.dropped[r];
        unsigned n = app_group(d->routes[out].group)->n_members;
        CHECK(moved >= n, "group post to %u members moved the counters by %u", n, moved);
    } else {
        check_post(&before, st, "tern_post");
    }
    settle_payload(&pl, st, multicast);
    port_irq_restore(s);
}

static void op_timer(bool start)
{
    uint8_t k = fz_u8(&in) % (TERN_TIMERS_PER_TASK + 1);
    tern_time delay = fz_span(&in), period = fz_span(&in);
    tern_task_id self = tern_self();
    tern_time now = tern_now();
    uint32_t since = msg_next_seq;
    tern_status st = start ? tern_timer_start(k, delay, period) : tern_timer_cancel(k);
    if (self == TERN_NO_TASK) {
        CHECK(st == TERN_ESTATE, "timer outside a task gave %s", tern_status_name(st));
        return;
    }
    if (k >= TERN_TIMERS_PER_TASK) {
        CHECK(st == TERN_ERANGE, "timer %u gave %s", k, tern_status_name(st));
        return;
    }
    timer_log *t = &timers[self][k];
    if (st != TERN_OK) { /* a refused start leaves the timer as it was */
        CHECK(start && st == TERN_ERANGE && (delay > UINT64_MAX - now || period > UINT64_MAX - now - delay),
              "timer %u (delay %llu, period %llu) refused with %s", k, (unsigned long long)delay,
              (unsigned long long)period, tern_status_name(st));
        return;
    }
    *t = (timer_log){since, now, delay, start, false};
}

static void op_alloc(void)
{
    size_t size;
    switch (fz_u8(&in) % 4) {
    case 0: size = fz_u8(&in); break;
    case 1: size = fz_u16(&in) % (TERN_HEAP_SIZE + 64); break;
    case 2: size = SIZE_MAX - fz_u8(&in); break;
    default: size = 0; break;
    }
    uint8_t *p = tern_alloc(size);
    if (!p || n_blocks == MAX_BLOCKS) {
        if (p)
            tern_free(p);
        return;
    }
    CHECK(size <= TERN_HEAP_SIZE, "tern_alloc(%zu) succeeded on a %u-byte heap", size,
          TERN_HEAP_SIZE);
    blocks[n_blocks++] = (block){p, size, context()};
    fill(p, size);
}

static void op_free(void)
{
    block *b = pick_block();
    if (!b)
        return;
    verify(b->p, b->size, "free");
    tern_free(b->p);
    forget(b);
}

static void op_realloc(void)
{
    block *b = pick_block();
    size_t size = fz_u16(&in) % (TERN_HEAP_SIZE / 2);
    if (!b)
        return;
    uint8_t *q = tern_realloc(b->p, size);
    if (!q) {
        verify(b->p, b->size, "failed realloc"); /* the old block stays valid */
        return;
    }
    verify(q, size < b->size ? size : b->size, "realloc");
    b->p = q;
    b->size = size;
    fill(q, size);
}

static void op_finalize(void)
{
    tern_task_id id = fz_u8(&in) % ANY_TASK;
    tern_irq_state s = port_irq_save(); /* the state right after the call */
    tern_status st = tern_task_finalize(id);
    CHECK(st == TERN_OK || st == TERN_ENOTASK || st == TERN_ESTATE || st == TERN_EFULL,
          "finalize %u: %s", id, tern_status_name(st));
    /* No FINAL posted: the task must not wait for one forever. */
    CHECK(st != TERN_EFULL || tern_tasks[id].state != TASK_FINALIZING,
          "finalize %u refused with TERN_EFULL, task left finalizing", id);
    port_irq_restore(s);
}

static void op_take(tern_msg *m)
{
    if (!m)
        return;
    uint8_t *p = tern_take(m);
    if (!p || n_blocks == MAX_BLOCKS) {
        if (p)
            tern_free(p);
        return;
    }
    CHECK(heap_check_owner(p, context()) == TERN_OK, "taken payload not owned by the taker");
    blocks[n_blocks++] = (block){p, m->len, context()};
    fill(p, m->len);
}

static void run_op(tern_msg *current)
{
    bool in_task = tern_self() != TERN_NO_TASK;
    uint8_t op = fz_u8(&in) % OP_COUNT;
    switch (op) {
    case OP_SEND: op_send(); break;
    case OP_POST: op_post(); break;
    case OP_WORK: host_work(fz_u8(&in) * 4u); break;
    case OP_IRQ: {
        uint16_t dt = fz_u16(&in) % 2000;
        if (pending_irqs < 60) {
            pending_irqs++;
            host_inject(host_time() + dt, isr_ops, NULL);
        }
        break;
    }
    case OP_TIMER: op_timer(true); break;
    case OP_CANCEL: op_timer(false); break;
    case OP_ALLOC:
    case OP_FREE:
    case OP_REALLOC:
    case OP_TAKE: {
        /* Masked: an interrupt fired as the heap unmasks them could change
         * the harness's block table under a pointer into it. */
        tern_irq_state s = port_irq_save();
        if (op == OP_ALLOC)
            op_alloc();
        else if (op == OP_FREE)
            op_free();
        else if (op == OP_REALLOC)
            op_realloc();
        else
            op_take(current);
        port_irq_restore(s);
        break;
    }
    case OP_FINALIZE: op_finalize(); break;
    case OP_RUN: {
        uint16_t dt = fz_u16(&in) % 5000;
        if (!in_task && !sched_in_isr() && !budget_spent)
            host_run_until(host_time() + dt);
        break;
    }
    }
}

static void run_ops(unsigned n, tern_msg *current)
{
    for (unsigned i = 0; i < n && in.n && !budget_spent; i++)
        run_op(current);
}

static void isr_ops(void *arg)
{
    (void)arg;
    pending_irqs--;
    run_ops(1 + fz_u8(&in) % 2, NULL);
}

/* --- the handler every task runs --------------------------------------------------- */

static void check_timeout(tern_task_id self, const tern_msg *m)
{
    if (m->port < TERN_PORT_TIMEOUT0 || m->port >= TERN_PORT_TIMEOUT0 + TERN_TIMERS_PER_TASK)
        return;
    timer_log *t = &timers[self][m->port - TERN_PORT_TIMEOUT0];
    if (m->seq < t->since)
        return;
    CHECK(t->armed, "task %u: TIMEOUT%u from a timer never started or cancelled", self,
          m->port - TERN_PORT_TIMEOUT0);
    if (!t->fired) {
        tern_time due = t->delay > UINT64_MAX - t->armed_at ? UINT64_MAX : t->armed_at + t->delay;
        /* The stamp is the clock's low 32 bits: its full value is the last
         * time before now with those bits (the message waited < 2^32 ticks). */
        tern_time now = tern_now();
        tern_time posted = now - (uint32_t)((uint32_t)now - m->posted);
        CHECK(posted >= due, "task %u: timer %u due at %llu fired at %llu", self,
              m->port - TERN_PORT_TIMEOUT0, (unsigned long long)due, (unsigned long long)posted);
        t->fired = true;
    }
}

static tern_status handler(void *state, tern_msg *m)
{
    (void)state;
    tern_task_id self = tern_self();
    CHECK(self == m->dst && tern_tasks[self].state != TASK_EMPTY, "task %u ran a message for %u",
          self, m->dst);
    CHECK(m->port < TERN_PORT_APP0 + tern_tasks[self].desc->n_in_ports,
          "task %u got port %u it does not have", self, m->port);
    if (m->seq < MAX_SEQ) { /* a periodic timer may post more: those go unchecked */
        CHECK(!(seen[m->seq / 8] & (1u << (m->seq % 8))), "message %u dispatched twice", m->seq);
        seen[m->seq / 8] |= (uint8_t)(1u << (m->seq % 8));
    }
    if (++handler_calls > HANDLER_BUDGET)
        budget_spent = true;
    check_timeout(self, m);
    if ((m->flags & TERN_MSG_HEAP) && m->payload)
        verify(m->payload, m->len, "heap payload on arrival");
    run_ops(fz_u8(&in) % 4, m);
    /* The kernel's rule, as the handler returns: a FINAL to a finalizing
     * task ends it (also a sent one, if the handler finalized its task). */
    if (m->port == TERN_PORT_FINAL && tern_tasks[self].state == TASK_FINALIZING) {
        /* What the task still owns is reclaimed and reported as leaks when
         * this handler returns; its timers are cancelled. */
        for (size_t i = 0; i < n_blocks;)
            if (blocks[i].owner == self) {
                expected_leaks++;
                forget(&blocks[i]);
            } else {
                i++;
            }
        for (int k = 0; k < TERN_TIMERS_PER_TASK; k++)
            timers[self][k].armed = false;
    }
    return TERN_OK;
}

/* --- the application from the first bytes ------------------------------------------- */

static void build_app(void)
{
    memset(tasks, 0, sizeof tasks);
    bool used[TERN_MAX_TASKS] = {false};
    uint8_t n = 1 + fz_u8(&in) % MAX_APP_TASKS;
    for (uint8_t i = 0; i < n; i++) {
        tern_task_id id = fz_u8(&in) % TERN_MAX_TASKS;
        while (used[id])
            id = (tern_task_id)((id + 1) % TERN_MAX_TASKS);
        used[id] = true;
        tasks[i] = (tern_task_desc){.name = "t", .id = id, .handler = handler,
                                    .priority = fz_u8(&in) % TERN_PRIO_LEVELS,
                                    .n_in_ports = fz_u8(&in) % 4};
    }
    uint8_t n_groups = fz_u8(&in) % 3;
    for (uint8_t g = 0; g < n_groups; g++) {
        uint8_t k = 0;
        for (uint8_t m = fz_u8(&in) % 4; m > 0; m--) {
            const tern_task_desc *t = &tasks[fz_u8(&in) % n];
            if (t->n_in_ports)
                members[g][k++] = (tern_endpoint){t->id, TERN_PORT_APP(fz_u8(&in) % t->n_in_ports)};
        }
        groups[g] = (tern_group_desc){g, k, members[g]};
    }
    for (uint8_t i = 0; i < n; i++) {
        tasks[i].n_out_ports = fz_u8(&in) % 4;
        tasks[i].routes = routes[i];
        for (uint8_t r = 0; r < tasks[i].n_out_ports; r++) {
            const tern_task_desc *t = &tasks[fz_u8(&in) % n];
            uint8_t kind = fz_u8(&in) % 3;
            if (kind == TERN_ROUTE_GROUP && n_groups)
                routes[i][r] = (tern_route)TERN_TO_GROUP(fz_u8(&in) % n_groups);
            else if (kind == TERN_ROUTE_TASK && t->n_in_ports)
                routes[i][r] = (tern_route)TERN_TO_TASK(t->id, TERN_PORT_APP(fz_u8(&in) % t->n_in_ports));
            else
                routes[i][r] = (tern_route){TERN_ROUTE_NONE, 0, 0, 0};
        }
    }
    app = (tern_app_desc){"fuzz", tasks, n, groups, n_groups, 0, NULL};
}

/* --- the end of an input ----------------------------------------------------------- */

static unsigned probe_ok;
static void probe_pool(void *arg)
{
    tern_task_id id = (tern_task_id)(uintptr_t)arg;
    for (int i = 0; i <= TERN_MSG_POOL; i++)
        probe_ok += tern_send(id, TERN_PORT_APP(0), NULL, 0, 0) == TERN_OK;
}

static tern_status probe_handler(void *state, tern_msg *m)
{
    (void)state;
    (void)m;
    return TERN_OK;
}

static void finish(size_t heap_empty)
{
    budget_spent = true; /* no more operations: handlers only count */
    /* A FINAL refused for a full pool (TERN_EFULL) is retried once the
     * queue has drained. */
    for (int round = 0; round < 20; round++) {
        bool left = false;
        for (uint8_t i = 0; i < app.n_tasks; i++)
            if (tern_tasks[tasks[i].id].state != TASK_EMPTY) {
                (void)tern_task_finalize(tasks[i].id);
                left = true;
            }
        if (!left)
            break;
        host_run_until(host_time() + 10000); /* short: a periodic timer may still post */
    }
    host_run_until(host_time() + SETTLE);
    for (size_t i = 0; i < n_blocks;) { /* the main loop's and interrupts' blocks */
        CHECK(blocks[i].owner == CTX_KERNEL, "block of finalized task %u", blocks[i].owner);
        verify(blocks[i].p, blocks[i].size, "end");
        tern_free(blocks[i].p);
        forget(&blocks[i]);
    }
    const tern_counters *c = tern_stats();
    for (tern_task_id id = 0; id < TERN_MAX_TASKS; id++)
        CHECK(tern_tasks[id].state == TASK_EMPTY, "task %u outlived its FINAL", id);
    CHECK(c->queue_depth == 0 && c->stack_depth == 0, "queue %u, stack %u at the end",
          c->queue_depth, c->stack_depth);
    CHECK(handler_calls == c->dispatched, "%u handler calls, %u dispatched", handler_calls,
          c->dispatched);
    /* Posted and never dispatched: dropped because its task was finalized,
     * besides the posts refused for that reason. */
    CHECK(c->posted - c->dispatched + refused_finalized <= c->dropped[TERN_DROP_FINALIZED],
          "posted %u, dispatched %u, dropped as finalized %u (%u refused)", c->posted,
          c->dispatched, c->dropped[TERN_DROP_FINALIZED], refused_finalized);
    CHECK(c->leaks_reported == expected_leaks, "%u leaks reported, tasks left %u blocks",
          c->leaks_reported, expected_leaks);
    CHECK(tern_heap_free_bytes() == heap_empty && tern_heap_largest_free() == heap_empty,
          "heap not back to its baseline: %zu free, %zu largest, of %zu", tern_heap_free_bytes(),
          tern_heap_largest_free(), heap_empty);

    /* The pool: a fresh one-task app; an interrupt posts until the pool is
     * empty. Its INIT holds one message, so TERN_MSG_POOL - 1 fit. */
    static const tern_task_desc probe_task[] = {
        {.name = "probe", .id = 0, .handler = probe_handler, .n_in_ports = 1}};
    static const tern_app_desc probe_app = {"probe", probe_task, 1, NULL, 0, 0, NULL};
    app_reset();
    CHECK(tern_app_start(&probe_app, NULL) == TERN_OK, "probe app refused");
    probe_ok = 0;
    host_inject(host_time(), probe_pool, (void *)(uintptr_t)0);
    host_run_until(host_time() + SETTLE);
    CHECK(probe_ok == TERN_MSG_POOL - 1, "pool holds %u free messages, not %u", probe_ok + 1,
          TERN_MSG_POOL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in = (fz_reader){data, size};
    uint64_t start = fz_u8(&in) & 1 ? ((uint64_t)1 << 32) - fz_u16(&in) : 0; /* across a wrap */
    build_app();
    memset(timers, 0, sizeof timers);
    memset(seen, 0, sizeof seen);
    n_blocks = 0;
    handler_calls = expected_leaks = refused_finalized = pending_irqs = 0;
    next_pattern = 0;
    budget_spent = false;

    host_reset(start);
    tern_init();
    size_t heap_empty = tern_heap_free_bytes();
    tern_app_error err;
    CHECK(tern_app_start(&app, &err) == TERN_OK, "app refused: %s", err.text);
    while (in.n && !budget_spent)
        run_op(NULL);
    finish(heap_empty);
    return 0;
}
