/* Shared scaffolding for the host tests: scripted tasks that log when
 * their handlers start and end, so a test can compare a whole timeline
 * with one expected string such as "S1@0 S2@10 E2@110 E1@200". */
#ifndef TERN_TEST_FIXTURE_H
#define TERN_TEST_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host.h"
#include "tern/tern.h"

/* What a scripted task does with each application message: work
 * `post_after` ticks, post to (post_task, post_port) if post_task is not
 * TERN_NO_TASK, then work the rest of `work`. */
typedef struct {
    uint64_t work;
    uint64_t post_after;
    tern_task_id post_task;
    tern_port post_port;
    uint8_t max_posts; /* 0: every message posts; n: only the first n do */
    uint8_t posts;     /* posts made so far */
} script;

tern_status scripted_handler(void *state, tern_msg *m);

/* A task description for a scripted task with one app port. */
#define SCRIPTED(nm, tid, prio, scr)                                                        \
    {.name = (nm), .id = (tid), .priority = (prio), .handler = scripted_handler,           \
     .state = (scr), .n_in_ports = 1}

/* Start a fresh kernel at time `start` and the app; fail the test on a refusal. */
void start_app(const tern_app_desc *app, uint64_t start);

/* Interrupt helpers: post to (task, app port 0). */
void irq_post(void *task_id);
void inject_post(uint64_t at, tern_task_id task);

void log_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *log_get(void);

#endif
