/* Context-switch cost of the thread models (threads, adaptive) in a build
 * small enough for the ATmega128 (5 tasks; bench/micro's eight do not fit
 * its RAM). Three hand-offs, each timed for ROUNDS round trips inside one
 * thread, after one warm-up round:
 *
 *   sem_preempt  a semaphore between two levels: hi (5) takes, lo (4)
 *                gives; each give preempts lo, each take blocks hi
 *                (tests/target/apps/threads scenario X)
 *   sem_equal    two threads of one level pass two semaphores back and
 *                forth: give (the peer becomes ready), take (block)
 *   yield        two threads of one level yield to each other
 *
 * Each prints
 *
 *   HANDOFF name=<n> model=<m> switches=<k> cycles=<c> per_switch=<c/k>
 *
 * in CPU cycles (instructions on QEMU boards); switches is the kernel's
 * own count (tern_counters.ctx_switches) over the timed rounds.
 *
 * -DROUNDS=N changes the rounds and -DHANDOFF_ONLY=1 (2, 3) runs only the
 * first (second, third) hand-off: the difference of two `tern-simavr --profile` runs with
 * different ROUNDS is then that hand-off's own cycles per instruction. */
#include "tern/port.h"
#include "tern/tern.h"
#include "tern/thread.h"

enum { CONTROL, HI, LO, P1, P2, N_TASKS };

#ifndef ROUNDS
#define ROUNDS 100u
#endif
#define GAP 100000u /* cycles of sleep after each hand-off: all has drained */

static char bench;
static tern_sem sem_a, sem_b;
static volatile bool yielding;
static tern_time t_start, t_end;
static uint32_t sw_start, sw_end;

static void send(tern_task_id to) { (void)tern_send(to, TERN_PORT_APP(0), NULL, 0, 0); }

static void timing_starts(void)
{
    sw_start = tern_stats()->ctx_switches;
    t_start = tern_now();
}

static void timing_ends(void)
{
    t_end = tern_now();
    sw_end = tern_stats()->ctx_switches;
}

static tern_status worker(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK; /* INIT */
    tern_task_id self = tern_self();
    switch (bench) {
    case 'p':
        if (self == HI) {
            for (unsigned i = 0; i < ROUNDS + 1; i++)
                (void)tern_sem_take(&sem_a);
        } else {
            (void)tern_sem_give(&sem_a);
            timing_starts();
            for (unsigned i = 0; i < ROUNDS; i++)
                (void)tern_sem_give(&sem_a);
            timing_ends();
        }
        break;
    case 'e':
        if (self == P1) {
            send(P2); /* ready, not running: same level */
            (void)tern_sem_give(&sem_b);
            (void)tern_sem_take(&sem_a);
            timing_starts();
            for (unsigned i = 0; i < ROUNDS; i++) {
                (void)tern_sem_give(&sem_b);
                (void)tern_sem_take(&sem_a);
            }
            timing_ends();
        } else {
            for (unsigned i = 0; i < ROUNDS + 1; i++) {
                (void)tern_sem_take(&sem_b);
                (void)tern_sem_give(&sem_a);
            }
        }
        break;
    case 'y':
        if (self == P1) {
            send(P2);
            (void)tern_yield();
            timing_starts();
            for (unsigned i = 0; i < ROUNDS; i++)
                (void)tern_yield();
            timing_ends();
            yielding = false;
        } else {
            while (yielding)
                (void)tern_yield();
        }
        break;
    }
    return TERN_OK;
}

static void report(const char *name)
{
    uint32_t switches = sw_end - sw_start;
    uint32_t cycles = (uint32_t)tern_ticks_to_cycles(t_end - t_start);
    tern_printf("HANDOFF name=%s model=%s switches=%lu cycles=%lu per_switch=%lu\n", name,
                tern_model_name, (unsigned long)switches, (unsigned long)cycles,
                (unsigned long)(switches ? cycles / switches : 0));
}

static void run(char which, tern_task_id first, const char *name)
{
    bench = which;
    tern_sem_init(&sem_a, 0, 1);
    tern_sem_init(&sem_b, 0, 1);
    yielding = true;
    send(first); /* a higher level: runs at once */
    if (which == 'p')
        send(LO);
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    report(name);
}

static tern_status control(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
#if !defined(HANDOFF_ONLY) || HANDOFF_ONLY == 1
    run('p', HI, "sem_preempt");
#endif
#if !defined(HANDOFF_ONLY) || HANDOFF_ONLY == 2
    run('e', P1, "sem_equal");
#endif
#if !defined(HANDOFF_ONLY) || HANDOFF_ONLY == 3
    run('y', P1, "yield");
#endif
    port_exit(0);
}

#define WORKER(task, prio) \
    {.name = #task, .id = task, .priority = prio, .handler = worker, .n_in_ports = 1}

int main(void)
{
    static const tern_task_desc tasks[N_TASKS] = {
        {.name = "control", .id = CONTROL, .priority = 0, .handler = control},
        WORKER(HI, 5), WORKER(LO, 4), WORKER(P1, 3), WORKER(P2, 3),
    };
    static const tern_app_desc app = {.name = "handoff", .tasks = tasks, .n_tasks = N_TASKS};

    tern_init();
    tern_app_run(&app);
}
