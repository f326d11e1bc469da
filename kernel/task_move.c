/* The task migrator on a processor: kernel/migrate.c's engine wired to the
 * message layer, the timers and the bus manager (tern/task_move.h says
 * what each step does; docs/migration.md the why). Run-to-completion
 * models only: a frozen task is one whose messages wait on its hold list,
 * which the scheduler never looks at. */
#include <string.h>

#include "bitset.h"
#include "msg.h"
#include "tern/gtime.h"
#include "tern/remote.h"
#include "tern/task_move.h"

static struct {
    tern_mig mig;
    const TERN_DESC tern_app_desc *app;
    const tern_task_id *migrators;
    void (*done)(tern_task_id, tern_mig_outcome, tern_status);
    tern_task_id to_serialize; /* SERIALIZE to run at the migrator's next turn */
    tern_task_id serializing;  /* whose SERIALIZE handler runs now */
    bool serialized;
    tern_task_id started_task; /* moving from here since `started` */
    tern_time started;
    volatile bool in_engine; /* the migrator (or a request) is using the engine */
    volatile bool poll_due;  /* the deadline came meanwhile: poll on the way out */
    uint8_t frozen[(TERN_MAX_TASKS + 7) / 8]; /* frozen here: its messages are on its hold list */
    uint8_t away[(TERN_MAX_TASKS + 7) / 8];   /* detached: what is posted to it waits here */
    tern_move_stats stats;
} mv;

static const TERN_DESC tern_task_desc *desc_of(tern_task_id t)
{
    for (uint8_t i = 0; i < mv.app->n_tasks; i++)
        if (mv.app->tasks[i].id == t)
            return &mv.app->tasks[i];
    return NULL;
}

/* The engine's timer stamps and remaining times are in the node's global
 * clock (tern/gtime.h: ns; a module without time sync reads its own clock
 * as the master's, and the modules of a tern-sim node start together).
 * Durations between local ticks and ns, in two parts so that neither
 * product can overflow (a period of days at 20 MHz). */
/* v * mul / div, rounded up when up; one body (not inlined) for both
 * directions: on the AVR every 64-bit division call site costs ~100 bytes. */
static __attribute__((noinline)) tern_time scale(tern_time v, uint32_t mul, uint32_t div, bool up)
{
    tern_time rest = v % div * mul;
    return v / div * mul + (rest + (up ? div - 1 : 0)) / div;
}
static tern_time ticks_to_ns(tern_time ticks)
{
    return scale(ticks, TERN_GTIME_NS_PER_S, tern_clock_hz(), false);
}
/* rounded up: never early */
static tern_time ns_to_ticks(tern_time ns) { return scale(ns, tern_clock_hz(), TERN_GTIME_NS_PER_S, true); }

/* A message that will never be handled here: its heap payload goes too. */
static void discard(tern_msg *m)
{
    if ((m->flags & TERN_MSG_HEAP) && m->payload)
        heap_free(m->payload);
    msg_free(m);
}

/* --- transport ------------------------------------------------------------------------ */

/* One frame to module's migrator. The STATE of a large task goes as many
 * fragments in one go; they wait here while two frames that can leave
 * already wait in the bus queue (the clock interrupt's retry alarm and
 * the bus interrupt keep sending meanwhile), so a 1 kB image needs no 20
 * queued copies. Called from the migrator's handler, interrupts enabled. */
static tern_status op_send(void *ctx, uint8_t module, const uint8_t *buf, uint16_t len)
{
    (void)ctx;
    static bool stuck; /* the last wait gave up and nothing has left since */
    tern_time give_up = tern_now() + tern_clock_hz() / 10; /* 100 ms: a bus that does not move */
    if (tern_remote_sendable() < 2)
        stuck = false;
    while (tern_remote_sendable() >= 2 && !sched_in_isr())
        if (stuck || tern_now() > give_up) {
            /* a peer that died stops the bus (flow control): wait for it
             * once, not once per fragment */
            stuck = true;
            return TERN_EFULL; /* counted: the engine's transport_errors */
        }
    tern_task_id self = mv.migrators[tern_remote_address()];
    return tern_remote_send_to(module, self, mv.migrators[module], TERN_MOVE_PORT_BUS, buf, len,
                               0);
}

/* Every other module, one unicast each: FIFO per pair of modules holds. */
static tern_status op_multicast(void *ctx, const uint8_t *buf, uint16_t len)
{
    tern_status result = TERN_OK;
    for (uint8_t a = 0; a < mv.app->n_modules; a++) {
        if (a == tern_remote_address())
            continue;
        tern_status st = op_send(ctx, a, buf, len);
        if (st != TERN_OK)
            result = st;
    }
    return result;
}

/* --- what the description says ------------------------------------------------------- */

static uint8_t op_locate(void *ctx, tern_task_id t)
{
    (void)ctx;
    return tern_remote_module_of(t); /* in flight: the source (tern_mig_busy refuses) */
}

static bool op_movable(void *ctx, tern_task_id t)
{
    (void)ctx;
    const TERN_DESC tern_task_desc *d = desc_of(t);
    return d && (d->flags & TERN_TASK_MOVABLE);
}

static const char *op_name(void *ctx, tern_task_id t)
{
    (void)ctx;
    const TERN_DESC tern_task_desc *d = desc_of(t);
    return d ? d->name : NULL;
}

static tern_time op_global_now(void *ctx)
{
    (void)ctx;
    return tern_global_now();
}

static tern_time op_local_now(void *ctx)
{
    (void)ctx;
    return tern_now();
}

/* --- freezing ------------------------------------------------------------------------ */

/* Messages to t stop leaving this module; if t runs here its waiting
 * messages move to its hold list, in order, and what is posted later
 * joins them (msg_hold: state CREATED). */
static void op_freeze(void *ctx, tern_task_id t)
{
    (void)ctx;
    tern_remote_freeze(t);
    tern_irq_state s = port_irq_save();
    tern_tcb *tcb = &tern_tasks[t];
    if (tcb->state == TASK_READY) { /* the source: its move starts now */
        mv.started = clock_now_irqs_off();
        mv.started_task = t;
        tern_msg *head = NULL, *tail = NULL, *m;
        while ((m = sched_take_task_message(t)) != NULL) {
            if (tail)
                tail->next = m;
            else
                head = m;
            tail = m;
            mv.stats.frozen_msgs++;
        }
        tcb->held_head = head;
        tcb->held_tail = tail;
        tcb->state = TASK_CREATED;
        set_bit(mv.frozen, t, true);
    }
    port_irq_restore(s);
}

static void op_unfreeze(void *ctx, tern_task_id t)
{
    (void)ctx;
    tern_irq_state s = port_irq_save();
    if (bit(mv.frozen, t) && !bit(mv.away, t)) {
        set_bit(mv.frozen, t, false);
        msg_task_ready(&tern_tasks[t]); /* the hold list goes to the scheduler, in order */
    }
    port_irq_restore(s);
    tern_remote_unfreeze(t);
}

/* --- SERIALIZE ----------------------------------------------------------------------- */

/* The engine asks while it is still setting up the migration: the handler
 * runs at the migrator's next turn (the engine expects it later). */
static tern_status op_serialize(void *ctx, tern_task_id t)
{
    (void)ctx;
    if (!bit(mv.frozen, t))
        return TERN_ESTATE; /* not here, or INIT not handled yet */
    mv.to_serialize = t;
    return tern_send(mv.migrators[tern_remote_address()], TERN_MOVE_PORT_SERIALIZE, NULL, 0, 0);
}

static void run_serialize(void)
{
    tern_task_id t = mv.to_serialize;
    mv.to_serialize = TERN_NO_TASK;
    if (t == TERN_NO_TASK || !bit(mv.frozen, t))
        return;
    const TERN_DESC tern_task_desc *d = tern_tasks[t].desc;
    tern_msg m = {.src = tern_self(), .dst = t, .port = TERN_PORT_SERIALIZE, .prio = d->priority};
    mv.serializing = t;
    mv.serialized = false;
    tern_status st = d->handler(d->state, &m);
    mv.serializing = TERN_NO_TASK;
    if (!mv.serialized || st != TERN_OK)
        (void)tern_mig_serialized(&mv.mig, t, NULL, 1); /* refused: the task stays */
}

tern_status tern_move_serialized(const void *state, uint16_t len)
{
    if (mv.serializing == TERN_NO_TASK || mv.serialized)
        return TERN_ESTATE;
    mv.serialized = true;
    mv.stats.last_state_len = len;
    return tern_mig_serialized(&mv.mig, mv.serializing, state, len);
}

/* --- detach and attach --------------------------------------------------------------- */

/* Frozen t leaves: its held messages, timers and routes into the image.
 * Its TCB stays as a shell whose hold list keeps what is posted here
 * until the outcome (op_route forwards it, op_attach puts it back). */
static tern_status op_detach(void *ctx, tern_task_id t, tern_mig_image *img, tern_mig_writer *w)
{
    (void)ctx;
    if (!bit(mv.frozen, t) || bit(mv.away, t))
        return TERN_ESTATE;
    tern_irq_state s = port_irq_save();
    tern_tcb *tcb = &tern_tasks[t];
    uint8_t n = 0;
    for (tern_msg *m = tcb->held_head; m; m = m->next, n++)
        if (tern_mig_put_msg(w, m->src, m->port, m->payload, m->len) != TERN_OK) {
            w->len = 0; /* does not fit: nothing moves, the task stays */
            w->n = 0;
            w->overflow = 0;
            port_irq_restore(s);
            return TERN_ENOMEM;
        }
    mv.stats.carried_msgs += n;
    while (tcb->held_head) {
        tern_msg *m = tcb->held_head;
        tcb->held_head = m->next;
        discard(m);
    }
    tcb->held_tail = NULL;
    const TERN_DESC tern_task_desc *d = tcb->desc;
    img->n_routes = d->n_out_ports;
    for (uint8_t r = 0; r < d->n_out_ports; r++) /* not memcpy: they may be in flash (TERN_DESC) */
        img->routes[r] = d->routes[r];
    tern_time now = clock_now_irqs_off();
    for (uint8_t k = 0; k < TERN_TIMERS_PER_TASK; k++) {
        tern_alarm *a = &tcb->timers[k];
        img->timers[k].active = a->armed != 0;
        if (a->armed) {
            img->timers[k].remaining = ticks_to_ns(a->deadline > now ? a->deadline - now : 0);
            img->timers[k].period = ticks_to_ns(a->period);
        }
        tern_alarm_cancel(a);
    }
    set_bit(mv.away, t, true);
    port_irq_restore(s);
    return TERN_OK;
}

/* Held messages for t from the image, then `fired` TIMEOUTs: made before
 * anything changes, so that running out of room changes nothing. */
static tern_status replay_list(const tern_mig_image *img, tern_msg **head, tern_msg **tail)
{
    tern_task_id t = img->task;
    uint16_t off = 0;
    tern_mig_held h;
    *head = *tail = NULL;
    for (;;) {
        tern_msg *m;
        if (tern_mig_msg_next(img, &off, &h)) {
            void *p = h.len ? heap_alloc_for(h.len, TERN_OWNER_TRANSIT) : NULL;
            if (h.len && !p)
                return TERN_ENOMEM;
            if (h.len)
                memcpy(p, h.payload, h.len);
            m = msg_make(h.src, t, h.port, p, h.len, p ? TERN_MSG_HEAP : 0);
            if (!m) {
                heap_free(p);
                return TERN_EFULL;
            }
        } else {
            break;
        }
        if (*tail)
            (*tail)->next = m;
        else
            *head = m;
        *tail = m;
    }
    for (uint8_t k = 0; k < TERN_TIMERS_PER_TASK; k++)
        for (uint8_t f = 0; f < img->timers[k].fired; f++) {
            tern_msg *m = msg_make(TERN_NO_TASK, t, TERN_PORT_TIMEOUT(k), NULL, 0, 0);
            if (!m)
                return TERN_EFULL;
            if (*tail)
                (*tail)->next = m;
            else
                *head = m;
            *tail = m;
        }
    return TERN_OK;
}

/* t arrives (or comes back to the source after a failure): DESERIALIZE,
 * the image's messages ahead of what waits here for it, the timers. It
 * stays frozen (hold list) until op_unfreeze. */
static tern_status op_attach(void *ctx, const tern_mig_image *img)
{
    (void)ctx;
    tern_task_id t = img->task;
    const TERN_DESC tern_task_desc *d = desc_of(t);
    if (!d)
        return TERN_ENOTASK;
    tern_tcb *tcb = &tern_tasks[t];
    bool back = bit(mv.away, t); /* the source's own shell */
    if (!back && tcb->state != TASK_EMPTY)
        return TERN_ESTATE;
    tern_irq_state s = port_irq_save();
    if (!back)
        tcb->desc = d; /* msg_make reads the priority; still EMPTY to senders */
    tern_msg *head, *tail;
    tern_status st = replay_list(img, &head, &tail);
    port_irq_restore(s);
    if (st == TERN_OK) {
        tern_msg dm = {.src = tern_self(), .dst = t, .port = TERN_PORT_DESERIALIZE,
                       .payload = (void *)img->state, .len = img->state_len,
                       .prio = d->priority};
        st = d->handler(d->state, &dm);
        if (st != TERN_OK)
            mv.stats.deserialize_refused++;
    }
    s = port_irq_save();
    if (st != TERN_OK) {
        while (head) {
            tern_msg *m = head;
            head = m->next;
            discard(m);
        }
        if (!back)
            tcb->desc = NULL;
        port_irq_restore(s);
        return st;
    }
    if (back) {
        if (tail) { /* what was posted here during the move goes behind */
            tail->next = tcb->held_head;
            if (!tcb->held_head)
                tcb->held_tail = tail;
            tcb->held_head = head;
        }
        /* The queue orders equal priorities by creation: renumber in list order. */
        for (tern_msg *m = tcb->held_head; m; m = m->next)
            m->seq = msg_next_seq++;
    } else {
        tcb->held_head = head;
        tcb->held_tail = tail;
        tcb->state = TASK_CREATED;
    }
    tern_time now = clock_now_irqs_off();
    for (uint8_t k = 0; k < TERN_TIMERS_PER_TASK; k++)
        if (img->timers[k].active)
            timer_arm_for(t, k, now + ns_to_ticks(img->timers[k].remaining),
                          ns_to_ticks(img->timers[k].period));
    set_bit(mv.away, t, false);
    set_bit(mv.frozen, t, true);
    port_irq_restore(s);
    if (!back) {
        /* What this module's senders posted to t while it was elsewhere
         * waits in the bus queue: it joins the hold list now, behind the
         * image's messages and ahead of anything posted from here on. */
        tern_remote_set_module(t, TERN_REMOTE_NONE);
        tern_remote_unfreeze(t);
    }
    return TERN_OK;
}

/* The source after a move: what its senders posted during it follows the
 * task, ahead of anything they post from now on (frozen in the bus queue
 * until op_unfreeze). */
static void leave(tern_task_id t, uint8_t module)
{
    tern_tcb *tcb = &tern_tasks[t];
    tern_irq_state s = port_irq_save();
    while (tcb->held_head) {
        tern_msg *m = tcb->held_head;
        tcb->held_head = m->next;
        if (tern_remote_send_to(module, m->src, t, m->port, m->payload, m->len, m->prio) == TERN_OK)
            mv.stats.forwarded_msgs++;
        else
            mv.stats.lost_msgs++; /* counted by reason in tern_remote_stats too */
        discard(m);
    }
    tcb->held_tail = NULL;
    size_t bytes;
    uint32_t blocks;
    heap_reclaim_task(t, &bytes, &blocks); /* what it owned here: its state went in the image */
    tcb->state = TASK_EMPTY;
    tcb->desc = NULL;
    set_bit(mv.away, t, false);
    set_bit(mv.frozen, t, false);
    port_irq_restore(s);
}

static void op_route(void *ctx, tern_task_id t, uint8_t module)
{
    (void)ctx;
    if (module == tern_remote_address()) {
        tern_remote_set_module(t, TERN_REMOTE_NONE);
        return;
    }
    if (bit(mv.away, t))
        leave(t, module);
    tern_remote_set_module(t, module);
}

static void op_killed(void *ctx, tern_task_id t, uint8_t lost)
{
    (void)ctx;
    mv.stats.lost_msgs += lost;
    tern_remote_forget(t); /* what this module's senders held for it, and its route */
    tern_irq_state s = port_irq_save();
    if (bit(mv.away, t)) {
        for (tern_msg *m = tern_tasks[t].held_head; m; m = m->next)
            mv.stats.lost_msgs++;
        msg_drop_held(t); /* counted as finalized drops */
        tern_tasks[t].state = TASK_EMPTY;
        tern_tasks[t].desc = NULL;
        set_bit(mv.away, t, false);
        set_bit(mv.frozen, t, false);
    }
    port_irq_restore(s);
}

static void op_done(void *ctx, tern_task_id t, tern_mig_outcome o, tern_status why)
{
    (void)ctx;
    if (t == mv.started_task && o != TERN_MIG_REFUSE) {
        mv.stats.last_ticks = tern_now() - mv.started;
        mv.stats.last_task = t;
        mv.stats.timed++;
        mv.started_task = TERN_NO_TASK;
    }
    if (mv.done)
        mv.done(t, o, why);
}

static const tern_mig_ops ops = {
    .send = op_send, .multicast = op_multicast, .locate = op_locate, .movable = op_movable,
    .name = op_name, .global_now = op_global_now, .local_now = op_local_now, .freeze = op_freeze,
    .unfreeze = op_unfreeze, .route = op_route, .serialize = op_serialize,
    .detach = op_detach, .attach = op_attach, .killed = op_killed, .done = op_done,
};

/* --- the migrator task --------------------------------------------------------------- */

/* The engine's deadlines (a peer that died mid-migration) on the alarm of
 * the migrator's timer 0, armed only while a migration is in progress here
 * (an idle module does not wake for it), with a callback of ours: a
 * TIMEOUT message would need room in the pool, which the senders of a
 * frozen task may have filled, waiting for this very migration to end
 * (and the alarm lives in the TCB: no RAM added on a 4 KB ATmega128). It
 * polls the engine in the clock interrupt unless the migrator is using
 * it; then the migrator polls when it is done. */
static tern_alarm *deadline_alarm(void)
{
    return &tern_tasks[mv.migrators[tern_remote_address()]].timers[0];
}

static void deadline_fires(tern_alarm *a, void *arg)
{
    (void)arg;
    if (mv.in_engine) {
        mv.poll_due = true;
        return;
    }
    mv.in_engine = true;
    tern_mig_poll(&mv.mig); /* sends do not wait in an interrupt (op_send) */
    mv.in_engine = false;
    tern_time due = tern_mig_deadline(&mv.mig);
    if (due)
        tern_alarm_set(a, due, 0);
}

/* The migrator leaves the engine: a deadline that came meanwhile, then the
 * alarm for the next one (local ticks: op_local_now). */
static __attribute__((noinline)) void engine_done(void) /* off the deep path */
{
    if (mv.poll_due) {
        mv.poll_due = false;
        tern_mig_poll(&mv.mig);
    }
    tern_irq_state s = port_irq_save();
    mv.in_engine = false;
    tern_time due = tern_mig_deadline(&mv.mig);
    tern_alarm *a = deadline_alarm();
    if (!due)
        tern_alarm_cancel(a);
    else if (!a->armed || a->deadline != due)
        tern_alarm_set(a, due, 0);
    port_irq_restore(s);
}

tern_status tern_move_init(const TERN_DESC tern_app_desc *app, const tern_task_id *migrators,
                           void (*done)(tern_task_id, tern_mig_outcome, tern_status))
{
    uint8_t self = tern_remote_address();
    if (!app || !migrators || self == TERN_REMOTE_NONE || self >= app->n_modules)
        return TERN_EINVAL;
    memset(&mv.frozen, 0, sizeof mv.frozen);
    memset(&mv.away, 0, sizeof mv.away);
    memset(&mv.stats, 0, sizeof mv.stats);
    mv.app = app;
    mv.migrators = migrators;
    mv.done = done;
    mv.to_serialize = mv.serializing = mv.started_task = TERN_NO_TASK;
    mv.in_engine = mv.poll_due = false;
    tern_alarm_init(deadline_alarm(), deadline_fires, NULL); /* the migrator starts no timer */
    tern_status st = tern_mig_init(&mv.mig, &ops, NULL, self, app->n_modules,
                                   TERN_REMOTE_FRAME_MAX - TERN_REMOTE_HEADER);
    mv.mig.timeout = ns_to_ticks(TERN_MIG_TIMEOUT);
    return st;
}

tern_status tern_move_handler(void *state, tern_msg *m)
{
    (void)state;
    mv.in_engine = true;
    if (m->port == TERN_MOVE_PORT_BUS && m->len)
        tern_mig_receive(&mv.mig, tern_remote_module_of(m->src), m->payload, m->len);
    else if (m->port == TERN_MOVE_PORT_SERIALIZE)
        run_serialize();
    engine_done();
    return TERN_OK;
}

tern_status tern_move_request(tern_task_id t, uint8_t dst)
{
    if (t < TERN_MAX_TASKS && tern_tasks[t].state != TASK_EMPTY && tern_tasks[t].active) {
        tern_snprintf(mv.mig.error, sizeof mv.mig.error,
                      "task '%s': its handler is running below the caller",
                      tern_tasks[t].desc->name);
        return TERN_ESTATE;
    }
    mv.in_engine = true;
    tern_status st = tern_mig_request(&mv.mig, t, dst);
    engine_done();
    return st;
}

const char *tern_move_error(void) { return mv.mig.error; }
const tern_mig *tern_move_engine(void) { return &mv.mig; }
const tern_move_stats *tern_move_counters(void) { return &mv.stats; }
