/* The smallest useful application, for the footprint benchmark: one task,
 * one periodic timer, the console. It prints three ticks and exits. Built
 * with the kernel's default configuration. */
#include "tern/port.h"
#include "tern/tern.h"

static tern_status ticker(void *state, tern_msg *m)
{
    static unsigned ticks;
    (void)state;
    if (m->port == TERN_PORT_INIT)
        return tern_timer_start(0, tern_clock_hz() / 100, tern_clock_hz() / 100);
    tern_printf("tick %u\n", ++ticks);
    if (ticks == 3)
        port_exit(0);
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "ticker", .id = 0, .priority = 0, .handler = ticker},
    };
    static const tern_app_desc app = {.name = "micro_min", .tasks = tasks, .n_tasks = 1};
    tern_app_error err;

    tern_init();
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("micro_min: %s\n", err.text);
        return 1;
    }
    tern_run();
}
