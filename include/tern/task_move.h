/* The task migrator on a processor (seed 002 V-D): the protocol engine of
 * tern/migrate.h wired to this kernel and to the bus manager of
 * tern/remote.h (kernel/task_move.c; docs/migration.md).
 *
 * Every module runs one migrator task, pinned to it, with the same
 * handler (tern_move_handler) and priority 0 (the lowest: a task it
 * freezes is then never below it on the shared stack). The engine's
 * messages go between migrator tasks with tern_remote_send_to, in bus
 * frames (a STATE larger than a frame goes in fragments); its multicast is
 * one send per other module, so each pair of modules stays FIFO.
 *
 * On this processor the migrator
 *  - freezes a task: the messages waiting for it move to its hold list
 *    (the one that keeps messages until INIT), in order, and later posts
 *    join them there (counted in tern_counters.held): the scheduler does
 *    not dispatch it;
 *  - serializes it: its handler gets a message on TERN_PORT_SERIALIZE
 *    and calls tern_move_serialized() with its state;
 *  - detaches it: the held messages, its timers (remaining time) and
 *    routes go into the image; what is posted to it afterwards still
 *    waits here, and follows the task when the move succeeds;
 *  - attaches it on the destination: DESERIALIZE with the state (its
 *    handler returns an error to refuse), the image's messages replayed in
 *    order ahead of anything posted here meanwhile, the timers re-armed.
 * SERIALIZE and DESERIALIZE run inside the migrator's handler, as a call
 * of the task's handler (tern_self() is the migrator there): they copy
 * state, nothing more. Only the run-to-completion models (fifo, priority,
 * stack) are supported. */
#ifndef TERN_TASK_MOVE_H
#define TERN_TASK_MOVE_H

#include "tern/migrate.h"
#include "tern/msg.h"

/* The migrator task's input ports (n_in_ports = TERN_MOVE_PORTS). */
#define TERN_MOVE_PORT_BUS TERN_PORT_APP(0)       /* engine messages from another module */
#define TERN_MOVE_PORT_SERIALIZE TERN_PORT_APP(1) /* internal: run the SERIALIZE handler */
#define TERN_MOVE_PORTS 2

/* Called on every module, after tern_app_start: `migrators[a]` is the
 * migrator task of bus address a (app->n_modules of them). `done`
 * (optional) hears how each migration this module took part in ended. */
tern_status tern_move_init(const TERN_DESC tern_app_desc *app, const tern_task_id *migrators,
                           void (*done)(tern_task_id t, tern_mig_outcome o, tern_status why));

/* The migrator task's handler. */
tern_status tern_move_handler(void *state, tern_msg *m);

/* Ask to move task t to bus address dst (any module may ask). Refused at
 * once, with tern_move_error() naming the task: unknown task or module,
 * TERN_EPINNED for a task without TERN_TASK_MOVABLE, already there or
 * migrating, TERN_ESTATE when t is here but its handler is on the stack
 * below the caller. */
tern_status tern_move_request(tern_task_id t, uint8_t dst);
const char *tern_move_error(void);

/* In the task's SERIALIZE handler: its state, copied at once. */
tern_status tern_move_serialized(const void *state, uint16_t len);

/* The engine (its stats and slots), for reports and tests. */
const tern_mig *tern_move_engine(void);

typedef struct {
    uint32_t frozen_msgs;    /* messages that were waiting for a task when it froze */
    uint32_t carried_msgs;   /* messages that travelled in an image */
    uint32_t forwarded_msgs; /* posted at the source during the move, forwarded after */
    uint32_t lost_msgs;      /* could not be forwarded (bus queue or heap full) or killed */
    uint32_t deserialize_refused; /* DESERIALIZE handlers that returned an error */
    /* The last migration this module was the source of: its latency on
     * this module's clock, from the freeze (the request) to the outcome. */
    uint32_t timed; /* migrations this module was the source of and timed */
    tern_task_id last_task;
    uint16_t last_state_len;
    tern_time last_ticks;
} tern_move_stats;

const tern_move_stats *tern_move_counters(void);

#endif
