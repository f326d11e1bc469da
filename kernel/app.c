/* Application descriptions: two-stage creation, finalization (the
 * validation is app_check.c). */
#include <string.h>

#include "kernel.h"
#include "tern/remote.h"

static const TERN_DESC tern_app_desc *current_app;

const TERN_DESC tern_group_desc *app_find_group(const TERN_DESC tern_app_desc *app, uint8_t id)
{
    for (uint8_t i = 0; i < app->n_groups; i++)
        if (app->groups[i].id == id)
            return &app->groups[i];
    return NULL;
}

tern_status tern_app_start(const TERN_DESC tern_app_desc *app, tern_app_error *err)
{
    tern_status st;
#if !TERN_APP_BUILD_CHECK
    st = tern_app_validate(app, err);
    if (st != TERN_OK)
        return st;
#endif
    if (current_app)
        return app_refuse(err, TERN_ESTATE, app, -1, "app", "an application is already running");
    /* Tasks of other modules stay there; this processor knows them through
     * remote TCBs (remote.c). */
    uint8_t self = TERN_MODULE_THIS;
    if (app->n_modules) {
        if (!msg_remote)
            return app_refuse(err, TERN_ESTATE, app, -1, "n_modules", "no bus attached");
        st = msg_remote->app_admit(app, err);
        if (st != TERN_OK)
            return st;
        self = TERN_MODULE(msg_remote->address);
    }
    current_app = app;
    /* By pointer, each field read once: from flash (TERN_DESC) every
     * indexed read is its own address computation. */
    const TERN_DESC tern_task_desc *tasks = app->tasks, *end = tasks + app->n_tasks, *d;
    /* Stage 1: instantiate every task, so no message can find a missing one. */
    tern_irq_state s = port_irq_save();
    for (d = tasks; d < end; d++) {
        if (d->module != self)
            continue;
        tern_tcb *t = &tern_tasks[d->id];
        memset(t, 0, sizeof *t);
        t->desc = d;
        t->state = TASK_CREATED;
    }
    if (msg_remote)
        msg_remote->app_started(app);
    port_irq_restore(s);
    /* Stage 2: INIT for each, queued (not run here) so every INIT is posted
     * before the first handler runs. */
    for (d = tasks; d < end; d++) {
        if (d->module != self)
            continue;
        st = sched_send(TERN_NO_TASK, d->id, TERN_PORT_INIT, (void *)(uintptr_t)d->init_data,
                        d->init_len, 0, true);
        if (st != TERN_OK)
            return app_refuse(err, st, app, (int)(d - tasks), "init",
                              "INIT could not be posted: %s", tern_status_name(st));
    }
    return TERN_OK;
}

/* Not inlined: the error record lives only while the app starts, not under
 * every handler of the run (146 bytes on the AVR). */
static __attribute__((noinline)) void start_or_exit(const TERN_DESC tern_app_desc *app)
{
    tern_app_error err;
    if (tern_app_start(app, &err) == TERN_OK)
        return;
#if TERN_APP_BUILD_CHECK
    tern_puts(TERN_ROM_STR("tern: app refused at run time: "));
    tern_puts(err.field);
    tern_puts(TERN_ROM_STR("\n"));
#else
    tern_printf("tern: %s (%s)\n", err.text, tern_status_name(err.code));
#endif
    port_exit(1);
}

void tern_app_run(const TERN_DESC tern_app_desc *app)
{
    start_or_exit(app);
    tern_run();
}

const TERN_DESC tern_group_desc *app_group(uint8_t id) { return app_find_group(current_app, id); }

void app_reset(void) { current_app = NULL; }

static void app_finalize_done(tern_task_id id);
void (*app_finalizer)(tern_task_id id);

tern_status tern_task_finalize(tern_task_id id)
{
    if (id >= TERN_MAX_TASKS || tern_tasks[id].state == TASK_EMPTY)
        return TERN_ENOTASK;
    tern_irq_state s = port_irq_save();
    if (tern_tasks[id].state == TASK_FINALIZING) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    uint8_t was = tern_tasks[id].state;
    app_finalizer = app_finalize_done;
    tern_tasks[id].state = TASK_FINALIZING;
    port_irq_restore(s);
    tern_status st = sched_send(tern_self(), id, TERN_PORT_FINAL, NULL, 0, 0, false);
    if (st != TERN_OK) {
        /* No FINAL on its way (the pool was empty): the task goes on as it
         * was and finalize may be retried, instead of refusing every
         * message forever while waiting for a FINAL that never comes. */
        s = port_irq_save();
        if (tern_tasks[id].state == TASK_FINALIZING)
            tern_tasks[id].state = was;
        port_irq_restore(s);
    }
    return st;
}

/* FINAL has run: cancel the timers, drop what is still addressed to the
 * task, and report and reclaim what it leaked. Interrupts are disabled. */
static void app_finalize_done(tern_task_id id)
{
    tern_tcb *t = &tern_tasks[id];
    for (tern_alarm *tm = t->timers; tm < t->timers + TERN_TIMERS_PER_TASK; tm++)
        tern_alarm_cancel(tm); /* a pointer: TERN_TIMERS_PER_TASK may be 0 */
    sched_drop_task_messages(id);
    size_t bytes;
    uint32_t blocks;
    heap_reclaim_task(id, &bytes, &blocks);
    if (blocks) {
        tern_counters_.leaks_reported += blocks;
        tern_puts(TERN_ROM_STR("tern: task '"));
        tern_puts(t->desc->name);
        tern_puts(TERN_ROM_STR("' leaked "));
        tern_putu((uint32_t)bytes);
        tern_puts(TERN_ROM_STR(" bytes in "));
        tern_putu(blocks);
        tern_puts(TERN_ROM_STR(" blocks (reclaimed)\n"));
    }
    t->state = TASK_EMPTY;
    t->desc = NULL;
}

const TERN_DESC char *tern_task_name(tern_task_id id)
{
    static const TERN_DESC char unknown[] = "?";
    if (id < TERN_MAX_TASKS && tern_tasks[id].state != TASK_EMPTY)
        return tern_tasks[id].desc->name;
    return msg_remote ? msg_remote->task_name(id) : unknown; /* a task of another module */
}
