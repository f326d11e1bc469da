/* Synchronization offset over many macro slots (issue 11, experiment 3;
 * `tern bench bips sync`, docs/bips.md): apps/bips_bbs's schedule -- 1 s
 * macro slots, two empty CB regions 20 ms and 900 ms into each -- run for
 * a given number of macro slots under beacon sync (one hop) or BBS (a
 * line of hops). The region pin PC0 of every node, against the master's,
 * is the offset.
 *
 * Parameters (.tern_params): word 0 = macro slots after start-up (default
 * 100), word 1 = 0 beacons, 1 BBS. Output: "SYNC node=<id> proto=<p>
 * slots=<n> regions=<n> resyncs=<n> late_events=<n>" at the end. */
#include "bcs.h"
#include "cc2420.h"
#include "mac_cb.h"
#include "sync_bbs.h"
#include "sync_beacon.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"
#include "tern_simavr_abi.h"

TERN_PARAMS_DEFAULTS(100, 0);

#define PAN_ID 0x22
#define START_MS 3000 /* BBS: the third hop acquires at ~2 s */

static const bcs_region slot0[] = {
    {.id = 0, .protocol = BCS_MAC_CB, .start_us = 20000, .len_us = 5000},
    {.id = 1, .protocol = BCS_MAC_CB, .start_us = 900000, .len_us = 5000},
};
static const bcs_macro_slot slots[] = {{.regions = slot0, .n_regions = 2}};
/* d_maxOffset: seed 004's figures, 100 us for beacons, 338 us for BBS */
static const bcs_config beacon_schedule = {
    .macro_slot_us = 1000000, .sync_us = 3000, .max_offset_us = 100, .slots = slots, .n_slots = 1,
};
static const bcs_config bbs_schedule = {
    .macro_slot_us = 1000000, .sync_us = 6000, .max_offset_us = 338, .slots = slots, .n_slots = 1,
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_CB] = &mac_cb};
static const cb_config cb = {.cw_min = {8, 8, 8, 8}, .cw_max = 32, .max_backoffs = 4, .seed = 1};
static const bbs_config bbs = {
    .n_rounds = 3, .lead_us = 1000, .round_us = 1500, .burst_us = 128, .step_us = 128, .window_us = 150,
};

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static void fail(const char *what, const char *code, const char *text)
{
    tern_printf("bips_sync: %s: %s: %s\n", what, code, text);
    port_exit(2);
}

static void start(uint16_t id, bool use_bbs)
{
    const cc2420_config rc = {
        .channel = tern_sim_channel(), .pan_id = PAN_ID, .short_addr = id,
        .rx_task = TERN_NO_TASK, .tx_task = TERN_NO_TASK,
        .rx_isr = bcs_radio_rx, .tx_isr = bcs_radio_tx_done,
    };
    cc2420_status st = cc2420_init(&rc);
    if (st != CC2420_OK)
        fail("cc2420_init", cc2420_status_name(st), "");
    cb_init(&cb);
    const bcs_config *schedule = use_bbs ? &bbs_schedule : &beacon_schedule;
    const bcs_sync *proto = &sync_beacon;
    if (use_bbs) {
        bbs_error se;
        if (sync_bbs_init(&bbs, schedule, id == 0, &se) != BBS_OK)
            fail("bbs", bbs_status_name(se.code), se.text);
        proto = &sync_bbs;
    } else {
        sync_beacon_init(id == 0, PAN_ID, id);
    }
    bcs_error be;
    if (bcs_start(schedule, macs, proto, id == 0, 5000, &be) != BCS_OK)
        fail("bcs", bcs_status_name(be.code), be.text);
    if (use_bbs && id != 0) {
        bbs_status a = sync_bbs_acquire(START_MS);
        if (a != BBS_OK)
            fail("acquire", bbs_status_name(a), "");
    }
}

static tern_status node_task(void *state, tern_msg *m)
{
    (void)state;
    uint16_t id = tern_sim_node_id();
    bool use_bbs = tern_params[1] != 0;
    if (m->port == TERN_PORT_INIT) {
        start(id, use_bbs);
        tern_timer_start(0, ms(START_MS + 1000u * tern_params[0] + 500u) - tern_now(), 0);
    } else if (m->port == TERN_PORT_TIMEOUT(0)) {
        const bcs_counters *b = bcs_stats();
        tern_printf("SYNC node=%u proto=%s slots=%u regions=%u resyncs=%u late_events=%u\n", id,
                    use_bbs ? "bbs" : "beacon", b->slots_run, b->regions_run, b->resyncs, b->late_events);
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "node", .id = 0, .priority = 1, .handler = node_task},
    };
    static const tern_app_desc app = {.name = "bips_sync", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
