/* Kernel start-up and the main loop shared by the run-to-completion
 * models. */
#include "kernel.h"

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
}

bool tern_run_once(void) { return sched_run_next() || idle_once(); }

void tern_run(void)
{
    for (;;)
        (void)tern_run_once();
}
