/* An application description with a route to a task that does not exist:
 * the kernel must refuse it before anything runs, naming the task and the
 * field, and the program exits with status 1. */
#include "tern/port.h"
#include "tern/tern.h"

static tern_status sink(void *state, tern_msg *m)
{
    (void)state;
    (void)m;
    tern_printf("bad-description: a handler ran although the description is invalid\n");
    port_exit(2);
}

static const TERN_DESC tern_route routes[] = {TERN_TO_TASK(7, TERN_PORT_APP(0))};
static const TERN_DESC tern_task_desc tasks[] = {
    {.name = TERN_DESC_STR("sensor"), .id = 0, .priority = 2, .handler = sink, .n_out_ports = 1,
     .routes = routes},
    {.name = TERN_DESC_STR("radio"), .id = 1, .priority = 4, .handler = sink, .n_in_ports = 1},
};
static const TERN_DESC tern_app_desc app = {.name = TERN_DESC_STR("bad"), .tasks = tasks,
                                            .n_tasks = 2};
/* bad-description-checked.elf: the same description checked at build time,
 * whose build must fail with the same error (tests/target/test_apps.py) */
TERN_APP_CHECKED(app);

int main(void)
{
    tern_app_error err;

    tern_init();
    tern_status st = tern_app_start(&app, &err);
    if (st == TERN_OK) {
        tern_printf("bad-description: the description was accepted\n");
        return 2;
    }
    tern_printf("refused: %s: %s (task %d, field %s)\n", tern_status_name(st), err.text,
                err.task_index, err.field);
    return 1;
}
