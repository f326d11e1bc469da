/* Seed 000's abstract tree node (Section IV, Table I), one source for every
 * execution model: a sensing task of l_s cycles every 1/f_s, and
 * forwarding jobs of l_p = 4000 cycles arriving as a Poisson process of
 * rate (2^n - 1) f_s, both raised by timer interrupts (kernel alarms).
 *
 * Each forwarding job's time e = stop - start is taken from the kernel's
 * post timestamp (set in the interrupt) to the end of the handler. The
 * benchmark's own work stays out of what it measures, as seed 000 kept
 * its measurement out with an extra timer and subtracted its cost:
 *  - the arrival draws (the exponential gaps of arrivals.c) are made
 *    ahead, into a ring of arrival times that the arrival interrupt only
 *    pops;
 *  - a job's handler ends by storing its 32-bit e in a ring, the idle hook
 *    stores each idle period's bounds in another; the 64-bit sums,
 *    extremes and histogram are added up later;
 *  - both happen in "bench slots": the idle loop's work hook, when nothing
 *    is ready and the next interrupt of the scenario (arrival, sensing,
 *    end) is more than BENCH_STEP_CYCLES away, one step at a time. So no
 *    bench work runs between a job's post and its handler's end, nor in
 *    an idle period. A slot takes CPU time that would otherwise have been
 *    idle: it is timed with the clock (bench=, in ticks) and the host adds
 *    it back to the idle time, as seed 000 subtracted its measurement
 *    overhead. A ring that runs full or empty because no slot came in time
 *    is served inline instead and counted (bench_inline=): the
 *    measurement then says its cost landed in the measured path.
 * Results are printed once at the end. The trace ring is compiled out of
 * benchmark builds.
 *
 * SEED000_BARE=1 (target seed000_bare.elf) builds the same node without
 * any of that measurement or reporting, only exiting when the window
 * closes: the build seed 000 Table II's code sizes compare with. Nothing
 * is measured there, so nothing has to be kept out of a job's time: it
 * draws each arrival when the one before comes, in the interrupt, and has
 * no bench slots. */
#include "arrivals.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"

#define CPU_HZ 4000000ul  /* the ATmega128 of seed 000 at 4 MHz */
#define L_P_CYCLES 4000ul /* forwarding job length */
#define PARAMS_MAGIC 0x7465726eul

/* The parameters an unpatched image runs with (`tern run`). */
#ifndef SEED000_DEFAULT_N
#define SEED000_DEFAULT_N 1
#endif
#ifndef SEED000_DEFAULT_LS_MS
#define SEED000_DEFAULT_LS_MS 1
#endif
#ifndef SEED000_DEFAULT_SAMPLES
#define SEED000_DEFAULT_SAMPLES 3
#endif

/* Run parameters, patched into the ELF by the host (terntools.seed000):
 * magic, n, l_s in ms, samples (sensing periods), PRNG seed. */
TERN_PARAMS_DEFAULTS(
    PARAMS_MAGIC, SEED000_DEFAULT_N, SEED000_DEFAULT_LS_MS, SEED000_DEFAULT_SAMPLES, 1, 0, 0, 0);

enum { SENSING = 1, FORWARDING = 2 };
enum { PRIO_SENSING = 1, PRIO_FORWARDING = 5 };

#ifndef SEED000_BARE
#define SEED000_BARE 0
#endif

#ifndef SEED000_HIST_SUB_BITS
#define SEED000_HIST_SUB_BITS 6 /* 64 buckets per octave: <= 1.6 % wide */
#endif
#define HIST_MAX_OCTAVE 24
#define HIST_BUCKETS (((HIST_MAX_OCTAVE - SEED000_HIST_SUB_BITS + 1) << SEED000_HIST_SUB_BITS) + \
                      (1 << SEED000_HIST_SUB_BITS))

typedef struct {
    uint32_t count, min, max;
    uint64_t sum, sumsq;
} aggregate;

/* Arrival times drawn ahead, in ticks after t0 (the window fits in 32
 * bits: checked in main). A Poisson burst under a long sensing job, with
 * no idle slot in between, is what the depth covers. */
#ifndef SEED000_ARRIVAL_RING
#define SEED000_ARRIVAL_RING 64
#endif
#define ARRIVAL_NONE UINT32_MAX /* drawn past the window: no more arrivals */

static struct {
    uint32_t ls_ms, samples; /* n and seed are main()'s: only it reads them */
    tern_time t0;            /* measurement window: t0 .. t0 + window_ticks */
#if !SEED000_BARE
    tern_time t_end;
    uint32_t arrivals, sensing, jobs; /* tallies for the report */
#endif
    uint32_t sensing_posted;
    uint32_t arrival_mean_cycles;
    uint64_t arrival_cycles; /* the last arrival drawn, cycles after t0 */
    uint32_t window_ticks;   /* t_end - t0 */
    bool drawn_all; /* the last draw fell past the window */
    arrivals_rng rng;
    tern_alarm sense_alarm, forward_alarm, end_alarm;
    volatile uint8_t done;
#if !SEED000_BARE
    uint32_t ring[SEED000_ARRIVAL_RING];
    uint8_t ring_head, ring_count;
    uint32_t step_ticks; /* the time one bench step may take, at most */
    uint32_t inline_steps; /* bench steps that had to run in the measured path */
#endif
} b;

/* The report's tallies: the bare build has no report, so none. */
#if SEED000_BARE
#define TALLY(field) ((void)0)
#else
#define TALLY(field) (b.field++)
#endif

/* The next arrival's time in ticks after t0, ARRIVAL_NONE past the window. */
static uint32_t next_arrival(void)
{
    if (b.drawn_all)
        return ARRIVAL_NONE;
    b.arrival_cycles += arrivals_next_gap(&b.rng, b.arrival_mean_cycles);
    tern_time ticks = tern_cycles_to_ticks(b.arrival_cycles);
    if (ticks < b.window_ticks)
        return (uint32_t)ticks;
    b.drawn_all = true;
    return ARRIVAL_NONE;
}

#if SEED000_BARE
/* Arm the forwarding alarm for the next arrival (interrupts masked by the
 * caller, or the clock interrupt). */
static void arm_next_arrival(void)
{
    uint32_t at = next_arrival();
    if (at != ARRIVAL_NONE)
        tern_alarm_set(&b.forward_alarm, b.t0 + at, 0);
}

static void record_job(const tern_msg *m) { (void)m; }

/* The window has closed and every job has been handled. */
static bool idle_work(void)
{
    if (b.done)
        port_exit(0);
    return false;
}
#else
/* One arrival draw into the ring (not full). */
static void draw_arrival(void)
{
    uint8_t slot = (uint8_t)((b.ring_head + b.ring_count) % SEED000_ARRIVAL_RING);
    b.ring[slot] = next_arrival();
    b.ring_count++;
}

/* Arm the forwarding alarm for the next arrival in the ring (interrupts
 * masked by the caller, or the clock interrupt). */
static void arm_next_arrival(void)
{
    if (b.ring_count == 0) {
        /* no slot came in time to draw it: draw it here, and say so */
        b.inline_steps++;
        draw_arrival();
    }
    uint32_t at = b.ring[b.ring_head];
    b.ring_head = (uint8_t)((b.ring_head + 1) % SEED000_ARRIVAL_RING);
    b.ring_count--;
    if (at != ARRIVAL_NONE)
        tern_alarm_set(&b.forward_alarm, b.t0 + at, 0);
}

#ifndef SEED000_JOB_RING
#define SEED000_JOB_RING 64
#endif
#define IDLE_RING 16

static struct {
    aggregate e, idle;
    uint16_t hist[HIST_BUCKETS];
    /* job times and idle periods not added up yet */
    uint32_t job[SEED000_JOB_RING];
    uint8_t job_head, job_count;
    struct {
        tern_time start;
        uint32_t length;
    } idle_ring[IDLE_RING];
    uint8_t idle_head, idle_count;
    /* the bench slots' time inside the window, and the longest step */
    uint64_t bench_ticks;
    uint32_t step_max;
} measured;

static void add(aggregate *a, uint32_t v)
{
    if (a->count == 0 || v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    a->count++;
    a->sum += v;
    a->sumsq += (uint64_t)v * v;
}

/* Log-linear bucket: exact below 2^SUB, then 2^SUB buckets per octave. */
static uint32_t bucket_of(uint32_t v)
{
    if (v < (1ul << SEED000_HIST_SUB_BITS))
        return v;
    /* v > 0; a bit scan (a loop over 1 << e costs ~2,000 cycles on the AVR) */
    uint32_t e = (uint32_t)(sizeof(unsigned long) * 8 - 1 - (unsigned)__builtin_clzl(v));
    if (e > HIST_MAX_OCTAVE)
        return HIST_BUCKETS - 1;
    uint32_t mantissa = (v >> (e - SEED000_HIST_SUB_BITS)) & ((1ul << SEED000_HIST_SUB_BITS) - 1);
    return ((e - SEED000_HIST_SUB_BITS + 1) << SEED000_HIST_SUB_BITS) | mantissa;
}

static void add_job(void)
{
    uint32_t e = measured.job[measured.job_head];
    measured.job_head = (uint8_t)((measured.job_head + 1) % SEED000_JOB_RING);
    measured.job_count--;
    add(&measured.e, e);
    measured.hist[bucket_of(e)]++;
}

/* Clipped to the measurement window (i_k of seed 000). */
static void add_idle(void)
{
    tern_time start = measured.idle_ring[measured.idle_head].start;
    tern_time end = start + measured.idle_ring[measured.idle_head].length;
    measured.idle_head = (uint8_t)((measured.idle_head + 1) % IDLE_RING);
    measured.idle_count--;
    if (start < b.t0)
        start = b.t0;
    if (end > b.t_end)
        end = b.t_end;
    if (end > start)
        add(&measured.idle, (uint32_t)(end - start));
}

/* The end of a forwarding job's handler: e into the ring (e < 2^32
 * ticks, so the low halves of the clock give it exactly). */
static void record_job(const tern_msg *m)
{
    uint32_t e = (uint32_t)tern_now() - (uint32_t)m->posted;
    tern_irq_state s = port_irq_save();
    if (measured.job_count == SEED000_JOB_RING) {
        b.inline_steps++;
        add_job();
    }
    measured.job[(uint8_t)((measured.job_head + measured.job_count) % SEED000_JOB_RING)] = e;
    measured.job_count++;
    port_irq_restore(s);
}

/* Every idle period, in the idle loop right after it ended. */
static void idle_period(tern_time start, tern_time end, uint8_t state)
{
    (void)state;
    if (measured.idle_count == IDLE_RING) {
        b.inline_steps++;
        add_idle();
    }
    uint8_t slot = (uint8_t)((measured.idle_head + measured.idle_count) % IDLE_RING);
    measured.idle_ring[slot].start = start;
    measured.idle_ring[slot].length = (uint32_t)(end - start);
    measured.idle_count++;
}

static void report_and_exit(void)
{
    while (measured.job_count)
        add_job();
    while (measured.idle_count)
        add_idle();
    const tern_counters *c = tern_stats();
    uint32_t dropped = 0;
    for (int r = 0; r < TERN_DROP_REASONS; r++)
        dropped += c->dropped[r];
    tern_printf("SEED000 HIST sub_bits=%u\n", SEED000_HIST_SUB_BITS);
    for (uint32_t i = 0; i < HIST_BUCKETS; i++)
        if (measured.hist[i])
            tern_printf("H %lu %u\n", (unsigned long)i, measured.hist[i]);
    /* The END line in three calls: one call with all 17 fields needs more
     * stack than hybrid's 512-byte idle thread (this runs as idle work)
     * has. */
    tern_printf("SEED000 END T=%llu arrivals=%lu jobs=%lu sensing=%lu e_sum=%llu e_sumsq=%llu ",
                (unsigned long long)(b.t_end - b.t0), (unsigned long)b.arrivals,
                (unsigned long)b.jobs, (unsigned long)b.sensing,
                (unsigned long long)measured.e.sum, (unsigned long long)measured.e.sumsq);
    tern_printf("e_min=%lu e_max=%lu idle_sum=%llu idle_count=%lu idle_sumsq=%llu idle_max=%lu ",
                (unsigned long)measured.e.min, (unsigned long)measured.e.max,
                (unsigned long long)measured.idle.sum, (unsigned long)measured.idle.count,
                (unsigned long long)measured.idle.sumsq, (unsigned long)measured.idle.max);
    tern_printf("ctx=%lu preempt=%lu dropped=%lu max_queue=%u trace_cost=%llu ",
                (unsigned long)c->ctx_switches, (unsigned long)c->preemptions,
                (unsigned long)dropped, c->max_queue_depth,
                (unsigned long long)tern_trace_cost());
    tern_printf("bench=%llu bench_step_max=%lu bench_inline=%lu\n",
                (unsigned long long)measured.bench_ticks, (unsigned long)measured.step_max,
                (unsigned long)b.inline_steps);
    port_exit(0);
}

/* Ticks from `now` to the next interrupt of the scenario: an arrival, a
 * sensing period, or the window's end (the alarms run in the clock
 * interrupt); negative if one is due. Every deadline lies within the
 * window, less than 2^31 ticks from now (main checks), so the low 32 bits
 * of the times give the difference. */
static int32_t room_before_next_event(uint32_t now)
{
    int32_t room = INT32_MAX;
    const tern_alarm *alarms[3] = {&b.forward_alarm, &b.sense_alarm, &b.end_alarm};
    for (int i = 0; i < 3; i++) {
        if (!alarms[i]->armed)
            continue;
        int32_t d = (int32_t)((uint32_t)alarms[i]->deadline - now);
        if (d < room)
            room = d;
    }
    return room;
}

/* One step of the benchmark's deferred work, if there is any: true if it
 * did one. */
static bool bench_step(void)
{
    /* arrivals first while the ring is low: an arrival drawn inline would
     * land in a job's e */
    if (b.ring_count < SEED000_ARRIVAL_RING / 2 && !b.drawn_all) {
        draw_arrival();
        return true;
    }
    if (measured.job_count) {
        add_job();
        return true;
    }
    if (measured.idle_count) {
        add_idle();
        return true;
    }
    if (b.ring_count < SEED000_ARRIVAL_RING && !b.drawn_all) {
        draw_arrival();
        return true;
    }
    return false;
}

/* The idle loop's work hook, when nothing is ready: bench slots, then,
 * once the window has closed and every job has been handled, the report.
 * A step runs with interrupts masked and only if the next interrupt of
 * the scenario is more than step_ticks away, so no job is posted while it
 * runs. Its time, from the clock read before the check to the one after
 * the step, is counted (it displaced idle time); what preempts the slot
 * between steps is not. */
static bool idle_work(void)
{
    if (b.done)
        report_and_exit();
    for (;;) {
        tern_irq_state s = port_irq_save();
        uint32_t now = (uint32_t)tern_now();
        bool did = room_before_next_event(now) > (int32_t)b.step_ticks && bench_step();
        uint32_t took = did ? (uint32_t)tern_now() - now : 0;
        port_irq_restore(s);
        if (!did)
            break;
        if (took > b.step_ticks)
            b.inline_steps++; /* longer than allowed for: it may have overlapped */
        if (took > measured.step_max)
            measured.step_max = took;
        if (now - (uint32_t)b.t0 < b.window_ticks)
            measured.bench_ticks += took;
    }
    return false;
}
#endif

/* Interrupt context: the packet "arrives"; the kernel stamps the post.
 * The next arrival comes from the ring, drawn earlier in a bench slot; its
 * alarm is set first, so that it does not count in this job's e. */
static void packet_arrives(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    arm_next_arrival();
    TALLY(arrivals);
    (void)tern_send(FORWARDING, TERN_PORT_APP(0), NULL, 0, 0);
}

/* One sensing job per period, `samples` in all. */
static void sensor_fires(tern_alarm *a, void *arg)
{
    (void)arg;
    (void)tern_send(SENSING, TERN_PORT_APP(0), NULL, 0, 0);
    if (++b.sensing_posted == b.samples)
        tern_alarm_cancel(a);
}

static void experiment_ends(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    b.done = 1;
}

static tern_status sensing_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_APP(0)) {
        TALLY(sensing);
        port_work(b.ls_ms * (CPU_HZ / 1000));
    }
    return TERN_OK;
}

static tern_status forwarding_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_APP(0)) {
        port_work(L_P_CYCLES);
        record_job(m);
        TALLY(jobs);
    }
    return TERN_OK;
}

/* The longest bench step with its clock reads (an arrival draw on the AVR:
 * at most 1,874 cycles measured), with room to spare; the guest reports
 * the longest it measured (bench_step_max) and counts one that took longer
 * as inline (bench_inline). */
#define BENCH_STEP_CYCLES 2500ul

static tern_status control_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
    tern_alarm_init(&b.sense_alarm, sensor_fires, NULL);
    tern_alarm_init(&b.forward_alarm, packet_arrives, NULL);
    tern_alarm_init(&b.end_alarm, experiment_ends, NULL);
#if !SEED000_BARE
    b.step_ticks = (uint32_t)tern_cycles_to_ticks(BENCH_STEP_CYCLES);
    while (b.ring_count < SEED000_ARRIVAL_RING)
        draw_arrival();
#endif
    /* start a little after the INITs so the first events are clean */
    b.t0 = tern_now() + tern_cycles_to_ticks(L_P_CYCLES);
#if !SEED000_BARE
    b.t_end = b.t0 + b.window_ticks;
#endif
    tern_alarm_set(&b.sense_alarm, b.t0, tern_cycles_to_ticks(CPU_HZ));
    tern_alarm_set(&b.end_alarm, b.t0 + b.window_ticks, 0);
    tern_irq_state s = port_irq_save();
    arm_next_arrival();
    port_irq_restore(s);
#if !SEED000_BARE
    tern_idle_set_hook(idle_period);
#endif
    tern_idle_set_work(idle_work);
    return TERN_OK;
}

/* Under `hybrid` the sensing task is a thread (TERN_TASK_THREAD) and the
 * forwarding task runs to completion. That is the hybrid's point: the long
 * job, the one a real node would want to block in (waiting on an ADC
 * conversion), gets a stack and may block; the short packet handler stays
 * on the main stack, preempts the sensing thread at once from the
 * interrupt (priority 5 > 1) and pays no context switch.
 *
 * The forwarding task must not be the thread: a thread is switched in
 * only once no run-to-completion handler runs (docs/threads.md, "hybrid"),
 * so a packet would wait behind the whole sensing job as under fifo.
 * Measured (mps2-an385, 20 periods, n = 8, l_s = 75 ms): forwarding as the
 * thread E_t 5506 us, sd 13736 us, 6366 switches; sensing as the thread
 * 1414 us, sd 535 us, 42 switches; no thread at all (= stack's dispatch)
 * 1388 us, sd 529 us. -DSEED000_HYBRID_THREAD=0/1/2 (none, sensing,
 * forwarding) builds the others. */
#ifndef SEED000_HYBRID_THREAD
#define SEED000_HYBRID_THREAD SENSING
#endif
#if defined(TERN_MODEL_hybrid)
#define SENSING_FLAGS (SEED000_HYBRID_THREAD == SENSING ? TERN_TASK_THREAD : 0)
#define FORWARDING_FLAGS (SEED000_HYBRID_THREAD == FORWARDING ? TERN_TASK_THREAD : 0)
#else
#define SENSING_FLAGS 0
#define FORWARDING_FLAGS 0
#endif

static const TERN_DESC tern_task_desc tasks[] = {
    {.name = TERN_DESC_STR("control"), .id = 0, .priority = 0, .handler = control_task},
    {.name = TERN_DESC_STR("sensing"), .id = SENSING, .priority = PRIO_SENSING,
     .handler = sensing_task, .n_in_ports = 1, .flags = SENSING_FLAGS},
    {.name = TERN_DESC_STR("forwarding"), .id = FORWARDING, .priority = PRIO_FORWARDING,
     .handler = forwarding_task, .n_in_ports = 1, .flags = FORWARDING_FLAGS},
};
static const TERN_DESC tern_app_desc app = {TERN_DESC_STR("seed000"), tasks, 3, NULL, 0, 0,
                                            NULL};
TERN_APP_CHECKED(app); /* seed000_bare: validated at build time */

/* A bad parameter block: the reason, and exit status 2. The bare build has
 * no formatter: one sentence for every reason. */
#if SEED000_BARE
/* One copy of the sentence: each use of TERN_ROM_STR is a string of its own. */
static __attribute__((noinline, noreturn)) void bad_params(void)
{
    tern_puts(TERN_ROM_STR("seed000: bad parameter block\n"));
    port_exit(2);
}
#define refuse_params(fmt, ...) bad_params()
#else
#define refuse_params(fmt, ...) (tern_printf(fmt, __VA_ARGS__), port_exit(2))
#endif

int main(void)
{
    tern_init();
    if (tern_params[0] != PARAMS_MAGIC)
        refuse_params("seed000: parameter block has a bad magic %08lx\n",
                      (unsigned long)tern_params[0]);
    uint32_t n = tern_params[1];
    b.ls_ms = tern_params[2];
    b.samples = tern_params[3];
    uint32_t seed = tern_params[4];
    if (n < 1 || n > 12 || b.samples < 1)
        refuse_params("seed000: bad parameters n=%lu samples=%lu\n", (unsigned long)n,
                      (unsigned long)b.samples);
    /* arrival times are kept as 32-bit ticks after t0, and the bench slots
     * compare times within the window in 32-bit differences */
    tern_time window = tern_cycles_to_ticks((uint64_t)b.samples * CPU_HZ);
    if (window >= INT32_MAX)
        refuse_params("seed000: samples=%lu: the window does not fit 32 bits of ticks\n",
                      (unsigned long)b.samples);
    b.window_ticks = (uint32_t)window;
    arrivals_seed(&b.rng, seed);
    b.arrival_mean_cycles = CPU_HZ / ((1ul << n) - 1);
#if !SEED000_BARE
    tern_printf("SEED000 BEGIN model=%s n=%lu ls_ms=%lu samples=%lu seed=%lu\n", tern_model_name,
                (unsigned long)n, (unsigned long)b.ls_ms, (unsigned long)b.samples,
                (unsigned long)seed);
#endif
    tern_app_run(&app);
}
