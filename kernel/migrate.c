/* The task migrator: seed 002's protocol (V-D), one engine per processor.
 * Each step below is named as in the seed and in kernel/migrate.pml, the
 * Promela model that checks it. Messages are little-endian bytes so any
 * bus can carry them. Every message starts with the same header; the
 * source numbers its migrations so that a late message of an earlier one
 * (links are FIFO per pair, not across pairs) is recognised as stale. */
#include "tern/migrate.h"

#include <string.h>

#include "tern_rom.h"

enum { H_KIND, H_TASK, H_SRC, H_DST, H_ID, H_AUX, HDR };

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

/* Not inlined, and a byte shift at a time: on the AVR each inlined copy of
 * a 64-bit shift loop costs ~100 bytes of code. */
static __attribute__((noinline)) void put_u64(uint8_t *p, uint64_t v)
{
    for (uint8_t i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static __attribute__((noinline)) uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (uint8_t i = 8; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* The clock of the step deadlines. */
static tern_time step_now(tern_mig *m)
{
    return m->ops->local_now ? m->ops->local_now(m->ctx) : m->ops->global_now(m->ctx);
}

/* Give up the slot's step `timeouts` timeouts from now. Not inlined: it
 * sits on the path that attaches a task (whose handler runs deep), where
 * its 64-bit arithmetic would cost registers saved on the stack. */
static __attribute__((noinline)) void set_deadline(tern_mig *m, tern_mig_slot *s, uint8_t timeouts)
{
    s->deadline = step_now(m) + timeouts * m->timeout;
}

static tern_mig_slot *slot_of(tern_mig *m, tern_task_id t)
{
    for (unsigned i = 0; i < TERN_MIG_SLOTS; i++)
        if (m->slots[i].role != TERN_MIG_IDLE && m->slots[i].task == t)
            return &m->slots[i];
    return NULL;
}

static tern_mig_slot *slot_new(tern_mig *m, tern_task_id t)
{
    for (unsigned i = 0; i < TERN_MIG_SLOTS; i++)
        if (m->slots[i].role == TERN_MIG_IDLE) {
            memset(&m->slots[i], 0, sizeof m->slots[i]);
            m->slots[i].task = t;
            return &m->slots[i];
        }
    return NULL;
}

/* m->image is in use: this processor is the source of a migration (it
 * keeps the image to resume the task) or is reassembling a fragmented
 * STATE as a destination. */
static bool image_busy(const tern_mig *m)
{
    for (unsigned i = 0; i < TERN_MIG_SLOTS; i++)
        if (m->slots[i].role == TERN_MIG_SRC_FREEZING || m->slots[i].role == TERN_MIG_SRC_SENT ||
            m->slots[i].rx_len)
            return true;
    return false;
}

bool tern_mig_busy(const tern_mig *m, tern_task_id t)
{
    return slot_of((tern_mig *)m, t) != NULL; /* slot_of only reads */
}

static void send_to(tern_mig *m, uint8_t module, const uint8_t *buf, uint16_t len)
{
    if (m->ops->send(m->ctx, module, buf, len) != TERN_OK)
        m->stats.transport_errors++;
}

static void multicast(tern_mig *m, const uint8_t *buf, uint16_t len)
{
    if (m->ops->multicast(m->ctx, buf, len) != TERN_OK)
        m->stats.transport_errors++;
}

static void send_hdr(tern_mig *m, int module, uint8_t kind, const tern_mig_slot *s, uint8_t aux)
{
    uint8_t b[HDR] = {kind, s->task, s->src, s->dst, s->id, aux};
    if (module < 0)
        multicast(m, b, HDR);
    else
        send_to(m, (uint8_t)module, b, HDR);
}

static void done(tern_mig *m, tern_task_id t, tern_mig_outcome o, tern_status why)
{
    if (m->ops->done)
        m->ops->done(m->ctx, t, o, why);
}

tern_status tern_mig_init(tern_mig *m, const tern_mig_ops *ops, void *ctx, uint8_t self,
                          uint8_t n_modules, uint16_t mtu)
{
    if (!m || !ops || !ops->send || !ops->multicast || !ops->locate || !ops->movable ||
        !ops->global_now || !ops->freeze || !ops->unfreeze || !ops->route || !ops->serialize ||
        !ops->detach || !ops->attach || !ops->killed)
        return TERN_EINVAL;
    if (n_modules < 2 || n_modules > TERN_MIG_MAX_MODULES || self >= n_modules ||
        (mtu && mtu <= HDR))
        return TERN_ERANGE;
    memset(m, 0, sizeof *m);
    m->ops = ops;
    m->ctx = ctx;
    m->self = self;
    m->n_modules = n_modules;
    m->mtu = mtu;
    m->timeout = TERN_MIG_TIMEOUT;
    return TERN_OK;
}

static const TERN_ROM char *task_name(tern_mig *m, tern_task_id t)
{
    const char *n = m->ops->name ? m->ops->name(m->ctx, t) : NULL;
    return n ? n : TERN_ROM_STR("?");
}

/* Append a string to the error text (no printf: this runs on AVRs too).
 * The texts stay in flash (TERN_ROM: 325 bytes of an ATmega128's RAM). */
static void err_cat(tern_mig *m, const TERN_ROM char *text)
{
    size_t n = strlen(m->error);
    while (*text && n + 1 < sizeof m->error)
        m->error[n++] = *text++;
    m->error[n] = 0;
}

static tern_status refuse(tern_mig *m, tern_task_id t, tern_status why, const TERN_ROM char *what)
{
    m->stats.refused++;
    m->error[0] = 0;
    err_cat(m, TERN_ROM_STR("migration of task '"));
    err_cat(m, task_name(m, t));
    err_cat(m, TERN_ROM_STR("' refused: "));
    err_cat(m, what);
    err_cat(m, TERN_ROM_STR(" ("));
    err_cat(m, tern_status_name(why));
    err_cat(m, TERN_ROM_STR(")"));
    return why;
}

/* The checks every processor can make from the application description. */
static tern_status check(tern_mig *m, tern_task_id t, uint8_t dst)
{
    uint8_t at = m->ops->locate(m->ctx, t);
    if (at == TERN_MIG_NOWHERE || at >= m->n_modules)
        return refuse(m, t, TERN_ENOTASK, TERN_ROM_STR("no such task on any processor"));
    if (!m->ops->movable(m->ctx, t))
        return refuse(m, t, TERN_EPINNED, TERN_ROM_STR("the task is not movable"));
    if (dst >= m->n_modules)
        return refuse(m, t, TERN_ERANGE, TERN_ROM_STR("no such destination processor"));
    if (dst == at)
        return refuse(m, t, TERN_EINVAL, TERN_ROM_STR("the task is already on the destination"));
    if (tern_mig_busy(m, t))
        return refuse(m, t, TERN_ESTATE, TERN_ROM_STR("the task is already migrating"));
    return TERN_OK;
}

/* Step 3, at the source: freeze the task here, SERIALIZE it, multicast
 * FREEZE. The task's state then waits in m->image for the replies. */
static tern_status mig_start(tern_mig *m, tern_task_id t, uint8_t dst, uint8_t requester)
{
    tern_status st = check(m, t, dst);
    if (st != TERN_OK)
        return st;
    if (image_busy(m))
        return refuse(m, t, TERN_ESTATE,
                      TERN_ROM_STR("this processor is busy with another migration's image"));
    tern_mig_slot *s = slot_new(m, t);
    if (!s)
        return refuse(m, t, TERN_EFULL, TERN_ROM_STR("no free migration slot"));
    m->ops->freeze(m->ctx, t);
    st = m->ops->serialize(m->ctx, t);
    if (st != TERN_OK) {
        m->ops->unfreeze(m->ctx, t);
        s->role = TERN_MIG_IDLE;
        return refuse(m, t, st, TERN_ROM_STR("the task could not be sent SERIALIZE"));
    }
    s->role = TERN_MIG_SRC_FREEZING;
    s->src = m->self;
    s->dst = dst;
    s->requester = requester;
    s->id = ++m->next_id;
    s->replies = (uint8_t)(1u << m->self);
    set_deadline(m, s, 1);
    m->image_len = 0;
    m->stats.started++;
    send_hdr(m, -1, TERN_MIG_FREEZE, s, 0);
    return TERN_OK;
}

/* Steps 1 and 2: a request made here is checked, then started if the task
 * is here, else forwarded to the processor the routing table names. */
tern_status tern_mig_request(tern_mig *m, tern_task_id t, uint8_t dst)
{
    m->stats.requests++;
    tern_status st = check(m, t, dst);
    if (st != TERN_OK)
        return st;
    uint8_t at = m->ops->locate(m->ctx, t);
    if (at == m->self)
        return mig_start(m, t, dst, m->self);
    uint8_t b[HDR] = {TERN_MIG_REQUEST, t, at, dst, 0, m->self};
    m->stats.forwarded++;
    send_to(m, at, b, HDR);
    return TERN_OK;
}

/* Step 2 at a receiver: start if the task is here, else pass it on (the
 * task may have moved since the requester looked); refusals go back. */
static void mig_on_request(tern_mig *m, const uint8_t *b)
{
    tern_task_id t = b[H_TASK];
    uint8_t dst = b[H_DST], requester = b[H_AUX];
    m->stats.requests++;
    uint8_t at = m->ops->locate(m->ctx, t);
    tern_status st;
    if (at != m->self && at < m->n_modules) {
        uint8_t f[HDR] = {TERN_MIG_REQUEST, t, at, dst, 0, requester};
        m->stats.forwarded++;
        send_to(m, at, f, HDR);
        return;
    }
    st = at == m->self ? mig_start(m, t, dst, requester)
                       : refuse(m, t, TERN_ENOTASK, TERN_ROM_STR("lost track of the task"));
    if (st == TERN_OK || requester >= m->n_modules)
        return;
    if (requester == m->self) { /* it came back to where it was asked */
        done(m, t, TERN_MIG_REFUSE, st);
        return;
    }
    uint8_t r[HDR] = {TERN_MIG_REFUSED, t, m->self, dst, 0, (uint8_t)st};
    send_to(m, requester, r, HDR);
}

/* Step 4 at every other processor: freeze the senders here, reply. */
#define FROZEN_REFUSED 0x80 /* in FROZEN's aux: this processor cannot take part */

static void mig_on_freeze(tern_mig *m, const uint8_t *b)
{
    /* A FREEZE naming this processor as the source is not one it sent
     * (its own multicast comes back with from == self): replying would
     * send FROZEN to itself (fuzz_migrate, migrate/freeze-from-self). */
    if (b[H_SRC] >= m->n_modules || b[H_DST] >= m->n_modules || b[H_SRC] == m->self) {
        m->stats.bad_messages++;
        return;
    }
    tern_mig_slot *s = slot_new(m, b[H_TASK]);
    if (!s) {
        /* Every slot is taken by other migrations: without one this
         * processor could not follow this one, so it says no and the
         * source gives up (RESUMED), as after a failed SERIALIZE. */
        uint8_t r[HDR] = {TERN_MIG_FROZEN, b[H_TASK], b[H_SRC], b[H_DST], b[H_ID],
                          (uint8_t)(m->self | FROZEN_REFUSED)};
        m->stats.refused++;
        send_to(m, b[H_SRC], r, HDR);
        return;
    }
    s->role = TERN_MIG_FROZEN_WAIT;
    s->src = b[H_SRC];
    s->dst = b[H_DST];
    s->id = b[H_ID];
    set_deadline(m, s, 3);
    m->ops->freeze(m->ctx, s->task);
    send_hdr(m, s->src, TERN_MIG_FROZEN, s, m->self);
}

/* Layout of the image after the header: global stamp (8), state length (2),
 * state, held messages (count 1, length 2, records), routes (count 1, 4
 * each), then per timer: active (1) [remaining (8), period (8)]. */
#define IMG_STAMP HDR
#define IMG_STATE (IMG_STAMP + 8)
#define IMG_TAIL_MAX (1 + 4 * TERN_MAX_OUT_PORTS + 17 * TERN_TIMERS_PER_TASK)

/* The task never left the source (SERIALIZE or detach failed): everyone
 * unfreezes with the routes unchanged. */
static void mig_abort(tern_mig *m, tern_mig_slot *s, tern_status why)
{
    send_hdr(m, -1, TERN_MIG_RESUMED, s, (uint8_t)why);
    m->ops->unfreeze(m->ctx, s->task);
    m->stats.stayed++;
    s->role = TERN_MIG_IDLE;
    done(m, s->task, TERN_MIG_STAYED, why);
}

/* Step 5 at the source: once every processor has replied (so every message
 * sent to the task before its sender froze is queued here: FIFO links) and
 * SERIALIZE has returned, detach the task and send its image. */
static void mig_send_state(tern_mig *m, tern_mig_slot *s)
{
    if (s->role != TERN_MIG_SRC_FREEZING || !s->serialized ||
        s->replies != (uint8_t)((1u << m->n_modules) - 1))
        return;
    if (s->serialized != 1 || s->declined) {
        mig_abort(m, s, s->declined ? TERN_EFULL : TERN_ENOMEM);
        return;
    }
    uint8_t *p = m->image;
    uint16_t off = (uint16_t)(IMG_STATE + 2 + get_u16(p + IMG_STATE));
    tern_mig_image img;
    memset(&img, 0, sizeof img);
    img.task = s->task;
    tern_mig_writer w = {p + off + 3, 0, (uint16_t)(TERN_MIG_IMAGE_MAX - off - 3 - IMG_TAIL_MAX), 0, 0};
    tern_status st = m->ops->detach(m->ctx, s->task, &img, &w);
    if (st != TERN_OK) {
        mig_abort(m, s, st); /* detach's contract: on error the task stays attached */
        return;
    }
    if (w.overflow || img.n_routes > TERN_MAX_OUT_PORTS) {
        /* A kernel that ignored tern_mig_put_msg's TERN_ENOMEM or filled
         * too many routes: the task has left, so the image goes as it is,
         * within its bounds, and the fault is counted. */
        m->stats.bad_messages++;
        if (img.n_routes > TERN_MAX_OUT_PORTS)
            img.n_routes = TERN_MAX_OUT_PORTS;
    }
    p[H_KIND] = TERN_MIG_STATE;
    p[H_TASK] = s->task;
    p[H_SRC] = s->src;
    p[H_DST] = s->dst;
    p[H_ID] = s->id;
    p[H_AUX] = 0;
    put_u64(p + IMG_STAMP, m->ops->global_now(m->ctx));
    p[off] = w.n;
    put_u16(p + off + 1, w.len);
    off = (uint16_t)(off + 3 + w.len);
    p[off++] = img.n_routes;
    for (unsigned i = 0; i < img.n_routes; i++) {
        p[off++] = img.routes[i].kind;
        p[off++] = img.routes[i].group;
        p[off++] = img.routes[i].task;
        p[off++] = img.routes[i].port;
    }
    for (unsigned k = 0; k < TERN_TIMERS_PER_TASK; k++) {
        p[off++] = img.timers[k].active;
        if (img.timers[k].active) {
            put_u64(p + off, img.timers[k].remaining);
            put_u64(p + off + 8, img.timers[k].period);
            off = (uint16_t)(off + 16);
        }
    }
    m->image_len = off;
    s->role = TERN_MIG_SRC_SENT;
    set_deadline(m, s, 1); /* refreshed once it is sent */
    if (!m->mtu || off <= m->mtu) {
        send_to(m, s->dst, p, off);
        set_deadline(m, s, 1);
        return;
    }
    /* Larger than a bus frame: fragments in order (the link is FIFO), each
     * with the header, the last one marked. */
    uint8_t f[HDR + TERN_MIG_FRAGMENT_MAX];
    uint16_t chunk = (uint16_t)(m->mtu - HDR);
    if (chunk > TERN_MIG_FRAGMENT_MAX)
        chunk = TERN_MIG_FRAGMENT_MAX;
    for (uint16_t at = 0; at < off; at = (uint16_t)(at + chunk)) {
        uint16_t n = (uint16_t)(off - at < chunk ? off - at : chunk);
        f[H_KIND] = TERN_MIG_STATE_PART;
        f[H_TASK] = s->task;
        f[H_SRC] = s->src;
        f[H_DST] = s->dst;
        f[H_ID] = s->id;
        f[H_AUX] = at + n == off;
        memcpy(f + HDR, p + at, n);
        send_to(m, s->dst, f, (uint16_t)(HDR + n));
    }
    set_deadline(m, s, 1);
}

tern_status tern_mig_serialized(tern_mig *m, tern_task_id t, const void *state, uint16_t len)
{
    tern_mig_slot *s = slot_of(m, t);
    if (!s || s->role != TERN_MIG_SRC_FREEZING || s->serialized)
        return TERN_ESTATE;
    if (!state && len) {
        s->serialized = 2; /* the handler could not serialize: abort after the replies */
    } else if ((size_t)IMG_STATE + 2 + len + 3 + IMG_TAIL_MAX > TERN_MIG_IMAGE_MAX) {
        s->serialized = 2;
        mig_send_state(m, s);
        return TERN_ENOMEM;
    } else {
        put_u16(m->image + IMG_STATE, len);
        if (len)
            memcpy(m->image + IMG_STATE + 2, state, len);
        s->serialized = 1;
    }
    mig_send_state(m, s);
    return TERN_OK;
}

static void mig_on_frozen(tern_mig *m, tern_mig_slot *s, const uint8_t *b)
{
    uint8_t from = b[H_AUX] & (uint8_t)~FROZEN_REFUSED;
    if (s->role != TERN_MIG_SRC_FREEZING || from >= m->n_modules) {
        m->stats.bad_messages++;
        return;
    }
    s->replies |= (uint8_t)(1u << from);
    if (b[H_AUX] & FROZEN_REFUSED)
        s->declined = 1;
    mig_send_state(m, s);
}

/* An image (received STATE, or the source's own copy) into img; the timers
 * lose the ticks spent since the stamp, and count the expiries that fell in
 * that time (seed 002: "the time manager subtracts those computed ticks"). */
static bool decode(tern_mig *m, const uint8_t *p, uint16_t len, tern_mig_image *img)
{
    memset(img, 0, sizeof *img);
    if (len < IMG_STATE + 2)
        return false;
    img->task = p[H_TASK];
    tern_time stamp = get_u64(p + IMG_STAMP);
    uint32_t off = IMG_STATE;
    img->state_len = get_u16(p + off);
    img->state = p + off + 2;
    off += 2u + img->state_len;
    if (off + 3 > len)
        return false;
    img->n_msgs = p[off];
    img->msgs_len = get_u16(p + off + 1);
    img->msgs = p + off + 3;
    off += 3u + img->msgs_len;
    if (off + 1 > len || p[off] > TERN_MAX_OUT_PORTS)
        return false;
    img->n_routes = p[off++];
    if (off + 4u * img->n_routes > len)
        return false;
    for (unsigned i = 0; i < img->n_routes; i++, off += 4) {
        img->routes[i].kind = p[off];
        img->routes[i].group = p[off + 1];
        img->routes[i].task = p[off + 2];
        img->routes[i].port = p[off + 3];
    }
    tern_time now = m->ops->global_now(m->ctx);
    tern_time elapsed = now > stamp ? now - stamp : 0;
    for (unsigned k = 0; k < TERN_TIMERS_PER_TASK; k++) {
        if (off + 1 > len)
            return false;
        tern_mig_timer *tm = &img->timers[k];
        tm->active = p[off++];
        if (!tm->active)
            continue;
        if (off + 16 > len)
            return false;
        tm->remaining = get_u64(p + off);
        tm->period = get_u64(p + off + 8);
        off += 16;
        if (tm->remaining > elapsed) {
            tm->remaining -= elapsed;
            continue;
        }
        tern_time over = elapsed - tm->remaining;
        if (tm->period == 0) {
            tm->fired = 1;
            tm->active = 0;
            tm->remaining = 0;
        } else {
            tern_time n = 1 + over / tm->period;
            tm->fired = n > 255 ? 255 : (uint8_t)n;
            tm->remaining = tm->period - over % tm->period;
        }
        m->stats.timers_fired += tm->fired;
    }
    /* the held messages must parse exactly */
    uint16_t o = 0;
    tern_mig_held h;
    unsigned n = 0;
    while (tern_mig_msg_next(img, &o, &h))
        n++;
    return off == len && n == img->n_msgs && o == img->msgs_len;
}

static void mig_on_result(tern_mig *m, tern_mig_slot *s, tern_status st);

/* Step 6 at the destination: DESERIALIZE (attach) and multicast the
 * outcome; it applies that outcome here too (mig_on_result). */
static void mig_on_state(tern_mig *m, tern_mig_slot *s, const uint8_t *b, uint16_t len)
{
    if (s->role != TERN_MIG_FROZEN_WAIT || s->dst != m->self) {
        m->stats.bad_messages++;
        return;
    }
    tern_mig_image img;
    tern_status st = !b                          ? TERN_ESTATE /* could not reassemble it */
                     : decode(m, b, len, &img) ? m->ops->attach(m->ctx, &img)
                                                 : TERN_EINVAL;
    uint8_t r[HDR] = {TERN_MIG_RESULT, s->task, s->src, s->dst, s->id, (uint8_t)st};
    multicast(m, r, HDR);
    mig_on_result(m, s, st);
}

/* The source cannot (or must not) resume the task: killed everywhere;
 * the `lost` messages of its image are counted. */
static void mig_kill(tern_mig *m, tern_mig_slot *s, tern_status why, uint8_t lost)
{
    send_hdr(m, -1, TERN_MIG_KILLED, s, (uint8_t)why);
    m->stats.lost_msgs += lost;
    m->ops->killed(m->ctx, s->task, lost);
    m->stats.killed++;
    s->role = TERN_MIG_IDLE;
    done(m, s->task, TERN_MIG_LOST, why);
}

/* Step 7, failure at the source: re-attach the task from the image it
 * kept; if even that fails the task is killed everywhere. */
/* not inlined: its image on the stack would add to mig_on_state's, the
 * deepest path (attach calls the task's handler) */
static __attribute__((noinline)) void mig_resume(tern_mig *m, tern_mig_slot *s, tern_status why)
{
    tern_mig_image img;
    tern_status st = decode(m, m->image, m->image_len, &img) ? m->ops->attach(m->ctx, &img)
                                                             : TERN_EINVAL;
    if (st == TERN_OK)
        mig_abort(m, s, why);
    else
        mig_kill(m, s, st, img.n_msgs);
}

/* Step 7 everywhere: on success update the routing entry, and only then
 * release the held senders (the other order sends them to the old place);
 * on failure the source resumes, the others wait for RESUMED or KILLED. */
static void mig_on_result(tern_mig *m, tern_mig_slot *s, tern_status st)
{
    if (st != TERN_OK) {
        if (s->role == TERN_MIG_SRC_SENT)
            mig_resume(m, s, st);
        return;
    }
    m->ops->route(m->ctx, s->task, s->dst);
    m->ops->unfreeze(m->ctx, s->task);
    if (s->role == TERN_MIG_SRC_SENT)
        m->stats.moved++;
    s->role = TERN_MIG_IDLE;
    done(m, s->task, TERN_MIG_MOVED, TERN_OK);
}

/* A fragment of a STATE too large for one bus frame: reassembled in
 * m->image, unless that is in use (this processor is also the source of
 * another migration): then the whole STATE fails, which is safe. */
static void mig_on_state_part(tern_mig *m, tern_mig_slot *s, const uint8_t *b, uint16_t len)
{
    uint16_t n = (uint16_t)(len - HDR);
    set_deadline(m, s, 3); /* the source is alive */
    if (s->rx_len == 0 && (image_busy(m) || s->rx_bad))
        s->rx_bad = 1;
    else if (!s->rx_bad && (uint32_t)s->rx_len + n <= TERN_MIG_IMAGE_MAX) {
        memcpy(m->image + s->rx_len, b + HDR, n);
        s->rx_len = (uint16_t)(s->rx_len + n);
    } else {
        s->rx_bad = 1;
        s->rx_len = 0;
    }
    if (!b[H_AUX])
        return;
    uint16_t total = s->rx_len;
    bool bad = s->rx_bad;
    s->rx_len = 0;
    s->rx_bad = 0;
    mig_on_state(m, s, bad ? NULL : m->image, total);
}

/* A fragmented STATE that will not be finished: its bytes in m->image are
 * let go (image_busy looks at rx_len), counted. */
static void discard_partial(tern_mig *m, tern_mig_slot *s)
{
    if (s->rx_len || s->rx_bad)
        m->stats.partial_dropped++;
    s->rx_len = 0;
    s->rx_bad = 0;
}

void tern_mig_receive(tern_mig *m, uint8_t from, const uint8_t *b, uint16_t len)
{
    if (from == m->self)
        return; /* a bus that hands a multicast back to its sender */
    if (len < HDR || b[H_KIND] < TERN_MIG_REQUEST || b[H_KIND] > TERN_MIG_STATE_PART ||
        (b[H_KIND] != TERN_MIG_STATE && b[H_KIND] != TERN_MIG_STATE_PART && len != HDR) ||
        (b[H_KIND] == TERN_MIG_STATE_PART && len == HDR)) {
        m->stats.bad_messages++;
        return;
    }
    switch (b[H_KIND]) {
    case TERN_MIG_REQUEST:
        mig_on_request(m, b);
        return;
    case TERN_MIG_REFUSED:
        done(m, b[H_TASK], TERN_MIG_REFUSE, (tern_status)b[H_AUX]);
        return;
    case TERN_MIG_FREEZE:
        if (tern_mig_busy(m, b[H_TASK])) {
            m->stats.bad_messages++;
            return;
        }
        mig_on_freeze(m, b);
        return;
    default:
        break;
    }
    /* The rest belongs to a migration in progress here, this very one. */
    tern_mig_slot *s = slot_of(m, b[H_TASK]);
    if (!s || s->src != b[H_SRC] || s->id != b[H_ID]) {
        /* A RESULT of a failed migration after the source's RESUMED or
         * KILLED overtook it (another link): expected, and harmless. */
        m->stats.stale++;
        return;
    }
    switch (b[H_KIND]) {
    case TERN_MIG_FROZEN:
        mig_on_frozen(m, s, b);
        return;
    case TERN_MIG_STATE:
        mig_on_state(m, s, b, len);
        return;
    case TERN_MIG_STATE_PART:
        if (s->role != TERN_MIG_FROZEN_WAIT || s->dst != m->self) {
            m->stats.bad_messages++;
            return;
        }
        mig_on_state_part(m, s, b, len);
        return;
    case TERN_MIG_RESULT:
        if (s->role == TERN_MIG_SRC_FREEZING) {
            m->stats.bad_messages++;
            return;
        }
        mig_on_result(m, s, (tern_status)b[H_AUX]);
        return;
    default: /* RESUMED, KILLED */
        if (s->role != TERN_MIG_FROZEN_WAIT) {
            m->stats.bad_messages++;
            return;
        }
        discard_partial(m, s);
        if (b[H_KIND] == TERN_MIG_KILLED)
            m->ops->killed(m->ctx, s->task, 0);
        else
            m->ops->unfreeze(m->ctx, s->task);
        s->role = TERN_MIG_IDLE;
        done(m, s->task, b[H_KIND] == TERN_MIG_KILLED ? TERN_MIG_LOST : TERN_MIG_STAYED,
             (tern_status)b[H_AUX]);
        return;
    }
}

/* The held messages a source's image carries (its count byte). */
static uint8_t image_msgs(const tern_mig *m)
{
    uint32_t off = IMG_STATE + 2u + get_u16(m->image + IMG_STATE);
    return off < m->image_len ? m->image[off] : 0;
}

void tern_mig_poll(tern_mig *m)
{
    tern_time now = step_now(m);
    for (unsigned i = 0; i < TERN_MIG_SLOTS; i++) {
        tern_mig_slot *s = &m->slots[i];
        if (s->role == TERN_MIG_IDLE || now < s->deadline)
            continue;
        m->stats.timeouts++;
        switch (s->role) {
        case TERN_MIG_SRC_FREEZING: /* the task never left: it goes on here */
            mig_abort(m, s, TERN_ETIMEOUT);
            break;
        case TERN_MIG_SRC_SENT: /* it left: resuming could make two */
            mig_kill(m, s, TERN_ETIMEOUT, image_msgs(m));
            break;
        default: /* the source died with the task, or with its image */
            discard_partial(m, s);
            m->ops->killed(m->ctx, s->task, 0);
            s->role = TERN_MIG_IDLE;
            done(m, s->task, TERN_MIG_LOST, TERN_ETIMEOUT);
            break;
        }
    }
}

tern_time tern_mig_deadline(const tern_mig *m)
{
    tern_time first = 0;
    for (unsigned i = 0; i < TERN_MIG_SLOTS; i++)
        if (m->slots[i].role != TERN_MIG_IDLE && (!first || m->slots[i].deadline < first))
            first = m->slots[i].deadline;
    return first;
}

tern_status tern_mig_put_msg(tern_mig_writer *w, tern_task_id src, tern_port port,
                             const void *payload, uint16_t len)
{
    if (w->overflow || w->n == 255 || (uint32_t)w->len + 4 + len > w->cap) {
        w->overflow = 1;
        return TERN_ENOMEM;
    }
    uint8_t *p = w->p + w->len;
    p[0] = src;
    p[1] = port;
    put_u16(p + 2, len);
    if (len)
        memcpy(p + 4, payload, len);
    w->len = (uint16_t)(w->len + 4 + len);
    w->n++;
    return TERN_OK;
}

bool tern_mig_msg_next(const tern_mig_image *img, uint16_t *off, tern_mig_held *out)
{
    if ((uint32_t)*off + 4 > img->msgs_len)
        return false;
    const uint8_t *p = img->msgs + *off;
    uint16_t len = get_u16(p + 2);
    if ((uint32_t)*off + 4 + len > img->msgs_len)
        return false;
    out->src = p[0];
    out->port = p[1];
    out->len = len;
    out->payload = p + 4;
    *off = (uint16_t)(*off + 4 + len);
    return true;
}
