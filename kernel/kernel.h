/* Kernel-internal declarations shared between kernel files. */
#ifndef TERN_KERNEL_H
#define TERN_KERNEL_H

#include <string.h>

#include "tern/port.h"
#include "tern/stats.h"
#include "tern/tern.h"

#define TERN_LEVEL_IDLE ((int8_t)-1)

typedef enum {
    TASK_EMPTY = 0, /* no task with this id */
    TASK_CREATED,   /* instantiated, INIT not handled yet: messages are held */
    TASK_READY,     /* handled INIT */
    TASK_FINALIZING /* FINAL posted: no new messages accepted */
} task_state;

typedef struct {
    const TERN_DESC tern_task_desc *desc;
    tern_msg *held_head, *held_tail; /* messages waiting for INIT, in order */
    uint8_t state;                   /* task_state */
    uint8_t active;                  /* a handler of this task is on the stack */
    tern_alarm timers[TERN_TIMERS_PER_TASK];
} tern_tcb;

/* The message layer (msg.c, msg.h). */
extern tern_tcb tern_tasks[TERN_MAX_TASKS];
/* What the kernel stores of tern_counters (tern/config.h, TERN_STATS):
 * everything, or the counters of faults only; TERN_STAT(expr) counts a
 * statistic, nothing without them. */
#if TERN_STATS
typedef tern_counters kernel_counters;
#define TERN_STAT(expr) (expr)
#else
typedef struct {
    uint32_t dropped[TERN_DROP_REASONS];
    uint32_t handler_errors;
    uint32_t alloc_failures;
    uint32_t leaks_reported;
    uint32_t hw_refused;
} kernel_counters;
#define TERN_STAT(expr) ((void)0)
#endif
extern kernel_counters tern_counters_;

/* Scheduler: sched.c, or the model's sched_threads.c / sched_hybrid.c. */
void sched_reset(void);
bool sched_run_next(void); /* main loop: run one ready message, false if none */
bool sched_has_ready(void);
tern_status sched_send(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                       uint16_t len, uint8_t flags, bool enqueue_only);
void sched_drop_task_messages(tern_task_id id); /* finalization */
bool sched_in_isr(void); /* hybrid: also in a run-to-completion handler (not a thread) */
tern_task_id sched_running_task(void); /* top of the stack, even inside an interrupt */
/* TERN_TASK_THREAD is honoured: every task is a thread (thread models) or
 * the flagged ones are (hybrid). */
bool sched_tasks_are_threads(void);

/* Execution-model policy (policy_<model>.c): one file per model. */
void policy_enqueue(tern_msg **queue, tern_msg *m);
/* May a message of priority `prio` run nested above `level` right now? */
bool policy_preempts(uint8_t prio, int8_t level, bool from_isr);

/* Remote tasks (remote.c, reached only through this pointer so that
 * single-processor apps link none of it): NULL unless tern_remote_attach()
 * was called and the app spans modules. */
typedef struct {
    /* dst is not a local task: send it over the bus (interrupts disabled). */
    tern_status (*send)(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                        uint16_t len, uint8_t flags);
    /* Post to group g: once over the bus, then to the local members. */
    tern_status (*multicast)(tern_task_id src, const TERN_DESC tern_group_desc *g,
                             void *payload, uint16_t len, uint8_t flags);
    void (*idle)(void); /* the idle loop: drain the bus queue, retry a received frame */
    /* May this processor start its share of an app of n_modules modules:
     * the bus is large enough, and its module_hw entry claims no hardware
     * this board lacks (refused like a description, TERN_ERANGE or
     * TERN_ENOHW). Here, not in app.c: a single-processor image links none
     * of it. */
    tern_status (*app_admit)(const TERN_DESC tern_app_desc *app, tern_app_error *err);
    void (*app_started)(const TERN_DESC tern_app_desc *app); /* the tasks of this module exist */
    const TERN_DESC char *(*task_name)(tern_task_id id); /* a task of another module */
    uint8_t address, count; /* this processor's bus address, processors on the bus */
} msg_remote_ops;
extern const msg_remote_ops *msg_remote;
/* Post to the members of g whose bit is set in `members` (msg.c). */
tern_status msg_post_group(tern_task_id src, const TERN_DESC tern_group_desc *g, uint8_t members,
                           void *payload, uint16_t len, uint8_t flags);

/* Memory (slab.c, heap.c). */
void msg_pool_init(void);
extern tern_msg *msg_free_list;
/* Interrupts disabled by the callers; inline: it is a pop on every post. */
static inline __attribute__((always_inline)) tern_msg *msg_alloc(void)
{
    tern_msg *m = msg_free_list;
    if (m)
        msg_free_list = m->next;
    return m;
}
void msg_free(tern_msg *m);
void heap_init(void);
tern_status heap_check_owner(void *p, tern_task_id owner);
void heap_set_owner(void *p, tern_task_id owner);
void *heap_alloc_for(size_t size, tern_task_id owner);
void heap_free(void *p); /* any owner */
void heap_reclaim_task(tern_task_id owner, size_t *bytes, uint32_t *blocks);

/* Applications (app.c, app_check.c). */
const TERN_DESC tern_group_desc *app_group(uint8_t id);
const TERN_DESC tern_group_desc *app_find_group(const TERN_DESC tern_app_desc *app, uint8_t id);
tern_status app_refuse_rom(tern_app_error *err, tern_status code,
                           const TERN_DESC tern_app_desc *app,
                           int index, const TERN_ROM char *field, const TERN_ROM char *fmt, ...);
tern_status app_refuse_field(tern_app_error *err, tern_status code, int index,
                             const TERN_ROM char *field);
/* app_refuse_text(err, code, app, task index or -1, "field", "format",
 * ...): field and format are literals, checked as printf's and kept in
 * flash. app_refuse is the same, except in a build-checked image
 * (TERN_APP_BUILD_CHECK): that keeps the code, the task and the field of
 * what it refuses at run time, without the sentence and its formatter. */
#define app_refuse_text(err, code, app, index, field, fmt, ...)                              \
    (TERN_FORMAT_CHECK(fmt, ##__VA_ARGS__),                                                   \
     app_refuse_rom(err, code, app, index, TERN_ROM_STR(field), TERN_ROM_STR(fmt), ##__VA_ARGS__))
#if TERN_APP_BUILD_CHECK
#define app_refuse(err, code, app, index, field, fmt, ...)                                   \
    (TERN_FORMAT_CHECK(fmt, ##__VA_ARGS__), (void)(app),                                      \
     app_refuse_field(err, code, index, TERN_ROM_STR(field)))
#else
#define app_refuse app_refuse_text
#endif

/* app_finalize_done, reached through this pointer that tern_task_finalize
 * sets (the only way into TASK_FINALIZING): an image that finalizes no
 * task links none of it (the leak report, the reclaim, the drops). */
extern void (*app_finalizer)(tern_task_id id);
void app_reset(void);

/* Time (clock.c, timer.c). */
void clock_init(void);
tern_time clock_now_irqs_off(void); /* tern_now() for callers that masked interrupts */
#if defined(__AVR__)
/* The clock at a counter value read with interrupts masked since, no
 * earlier than the last one extended (clock.c's assembly clock reads). */
tern_time clock_extend(uint32_t raw);
/* The same for the AVR's 32-bit counter, written to *t in place: no
 * 64-bit value through registers. */
void clock_at(tern_time *t, uint32_t raw);
/* tern_isr_enter for a vector that read the clock *now (msg.c). */
void isr_enter_at(const tern_time *now);
#endif
/* The clock's low 32 bits, interrupts masked: on a 32-bit counter the raw
 * count (clock.c only adds whole wraps above it), without the extension. */
static inline __attribute__((always_inline)) uint32_t clock_low_irqs_off(void)
{
#if TERN_COUNTER_BITS >= 32
    return port_counter_read();
#else
    return (uint32_t)clock_now_irqs_off();
#endif
}
void timer_reset(void);
tern_time timer_next_deadline(void); /* UINT64_MAX when none */
/* Arm task timer k of `task` (tern_timer_start for a task that is not running:
 * the migrator re-arms a moved task's timers). */
void timer_arm_for(tern_task_id task, uint8_t k, tern_time deadline, tern_time period);

/* Trace (trace.c), idle (idle.c). */
void trace_init(void);
void idle_reset(void);
/* The sleep state to enter instead of the residency rule's (power.c, set by
 * tern_power_init; NULL: the rule's). `available`: ticks to the next
 * deadline, UINT64_MAX for none. */
extern uint8_t (*idle_power)(uint8_t state, tern_time available);
bool idle_once(void);
void idle_note_wake(void);
/* The clock's low half at the idle period's end (idle.c). */
extern uint32_t idle_wake_lo;
#if defined(__AVR__)
/* idle_note_wake with the clock that the interrupt has read already:
 * inline, four stores. */
static inline __attribute__((always_inline)) void idle_note_wake_at(const tern_time *now)
{
    tern_idle_waiting = 0;
    memcpy(&idle_wake_lo, now, sizeof idle_wake_lo);
}
#endif

#endif
