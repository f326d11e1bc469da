/* A processor that dies while another keeps sending to it (kernel/remote.c's
 * tern_remote_nack; tests/sim/test_peer_down.py). Three modules of one
 * node: `sender` on module 1 (bus address 0) posts a numbered message to
 * `sink_b` on module 2 (address 1) and one to `sink_c` on module 3
 * (address 2) every SEND_MS; tern-sim halts module 2 midway. Module 3 has
 * no timer and is allowed to power down: each message wakes it, and it
 * must never be taken for dead.
 *
 * Each sink checks the numbers (in order, none twice); sink_b prints each
 * (its last line says what it handled before it died). After N_TICKS the
 * sender says bye to sink_c, prints its counters and exits; sink_c prints
 * its own on the bye and exits. Exit 0, or 4 on a failed check. */
#include "procbus.h"
#include "procbus_power.h"
#include "procbus_remote.h"
#include "tern/port.h"
#include "tern/power.h"
#include "tern/tern.h"

#define SEND_MS 2
#define N_TICKS 45 /* 10 ms + 45 x 2 ms: module 2 dies at 41 ms (the test's halt) */
#define BYE 0xB0B

enum { T_SEND, T_SINK_B, T_SINK_C, N_TASKS };
_Static_assert(N_TASKS <= TERN_MAX_TASKS, "CMakeLists.txt sets TERN_MAX_TASKS");

#define PORT_IN TERN_PORT_APP(0)
#define TIMER_TICK 0

static struct {
    uint16_t sent[2], refused[2]; /* sender: per out port, posts accepted and refused */
    tern_status last[2];          /* ...the last refusal's status */
    uint16_t ticks;
    bool down_asked, bye;
    uint16_t next; /* a sink: the number due */
} me;

static uint8_t here(void) { return tern_remote_address(); }
static uint32_t ms(uint32_t n) { return (uint32_t)((uint64_t)tern_clock_hz() * n / 1000u); }

static _Noreturn void bad(const char *what, unsigned a, unsigned b)
{
    tern_printf("peer %u: bad %s %u %u\n", here(), what, a, b);
    port_exit(4);
}

static _Noreturn void finish(void)
{
    const tern_remote_counters *r = tern_remote_stats();
    const procbus_counters *b = procbus_stats();
    tern_printf("peer %u: summary sent_b=%u refused_b=%u last_b=%s sent_c=%u refused_c=%u "
                "peer_down=%lu tx_frames=%lu queue_depth=%u max_queue=%u nacked=%u down1=%u "
                "down2=%u next=%u downs=%lu rx_frames=%lu\n",
                here(), me.sent[0], me.refused[0], tern_status_name(me.last[0]), me.sent[1],
                me.refused[1], (unsigned long)r->dropped[TERN_REMOTE_DROP_PEER_DOWN],
                (unsigned long)r->tx_frames, r->queue_depth, r->max_queue_depth, b->tx_nacked,
                tern_remote_peer_down(1), tern_remote_peer_down(2), me.next,
                (unsigned long)tern_power_get_stats()->downs, (unsigned long)r->rx_frames);
    port_exit(0);
}

static void post(uint8_t out, uint16_t n)
{
    tern_status st = tern_post(out, &n, sizeof n, 0); /* the bus manager copies it */
    if (st == TERN_OK) {
        me.sent[out]++;
    } else { /* counted by the bus manager, by reason */
        me.refused[out]++;
        me.last[out] = st;
    }
}

static tern_status sender(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_timer_start(TIMER_TICK, ms(10), ms(SEND_MS));
        return TERN_OK;
    }
    if (m->port != TERN_PORT_TIMEOUT(TIMER_TICK))
        return TERN_OK;
    if (!me.down_asked) { /* module 3 may power down whenever it has nothing to do */
        me.down_asked = procbus_power_request(2, true) == PROCBUS_OK;
        return TERN_OK;
    }
    if (me.ticks < N_TICKS) {
        post(0, me.ticks);
        post(1, me.ticks);
        me.ticks++;
    } else if (!me.bye) {
        me.bye = tern_post(1, &(uint16_t){BYE}, 2, 0) == TERN_OK;
    } else if (tern_remote_stats()->queue_depth == 0 && procbus_tx_free()) {
        finish();
    }
    return TERN_OK;
}

/* Numbers in order, none twice; no timer anywhere here. */
static tern_status sink(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_IN)
        return TERN_OK;
    const uint16_t *n = m->payload;
    if (m->len != sizeof *n)
        bad("length", m->len, 0);
    if (*n == BYE)
        finish();
    if (*n != me.next)
        bad("number", *n, me.next);
    me.next++;
    if (tern_self() == T_SINK_B)
        tern_printf("peer %u: got %u\n", here(), *n);
    return TERN_OK;
}

static const tern_route to_sinks[] = {TERN_TO_TASK(T_SINK_B, PORT_IN),
                                      TERN_TO_TASK(T_SINK_C, PORT_IN)};

static const tern_task_desc tasks[] = {
    {.name = "sender", .id = T_SEND, .priority = 2, .handler = sender, .module = TERN_MODULE(0),
     .n_out_ports = 2, .routes = to_sinks},
    {.name = "sink_b", .id = T_SINK_B, .priority = 2, .handler = sink, .module = TERN_MODULE(1),
     .n_in_ports = 1},
    {.name = "sink_c", .id = T_SINK_C, .priority = 2, .handler = sink, .module = TERN_MODULE(2),
     .n_in_ports = 1},
};
static const tern_app_desc app = {.name = "peer_down", .tasks = tasks, .n_tasks = N_TASKS,
                                  .n_modules = 3};

int main(void)
{
    tern_app_error err;
    tern_init();
    tern_status st = procbus_remote_attach();
    if (st != TERN_OK) {
        tern_printf("peer: no processor bus: %s\n", tern_status_name(st));
        return 2;
    }
    tern_power_init(TERN_POWER_BREAK_EVEN);
    if (procbus_power_init() != PROCBUS_OK) {
        tern_printf("peer: cannot claim the bus's power frames\n");
        return 2;
    }
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("peer: %s\n", err.text);
        return 1;
    }
    tern_run();
}
