/* A processor that dies mid-migration (issue 13; tern/migrate.h's
 * timeouts). Module 1 (bus address 0) runs `counter` (movable, 1 kB of
 * state), `send_a` and `driver`; module 2 (address 1) runs `send_b`. Both senders post a numbered message to the counter every
 * SEND_MS, wherever it is; the counter checks each sender's order. At
 * MOVE_MS the driver asks to move the counter to module 2. tern-sim halts
 * one module at a time the test chooses (a node's `halt`): before the
 * request, or while the STATE fragments are on the bus.
 *
 * Every migration outcome is printed with its status; at END_MS each
 * living module prints where the counter is, what it handled, and the
 * counters that account for every message (migrator, bus manager, kernel),
 * then exits 0; 4 on a failed check. */
#include <string.h>

#include "procbus.h"
#include "procbus_remote.h"
#include "tern/port.h"
#include "tern/task_move.h"
#include "tern/tern.h"

#define PAD 1000
#define SEND_MS 2
#define MOVE_MS 50
#define END_MS 500 /* past every deadline: 100 ms at the source, 300 ms elsewhere (CMakeLists.txt) */

enum { T_MIG_A, T_MIG_B, T_COUNTER, T_SEND_A, T_SEND_B, T_DRIVER, N_TASKS };
_Static_assert(N_TASKS <= TERN_MAX_TASKS, "CMakeLists.txt sets TERN_MAX_TASKS");

static const tern_task_id migrators[] = {T_MIG_A, T_MIG_B};

#define IN_DATA TERN_PORT_APP(0)
#define TIMER_TICK 0

typedef struct {
    uint16_t next[2]; /* the next number due from each sender */
    uint16_t handled;
    uint8_t pad[PAD];
} counter_state;

static counter_state cs;

static struct {
    uint16_t sent, refused; /* this module's sender: posts accepted, refused (with a status) */
    tern_status last_refusal;
    uint32_t ticks;
} me;

static uint32_t ms(uint32_t n) { return (uint32_t)((uint64_t)tern_clock_hz() * n / 1000u); }
static uint8_t here(void) { return tern_remote_address(); }

static _Noreturn void bad(const char *what, unsigned a, unsigned b)
{
    tern_printf("halt %u: bad %s %u %u\n", here(), what, a, b);
    port_exit(4);
}

static void report(void)
{
    const tern_mig_stats *g = &tern_move_engine()->stats;
    const tern_move_stats *v = tern_move_counters();
    const tern_remote_counters *r = tern_remote_stats();
    const tern_counters *k = tern_stats();
    uint8_t at = tern_remote_module_of(T_COUNTER);
    /* where it is not, cs still holds what it had when it left (or nothing) */
    tern_printf("halt %u: counter on module %u, its state here handled=%u a=%u b=%u\n", here(),
                at == TERN_REMOTE_NONE ? 255u : at, cs.handled, cs.next[0], cs.next[1]);
    tern_printf("halt %u: summary moved=%lu stayed=%lu killed=%lu timeouts=%lu "
                "partial_dropped=%lu transport_errors=%lu lost_msgs=%lu mig_lost_msgs=%lu "
                "sent=%u refused=%u last_refusal=%s task_killed=%lu queue_depth=%u "
                "kernel_no_task=%lu kernel_pool_full=%lu kernel_finalized=%lu queue_full=%lu\n",
                here(), (unsigned long)g->moved, (unsigned long)g->stayed,
                (unsigned long)g->killed, (unsigned long)g->timeouts,
                (unsigned long)g->partial_dropped, (unsigned long)g->transport_errors,
                (unsigned long)v->lost_msgs, (unsigned long)g->lost_msgs, me.sent, me.refused,
                tern_status_name(me.last_refusal),
                (unsigned long)r->dropped[TERN_REMOTE_DROP_KILLED], r->queue_depth,
                (unsigned long)k->dropped[TERN_DROP_NO_TASK],
                (unsigned long)k->dropped[TERN_DROP_POOL_FULL],
                (unsigned long)k->dropped[TERN_DROP_FINALIZED],
                (unsigned long)r->dropped[TERN_REMOTE_DROP_QUEUE_FULL]);
    port_exit(0);
}

/* --- counter: checks each sender's order, in its state, which travels ----------------- */

static tern_status counter(void *state, tern_msg *m)
{
    (void)state;
    const uint8_t *n = m->payload;
    switch (m->port) {
    case TERN_PORT_INIT:
        for (uint16_t i = 0; i < PAD; i++)
            cs.pad[i] = (uint8_t)(i * 7u);
        return TERN_OK;
    case TERN_PORT_SERIALIZE:
        return tern_move_serialized(&cs, sizeof cs);
    case TERN_PORT_DESERIALIZE:
        if (m->len != sizeof cs)
            bad("state length", m->len, 0);
        memcpy(&cs, m->payload, sizeof cs);
        tern_printf("halt %u: counter arrived handled=%u\n", here(), cs.handled);
        return TERN_OK;
    case IN_DATA: {
        if (m->len != 3 || n[0] > 1)
            bad("message", m->len, 0);
        uint16_t v = (uint16_t)(n[1] | n[2] << 8);
        if (v != cs.next[n[0]])
            bad("order", n[0], v);
        cs.next[n[0]]++;
        cs.handled++;
        return TERN_OK;
    }
    default:
        return TERN_OK;
    }
}

/* --- senders, driver, watch -------------------------------------------------------------- */

static tern_status sender(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_timer_start(TIMER_TICK, ms(10), ms(SEND_MS));
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_TICK)) {
        uint8_t *note = tern_alloc(3); /* a heap payload: it travels with the message */
        tern_status st = TERN_ENOMEM;
        if (note) {
            note[0] = here();
            note[1] = (uint8_t)me.sent;
            note[2] = (uint8_t)(me.sent >> 8);
            st = tern_post(0, note, 3, TERN_MSG_HEAP);
            if (st != TERN_OK)
                tern_free(note);
        }
        if (st == TERN_OK) {
            me.sent++;
        } else { /* counted by the kernel or the bus manager, by reason */
            me.refused++;
            me.last_refusal = st;
        }
        if (++me.ticks * SEND_MS >= END_MS - 20)
            report();
    }
    return TERN_OK;
}

static void moved(tern_task_id t, tern_mig_outcome o, tern_status why)
{
    static const char *const names[] = {"moved", "stayed", "lost", "refused"};
    tern_printf("halt %u: %s %s (%s)\n", here(), tern_task_name(t), names[o], tern_status_name(why));
}

static tern_status driver(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_timer_start(TIMER_TICK, ms(MOVE_MS), 0);
    } else if (m->port == TERN_PORT_TIMEOUT(TIMER_TICK)) {
        tern_status st = tern_move_request(T_COUNTER, 1);
        tern_printf("halt 0: move counter to module 1: %s\n", tern_status_name(st));
    }
    return TERN_OK;
}

#define M1 TERN_MODULE(0)
#define M2 TERN_MODULE(1)

static const tern_route to_counter[] = {TERN_TO_TASK(T_COUNTER, IN_DATA)};

static const tern_task_desc tasks[] = {
    {.name = "mig_a", .id = T_MIG_A, .priority = 0, .handler = tern_move_handler, .module = M1,
     .n_in_ports = TERN_MOVE_PORTS},
    {.name = "mig_b", .id = T_MIG_B, .priority = 0, .handler = tern_move_handler, .module = M2,
     .n_in_ports = TERN_MOVE_PORTS},
    {.name = "counter", .id = T_COUNTER, .priority = 3, .handler = counter, .module = M1,
     .n_in_ports = 1, .flags = TERN_TASK_MOVABLE},
    {.name = "send_a", .id = T_SEND_A, .priority = 2, .handler = sender, .module = M1,
     .n_out_ports = 1, .routes = to_counter},
    {.name = "send_b", .id = T_SEND_B, .priority = 2, .handler = sender, .module = M2,
     .n_out_ports = 1, .routes = to_counter},
    {.name = "driver", .id = T_DRIVER, .priority = 1, .handler = driver, .module = M1},
};
static const tern_app_desc app = {.name = "migrate_halt", .tasks = tasks, .n_tasks = N_TASKS,
                                  .n_modules = 2};

int main(void)
{
    tern_app_error err;
    tern_init();
    tern_status st = procbus_remote_attach();
    if (st != TERN_OK) {
        tern_printf("halt: no processor bus: %s\n", tern_status_name(st));
        return 2;
    }
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("halt: %s\n", err.text);
        return 1;
    }
    st = tern_move_init(&app, migrators, moved);
    if (st != TERN_OK) {
        tern_printf("halt: migrator: %s\n", tern_status_name(st));
        return 1;
    }
    tern_run();
}
