/* A flagged thread task (hybrid) overflows its 512-byte stack by
 * recursing while a run-to-completion task ticks on the shared stack: the
 * kernel must stop with the thread's task name and status 4, as in the
 * threads model. Built with the MPU guard (the first write into the guard
 * faults) and without (the guard's paint is found broken at the next
 * context switch). Built a third time with a stack the 2048-byte pool
 * cannot hold: the app is refused, naming the task. */
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

/* A flagged thread that only receives: its stack lies below deep's in the
 * pool, so deep's overflow runs into it rather than into kernel data (as
 * in the threads model's overflow app). */
static tern_status bystander(void *state, tern_msg *m)
{
    (void)state;
    (void)m;
    return TERN_OK;
}

/* Run to completion on the shared stack, every 5000 cycles. */
static tern_status ticker(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT)
        return tern_timer_start(0, tern_cycles_to_ticks(5000), tern_cycles_to_ticks(5000));
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "bystander", .id = 0, .priority = 0, .handler = bystander,
         .flags = TERN_TASK_THREAD, .stack_size = 1024},
        {.name = "deep", .id = 1, .priority = 1, .handler = deep,
         .flags = TERN_TASK_THREAD, .stack_size = DEEP_STACK},
        {.name = "ticker", .id = 2, .priority = 2, .handler = ticker},
    };
    static const tern_app_desc app = {.name = "overflow", .tasks = tasks, .n_tasks = 3};

    tern_init();
    tern_app_run(&app);
}
