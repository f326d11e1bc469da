/* A deliberate fault inside a task handler: the port must report it (the
 * fault status, the faulting PC, the running task) and exit non-zero. The
 * kind of fault comes from the board's arch: on Cortex-M a load from an
 * address with nothing behind it (a precise BusFault). */
#include "tern/port.h"
#include "tern/tern.h"

#ifndef FAULT_ADDRESS
#define FAULT_ADDRESS 0xF0000000u /* unmapped on the QEMU Cortex-M boards */
#endif

static tern_status crasher(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_printf("fault: reading %08lx\n", (unsigned long)FAULT_ADDRESS);
        uint32_t v = *(volatile uint32_t *)FAULT_ADDRESS;
        tern_printf("fault: read %08lx and survived\n", (unsigned long)v);
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "crasher", .id = 0, .priority = 3, .handler = crasher},
    };
    static const tern_app_desc app = {.name = "fault", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
