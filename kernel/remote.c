/* The bus manager and the multicast manager (seed 002 V-B.2; remote.h):
 * messages to tasks on the other processors of the node, over a tern_bus.
 *
 * Linked only into apps that call tern_remote_attach(): the message layer
 * reaches this file through msg_remote (kernel.h), which stays NULL in
 * single-processor apps, so their post path only gains a test on a branch
 * it already takes for a missing task.
 *
 * A frame is [kind, source task, destination task or group, port,
 * CRC-16 (2 bytes), payload...]. The receiver trusts none of it. */
#include <string.h>

#include "bitset.h"
#include "crc16.h"
#include "msg.h"
#include "tern/remote.h"

enum { KIND_UNICAST = 'U', KIND_MCAST = 'M' };
/* Retries in a row finding the bus busy before they slow down: a frame
 * waits a few TDMA slots at most while the bus works. */
#define BUSY_LOOKS 64

/* In the bus queue: the message is a multicast (dst holds the group id). */
#define QUEUED_MCAST 0x80

_Static_assert(TERN_MAX_GROUP_MEMBERS <= 8, "local_members[] is one bit per member");

static const tern_bus *bus;
static const TERN_DESC tern_app_desc *app;
static bool started;                     /* the app is instantiated: frames may come in */
static tern_remote_tcb tcbs[TERN_MAX_TASKS]; /* indexed by task id */
static uint8_t local_members[TERN_MAX_GROUPS]; /* per group index: bit i = member i is here */
static uint8_t group_prio[TERN_MAX_GROUPS];    /* the highest member priority: its bus order */
static tern_msg *queue;                  /* waiting for the bus, by destination priority */
static tern_alarm retry;                 /* looks again while the bus is busy or a frame waits */
static uint8_t busy_looks;               /* retries in a row that found the bus busy */
static bool rx_waiting;                  /* a received frame was refused for room */
static uint8_t rx_skip;                  /* members of that multicast already served */
static tern_remote_counters counters;
static uint8_t frozen[(TERN_MAX_TASKS + 7) / 8]; /* per task: its messages wait here */
/* Per bus address: the processor NACKed a frame, it has no power
 * (tern_remote_nack); up again when a frame comes from it. */
static uint8_t down[(TERN_REMOTE_PROCESSORS_MAX + 7) / 8];

static msg_remote_ops ops;

static tern_task_id owner_of(tern_task_id src)
{
    return src == TERN_NO_TASK ? TERN_OWNER_KERNEL : src;
}

static void drop(tern_remote_drop_reason why) { counters.dropped[why]++; }

/* A broadcast (TERN_BUS_ALL) is never down: it reaches whoever is there. */
static bool is_down(uint8_t address)
{
    return address < TERN_REMOTE_PROCESSORS_MAX && bit(down, address);
}

/* --- The bus queue ----------------------------------------------------------- */

/* Highest destination priority first; equal priorities keep their order,
 * so one sender's messages to one task arrive in the order sent. */
static void queue_insert(tern_msg *m)
{
    tern_msg **pp = &queue;
    while (*pp && (*pp)->prio >= m->prio)
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
    if (++counters.queue_depth > counters.max_queue_depth)
        counters.max_queue_depth = counters.queue_depth;
}

/* Take *pp out of the queue and free it with its payload. */
static void queue_remove(tern_msg **pp)
{
    tern_msg *m = *pp;
    *pp = m->next;
    counters.queue_depth--;
    if (m->payload)
        heap_free(m->payload);
    msg_free(m);
}

/* The header's four bytes, then the payload: the CRC's own bytes are not in it. */
static uint16_t frame_crc(const uint8_t *head, const uint8_t *payload, uint8_t len)
{
    return crc16_ccitt(crc16_ccitt(0xFFFF, head, TERN_REMOTE_CRC_AT), payload, len);
}

uint16_t tern_remote_frame_crc(const uint8_t *frame, uint8_t len)
{
    return frame_crc(frame, frame + TERN_REMOTE_HEADER, (uint8_t)(len - TERN_REMOTE_HEADER));
}

static tern_bus_result transmit(uint8_t dst, uint8_t kind, tern_task_id src, uint8_t to,
                                tern_port port, const void *payload, uint8_t len)
{
    /* The header here, the payload where it lies: the driver writes both
     * into the bus (a whole frame on this stack took 64 bytes of the
     * ATmega128's, under whatever handler or interrupt sends). */
    uint8_t head[TERN_REMOTE_HEADER] = {kind, src, to, port};
    uint16_t crc = frame_crc(head, payload, len);
    head[TERN_REMOTE_CRC_AT] = (uint8_t)crc;
    head[TERN_REMOTE_CRC_AT + 1] = (uint8_t)(crc >> 8);
    tern_bus_result r = bus->send(dst, head, TERN_REMOTE_HEADER, payload, len);
    if (r == TERN_BUS_SENT) {
        if (kind == KIND_MCAST)
            counters.tx_mcast++;
        else
            counters.tx_frames++;
    } else if (r == TERN_BUS_BUSY) {
        counters.tx_busy++;
    } else {
        drop(TERN_REMOTE_DROP_BUS_FAILED);
    }
    return r;
}

static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port,
                           const uint8_t *data, uint8_t n);
static bool no_room(tern_status st);
static void count_refusal(tern_status st);

/* A queued message for a task that migrated here: to it like a received
 * one. False: no room now (it stays queued). */
static bool deliver_here(tern_msg *m)
{
    tern_status st = deliver(m->src, m->dst, m->port, m->payload, (uint8_t)m->len);
    if (no_room(st))
        return false;
    if (st == TERN_OK)
        counters.rx_frames++;
    else
        count_refusal(st);
    return true; /* deliver() gave the task its own copy: the caller frees m's */
}

/* A unicast to a task the migrator froze waits (tern_remote_freeze). */
static bool held_back(uint8_t kind, tern_task_id to)
{
    return kind == KIND_UNICAST && to < TERN_MAX_TASKS && bit(frozen, to);
}

/* Send what waits, in queue order, until the bus is busy; messages to a
 * frozen task stay, the others pass them. While something that could
 * leave waits (or a received frame does), the retry alarm looks again.
 * Interrupts disabled. */
static void pump(void)
{
    bool waiting = false;
    tern_msg **pp = &queue;
    while (*pp) {
        tern_msg *m = *pp;
        uint8_t kind = (m->flags & QUEUED_MCAST) ? KIND_MCAST : KIND_UNICAST;
        if (held_back(kind, m->dst)) {
            pp = &m->next;
            continue;
        }
        /* m->posted: the bus address, kept current by tern_remote_set_module;
         * ours when the task has moved here meanwhile. */
        if ((uint8_t)m->posted == bus->address) {
            if (!deliver_here(m)) {
                waiting = true; /* no room yet: again later, in order */
                pp = &m->next;
            } else {
                queue_remove(pp);
            }
            continue;
        }
        if (is_down((uint8_t)m->posted)) { /* it would never leave */
            drop(TERN_REMOTE_DROP_PEER_DOWN);
            queue_remove(pp);
            continue;
        }
        tern_bus_result r = transmit((uint8_t)m->posted, kind, m->src, m->dst, m->port,
                                     m->payload, (uint8_t)m->len);
        if (r == TERN_BUS_BUSY) {
            waiting = true;
            if (busy_looks < 255)
                busy_looks++;
            break;
        }
        busy_looks = 0;
        queue_remove(pp);
    }
    if ((waiting || rx_waiting) && !retry.armed) {
        /* A bus busy for BUSY_LOOKS retries in a row is stuck (a processor
         * that died holds it back by flow control): look half as often
         * each time, down to 1/128, so that this core does not spend
         * itself in the retry interrupt. */
        uint8_t slow = busy_looks > BUSY_LOOKS ? busy_looks - BUSY_LOOKS : 0;
        tern_alarm_set(&retry, tern_now() + (bus->retry_ticks << (slow < 7 ? slow : 7)), 0);
    }
}

/* Send now if nothing waits and the bus is free, else queue a copy by
 * `prio`. The payload stays the caller's unless this returns TERN_OK with a
 * heap payload (TERN_MSG_HEAP), which then travelled (freed here or kept
 * in the queue). Interrupts disabled. */
static tern_status bus_send(uint8_t dst, uint8_t kind, tern_task_id src, uint8_t to,
                            tern_port port, void *payload, uint16_t len, uint8_t flags,
                            uint8_t prio)
{
    if (len > (uint16_t)(bus->frame_max - TERN_REMOTE_HEADER)) {
        drop(TERN_REMOTE_DROP_TOO_LONG);
        return TERN_ERANGE;
    }
    if (len && !payload) {
        drop(TERN_REMOTE_DROP_INVALID);
        return TERN_EINVAL;
    }
    bool heap = (flags & TERN_MSG_HEAP) && payload;
    if (heap) {
        tern_status st = heap_check_owner(payload, owner_of(src));
        if (st != TERN_OK)
            return st;
    }
    if (!held_back(kind, to) && is_down(dst)) {
        /* Its processor has no power: no use queueing for it. A frozen
         * task's messages still wait, for wherever it goes. */
        drop(TERN_REMOTE_DROP_PEER_DOWN);
        return TERN_ETIMEOUT;
    }
    if (!queue && !held_back(kind, to)) {
        tern_bus_result r = transmit(dst, kind, src, to, port, payload, (uint8_t)len);
        if (r == TERN_BUS_FAILED)
            return TERN_EINVAL;
        if (r == TERN_BUS_SENT) {
            if (heap)
                heap_free(payload);
            return TERN_OK;
        }
    }
    tern_msg *m = counters.queue_depth < TERN_REMOTE_QUEUE_MAX ? msg_alloc() : NULL;
    if (!m) {
        drop(TERN_REMOTE_DROP_QUEUE_FULL);
        return TERN_EFULL;
    }
    void *copy = NULL;
    if (heap) {
        copy = payload;
        heap_set_owner(copy, TERN_OWNER_TRANSIT);
    } else if (len) {
        copy = heap_alloc_for(len, TERN_OWNER_TRANSIT);
        if (!copy) {
            msg_free(m);
            drop(TERN_REMOTE_DROP_NO_MEMORY);
            return TERN_ENOMEM;
        }
        memcpy(copy, payload, len);
    }
    m->payload = copy;
    m->len = len;
    m->src = src;
    m->dst = to;
    m->port = port;
    m->flags = kind == KIND_MCAST ? QUEUED_MCAST : 0;
    m->prio = prio;
    m->seq = 0;
    m->posted = dst; /* the bus address: a message leaving has no local post time */
    queue_insert(m);
    counters.tx_queued++;
    pump();
    return TERN_OK;
}

/* msg_remote->send: dst is not a local task. */
static tern_status remote_send(tern_task_id src, tern_task_id dst, tern_port port, void *payload,
                               uint16_t len, uint8_t flags)
{
    if (dst >= TERN_MAX_TASKS || tcbs[dst].module == TERN_REMOTE_NONE) {
        msg_count_drop(dst, TERN_DROP_NO_TASK);
        return TERN_ENOTASK;
    }
    const tern_remote_tcb *t = &tcbs[dst];
    /* The same rule as msg_check's, from the description every processor
     * shares: the error comes back to the sender, as for a local task. */
    if (port >= TERN_PORT_APP0 + t->n_in_ports) {
        msg_count_drop(dst, TERN_DROP_NO_PORT);
        return TERN_ENOPORT;
    }
    return bus_send(t->module, KIND_UNICAST, src, dst, port, payload, len, flags, t->priority);
}

tern_status tern_remote_send_to(uint8_t module, tern_task_id src, tern_task_id dst,
                                tern_port port, const void *payload, uint16_t len,
                                uint8_t prio)
{
    if (!bus)
        return TERN_ESTATE;
    tern_irq_state s = port_irq_save();
    if (module >= bus->count || module == bus->address) {
        drop(TERN_REMOTE_DROP_INVALID);
        port_irq_restore(s);
        return TERN_EINVAL;
    }
    tern_status st = bus_send(module, KIND_UNICAST, src, dst, port, (void *)(uintptr_t)payload,
                              len, 0, prio);
    port_irq_restore(s);
    return st;
}

/* --- The multicast manager ------------------------------------------------- */

static int group_index(const TERN_DESC tern_group_desc *g) { return (int)(g - app->groups); }

/* msg_remote->multicast: once over the bus, then to this processor's own
 * members. The bus gets a copy; the members the payload itself. */
static tern_status remote_multicast(tern_task_id src, const TERN_DESC tern_group_desc *g, void *payload,
                                    uint16_t len, uint8_t flags)
{
    int gi = group_index(g);
    tern_irq_state s = port_irq_save();
    tern_status st = TERN_OK;
    if ((flags & TERN_MSG_HEAP) && payload)
        st = heap_check_owner(payload, owner_of(src));
    if (st == TERN_OK) /* the bus takes a copy: the payload stays for the members */
        st = bus_send(TERN_BUS_ALL, KIND_MCAST, src, g->id, 0, payload, len,
                      (uint8_t)(flags & ~TERN_MSG_HEAP), group_prio[gi]);
    port_irq_restore(s);
    if (st != TERN_OK)
        return st;
    if (!local_members[gi]) {
        if ((flags & TERN_MSG_HEAP) && payload)
            heap_free(payload);
        return TERN_OK;
    }
    return msg_post_group(src, g, local_members[gi], payload, len, flags);
}

/* --- Reception --------------------------------------------------------------- */

/* One received message to a local (task, port), as from an interrupt
 * handler: a heap copy of the payload owned by the sender, so msg_check's
 * ownership rule holds. */
static tern_status deliver(tern_task_id src, tern_task_id dst, tern_port port,
                           const uint8_t *data, uint8_t n)
{
    void *p = NULL;
    if (n) {
        p = heap_alloc_for(n, owner_of(src));
        if (!p)
            return TERN_ENOMEM;
        memcpy(p, data, n);
    }
    /* Outside an interrupt (the idle loop's poll) it only waits in the
     * queue, for the main loop to run it. */
    tern_status st = sched_send(src, dst, port, p, n, p ? TERN_MSG_HEAP : 0,
                                tern_isr_nesting == 0);
    if (st != TERN_OK && p)
        heap_free(p);
    return st;
}

/* A refusal that waiting cannot cure is counted and the frame released. */
static void count_refusal(tern_status st)
{
    drop(st == TERN_ENOTASK ? TERN_REMOTE_DROP_NO_TASK
         : st == TERN_ENOPORT ? TERN_REMOTE_DROP_NO_PORT
                              : TERN_REMOTE_DROP_REFUSED);
}

static bool no_room(tern_status st) { return st == TERN_EFULL || st == TERN_ENOMEM; }

static bool receive_unicast(tern_task_id src, tern_task_id dst, tern_port port,
                            const uint8_t *data, uint8_t n)
{
    if (port == TERN_PORT_INIT || port == TERN_PORT_FINAL || port == TERN_PORT_SERIALIZE ||
        port == TERN_PORT_DESERIALIZE) {
        /* Only this processor's kernel starts, ends and (through its
         * migrator) moves its tasks: a DESERIALIZE from the bus would
         * bypass the migrator. Counted as no such port (a counter and name
         * of its own cost 18 bytes of the ATmega128's RAM, which
         * apps/migrate does not have). TIMEOUTs do come: a moved task's
         * expiries forwarded with its held messages. */
        msg_count_drop(dst, TERN_DROP_NO_PORT);
        drop(TERN_REMOTE_DROP_NO_PORT);
        return true;
    }
    if (dst >= TERN_MAX_TASKS || tern_tasks[dst].state == TASK_EMPTY) {
        /* Not forwarded: a frame never goes back onto the bus from here. */
        msg_count_drop(dst, TERN_DROP_NO_TASK);
        drop(TERN_REMOTE_DROP_NO_TASK);
        return true;
    }
    tern_status st = deliver(src, dst, port, data, n);
    if (no_room(st))
        return false;
    if (st == TERN_OK)
        counters.rx_frames++;
    else
        count_refusal(st);
    return true;
}

static bool receive_multicast(tern_task_id src, uint8_t group, const uint8_t *data, uint8_t n)
{
    const TERN_DESC tern_group_desc *g = app_group(group);
    if (!g) {
        drop(TERN_REMOTE_DROP_BAD_FRAME);
        return true;
    }
    uint8_t mine = local_members[group_index(g)];
    for (uint8_t i = rx_skip; i < g->n_members; i++) {
        if (!(mine & (1u << i)))
            continue;
        tern_status st = deliver(src, g->members[i].task, g->members[i].port, data, n);
        if (no_room(st)) {
            rx_skip = i; /* the members before i have theirs: not twice */
            return false;
        }
        if (st != TERN_OK)
            count_refusal(st);
    }
    rx_skip = 0;
    counters.rx_mcast++;
    return true;
}

void tern_remote_nack(uint8_t address, bool ours)
{
    tern_irq_state s = port_irq_save();
    if (bus && address < bus->count && address != bus->address) {
        if (ours)
            drop(TERN_REMOTE_DROP_PEER_DOWN); /* the frame, lost on the bus */
        set_bit(down, address, true);
        pump(); /* what waits for it goes, what waits behind it leaves */
    }
    port_irq_restore(s);
}

bool tern_remote_peer_down(uint8_t address) { return bus && is_down(address); }

bool tern_remote_receive(uint8_t src_address, const uint8_t *frame, uint8_t len)
{
    tern_irq_state s = port_irq_save();
    /* A frame from it: it has power again (restarted). The frame names its
     * task; the address is otherwise the bus's business. */
    if (src_address < TERN_REMOTE_PROCESSORS_MAX)
        set_bit(down, src_address, false);
    if (!started) { /* no tasks yet: the bus holds it until the app starts */
        counters.rx_deferred++;
        port_irq_restore(s);
        return false;
    }
    bool done = true;
    if (len < TERN_REMOTE_HEADER) {
        drop(TERN_REMOTE_DROP_BAD_FRAME);
    } else if (!rx_waiting && /* a frame offered again was checked the first time */
               tern_remote_frame_crc(frame, len) !=
                   (uint16_t)(frame[TERN_REMOTE_CRC_AT] | frame[TERN_REMOTE_CRC_AT + 1] << 8)) {
        drop(TERN_REMOTE_DROP_BAD_CRC);
    } else if (frame[1] >= TERN_MAX_TASKS && frame[1] != TERN_NO_TASK) {
        drop(TERN_REMOTE_DROP_BAD_FRAME);
    } else if (frame[0] == KIND_UNICAST) {
        done = receive_unicast(frame[1], frame[2], frame[3], frame + TERN_REMOTE_HEADER,
                               (uint8_t)(len - TERN_REMOTE_HEADER));
    } else if (frame[0] == KIND_MCAST) {
        done = receive_multicast(frame[1], frame[2], frame + TERN_REMOTE_HEADER,
                                 (uint8_t)(len - TERN_REMOTE_HEADER));
    } else {
        drop(TERN_REMOTE_DROP_BAD_FRAME);
    }
    if (!done)
        counters.rx_deferred++;
    rx_waiting = !done;
    /* Bus activity: our own frame may have left too. */
    pump();
    port_irq_restore(s);
    return done;
}

/* Send what the bus can take now, and offer a refused frame again. */
static void remote_poll(void)
{
    if (bus->poll) /* also takes a frame that came before the app started */
        bus->poll();
    pump();
}

static void retry_fires(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    remote_poll();
}

/* --- Set-up ---------------------------------------------------------------- */

/* msg_remote->app_admit: an app of a->n_modules modules on this bus and
 * board. Validation trusts module_hw; only the processor itself knows its
 * board: an image whose entry for it claims a radio or ADC the board lacks
 * would start tasks that drive nothing. */
static tern_status remote_app_admit(const TERN_DESC tern_app_desc *a, tern_app_error *err)
{
    if (a->n_modules > bus->count)
        return app_refuse(err, TERN_ERANGE, a, -1, "n_modules", "%u, but the bus has %u",
                          a->n_modules, bus->count);
    uint8_t claimed = a->module_hw ? a->module_hw[bus->address] : 0;
    if (claimed & (uint8_t)~port_board.hw) {
        tern_counters_.hw_refused++;
        return app_refuse(err, TERN_ENOHW, a, -1, "module_hw",
                          "module %u claims hardware 0x%02x, its board has 0x%02x",
                          bus->address, claimed, port_board.hw);
    }
    return TERN_OK;
}

/* msg_remote->app_started: the remote TCBs and this processor's share of
 * every multicast group. An app without modules needs none of this. */
static void remote_app_started(const TERN_DESC tern_app_desc *a)
{
    if (!a->n_modules) {
        msg_remote = NULL;
        return;
    }
    app = a;
    uint8_t self = TERN_MODULE(bus->address);
    for (uint8_t i = 0; i < a->n_tasks; i++) {
        const TERN_DESC tern_task_desc *d = &a->tasks[i];
        tern_remote_tcb *t = &tcbs[d->id];
        t->priority = d->priority;
        t->module = d->module == self ? TERN_REMOTE_NONE : TERN_MODULE_ADDRESS(d->module);
        t->n_in_ports = d->n_in_ports;
        t->flags = d->flags;
    }
    for (uint8_t gi = 0; gi < a->n_groups; gi++) {
        const TERN_DESC tern_group_desc *g = &a->groups[gi];
        for (uint8_t i = 0; i < g->n_members; i++) {
            uint8_t prio = tcbs[g->members[i].task].priority;
            if (prio > group_prio[gi])
                group_prio[gi] = prio;
            if (tcbs[g->members[i].task].module == TERN_REMOTE_NONE)
                local_members[gi] |= (uint8_t)(1u << i);
        }
    }
    started = true;
}

static const TERN_DESC char *remote_task_name(tern_task_id id)
{
    static const TERN_DESC char unknown[] = "?";
    for (uint8_t i = 0; app && i < app->n_tasks; i++)
        if (app->tasks[i].id == id)
            return app->tasks[i].name;
    return unknown;
}

static msg_remote_ops ops = {
    .send = remote_send,
    .multicast = remote_multicast,
    .idle = remote_poll,
    .app_admit = remote_app_admit,
    .app_started = remote_app_started,
    .task_name = remote_task_name,
};

tern_status tern_remote_attach(const tern_bus *b)
{
    if (!b || !b->send || b->address >= b->count || b->count > TERN_REMOTE_PROCESSORS_MAX ||
        b->frame_max <= TERN_REMOTE_HEADER || b->frame_max > TERN_REMOTE_FRAME_MAX)
        return TERN_EINVAL;
    if (msg_remote && started) /* tern_init() clears msg_remote */
        return TERN_ESTATE;
    bus = b;
    app = NULL;
    started = false;
    queue = NULL;
    rx_waiting = false;
    rx_skip = 0;
    memset(tcbs, 0xFF, sizeof tcbs); /* every module TERN_REMOTE_NONE */
    memset(local_members, 0, sizeof local_members);
    memset(group_prio, 0, sizeof group_prio);
    memset(&counters, 0, sizeof counters);
    memset(frozen, 0, sizeof frozen);
    memset(down, 0, sizeof down);
    tern_alarm_init(&retry, retry_fires, NULL);
    ops.address = b->address;
    ops.count = b->count;
    msg_remote = &ops;
    return TERN_OK;
}

const tern_remote_tcb *tern_remote_tcb_of(tern_task_id id)
{
    return id < TERN_MAX_TASKS && tcbs[id].module != TERN_REMOTE_NONE ? &tcbs[id] : NULL;
}

uint8_t tern_remote_module_of(tern_task_id id)
{
    if (!bus || id >= TERN_MAX_TASKS)
        return TERN_REMOTE_NONE;
    if (tcbs[id].module != TERN_REMOTE_NONE)
        return tcbs[id].module;
    return tern_tasks[id].state != TASK_EMPTY ? bus->address : TERN_REMOTE_NONE;
}

tern_status tern_remote_set_module(tern_task_id id, uint8_t module)
{
    if (!app || id >= TERN_MAX_TASKS || tcbs[id].priority == 0xFF)
        return TERN_ENOTASK;
    if (module != TERN_REMOTE_NONE && (module >= bus->count || module == bus->address))
        return TERN_EINVAL;
    tern_irq_state s = port_irq_save();
    tcbs[id].module = module;
    /* What already waits for the bus goes where the task is now: here too
     * (pump delivers it, once the task is instantiated and unfrozen). */
    for (tern_msg *m = queue; m; m = m->next)
        if (!(m->flags & QUEUED_MCAST) && m->dst == id)
            m->posted = module == TERN_REMOTE_NONE ? bus->address : module;
    pump();
    port_irq_restore(s);
    return TERN_OK;
}

static tern_status set_frozen(tern_task_id id, bool on)
{
    if (!bus || id >= TERN_MAX_TASKS)
        return TERN_ENOTASK;
    tern_irq_state s = port_irq_save();
    set_bit(frozen, id, on);
    pump();
    port_irq_restore(s);
    return TERN_OK;
}

tern_status tern_remote_freeze(tern_task_id id) { return set_frozen(id, true); }
tern_status tern_remote_unfreeze(tern_task_id id) { return set_frozen(id, false); }

tern_status tern_remote_forget(tern_task_id id)
{
    if (!bus || id >= TERN_MAX_TASKS)
        return TERN_ENOTASK;
    tern_irq_state s = port_irq_save();
    tern_msg **pp = &queue;
    while (*pp) {
        tern_msg *m = *pp;
        if ((m->flags & QUEUED_MCAST) || m->dst != id) {
            pp = &m->next;
            continue;
        }
        drop(TERN_REMOTE_DROP_KILLED);
        queue_remove(pp);
    }
    tcbs[id].module = TERN_REMOTE_NONE;
    port_irq_restore(s);
    return set_frozen(id, false);
}

uint16_t tern_remote_sendable(void)
{
    uint16_t n = 0;
    tern_irq_state s = port_irq_save();
    for (tern_msg *m = queue; m; m = m->next)
        if (!held_back((m->flags & QUEUED_MCAST) ? KIND_MCAST : KIND_UNICAST, m->dst) &&
            (uint8_t)m->posted != bus->address)
            n++;
    port_irq_restore(s);
    return n;
}

uint8_t tern_remote_address(void) { return bus ? bus->address : TERN_REMOTE_NONE; }

const tern_remote_counters *tern_remote_stats(void) { return &counters; }

const char *tern_remote_drop_name(tern_remote_drop_reason r)
{
    static const char *const names[TERN_REMOTE_DROP_REASONS] = {
        [TERN_REMOTE_DROP_TOO_LONG] = "too_long",
        [TERN_REMOTE_DROP_QUEUE_FULL] = "queue_full",
        [TERN_REMOTE_DROP_NO_MEMORY] = "no_memory",
        [TERN_REMOTE_DROP_BUS_FAILED] = "bus_failed",
        [TERN_REMOTE_DROP_INVALID] = "invalid",
        [TERN_REMOTE_DROP_BAD_FRAME] = "bad_frame",
        [TERN_REMOTE_DROP_NO_TASK] = "no_task",
        [TERN_REMOTE_DROP_NO_PORT] = "no_port",
        [TERN_REMOTE_DROP_REFUSED] = "refused",
        [TERN_REMOTE_DROP_KILLED] = "task_killed",
        [TERN_REMOTE_DROP_BAD_CRC] = "bad_crc",
        [TERN_REMOTE_DROP_PEER_DOWN] = "peer_down",
    };
    return (unsigned)r < TERN_REMOTE_DROP_REASONS ? names[r] : "?";
}
