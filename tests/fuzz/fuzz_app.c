/* Fuzz target: application descriptions.
 *
 * The input decodes into a tern_app_desc with every field chosen by the
 * fuzzer: counts past the limits, NULL arrays and names, duplicate ids,
 * routes and group members that point at tasks and ports that may not
 * exist, unknown route kinds, init data of any length, the modules an app
 * spans (n_modules, module_hw, each task's module) and every task flag
 * (movable, the hardware it needs, undefined bits). Every array is a
 * heap block of exactly the declared count, so AddressSanitizer catches a
 * kernel that reads past what a description says it holds.
 *
 * Invariants:
 *  - validation does not change kernel state: tern_app_validate and
 *    tern_app_start give the same verdict and the same error;
 *  - a refusal names a field and a code, and starts nothing (no task, no
 *    message, no heap block); a valid app of several modules is refused
 *    by tern_app_start alone, TERN_ESTATE "no bus attached" (none here);
 *  - an accepted description starts: each task gets its INIT once, first,
 *    with its init data; posting through every output port of a validated
 *    routing table never fails with ENOTASK or ENOPORT; every post is
 *    counted (posted or dropped by reason);
 *  - after every task is finalized, each got its FINAL once, every task is
 *    gone, the queue is empty and the heap is back to its baseline. */
#include <string.h>

#include "fuzz.h"
#include "host.h"
#include "kernel.h"

#define ANY_TASK (TERN_MAX_TASKS + 4) /* ids up to here: some do not exist */
#define ANY_PORT (TERN_PORT_APP0 + TERN_MAX_APP_PORTS + 4)
#define ANY_MODULES 6 /* n_modules 0..5 */

typedef struct {
    const tern_task_desc *desc;
    unsigned inits, finals, others;
    bool first_was_init;
} task_log;

static task_log logs[256];
static unsigned attempts; /* posts the handlers made, one per destination */

static tern_status handler(void *state, tern_msg *m)
{
    task_log *log = state;
    const tern_task_desc *d = log->desc;
    CHECK(m->dst == d->id, "message for task %u handled by task %u", m->dst, d->id);
    CHECK(tern_self() == d->id, "tern_self() %u in task %u", tern_self(), d->id);
    if (log->inits + log->finals + log->others == 0)
        log->first_was_init = m->port == TERN_PORT_INIT;
    if (m->port == TERN_PORT_FINAL) {
        log->finals++;
        return TERN_OK;
    }
    if (m->port != TERN_PORT_INIT) {
        log->others++;
        return TERN_OK;
    }
    if (++log->inits > 1)
        return TERN_OK; /* a second INIT: check_started names it */
    CHECK(m->len == d->init_len && m->payload == d->init_data,
          "task %u: INIT carries %u bytes at %p, the description %u at %p", d->id, m->len,
          m->payload, d->init_len, d->init_data);
    /* Every output port once: a validated table never points nowhere. */
    for (uint8_t r = 0; r < d->n_out_ports; r++) {
        const tern_route *rt = &d->routes[r];
        tern_status st = tern_post(r, NULL, 0, 0);
        if (rt->kind == TERN_ROUTE_NONE) {
            attempts++;
            CHECK(st == TERN_ENOROUTE, "unwired output %u gave %s", r, tern_status_name(st));
            continue;
        }
        if (rt->kind == TERN_ROUTE_GROUP)
            attempts += app_group(rt->group)->n_members;
        else
            attempts++;
        /* The pool may run out when many posts wait behind a higher
         * handler; anything else is a route validation let through. */
        CHECK(st == TERN_OK || st == TERN_EFULL, "task %u output %u (kind %u) gave %s", d->id, r,
              rt->kind, tern_status_name(st));
    }
    return TERN_OK;
}

/* A NUL-terminated name of up to 23 bytes, any bytes, or NULL. */
static char *take_name(fz_reader *in)
{
    uint8_t sel = fz_u8(in);
    if (sel == 0)
        return NULL;
    size_t len = sel % 24;
    char *s = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        s[i] = (char)(fz_u8(in) | 1); /* no NUL inside: the length is the one chosen */
    s[len] = '\0';
    return s;
}

/* Decoded description and every block it owns, for freeing. */
typedef struct {
    tern_app_desc app;
    tern_task_desc *tasks;
    size_t n_tasks;
    tern_group_desc *groups;
    size_t n_groups;
    uint8_t *module_hw;
} decoded;

static void decode(fz_reader *in, decoded *out)
{
    memset(out, 0, sizeof *out);
    uint8_t flags = fz_u8(in);
    out->app.name = flags & 1 ? NULL : take_name(in);
    out->n_tasks = fz_u8(in) % (TERN_MAX_TASKS + 3);
    out->app.n_tasks = (uint8_t)out->n_tasks;
    if (!(flags & 2) && out->n_tasks) {
        out->tasks = calloc(out->n_tasks, sizeof *out->tasks);
        out->app.tasks = out->tasks;
    }
    out->n_groups = fz_u8(in) % (TERN_MAX_GROUPS + 3);
    out->app.n_groups = (uint8_t)out->n_groups;
    if (!(flags & 4) && out->n_groups) {
        out->groups = calloc(out->n_groups, sizeof *out->groups);
        out->app.groups = out->groups;
    }
    for (size_t g = 0; out->groups && g < out->n_groups; g++) {
        tern_group_desc *gr = &out->groups[g];
        gr->id = fz_u8(in) % (TERN_MAX_GROUPS + 2);
        gr->n_members = fz_u8(in) % (TERN_MAX_GROUP_MEMBERS + 3);
        if (gr->n_members && !(fz_u8(in) & 0x80)) {
            tern_endpoint *mb = calloc(gr->n_members, sizeof *mb);
            for (uint8_t m = 0; m < gr->n_members; m++) {
                mb[m].task = fz_u8(in) % ANY_TASK;
                mb[m].port = fz_u8(in) % ANY_PORT;
            }
            gr->members = mb;
        }
    }
    for (size_t i = 0; out->tasks && i < out->n_tasks; i++) {
        tern_task_desc *t = &out->tasks[i];
        uint8_t tf = fz_u8(in);
        t->name = take_name(in);
        t->id = fz_u8(in) % ANY_TASK;
        t->priority = fz_u8(in) % (TERN_PRIO_LEVELS + 2);
        t->handler = tf & 1 ? NULL : handler;
        t->state = &logs[i];
        t->n_in_ports = fz_u8(in) % (TERN_MAX_APP_PORTS + 3);
        t->n_out_ports = fz_u8(in) % (TERN_MAX_OUT_PORTS + 3);
        if (t->n_out_ports && !(tf & 2)) {
            tern_route *rt = calloc(t->n_out_ports, sizeof *rt);
            for (uint8_t r = 0; r < t->n_out_ports; r++) {
                rt[r].kind = fz_u8(in) % 4; /* 3 is no kind at all */
                rt[r].group = fz_u8(in) % (TERN_MAX_GROUPS + 2);
                rt[r].task = fz_u8(in) % ANY_TASK;
                rt[r].port = fz_u8(in) % ANY_PORT;
            }
            t->routes = rt;
        }
        t->init_len = fz_u8(in) % (TERN_MAX_INIT_DATA + 4);
        if (t->init_len && !(tf & 4)) {
            uint8_t *data = malloc(t->init_len);
            for (uint16_t b = 0; b < t->init_len; b++)
                data[b] = (uint8_t)b;
            t->init_data = data;
        }
        t->flags = tf >> 4; /* TERN_TASK_THREAD, _MOVABLE and bits nobody defined */
        t->stack_size = (uint16_t)(tf & 8 ? 512 : 0);
    }
    /* Appended after everything above, so an input of the older layout
     * decodes as before (the reader gives zeros once used up): the modules
     * the app spans, each one's hardware, each task's module and its
     * higher flag bits (TERN_TASK_NEEDS_RADIO, _NEEDS_ADC, undefined ones). */
    uint8_t mf = fz_u8(in);
    out->app.n_modules = mf % ANY_MODULES;
    if (out->app.n_modules && !(mf & 0x80)) {
        out->module_hw = malloc(out->app.n_modules);
        for (uint8_t m = 0; m < out->app.n_modules; m++)
            out->module_hw[m] = fz_u8(in);
        out->app.module_hw = out->module_hw;
    }
    for (size_t i = 0; out->tasks && i < out->n_tasks; i++) {
        tern_task_desc *t = &out->tasks[i];
        t->module = fz_u8(in) % (out->app.n_modules + 2); /* one past the last: unknown */
        t->flags |= fz_u8(in) & 0xf0;
    }
}

static void release(decoded *d)
{
    for (size_t i = 0; d->tasks && i < d->n_tasks; i++) {
        free((void *)d->tasks[i].name);
        free((void *)d->tasks[i].routes);
        free((void *)d->tasks[i].init_data);
    }
    for (size_t g = 0; d->groups && g < d->n_groups; g++)
        free((void *)d->groups[g].members);
    free(d->tasks);
    free(d->groups);
    free(d->module_hw);
    free((void *)d->app.name);
}

static bool same_error(const tern_app_error *a, const tern_app_error *b)
{
    return a->code == b->code && a->task_index == b->task_index &&
           strcmp(a->field, b->field) == 0 && strcmp(a->text, b->text) == 0;
}

static unsigned drops(void)
{
    unsigned n = 0;
    for (int r = 0; r < TERN_DROP_REASONS; r++)
        n += tern_stats()->dropped[r];
    return n;
}

static void nothing_started(const decoded *d, size_t heap_empty)
{
    for (tern_task_id id = 0; id < TERN_MAX_TASKS; id++)
        CHECK(tern_tasks[id].state == TASK_EMPTY, "refused app left task %u behind", id);
    CHECK(tern_stats()->posted == 0 && drops() == 0, "refused app posted %u, dropped %u",
          tern_stats()->posted, drops());
    CHECK(tern_heap_free_bytes() == heap_empty, "refused app took heap");
    (void)d;
}

static void check_refusal(const decoded *d, tern_status st, const tern_app_error *err)
{
    CHECK(err->code == st, "error code %s for status %s", tern_status_name(err->code),
          tern_status_name(st));
    CHECK(st == TERN_EINVAL || st == TERN_ERANGE || st == TERN_EDUPLICATE ||
              st == TERN_ENOTASK || st == TERN_ENOPORT || st == TERN_ENOROUTE ||
              st == TERN_EPINNED,
          "refused with %s", tern_status_name(st));
    CHECK(err->field[0] != '\0', "refusal %s names no field", tern_status_name(st));
    CHECK(strstr(err->text, err->field) != NULL, "text '%s' does not name field '%s'", err->text,
          err->field);
    CHECK(err->task_index >= -1 && err->task_index < (int)d->n_tasks,
          "task_index %d of %zu tasks", err->task_index, d->n_tasks);
    /* A field of a task names that task; the app's own fields name none. */
    bool app_field = strcmp(err->field, "app") == 0 || strcmp(err->field, "tasks") == 0 ||
                     strcmp(err->field, "n_tasks") == 0 || strncmp(err->field, "groups", 6) == 0 ||
                     strcmp(err->field, "n_groups") == 0;
    CHECK(app_field == (err->task_index == -1), "field '%s' with task_index %d", err->field,
          err->task_index);
}

static void check_started(const decoded *d, size_t heap_empty)
{
    uint64_t start = host_time();
    host_run_until(start + 1000000);
    const tern_counters *c = tern_stats();
    for (size_t i = 0; i < d->n_tasks; i++) {
        const task_log *log = &logs[i];
        CHECK(log->inits == 1 && log->first_was_init, "task %u: %u INITs, first was INIT: %d",
              d->tasks[i].id, log->inits, log->first_was_init);
    }
    CHECK(c->queue_depth == 0, "%u messages still queued", c->queue_depth);
    /* Every post made is posted or dropped by a reason, and every post
     * made was dispatched (nothing was finalized yet). */
    CHECK(c->posted + drops() == attempts + d->n_tasks,
          "posted %u + dropped %u != %u posts made + %zu INITs", c->posted, drops(), attempts,
          d->n_tasks);
    CHECK(c->dispatched == c->posted, "dispatched %u of %u posted", c->dispatched, c->posted);
    for (size_t i = 0; i < d->n_tasks; i++)
        CHECK(tern_task_finalize(d->tasks[i].id) == TERN_OK, "task %u refused FINAL",
              d->tasks[i].id);
    host_run_until(UINT64_MAX);
    for (size_t i = 0; i < d->n_tasks; i++)
        CHECK(logs[i].finals == 1, "task %u: %u FINALs", d->tasks[i].id, logs[i].finals);
    for (tern_task_id id = 0; id < TERN_MAX_TASKS; id++)
        CHECK(tern_tasks[id].state == TASK_EMPTY, "task %u outlived its FINAL", id);
    CHECK(c->dispatched == c->posted && c->queue_depth == 0, "after FINAL: %u of %u dispatched",
          c->dispatched, c->posted);
    CHECK(tern_heap_free_bytes() == heap_empty && tern_heap_largest_free() == heap_empty,
          "heap not back to its baseline: %zu free, %zu largest, of %zu",
          tern_heap_free_bytes(), tern_heap_largest_free(), heap_empty);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader in = {data, size};
    decoded d;
    decode(&in, &d);
    memset(logs, 0, sizeof logs);
    for (size_t i = 0; d.tasks && i < d.n_tasks; i++)
        logs[i].desc = &d.tasks[i];
    attempts = 0;

    host_reset(0);
    tern_init();
    size_t heap_empty = tern_heap_free_bytes();
    tern_app_error checked, started;
    tern_status st_checked = tern_app_validate(&d.app, &checked);
    tern_status st_started = tern_app_start(&d.app, &started);
    if (st_checked == TERN_OK && d.app.n_modules) {
        /* A valid app of several modules: this host has no processor bus,
         * which only starting finds out. */
        CHECK(st_started == TERN_ESTATE && strcmp(started.field, "n_modules") == 0 &&
                  started.task_index == -1 && strstr(started.text, "no bus attached"),
              "an app of %u modules without a bus: %s '%s'", d.app.n_modules,
              tern_status_name(st_started), started.text);
        nothing_started(&d, heap_empty);
        release(&d);
        return 0;
    }
    CHECK(st_checked == st_started && same_error(&checked, &started),
          "validate said %s '%s', start said %s '%s'", tern_status_name(st_checked),
          checked.text, tern_status_name(st_started), started.text);
    if (st_started != TERN_OK) {
        check_refusal(&d, st_started, &started);
        nothing_started(&d, heap_empty);
    } else {
        check_started(&d, heap_empty);
    }
    release(&d);
    return 0;
}
