/* Application descriptions: the validation. A description an image starts
 * is checked here at run time, or, in a build with TERN_APP_BUILD_CHECK,
 * by this same file compiled for the build machine (tools/appcheck), so
 * the image carries none of it (nesC checks its wiring at compile time). */
#include <string.h>

#include "kernel.h"
#include "tern/remote.h"

/* The thread models (sched_threads.c) make every task a thread, so there
 * TERN_TASK_THREAD asks for nothing more; hybrid (sched_hybrid.c) makes the
 * flagged tasks threads; the run-to-completion models cannot give a task
 * its own stack. Weak: overridden by the models that can. */
__attribute__((weak)) bool sched_tasks_are_threads(void) { return false; }

/* Fill err: code, task and the field copied (a flash string on the AVR);
 * the text is only the field. What a build-checked image (it has no
 * formatter for the sentence) says about a refusal at run time. */
tern_status app_refuse_field(tern_app_error *err, tern_status code, int index,
                             const TERN_ROM char *field)
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
    memcpy(err->text, err->field, n + 1);
    return code;
}

/* The validator: on the build machine (tools/appcheck) for a build-checked
 * image, which carries none of it (its description may be in flash, and
 * its names with it: the sentences below print them with %s). */
#if !TERN_APP_BUILD_CHECK || defined(TERN_APPCHECK)
/* Fill err, and the reason formatted into one text naming the app, the
 * task and the field. */
tern_status app_refuse_rom(tern_app_error *err, tern_status code,
                           const TERN_DESC tern_app_desc *app,
                           int index, const TERN_ROM char *field, const TERN_ROM char *fmt, ...)
{
    if (!err)
        return code;
    app_refuse_field(err, code, index, field);
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

static const TERN_DESC tern_task_desc *find_task(const TERN_DESC tern_app_desc *app, tern_task_id id)
{
    for (uint8_t i = 0; i < app->n_tasks; i++)
        if (app->tasks[i].id == id)
            return &app->tasks[i];
    return NULL;
}

/* Routes and group members lead to application ports only: the system
 * ports (INIT, FINAL, TIMEOUTk, ...) carry what the kernel sends, and a
 * route there would forge a second INIT or a FINAL that finalizes nothing. */
static bool port_exists(const TERN_DESC tern_task_desc *t, tern_port port)
{
    return port >= TERN_PORT_APP0 && port < TERN_PORT_APP0 + t->n_in_ports;
}

static tern_status check_task(const TERN_DESC tern_app_desc *app, int i, tern_app_error *err)
{
    const TERN_DESC tern_task_desc *t = &app->tasks[i];
    if (!t->name)
        return app_refuse_text(err, TERN_EINVAL, app, i, "name", "every task needs a name");
    if (t->id >= TERN_MAX_TASKS)
        return app_refuse_text(err, TERN_ERANGE, app, i, "id", "%u is not below TERN_MAX_TASKS (%u)",
                      t->id, TERN_MAX_TASKS);
    for (int j = 0; j < i; j++)
        if (app->tasks[j].id == t->id)
            return app_refuse_text(err, TERN_EDUPLICATE, app, i, "id", "%u is also the id of task '%s'",
                          t->id, app->tasks[j].name ? app->tasks[j].name : "?");
    if (t->priority >= TERN_PRIO_LEVELS)
        return app_refuse_text(err, TERN_ERANGE, app, i, "priority", "%u is not below %u", t->priority,
                      TERN_PRIO_LEVELS);
    if (!t->handler)
        return app_refuse_text(err, TERN_EINVAL, app, i, "handler", "missing");
    if (t->n_in_ports > TERN_MAX_APP_PORTS)
        return app_refuse_text(err, TERN_ERANGE, app, i, "n_in_ports", "%u is above %u", t->n_in_ports,
                      TERN_MAX_APP_PORTS);
    if (t->n_out_ports > TERN_MAX_OUT_PORTS)
        return app_refuse_text(err, TERN_ERANGE, app, i, "n_out_ports", "%u is above %u",
                      t->n_out_ports, TERN_MAX_OUT_PORTS);
    if (t->n_out_ports && !t->routes)
        return app_refuse_text(err, TERN_EINVAL, app, i, "routes", "missing for %u output ports",
                      t->n_out_ports);
    if (t->init_len > TERN_MAX_INIT_DATA)
        return app_refuse_text(err, TERN_ERANGE, app, i, "init_len", "%u bytes is above %u",
                      t->init_len, TERN_MAX_INIT_DATA);
    if (t->init_len && !t->init_data)
        return app_refuse_text(err, TERN_EINVAL, app, i, "init_data", "missing for %u bytes",
                      t->init_len);
    if (t->module > app->n_modules)
        return app_refuse_text(err, TERN_ERANGE, app, i, "module", "%u is unknown: n_modules is %u",
                      t->module, app->n_modules);
    if (app->n_modules && t->module == TERN_MODULE_THIS)
        return app_refuse_text(err, TERN_EINVAL, app, i, "module", "missing (n_modules is %u)",
                      app->n_modules);
    if ((t->flags & TERN_TASK_MOVABLE) && !app->n_modules)
        return app_refuse_text(err, TERN_EINVAL, app, i, "flags", "movable, but n_modules is 0");
    uint8_t needs = t->flags & TERN_TASK_NEEDS_HW;
    if (needs && (t->flags & TERN_TASK_MOVABLE))
        return app_refuse_text(err, TERN_EPINNED, app, i, "flags",
                      "movable, but it drives hardware (0x%02x) bound to its module", needs);
    if (needs && app->n_modules) {
        uint8_t has = app->module_hw ? app->module_hw[t->module - 1] : 0;
        if (needs & ~has)
            return app_refuse_text(err, TERN_EPINNED, app, i, "module",
                          "needs hardware 0x%02x that module %u lacks (module_hw 0x%02x)",
                          needs, t->module - 1, has);
    }
    if ((t->flags & TERN_TASK_THREAD) && !sched_tasks_are_threads())
        return app_refuse_text(err, TERN_EINVAL, app, i, "flags",
                      "thread tasks are not supported by the %s model", tern_model_name);
    for (uint8_t r = 0; r < t->n_out_ports; r++) {
        const TERN_DESC tern_route *rt = &t->routes[r];
        if (rt->kind == TERN_ROUTE_NONE)
            continue;
        if (rt->kind == TERN_ROUTE_GROUP) {
            if (!app_find_group(app, rt->group))
                return app_refuse_text(err, TERN_ENOROUTE, app, i, "routes[].group",
                              "output %u goes to group %u, which is not defined", r,
                              rt->group);
            continue;
        }
        if (rt->kind != TERN_ROUTE_TASK)
            return app_refuse_text(err, TERN_EINVAL, app, i, "routes[].kind",
                          "output %u has unknown kind %u", r, rt->kind);
        const TERN_DESC tern_task_desc *dst = find_task(app, rt->task);
        if (!dst)
            return app_refuse_text(err, TERN_ENOTASK, app, i, "routes[].task",
                          "output %u goes to task %u, which is not in the app", r, rt->task);
        if (!port_exists(dst, rt->port))
            return app_refuse_text(err, TERN_ENOPORT, app, i, "routes[].port",
                          "output %u goes to port %u of '%s', which has %u app ports", r,
                          rt->port, dst->name, dst->n_in_ports);
    }
    return TERN_OK;
}

static tern_status check_group(const TERN_DESC tern_app_desc *app, int g, tern_app_error *err)
{
    const TERN_DESC tern_group_desc *gr = &app->groups[g];
    for (int j = 0; j < g; j++)
        if (app->groups[j].id == gr->id)
            return app_refuse_text(err, TERN_EDUPLICATE, app, -1, "groups[].id",
                          "group id %u is defined twice", gr->id);
    if (gr->n_members > TERN_MAX_GROUP_MEMBERS)
        return app_refuse_text(err, TERN_ERANGE, app, -1, "groups[].n_members",
                      "group %u has %u members, above %u", gr->id, gr->n_members,
                      TERN_MAX_GROUP_MEMBERS);
    if (gr->n_members && !gr->members)
        return app_refuse_text(err, TERN_EINVAL, app, -1, "groups[].members", "group %u: missing",
                      gr->id);
    for (uint8_t m = 0; m < gr->n_members; m++) {
        const TERN_DESC tern_task_desc *dst = find_task(app, gr->members[m].task);
        if (!dst)
            return app_refuse_text(err, TERN_ENOTASK, app, -1, "groups[].members[].task",
                          "group %u member %u is task %u, which is not in the app", gr->id, m,
                          gr->members[m].task);
        if (!port_exists(dst, gr->members[m].port))
            return app_refuse_text(err, TERN_ENOPORT, app, -1, "groups[].members[].port",
                          "group %u member %u: port %u of '%s' does not exist", gr->id, m,
                          gr->members[m].port, dst->name);
    }
    return TERN_OK;
}

tern_status tern_app_validate(const TERN_DESC tern_app_desc *app, tern_app_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!app)
        return app_refuse_text(err, TERN_EINVAL, app, -1, "app", "no description");
    if (app->n_tasks == 0 || !app->tasks)
        return app_refuse_text(err, TERN_EINVAL, app, -1, "tasks", "an app needs at least one task");
    if (app->n_tasks > TERN_MAX_TASKS)
        return app_refuse_text(err, TERN_ERANGE, app, -1, "n_tasks", "%u tasks, above %u",
                      app->n_tasks, TERN_MAX_TASKS);
    if (app->n_groups > TERN_MAX_GROUPS)
        return app_refuse_text(err, TERN_ERANGE, app, -1, "n_groups", "%u groups, above %u",
                      app->n_groups, TERN_MAX_GROUPS);
    if (app->n_groups && !app->groups)
        return app_refuse_text(err, TERN_EINVAL, app, -1, "groups", "missing for %u groups",
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
#endif
