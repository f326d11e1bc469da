/* A thread that overflows its 512-byte stack by recursing: the kernel must
 * catch it and stop with the task's name and a non-zero status. Built
 * twice: with the MPU guard (the first write into the guard faults) and
 * without (the guard's paint is found broken at the next context switch).
 * overflow-alone: deep is the only thread, so on the AVR (no MPU) nothing
 * but unused pool lies between its stack and .bss: an overflow far past
 * its guard must still be reported, not rewrite the kernel's variables
 * and crash before the next switch. */
#include "tern/port.h"
#include "tern/tern.h"
#include "tern/thread.h"

#include "../dig.h"

#define FRAMES 12 /* about 80 bytes each: ~960 bytes, well past 512 */
#ifndef DEEP_STACK
#define DEEP_STACK 512
#endif

static tern_status deep(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
    tern_printf("overflow: digging\n");
    uint32_t v = dig(FRAMES);
    (void)tern_sleep(1000); /* a context switch: the check runs here */
    tern_printf("overflow: survived (%lu)\n", (unsigned long)v);
    port_exit(0);
}

#ifndef OVERFLOW_ALONE
static tern_status idle_task(void *state, tern_msg *m)
{
    (void)state;
    (void)m;
    return TERN_OK;
}
#endif

int main(void)
{
    static const tern_task_desc tasks[] = {
#ifndef OVERFLOW_ALONE
        {.name = "bystander", .id = 0, .priority = 0, .handler = idle_task},
#endif
        {.name = "deep", .id = 1, .priority = 1, .handler = deep,
         .stack_size = DEEP_STACK},
    };
    static const tern_app_desc app = {.name = "overflow", .tasks = tasks, .n_tasks = sizeof tasks / sizeof tasks[0]};

    tern_init();
    tern_app_run(&app);
}
