/* The smallest tern application: one task prints a greeting when it
 * receives INIT, names the board and the execution model, and the program
 * exits with status 0. */
#include "tern/port.h"
#include "tern/tern.h"

static tern_status greeter(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_printf("hello from tern on %s, model %s\n", TERN_BOARD_NAME, tern_model_name);
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "greeter", .id = 0, .priority = 1, .handler = greeter},
    };
    static const tern_app_desc app = {.name = "hello", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
