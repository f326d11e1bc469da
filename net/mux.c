/* The multiplexer: see mux.h. Queues are touched by tasks (mux_send) and by
 * protocols at interrupt level (pick, done, release), so every change is
 * made with interrupts masked; a queue is at most 16 entries, each change
 * a few dozen cycles plus one payload copy. */
#include <string.h>

#include "mux.h"
#include "tern/console.h"
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/task.h"
#include "tern/time.h"

#define MUX_MAX_DEPTH 16
#define FCF_DATA_SHORT 0x8841 /* data frame, PAN id compression, short addresses */
#define FCF_TYPE_MASK 0x07
#define FCF_TYPE_DATA 0x01

typedef struct {
    uint8_t q[MUX_MAX_DEPTH]; /* entry indexes in sending order */
    uint8_t n;
    uint16_t used;            /* bit i: entries[i] holds a frame */
    bool head_out;            /* q[0] is with a protocol */
} tx_state;

static const mux_config *cfg;
static tx_state txs[MUX_MAX_TX];
static mux_tx_counters tx_count[MUX_MAX_TX];
static mux_rx_counters rx_count[MUX_MAX_RX];
static mux_counters counters;
static uint8_t seq;

const mux_counters *mux_stats(void) { return &counters; }
const mux_tx_counters *mux_tx_stats(uint8_t i) { return i < MUX_MAX_TX ? &tx_count[i] : NULL; }
const mux_rx_counters *mux_rx_stats(uint8_t i) { return i < MUX_MAX_RX ? &rx_count[i] : NULL; }

/* --- Configuration ---------------------------------------------------------------- */

/* `why` stays in flash (RAM is 4 KB): appended after the location. */
static mux_status refuse(mux_error *err, mux_status code, int tx, int rx, const TERN_ROM char *why)
{
    if (err) {
        err->code = code;
        err->tx = (int8_t)tx;
        err->rx = (int8_t)rx;
        int n = 0;
        if (tx >= 0)
            n = tern_snprintf(err->text, sizeof err->text, "tx TO #%d: ", tx);
        else if (rx >= 0)
            n = tern_snprintf(err->text, sizeof err->text, "rx TO #%d: ", rx);
        size_t i = (size_t)n;
        while (*why && i + 1 < sizeof err->text)
            err->text[i++] = *why++;
        err->text[i < sizeof err->text ? i : sizeof err->text - 1] = 0;
    }
    return code;
}

static uint16_t bcs_region_ids(const bcs_config *bcs)
{
    uint16_t ids = 0;
    for (uint8_t k = 0; k < bcs->n_slots; k++)
        for (uint8_t i = 0; i < bcs->slots[k].n_regions; i++)
            ids |= (uint16_t)(1u << bcs->slots[k].regions[i].id);
    return ids;
}

mux_status mux_start(const mux_config *c, const bcs_config *bcs, mux_error *err)
{
    if (cfg)
        return refuse(err, MUX_ESTATE, -1, -1, TERN_ROM_STR("already started"));
    if (!c || !bcs || (c->n_tx && !c->tx) || (c->n_rx && !c->rx))
        return refuse(err, MUX_EINVAL, -1, -1, TERN_ROM_STR("no configuration"));
    if (c->n_tx > MUX_MAX_TX || c->n_rx > MUX_MAX_RX)
        return refuse(err, MUX_EINVAL, -1, -1, TERN_ROM_STR("more than 4 TX or 4 RX TOs"));
    uint16_t ids = bcs_region_ids(bcs);
    for (int i = 0; i < c->n_tx; i++) {
        const mux_tx_desc *d = &c->tx[i];
        if (d->depth == 0 || d->depth > MUX_MAX_DEPTH)
            return refuse(err, MUX_EINVAL, i, -1, TERN_ROM_STR("depth not in 1..16"));
        if (d->max_len == 0 || d->max_len > MUX_MAX_PAYLOAD)
            return refuse(err, MUX_EINVAL, i, -1, TERN_ROM_STR("max_len not in 1..116"));
        if (d->order != MUX_FIFO && d->order != MUX_EDF)
            return refuse(err, MUX_EINVAL, i, -1, TERN_ROM_STR("order neither FIFO nor EDF"));
        if (!d->entries || !d->bytes)
            return refuse(err, MUX_EINVAL, i, -1, TERN_ROM_STR("no storage (MUX_TX_STORAGE)"));
        if (d->regions == 0 || (d->regions & ~ids))
            return refuse(err, MUX_ENOREGION, i, -1, TERN_ROM_STR("bound to no region, or to an id no region has"));
        for (int j = 0; j < i; j++)
            if (c->tx[j].id == d->id)
                return refuse(err, MUX_EDUPLICATE, i, -1, TERN_ROM_STR("id used twice"));
    }
    for (int i = 0; i < c->n_rx; i++) {
        const mux_rx_desc *d = &c->rx[i];
        if (d->n_dests == 0 || !d->dests)
            return refuse(err, MUX_EINVAL, -1, i, TERN_ROM_STR("no destinations"));
        if (d->regions == 0 || (d->regions & ~ids))
            return refuse(err, MUX_ENOREGION, -1, i, TERN_ROM_STR("bound to no region, or to an id no region has"));
        for (int j = 0; j < i; j++)
            if (c->rx[j].id == d->id)
                return refuse(err, MUX_EDUPLICATE, -1, i, TERN_ROM_STR("id used twice"));
    }
    memset(txs, 0, sizeof txs);
    for (uint8_t i = 0; i < c->n_tx; i++)
        for (uint8_t e = 0; e < c->tx[i].depth; e++)
            c->tx[i].entries[e].mpdu = c->tx[i].bytes + e * (MUX_HDR_LEN + c->tx[i].max_len);
    cfg = c;
    return MUX_OK;
}

/* --- Sending -------------------------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

mux_status mux_send(uint8_t to_id, uint16_t dst, const void *payload, uint8_t len,
                    tern_time deadline, uint16_t tag, tern_port confirm_port)
{
    if (!cfg)
        return MUX_ESTATE;
    uint8_t i = 0;
    while (i < cfg->n_tx && cfg->tx[i].id != to_id)
        i++;
    if (i == cfg->n_tx)
        return MUX_ENOTO;
    const mux_tx_desc *d = &cfg->tx[i];
    if (len == 0 || (len && !payload))
        return MUX_EINVAL;
    tern_irq_state s = port_irq_save(); /* counters: tasks of preemptive models share them */
    if (len > d->max_len) {
        tx_count[i].too_long++;
        port_irq_restore(s);
        return MUX_ETOOLONG;
    }
    tx_state *t = &txs[i];
    if (t->n == d->depth) {
        tx_count[i].full++;
        port_irq_restore(s);
        return MUX_EFULL;
    }
    uint8_t slot = 0;
    while (t->used & (1u << slot))
        slot++;
    mux_entry *e = &d->entries[slot];
    e->deadline = deadline;
    e->tag = tag;
    e->tries = 0;
    e->to = i;
    e->task = tern_self();
    e->confirm_port = confirm_port;
    put16(&e->mpdu[0], FCF_DATA_SHORT);
    e->mpdu[2] = seq++;
    put16(&e->mpdu[3], cfg->pan_id);
    put16(&e->mpdu[5], dst);
    put16(&e->mpdu[7], cfg->short_addr);
    memcpy(&e->mpdu[MUX_HDR_LEN], payload, len);
    e->len = (uint8_t)(MUX_HDR_LEN + len);
    /* Position: the end (FIFO), or before the first later deadline (EDF;
     * no deadline sorts last). Never before a head that is out. */
    uint8_t pos = t->n;
    if (d->order == MUX_EDF) {
        uint8_t first = t->head_out ? 1 : 0;
        while (pos > first) {
            const mux_entry *p = &d->entries[t->q[pos - 1]];
            bool later = deadline && (p->deadline == 0 || p->deadline > deadline);
            if (!later)
                break;
            t->q[pos] = t->q[pos - 1];
            pos--;
        }
    }
    t->q[pos] = slot;
    t->n++;
    t->used |= (uint16_t)(1u << slot);
    tx_count[i].enqueued++;
    port_irq_restore(s);
    return MUX_OK;
}

/* The head of TO i leaves its queue. Interrupts masked. */
static void pop(uint8_t i)
{
    tx_state *t = &txs[i];
    t->used &= (uint16_t) ~(1u << t->q[0]);
    t->n--;
    memmove(&t->q[0], &t->q[1], t->n);
    t->head_out = false;
}

static void confirm(const mux_entry *e, mux_status st, tern_time sfd)
{
    if (e->confirm_port == MUX_NO_CONFIRM || e->task == TERN_NO_TASK)
        return;
    mux_confirm *c = tern_alloc(sizeof *c);
    if (!c) {
        tx_count[e->to].confirm_lost++;
        return;
    }
    c->to_id = cfg->tx[e->to].id;
    c->status = (uint8_t)st;
    c->tries = e->tries;
    c->tag = e->tag;
    c->sfd = sfd;
    if (tern_send(e->task, e->confirm_port, c, sizeof *c, TERN_MSG_HEAP) != TERN_OK) {
        tx_count[e->to].confirm_lost++;
        tern_free(c);
    }
}

mux_entry *mux_pick(uint8_t region_id)
{
    if (!cfg)
        return NULL;
    tern_irq_state s = port_irq_save();
    mux_entry *best = NULL;
    for (uint8_t i = 0; i < cfg->n_tx; i++) {
        const mux_tx_desc *d = &cfg->tx[i];
        tx_state *t = &txs[i];
        if (!(d->regions & (1u << region_id)) || t->head_out)
            continue;
        /* EDF: a head whose deadline has passed is confirmed late. */
        while (t->n && d->order == MUX_EDF && d->entries[t->q[0]].deadline &&
               d->entries[t->q[0]].deadline < tern_now()) {
            mux_entry *late = &d->entries[t->q[0]];
            tx_count[i].late++;
            pop(i);
            confirm(late, MUX_ELATE, 0);
        }
        if (t->n && (!best || d->priority > cfg->tx[best->to].priority))
            best = &d->entries[t->q[0]];
    }
    if (best)
        txs[best->to].head_out = true;
    port_irq_restore(s);
    return best;
}

void mux_done(mux_entry *e, bool ok, tern_time sfd)
{
    tern_irq_state s = port_irq_save();
    uint8_t i = e->to;
    e->tries++;
    if (ok) {
        tx_count[i].sent++;
        pop(i);
        confirm(e, MUX_OK, sfd);
    } else if (e->tries > cfg->tx[i].retries) {
        tx_count[i].failed++;
        pop(i);
        confirm(e, MUX_EFAILED, 0);
    } else {
        tx_count[i].retries++;
        txs[i].head_out = false; /* stays at the head for the next pick */
    }
    port_irq_restore(s);
}

void mux_release(mux_entry *e)
{
    tern_irq_state s = port_irq_save();
    txs[e->to].head_out = false;
    port_irq_restore(s);
}

uint8_t mux_priority(const mux_entry *e) { return cfg->tx[e->to].priority; }

/* --- Receiving --------------------------------------------------------------------------- */

uint16_t mux_frame_src(const cc2420_rx_frame *f) { return get16(&f->data[7]); }

const uint8_t *mux_frame_payload(const cc2420_rx_frame *f, uint8_t *len)
{
    *len = (uint8_t)(f->len - MUX_HDR_LEN);
    return &f->data[MUX_HDR_LEN];
}

/* One more destination: the block itself for the last, copies before. */
static void deliver(uint8_t rx, const tern_endpoint *to, cc2420_rx_frame *f, bool last)
{
    uint16_t size = (uint16_t)(sizeof *f + f->len);
    cc2420_rx_frame *m = f;
    if (!last) {
        m = tern_alloc(size);
        if (!m) {
            rx_count[rx].no_memory++;
            return;
        }
        memcpy(m, f, size);
    }
    if (tern_send(to->task, to->port, m, size, TERN_MSG_HEAP) == TERN_OK) {
        rx_count[rx].delivered++;
        return;
    }
    rx_count[rx].post_failed++;
    tern_free(m);
}

void mux_rx(cc2420_rx_frame *f, uint8_t region_id)
{
    if (!cfg || f->len < MUX_HDR_LEN || (f->data[0] & FCF_TYPE_MASK) != FCF_TYPE_DATA) {
        counters.rx_malformed++;
        tern_free(f);
        return;
    }
    uint16_t dst = get16(&f->data[5]);
    if (get16(&f->data[3]) != cfg->pan_id || (dst != cfg->short_addr && dst != MUX_BROADCAST)) {
        counters.rx_foreign++;
        tern_free(f);
        return;
    }
    /* The last destination of the last bound RX TO gets the block. */
    int8_t last_rx = -1;
    for (uint8_t i = 0; i < cfg->n_rx; i++)
        if (cfg->rx[i].regions & (1u << region_id))
            last_rx = (int8_t)i;
    if (last_rx < 0) {
        counters.rx_no_to++;
        tern_free(f);
        return;
    }
    for (uint8_t i = 0; i <= (uint8_t)last_rx; i++) {
        const mux_rx_desc *d = &cfg->rx[i];
        if (!(d->regions & (1u << region_id)))
            continue;
        for (uint8_t k = 0; k < d->n_dests; k++)
            deliver(i, &d->dests[k], f, i == (uint8_t)last_rx && k + 1 == d->n_dests);
    }
}

const char *mux_status_name(mux_status s)
{
    static const char *const names[MUX_STATUS_COUNT] = {
        [MUX_OK] = "MUX_OK",
        [MUX_EINVAL] = "MUX_EINVAL",
        [MUX_ENOTO] = "MUX_ENOTO",
        [MUX_ETOOLONG] = "MUX_ETOOLONG",
        [MUX_EFULL] = "MUX_EFULL",
        [MUX_EDUPLICATE] = "MUX_EDUPLICATE",
        [MUX_ENOREGION] = "MUX_ENOREGION",
        [MUX_ESTATE] = "MUX_ESTATE",
        [MUX_EFAILED] = "MUX_EFAILED",
        [MUX_ELATE] = "MUX_ELATE",
    };
    return (unsigned)s < MUX_STATUS_COUNT ? names[s] : "MUX_E?";
}
