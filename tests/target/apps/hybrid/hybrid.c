/* The hybrid model's rules on the emulated board: three tasks are flagged
 * TERN_TASK_THREAD (control, th, cnt) and get their own stacks; the others
 * (rlo, r3, rhi, feed) run to completion on the shared main stack. A
 * control thread runs the scenarios one after the other, sleeping between
 * them, and prints one line per scenario; "x>" is a handler start, "x<"
 * its end, "!" the software interrupt. The expected lines are in
 * tests/target/test_hybrid.py.
 *
 *   B  th (thread, 3) blocks on a semaphore; rlo (shared stack, 1) still
 *      runs, gives it and posts to r3 (3) and rhi (5): rhi runs nested at
 *      once, th runs once rlo's handler has returned and before r3 (its
 *      own priority), then sleeps while r3 and rlo run
 *   P  an interrupt posts to rhi (5) while th (3) runs: rhi preempts th at
 *      once; th's own post to rhi runs rhi before the post returns
 *   N  while th (3) runs, an interrupt posts to rlo (1) and r3 (3, equal)
 *      and th posts to rlo: nothing preempts th; when th blocks they run,
 *      highest first
 *   C  counts: an alarm posts numbered messages to cnt (thread, 2) and to
 *      feed (shared stack, 6), which forwards its own numbers to cnt;
 *      control posts its own; cnt naps now and then so its mailbox fills.
 *      Every number must arrive once, in order, per source
 *   E  the blocking services called from a run-to-completion handler
 *   F  finalizing a thread task ends its thread: the task is gone
 *   W  where each handler ran: on the main stack or on a private one
 *   M  stack use: the main stack and each thread's deepest use */
#include "tern/port.h"
#include "tern/tern.h"
#include "tern/thread.h"

enum { CONTROL, TH, CNT, RLO, R3, RHI, FEED, N_TASKS };
static const char *const tag[N_TASKS] = {"control", "th", "cnt", "rlo", "r3", "rhi", "feed"};

#define GAP 200000u  /* cycles of sleep between scenarios: all has drained */
#define WORK 2000u   /* cycles of work around each interesting point */
#define SLEEP 20000u /* B: th's nap */
#define COUNT 20     /* C: messages per source */
#define ALARM_EVERY 5000u
#define CTL_EVERY 7000u
#define CNT_NAP 3000u

extern uint32_t __stack_limit[], __stack_top[]; /* the main stack (sections.ld) */

static char scenario;
static char line[200];
static unsigned line_len;
static tern_sem sem;
static tern_mutex mx;
static tern_time stamp;
static uint64_t latency;
static tern_time slept;
static char where[N_TASKS]; /* 'm': main stack, 'o': its own stack */
static const char *estatus[6];
static unsigned isr_seq, feed_seq;
static bool rlo_gave;
static unsigned next_seq[3], bad_seq[3], got_total;
static tern_alarm count_alarm;

static void note(const char *s)
{
    tern_irq_state st = port_irq_save();
    line_len += (unsigned)tern_snprintf(line + line_len, sizeof line - line_len, " %s", s);
    port_irq_restore(st);
}

static void mark(tern_task_id id, char kind)
{
    char s[12];
    tern_snprintf(s, sizeof s, "%s%c", tag[id], kind);
    note(s);
}

static void locate(tern_task_id id)
{
    uint32_t here;
    uintptr_t a = (uintptr_t)&here;
    where[id] = a >= (uintptr_t)__stack_limit && a < (uintptr_t)__stack_top ? 'm' : 'o';
}

static void send(tern_task_id to) { (void)tern_send(to, TERN_PORT_APP(0), NULL, 0, 0); }

static const char *status(tern_status st) { return st == TERN_OK ? "OK" : tern_status_name(st) + 5; }

static void irq(void *arg)
{
    (void)arg;
    switch (scenario) {
    case 'P': send(RHI); break;
    case 'N': send(RLO); send(R3); break;
    }
    /* " !" without formatting (P times this interrupt); still before the
     * handlers it posted to, which run after it */
    if (line_len + 2 < sizeof line) {
        line[line_len++] = ' ';
        line[line_len++] = '!';
        line[line_len] = 0;
    }
}

/* C: the alarm numbers its messages in `len` (no payload). */
static void count_fires(tern_alarm *a, void *arg)
{
    (void)arg;
    (void)tern_send(CNT, TERN_PORT_APP(0), NULL, (uint16_t)isr_seq++, 0);
    send(FEED);
    if (isr_seq == COUNT)
        tern_alarm_cancel(a);
}

/* --- The thread tasks -------------------------------------------------- */

static tern_status th(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    locate(TH);
    mark(TH, '>');
    switch (scenario) {
    case 'B': {
        note("th?");
        (void)tern_sem_take(&sem);
        note("th!");
        note("thz");
        tern_time t0 = tern_now();
        (void)tern_sleep(tern_cycles_to_ticks(SLEEP));
        slept = tern_now() - t0;
        break;
    }
    case 'P':
        port_work(WORK);
        stamp = tern_now();
        port_swirq_raise(0);
        port_work(WORK);
        note("th+");
        send(RHI);
        port_work(WORK);
        break;
    case 'N':
        port_work(WORK);
        port_swirq_raise(0);
        send(RLO);
        note("th+");
        port_work(WORK);
        break;
    }
    mark(TH, '<');
    return TERN_OK;
}

static tern_status cnt(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT)
        return TERN_OK;
    locate(CNT);
    unsigned src = (unsigned)(m->port - TERN_PORT_APP(0));
    if (src >= 3)
        return TERN_EINVAL;
    if (m->len == next_seq[src])
        next_seq[src]++;
    else
        bad_seq[src]++;
    if (++got_total % 4 == 0) /* nap: the mailbox fills meanwhile */
        (void)tern_sleep(tern_cycles_to_ticks(CNT_NAP));
    return TERN_OK;
}

/* --- The run-to-completion tasks ----------------------------------------- */

static tern_status rtc(void *state, tern_msg *m)
{
    tern_time start = tern_now(); /* P: the first statement */
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    tern_task_id self = tern_self();
    locate(self);
    if (self == FEED) {
        (void)tern_send(CNT, TERN_PORT_APP(1), NULL, (uint16_t)feed_seq++, 0);
        return TERN_OK;
    }
    if (self == RHI && scenario == 'P' && stamp) {
        latency = tern_ticks_to_cycles(start - stamp);
        stamp = 0;
    }
    mark(self, '>');
    if (scenario == 'B' && self == RLO && !rlo_gave) {
        rlo_gave = true;
        (void)tern_sem_give(&sem);
        send(R3);
        send(RHI);
    }
    if (scenario == 'E' && self == RLO) {
        estatus[0] = status(tern_sleep(10));
        estatus[1] = status(tern_sem_take(&sem));
        estatus[2] = status(tern_mutex_lock(&mx));
        estatus[3] = status(tern_yield());
        estatus[4] = status(tern_mutex_unlock(&mx));
        estatus[5] = status(tern_sem_give(&sem));
    }
    port_work(WORK);
    mark(self, '<');
    return TERN_OK;
}

/* --- Control ------------------------------------------------------------------ */

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

static tern_status control(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
    locate(CONTROL);
    port_swirq_set(0, irq, NULL);

    begin('B');
    tern_sem_init(&sem, 0, 1);
    send(TH);
    note("ctl");
    send(RLO);
    note("ctl");
    send(RLO);
    end();
    tern_printf("B slept=%lu\n", (unsigned long)tern_ticks_to_cycles(slept));

    begin('P');
    send(TH);
    end();
    tern_printf("P latency=%lu\n", (unsigned long)latency);

    begin('N');
    send(TH);
    end();

    begin('C');
    tern_alarm_init(&count_alarm, count_fires, NULL);
    tern_alarm_set(&count_alarm, tern_now() + tern_cycles_to_ticks(ALARM_EVERY),
                   tern_cycles_to_ticks(ALARM_EVERY));
    for (unsigned i = 0; i < COUNT; i++) {
        (void)tern_send(CNT, TERN_PORT_APP(2), NULL, (uint16_t)i, 0);
        (void)tern_sleep(tern_cycles_to_ticks(CTL_EVERY));
    }
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    const tern_counters *c = tern_stats();
    tern_printf("C isr=%u/%u rtc=%u/%u ctl=%u/%u bad=%u,%u,%u got=%u dropped=%lu\n",
                next_seq[0], isr_seq, next_seq[1], feed_seq, next_seq[2], COUNT, bad_seq[0],
                bad_seq[1], bad_seq[2], got_total,
                (unsigned long)(c->dropped[TERN_DROP_POOL_FULL] + c->dropped[TERN_DROP_NO_TASK]));
    tern_printf("C max_queue=%u\n", (unsigned)c->max_queue_depth);

    begin('E');
    tern_sem_init(&sem, 0, 1);
    tern_mutex_init(&mx);
    send(RLO);
    tern_printf("E rtc sleep=%s take=%s lock=%s yield=%s unlock=%s give=%s\n", estatus[0],
                estatus[1], estatus[2], estatus[3], estatus[4], estatus[5]);
    end();

    /* F: FINAL runs in cnt's thread, which then ends */
    uint32_t in = tern_thread_get_stats()->switched_in[CNT];
    tern_status fin = tern_task_finalize(CNT);
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    tern_status after = tern_send(CNT, TERN_PORT_APP(2), NULL, 0, 0);
    (void)tern_sleep(tern_cycles_to_ticks(GAP));
    tern_printf("F final=%s send=%s name=%s runs=%lu\n", status(fin), status(after),
                tern_task_name(CNT),
                (unsigned long)(tern_thread_get_stats()->switched_in[CNT] - in));

    tern_printf("W");
    for (int i = 0; i < N_TASKS; i++)
        tern_printf(" %s=%s", tag[i], where[i] == 'm' ? "main" : where[i] == 'o' ? "own" : "?");
    tern_printf("\n");

    const tern_thread_stats *ts = tern_thread_get_stats();
    tern_printf("M main_stack=%lu control=%lu th=%lu cnt=%lu\n",
                (unsigned long)tern_stats()->max_stack_bytes,
                (unsigned long)ts->stack_bytes[CONTROL], (unsigned long)ts->stack_bytes[TH],
                (unsigned long)ts->stack_bytes[CNT]);
    port_exit(0);
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "control", .id = CONTROL, .priority = 0, .handler = control,
         .flags = TERN_TASK_THREAD, .stack_size = 1024},
        {.name = "th", .id = TH, .priority = 3, .handler = th, .n_in_ports = 1,
         .flags = TERN_TASK_THREAD, .stack_size = 512},
        {.name = "cnt", .id = CNT, .priority = 2, .handler = cnt, .n_in_ports = 3,
         .flags = TERN_TASK_THREAD, .stack_size = 512},
        {.name = "rlo", .id = RLO, .priority = 1, .handler = rtc, .n_in_ports = 1},
        {.name = "r3", .id = R3, .priority = 3, .handler = rtc, .n_in_ports = 1},
        {.name = "rhi", .id = RHI, .priority = 5, .handler = rtc, .n_in_ports = 1},
        {.name = "feed", .id = FEED, .priority = 6, .handler = rtc, .n_in_ports = 1},
    };
    static const tern_app_desc app = {.name = "hybrid", .tasks = tasks, .n_tasks = N_TASKS};

    tern_init();
    tern_printf("hybrid: model %s\n", tern_model_name);
    tern_app_run(&app);
}
