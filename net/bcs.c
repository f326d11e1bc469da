/* The communication scheduler: see bcs.h for the slot structure and the
 * times t0..t3 of a region.
 *
 * Every BCS event is one compare match of BCS_TIMER_SLOT. The schedule is
 * not a table in RAM but a position -- (macro slot, activity, step) -- and
 * the time of each step is computed from the macro slot's start on the
 * local clock, `slot_start`. The sync protocol moves `slot_start`
 * (bcs_sync_adjust), and the pending step is simply re-armed: no list of
 * future events goes stale.
 *
 * An activity is the sync phase (index -1) or a region of the current
 * macro slot (regions sorted by start at bcs_start). Steps of an activity:
 * WAKE and RXON only when the radio was switched off before it, START,
 * HANDOVER and STOP for regions only, END. */
#include <string.h>

#include "bcs.h"
#include "bcs_timer.h"
#include "mux.h"
#include "tern/console.h"
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/time.h"

#define BCS_MAX_SLOTS 4

/* Radio timing (CC2420 datasheet, and tern-sim's model of it): the crystal
 * is stable within 1 ms of SXOSCON (0.86 ms typical); SRXON listens 12
 * symbols (192 us) later and CCA is valid 8 symbols after that. */
#define WAKE_US 1300u        /* SXOSCON this long before an activity */
#define RXON_US 400u         /* SRXON this long before: listening 208 us before t0 */
#define D_TX_RX_US 192u      /* d_TX->RX of the CC2420: 12 symbols */
/* A gap shorter than this keeps the radio listening: switching off and on
 * costs a crystal start and is not worth it. */
#define OFF_MIN_US (WAKE_US + 1000u)

typedef enum { ST_WAKE, ST_RXON, ST_START, ST_HANDOVER, ST_STOP, ST_END } step;

static const bcs_config *cfg;
static const bcs_mac *const *macs;
static const bcs_sync *sync_proto;

/* Regions sorted by start, per macro slot, with their offsets in ticks. */
static const bcs_region *sorted[BCS_MAX_REGIONS];
static uint32_t reg_start[BCS_MAX_REGIONS], reg_len[BCS_MAX_REGIONS];
static uint8_t slot_first[BCS_MAX_SLOTS + 1];

static uint32_t macro_ticks, sync_ticks, max_off_ticks, stop_ticks;
static uint32_t wake_ticks, rxon_ticks, off_min_ticks;

/* Position in the schedule. */
static bool started, synced;
static tern_time slot_start;
static uint8_t cur_slot;
static int8_t cur_act; /* -1: sync phase */
static uint8_t cur_step;
static bool radio_down;   /* the BCS switched the radio off */
static bool in_sync;      /* inside the sync phase (START..END) */
static bool region_on;    /* inside a region (START..END) */
static bcs_run run;
static bcs_counters counters;


uint32_t bcs_us_to_ticks(uint32_t us)
{
    return (uint32_t)((uint64_t)us * tern_clock_hz() / 1000000u);
}

const bcs_counters *bcs_stats(void) { return &counters; }
bool bcs_synced(void) { return synced; }
const bcs_run *bcs_current(void) { return region_on ? &run : NULL; }

/* --- Validation --------------------------------------------------------------- */

/* `why` stays in flash (RAM is 4 KB): appended after the location. */
static bcs_status refuse(bcs_error *err, bcs_status code, int slot, int region,
                         const TERN_ROM char *why)
{
    if (err) {
        err->code = code;
        err->slot = (int8_t)slot;
        err->region = (int8_t)region;
        int n = 0;
        if (region >= 0)
            n = tern_snprintf(err->text, sizeof err->text, "macro slot %d region %d: ", slot, region);
        else if (slot >= 0)
            n = tern_snprintf(err->text, sizeof err->text, "macro slot %d: ", slot);
        size_t i = (size_t)n;
        while (*why && i + 1 < sizeof err->text)
            err->text[i++] = *why++;
        err->text[i < sizeof err->text ? i : sizeof err->text - 1] = 0;
    }
    return code;
}

uint32_t bcs_d_stop_us(const bcs_config *c)
{
    return c->max_offset_us > D_TX_RX_US ? c->max_offset_us : D_TX_RX_US;
}

bcs_status bcs_validate(const bcs_config *c, const bcs_mac *const m[BCS_MAC_COUNT], bcs_error *err)
{
    if (!c || !c->slots || c->n_slots == 0)
        return refuse(err, BCS_EINVAL, -1, -1, TERN_ROM_STR("no macro slots"));
    if (c->n_slots > BCS_MAX_SLOTS)
        return refuse(err, BCS_ETOO_MANY, -1, -1, TERN_ROM_STR("more than 4 macro slots"));
    /* 2^31 ticks is the timer's reach; 100 s is within it at 20 MHz */
    if (c->macro_slot_us == 0 || c->macro_slot_us > 100000000u)
        return refuse(err, BCS_EINVAL, -1, -1, TERN_ROM_STR("macro_slot_us not in 1..100 s"));
    if (c->sync_us == 0 || c->sync_us >= c->macro_slot_us)
        return refuse(err, BCS_EINVAL, -1, -1, TERN_ROM_STR("sync_us not in 1..macro_slot_us-1"));
    if (c->max_offset_us >= c->macro_slot_us / 2)
        return refuse(err, BCS_EINVAL, -1, -1, TERN_ROM_STR("max_offset_us not below half a macro slot"));
    uint32_t guard = c->max_offset_us + bcs_d_stop_us(c); /* t0..t1 and t2..t3 */
    unsigned total = 0;
    for (int k = 0; k < c->n_slots; k++) {
        const bcs_macro_slot *s = &c->slots[k];
        if (s->n_regions && !s->regions)
            return refuse(err, BCS_EINVAL, k, -1, TERN_ROM_STR("regions missing"));
        total += s->n_regions;
        if (total > BCS_MAX_REGIONS)
            return refuse(err, BCS_ETOO_MANY, k, -1, TERN_ROM_STR("more than 8 regions in the super slot"));
        for (int i = 0; i < s->n_regions; i++) {
            const bcs_region *r = &s->regions[i];
            if (r->id >= BCS_REGION_IDS)
                return refuse(err, BCS_EINVAL, k, i, TERN_ROM_STR("id not in 0..15"));
            if (r->protocol >= BCS_MAC_COUNT || !m || !m[r->protocol])
                return refuse(err, BCS_ENOPROTO, k, i, TERN_ROM_STR("protocol not registered"));
            if (r->len_us == 0)
                return refuse(err, BCS_EINVAL, k, i, TERN_ROM_STR("len_us is 0"));
            if (r->start_us < c->sync_us)
                return refuse(err, BCS_EOVERLAP, k, i, TERN_ROM_STR("starts inside the sync phase"));
            if (r->start_us > c->macro_slot_us || r->len_us > c->macro_slot_us - r->start_us)
                return refuse(err, BCS_EPAST_SLOT, k, i, TERN_ROM_STR("ends after the macro slot"));
            if (r->len_us <= guard)
                return refuse(err, BCS_ETOO_SHORT, k, i,
                              TERN_ROM_STR("len_us <= d_maxOffset + d_stop: no time to send"));
            for (int j = 0; j < i; j++) {
                const bcs_region *q = &s->regions[j];
                if (r->start_us < q->start_us + q->len_us && q->start_us < r->start_us + r->len_us)
                    return refuse(err, BCS_EOVERLAP, k, i, TERN_ROM_STR("overlaps an earlier region"));
            }
        }
    }
    return BCS_OK;
}

/* --- The schedule ---------------------------------------------------------------- */

static uint8_t n_acts(void) { return (uint8_t)(slot_first[cur_slot + 1] - slot_first[cur_slot]); }

static tern_time act_start(void)
{
    return cur_act < 0 ? slot_start : slot_start + reg_start[slot_first[cur_slot] + cur_act];
}

static tern_time act_end(void)
{
    return cur_act < 0 ? slot_start + sync_ticks
                       : act_start() + reg_len[slot_first[cur_slot] + cur_act];
}

static tern_time step_time(void)
{
    switch (cur_step) {
    case ST_WAKE:
        return act_start() - wake_ticks;
    case ST_RXON:
        return act_start() - rxon_ticks;
    case ST_START:
        return act_start();
    case ST_HANDOVER:
        return act_start() + max_off_ticks;
    case ST_STOP:
        return act_end() - stop_ticks;
    default:
        return act_end();
    }
}

static void arm(void)
{
    tern_time at = step_time();
    if ((int64_t)(at - tern_now()) < 0) {
        counters.late_events++;
        counters.late_steps |= (uint8_t)(1u << cur_step);
    }
    bcs_timer_set(BCS_TIMER_SLOT, at);
}

/* After an activity's END: the next activity, and whether the radio goes
 * off in the gap before it. */
static void next_activity(void)
{
    tern_time end = act_end();
    if (cur_act + 1 < n_acts()) {
        cur_act++;
    } else {
        cur_slot = (uint8_t)(cur_slot + 1 == cfg->n_slots ? 0 : cur_slot + 1);
        slot_start += macro_ticks;
        cur_act = -1;
    }
    if (act_start() - end >= off_min_ticks) {
        if (cc2420_off() == CC2420_OK) {
            radio_down = true;
            counters.radio_offs++;
        } else {
            counters.off_refused++;
        }
    }
    cur_step = radio_down ? ST_WAKE : ST_START;
}

static void radio_up(void)
{
    if (!radio_down)
        return;
    if (cc2420_on() == CC2420_OK)
        radio_down = false;
    else
        counters.wake_late++;
}

static void slot_event(void)
{
    const bcs_mac *mac;
    /* Measured after tern_isr_enter, which costs a clock read itself when
     * the CPU was asleep. Negative: a re-plan moved the step (a resync). */
    int32_t delay = (int32_t)(tern_now() - step_time());
    if (delay > 0 && (uint32_t)delay > counters.max_delay[cur_step])
        counters.max_delay[cur_step] = delay > 0xFFFF ? 0xFFFF : (uint16_t)delay;
    switch (cur_step) {
    case ST_WAKE:
        (void)cc2420_on(); /* starts the crystal: CC2420_EWARMING */
        cur_step = ST_RXON;
        break;
    case ST_RXON:
        radio_up();
        cur_step = ST_START;
        break;
    case ST_START:
        radio_up(); /* a late crystal gets a second chance */
        if (cur_act < 0) {
            counters.slots_run++;
            in_sync = true;
            if (sync_proto)
                sync_proto->phase(slot_start, cur_slot);
            cur_step = ST_END;
            break;
        }
        run.region = sorted[slot_first[cur_slot] + cur_act];
        run.slot = cur_slot;
        run.t0 = act_start();
        run.t1 = run.t0 + max_off_ticks;
        run.t3 = act_end();
        run.t2 = run.t3 - stop_ticks;
        region_on = true;
        bcs_timer_pin(true);
        counters.regions_run++;
        macs[run.region->protocol]->configure(&run, mux_pick(run.region->id));
        cur_step = ST_HANDOVER;
        break;
    case ST_HANDOVER:
        macs[run.region->protocol]->start();
        cur_step = ST_STOP;
        break;
    case ST_STOP:
        mac = macs[run.region->protocol];
        mac->stop();
        bcs_timer_cancel(BCS_TIMER_MAC);
        bcs_timer_pin(false);
        cur_step = ST_END;
        break;
    default: /* ST_END */
        if (in_sync)
            bcs_timer_cancel(BCS_TIMER_MAC); /* the sync protocol's */
        in_sync = false;
        region_on = false;
        next_activity();
        break;
    }
    arm();
}

static void mac_event(void)
{
    if (region_on)
        macs[run.region->protocol]->timer();
    else if (in_sync && sync_proto && sync_proto->timer)
        sync_proto->timer();
}

void bcs_sync_adjust(tern_time start, uint8_t slot)
{
    tern_irq_state s = port_irq_save();
    counters.resyncs++;
    if (region_on) { /* we were far off: the region we thought we were in is over */
        macs[run.region->protocol]->stop();
        bcs_timer_cancel(BCS_TIMER_MAC);
        bcs_timer_pin(false);
        region_on = false;
    }
    slot_start = start;
    cur_slot = slot < cfg->n_slots ? slot : 0;
    cur_act = -1;
    cur_step = ST_END;
    in_sync = true;
    radio_down = false; /* a beacon was just received: the radio is on */
    synced = true;
    arm();
    port_irq_restore(s);
}

/* --- Radio events ------------------------------------------------------------------- */

#define FCF_TYPE_MASK 0x07
#define FCF_TYPE_BEACON 0x00

void bcs_radio_rx(cc2420_rx_frame *f)
{
    if (f->len >= 1 && (f->data[0] & FCF_TYPE_MASK) == FCF_TYPE_BEACON) {
        if (sync_proto) {
            sync_proto->rx(f);
            return;
        }
        counters.rx_no_hook++;
    } else if (region_on) {
        macs[run.region->protocol]->rx(f);
        return;
    } else {
        counters.rx_outside++;
    }
    tern_free(f);
}

void bcs_radio_tx_done(const cc2420_tx_result *r)
{
    if (in_sync && sync_proto)
        sync_proto->tx_done(r);
    else if (region_on)
        macs[run.region->protocol]->tx_done(r);
    else
        counters.tx_done_orphan++;
}

/* --- Start ------------------------------------------------------------------------------ */

bcs_status bcs_start(const bcs_config *c, const bcs_mac *const m[BCS_MAC_COUNT],
                     const bcs_sync *s, bool master, uint32_t lead_us, bcs_error *err)
{
    if (started || !cc2420_is_on())
        return refuse(err, BCS_ESTATE, -1, -1,
                      started ? TERN_ROM_STR("already started") : TERN_ROM_STR("radio not up"));
    bcs_status st = bcs_validate(c, m, err);
    if (st != BCS_OK)
        return st;
    cfg = c;
    macs = m;
    sync_proto = s;
    memset(&counters, 0, sizeof counters);
    /* Sort each macro slot's regions by start (insertion: a few of them). */
    uint8_t n = 0;
    for (uint8_t k = 0; k < c->n_slots; k++) {
        slot_first[k] = n;
        for (uint8_t i = 0; i < c->slots[k].n_regions; i++) {
            const bcs_region *r = &c->slots[k].regions[i];
            uint8_t j = n;
            while (j > slot_first[k] && sorted[j - 1]->start_us > r->start_us) {
                sorted[j] = sorted[j - 1];
                j--;
            }
            sorted[j] = r;
            n++;
        }
    }
    slot_first[c->n_slots] = n;
    for (uint8_t i = 0; i < n; i++) {
        reg_start[i] = bcs_us_to_ticks(sorted[i]->start_us);
        reg_len[i] = bcs_us_to_ticks(sorted[i]->len_us);
    }
    macro_ticks = bcs_us_to_ticks(c->macro_slot_us);
    sync_ticks = bcs_us_to_ticks(c->sync_us);
    max_off_ticks = bcs_us_to_ticks(c->max_offset_us);
    stop_ticks = bcs_us_to_ticks(bcs_d_stop_us(c));
    wake_ticks = bcs_us_to_ticks(WAKE_US);
    rxon_ticks = bcs_us_to_ticks(RXON_US);
    off_min_ticks = bcs_us_to_ticks(OFF_MIN_US);

    bcs_timer_init(slot_event, mac_event);
    started = true;
    if (master) {
        tern_irq_state is = port_irq_save();
        synced = true;
        slot_start = tern_now() + bcs_us_to_ticks(lead_us);
        cur_slot = 0;
        cur_act = -1;
        cur_step = ST_START;
        arm();
        port_irq_restore(is);
    }
    return BCS_OK;
}

const char *bcs_status_name(bcs_status s)
{
    static const char *const names[BCS_STATUS_COUNT] = {
        [BCS_OK] = "BCS_OK",
        [BCS_EINVAL] = "BCS_EINVAL",
        [BCS_EOVERLAP] = "BCS_EOVERLAP",
        [BCS_EPAST_SLOT] = "BCS_EPAST_SLOT",
        [BCS_ENOPROTO] = "BCS_ENOPROTO",
        [BCS_ETOO_SHORT] = "BCS_ETOO_SHORT",
        [BCS_ETOO_MANY] = "BCS_ETOO_MANY",
        [BCS_ESTATE] = "BCS_ESTATE",
    };
    return (unsigned)s < BCS_STATUS_COUNT ? names[s] : "BCS_E?";
}
