/* Kernel start-up and the main loop shared by the run-to-completion
 * models. */
#include "kernel.h"

#if TERN_RUN_LIMIT_S
static tern_alarm run_limit;

static void run_limit_reached(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    tern_puts(TERN_ROM_STR("\ntern: virtual-time limit of "));
    tern_putu(TERN_RUN_LIMIT_S);
    tern_puts(TERN_ROM_STR(" s reached (task "));
    tern_puts(tern_task_name(sched_running_task()));
    tern_puts(TERN_ROM_STR(" running)\n"));
    port_exit(TERN_EXIT_RUN_LIMIT);
}
#endif

void tern_init(void)
{
    tern_irq_state s = port_irq_save();
    sched_reset();
    app_reset();
    msg_pool_init();
    heap_init();
    clock_init();
    timer_reset();
    idle_reset();
    port_irq_restore(s);
    trace_init();
#if TERN_RUN_LIMIT_S
    tern_alarm_init(&run_limit, run_limit_reached, NULL);
    tern_alarm_set(&run_limit, tern_now() + (tern_time)TERN_RUN_LIMIT_S * port_board.clock_hz, 0);
#endif
}

bool tern_run_once(void) { return sched_run_next() || idle_once(); }

void tern_run(void)
{
    for (;;)
        (void)tern_run_once();
}
