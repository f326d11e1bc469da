/* The kernel's ordering and preemption rules on real hardware: the
 * scenarios of the host tests (tests/unit/test_models.c), driven by a
 * software-triggered interrupt and the board timer instead of a fake
 * clock. Each scenario prints one line, e.g.
 *     A low> ! high> high< low<
 * where "x>" is a handler start, "x<" its end and "!" the interrupt. The
 * expected lines per model are in tests/target/test_ordering.py.
 *
 *   A  an interrupt posts to a higher task while low runs
 *   B  an interrupt posts to a task of the running task's own priority
 *   C  a task posts to a higher task
 *   D  a task posts to a task of its own priority
 *   E  a message to a task already on the stack (low -> high -> low)
 *   F  an interrupt posts to low, then mid, while high runs
 *   L  latencies in cycles: from an alarm's deadline (CPU idle) to the
 *      start of the handler it posts to, and from raising the software
 *      interrupt inside low to the start of high: under stack high runs
 *      nested at once, otherwise after low's LONG_WORK */
#include "tern/port.h"
#include "tern/tern.h"

enum { CONTROL, LOW, MID, HIGH, HIGH2, N_TASKS };
static const char *const tag[N_TASKS] = {"control", "low", "mid", "high", "high2"};

#define WORK 500u       /* cycles of work around each interesting point */
#define LONG_WORK 8000u /* low's work after raising the interrupt in L */
#define GAP 40000u      /* cycles between scenarios: everything has drained, printing
                         * included (a line takes ~4,000 cycles on the AVR) */

static char scenario;
static char line[160];
static unsigned line_len;
static tern_time stamp;
static uint64_t latency_idle, latency_preempt;
static bool low_posted; /* scenario E: low posts to high only once */
static tern_alarm idle_alarm;

static void note(const char *s)
{
    tern_irq_state st = port_irq_save();
    line_len += (unsigned)tern_snprintf(line + line_len, sizeof line - line_len, " %s", s);
    port_irq_restore(st);
}

static void mark(tern_task_id id, char kind)
{
    char s[8];
    tern_snprintf(s, sizeof s, "%s%c", tag[id], kind);
    note(s);
}

static void send(tern_task_id to) { (void)tern_send(to, TERN_PORT_APP(0), NULL, 0, 0); }

/* The software interrupt: what it posts depends on the scenario. */
static void irq(void *arg)
{
    (void)arg;
    if (scenario != 'L')
        note("!");
    switch (scenario) {
    case 'A': send(HIGH); break;
    case 'B': send(HIGH2); break;
    case 'F': send(LOW); send(MID); break;
    case 'L': send(HIGH); break;
    }
}

static void alarm_fires(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    send(HIGH);
}

/* One handler for every worker task: the scenario says what it does at
 * its midpoint. */
static tern_status worker(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    tern_task_id self = tern_self();
    if (scenario == 'L') {
        if (self == HIGH) {
            uint64_t lat = tern_ticks_to_cycles(tern_now() - stamp);
            if (latency_idle == 0) {
                latency_idle = lat;
                send(LOW);
            } else {
                latency_preempt = lat;
            }
        } else {
            stamp = tern_now();
            port_swirq_raise(0);
            port_work(LONG_WORK);
        }
        return TERN_OK;
    }
    mark(self, '>');
    port_work(WORK);
    switch (scenario) {
    case 'A': if (self == LOW) port_swirq_raise(0); break;
    case 'B': if (self == HIGH) port_swirq_raise(0); break;
    case 'C': if (self == LOW) send(HIGH); break;
    case 'D': if (self == HIGH) send(HIGH2); break;
    case 'E':
        if (self == LOW && !low_posted) {
            low_posted = true;
            send(HIGH);
        }
        if (self == HIGH)
            send(LOW);
        break;
    case 'F': if (self == HIGH) port_swirq_raise(0); break;
    }
    port_work(WORK);
    mark(self, '<');
    return TERN_OK;
}

static const char scenarios[] = "ABCDEFL";

static tern_status control(void *state, tern_msg *m)
{
    (void)state;
    static unsigned next;
    if (m->port == TERN_PORT_INIT) {
        port_swirq_set(0, irq, NULL);
        tern_alarm_init(&idle_alarm, alarm_fires, NULL);
        return tern_timer_start(0, tern_cycles_to_ticks(GAP), tern_cycles_to_ticks(GAP));
    }
    if (m->port != TERN_PORT_TIMEOUT(0))
        return TERN_OK;
    if (scenario && scenario != 'L')
        tern_printf("%c%s\n", scenario, line);
    if (scenario == 'L') {
        tern_printf("L idle=%lu preempt=%lu\n", (unsigned long)latency_idle,
                    (unsigned long)latency_preempt);
        const tern_counters *c = tern_stats();
        tern_printf("stack=%lu dropped=%lu\n", (unsigned long)c->max_stack_bytes,
                    (unsigned long)(c->dropped[TERN_DROP_POOL_FULL] + c->dropped[TERN_DROP_NO_TASK]));
        port_exit(0);
    }
    scenario = scenarios[next++];
    line_len = 0;
    line[0] = 0;
    switch (scenario) {
    case 'A': case 'C': case 'E': send(LOW); break;
    case 'B': case 'D': case 'F': send(HIGH); break;
    case 'L':
        /* From idle, measured from the alarm's deadline (far enough out
         * that the CPU sleeps by then: the way into the idle sleep takes
         * ~1,500 cycles on the AVR); high then posts to low, which raises
         * the software interrupt that posts to high. */
        stamp = tern_now() + tern_cycles_to_ticks(4000);
        tern_alarm_set(&idle_alarm, stamp, 0);
        break;
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "control", .id = CONTROL, .priority = 0, .handler = control},
        {.name = "low", .id = LOW, .priority = 1, .handler = worker, .n_in_ports = 1},
        {.name = "mid", .id = MID, .priority = 3, .handler = worker, .n_in_ports = 1},
        {.name = "high", .id = HIGH, .priority = 6, .handler = worker, .n_in_ports = 1},
        {.name = "high2", .id = HIGH2, .priority = 6, .handler = worker, .n_in_ports = 1},
    };
    static const tern_app_desc app = {.name = "ordering", .tasks = tasks, .n_tasks = N_TASKS};

    tern_init();
    tern_printf("ordering: model %s\n", tern_model_name);
    tern_app_run(&app);
}
