/* Kernel microbenchmarks (issue 7): timer delays as seed 004 section 5.2
 * (Table 1), interrupt-to-handler latency, message round trip and, in the
 * thread models, semaphore and yield ping-pong. The same source runs under
 * every model; each benchmark prints one line
 *
 *   MICRO name=<n> model=<m> count=<k> min=<x.y> avg=<x.y> max=<x.y> overhead=<x.y>
 *
 * in CPU cycles (instructions on QEMU boards), after subtracting the
 * measurement overhead (also printed, in the same unit).
 *
 * Every sample is a difference of two raw counter reads (port_counter_read,
 * the low counter_bits of tern_now), taken at the first statement of the
 * handler or callback being measured:
 *   alarm_delay        alarm deadline -> first statement of its callback
 *   timer_delay        task timer deadline -> first statement of the
 *                      TIMEOUT0 handler
 *   *_load             the same while the lowest-priority task busy-loops
 *                      with port_work(LOAD_CHUNK) chunks (re-posting itself
 *                      after each) and a second, periodic task timer fires
 *   irq_to_handler_preempt  just before port_swirq_raise() in a running
 *                      handler -> first statement of the higher task's
 *                      handler the interrupt posts to (fifo and priority
 *                      cannot preempt: the raising handler returns right
 *                      after the raise)
 *   irq_to_handler_idle     the same, raised from the idle loop's work
 *                      hook with no handler running
 *   msg_roundtrip      A posts to B (higher priority), B posts back: from
 *                      one start of A's handler to the next
 *   sem_roundtrip      threads only: A gives its peer's semaphore and takes
 *                      its own, the peer (A's priority) takes its own and
 *                      gives A's
 *   yield_roundtrip    threads only: A and its peer (equal priority) both
 *                      yield; A -> peer -> A: two yields and two switches
 *
 * Overhead: for a delay, the ticks of one back-to-back pair of counter
 * reads (what lies between the event and the sample); for a round trip,
 * the period of the sampling function lap() called in a tight loop (its
 * own cost per sample). The trace ring is compiled out for this app.
 *
 * Run parameters (.tern_params, patched by `tern bench micro`):
 *   word 0: samples per benchmark (default 10000)
 *   word 1: bit mask of benchmarks to run (bit i = names[i]; 0 = all) */
#include "kernel.h" /* white box: the deadline the kernel stored for a task timer */
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"
#if defined(TERN_MODEL_threads) || defined(TERN_MODEL_adaptive)
#include "tern/thread.h"
#define HAS_THREADS 1
#else
#define HAS_THREADS 0
#endif

TERN_PARAMS_DEFAULTS(10000, 0);

enum bench_id {
    ALARM_DELAY,
    TIMER_DELAY,
    ALARM_DELAY_LOAD,
    TIMER_DELAY_LOAD,
    IRQ_PREEMPT,
    IRQ_IDLE,
    MSG_ROUNDTRIP,
    SEM_ROUNDTRIP,
    YIELD_ROUNDTRIP,
    N_BENCH
};
static const char *const names[N_BENCH] = {
    "alarm_delay", "timer_delay", "alarm_delay_load", "timer_delay_load",
    "irq_to_handler_preempt", "irq_to_handler_idle", "msg_roundtrip",
    "sem_roundtrip", "yield_roundtrip",
};

/* Priorities: the load lowest, control just above it (so it preempts the
 * load, but a benchmark's final post to it does not nest its printing on
 * top of the measured handlers: the AVR has a 384-byte stack). */
enum { CONTROL, LOAD, TIMED, LOW, HIGH, A, B, PEER, N_TASKS };

#define LOAD_CHUNK 2000u  /* cycles of busy work per load message */
#define SECOND_PERIOD 19997u /* ticks: the load's second timer (a prime; shorter overloads the AVR) */
#define DELAY_BASE 3000u  /* ticks from arming to a deadline, plus ... */
#define DELAY_SPREAD 1021u /* ... a pseudo-random 0..1020 so deadlines meet the load at every phase */
#define PORT_DONE TERN_PORT_APP(0)
#define PORT_LOAD_STOPPED TERN_PORT_APP(1)

typedef struct {
    uint32_t n, min, max;
    uint64_t sum;
    uint32_t prev;
    bool have_prev;
} samples;

static uint32_t count;
static enum bench_id current;
static samples s;
static uint32_t read_pair_ticks; /* one back-to-back pair of counter reads */
static uint32_t lap_ticks;       /* one lap() in a tight loop */
static uint32_t mask;            /* counter_bits wide */
static uint32_t rng = 12345;
static bool load_on;

static uint32_t next_delay(void)
{
    rng = rng * 1103515245u + 12345u;
    return DELAY_BASE + (rng >> 8) % DELAY_SPREAD;
}

static void reset_samples(void)
{
    s.n = 0;
    s.min = UINT32_MAX;
    s.max = 0;
    s.sum = 0;
    s.have_prev = false;
}

static void record(uint32_t ticks)
{
    s.n++;
    s.sum += ticks;
    if (ticks < s.min)
        s.min = ticks;
    if (ticks > s.max)
        s.max = ticks;
}

static void send(tern_task_id to, tern_port port) { (void)tern_send(to, port, NULL, 0, 0); }

static void done(void) { send(CONTROL, PORT_DONE); }

/* One sample of a periodic event: the ticks since the previous lap. */
static __attribute__((noinline)) void lap(void)
{
    uint32_t t = port_counter_read();
    if (s.have_prev)
        record((t - s.prev) & mask);
    s.prev = t;
    s.have_prev = true;
}

static void calibrate(void)
{
    enum { ROUNDS = 64 };
    tern_irq_state st = port_irq_save();
    read_pair_ticks = UINT32_MAX;
    for (int i = 0; i < ROUNDS; i++) {
        uint32_t a = port_counter_read();
        uint32_t b = port_counter_read();
        if (((b - a) & mask) < read_pair_ticks)
            read_pair_ticks = (b - a) & mask;
    }
    reset_samples();
    for (int i = 0; i < ROUNDS; i++)
        lap();
    lap_ticks = s.min;
    reset_samples();
    port_irq_restore(st);
}

/* Tenths of a cycle: min, avg and max are rounded the same way, so
 * min <= avg <= max holds in the printed numbers too. */
static uint64_t tenths(uint64_t ticks) { return tern_ticks_to_cycles(ticks * 10); }

static void print_tenths(const char *key, uint64_t t)
{
    tern_printf(" %s=%lu.%lu", key, (unsigned long)(t / 10), (unsigned long)(t % 10));
}

static void report(void)
{
    uint32_t over = current >= MSG_ROUNDTRIP ? lap_ticks : read_pair_ticks;
    uint64_t sum = s.sum - (uint64_t)over * s.n;
    tern_printf("MICRO name=%s model=%s count=%lu", names[current], tern_model_name,
                (unsigned long)s.n);
    print_tenths("min", tenths(s.min - over));
    print_tenths("avg", s.n ? tenths(sum) / s.n : 0);
    print_tenths("max", tenths(s.max - over));
    print_tenths("overhead", tenths(over));
    tern_printf("\n");
}

/* --- timer delays ------------------------------------------------------- */

static tern_alarm alarm;
static tern_time timer_deadline;

static void alarm_fired(tern_alarm *a, void *arg)
{
    uint32_t t = port_counter_read();
    (void)arg;
    record((t - (uint32_t)a->deadline) & mask);
    if (s.n < count)
        tern_alarm_set(a, tern_now() + next_delay(), 0);
    else
        done();
}

static void start_timer(void)
{
    (void)tern_timer_start(0, next_delay(), 0);
    timer_deadline = tern_tasks[TIMED].timers[0].deadline;
}

static tern_status timed(void *state, tern_msg *m)
{
    uint32_t t = port_counter_read();
    (void)state;
    if (m->port == TERN_PORT_TIMEOUT(0)) {
        record((t - (uint32_t)timer_deadline) & mask);
        if (s.n < count)
            start_timer();
        else
            done();
    } else if (m->port == TERN_PORT_APP(0)) {
        start_timer();
    }
    return TERN_OK;
}

static tern_status load(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_APP(0)) {
        if (!load_on) { /* stop the second timer, then the next benchmark may start */
            tern_timer_cancel(1);
            send(CONTROL, PORT_LOAD_STOPPED);
            return TERN_OK;
        }
        port_work(LOAD_CHUNK);
        send(LOAD, TERN_PORT_APP(0));
    } else if (m->port == TERN_PORT_APP(1)) {
        tern_timer_start(1, SECOND_PERIOD, SECOND_PERIOD);
        send(LOAD, TERN_PORT_APP(0));
    } else if (m->port == TERN_PORT_TIMEOUT(1)) {
        port_work(100);
    }
    return TERN_OK;
}

/* --- interrupt to handler ----------------------------------------------- */

static uint32_t raised_at;
static volatile bool raise_from_idle;

static void swirq(void *arg)
{
    (void)arg;
    send(HIGH, TERN_PORT_APP(0));
}

static void raise(void)
{
    raised_at = port_counter_read();
    port_swirq_raise(0);
}

/* Returns true after raising, so the idle loop comes back here for the
 * next sample instead of waiting for an interrupt that never comes. */
static bool idle_work(void)
{
    if (!raise_from_idle)
        return false;
    raise_from_idle = false;
    raise();
    return true;
}

static tern_status low(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK; /* INIT */
    raise();
    return TERN_OK;
}

static void next_irq_sample(void)
{
    if (current == IRQ_IDLE)
        raise_from_idle = true;
    else
        send(LOW, TERN_PORT_APP(0));
}

static tern_status high(void *state, tern_msg *m)
{
    uint32_t t = port_counter_read();
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK; /* INIT */
    record((t - raised_at) & mask);
    if (s.n < count)
        next_irq_sample();
    else
        done();
    return TERN_OK;
}

/* --- round trips --------------------------------------------------------- */

#if HAS_THREADS
static tern_sem sem_a, sem_b;
static volatile bool yield_on;
#endif

static tern_status task_a(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK; /* INIT */
    if (current == MSG_ROUNDTRIP) {
        lap();
        if (s.n < count)
            send(B, TERN_PORT_APP(0));
        else
            done();
        return TERN_OK;
    }
#if HAS_THREADS
    if (current == SEM_ROUNDTRIP) {
        while (s.n < count) {
            lap();
            tern_sem_give(&sem_b);
            tern_sem_take(&sem_a);
        }
    } else {
        /* Start the peer from here: A and its peer have one priority, so
         * it becomes ready without running; started by the lower control
         * task, one of them would run (and yield to nobody) alone. */
        send(PEER, TERN_PORT_APP(0));
        while (s.n < count) {
            lap();
            tern_yield();
        }
        yield_on = false;
    }
    done();
#endif
    return TERN_OK;
}

static tern_status task_b(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK; /* INIT */
    send(A, TERN_PORT_APP(0));
    return TERN_OK;
}

static tern_status peer(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK; /* INIT */
#if HAS_THREADS
    if (current == SEM_ROUNDTRIP) {
        for (uint32_t i = 0; i <= count; i++) { /* A's first lap is no sample */
            tern_sem_take(&sem_b);
            tern_sem_give(&sem_a);
        }
    } else {
        while (yield_on)
            tern_yield();
    }
#endif
    return TERN_OK;
}

/* --- control -------------------------------------------------------------- */

static bool wanted(enum bench_id id)
{
    if (!HAS_THREADS && (id == SEM_ROUNDTRIP || id == YIELD_ROUNDTRIP))
        return false;
    return tern_params[1] == 0 || (tern_params[1] >> id) & 1u;
}

/* A benchmark that stops producing samples is reported, never a hang. Its
 * limit is four times the longest deadline per sample, plus a second:
 * every sample takes less than that on every board (on the 4 MHz AVR a
 * sample of a loaded timer takes up to ~8000 cycles). */
static tern_alarm guard;
#define GUARD_TICKS_PER_SAMPLE (4u * (DELAY_BASE + DELAY_SPREAD))

static void stalled(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    const tern_counters *c = tern_stats();
    tern_printf("micro: %s stalled after %lu of %lu samples (queue depth %u, stack depth %u, "
                "dropped",
                names[current], (unsigned long)s.n, (unsigned long)count, c->queue_depth,
                c->stack_depth);
    for (int i = 0; i < TERN_DROP_REASONS; i++)
        tern_printf(" %lu", (unsigned long)c->dropped[i]);
    tern_printf(" by tern_drop_reason)\n");
    port_exit(3);
}

static void start(enum bench_id id)
{
    current = id;
    reset_samples();
    tern_alarm_set(&guard, tern_now() + (tern_time)count * GUARD_TICKS_PER_SAMPLE + tern_clock_hz(),
                   0);
    switch (id) {
    case ALARM_DELAY_LOAD:
    case TIMER_DELAY_LOAD:
        load_on = true;
        send(LOAD, TERN_PORT_APP(1));
        /* fall through */
    case ALARM_DELAY:
    case TIMER_DELAY:
        if (id == ALARM_DELAY || id == ALARM_DELAY_LOAD)
            tern_alarm_set(&alarm, tern_now() + next_delay(), 0);
        else
            send(TIMED, TERN_PORT_APP(0));
        break;
    case IRQ_PREEMPT:
    case IRQ_IDLE:
        next_irq_sample();
        break;
    case MSG_ROUNDTRIP:
        send(A, TERN_PORT_APP(0));
        break;
#if HAS_THREADS
    case SEM_ROUNDTRIP:
        tern_sem_init(&sem_a, 0, 1);
        tern_sem_init(&sem_b, 0, 1);
        send(PEER, TERN_PORT_APP(0));
        send(A, TERN_PORT_APP(0));
        break;
    case YIELD_ROUNDTRIP:
        yield_on = true;
        send(A, TERN_PORT_APP(0));
        break;
#endif
    default:
        break;
    }
}

static void start_next(int after)
{
    for (int id = after + 1; id < N_BENCH; id++) {
        if (wanted((enum bench_id)id)) {
            start((enum bench_id)id);
            return;
        }
    }
    tern_alarm_cancel(&guard);
    tern_printf("MICRO end model=%s\n", tern_model_name);
    port_exit(0);
}

static tern_status control(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        count = tern_params[0];
        if (count == 0 || tern_params[1] >> N_BENCH) {
            tern_printf("micro: bad parameters: count %lu, mask 0x%lx (bits 0..%d)\n",
                        (unsigned long)count, (unsigned long)tern_params[1], N_BENCH - 1);
            port_exit(2);
        }
        mask = port_board.counter_bits >= 32 ? UINT32_MAX
                                             : (1u << port_board.counter_bits) - 1u;
        calibrate();
        tern_printf("MICRO begin model=%s board=%s count=%lu read_pair=%lu lap=%lu ticks\n",
                    tern_model_name, TERN_BOARD_NAME, (unsigned long)count,
                    (unsigned long)read_pair_ticks, (unsigned long)lap_ticks);
        port_swirq_set(0, swirq, NULL);
        tern_idle_set_work(idle_work);
        tern_alarm_init(&alarm, alarm_fired, NULL);
        tern_alarm_init(&guard, stalled, NULL);
        start_next(-1);
    } else if (m->port == PORT_DONE) {
        /* The load task must see load_on == false and stop its timer
         * first: its timer would fill the message pool while this handler
         * prints (a line takes ~100,000 cycles on the AVR's UART) or while
         * the next benchmark starves the load task. */
        if (load_on) {
            load_on = false;
        } else {
            report();
            start_next((int)current);
        }
    } else if (m->port == PORT_LOAD_STOPPED) {
        report();
        start_next((int)current);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "control", .id = CONTROL, .priority = 1, .handler = control, .n_in_ports = 2},
        {.name = "load", .id = LOAD, .priority = 0, .handler = load, .n_in_ports = 2},
        {.name = "timed", .id = TIMED, .priority = 5, .handler = timed, .n_in_ports = 1},
        {.name = "low", .id = LOW, .priority = 2, .handler = low, .n_in_ports = 1},
        {.name = "high", .id = HIGH, .priority = 5, .handler = high, .n_in_ports = 1},
        {.name = "a", .id = A, .priority = 2, .handler = task_a, .n_in_ports = 1},
        {.name = "b", .id = B, .priority = 3, .handler = task_b, .n_in_ports = 1},
        {.name = "peer", .id = PEER, .priority = 2, .handler = peer, .n_in_ports = 1},
    };
    static const tern_app_desc app = {.name = "micro", .tasks = tasks, .n_tasks = N_TASKS};

    tern_init();
    tern_app_run(&app);
}
