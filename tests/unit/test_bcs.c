/* net/bcs.c on the host: every refusal of a configuration by name, and the
 * slot arithmetic of a running schedule -- each region's t0, t1 = t0 +
 * d_maxOffset, t2 = t3 - d_stop with d_stop = max(d_maxOffset, d_TX->RX =
 * 192 us), t3; the macro slots of a super slot one after another; the
 * radio off in long idle gaps and woken 1.3 ms / 0.4 ms before the next
 * activity. The BCS's hardware timer is a fake here: each armed channel
 * becomes an interrupt injected at exactly the armed time (the host clock:
 * 1 tick = 1 us), so every event must come at the time the arithmetic
 * says, not merely in the right order. A fake MAC logs what it is told. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcs.h"
#include "bcs_timer.h"
#include "fixture.h"
#include "mux.h"
#include "tern/port.h"

/* --- The fakes: timer, radio, multiplexer, one MAC ------------------------------------------ */

static bcs_timer_fn timer_fn[BCS_TIMER_CHANNELS];
static uint64_t armed_at[BCS_TIMER_CHANNELS];
static bool armed[BCS_TIMER_CHANNELS];
static bool radio_on = true;
static mux_entry offer; /* what mux_pick hands out for region id 1 */
static uint8_t last_pick = 0xFF;

void bcs_timer_init(bcs_timer_fn slot_fn, bcs_timer_fn mac_fn)
{
    timer_fn[BCS_TIMER_SLOT] = slot_fn;
    timer_fn[BCS_TIMER_MAC] = mac_fn;
}
void bcs_timer_set(uint8_t ch, tern_time at) { armed[ch] = true, armed_at[ch] = at; }
void bcs_timer_cancel(uint8_t ch) { armed[ch] = false; }
void bcs_timer_pin(bool high) { log_text("pin%d@%llu", high, (unsigned long long)tern_now()); }

cc2420_status cc2420_off(void)
{
    log_text("off@%llu", (unsigned long long)tern_now());
    radio_on = false;
    return CC2420_OK;
}
cc2420_status cc2420_on(void)
{
    log_text("on@%llu", (unsigned long long)tern_now());
    radio_on = true;
    return CC2420_OK;
}
bool cc2420_is_on(void) { return radio_on; }

mux_entry *mux_pick(uint8_t region_id)
{
    last_pick = region_id;
    return region_id == 1 ? &offer : NULL;
}

static bcs_run seen; /* the run of the last configure() */

static void mac_configure(const bcs_run *run, mux_entry *first)
{
    seen = *run;
    assert_true(run == bcs_current());
    assert_int_equal(tern_now(), run->t0);
    log_text("cfg%u%s@%llu", run->region->id, first ? "+" : "", (unsigned long long)tern_now());
}
static void mac_start(void) { log_text("start@%llu", (unsigned long long)tern_now()); }
static void mac_stop(void) { log_text("stop@%llu", (unsigned long long)tern_now()); }
static void mac_tx_done(const cc2420_tx_result *r) { (void)r; }
static void mac_rx(cc2420_rx_frame *f) { (void)f; }
static void mac_timer(void) {}

static const bcs_mac fake = {"fake", mac_configure, mac_start, mac_stop, mac_tx_done, mac_rx, mac_timer};
static const bcs_mac *const macs[BCS_MAC_COUNT] = {[BCS_MAC_CB] = &fake, [BCS_MAC_RB] = &fake};

static void fire(void *ch) { timer_fn[(uintptr_t)ch](); }

/* Run the BCS until `until`: the earliest armed channel fires at its time. */
static void run_bcs(uint64_t until)
{
    for (;;) {
        int ch = -1;
        for (int c = 0; c < BCS_TIMER_CHANNELS; c++)
            if (armed[c] && (ch < 0 || armed_at[c] < armed_at[ch]))
                ch = c;
        if (ch < 0 || armed_at[ch] > until)
            break;
        armed[ch] = false;
        assert_true(armed_at[ch] >= host_time()); /* never armed for the past */
        host_inject(armed_at[ch], fire, (void *)(uintptr_t)ch);
        host_run_until(armed_at[ch]);
        port_irq_restore(port_irq_save()); /* one due now (run_until stops short of it) */
    }
    host_run_until(until);
}

static void fresh_kernel(void)
{
    host_reset(0);
    tern_init();
    memset(armed, 0, sizeof armed);
    radio_on = true;
    last_pick = 0xFF;
}

/* --- Refusals --------------------------------------------------------------------------------- */

static bcs_region r0[3], r1[9];
static bcs_macro_slot ms[5];
static bcs_config cfg;

static void good_config(void)
{
    r0[0] = (bcs_region){.id = 0, .protocol = BCS_MAC_CB, .start_us = 10000, .len_us = 20000};
    r0[1] = (bcs_region){.id = 1, .protocol = BCS_MAC_RB, .start_us = 30000, .len_us = 5000};
    r1[0] = (bcs_region){.id = 2, .protocol = BCS_MAC_CB, .start_us = 60000, .len_us = 40000};
    ms[0] = (bcs_macro_slot){r0, 2};
    ms[1] = (bcs_macro_slot){r1, 1};
    cfg = (bcs_config){.macro_slot_us = 100000, .sync_us = 3000, .max_offset_us = 100, .slots = ms,
                       .n_slots = 2};
}

static void refused(bcs_status want, int slot, int region, const char *why)
{
    bcs_error e = {0};
    assert_int_equal(bcs_validate(&cfg, macs, &e), want);
    assert_int_equal(e.code, want);
    assert_int_equal(e.slot, slot);
    assert_int_equal(e.region, region);
    if (!strstr(e.text, why))
        fail_msg("\"%s\" does not say \"%s\"", e.text, why);
    good_config();
}

static void test_every_refusal_is_named(void **state)
{
    (void)state;
    good_config();
    assert_int_equal(bcs_validate(&cfg, macs, NULL), BCS_OK);
    cfg.n_slots = 0;
    refused(BCS_EINVAL, -1, -1, "no macro slots");
    cfg.n_slots = 5;
    refused(BCS_ETOO_MANY, -1, -1, "more than 4 macro slots");
    cfg.macro_slot_us = 0;
    refused(BCS_EINVAL, -1, -1, "macro_slot_us");
    cfg.sync_us = cfg.macro_slot_us;
    refused(BCS_EINVAL, -1, -1, "sync_us");
    cfg.max_offset_us = cfg.macro_slot_us / 2;
    refused(BCS_EINVAL, -1, -1, "max_offset_us");
    r1[0].id = BCS_REGION_IDS;
    refused(BCS_EINVAL, 1, 0, "macro slot 1 region 0: id not in 0..15");
    r0[1].protocol = BCS_MAC_ACTP; /* not registered in macs[] */
    refused(BCS_ENOPROTO, 0, 1, "protocol not registered");
    r0[0].len_us = 0;
    refused(BCS_EINVAL, 0, 0, "len_us is 0");
    r0[0].start_us = 2999;
    refused(BCS_EOVERLAP, 0, 0, "inside the sync phase");
    r1[0].len_us = 40001; /* 60 ms + 40.001 ms > 100 ms */
    refused(BCS_EPAST_SLOT, 1, 0, "ends after the macro slot");
    r0[1].start_us = 29999; /* the first region ends at 30 ms */
    refused(BCS_EOVERLAP, 0, 1, "overlaps an earlier region");
    /* d_maxOffset + d_stop = 100 + 192: a region of exactly that has no time to send */
    r0[1].len_us = 292;
    refused(BCS_ETOO_SHORT, 0, 1, "no time to send");
    r0[1].len_us = 293;
    assert_int_equal(bcs_validate(&cfg, macs, NULL), BCS_OK);
    /* nine regions in the super slot: one more than the RAM holds */
    for (int i = 0; i < 8; i++)
        r1[i] = (bcs_region){.id = 2, .protocol = BCS_MAC_CB, .start_us = 10000u + 10000u * (unsigned)i,
                             .len_us = 5000};
    ms[1].n_regions = 8;
    refused(BCS_ETOO_MANY, 1, -1, "more than 8 regions");
    assert_string_equal(bcs_status_name(BCS_ETOO_SHORT), "BCS_ETOO_SHORT");
    assert_string_equal(bcs_status_name(BCS_STATUS_COUNT), "BCS_E?");
}

/* d_stop = max(d_maxOffset, d_TX->RX): the CC2420's 192 us turnaround
 * until the sync protocol's offset is larger. */
static void test_d_stop_is_the_larger_guard(void **state)
{
    (void)state;
    good_config();
    assert_int_equal(bcs_d_stop_us(&cfg), 192);
    cfg.max_offset_us = 192;
    assert_int_equal(bcs_d_stop_us(&cfg), 192);
    cfg.max_offset_us = 338; /* BBS over three hops (seed 004) */
    assert_int_equal(bcs_d_stop_us(&cfg), 338);
    /* and the shortest region follows it: d_maxOffset + d_stop = 676 */
    r0[1].len_us = 676;
    assert_int_equal(bcs_validate(&cfg, macs, NULL), BCS_ETOO_SHORT);
    r0[1].len_us = 677;
    assert_int_equal(bcs_validate(&cfg, macs, NULL), BCS_OK);
}

/* --- The running schedule ------------------------------------------------------------------------ */

/* A master started at 0 with a lead of 5 ms: macro slot 0 from 5,000,
 * slot 1 from 105,000, slot 0 again from 205,000; sync phases of 3 ms.
 * With d_maxOffset 100 (d_stop = 192), region 0 of slot 0 is [15,000,
 * 35,000): pin and configure at t0, start at t1 = 15,100, stop and pin
 * down at t2 = 34,808; region 1 follows at once ([35,000, 40,000), no
 * radio-off between them). Every gap of 2.3 ms or more switches the radio
 * off at its start, wakes the crystal 1,300 us and the receiver 400 us
 * before the next activity; the sync phase at 205,000 follows region 2's
 * end at once and keeps it on. */
static void test_regions_run_at_t0_t1_t2_t3(void **state)
{
    (void)state;
    good_config(); /* region 1 at 30 ms: right after region 0 */
    fresh_kernel();
    log_text("|");
    assert_int_equal(bcs_start(&cfg, macs, NULL, true, 5000, NULL), BCS_OK);
    assert_true(bcs_synced());
    run_bcs(234900);
    assert_string_equal(
        log_get(),
        "| off@8000 on@13700 on@14600"
        " pin1@15000 cfg0@15000 start@15100 stop@34808 pin0@34808"
        " pin1@35000 cfg1+@35000 start@35100 stop@39808 pin0@39808"
        " off@40000 on@103700 on@104600"     /* slot 1's sync phase, 105,000..108,000 */
        " off@108000 on@163700 on@164600"
        " pin1@165000 cfg2@165000 start@165100 stop@204808 pin0@204808"
        " off@208000 on@213700 on@214600"     /* slot 0 again: sync phase 205,000..208,000 */
        " pin1@215000 cfg0@215000 start@215100 stop@234808 pin0@234808");
    assert_int_equal(last_pick, 0);
    assert_int_equal(seen.slot, 0);
    assert_int_equal(seen.t0, 215000);
    assert_int_equal(seen.t1, 215100);
    assert_int_equal(seen.t2, 234808);
    assert_int_equal(seen.t3, 235000);
    const bcs_counters *c = bcs_stats();
    assert_int_equal(c->regions_run, 4);
    assert_int_equal(c->slots_run, 3);
    assert_int_equal(c->radio_offs, 4);
    assert_int_equal(c->late_events, 0);
    assert_true(bcs_current() && bcs_current()->t0 == 215000); /* t2..t3: still the region's */
}

/* d_maxOffset above the turnaround: t1 = t0 + 300, t2 = t3 - 300. The BCS
 * starts once per process, so this schedule runs in a child, forked
 * before the parent starts its own. */
static void test_a_larger_offset_moves_t1_and_t2(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        good_config();
        cfg.max_offset_us = 300;
        fresh_kernel();
        log_text("|");
        bool ok = bcs_start(&cfg, macs, NULL, true, 0, NULL) == BCS_OK;
        run_bcs(34900);
        const char *want = "| off@3000 on@8700 on@9600 pin1@10000 cfg0@10000 start@10300"
                           " stop@29700 pin0@29700 pin1@30000 cfg1+@30000 start@30300 stop@34700 pin0@34700";
        ok = ok && strcmp(log_get(), want) == 0 && seen.t1 - seen.t0 == 300 && seen.t3 - seen.t2 == 300;
        if (!ok)
            fprintf(stderr, "got  %s\nwant %s\n", log_get(), want);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_refusal_is_named),
        cmocka_unit_test(test_d_stop_is_the_larger_guard),
        cmocka_unit_test(test_a_larger_offset_moves_t1_and_t2), /* forks: before bcs_start here */
        cmocka_unit_test(test_regions_run_at_t0_t1_t2_t3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
