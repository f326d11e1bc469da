/* A task moved between the two processors of a node while messages keep
 * coming (seed 002 V-D; tern/task_move.h, docs/migration.md).
 *
 * Module 1 (bus address 0) runs `counter` (movable), `send_a` and
 * `driver`; module 2 (address 1) runs `send_b` and `pinned` (not
 * movable); each runs its migrator (`mig_a`, `mig_b`). `send_a` and
 * `send_b` each post STREAM_N numbered messages to `counter`, one every
 * SEND_MS, wherever it is; the counter checks that each sender's numbers
 * come once and in order, in its own state, which travels with it. Its
 * state is its counts and `pad` bytes of a pattern it checks on arrival.
 * `driver` steps every STEP_MS through:
 *
 *   asks to move `pinned` (refused: TERN_EPINNED, by name); starts the
 *   counter's timer (TIMER_MS) and then moves it to module 2 before it
 *   fires: it fires once, on module 2; moves it back; tells it to refuse
 *   its next DESERIALIZE on module 2 and asks to move it there: it stays
 *   on module 1; then with MOVE_PAD_MAX/4, /2 and all of it as pad (CMakeLists.txt), there and back.
 *
 * With MOVE_MODULES_MAX > 2 (migrate_big) the node may have up to that many
 * processors: the image runs on as many as the bus has (procbus_count()),
 * and each module beyond the second runs only its migrator and an idle,
 * pinned task, so that every move waits for their FROZEN replies too
 * (migration latency against the number of modules, docs/migration.md).
 * The steps, the streams and the watchdog stretch by n / 2: a 1 kB move
 * crosses n TDMA slots per frame.
 *
 * Every move's outcome is printed on every module; the source prints its
 * latency on its own clock, from the request to the destination's result
 * (cycles and simulated microseconds). A module exits 0 once its checks
 * passed and its work is done, 4 on a failed check ("bad"), 5 when the
 * watchdog expires. */
#include <stddef.h>
#include <string.h>

#include "procbus.h"
#include "procbus_remote.h"
#include "tern/port.h"
#include "tern/task_move.h"
#include "tern/tern.h"

#define STREAM_N 260
#define SEND_MS 3
#define STEP_MS 40
#define TIMER_MS 45
#define WATCHDOG_MS 4000

#ifndef MOVE_MODULES_MAX
#define MOVE_MODULES_MAX 2
#endif

/* Modules 3.. (bus addresses 2..): T_EXTRA + 2 (k - 2) is module k's migrator,
 * the next id its idle task. */
enum { T_MIG_A, T_MIG_B, T_COUNTER, T_SEND_A, T_SEND_B, T_DRIVER, T_PINNED, T_EXTRA };
#define N_TASKS_MAX (T_EXTRA + 2 * (MOVE_MODULES_MAX - 2))
_Static_assert(N_TASKS_MAX <= TERN_MAX_TASKS, "CMakeLists.txt sets TERN_MAX_TASKS");
_Static_assert(MOVE_MODULES_MAX <= 5 && MOVE_MODULES_MAX <= TERN_MAX_OUT_PORTS,
               "the driver's ports: the counter and a bye per other module");

static const tern_task_id migrators[MOVE_MODULES_MAX] = {T_MIG_A, T_MIG_B,
#if MOVE_MODULES_MAX > 2
                                                         T_EXTRA, T_EXTRA + 2, T_EXTRA + 4
#endif
};
static uint8_t n_modules = 2; /* the bus's processors, at most MOVE_MODULES_MAX */

#define IN_DATA TERN_PORT_APP(0) /* counter: the stream */
#define IN_CTRL TERN_PORT_APP(1) /* counter: the driver's commands; pinned: bye */
#define TIMER_STEP 0
#define TIMER_CHECK 1

typedef struct {
    uint8_t who; /* sender 0 (send_a) or 1 (send_b); a command for IN_CTRL */
    uint8_t lo, hi;
} note;

/* The counter's state: what SERIALIZE sends and DESERIALIZE restores. */
typedef struct {
    uint16_t next[2]; /* the next number due from each sender */
    uint16_t handled;
    uint16_t pad_len;
    uint8_t refuse_on; /* refuse the next DESERIALIZE on bus address refuse_on - 1 (0: none) */
    uint8_t arrivals;
    uint8_t pad[MOVE_PAD_MAX];
} counter_state;
#define HEAD_LEN offsetof(counter_state, pad)

static counter_state cs;

static struct {
    uint8_t step, byes;
    uint16_t sent, retries; /* this module's sender */
    bool complete;          /* module 1: the counter saw everything, here */
    bool bye;               /* module 2: the driver is done */
    bool arrived;           /* the counter arrived here: print it */
    uint16_t checks;
    /* outcomes of migrations, printed by check(): the migrator's stack is deep */
    struct {
        tern_task_id t;
        uint8_t o, why;
        bool timed;
        uint16_t state_len;
        tern_time ticks;
    } out[4];
    uint8_t n_out;
    uint32_t timed_seen;
} me;

static uint32_t ms(uint32_t n) { return (uint32_t)((uint64_t)tern_clock_hz() * n / 1000u); }
static uint16_t u16(const note *n) { return (uint16_t)(n->lo | n->hi << 8); }
static uint8_t here(void) { return tern_remote_address(); }
static uint8_t pattern(uint16_t i, uint16_t len) { return (uint8_t)(i * 7u + len); }
/* n_modules / 2 times n: the same at two modules as before */
static uint16_t stretch(uint16_t n) { return (uint16_t)(n * n_modules / 2u); }

static _Noreturn void finish(int status)
{
    const tern_remote_counters *r = tern_remote_stats();
    const tern_mig_stats *g = &tern_move_engine()->stats;
    const tern_move_stats *v = tern_move_counters();
    const tern_counters *k = tern_stats();
    tern_printf("migrate %u: summary moved=%lu stayed=%lu killed=%lu requests_refused=%lu "
                "bad_messages=%lu transport_errors=%lu frozen_msgs=%lu carried_msgs=%lu "
                "forwarded_msgs=%lu lost_msgs=%lu deserialize_refused=%lu held=%lu "
                "tx_frames=%lu rx_frames=%lu retries=%u",
                here(), (unsigned long)g->moved, (unsigned long)g->stayed,
                (unsigned long)g->killed, (unsigned long)g->refused,
                (unsigned long)g->bad_messages, (unsigned long)g->transport_errors,
                (unsigned long)v->frozen_msgs, (unsigned long)v->carried_msgs,
                (unsigned long)v->forwarded_msgs, (unsigned long)v->lost_msgs,
                (unsigned long)v->deserialize_refused, (unsigned long)k->held,
                (unsigned long)r->tx_frames, (unsigned long)r->rx_frames, me.retries);
    for (uint8_t i = 0; i < TERN_REMOTE_DROP_REASONS; i++)
        tern_printf(" %s=%lu", tern_remote_drop_name((tern_remote_drop_reason)i),
                    (unsigned long)r->dropped[i]);
    tern_printf(" kernel_no_task=%lu kernel_no_port=%lu kernel_pool_full=%lu "
                "kernel_no_memory=%lu kernel_finalized=%lu stack=%lu rx_deferred=%lu\n",
                (unsigned long)k->dropped[TERN_DROP_NO_TASK],
                (unsigned long)k->dropped[TERN_DROP_NO_PORT],
                (unsigned long)k->dropped[TERN_DROP_POOL_FULL],
                (unsigned long)k->dropped[TERN_DROP_NO_MEMORY],
                (unsigned long)k->dropped[TERN_DROP_FINALIZED], (unsigned long)k->max_stack_bytes,
                (unsigned long)r->rx_deferred);
    port_exit(status);
}

static _Noreturn void bad(const char *what, unsigned a, unsigned b)
{
    tern_printf("migrate %u: bad %s %u %u\n", here(), what, a, b);
    finish(4);
}

/* A heap payload: ownership travels with it. */
static tern_status post(uint8_t out, uint8_t who, uint16_t v)
{
    note *n = tern_alloc(sizeof *n);
    if (!n)
        return TERN_ENOMEM;
    *n = (note){who, (uint8_t)v, (uint8_t)(v >> 8)};
    tern_status st = tern_post(out, n, sizeof *n, TERN_MSG_HEAP);
    if (st != TERN_OK)
        tern_free(n);
    return st;
}

/* --- counter ------------------------------------------------------------------------- */

static tern_status counter_arrive(const tern_msg *m)
{
    const counter_state *in = m->payload;
    if (m->len < HEAD_LEN || m->len != HEAD_LEN + in->pad_len || in->pad_len > MOVE_PAD_MAX)
        bad("state length", m->len, 0);
    if (in->refuse_on == here() + 1) {
        tern_printf("migrate %u: counter refuses DESERIALIZE (as told)\n", here());
        return TERN_EINVAL; /* nothing of it taken: the task stays at the source */
    }
    for (uint16_t i = 0; i < in->pad_len; i++)
        if (in->pad[i] != pattern(i, in->pad_len))
            bad("pad", i, in->pad[i]);
    memcpy(&cs, in, m->len);
    cs.refuse_on = 0;
    cs.arrivals++;
    me.arrived = true; /* printed by the next handler: the stack is deep here */
    return TERN_OK;
}

static void counter_ctrl(const note *n)
{
    uint16_t v = u16(n);
    switch (n->who) {
    case 'P':
        cs.pad_len = v;
        for (uint16_t i = 0; i < v; i++)
            cs.pad[i] = pattern(i, v);
        break;
    case 'T':
        tern_timer_start(0, ms(v), 0);
        tern_printf("migrate %u: counter timer started, %u ms\n", here(), v);
        break;
    case 'R':
        cs.refuse_on = (uint8_t)(v + 1);
        break;
    default:
        bad("command", n->who, v);
    }
}

static tern_status counter(void *state, tern_msg *m)
{
    (void)state;
    const note *n = m->payload;
    if (me.arrived && m->port != TERN_PORT_DESERIALIZE) {
        me.arrived = false;
        tern_printf("migrate %u: counter arrived handled=%u a=%u b=%u pad=%u\n", here(),
                    cs.handled, cs.next[0], cs.next[1], cs.pad_len);
    }
    switch (m->port) {
    case TERN_PORT_SERIALIZE:
        return tern_move_serialized(&cs, (uint16_t)(HEAD_LEN + cs.pad_len));
    case TERN_PORT_DESERIALIZE:
        return counter_arrive(m);
    case TERN_PORT_TIMEOUT(0):
        tern_printf("migrate %u: counter timer fired on module %u handled=%u\n", here(), here(),
                    cs.handled);
        return TERN_OK;
    case IN_CTRL:
        counter_ctrl(n);
        return TERN_OK;
    case IN_DATA:
        if (m->len != sizeof *n || n->who > 1 || u16(n) != cs.next[n->who])
            bad("stream", n->who, u16(n));
        cs.next[n->who]++;
        if (++cs.handled == 2 * stretch(STREAM_N)) {
            tern_printf("migrate %u: counter a=%u b=%u in order, handled=%u, arrivals=%u\n",
                        here(), cs.next[0], cs.next[1], cs.handled, cs.arrivals);
            if (here() != 0)
                bad("counter ended on module", here(), 0);
            me.complete = true;
        }
        return TERN_OK;
    default:
        return TERN_OK;
    }
}

/* --- senders ------------------------------------------------------------------------- */

static tern_status sender(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_timer_start(TIMER_STEP, ms(20), ms(SEND_MS));
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_STEP) && me.sent < stretch(STREAM_N)) {
        tern_status st = post(0, here(), me.sent);
        if (st == TERN_EFULL || st == TERN_ENOMEM)
            me.retries++; /* the same number at the next tick */
        else if (st != TERN_OK)
            bad("send", me.sent, st);
        else if (++me.sent == stretch(STREAM_N))
            tern_timer_cancel(TIMER_STEP);
    }
    return TERN_OK;
}

/* --- driver (module 1) and pinned (module 2) ---------------------------------------- */

static void moved(tern_task_id t, tern_mig_outcome o, tern_status why)
{
    const tern_move_stats *v = tern_move_counters();
    if (me.n_out == sizeof me.out / sizeof me.out[0])
        bad("outcomes not printed", t, o);
    me.out[me.n_out].t = t;
    me.out[me.n_out].o = (uint8_t)o;
    me.out[me.n_out].why = (uint8_t)why;
    me.out[me.n_out].timed = v->timed != me.timed_seen && v->last_task == t;
    me.timed_seen = v->timed;
    me.out[me.n_out].state_len = v->last_state_len;
    me.out[me.n_out].ticks = v->last_ticks;
    me.n_out++;
}

static void print_outcomes(void)
{
    static const char *const names[] = {"moved", "stayed", "lost", "refused"};
    for (uint8_t i = 0; i < me.n_out; i++) {
        tern_printf("migrate %u: %s %s (%s) now on module %u", here(), tern_task_name(me.out[i].t),
                    names[me.out[i].o], tern_status_name((tern_status)me.out[i].why),
                    tern_remote_module_of(me.out[i].t));
        if (me.out[i].timed)
            tern_printf(" state %u bytes latency %lu cycles %lu us", me.out[i].state_len,
                        (unsigned long)tern_ticks_to_cycles(me.out[i].ticks),
                        (unsigned long)(me.out[i].ticks * 1000000u / tern_clock_hz()));
        tern_printf("\n");
    }
    me.n_out = 0;
}

/* A command to the counter (or bye to pinned); false: no room now, the
 * step is tried again shortly. */
static bool ctrl(uint8_t out, char cmd, uint16_t v)
{
    tern_status st = post(out, (uint8_t)cmd, v);
    if (st == TERN_EFULL || st == TERN_ENOMEM) {
        me.step--;
        me.retries++;
        tern_timer_start(TIMER_STEP, ms(3), 0);
        return false;
    }
    if (st != TERN_OK)
        bad("ctrl", (uint8_t)cmd, st);
    return true;
}

static void request(uint8_t dst)
{
    tern_status st = tern_move_request(T_COUNTER, dst);
    if (st != TERN_OK)
        bad("request", dst, st);
}

static void step(void)
{
    switch (me.step++) {
    case 0: {
        if (!ctrl(0, 'T', TIMER_MS))
            return;
        tern_status st = tern_move_request(T_PINNED, 0);
        tern_printf("migrate 0: move 'pinned': %s: %s\n", tern_status_name(st), tern_move_error());
        break;
    }
    case 1: request(1); break; /* the timer fires after this, on module 2 */
    case 2: request(0); break;
    case 3:
        if (!ctrl(0, 'R', 1))
            return;
        break;
    case 4: request(1); break; /* refused by DESERIALIZE: stays here */
    case 5: case 8: case 11: {
        static const uint16_t pads[] = {MOVE_PAD_MAX / 4, MOVE_PAD_MAX / 2, MOVE_PAD_MAX};
        if (!ctrl(0, 'P', pads[(me.step - 6) / 3]))
            return;
        break;
    }
    case 6: case 9: case 12: request(1); break;
    case 7: case 10: case 13: request(0); break;
    default: /* bye to pinned and every idle task */
        while (me.byes < n_modules - 1) {
            if (!ctrl((uint8_t)(1 + me.byes), 'B', 0))
                return;
            me.byes++;
        }
        return;
    }
    tern_timer_start(TIMER_STEP, ms(stretch(STEP_MS)), 0);
}

static bool finished(void)
{
    bool mine = here() == 0 ? me.complete && me.step > 14 : me.bye;
    bool sender_done = here() > 1 || me.sent == stretch(STREAM_N); /* modules 3.. send nothing */
    return mine && sender_done && !tern_mig_busy(tern_move_engine(), T_COUNTER) &&
           tern_remote_stats()->queue_depth == 0 && procbus_tx_free();
}

static void check(void)
{
    print_outcomes();
    if (finished())
        finish(0);
    if (++me.checks * 10u >= stretch(WATCHDOG_MS)) {
        tern_printf("migrate %u: unfinished after %u ms: step %u sent %u handled %u\n", here(),
                    stretch(WATCHDOG_MS), me.step, me.sent, cs.handled);
        finish(5);
    }
}

static tern_status driver(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_timer_start(TIMER_STEP, ms(50), 0);
        tern_timer_start(TIMER_CHECK, ms(10), ms(10));
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_STEP)) {
        step();
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_CHECK)) {
        check();
    }
    return TERN_OK;
}

static tern_status pinned(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT)
        tern_timer_start(TIMER_CHECK, ms(10), ms(10));
    else if (m->port == TERN_PORT_TIMEOUT(TIMER_CHECK))
        check();
    else if (m->port == IN_CTRL)
        me.bye = true;
    return TERN_OK;
}

#define M1 TERN_MODULE(0)
#define M2 TERN_MODULE(1)

static const tern_route to_counter[] = {TERN_TO_TASK(T_COUNTER, IN_DATA)};
static const tern_route driver_routes[] = {
    TERN_TO_TASK(T_COUNTER, IN_CTRL), TERN_TO_TASK(T_PINNED, IN_CTRL),
#if MOVE_MODULES_MAX > 2
    TERN_TO_TASK(T_EXTRA + 1, IN_CTRL), TERN_TO_TASK(T_EXTRA + 3, IN_CTRL), TERN_TO_TASK(T_EXTRA + 5, IN_CTRL),
#endif
};

#define EXTRA(k, mig, idle)                                                                        \
    {.name = mig, .id = T_EXTRA + 2 * ((k) - 3), .priority = 0, .handler = tern_move_handler,     \
     .module = TERN_MODULE((k) - 1), .n_in_ports = TERN_MOVE_PORTS},                               \
    {.name = idle, .id = T_EXTRA + 2 * ((k) - 3) + 1, .priority = 1, .handler = pinned,            \
     .module = TERN_MODULE((k) - 1), .n_in_ports = 2}

/* Not const: main() sets the driver's ports and the app's size by the bus. */
static tern_task_desc tasks[N_TASKS_MAX] = {
    {.name = "mig_a", .id = T_MIG_A, .priority = 0, .handler = tern_move_handler, .module = M1,
     .n_in_ports = TERN_MOVE_PORTS},
    {.name = "mig_b", .id = T_MIG_B, .priority = 0, .handler = tern_move_handler, .module = M2,
     .n_in_ports = TERN_MOVE_PORTS},
    {.name = "counter", .id = T_COUNTER, .priority = 3, .handler = counter, .module = M1,
     .n_in_ports = 2, .flags = TERN_TASK_MOVABLE},
    {.name = "send_a", .id = T_SEND_A, .priority = 2, .handler = sender, .module = M1,
     .n_out_ports = 1, .routes = to_counter},
    {.name = "send_b", .id = T_SEND_B, .priority = 2, .handler = sender, .module = M2,
     .n_out_ports = 1, .routes = to_counter},
    {.name = "driver", .id = T_DRIVER, .priority = 1, .handler = driver, .module = M1,
     .n_out_ports = 2, .routes = driver_routes},
    {.name = "pinned", .id = T_PINNED, .priority = 1, .handler = pinned, .module = M2,
     .n_in_ports = 2},
#if MOVE_MODULES_MAX > 2
    EXTRA(3, "mig_c", "idle_c"), EXTRA(4, "mig_d", "idle_d"), EXTRA(5, "mig_e", "idle_e"),
#endif
};
static tern_app_desc app = {.name = "migrate", .tasks = tasks, .n_tasks = T_EXTRA, .n_modules = 2};

/* Not inlined: the 148-byte error record lives only while the app starts,
 * not under every handler of the run (docs/reliability.md); the
 * ATmega128's stack is short. 0, or main's exit status. */
static __attribute__((noinline)) int start(void)
{
    tern_app_error err;
    tern_init();
    tern_status st = procbus_remote_attach();
    if (st != TERN_OK) {
        tern_printf("migrate: no processor bus: %s\n", tern_status_name(st));
        return 2;
    }
    n_modules = procbus_count() < MOVE_MODULES_MAX ? procbus_count() : MOVE_MODULES_MAX;
    if (n_modules < 2) {
        tern_printf("migrate: %u processor(s) on the bus, 2 needed\n", procbus_count());
        return 2;
    }
    app.n_modules = n_modules;
    app.n_tasks = (uint8_t)(T_EXTRA + 2 * (n_modules - 2));
    tasks[T_DRIVER].n_out_ports = n_modules; /* the counter, then a bye per other module */
    tern_printf("migrate %u: board %s, model %s, %lu Hz, %u modules\n", here(), TERN_BOARD_NAME,
                TERN_MODEL_NAME, (unsigned long)tern_clock_hz(), n_modules);
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("migrate: %s\n", err.text);
        return 1;
    }
    st = tern_move_init(&app, migrators, moved);
    if (st != TERN_OK) {
        tern_printf("migrate: migrator: %s\n", tern_status_name(st));
        return 1;
    }
    return 0;
}

int main(void)
{
    int status = start();
    if (status)
        return status;
    tern_run();
}
