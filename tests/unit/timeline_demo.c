/* The event sequence of docs/execution-models.md, run on the host port
 * with the trace on; prints the trace lines ("T <hex>") that
 * `./tern docs timeline` draws as one timeline per model.
 *
 * Tasks: low (priority 1), mid (4), high (6). After the INITs, interrupts
 * post to low at t = 1 (100 ticks of work), to low again at t = 11 (a
 * second message, 100 ticks) and to mid at t = 21 (50 ticks); mid posts to
 * high (30 ticks) 10 ticks into its work. So the demo shows a task posting
 * to a higher one (the stack model runs it at once, nested), an interrupt
 * post to a higher task while a lower handler runs (only the stack model
 * preempts), and a second message to a task that is already running (the
 * stack model queues it until that handler has returned). */
#include <stdio.h>

#include "host.h"
#include "tern/tern.h"

static const uint64_t work[] = {100, 50, 30};

static tern_status handler(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    tern_task_id self = tern_self();
    if (self == 1) {
        host_work(10);
        tern_send(2, TERN_PORT_APP(0), NULL, 0, 0);
        host_work(work[self] - 10);
    } else {
        host_work(work[self]);
    }
    return TERN_OK;
}

static void post(void *task)
{
    tern_send((tern_task_id)(uintptr_t)task, TERN_PORT_APP(0), NULL, 0, 0);
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "low", .id = 0, .priority = 1, .handler = handler, .n_in_ports = 1},
        {.name = "mid", .id = 1, .priority = 4, .handler = handler, .n_in_ports = 1},
        {.name = "high", .id = 2, .priority = 6, .handler = handler, .n_in_ports = 1},
    };
    static const tern_app_desc app = {"timeline", tasks, 3, NULL, 0, 0, NULL};
    host_reset(0);
    tern_init();
    tern_app_error err;
    if (tern_app_start(&app, &err) != TERN_OK) {
        fprintf(stderr, "%s\n", err.text);
        return 1;
    }
    host_run_until(1); /* the INITs, at t = 0 */
    tern_event drop[TERN_TRACE_EVENTS];
    (void)tern_trace_read(drop, TERN_TRACE_EVENTS); /* keep only the scenario itself */
    host_inject(1, post, (void *)0);
    host_inject(11, post, (void *)0);
    host_inject(21, post, (void *)1);
    host_run_until(400);
    tern_trace_drain();
    printf("MODEL %s\n%s", tern_model_name, host_console());
    return 0;
}
