/* The task migrator (seed 002 V-D): moves a task between the processors
 * (modules) of one node atomically, with the seven-step protocol REQUEST,
 * FREEZE, replies, STATE, DESERIALIZE, RESULT, UNFREEZE (or KILLED).
 *
 * One engine per processor. It is a pure protocol engine: everything it
 * needs from the bus and from the local kernel goes through tern_mig_ops,
 * so it runs unchanged on the host (tests/unit/test_migrate.c, N processors
 * in one process) and on a processor whose bus manager carries its bytes.
 * The Promela model of the same protocol is kernel/migrate.pml; what it
 * proves is in docs/migration.md.
 *
 * Guarantees (given the transport contract below):
 *  - the task is attached (runnable, with its state) on at most one
 *    processor at every instant: the source detaches it before STATE leaves,
 *    the destination attaches it when DESERIALIZE succeeds;
 *  - messages sent to the task before a sender's module froze wait at the
 *    source and travel inside STATE; messages sent after it wait at their
 *    senders until the routing entry names the new location: none is lost
 *    or duplicated and each sender's order is kept;
 *  - a timer that expires while the task is in flight fires on the
 *    destination, once per expiry (global timestamps, remaining ticks). */
#ifndef TERN_MIGRATE_H
#define TERN_MIGRATE_H

#include "tern/app.h"
#include "tern/types.h"

#ifndef TERN_MIG_MAX_MODULES
#define TERN_MIG_MAX_MODULES 8 /* processors on one bus (a reply bitmask is 8 bits) */
#endif
#ifndef TERN_MIG_SLOTS
#define TERN_MIG_SLOTS 2 /* migrations this processor takes part in at once (more: refused, EFULL) */
#endif
#ifndef TERN_MIG_IMAGE_MAX
#define TERN_MIG_IMAGE_MAX 1400 /* bytes of one STATE: task state, routes, timers, held messages */
#endif

#ifndef TERN_MIG_FRAGMENT_MAX
#define TERN_MIG_FRAGMENT_MAX 64 /* image bytes per STATE fragment at most (a stack buffer) */
#endif

/* How long a step may wait for a peer, in units of ops->local_now (or of
 * global_now: ns on a processor, tern/gtime.h). A source gives up after one timeout per
 * step; the other processors wait three (the source's two steps and the
 * frames in flight), so that a live source always decides first. It must
 * be longer than any exchange between live processors takes (a 1 kB STATE
 * over tern-sim's bus: 17 ms, docs/migration.md). */
#ifndef TERN_MIG_TIMEOUT
#define TERN_MIG_TIMEOUT 250000000ull
#endif

#define TERN_MIG_NOWHERE 0xFF /* locate(): the task is on no processor (killed, unknown) */

/* Protocol messages (the first byte of every migrator message). */
typedef enum {
    TERN_MIG_REQUEST = 1, /* -> source: move task to dst (step 2) */
    TERN_MIG_REFUSED,     /* source -> requester: refused, with a status */
    TERN_MIG_FREEZE,      /* source -> all: freeze senders of task (step 3) */
    TERN_MIG_FROZEN,      /* each -> source: my senders hold (step 4) */
    TERN_MIG_STATE,       /* source -> dst: the task image (step 5) */
    TERN_MIG_RESULT,      /* dst -> all: DESERIALIZE's outcome (step 6) */
    TERN_MIG_RESUMED,     /* source -> all: after a failure, resumed at the source (step 7) */
    TERN_MIG_KILLED,      /* source -> all: could not resume, task killed (step 7) */
    TERN_MIG_STATE_PART,  /* source -> dst: a fragment of a STATE larger than a frame */
} tern_mig_kind;

/* How a migration ended, as reported to ops->done on every processor. */
typedef enum {
    TERN_MIG_MOVED = 0, /* the task runs on the destination */
    TERN_MIG_STAYED,    /* failed or given up (SERIALIZE, DESERIALIZE, no slot): the task runs on the source */
    TERN_MIG_LOST,      /* it failed and the source could not resume it: killed */
    TERN_MIG_REFUSE,    /* the request was refused (why: the status) */
} tern_mig_outcome;

/* One task timer in a task image. Times are in ticks of the node's global
 * clock (time sync), so processors with different clocks agree. */
typedef struct {
    uint8_t active;      /* 0: the timer is not running */
    uint8_t fired;       /* attach: expiries that fell while the task was in flight */
    tern_time remaining; /* ticks to the next expiry */
    tern_time period;    /* 0: one-shot */
} tern_mig_timer;

/* What detach() fills in at the source and attach() receives at the
 * destination (or at the source again when it resumes the task). */
typedef struct {
    tern_task_id task;
    uint8_t n_routes;
    tern_route routes[TERN_MAX_OUT_PORTS];
    tern_mig_timer timers[TERN_TIMERS_PER_TASK];
    const uint8_t *state; /* what the task's SERIALIZE handler produced */
    uint16_t state_len;
    const uint8_t *msgs; /* held messages, oldest first (tern_mig_msg_next) */
    uint16_t msgs_len;
    uint8_t n_msgs;
} tern_mig_image;

/* A held message in an image: the payload travels as bytes. */
typedef struct {
    tern_task_id src;
    tern_port port;
    uint16_t len;
    const uint8_t *payload;
} tern_mig_held;

/* Where detach() appends the messages queued for the task. */
typedef struct {
    uint8_t *p;
    uint16_t len, cap;
    uint8_t n;
    uint8_t overflow;
} tern_mig_writer;

/* Append one held message (oldest first); TERN_ENOMEM when the image is full. */
tern_status tern_mig_put_msg(tern_mig_writer *w, tern_task_id src, tern_port port,
                             const void *payload, uint16_t len);
/* Iterate an image's held messages: *off starts at 0; false after the last. */
bool tern_mig_msg_next(const tern_mig_image *img, uint16_t *off, tern_mig_held *out);

/* What the engine needs. The transport must be reliable and FIFO between
 * each pair of processors for migrator messages and for application
 * messages to the migrating task alike (a processor bus is: one frame at a
 * time, hardware flow control). A bus manager that queues by destination
 * priority keeps that if it sends a FROZEN reply (buf[0]) at the migrating
 * task's priority (buf[1] is the task) or lower: it then cannot overtake a
 * message to the task queued before it. Buffers passed to send/multicast
 * are only valid during the call; multicast may hand the message back to
 * this processor too (it is ignored). */
typedef struct {
    /* transport (the bus manager and multicast manager) */
    tern_status (*send)(void *ctx, uint8_t module, const uint8_t *buf, uint16_t len);
    tern_status (*multicast)(void *ctx, const uint8_t *buf, uint16_t len); /* every other module */
    /* knowledge of the application (same description on every processor) */
    uint8_t (*locate)(void *ctx, tern_task_id t); /* module in the routing table, or TERN_MIG_NOWHERE */
    bool (*movable)(void *ctx, tern_task_id t);   /* seed 002's COMOS_TASK_MOVABLE */
    const char *(*name)(void *ctx, tern_task_id t);
    tern_time (*global_now)(void *ctx); /* the node's synchronized clock */
    /* Optional: a cheaper monotonic clock for the step deadlines (m->timeout
     * in its units); without it they use global_now. */
    tern_time (*local_now)(void *ctx);
    /* local kernel operations */
    /* From now on every message to t posted on this processor waits at its
     * sender (the bus manager's queue included: nothing to t leaves this
     * processor after freeze returns); if t is here it is no longer
     * dispatched, but messages that reach it stay queued for it. */
    void (*freeze)(void *ctx, tern_task_id t);
    /* Release the held messages, in order, through the routing table. */
    void (*unfreeze)(void *ctx, tern_task_id t);
    void (*route)(void *ctx, tern_task_id t, uint8_t module);
    /* Deliver SERIALIZE to t; its handler's state comes back through
     * tern_mig_serialized(). An error refuses the migration. */
    tern_status (*serialize)(void *ctx, tern_task_id t);
    /* Remove t from this processor: routes and timers into img (remaining
     * ticks; the engine stamps them), its queued messages into w, oldest
     * first. After it t is on no processor until an attach succeeds. */
    tern_status (*detach)(void *ctx, tern_task_id t, tern_mig_image *img, tern_mig_writer *w);
    /* Recreate t here from img: DESERIALIZE with img->state, routes, the
     * held messages queued in order, then `fired` TIMEOUTs per timer (they
     * expired in flight, after the held messages were sent), and the timers
     * restarted with their remaining ticks. On error nothing of t may
     * remain here. */
    tern_status (*attach)(void *ctx, const tern_mig_image *img);
    /* t is gone for good: drop what waits for it here (counted, by name);
     * at the source `lost` more were in the image (the engine counts them
     * too, in stats.lost_msgs). */
    void (*killed)(void *ctx, tern_task_id t, uint8_t lost);
    /* Optional: the migration of t ended here (or was refused to this requester). */
    void (*done)(void *ctx, tern_task_id t, tern_mig_outcome o, tern_status why);
} tern_mig_ops;

typedef struct {
    uint32_t requests, forwarded, refused, started, moved, stayed, killed;
    uint32_t bad_messages;     /* malformed or unexpected migrator messages (dropped), or a
                                * detach that broke its contract */
    uint32_t transport_errors; /* send/multicast failures */
    uint32_t timers_fired;     /* expiries that fell while a task was in flight */
    uint32_t lost_msgs;        /* held messages of an image whose task was killed */
    uint32_t stale;            /* late messages of a migration already ended here (ignored) */
    uint32_t timeouts;         /* steps given up because a peer did not answer (TERN_ETIMEOUT) */
    uint32_t partial_dropped;  /* destination: fragmented STATEs discarded unfinished */
} tern_mig_stats;

typedef enum {
    TERN_MIG_IDLE = 0,
    TERN_MIG_SRC_FREEZING, /* source: waiting for replies and SERIALIZE */
    TERN_MIG_SRC_SENT,     /* source: STATE sent, waiting for RESULT */
    TERN_MIG_FROZEN_WAIT,  /* other: senders frozen, waiting for the outcome */
} tern_mig_role;

typedef struct {
    uint8_t role; /* tern_mig_role */
    tern_task_id task;
    uint8_t src, dst, requester;
    uint8_t id;         /* the source's number for this migration */
    uint8_t replies;    /* source: modules whose FROZEN arrived (bit per module) */
    uint8_t serialized; /* source: the SERIALIZE handler returned (1) or failed (2) */
    uint8_t declined;   /* source: a processor had no slot to follow the migration */
    uint8_t rx_bad;     /* destination: a fragment could not be kept */
    uint16_t rx_len;    /* destination: bytes of a fragmented STATE so far */
    tern_time deadline; /* global clock: this step is given up then (tern_mig_poll) */
} tern_mig_slot;

typedef struct {
    const tern_mig_ops *ops;
    void *ctx;
    uint8_t self, n_modules;
    uint8_t next_id;
    uint16_t mtu; /* largest message the transport carries, 0: no limit */
    tern_time timeout; /* TERN_MIG_TIMEOUT unless changed after tern_mig_init */
    tern_mig_slot slots[TERN_MIG_SLOTS];
    tern_mig_stats stats;
    /* The source's image: header, serialized state, then what detach adds.
     * Kept until the outcome, so that the source can resume the task. A
     * destination reassembles a fragmented STATE here. */
    uint16_t image_len;
    uint8_t image[TERN_MIG_IMAGE_MAX];
    char error[96]; /* the last refusal, in words (names the task) */
} tern_mig;

/* Set up the engine of processor `self` among `n_modules` (0..n-1, bus
 * addresses). `mtu`: the largest message send() may be given (a bus
 * frame's payload), 0 for no limit; a STATE larger than that goes in
 * fragments. */
tern_status tern_mig_init(tern_mig *m, const tern_mig_ops *ops, void *ctx, uint8_t self,
                          uint8_t n_modules, uint16_t mtu);

/* Step 1: ask to move task t to processor dst. Checked here first (unknown
 * task or module, not movable, already there, already migrating): refused
 * with a status and m->error naming the task. Otherwise forwarded to the
 * source (step 2), or started here if this is the source. */
tern_status tern_mig_request(tern_mig *m, tern_task_id t, uint8_t dst);

/* A migrator message from the bus (from processor `from`; one from this
 * processor itself, a multicast handed back, is ignored). */
void tern_mig_receive(tern_mig *m, uint8_t from, const uint8_t *buf, uint16_t len);

/* The kernel: task t's SERIALIZE handler has produced its state. */
tern_status tern_mig_serialized(tern_mig *m, tern_task_id t, const void *state, uint16_t len);

/* Give up every step whose deadline has passed (a processor that died or
 * stopped mid-migration, a last fragment that never came), counted in
 * stats.timeouts, the outcome's status TERN_ETIMEOUT:
 *  - a source still waiting for FROZEN replies holds the task: RESUMED,
 *    it goes on here (STAYED);
 *  - a source that sent STATE no longer holds it (the destination may have
 *    attached it and died): KILLED everywhere (LOST), as when it cannot
 *    resume; it never resumes, so the task is never on two processors even
 *    if the timeout was too short;
 *  - any other processor (the source died): discards a partial STATE
 *    (stats.partial_dropped), drops what its senders held for the task
 *    (ops.killed) and reports LOST.
 * Call it periodically while tern_mig_deadline() is not 0. */
void tern_mig_poll(tern_mig *m);

/* The earliest deadline of the migrations in progress here, 0 if none. */
tern_time tern_mig_deadline(const tern_mig *m);

/* True while t is frozen or in flight as far as this processor knows. */
bool tern_mig_busy(const tern_mig *m, tern_task_id t);

#endif
