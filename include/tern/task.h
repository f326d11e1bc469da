/* What a running handler (or an interrupt handler) may call. */
#ifndef TERN_TASK_H
#define TERN_TASK_H

#include "tern/app.h"
#include "tern/msg.h"
#include "tern/types.h"

/* The task whose handler is running, TERN_NO_TASK in interrupt or idle. */
tern_task_id tern_self(void);

/* The name in the application description (also of a task on another
 * module), "?" for an unknown id. In flash (TERN_DESC) when the
 * description is: print it with tern_puts. */
const TERN_DESC char *tern_task_name(tern_task_id id);

/* Post through the running task's routing table (output port -> task/port
 * or multicast group). With TERN_MSG_HEAP the payload must be a heap block
 * owned by the sender; ownership travels with the message. */
tern_status tern_post(uint8_t out_port, void *payload, uint16_t len, uint8_t flags);

/* Post to an explicit destination; usable from tasks and interrupt handlers. */
tern_status tern_send(tern_task_id dst, tern_port port, void *payload, uint16_t len,
                      uint8_t flags);

/* Take a message's payload without copying when it is a heap block, or as a
 * heap copy owned by the caller otherwise (seed 002 sched_take_msg). NULL
 * when the heap is exhausted or the message has no payload. A payload that
 * is not taken is freed when the handler returns. */
void *tern_take(tern_msg *m);

/* Task timers: timer k delivers a message to TIMEOUTk of the calling task
 * `delay` ticks from now, then every `period` ticks (0 = one-shot). Restarting
 * a running timer reprograms it. TERN_ERANGE for k beyond the task's timers or
 * a delay and period that would take a deadline past 2^64 ticks (a running
 * timer k is then left as it was). */
tern_status tern_timer_start(uint8_t k, tern_time delay, tern_time period);
tern_status tern_timer_cancel(uint8_t k);

#endif
