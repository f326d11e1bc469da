/* BBS over three hops (docs/bips.md, docs/sim/bips_bbs.toml): a line of
 * MicaZ nodes, node 0 the master, each hearing only its neighbours. Every
 * node runs the same schedule -- macro slots of 1 s opening with a 6 ms
 * sync phase of three BBS rounds, and two (empty) CB regions, one 20 ms
 * into the macro slot and one 900 ms into it -- so the region pin PC0
 * shows each node's idea of the macro slot: its rising edges, compared
 * with the master's, are the synchronization offset, early in the macro
 * slot and after 0.9 s of drift. At END_MS every node prints its BBS
 * counters and exits. */
#include "bcs.h"
#include "cc2420.h"
#include "mac_cb.h"
#include "sync_bbs.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#define END_MS 29500
#define ACQUIRE_MS 20000
#define PAN_ID 0x22

static const bcs_region slot0[] = {
    {.id = 0, .protocol = BCS_MAC_CB, .start_us = 20000, .len_us = 5000},
    {.id = 1, .protocol = BCS_MAC_CB, .start_us = 900000, .len_us = 5000},
};
static const bcs_macro_slot slots[] = {{.regions = slot0, .n_regions = 2}};
/* d_maxOffset: seed 004's figure for BBS over three hops. */
static const bcs_config schedule = {
    .macro_slot_us = 1000000, .sync_us = 6000, .max_offset_us = 338, .slots = slots, .n_slots = 1,
};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_CB] = &mac_cb};
static const cb_config cb = {.cw_min = {8, 8, 8, 8}, .cw_max = 32, .max_backoffs = 4, .seed = 1};

/* Three rounds of 1.5 ms from 1 ms into the phase; bursts of 128, 256
 * and 384 us say the round. */
static const bbs_config bbs = {
    .n_rounds = 3, .lead_us = 1000, .round_us = 1500, .burst_us = 128, .step_us = 128, .window_us = 150,
};

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static void fail(const char *what, const char *code, const char *text)
{
    tern_printf("bips_bbs: %s: %s: %s\n", what, code, text);
    port_exit(2);
}

static void start(void)
{
    uint16_t id = tern_sim_node_id();
    tern_printf("bips_bbs node=%u model=%s\n", id, tern_model_name);
    const cc2420_config rc = {
        .channel = tern_sim_channel(),
        .pan_id = PAN_ID, .short_addr = id, .rx_task = TERN_NO_TASK, .tx_task = TERN_NO_TASK,
        .rx_isr = bcs_radio_rx, .tx_isr = bcs_radio_tx_done,
    };
    cc2420_status st = cc2420_init(&rc);
    if (st != CC2420_OK)
        fail("cc2420_init", cc2420_status_name(st), "");
    cb_init(&cb);
    bbs_error se;
    if (sync_bbs_init(&bbs, &schedule, id == 0, &se) != BBS_OK)
        fail("bbs", bbs_status_name(se.code), se.text);
    bcs_error be;
    if (bcs_start(&schedule, macs, &sync_bbs, id == 0, 5000, &be) != BCS_OK)
        fail("bcs", bcs_status_name(be.code), be.text);
    if (id != 0) {
        bbs_status a = sync_bbs_acquire(ACQUIRE_MS);
        if (a != BBS_OK)
            fail("acquire", bbs_status_name(a), "");
        tern_printf("acquired hop=%u at_ms=%lu\n", sync_bbs_stats()->hop,
                    (unsigned long)(tern_now() / ms(1)));
    }
}

static tern_status node_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        start();
        tern_timer_start(0, ms(END_MS) - tern_now(), 0);
    } else if (m->port == TERN_PORT_TIMEOUT(0)) {
        const sync_bbs_counters *s = sync_bbs_stats();
        const bcs_counters *b = bcs_stats();
        tern_printf("stats bbs hop=%u sent=%u send_failed=%u heard=%u missed=%u bad_code=%u "
                    "mid_phase=%u late_send=%u max_corr=%lu\n",
                    s->hop, s->sent, s->send_failed, s->heard, s->missed, s->bad_code, s->mid_phase,
                    s->late_send, (unsigned long)s->max_corr);
        tern_printf("stats bcs slots=%u regions=%u resyncs=%u late_events=%u stack=%lu\n", b->slots_run,
                    b->regions_run, b->resyncs, b->late_events, (unsigned long)port_stack_used());
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "node", .id = 0, .priority = 1, .handler = node_task},
    };
    static const tern_app_desc app = {.name = "bips_bbs", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
