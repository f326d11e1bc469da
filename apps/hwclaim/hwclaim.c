/* A processor checks its board against the description (tern/app.h,
 * module_hw; docs/multiprocessor.md): two modules, whose module_hw entries
 * claim an ADC for module 1 (bus address 0) and a radio for module 2
 * (address 1). On tern-sim's module boards (TERN_BOARD_HW: an ADC, no
 * radio) module 1 starts and module 2 refuses, TERN_ENOHW, counted in
 * tern_stats()->hw_refused; each prints what happened and exits: 0 when it
 * started, 3 when refused. tests/sim/test_remote.py runs
 * docs/sim/hwclaim.toml. */
#include "procbus_remote.h"
#include "tern/port.h"
#include "tern/tern.h"

static tern_status sensor(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_printf("hwclaim %u: started '%s'\n", tern_remote_address(), tern_task_name(tern_self()));
        port_exit(0);
    }
    return TERN_OK;
}

static const tern_task_desc tasks[] = {
    {.name = "sampler", .id = 0, .priority = 1, .handler = sensor, .module = TERN_MODULE(0),
     .flags = TERN_TASK_NEEDS_ADC},
    {.name = "radio", .id = 1, .priority = 1, .handler = sensor, .module = TERN_MODULE(1),
     .flags = TERN_TASK_NEEDS_RADIO},
};
static const uint8_t module_hw[] = {TERN_HW_ADC, TERN_HW_RADIO};
static const tern_app_desc app = {.name = "hwclaim", .tasks = tasks, .n_tasks = 2, .n_modules = 2,
                                  .module_hw = module_hw};

int main(void)
{
    tern_app_error err;
    tern_init();
    tern_status st = procbus_remote_attach();
    if (st != TERN_OK) {
        tern_printf("hwclaim: no processor bus: %s\n", tern_status_name(st));
        return 2;
    }
    st = tern_app_start(&app, &err);
    if (st != TERN_OK) {
        tern_printf("hwclaim %u: %s (%s) hw_refused=%lu board_hw=0x%02x\n", tern_remote_address(),
                    err.text, tern_status_name(st), (unsigned long)tern_stats()->hw_refused,
                    port_board.hw);
        return 3;
    }
    tern_run();
}
