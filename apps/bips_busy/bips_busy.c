/* The BCS preempts a long handler, whatever the execution model (issue 11,
 * docs/bips.md): one MicaZ node, its own BCS master (no sync protocol),
 * 100 ms macro slots with CB regions 10..30 ms and 50..70 ms. Its one task
 * works 50 ms without a break (port_work: a busy loop, interrupts enabled)
 * from 5 ms into every other macro slot, with PC1 high meanwhile, so that
 * region 0's t0, t1, t2 and region 1's t0, t1 come while it works and the
 * next macro slot's come while the CPU idles. Before working it enqueues
 * one frame, which CB sends in region 0, inside the handler's 50 ms.
 * The region pin PC0 (t0..t2) and PC1 go to the logic analyser
 * (docs/sim/bips_busy.toml); tests/sim/test_bips_busy.py compares them.
 * At BUSY_END_MS it prints its counters and exits:
 *   busy model=fifo n=6 enq=6 conf_ok=6
 *   stats bcs_delay start=... (bcs_counters.max_delay, ticks) */
#include <avr/io.h>

#include "bcs.h"
#include "cc2420.h"
#include "mac_cb.h"
#include "mux.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#define LEAD_US 5000u      /* the first macro slot starts this long after bcs_start */
#define WORK_FROM_US 5000u /* into the macro slot */
#define WORK_MS 50ul
#define BUSY_END_MS 1260ul
#define PAN_ID 0x23

#define PORT_CONF TERN_PORT_APP(0)
#define TIMER_WORK 0
#define TIMER_END 1

static const bcs_region regions[] = {
    {.id = 0, .protocol = BCS_MAC_CB, .start_us = 10000, .len_us = 20000},
    {.id = 1, .protocol = BCS_MAC_CB, .start_us = 50000, .len_us = 20000},
};
static const bcs_macro_slot slots[] = {{.regions = regions, .n_regions = 2}};
static const bcs_config schedule = {
    .macro_slot_us = 100000, .sync_us = 3000, .max_offset_us = 100, .slots = slots, .n_slots = 1};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_CB] = &mac_cb};
static cb_config cb = {.cw_min = {4, 4, 4, 4}, .cw_max = 8, .max_backoffs = 4};

MUX_TX_STORAGE(to_data, 2, 4);
static const mux_tx_desc tx_tos[] = {
    {.id = 1, .priority = 0, .order = MUX_FIFO, .depth = 2, .max_len = 4, .retries = 0,
     .regions = 1u << 0, .entries = to_data_entries, .bytes = to_data_bytes},
};
static mux_config mux = {.pan_id = PAN_ID, .tx = tx_tos, .n_tx = 1};

static uint16_t n_work, n_enq, n_ok;

static uint32_t us(uint32_t n) { return (uint32_t)((uint64_t)tern_clock_hz() * n / 1000000u); }

static void fail(const char *what, const char *why)
{
    tern_printf("bips_busy: %s: %s\n", what, why);
    port_exit(2);
}

static void start(void)
{
    uint16_t id = tern_sim_node_id();
    const cc2420_config rc = {.channel = tern_sim_channel(), .pan_id = PAN_ID, .short_addr = id,
                              .rx_task = TERN_NO_TASK, .tx_task = TERN_NO_TASK,
                              .rx_isr = bcs_radio_rx, .tx_isr = bcs_radio_tx_done};
    cc2420_status cs = cc2420_init(&rc);
    if (cs != CC2420_OK)
        fail("cc2420_init", cc2420_status_name(cs));
    mux.short_addr = id;
    mux_error me;
    if (mux_start(&mux, &schedule, &me) != MUX_OK)
        fail("mux", me.text);
    cb.seed = (uint16_t)(0x2B17u + id);
    cb_init(&cb);
    DDRC |= _BV(PC1);
    bcs_error be;
    if (bcs_start(&schedule, macs, NULL, true, LEAD_US, &be) != BCS_OK)
        fail("bcs", be.text);
    tern_timer_start(TIMER_WORK, us(LEAD_US + WORK_FROM_US), us(2 * 100000u));
    tern_timer_start(TIMER_END, us(BUSY_END_MS * 1000u), 0);
}

static void work(void)
{
    static const uint8_t p[4] = {1, 2, 3, 4};
    if (mux_send(1, MUX_BROADCAST, p, sizeof p, 0, n_work, PORT_CONF) == MUX_OK)
        n_enq++;
    PORTC |= _BV(PC1);
    port_work(us(WORK_MS * 1000u));
    PORTC &= (uint8_t)~_BV(PC1);
    n_work++;
}

static void report(void)
{
    const bcs_counters *b = bcs_stats();
    tern_printf("busy model=%s n=%u enq=%u conf_ok=%u\n", tern_model_name, n_work, n_enq, n_ok);
    tern_printf("stats bcs regions=%u late_events=%u stack=%lu\n", b->regions_run, b->late_events,
                (unsigned long)port_stack_used());
    tern_printf("stats bcs_delay wake=%u rxon=%u start=%u handover=%u stop=%u end=%u\n",
                b->max_delay[0], b->max_delay[1], b->max_delay[2], b->max_delay[3], b->max_delay[4],
                b->max_delay[5]);
    port_exit(0);
}

static tern_status worker(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT:
        start();
        break;
    case TERN_PORT_TIMEOUT(TIMER_WORK):
        work();
        break;
    case TERN_PORT_TIMEOUT(TIMER_END):
        report();
        break;
    case PORT_CONF:
        if (((const mux_confirm *)m->payload)->status == MUX_OK)
            n_ok++;
        break;
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "worker", .id = 0, .priority = 1, .handler = worker, .n_in_ports = 1,
         .stack_size = 448}}; /* threads, adaptive: the pool holds ~700 bytes */
    static const tern_app_desc app = {.name = "bips_busy", .tasks = tasks, .n_tasks = 1};
    tern_app_error err;
    tern_init();
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("bips_busy: %s\n", err.text);
        return 1;
    }
    tern_run();
}
