/* A periodic task timer: TIMEOUT0 every PERIOD cycles, COUNT times. Each
 * expiry prints how late its handler started after the ideal deadline
 * start + k * PERIOD (in cycles; instructions on QEMU boards). Periodic
 * timers re-arm from their previous deadline, so lateness stays bounded
 * instead of accumulating, even when every third handler works for
 * BUSY cycles. */
#include "tern/port.h"
#include "tern/tern.h"

/* Long enough that a handler (its line at 500 kbit/s on the AVR's USART,
 * the formatting and BUSY) always ends before the next deadline. */
#define PERIOD 20000u /* cycles: 5 ms of the 4 MHz sensor CPU */
#define COUNT 20u
#define BUSY 3000u    /* work per expiry, so the next one meets a busy CPU sometimes */

static tern_time start;
static unsigned fired;
static uint64_t worst;

static tern_status ticker(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        start = tern_now();
        return tern_timer_start(0, tern_cycles_to_ticks(PERIOD), tern_cycles_to_ticks(PERIOD));
    }
    if (m->port != TERN_PORT_TIMEOUT(0))
        return TERN_OK;
    tern_time now = tern_now(); /* first: the lateness is the kernel's, not this handler's */
    fired++;
    tern_time ideal = start + (tern_time)fired * tern_cycles_to_ticks(PERIOD);
    uint64_t late = now >= ideal ? tern_ticks_to_cycles(now - ideal) : 0;
    if (now < ideal) {
        tern_printf("tick %u EARLY by %lu cycles\n", fired,
                    (unsigned long)tern_ticks_to_cycles(ideal - now));
        port_exit(1);
    }
    if (late > worst)
        worst = late;
    tern_printf("tick %u late=%lu\n", fired, (unsigned long)late);
    port_work(fired % 3 == 0 ? BUSY : 0);
    if (fired == COUNT) {
        tern_printf("periodic: %u ticks, period %u cycles, worst lateness %lu cycles\n", fired,
                    PERIOD, (unsigned long)worst);
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "ticker", .id = 0, .priority = 2, .handler = ticker},
    };
    static const tern_app_desc app = {.name = "periodic", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
