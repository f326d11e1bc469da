/* The thread models' own rules on the emulated board (threads, adaptive):
 * a control thread runs the scenarios one after the other, blocking in
 * tern_sleep between them, and prints one line per scenario. The expected
 * lines are derived in tests/target/test_threads.py.
 *
 *   W  three threads block on a semaphore (priorities 3, 1, 3 in that
 *      order); three gives wake them highest priority first, oldest first
 *      among equals
 *   S  two threads of one level, 6 chunks of 15000 cycles each, posted
 *      together by an interrupt: round-robin quanta of 40000 cycles
 *   P  priority inheritance: low holds a mutex that high wants; mid, made
 *      ready meanwhile, must not run before low releases it
 *   T  transitive inheritance: low holds a mutex mid waits for while mid
 *      holds one high waits for: low runs at high's priority
 *   E  what must not block: blocking calls in an interrupt, a sleep with
 *      interrupts masked, unlocking a mutex one does not own
 *   C  semaphore counts: a counting semaphore (max 3) and a binary one,
 *      and a give from an interrupt that wakes a blocked thread
 *   Z  tern_sleep: lateness of the wake-up
 *   X  cost of a semaphore hand-off between two threads (two context
 *      switches per round trip), and the switch counts it caused
 *   A  a long thread, short jobs of its level posted by an alarm every
 *      half quantum, and every four quanta a job for M (a nap, then 1.25
 *      quanta of work):
 *      involuntary switches, preemption-free periods (adaptive), and how
 *      often M's job is cut by the end of a quantum
 *   B  L naps (it blocks with nearly all its quantum left, so it comes
 *      back short), works alone until a preemption-free period has begun
 *      (adaptive), then posts a job to s1 of its level and works 5 quanta
 *      more: how long s1 waits for the CPU */
#include "tern/port.h"
#include "tern/tern.h"
#include "tern/thread.h"

enum { CONTROL, WA, WB, WC, SA, SB, PLOW, PMID, PHIGH, PING, PONG, LONG, SH1, SH2, MED, N_TASKS };
static const char *const tag[N_TASKS] = {"control", "a", "b", "c", "a", "b", "low",
                                         "mid", "high", "ping", "pong", "L", "s1", "s2", "M"};

#define GAP 200000u    /* cycles of sleep between scenarios: all has drained */
#define CHUNK 15000u   /* S: work per chunk */
#define CHUNKS 6
#define SLEEP 10000u   /* Z */
#define ROUNDS 100u    /* X */
#define LONG_QUANTA 12 /* A: the long thread's work, in quanta */
#define SHORT_WORK 3000u
#define SHORT_EVERY 20000u /* A: a short job every half quantum */
#define MED_EVERY 8        /* A: a job for M with every 8th short job (4 quanta) */
#define MED_NAP 1000u      /* A: M naps first, then */
#define MED_WORK 50000u    /* works 1.25 quanta: sliced unless it may finish */
#define B_POLL 2000u       /* B: L looks for a period this often (cycles) */
#define B_POLLS 160        /* ... for at most 8 quanta */
#define B_WORK 200000u     /* B: L's work after the post, 5 quanta */

static char scenario;
static char line[200];
static unsigned line_len;
static tern_sem sem;
static tern_mutex mx, mx2;
static const char *isr_status[4];
static tern_alarm shorts_alarm;
static unsigned shorts_posted, shorts_in_pf, shorts_out_pf, med_jobs, med_sliced;
static tern_time x_start, x_end;
static const tern_thread_stats *a_stats; /* A: the kernel's counters, updated in place */
static bool b_short, b_in_pf;
static tern_time b_posted, b_started;

static void note(const char *fmt, const char *s)
{
    tern_irq_state st = port_irq_save();
    line_len += (unsigned)tern_snprintf(line + line_len, sizeof line - line_len, fmt, s);
    port_irq_restore(st);
}

static void send(tern_task_id to) { (void)tern_send(to, TERN_PORT_APP(0), NULL, 0, 0); }

static const char *status(tern_status st) { return st == TERN_OK ? "OK" : tern_status_name(st) + 5; }

static void irq(void *arg)
{
    (void)arg;
    switch (scenario) {
    case 'S': send(SA); send(SB); break;
    case 'C': note(" %s", "!"); (void)tern_sem_give(&sem); break;
    case 'E': /* nothing may block in an interrupt */
        isr_status[0] = status(tern_sem_take(&sem));
        isr_status[1] = status(tern_sleep(10));
        isr_status[2] = status(tern_mutex_lock(&mx));
        isr_status[3] = status(tern_yield());
        break;
    }
}

static void post_short(tern_alarm *a, void *arg)
{
    (void)arg;
    if (shorts_posted % MED_EVERY == 0)
        send(MED);
    send(shorts_posted++ % 2 ? SH2 : SH1);
    if (shorts_posted == 2 * LONG_QUANTA)
        tern_alarm_cancel(a);
}

static tern_status worker(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    tern_task_id self = tern_self();
    const char *me = tag[self];
    switch (scenario) {
    case 'W':
        note(" %s?", me);
        (void)tern_sem_take(&sem);
        note(" %s!", me);
        break;
    case 'S':
        for (int i = 0; i < CHUNKS; i++) {
            char s[8];
            tern_snprintf(s, sizeof s, "%s%d", me, i);
            note(" %s", s);
            port_work(CHUNK);
        }
        note(" %s<", me);
        break;
    case 'P':
        if (self == PLOW) {
            (void)tern_mutex_lock(&mx);
            note(" %s+", me);
            send(PHIGH);
            send(PMID);
            char s[16];
            tern_snprintf(s, sizeof s, "low@%d", tern_thread_priority());
            note(" %s", s);
            note(" %s-", me);
            (void)tern_mutex_unlock(&mx);
            char t[16];
            tern_snprintf(t, sizeof t, "low@%d", tern_thread_priority());
            note(" %s", t);
            note(" %s<", me);
        } else if (self == PHIGH) {
            note(" %s?", me);
            (void)tern_mutex_lock(&mx);
            note(" %s+", me);
            (void)tern_mutex_unlock(&mx);
            note(" %s-", me);
        } else {
            note(" %s", me);
        }
        break;
    case 'T': /* transitive inheritance: high waits for mid, mid for low */
        if (self == PLOW) {
            (void)tern_mutex_lock(&mx);
            note(" %s+", me);
            send(PMID);
            send(PHIGH);
            char p1[16];
            tern_snprintf(p1, sizeof p1, "low@%d", tern_thread_priority());
            note(" %s", p1);
            note(" %s-", me);
            (void)tern_mutex_unlock(&mx);
            char p2[16];
            tern_snprintf(p2, sizeof p2, "low@%d", tern_thread_priority());
            note(" %s", p2);
        } else if (self == PMID) {
            (void)tern_mutex_lock(&mx2);
            note(" %s+", me);
            note(" %s?", me);
            (void)tern_mutex_lock(&mx);
            char p1[16];
            tern_snprintf(p1, sizeof p1, "mid@%d", tern_thread_priority());
            note(" %s", p1);
            (void)tern_mutex_unlock(&mx);
            (void)tern_mutex_unlock(&mx2);
            char p2[16];
            tern_snprintf(p2, sizeof p2, "mid@%d", tern_thread_priority());
            note(" %s", p2);
        } else {
            note(" %s?", me);
            (void)tern_mutex_lock(&mx2);
            note(" %s+", me);
            (void)tern_mutex_unlock(&mx2);
            note(" %s-", me);
        }
        break;
    case 'C':
        note(" %s?", me);
        (void)tern_sem_take(&sem);
        note(" %s!", me);
        break;
    case 'X':
        if (self == PING) {
            for (unsigned i = 0; i < ROUNDS; i++)
                (void)tern_sem_take(&sem);
        } else {
            x_start = tern_now();
            for (unsigned i = 0; i < ROUNDS; i++)
                (void)tern_sem_give(&sem);
            x_end = tern_now();
        }
        break;
    case 'A':
        if (self == MED) {
            /* A short sleep first: M leaves the CPU before its quantum is
             * used up, so it comes back short (seed 003's alpha) for a job
             * longer than what is left of its quantum. */
            (void)tern_sleep(tern_cycles_to_ticks(MED_NAP));
            /* The counters through a_stats (live), not tern_thread_get_stats:
             * its scan of 15 painted stacks (~22,500 instructions, here with
             * interrupts masked) would make the job twice as long as
             * MED_WORK, hold off the alarms that drive the scenario, and
             * vary with the build's stack depths. */
            tern_irq_state st = port_irq_save();
            uint32_t in = a_stats->switched_in[MED], left = a_stats->pf_left;
            bool short_in_pf = tern_adaptive_in_pf() && tern_thread_short();
            port_irq_restore(st);
            port_work(MED_WORK);
            st = port_irq_save();
            bool sliced = a_stats->switched_in[MED] != in;
            bool whole_pf = a_stats->pf_left == left;
            port_irq_restore(st);
            /* M* = M started short inside a preemption-free period that
             * lasted the whole job; ~ = the job lost the CPU at least once */
            note(" %s", short_in_pf && whole_pf ? (sliced ? "M*~" : "M*")
                                               : (sliced ? "M~" : "M"));
            med_jobs++;
            med_sliced += sliced;
        } else if (self == LONG) {
            for (int i = 0; i < 4 * LONG_QUANTA; i++) {
                if (i % 4 == 0) note(" %s", "L");
                port_work(40000u / 4);
            }
            note(" %s<", me);
        } else {
            if (tern_adaptive_in_pf())
                shorts_in_pf++;
            else
                shorts_out_pf++;
            note(" %s", me);
            port_work(SHORT_WORK);
        }
        break;
    case 'B':
        if (self == LONG) {
            (void)tern_sleep(tern_cycles_to_ticks(MED_NAP));
            b_short = tern_thread_short();
            for (int i = 0; i < B_POLLS && !tern_adaptive_in_pf(); i++)
                port_work(B_POLL);
            tern_irq_state st = port_irq_save();
            b_in_pf = tern_adaptive_in_pf();
            b_posted = tern_now();
            send(SH1);
            port_irq_restore(st);
            port_work(B_WORK);
            note(" %s<", me);
        } else {
            b_started = tern_now();
            note(" %s", me);
        }
        break;
    }
    return TERN_OK;
}

static void begin(char s)
{
    scenario = s;
    line_len = 0;
    line[0] = 0;
}

static void end(void)
{
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    tern_printf("%c%s\n", scenario, line);
}

static void counts(const char *what, const tern_thread_stats *before)
{
    const tern_thread_stats *now = tern_thread_get_stats();
    tern_printf("%s vol=%lu invol=%lu slices=%lu pf_entered=%lu pf_left=%lu\n", what,
                (unsigned long)(now->voluntary - before->voluntary),
                (unsigned long)(now->involuntary - before->involuntary),
                (unsigned long)(now->slices - before->slices),
                (unsigned long)(now->pf_entered - before->pf_entered),
                (unsigned long)(now->pf_left - before->pf_left));
}

static tern_status control(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
    tern_thread_stats before;
    port_swirq_set(0, irq, NULL);

    begin('W');
    tern_sem_init(&sem, 0, 3);
    send(WB);
    send(WA);
    send(WC);
    for (int i = 0; i < 3; i++)
        (void)tern_sem_give(&sem);
    end();

    begin('S');
    before = *tern_thread_get_stats();
    port_swirq_raise(0);
    end();
    counts("S", &before);

    begin('P');
    tern_mutex_init(&mx);
    send(PLOW);
    end();

    begin('T');
    tern_mutex_init(&mx);
    tern_mutex_init(&mx2);
    send(PLOW);
    end();

    begin('E');
    tern_sem_init(&sem, 0, 1);
    tern_mutex_init(&mx);
    port_swirq_raise(0);
    tern_irq_state masked = port_irq_save();
    const char *masked_sleep = status(tern_sleep(10));
    port_irq_restore(masked);
    const char *unlock = status(tern_mutex_unlock(&mx));
    tern_printf("E isr take=%s sleep=%s lock=%s yield=%s masked_sleep=%s unlock=%s\n",
                isr_status[0], isr_status[1], isr_status[2], isr_status[3], masked_sleep,
                unlock);

    begin('C');
    tern_sem_init(&sem, 0, 3);
    const char *g[4], *t[4];
    for (int i = 0; i < 4; i++)
        g[i] = status(tern_sem_give(&sem));
    for (int i = 0; i < 4; i++)
        t[i] = status(tern_sem_try_take(&sem));
    tern_printf("C give=%s,%s,%s,%s take=%s,%s,%s,%s\n", g[0], g[1], g[2], g[3], t[0], t[1],
                t[2], t[3]);
    tern_sem_init(&sem, 5, 1);
    g[0] = status(tern_sem_try_take(&sem));
    g[1] = status(tern_sem_try_take(&sem));
    g[2] = status(tern_sem_give(&sem));
    g[3] = status(tern_sem_give(&sem));
    tern_printf("C binary take=%s,%s give=%s,%s\n", g[0], g[1], g[2], g[3]);
    tern_sem_init(&sem, 0, 1);
    send(WA);
    port_swirq_raise(0);
    note(" %s", "control");
    end();

    begin('Z');
    tern_time t0 = tern_now();
    (void)tern_sleep(tern_cycles_to_ticks(SLEEP));
    uint64_t slept = tern_ticks_to_cycles(tern_now() - t0);
    tern_printf("Z slept=%lu late=%ld\n", (unsigned long)slept, (long)slept - (long)SLEEP);

    begin('X');
    tern_sem_init(&sem, 0, 1);
    before = *tern_thread_get_stats();
    send(PING);
    send(PONG);
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    counts("X", &before);
    tern_printf("X rounds=%u per_switch=%lu\n", ROUNDS,
                (unsigned long)(tern_ticks_to_cycles(x_end - x_start) / (2 * ROUNDS)));

    begin('A');
    a_stats = tern_thread_get_stats();
    before = *a_stats;
    tern_alarm_init(&shorts_alarm, post_short, NULL);
    tern_alarm_set(&shorts_alarm, tern_now() + tern_cycles_to_ticks(SHORT_EVERY),
                   tern_cycles_to_ticks(SHORT_EVERY));
    send(LONG); /* preempts control at once */
    (void)tern_sleep(tern_cycles_to_ticks(2 * LONG_QUANTA * 40000u));
    end();
    counts("A", &before);
    tern_printf("A shorts=%u in_pf=%u out_pf=%u\n", shorts_posted, shorts_in_pf, shorts_out_pf);
    tern_printf("A med_jobs=%u med_sliced=%u\n", med_jobs, med_sliced);

    begin('B');
    send(LONG);
    end();
    tern_printf("B short=%u pf=%u wait=%lu\n", (unsigned)b_short, (unsigned)b_in_pf,
                (unsigned long)tern_ticks_to_cycles(b_started - b_posted));

    /* F: finalizing a thread task ends its thread; the task is gone. */
    tern_status fin = tern_task_finalize(SH2);
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    uint32_t in = tern_thread_get_stats()->switched_in[SH2];
    tern_status after = tern_send(SH2, TERN_PORT_APP(0), NULL, 0, 0);
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    tern_printf("F final=%s send=%s name=%s runs=%lu\n", status(fin), status(after),
                tern_task_name(SH2),
                (unsigned long)(tern_thread_get_stats()->switched_in[SH2] - in));

    const tern_thread_stats *ts = tern_thread_get_stats();
    tern_printf("stacks control=%lu pong=%lu\n", (unsigned long)ts->stack_bytes[CONTROL],
                (unsigned long)ts->stack_bytes[PONG]);
    port_exit(0);
}

int main(void)
{
#define WORKER(task, prio) \
    {.name = #task, .id = task, .priority = prio, .handler = worker, .n_in_ports = 1}
    static const tern_task_desc tasks[] = {
        /* TERN_TASK_THREAD: what every task is here, accepted */
        {.name = "control", .id = CONTROL, .priority = 0, .handler = control,
         .flags = TERN_TASK_THREAD, .stack_size = 1536},
        WORKER(WA, 1), WORKER(WB, 3), WORKER(WC, 3),
        WORKER(SA, 2), WORKER(SB, 2),
        WORKER(PLOW, 1), WORKER(PMID, 3), WORKER(PHIGH, 5),
        WORKER(PING, 5), WORKER(PONG, 4),
        WORKER(LONG, 2), WORKER(SH1, 2), WORKER(SH2, 2), WORKER(MED, 2),
    };
#undef WORKER
    static const tern_app_desc app = {.name = "threads", .tasks = tasks, .n_tasks = N_TASKS};

    tern_init();
    tern_printf("threads: model %s\n", tern_model_name);
    tern_app_run(&app);
}
