/* RB: TDMA with exclusive slots in a slot region (mac_rb.h). Runs at
 * interrupt level: the BCS calls configure/start/stop, the MAC timer
 * channel marks the node's own slots, the radio reports each frame's end.
 * Between its own slots a node only listens. */
#include "mac_rb.h"
#include "bcs_timer.h"
#include "mac_common.h"
#include "mux.h"
#include "tern/port.h"
#include "tern/time.h"

typedef enum { RB_IDLE, RB_WAIT, RB_TX } rb_state;

static const rb_config *cfg;
static rb_counters counters;
static const bcs_run *run;
static const rb_schedule *sched; /* the running region's */
/* Tick values computed once in rb_init: bcs_us_to_ticks divides 64-bit
 * numbers, thousands of cycles the slot path must not spend. */
static uint32_t slot_ticks_of[RB_MAX_SCHEDULES];
static uint32_t guard_ticks, byte_ticks, turnaround_ticks;
static uint32_t slot_ticks; /* the running region's */
static mux_entry *cur;   /* reserved in the mux until sent or given back */
static uint8_t slot;     /* the own slot armed or being sent in */
static uint8_t state;    /* rb_state */

const rb_counters *rb_stats(void) { return &counters; }

/* --- Validation ------------------------------------------------------------------ */

static rb_status refuse(rb_error *err, rb_status code, int schedule, const TERN_ROM char *why)
{
    if (err) {
        err->code = code;
        err->schedule = (int8_t)schedule;
        mac_refusal_text(err->text, sizeof err->text, schedule, why);
    }
    return code;
}

static const rb_schedule *find(const rb_config *c, uint8_t region_id)
{
    for (uint8_t i = 0; i < c->n_schedules; i++)
        if (c->schedules[i].region_id == region_id)
            return &c->schedules[i];
    return NULL;
}

rb_status rb_init(const rb_config *c, const bcs_config *bcs, rb_error *err)
{
    if (!c || !bcs || !c->schedules || c->n_schedules == 0)
        return refuse(err, RB_EINVAL, -1, TERN_ROM_STR("no schedules"));
    if (c->n_schedules > RB_MAX_SCHEDULES)
        return refuse(err, RB_EINVAL, -1, TERN_ROM_STR("more than 4 schedules"));
    uint16_t scheduled = 0;
    for (int i = 0; i < c->n_schedules; i++) {
        const rb_schedule *s = &c->schedules[i];
        if (s->n_slots == 0 || s->n_slots > RB_MAX_SLOTS || !s->owners)
            return refuse(err, RB_EINVAL, i, TERN_ROM_STR("n_slots not in 1..32, or no owners"));
        if (s->max_len == 0 || s->max_len > MAC_MAX_MPDU)
            return refuse(err, RB_EINVAL, i, TERN_ROM_STR("max_len not in 1..125"));
        if (s->slot_us < mac_air_us(s->max_len) + bcs->max_offset_us + RB_SEND_MARGIN_US)
            return refuse(err, RB_ESLOT_SHORT, i,
                          TERN_ROM_STR("slot_us < 192 us + max_len frame + d_maxOffset + margin"));
        for (int j = 0; j < i; j++)
            if (c->schedules[j].region_id == s->region_id)
                return refuse(err, RB_EDUPLICATE, i, TERN_ROM_STR("region id scheduled twice"));
        uint32_t usable = mac_min_usable_us(bcs, BCS_MAC_RB, s->region_id);
        if (usable == UINT32_MAX)
            return refuse(err, RB_ENOREGION, i, TERN_ROM_STR("no RB region has this id"));
        if ((uint32_t)s->n_slots * s->slot_us > usable)
            return refuse(err, RB_EREGION_SHORT, i,
                          TERN_ROM_STR("n_slots * slot_us > t2 - t1 of a region"));
        scheduled |= (uint16_t)(1u << s->region_id); /* < BCS_REGION_IDS: a region has it */
    }
    if (mac_region_ids(bcs, BCS_MAC_RB) & ~scheduled)
        return refuse(err, RB_ENOSCHEDULE, -1, TERN_ROM_STR("an RB region has no schedule"));
    for (uint8_t i = 0; i < c->n_schedules; i++)
        slot_ticks_of[i] = bcs_us_to_ticks(c->schedules[i].slot_us);
    guard_ticks = bcs_us_to_ticks(bcs->max_offset_us);
    byte_ticks = bcs_us_to_ticks(MAC_BYTE_US);
    turnaround_ticks = bcs_us_to_ticks(MAC_TURNAROUND_US);
    cfg = c;
    return RB_OK;
}

/* --- Slots --------------------------------------------------------------------------- */

/* The first own slot from `from` on, or n_slots. */
static uint8_t own_from(uint8_t from)
{
    while (from < sched->n_slots && sched->owners[from] != cfg->node_id)
        from++;
    return from;
}

static tern_time slot_start(uint8_t k) { return run->t1 + (uint32_t)k * slot_ticks; }

/* Arm the timer for the next own slot after `from`, or go idle keeping
 * nothing reserved. */
static void arm_from(uint8_t from)
{
    slot = own_from(from);
    if (slot >= sched->n_slots) {
        if (cur)
            mux_release(cur);
        cur = NULL;
        state = RB_IDLE;
        return;
    }
    state = RB_WAIT;
    bcs_timer_set(BCS_TIMER_MAC, slot_start(slot));
}

/* The first own slot is armed here, at t0, not at the hand-over: its
 * timer then does not wait for the BCS's t1 handler, which runs late
 * (docs/bips.md, "BCS event delays"). Slots start at t1 all the same. */
static void rb_configure(const bcs_run *r, mux_entry *first)
{
    run = r;
    sched = cfg ? find(cfg, r->region->id) : NULL;
    cur = first;
    state = RB_IDLE;
    if (!sched) { /* cannot happen after rb_init; give the frame back */
        if (cur)
            mux_release(cur);
        cur = NULL;
        return;
    }
    slot_ticks = slot_ticks_of[sched - cfg->schedules];
    arm_from(0);
}

static void rb_start(void) {}

static void rb_timer(void)
{
    if (state != RB_WAIT)
        return;
    uint32_t now = port_counter_read();
    uint32_t delay = now - (uint32_t)slot_start(slot);
    if ((int32_t)delay > 0 && delay > counters.max_delay)
        counters.max_delay = delay > 0xFFFF ? 0xFFFF : (uint16_t)delay;
    counters.slots_own++;
    if (!cur)
        cur = mux_pick(run->region->id);
    if (!cur) {
        counters.empty++;
        arm_from((uint8_t)(slot + 1));
        return;
    }
    if (cur->len > sched->max_len) {
        counters.too_long++;
        mux_done(cur, false, 0);
        cur = NULL;
        arm_from((uint8_t)(slot + 1));
        return;
    }
    /* The frame must end inside the slot less its d_maxOffset guard. */
    uint32_t air = turnaround_ticks + (MAC_SHR_PHR_BYTES + cur->len + MAC_FCS_BYTES) * byte_ticks;
    /* 32-bit deltas: port_counter_read is the low half of tern_now's clock
     * without its 64-bit assembly (tens of cycles less). */
    uint32_t end = now + air;
    if ((int32_t)(end - (uint32_t)(slot_start(slot) + slot_ticks - guard_ticks)) > 0 ||
        (int32_t)(end - (uint32_t)run->t2) > 0) {
        counters.late++;
        arm_from((uint8_t)(slot + 1)); /* keeps cur for the next own slot */
        return;
    }
    if (cc2420_send(cur->mpdu, cur->len, false) != CC2420_OK) {
        counters.tx_failed++;
        mux_done(cur, false, 0);
        cur = NULL;
        arm_from((uint8_t)(slot + 1));
        return;
    }
    state = RB_TX;
}

static void rb_tx_done(const cc2420_tx_result *r)
{
    if (state != RB_TX || !cur)
        return;
    mac_frame_done(&cur, r, &counters.sent, &counters.tx_failed);
    arm_from((uint8_t)(slot + 1));
}

static void rb_stop(void)
{
    mac_region_stop(&cur, state == RB_TX, &counters.overrun);
    state = RB_IDLE;
}

static void rb_rx(cc2420_rx_frame *f)
{
    counters.rx++;
    mux_rx(f, run->region->id);
}

const bcs_mac mac_rb = {
    .name = "RB",
    .configure = rb_configure,
    .start = rb_start,
    .stop = rb_stop,
    .tx_done = rb_tx_done,
    .rx = rb_rx,
    .timer = rb_timer,
};

const char *rb_status_name(rb_status s)
{
    static const char *const names[RB_STATUS_COUNT] = {
        [RB_OK] = "RB_OK",
        [RB_EINVAL] = "RB_EINVAL",
        [RB_ENOSCHEDULE] = "RB_ENOSCHEDULE",
        [RB_ENOREGION] = "RB_ENOREGION",
        [RB_EDUPLICATE] = "RB_EDUPLICATE",
        [RB_ESLOT_SHORT] = "RB_ESLOT_SHORT",
        [RB_EREGION_SHORT] = "RB_EREGION_SHORT",
    };
    return (unsigned)s < RB_STATUS_COUNT ? names[s] : "RB_E?";
}
