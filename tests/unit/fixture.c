#include "fixture.h"

#include <stdio.h>
#include <string.h>

static char log_buf[4096];
static size_t log_len;

void log_text(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (log_len)
        log_buf[log_len++] = ' ';
    log_len += (size_t)vsnprintf(log_buf + log_len, sizeof log_buf - log_len, fmt, ap);
    va_end(ap);
}

const char *log_get(void) { return log_buf; }

tern_status scripted_handler(void *state, tern_msg *m)
{
    script *s = state;
    if (m->port < TERN_PORT_APP0)
        return TERN_OK; /* INIT and other system ports: no work, no log */
    tern_task_id self = tern_self();
    log_text("S%u@%llu", self, (unsigned long long)host_time());
    if (s->post_task != TERN_NO_TASK && (s->max_posts == 0 || s->posts < s->max_posts)) {
        host_work(s->post_after);
        tern_status st = tern_send(s->post_task, s->post_port, NULL, 0, 0);
        assert_int_equal(st, TERN_OK);
        s->posts++;
        host_work(s->work - s->post_after);
    } else {
        host_work(s->work);
    }
    log_text("E%u@%llu", self, (unsigned long long)host_time());
    return TERN_OK;
}

void start_app(const tern_app_desc *app, uint64_t start)
{
    log_len = 0;
    log_buf[0] = '\0';
    host_reset(start);
    tern_init();
    tern_app_error err;
    tern_status st = tern_app_start(app, &err);
    if (st != TERN_OK)
        fail_msg("app refused: %s", err.text);
}

void irq_post(void *task_id)
{
    tern_status st = tern_send((tern_task_id)(uintptr_t)task_id, TERN_PORT_APP(0), NULL, 0, 0);
    assert_int_equal(st, TERN_OK);
}

void inject_post(uint64_t at, tern_task_id task)
{
    host_inject(at, irq_post, (void *)(uintptr_t)task);
}
