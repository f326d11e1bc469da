/* Timer delays as seed 004 Table 1 on the MicaZ (issue 11, experiment 1;
 * `tern bench bips timers`, docs/bips.md). Three timers, each expiring
 * `count` times at pseudo-random distances of 3000..4020 cycles, without
 * and with a background load:
 *
 *   bcs    the BCS's hardware timer (net/bcs_timer.h: Timer3, output
 *          compare 3A, channel BCS_TIMER_SLOT): from the time it was armed
 *          for to the first instruction of the function the BCS timer
 *          calls (the protocol's)
 *   alarm  a kernel alarm (interrupt context): from its deadline to the
 *          first instruction of its callback
 *   timer  a task timer (a TIMEOUT message): from its deadline to the first
 *          instruction of the task's handler
 *
 * The BCS timer's expirations are BCS_TIMER_LEAD_TICKS (the take-over,
 * boards/micaz/bcs_timer.c) further apart, so that each early match comes
 * after the previous expiration.
 *
 * Every delay is exact, in CPU cycles: the first instruction of each
 * measured function is an LDS of TCNT1, the kernel clock's low 16 bits, so
 * the delay is that reading minus the low 16 bits of the time the timer
 * was armed for, with nothing to subtract. (simavr derives a
 * timer's count from the cycle counter at the instruction that reads it;
 * tools/tests/test_bipsbench.py checks from the ELF that each function
 * starts with that LDS.)
 *
 * Load (seed 004, footnote 3: "processed in non-interrupt mode and with
 * lowest priority"): the lowest-priority task's own timer expires every
 * 1000..4999 cycles (pseudo-random) and its handler then works 100..2147
 * cycles (port_work). The measured timers keep their own distances, so
 * they meet the load at every phase.
 *
 * Output (console), per (timer, load):
 *   BIPST name=<bcs|alarm|timer> load=<0|1> count=<n> min=<c> max=<c> sum=<c> shift=<s>
 *   H <bin> <count>        one line per used bin: delays bin<<s .. (bin+1)<<s - 1
 *                          (the last bin, 255, holds every longer delay too)
 * and BIPST END model=<m> when done. Parameters (.tern_params, patched by
 * the bench): word 0 = expirations per timer (default 10000), word 1 =
 * bit mask of runs (bit 2*timer+load; 0 = all). */
#include <avr/io.h>

#include "bcs_timer.h"
#include "kernel.h" /* white box: the deadline the kernel stored for a task timer */
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"

TERN_PARAMS_DEFAULTS(10000, 0);

#ifndef BCS_TIMER_LEAD_TICKS /* bench/bips/CMakeLists.txt sets it, as for bcs_timer.c */
#define BCS_TIMER_LEAD_TICKS 0u
#endif

enum { T_BCS, T_ALARM, T_TIMER, N_TIMERS };
static const char *const names[N_TIMERS] = {"bcs", "alarm", "timer"};

enum { CONTROL, TIMED, LOAD, N_TASKS };
#define PORT_START TERN_PORT_APP(0)
#define PORT_DONE TERN_PORT_APP(1)
#define TIMER_LOAD 0
#define TIMER_MEASURED 0

#define DELAY_BASE 3000u
#define DELAY_SPREAD 1021u
#define N_BINS 256u

static uint32_t count, mask;
static uint8_t kind, loaded;
static volatile bool load_on;
static uint32_t n, min, max, sum;
static uint8_t shift;
static uint16_t bins[N_BINS];
static uint32_t rng = 12345;

static uint32_t random_below(uint32_t k)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % k;
}

/* A refused message would stall the run: say so and stop. */
static void post(tern_task_id to, tern_port port)
{
    tern_status st = tern_send(to, port, NULL, 0, 0);
    if (st != TERN_OK) {
        tern_printf("bips_timers: tern_send to %u port %u: %d\n", to, port, (int)st);
        port_exit(2);
    }
}

/* The distance is drawn before the clock is read: the draw (a 32-bit
 * modulo) takes longer than the difference between the timers' paths. */
static tern_time next_deadline(void)
{
    uint32_t d = DELAY_BASE + random_below(DELAY_SPREAD);
    return tern_now() + d;
}

/* The BCS timer's events are the lead further apart, so that its early
 * match (the lead before the event) is never before the previous event. */
static tern_time next_bcs_deadline(void)
{
    uint32_t d = BCS_TIMER_LEAD_TICKS + DELAY_BASE + random_below(DELAY_SPREAD);
    return tern_now() + d;
}

/* The counter read that must be each measured function's first instruction. */
#define READ16(lo, hi)                                                                  \
    ({                                                                                  \
        uint16_t v_;                                                                    \
        __asm__ volatile("lds %A0, %1\n\tlds %B0, %2"                                   \
                         : "=r"(v_)                                                     \
                         : "i"(_SFR_MEM_ADDR(lo)), "i"(_SFR_MEM_ADDR(hi)));             \
        v_;                                                                             \
    })

/* Returns true while more expirations are due. */
static __attribute__((noinline)) bool record(uint16_t delay)
{
    n++;
    sum += delay;
    if (delay < min)
        min = delay;
    if (delay > max)
        max = delay;
    uint16_t b = (uint16_t)(delay >> shift);
    bins[b < N_BINS ? b : N_BINS - 1]++;
    if (n < count)
        return true;
    post(CONTROL, PORT_DONE);
    return false;
}

/* --- the BCS's hardware timer ---------------------------------------------- */

static tern_time bcs_target;

static void bcs_arm(void)
{
    bcs_target = next_bcs_deadline();
    bcs_timer_set(BCS_TIMER_SLOT, bcs_target);
}

static __attribute__((noinline)) void bcs_body(uint16_t tcnt)
{
    if (record((uint16_t)(tcnt - (uint16_t)bcs_target)))
        bcs_arm();
}

static void bcs_fired(void) { bcs_body(READ16(TCNT1L, TCNT1H)); }

static void bcs_unused(void) {}

/* --- a kernel alarm (interrupt context) -------------------------------------- */

static tern_alarm alarm;

static __attribute__((noinline)) void alarm_body(tern_alarm *a, uint16_t tcnt)
{
    if (record((uint16_t)(tcnt - (uint16_t)a->deadline)))
        tern_alarm_set(a, next_deadline(), 0);
}

static void alarm_fired(tern_alarm *a, void *arg)
{
    (void)arg;
    alarm_body(a, READ16(TCNT1L, TCNT1H));
}

/* --- a task timer (a message) --------------------------------------------------- */

static tern_time timer_deadline;

static void timer_arm(void)
{
    tern_time at = next_deadline();
    (void)tern_timer_start(TIMER_MEASURED, at - tern_now(), 0);
    timer_deadline = tern_tasks[TIMED].timers[TIMER_MEASURED].deadline;
}

static __attribute__((noinline)) tern_status timed_body(uint16_t tcnt, tern_msg *m)
{
    if (m->port == TERN_PORT_TIMEOUT(TIMER_MEASURED)) {
        if (record((uint16_t)(tcnt - (uint16_t)timer_deadline)))
            timer_arm();
    } else if (m->port == PORT_START) {
        timer_arm();
    }
    return TERN_OK;
}

static tern_status timed(void *state, tern_msg *m)
{
    (void)state;
    return timed_body(READ16(TCNT1L, TCNT1H), m);
}

/* --- the load ------------------------------------------------------------------- */

static tern_status load(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == PORT_START || (m->port == TERN_PORT_TIMEOUT(TIMER_LOAD) && load_on)) {
        if (m->port != PORT_START)
            port_work(100 + random_below(2048));
        (void)tern_timer_start(TIMER_LOAD, 1000 + random_below(4000), 0);
    }
    return TERN_OK;
}

/* --- control ---------------------------------------------------------------------- */

/* Runs without load first: the load's last timer may still be pending
 * when its run ends. */
static void advance(void)
{
    if (++kind == N_TIMERS) {
        kind = 0;
        loaded++;
    }
}

static bool next_run(void)
{
    for (;;) {
        if (loaded == 2)
            return false;
        if (!mask || (mask >> (2 * kind + loaded) & 1))
            return true;
        advance();
    }
}

static void start_run(void)
{
    n = max = sum = 0;
    min = UINT32_MAX;
    /* one-cycle bins where the delays are short: the BCS with a take-over */
    shift = kind == T_BCS && !loaded && BCS_TIMER_LEAD_TICKS ? 0 : 4;
    for (unsigned i = 0; i < N_BINS; i++)
        bins[i] = 0;
    load_on = loaded;
    if (loaded)
        post(LOAD, PORT_START);
    if (kind == T_BCS)
        bcs_arm();
    else if (kind == T_ALARM)
        tern_alarm_set(&alarm, next_deadline(), 0);
    else
        post(TIMED, PORT_START);
}

static void report(void)
{
    tern_printf("BIPST name=%s load=%u count=%lu min=%lu max=%lu sum=%lu shift=%u\n", names[kind], loaded,
                (unsigned long)n, (unsigned long)min, (unsigned long)max, (unsigned long)sum, shift);
    for (unsigned i = 0; i < N_BINS; i++)
        if (bins[i])
            tern_printf("H %u %u\n", i, bins[i]);
}

static tern_status control(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        count = tern_params[0] ? tern_params[0] : 1;
        mask = tern_params[1];
        tern_alarm_init(&alarm, alarm_fired, NULL);
        bcs_timer_init(bcs_fired, bcs_unused);
    } else if (m->port == PORT_DONE) {
        load_on = false;
        report();
        advance();
    } else {
        return TERN_OK;
    }
    if (next_run()) {
        start_run();
    } else {
        tern_printf("BIPST END model=%s\n", tern_model_name);
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    /* the measured task above control (a report never nests above a
     * measured handler), the load lowest */
    static const tern_task_desc tasks[] = {
        {.name = "control", .id = CONTROL, .priority = 2, .handler = control, .n_in_ports = 2},
        {.name = "timed", .id = TIMED, .priority = 3, .handler = timed, .n_in_ports = 1},
        {.name = "load", .id = LOAD, .priority = 1, .handler = load, .n_in_ports = 1},
    };
    static const tern_app_desc app = {.name = "bips_timers", .tasks = tasks, .n_tasks = N_TASKS};

    tern_init();
    tern_app_run(&app);
}
