/* A handler that recurses through the whole main stack, the one the
 * run-to-completion models share (Cortex-M: arch/cortex-m/startup.c, its
 * MPU guard at the bottom of RAM). The first write into the guard must be
 * reported as a stack overflow with the stack's size and the depth, and
 * the run stop with TERN_EXIT_STACK_OVERFLOW: not run on below RAM into a
 * lockup with nothing printed. */
#include "cortex_m.h" /* port_stack_size */
#include "tern/port.h"
#include "tern/tern.h"
#include "../dig.h"

static tern_status digger(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
    tern_printf("main_overflow: digging, %lu bytes of stack\n", (unsigned long)port_stack_size());
    uint32_t v = dig(port_stack_size() / 64); /* ~80 bytes a frame: past the bottom */
    tern_printf("main_overflow: survived (%lu)\n", (unsigned long)v);
    port_exit(0);
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "digger", .id = 0, .priority = 1, .handler = digger},
    };
    static const tern_app_desc app = {.name = "main_overflow", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
