/* Seed 003's high-load tree node (section 5.4), one source for every
 * execution model: a long sensing job (l_s, default 1000 ms of the 4 MHz
 * sensor CPU) every sensing period, and 4 neighbours whose forwarding jobs
 * (l_p cycles each) arrive as independent Poisson streams (mean gap 300000
 * cycles), all tasks on one priority level as in seed 003's round-robin
 * MOS. Each job's processing time runs from its post (in the arrival
 * interrupt) to the end of its handler. Printed once at the end: jobs and
 * processing times per neighbour, a log-linear histogram of all of them,
 * busy time, and under the thread models the voluntary and involuntary
 * context switches and the switches into each neighbour's thread. */
#include "../seed000/arrivals.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"
#if defined(TERN_MODEL_threads) || defined(TERN_MODEL_adaptive)
#include "tern/thread.h"
#define THREAD_MODEL 1
#else
#define THREAD_MODEL 0
#endif

#define CPU_HZ 4000000ul
#define PARAMS_MAGIC 0x73656433ul /* "sed3" */
#define MAX_NEIGHBOURS 4

/* magic, duration in s, l_s in ms, sensing period in ms, mean arrival gap
 * in cycles, l_p in cycles, neighbours, PRNG seed; patched by the host
 * (terntools.seed003). */
TERN_PARAMS_DEFAULTS(PARAMS_MAGIC, 60, 1000, 2000, 300000, 4000, 4, 1);

enum { CONTROL, SENSING, FWD0 };
#define PRIO 1

#define HIST_SUB_BITS 5
#define HIST_MAX_OCTAVE 26
#define HIST_BUCKETS (((HIST_MAX_OCTAVE - HIST_SUB_BITS + 1) << HIST_SUB_BITS) + (1 << HIST_SUB_BITS))

typedef struct {
    tern_alarm alarm;
    arrivals_rng rng;
    uint64_t next_cycles; /* next arrival, cycles after t0 */
    uint32_t arrivals, jobs, e_max;
    uint64_t e_sum;
} neighbour;

static struct {
    uint32_t duration_s, ls_ms, period_ms, gap, lp, n;
    tern_time t0, t_end;
    uint32_t sensing;
    tern_alarm sense_alarm, end_alarm;
    neighbour nb[MAX_NEIGHBOURS];
    uint64_t idle_sum;
    uint16_t hist[HIST_BUCKETS];
    volatile uint8_t done;
} b;

static uint32_t bucket_of(uint32_t v)
{
    if (v < (1ul << HIST_SUB_BITS))
        return v;
    uint32_t e = 31;
    while (!(v & (1ul << e)))
        e--;
    if (e > HIST_MAX_OCTAVE)
        return HIST_BUCKETS - 1;
    uint32_t mantissa = (v >> (e - HIST_SUB_BITS)) & ((1ul << HIST_SUB_BITS) - 1);
    return ((e - HIST_SUB_BITS + 1) << HIST_SUB_BITS) | mantissa;
}

static void schedule_arrival(neighbour *nb)
{
    nb->next_cycles += arrivals_next_gap(&nb->rng, b.gap);
    tern_time at = b.t0 + tern_cycles_to_ticks(nb->next_cycles);
    if (at < b.t_end)
        tern_alarm_set(&nb->alarm, at, 0);
}

static void packet_arrives(tern_alarm *a, void *arg)
{
    (void)a;
    neighbour *nb = arg;
    schedule_arrival(nb);
    nb->arrivals++;
    (void)tern_send((tern_task_id)(FWD0 + (nb - b.nb)), TERN_PORT_APP(0), NULL, 0, 0);
}

static void sensor_fires(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    (void)tern_send(SENSING, TERN_PORT_APP(0), NULL, 0, 0);
}

static void experiment_ends(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    tern_alarm_cancel(&b.sense_alarm);
    b.done = 1;
}

static tern_status sensing_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_APP(0)) {
        b.sensing++;
        port_work(b.ls_ms * (CPU_HZ / 1000));
    }
    return TERN_OK;
}

static tern_status forwarding_task(void *state, tern_msg *m)
{
    neighbour *nb = state;
    if (m->port == TERN_PORT_APP(0)) {
        port_work(b.lp);
        uint32_t e = (uint32_t)tern_now() - m->posted;
        nb->jobs++;
        nb->e_sum += e;
        if (e > nb->e_max)
            nb->e_max = e;
        b.hist[bucket_of(e)]++;
    }
    return TERN_OK;
}

static void idle_period(tern_time start, tern_time end, uint8_t state)
{
    (void)state;
    if (start < b.t0)
        start = b.t0;
    if (end > b.t_end)
        end = b.t_end;
    if (end > start)
        b.idle_sum += end - start;
}

static void report_and_exit(void)
{
    const tern_counters *c = tern_stats();
    uint32_t vol = 0, invol = 0, sliced_long = 0, sliced_short = 0, pf = 0, evict = 0;
    uint32_t in[MAX_NEIGHBOURS] = {0}, out[MAX_NEIGHBOURS] = {0}, sensing_out = 0, control_out = 0;
#if THREAD_MODEL
    const tern_thread_stats *ts = tern_thread_get_stats();
    vol = ts->voluntary + ts->from_idle;
    invol = ts->involuntary;
    sliced_long = ts->sliced_long;
    sliced_short = ts->sliced_short;
    pf = ts->pf_entered;
    evict = ts->pf_long_preempted;
    sensing_out = ts->preempted[SENSING];
    control_out = ts->preempted[CONTROL];
    for (uint32_t k = 0; k < b.n; k++) {
        in[k] = ts->switched_in[FWD0 + k];
        out[k] = ts->preempted[FWD0 + k];
    }
#endif
    tern_printf("SEED003 HIST sub_bits=%u\n", HIST_SUB_BITS);
    for (uint32_t i = 0; i < HIST_BUCKETS; i++)
        if (b.hist[i])
            tern_printf("H %lu %u\n", (unsigned long)i, b.hist[i]);
    for (uint32_t k = 0; k < b.n; k++)
        tern_printf("N %lu arrivals=%lu jobs=%lu ctx=%lu invol=%lu e_sum=%llu e_max=%lu\n",
                    (unsigned long)k, (unsigned long)b.nb[k].arrivals,
                    (unsigned long)b.nb[k].jobs, (unsigned long)in[k], (unsigned long)out[k],
                    (unsigned long long)b.nb[k].e_sum, (unsigned long)b.nb[k].e_max);
    tern_printf("SEED003 END model=%s T=%llu sensing=%lu ctx_vol=%lu ctx_invol=%lu "
                "invol_sensing=%lu invol_control=%lu sliced_long=%lu sliced_short=%lu pf=%lu evict=%lu ctx=%lu "
                "preempt=%lu idle_sum=%llu dropped=%lu\n",
                tern_model_name, (unsigned long long)(b.t_end - b.t0),
                (unsigned long)b.sensing, (unsigned long)vol, (unsigned long)invol,
                (unsigned long)sensing_out, (unsigned long)control_out, (unsigned long)sliced_long,
                (unsigned long)sliced_short, (unsigned long)pf, (unsigned long)evict,
                (unsigned long)c->ctx_switches, (unsigned long)c->preemptions,
                (unsigned long long)b.idle_sum,
                (unsigned long)(c->dropped[TERN_DROP_POOL_FULL] + c->dropped[TERN_DROP_NO_TASK]));
    port_exit(0);
}

/* Idle work: once the window has closed and every job is done, report. */
static bool finish_when_drained(void)
{
    if (b.done)
        report_and_exit();
    return false;
}

static tern_status control_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
    b.t0 = tern_now() + tern_cycles_to_ticks(4000);
    b.t_end = b.t0 + (tern_time)b.duration_s * tern_cycles_to_ticks(CPU_HZ);
    tern_alarm_init(&b.sense_alarm, sensor_fires, NULL);
    tern_alarm_init(&b.end_alarm, experiment_ends, NULL);
    tern_alarm_set(&b.sense_alarm, b.t0, tern_cycles_to_ticks((uint64_t)b.period_ms * (CPU_HZ / 1000)));
    tern_alarm_set(&b.end_alarm, b.t_end, 0);
    for (uint32_t k = 0; k < b.n; k++) {
        tern_alarm_init(&b.nb[k].alarm, packet_arrives, &b.nb[k]);
        schedule_arrival(&b.nb[k]);
    }
    tern_idle_set_hook(idle_period);
    tern_idle_set_work(finish_when_drained);
    return TERN_OK;
}

int main(void)
{
    static tern_task_desc tasks[2 + MAX_NEIGHBOURS] = {
        {.name = "control", .id = CONTROL, .priority = 0, .handler = control_task},
        {.name = "sensing", .id = SENSING, .priority = PRIO, .handler = sensing_task,
         .n_in_ports = 1},
    };
    static const char *const names[MAX_NEIGHBOURS] = {"fwd0", "fwd1", "fwd2", "fwd3"};
    tern_init();
    if (tern_params[0] != PARAMS_MAGIC) {
        tern_printf("seed003: parameter block has a bad magic %08lx\n",
                    (unsigned long)tern_params[0]);
        port_exit(2);
    }
    b.duration_s = tern_params[1];
    b.ls_ms = tern_params[2];
    b.period_ms = tern_params[3];
    b.gap = tern_params[4];
    b.lp = tern_params[5];
    b.n = tern_params[6];
    if (b.duration_s < 1 || b.n < 1 || b.n > MAX_NEIGHBOURS || b.gap < 1 || b.period_ms < 1) {
        tern_printf("seed003: bad parameters duration_s=%lu neighbours=%lu gap=%lu "
                    "period_ms=%lu\n", (unsigned long)b.duration_s, (unsigned long)b.n,
                    (unsigned long)b.gap, (unsigned long)b.period_ms);
        port_exit(2);
    }
    for (uint32_t k = 0; k < b.n; k++) {
        arrivals_seed(&b.nb[k].rng, tern_params[7] + k);
        tasks[2 + k] = (tern_task_desc){.name = names[k], .id = (tern_task_id)(FWD0 + k),
                                        .priority = PRIO, .handler = forwarding_task,
                                        .state = &b.nb[k], .n_in_ports = 1};
    }
    tern_printf("SEED003 BEGIN model=%s duration_s=%lu ls_ms=%lu period_ms=%lu gap=%lu lp=%lu "
                "neighbours=%lu seed=%lu\n", tern_model_name, (unsigned long)b.duration_s,
                (unsigned long)b.ls_ms, (unsigned long)b.period_ms, (unsigned long)b.gap,
                (unsigned long)b.lp, (unsigned long)b.n, (unsigned long)tern_params[7]);
    static tern_app_desc app = {"seed003", tasks, 0, NULL, 0, 0, NULL};
    app.n_tasks = (uint8_t)(2 + b.n);
    tern_app_error err;
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("seed003: %s (%s)\n", err.text, tern_status_name(err.code));
        port_exit(1);
    }
    tern_run();
}
