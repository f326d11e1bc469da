/* Application descriptions: validation, two-stage creation, finalization. */
#include <string.h>

#include "kernel.h"
#include "tern/remote.h"

static const tern_app_desc *current_app;

/* The thread models (sched_threads.c) make every task a thread, so there
 * TERN_TASK_THREAD asks for nothing more; hybrid (sched_hybrid.c) makes the
 * flagged tasks threads; the run-to-completion models cannot give a task
 * its own stack. Weak: overridden by the models that can. */
__attribute__((weak)) bool sched_tasks_are_threads(void) { return false; }

/* Fill err: the field copied (a flash string on the AVR), the reason
 * formatted, and one text naming the app, the task and the field. */
static tern_status refuse_rom(tern_app_error *err, tern_status code, const tern_app_desc *app,
                              int index, const TERN_ROM char *field, const TERN_ROM char *fmt,
                              ...)
{
    if (!err)
        return code;
    err->code = code;
    err->task_index = index;
    size_t n = 0;
    while (field[n] && n + 1 < sizeof err->field) {
        err->field[n] = field[n];
        n++;
    }
    err->field[n] = '\0';
    char why[80];
    va_list ap;
    va_start(ap, fmt);
    tern_vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *app_name = app && app->name ? app->name : "?";
    if (index < 0)
        tern_snprintf(err->text, sizeof err->text, "app '%s': %s: %s", app_name, err->field, why);
    else if (app->tasks[index].name)
        tern_snprintf(err->text, sizeof err->text, "app '%s': task '%s': %s: %s", app_name,
                      app->tasks[index].name, err->field, why);
    else
        tern_snprintf(err->text, sizeof err->text, "app '%s': task #%d: %s: %s", app_name,
                      index, err->field, why);
    return code;
}

/* refuse(err, code, app, task index or -1, "field", "format", ...): field
 * and format are literals, checked as printf's and kept in flash. */
#define refuse(err, code, app, index, field, fmt, ...)                                      \
    (TERN_FORMAT_CHECK(fmt, ##__VA_ARGS__),                                                   \
     refuse_rom(err, code, app, index, TERN_ROM_STR(field), TERN_ROM_STR(fmt), ##__VA_ARGS__))

static const tern_task_desc *find_task(const tern_app_desc *app, tern_task_id id)
{
    for (uint8_t i = 0; i < app->n_tasks; i++)
        if (app->tasks[i].id == id)
            return &app->tasks[i];
    return NULL;
}

static const tern_group_desc *find_group(const tern_app_desc *app, uint8_t id)
{
    for (uint8_t i = 0; i < app->n_groups; i++)
        if (app->groups[i].id == id)
            return &app->groups[i];
    return NULL;
}

/* Routes and group members lead to application ports only: the system
 * ports (INIT, FINAL, TIMEOUTk, ...) carry what the kernel sends, and a
 * route there would forge a second INIT or a FINAL that finalizes nothing. */
static bool port_exists(const tern_task_desc *t, tern_port port)
{
    return port >= TERN_PORT_APP0 && port < TERN_PORT_APP0 + t->n_in_ports;
}

static tern_status check_task(const tern_app_desc *app, int i, tern_app_error *err)
{
    const tern_task_desc *t = &app->tasks[i];
    if (!t->name)
        return refuse(err, TERN_EINVAL, app, i, "name", "every task needs a name");
    if (t->id >= TERN_MAX_TASKS)
        return refuse(err, TERN_ERANGE, app, i, "id", "%u is not below TERN_MAX_TASKS (%u)",
                      t->id, TERN_MAX_TASKS);
    for (int j = 0; j < i; j++)
        if (app->tasks[j].id == t->id)
            return refuse(err, TERN_EDUPLICATE, app, i, "id", "%u is also the id of task '%s'",
                          t->id, app->tasks[j].name ? app->tasks[j].name : "?");
    if (t->priority >= TERN_PRIO_LEVELS)
        return refuse(err, TERN_ERANGE, app, i, "priority", "%u is not below %u", t->priority,
                      TERN_PRIO_LEVELS);
    if (!t->handler)
        return refuse(err, TERN_EINVAL, app, i, "handler", "missing");
    if (t->n_in_ports > TERN_MAX_APP_PORTS)
        return refuse(err, TERN_ERANGE, app, i, "n_in_ports", "%u is above %u", t->n_in_ports,
                      TERN_MAX_APP_PORTS);
    if (t->n_out_ports > TERN_MAX_OUT_PORTS)
        return refuse(err, TERN_ERANGE, app, i, "n_out_ports", "%u is above %u",
                      t->n_out_ports, TERN_MAX_OUT_PORTS);
    if (t->n_out_ports && !t->routes)
        return refuse(err, TERN_EINVAL, app, i, "routes", "missing for %u output ports",
                      t->n_out_ports);
    if (t->init_len > TERN_MAX_INIT_DATA)
        return refuse(err, TERN_ERANGE, app, i, "init_len", "%u bytes is above %u",
                      t->init_len, TERN_MAX_INIT_DATA);
    if (t->init_len && !t->init_data)
        return refuse(err, TERN_EINVAL, app, i, "init_data", "missing for %u bytes",
                      t->init_len);
    if (t->module > app->n_modules)
        return refuse(err, TERN_ERANGE, app, i, "module", "%u is unknown: n_modules is %u",
                      t->module, app->n_modules);
    if (app->n_modules && t->module == TERN_MODULE_THIS)
        return refuse(err, TERN_EINVAL, app, i, "module", "missing (n_modules is %u)",
                      app->n_modules);
    if ((t->flags & TERN_TASK_MOVABLE) && !app->n_modules)
        return refuse(err, TERN_EINVAL, app, i, "flags", "movable, but n_modules is 0");
    if ((t->flags & TERN_TASK_THREAD) && !sched_tasks_are_threads())
        return refuse(err, TERN_EINVAL, app, i, "flags",
                      "thread tasks are not supported by the %s model", tern_model_name);
    for (uint8_t r = 0; r < t->n_out_ports; r++) {
        const tern_route *rt = &t->routes[r];
        if (rt->kind == TERN_ROUTE_NONE)
            continue;
        if (rt->kind == TERN_ROUTE_GROUP) {
            if (!find_group(app, rt->group))
                return refuse(err, TERN_ENOROUTE, app, i, "routes[].group",
                              "output %u goes to group %u, which is not defined", r,
                              rt->group);
            continue;
        }
        if (rt->kind != TERN_ROUTE_TASK)
            return refuse(err, TERN_EINVAL, app, i, "routes[].kind",
                          "output %u has unknown kind %u", r, rt->kind);
        const tern_task_desc *dst = find_task(app, rt->task);
        if (!dst)
            return refuse(err, TERN_ENOTASK, app, i, "routes[].task",
                          "output %u goes to task %u, which is not in the app", r, rt->task);
        if (!port_exists(dst, rt->port))
            return refuse(err, TERN_ENOPORT, app, i, "routes[].port",
                          "output %u goes to port %u of '%s', which has %u app ports", r,
                          rt->port, dst->name, dst->n_in_ports);
    }
    return TERN_OK;
}

static tern_status check_group(const tern_app_desc *app, int g, tern_app_error *err)
{
    const tern_group_desc *gr = &app->groups[g];
    for (int j = 0; j < g; j++)
        if (app->groups[j].id == gr->id)
            return refuse(err, TERN_EDUPLICATE, app, -1, "groups[].id",
                          "group id %u is defined twice", gr->id);
    if (gr->n_members > TERN_MAX_GROUP_MEMBERS)
        return refuse(err, TERN_ERANGE, app, -1, "groups[].n_members",
                      "group %u has %u members, above %u", gr->id, gr->n_members,
                      TERN_MAX_GROUP_MEMBERS);
    if (gr->n_members && !gr->members)
        return refuse(err, TERN_EINVAL, app, -1, "groups[].members", "group %u: missing",
                      gr->id);
    for (uint8_t m = 0; m < gr->n_members; m++) {
        const tern_task_desc *dst = find_task(app, gr->members[m].task);
        if (!dst)
            return refuse(err, TERN_ENOTASK, app, -1, "groups[].members[].task",
                          "group %u member %u is task %u, which is not in the app", gr->id, m,
                          gr->members[m].task);
        if (!port_exists(dst, gr->members[m].port))
            return refuse(err, TERN_ENOPORT, app, -1, "groups[].members[].port",
                          "group %u member %u: port %u of '%s' does not exist", gr->id, m,
                          gr->members[m].port, dst->name);
    }
    return TERN_OK;
}

tern_status tern_app_validate(const tern_app_desc *app, tern_app_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!app)
        return refuse(err, TERN_EINVAL, app, -1, "app", "no description");
    if (app->n_tasks == 0 || !app->tasks)
        return refuse(err, TERN_EINVAL, app, -1, "tasks", "an app needs at least one task");
    if (app->n_tasks > TERN_MAX_TASKS)
        return refuse(err, TERN_ERANGE, app, -1, "n_tasks", "%u tasks, above %u",
                      app->n_tasks, TERN_MAX_TASKS);
    if (app->n_groups > TERN_MAX_GROUPS)
        return refuse(err, TERN_ERANGE, app, -1, "n_groups", "%u groups, above %u",
                      app->n_groups, TERN_MAX_GROUPS);
    if (app->n_groups && !app->groups)
        return refuse(err, TERN_EINVAL, app, -1, "groups", "missing for %u groups",
                      app->n_groups);
    for (int g = 0; g < app->n_groups; g++) {
        tern_status st = check_group(app, g, err);
        if (st != TERN_OK)
            return st;
    }
    for (int i = 0; i < app->n_tasks; i++) {
        tern_status st = check_task(app, i, err);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}

tern_status tern_app_start(const tern_app_desc *app, tern_app_error *err)
{
    tern_status st = tern_app_validate(app, err);
    if (st != TERN_OK)
        return st;
    if (current_app)
        return refuse(err, TERN_ESTATE, app, -1, "app", "an application is already running");
    /* Tasks of other modules stay there; this processor knows them through
     * remote TCBs (remote.c). */
    uint8_t self = TERN_MODULE_THIS;
    if (app->n_modules) {
        if (!msg_remote)
            return refuse(err, TERN_ESTATE, app, -1, "n_modules", "no bus attached");
        if (app->n_modules > msg_remote->count)
            return refuse(err, TERN_ERANGE, app, -1, "n_modules", "%u, but the bus has %u",
                          app->n_modules, msg_remote->count);
        self = TERN_MODULE(msg_remote->address);
    }
    current_app = app;
    /* Stage 1: instantiate every task, so no message can find a missing one. */
    tern_irq_state s = port_irq_save();
    for (uint8_t i = 0; i < app->n_tasks; i++) {
        if (app->tasks[i].module != self)
            continue;
        tern_tcb *t = &tern_tasks[app->tasks[i].id];
        memset(t, 0, sizeof *t);
        t->desc = &app->tasks[i];
        t->state = TASK_CREATED;
    }
    if (msg_remote)
        msg_remote->app_started(app);
    port_irq_restore(s);
    /* Stage 2: INIT for each, queued (not run here) so every INIT is posted
     * before the first handler runs. */
    for (uint8_t i = 0; i < app->n_tasks; i++) {
        const tern_task_desc *d = &app->tasks[i];
        if (d->module != self)
            continue;
        st = sched_send(TERN_NO_TASK, d->id, TERN_PORT_INIT, (void *)(uintptr_t)d->init_data,
                        d->init_len, 0, true);
        if (st != TERN_OK)
            return refuse(err, st, app, i, "init", "INIT could not be posted: %s",
                          tern_status_name(st));
    }
    return TERN_OK;
}

const tern_group_desc *app_group(uint8_t id) { return find_group(current_app, id); }

void app_reset(void) { current_app = NULL; }

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
void app_finalize_done(tern_task_id id)
{
    tern_tcb *t = &tern_tasks[id];
    for (uint8_t k = 0; k < TERN_TIMERS_PER_TASK; k++)
        tern_alarm_cancel(&t->timers[k]);
    sched_drop_task_messages(id);
    size_t bytes;
    uint32_t blocks;
    heap_reclaim_task(id, &bytes, &blocks);
    if (blocks) {
        tern_counters_.leaks_reported += blocks;
        tern_printf("tern: task '%s' leaked %lu bytes in %lu blocks (reclaimed)\n",
                    t->desc->name, (unsigned long)bytes, (unsigned long)blocks);
    }
    t->state = TASK_EMPTY;
    t->desc = NULL;
}

const char *tern_task_name(tern_task_id id)
{
    if (id < TERN_MAX_TASKS && tern_tasks[id].state != TASK_EMPTY)
        return tern_tasks[id].desc->name;
    return msg_remote ? msg_remote->task_name(id) : "?"; /* a task of another module */
}
