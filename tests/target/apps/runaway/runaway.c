/* A task whose handler loops forever. */
#include "tern/port.h"
#include "tern/tern.h"

static tern_status spinner(void *state, tern_msg *m)
{
    (void)state;
    (void)m;
    tern_printf("runaway: spinning\n");
#ifdef RUNAWAY_MASKED
    (void)port_irq_save();
#endif
    for (volatile int forever = 1; forever;)
        ;
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "spinner", .id = 0, .priority = 1, .handler = spinner},
    };
    static const tern_app_desc app = {.name = "runaway", .tasks = tasks, .n_tasks = 1};
    tern_app_error err;

    tern_init();
    if (tern_app_start(&app, &err) != TERN_OK)
        return 1;
    tern_run();
}
