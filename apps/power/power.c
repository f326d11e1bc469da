/* Processor power-down and the idle policy (tern/power.h, seed 002 III-A and
 * appendix; docs/multiprocessor.md "Power"), on five modules of one node.
 *
 * Modules 1 and 2 (bus addresses 0, 1): `driver` asks module 2 to power
 * down when it has nothing to do (procbus_power_request), then posts
 * N_MSGS numbered messages to `sink` on module 2, GAP_MS apart, at times
 * when module 2 is powered down; `sink` checks each number (once, in
 * order) and sends it back to `back` on module 1, which checks it too.
 * Module 2 has no timer at all: between messages nothing is due, so it
 * powers down, and each bus frame wakes it. Then `driver` lets it stay up
 * and says bye.
 *
 * Modules 3, 4 and 5 (addresses 2..4) run the same load under the three
 * policies: break-even (T_be, the board's power-save residency), idle
 * only, and the deepest timed state always. `load` does LOAD_WORK cycles
 * of work and then sleeps a gap of T_be / 4, T_be / 2, 2 T_be or 3 T_be,
 * ROUNDS times each: the kernel's counts say which gaps went deep, and
 * tern-sim's energy which policy paid off.
 *
 * Each module prints a summary line; exit 0 when every check passed, 4 on a
 * failed one ("bad"), 5 when module 1's watchdog expires. */
#include "procbus.h"
#include "procbus_power.h"
#include "procbus_remote.h"
#include "tern/port.h"
#include "tern/power.h"
#include "tern/tern.h"

#define N_MSGS 20
#define GAP_MS 5
#define ROUNDS 40
#define LOAD_WORK 2000u /* cycles */
#define WATCHDOG_MS 1000

enum { T_DRIVER, T_BACK, T_SINK, T_LOAD_BE, T_LOAD_IDLE, T_LOAD_DEEP, N_TASKS };
_Static_assert(N_TASKS <= TERN_MAX_TASKS, "CMakeLists.txt sets TERN_MAX_TASKS");

#define PORT_IN TERN_PORT_APP(0)
#define TIMER_STEP 0
#define TIMER_CHECK 1

static struct {
    uint16_t next;      /* sink, back: the number due */
    uint16_t sent;      /* driver */
    uint16_t retries;   /* driver: the bus was busy */
    uint16_t gaps;      /* load: gaps slept */
    bool bye;           /* sink: the driver is done */
    uint16_t checks;
} me;

static uint8_t here(void) { return tern_remote_address(); }

static _Noreturn void finish(int status)
{
    const tern_power_stats *p = tern_power_get_stats();
    const tern_idle_stats *i = tern_idle_get_stats();
    const procbus_power_counters *c = procbus_power_stats();
    const tern_remote_counters *r = tern_remote_stats();
    tern_printf("power %u: summary policy=%u t_be=%lu downs=%lu deep=%lu shallow=%lu allowed=%lu "
                "forbidden=%lu idle_periods=%lu save_periods=%lu down_periods=%lu next=%u gaps=%u "
                "tx_requests=%u rx_down=%u rx_up=%u rx_bad=%u tx_frames=%lu rx_frames=%lu\n",
                here(), here() < 2 ? 0 : here() - 2,
                (unsigned long)port_board.sleep_states[1].residency, (unsigned long)p->downs,
                (unsigned long)p->deep, (unsigned long)p->shallow, (unsigned long)p->allowed,
                (unsigned long)p->forbidden, (unsigned long)i->state_periods[0],
                (unsigned long)i->state_periods[1], (unsigned long)i->state_periods[2], me.next,
                me.gaps, c->tx_requests, c->rx_down, c->rx_up, c->rx_bad,
                (unsigned long)r->tx_frames, (unsigned long)r->rx_frames);
    /* The clock's low 32 bits as the last line, fixed width, just before
     * the exit: against tern-sim's cycle count at the exit (summary.json),
     * what the clock lost or gained over the power-save sleeps
     * (test_power.py compares the modules). */
    uint32_t now = (uint32_t)tern_now();
    tern_printf("power %u: clock %010lu\n", here(), (unsigned long)now);
    port_exit(status);
}

static _Noreturn void bad(const char *what, unsigned a, unsigned b)
{
    tern_printf("power %u: bad %s %u %u\n", here(), what, a, b);
    finish(4);
}

static uint32_t ms(uint32_t n) { return (uint32_t)((uint64_t)tern_clock_hz() * n / 1000u); }

/* A number to the task behind out port 0; false: no room, try again. */
static bool post(uint16_t n)
{
    tern_status st = tern_post(0, &n, sizeof n, 0); /* the bus manager copies it */
    if (st == TERN_EFULL || st == TERN_ENOMEM)
        return false;
    if (st != TERN_OK)
        bad("post", n, st);
    return true;
}

static void check_number(const tern_msg *m)
{
    const uint16_t *n = m->payload;
    if (m->len != sizeof *n || *n != me.next)
        bad("number", m->len == sizeof *n ? *n : 0xFFFF, me.next);
    me.next++;
}

/* --- modules 1 and 2 ------------------------------------------------------------------ */

static tern_status driver(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_timer_start(TIMER_STEP, ms(20), 0);
        tern_timer_start(TIMER_CHECK, ms(10), ms(10));
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_STEP)) {
        if (me.sent == 0 && me.retries == 0 && procbus_power_request(1, true) != PROCBUS_OK) {
            me.retries++; /* the bus was busy: again shortly */
            tern_timer_start(TIMER_STEP, ms(1), 0);
            return TERN_OK;
        }
        if (me.sent < N_MSGS) {
            if (post(me.sent))
                me.sent++;
            else
                me.retries++;
            tern_timer_start(TIMER_STEP, ms(GAP_MS), 0);
        } else if (me.sent == N_MSGS) {
            if (procbus_power_request(1, false) == PROCBUS_OK)
                me.sent++;
            tern_timer_start(TIMER_STEP, ms(1), 0);
        } else if (post(0xB0B)) {
            me.sent++; /* bye */
        } else {
            tern_timer_start(TIMER_STEP, ms(1), 0);
        }
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_CHECK)) {
        if (me.next == N_MSGS && me.sent == N_MSGS + 2 && tern_remote_stats()->queue_depth == 0 &&
            procbus_tx_free())
            finish(0);
        if (++me.checks * 10u >= WATCHDOG_MS)
            bad("unfinished: replies", me.next, me.sent);
    }
    return TERN_OK;
}

static tern_status back(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == PORT_IN)
        check_number(m);
    return TERN_OK;
}

/* No timer: nothing is ever due here, so with power-down allowed the
 * processor powers down whenever its messages are done. */
static tern_status sink(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_IN)
        return TERN_OK;
    const uint16_t *n = m->payload;
    if (m->len == sizeof *n && *n == 0xB0B) {
        if (me.next != N_MSGS || tern_power_down_allowed())
            bad("bye before the end", me.next, tern_power_down_allowed());
        finish(0);
    }
    check_number(m);
    if (!post(*n))
        bad("reply", *n, 0); /* the bus manager queues it: room for N_MSGS */
    return TERN_OK;
}

/* --- modules 3 to 5 ------------------------------------------------------------------- */

static tern_status load(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT && m->port != TERN_PORT_TIMEOUT(TIMER_STEP))
        return TERN_OK;
    if (me.gaps == 4 * ROUNDS)
        finish(0);
    port_work(LOAD_WORK);
    /* T_be / 4, T_be / 2, 2 T_be, 3 T_be in turn */
    static const uint8_t quarters[] = {1, 2, 8, 12};
    tern_time t_be = port_board.sleep_states[1].residency;
    tern_timer_start(TIMER_STEP, t_be * quarters[me.gaps % 4] / 4, 0);
    me.gaps++;
    return TERN_OK;
}

static const tern_route to_sink[] = {TERN_TO_TASK(T_SINK, PORT_IN)};
static const tern_route to_back[] = {TERN_TO_TASK(T_BACK, PORT_IN)};

static const tern_task_desc tasks[] = {
    {.name = "driver", .id = T_DRIVER, .priority = 2, .handler = driver, .module = TERN_MODULE(0),
     .n_out_ports = 1, .routes = to_sink},
    {.name = "back", .id = T_BACK, .priority = 3, .handler = back, .module = TERN_MODULE(0),
     .n_in_ports = 1},
    {.name = "sink", .id = T_SINK, .priority = 2, .handler = sink, .module = TERN_MODULE(1),
     .n_in_ports = 1, .n_out_ports = 1, .routes = to_back},
    {.name = "load_be", .id = T_LOAD_BE, .priority = 1, .handler = load, .module = TERN_MODULE(2)},
    {.name = "load_idle", .id = T_LOAD_IDLE, .priority = 1, .handler = load, .module = TERN_MODULE(3)},
    {.name = "load_deep", .id = T_LOAD_DEEP, .priority = 1, .handler = load, .module = TERN_MODULE(4)},
};
static const tern_app_desc app = {.name = "power", .tasks = tasks, .n_tasks = N_TASKS, .n_modules = 5};

int main(void)
{
    tern_app_error err;
    tern_init();
    tern_status st = procbus_remote_attach();
    if (st != TERN_OK) {
        tern_printf("power: no processor bus: %s\n", tern_status_name(st));
        return 2;
    }
    static const tern_power_policy policies[] = {TERN_POWER_BREAK_EVEN, TERN_POWER_IDLE_ONLY,
                                                 TERN_POWER_DEEPEST};
    tern_power_init(here() < 2 ? TERN_POWER_BREAK_EVEN : policies[(here() - 2) % 3]);
    if (procbus_power_init() != PROCBUS_OK) {
        tern_printf("power: cannot claim the bus's power frames\n");
        return 2;
    }
    tern_printf("power %u: board %s, model %s, %lu Hz, T_be %lu cycles\n", here(), TERN_BOARD_NAME,
                TERN_MODEL_NAME, (unsigned long)tern_clock_hz(),
                (unsigned long)port_board.sleep_states[1].residency);
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("power: %s\n", err.text);
        return 1;
    }
    tern_run();
}
