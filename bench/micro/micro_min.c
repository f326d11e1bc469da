/* The smallest useful application, for the footprint benchmark: one task,
 * one periodic timer, the console. It prints three ticks and exits. Built
 * with the kernel's default configuration (micro_min.elf) and with the
 * minimal one (micro_min_bare.elf: bench/micro/CMakeLists.txt). It prints
 * with tern_puts and tern_putu: it needs no formatter. */
#include "tern/port.h"
#include "tern/tern.h"

static tern_status ticker(void *state, tern_msg *m)
{
    static unsigned ticks;
    (void)state;
    if (m->port == TERN_PORT_INIT)
        return tern_timer_start(0, tern_clock_hz() / 100, tern_clock_hz() / 100);
    tern_puts(TERN_ROM_STR("tick "));
    tern_putu(++ticks);
    tern_puts(TERN_ROM_STR("\n"));
    if (ticks == 3)
        port_exit(0);
    return TERN_OK;
}

static const TERN_DESC tern_task_desc tasks[] = {
    {.name = TERN_DESC_STR("ticker"), .id = 0, .priority = 0, .handler = ticker},
};
static const TERN_DESC tern_app_desc app = {.name = TERN_DESC_STR("micro_min"), .tasks = tasks,
                                            .n_tasks = 1};
TERN_APP_CHECKED(app); /* micro_min_bare */

int main(void)
{
    tern_init();
    tern_app_run(&app);
}
