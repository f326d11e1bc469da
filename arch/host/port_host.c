/* Host port (see host.h). Interrupts are modelled with one flag: while it
 * is clear, due interrupts wait and fire in time order as soon as it is
 * set again, like a pending line on a real CPU. */
#include "host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern/port.h"
#include "tern/tern.h"

#define MAX_INJECTED 64
#define CONSOLE_SIZE (256 * 1024)

static const tern_sleep_state sleep_states[] = {
    {"wait", 0, 0},
    {"deep", 1000, 100},
};

const tern_board_info port_board = {
    .clock_hz = 1000000,
    .counter_bits = TERN_COUNTER_BITS,
    .cycles_per_tick_num = 1,
    .cycles_per_tick_den = 1,
    .n_sleep_states = 2,
    .sleep_states = sleep_states,
    /* the host tests' board: an ADC, no radio (test_app checks both ways) */
    .hw = TERN_HW_ADC,
};

typedef struct {
    uint64_t at;
    host_irq_fn fn;
    void *arg;
} injected;

static uint64_t now;
static uint64_t limit;
static bool irq_enabled;
static bool deadline_armed;
static uint64_t deadline_at;
static injected pending[MAX_INJECTED];
static size_t n_pending;
static char console[CONSOLE_SIZE];
static size_t console_len;
static int level;

void host_reset(uint64_t start)
{
    now = start;
    limit = UINT64_MAX;
    irq_enabled = true;
    deadline_armed = false;
    n_pending = 0;
    console_len = 0;
    console[0] = '\0';
    level = -1;
}

uint64_t host_time(void) { return now; }
const char *host_console(void) { return console; }
int host_level(void) { return level; }

void host_inject(uint64_t at, host_irq_fn fn, void *arg)
{
    if (n_pending == MAX_INJECTED) {
        fprintf(stderr, "host: more than %d injected interrupts\n", MAX_INJECTED);
        abort();
    }
    size_t i = n_pending++;
    while (i > 0 && pending[i - 1].at > at) { /* keep sorted, stable */
        pending[i] = pending[i - 1];
        i--;
    }
    pending[i] = (injected){at, fn, arg};
}

/* Time of the next interrupt source, UINT64_MAX if none. */
static uint64_t next_event(void)
{
    uint64_t t = UINT64_MAX;
    if (deadline_armed)
        t = deadline_at;
    if (n_pending && pending[0].at < t)
        t = pending[0].at;
    return t;
}

/* Fire every due interrupt, earliest first; the deadline wins a tie. */
static void fire_due(void)
{
    while (irq_enabled && next_event() <= now) {
        irq_enabled = false;
        tern_isr_enter();
        if (deadline_armed && deadline_at <= now &&
            (!n_pending || deadline_at <= pending[0].at)) {
            deadline_armed = false;
            tern_clock_isr();
        } else {
            injected ev = pending[0];
            memmove(pending, pending + 1, --n_pending * sizeof pending[0]);
            ev.fn(ev.arg);
        }
        tern_isr_exit();
        irq_enabled = true;
    }
}

tern_irq_state port_irq_save(void)
{
    tern_irq_state s = irq_enabled;
    irq_enabled = false;
    return s;
}

void port_irq_restore(tern_irq_state s)
{
    irq_enabled = s != 0;
    fire_due();
}

void port_irq_enable(void) { port_irq_restore(1); }

uint32_t port_counter_read(void) { return (uint32_t)now; }

void port_deadline_set(uint32_t ticks)
{
    deadline_armed = true;
    deadline_at = now + ticks;
}

/* The one-shot at counter value `at`, the clock's low half, as the AVR
 * port has it (kernel/timer.c uses it for the 32-bit tick): one passed, or
 * more than half a wrap ahead, fires at once. */
void port_deadline_at(uint32_t at)
{
    uint32_t ahead = at - (uint32_t)now;
    port_deadline_set(ahead > UINT32_C(1) << 31 ? 0 : ahead);
}

void port_deadline_cancel(void) { deadline_armed = false; }

void port_dispatch(uint8_t lvl)
{
    (void)lvl;
    tern_sched_preempt();
}

void port_set_level(int8_t lvl) { level = lvl; }

void host_work(uint64_t ticks)
{
    while (ticks > 0) {
        uint64_t next = next_event();
        if (irq_enabled && next < now + ticks) {
            uint64_t step = next > now ? next - now : 0;
            now += step;
            ticks -= step;
            fire_due();
        } else {
            now += ticks;
            ticks = 0;
        }
    }
}

void port_work(uint32_t cycles) { host_work(cycles); }

bool port_idle(uint8_t state, tern_time max_ticks)
{
    (void)state;
    (void)max_ticks;
    uint64_t next = next_event();
    if (next == UINT64_MAX || next > limit) {
        if (limit != UINT64_MAX && limit > now)
            now = limit;
        return false;
    }
    if (next > now)
        now = next;
    port_irq_enable();
    (void)port_irq_save();
    return true;
}

void host_run_until(uint64_t until)
{
    limit = until;
    while (now < until && tern_run_once())
        ;
    limit = UINT64_MAX;
}

void port_putc(char c)
{
    if (console_len + 1 < CONSOLE_SIZE) {
        console[console_len++] = c;
        console[console_len] = '\0';
    }
}

void port_exit(int status) { exit(status); }

/* Host tests run on the process stack, which is not painted. */
uint32_t port_stack_used(void) { return 0; }
