/* net/mux.c on the host, with the kernel's host port: TX TO order (FIFO,
 * EDF, priority across TOs, region binding), the length limit and a full
 * TO (named errors and counters), retransmissions, confirmations to the
 * task that enqueued (and none when not wanted), giving a frame back
 * (not a try), and RX TOs: delivery to every destination, and every
 * frame that is not delivered counted by reason, its block freed.
 *
 * Two tasks, `a` and `b`, enqueue from their handlers (mux_send records
 * the sender); the test plays the MAC protocol (mux_pick, mux_done,
 * mux_release) as the BCS would at interrupt level. */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "mux.h"
#include "tern/mem.h"

enum { TASK_A = 0, TASK_B = 1 };
#define PORT_RUN TERN_PORT_APP(0)  /* run `todo` in the task */
#define PORT_CONF TERN_PORT_APP(1) /* confirmations */
#define PORT_RX TERN_PORT_APP(2)   /* received frames */
#define PAN 0x22
#define ME 5

/* The BCS's regions: ids 0 and 1 (mux_start checks that TOs bind to these). */
static const bcs_region regions[] = {
    {.id = 0, .protocol = BCS_MAC_CB, .start_us = 10000, .len_us = 10000},
    {.id = 1, .protocol = BCS_MAC_CB, .start_us = 30000, .len_us = 10000},
};
static const bcs_macro_slot slots[] = {{regions, 2}};
static const bcs_config bcs = {.macro_slot_us = 100000, .sync_us = 3000, .max_offset_us = 100,
                               .slots = slots, .n_slots = 1};

enum { TO_F = 1, TO_E = 2, TO_H = 3 };
MUX_TX_STORAGE(fifo, 3, 4);
MUX_TX_STORAGE(edf, 6, 4);
MUX_TX_STORAGE(high, 2, 4);
static const mux_tx_desc tx[] = {
    {.id = TO_F, .priority = 0, .order = MUX_FIFO, .depth = 3, .max_len = 4, .retries = 2,
     .regions = 1u << 0 | 1u << 1, .entries = fifo_entries, .bytes = fifo_bytes},
    {.id = TO_E, .priority = 1, .order = MUX_EDF, .depth = 6, .max_len = 4, .retries = 0,
     .regions = 1u << 0, .entries = edf_entries, .bytes = edf_bytes},
    {.id = TO_H, .priority = 2, .order = MUX_FIFO, .depth = 2, .max_len = 4, .retries = 0,
     .regions = 1u << 1, .entries = high_entries, .bytes = high_bytes},
};
static const tern_endpoint dests[] = {{TASK_A, PORT_RX}, {TASK_B, PORT_RX}};
static const mux_rx_desc rx[] = {{.id = 1, .regions = 1u << 0, .n_dests = 2, .dests = dests}};
static const mux_config mux = {.pan_id = PAN, .short_addr = ME, .tx = tx, .n_tx = 3, .rx = rx, .n_rx = 1};

/* --- Tasks ------------------------------------------------------------------------------------ */

static void (*todo)(void);

static tern_status handler(void *state, tern_msg *m)
{
    (void)state;
    char who = tern_self() == TASK_A ? 'a' : 'b';
    if (m->port == PORT_RUN) {
        todo();
    } else if (m->port == PORT_CONF) {
        const mux_confirm *c = m->payload;
        log_text("C%c:%u:%s:%u", who, c->tag, mux_status_name((mux_status)c->status), c->tries);
    } else if (m->port == PORT_RX) {
        const cc2420_rx_frame *f = m->payload;
        uint8_t len;
        const uint8_t *p = mux_frame_payload(f, &len);
        log_text("R%c:%u:%u:%02x", who, mux_frame_src(f), len, p[0]);
    }
    return TERN_OK;
}

/* Run fn in task `task`'s handler, then let the kernel deliver what follows. */
static void in_task(tern_task_id task, void (*fn)(void))
{
    todo = fn;
    inject_post(host_time() + 1, task);
    host_run_until(host_time() + 10);
}

/* Let posted confirmations reach their tasks. */
static void settle(void) { host_run_until(host_time() + 10); }

static mux_status send(uint8_t to, uint8_t len, tern_time deadline, uint16_t tag)
{
    static const uint8_t payload[8] = {0xA0, 1, 2, 3, 4, 5, 6, 7};
    return mux_send(to, MUX_BROADCAST, payload, len, deadline, tag, PORT_CONF);
}

static int group_setup(void **state)
{
    (void)state;
    static const tern_task_desc tasks[] = {
        {.name = "a", .id = TASK_A, .priority = 1, .handler = handler, .n_in_ports = 3},
        {.name = "b", .id = TASK_B, .priority = 1, .handler = handler, .n_in_ports = 3},
    };
    static const tern_app_desc app = {.name = "mux", .tasks = tasks, .n_tasks = 2};
    start_app(&app, 0);
    mux_error e;
    if (mux_start(&mux, &bcs, &e) != MUX_OK) {
        fprintf(stderr, "mux_start: %s\n", e.text);
        return -1;
    }
    return 0;
}

static size_t log_mark;
/* What was logged since the last call. */
static const char *logged(void)
{
    const char *s = log_get() + log_mark;
    log_mark = strlen(log_get());
    return *s == ' ' ? s + 1 : s;
}

/* --- Configuration ------------------------------------------------------------------------------ */

static void test_configuration_refusals(void **state)
{
    (void)state;
    mux_error e;
    assert_int_equal(mux_start(&mux, &bcs, &e), MUX_ESTATE); /* started in the setup */
    assert_non_null(strstr(e.text, "already started"));
    assert_string_equal(mux_status_name(MUX_ETOOLONG), "MUX_ETOOLONG");
    assert_string_equal(mux_status_name(MUX_STATUS_COUNT), "MUX_E?");
}

/* --- Sending ------------------------------------------------------------------------------------ */

static mux_status st[8];

static void fifo_sends(void)
{
    st[0] = send(TO_F, 4, 0, 1);
    st[1] = send(TO_F, 2, 0, 2);
    st[2] = send(TO_F, 1, 0, 3);
    st[3] = send(TO_F, 1, 0, 4); /* a fourth: depth 3 */
    st[4] = send(TO_F, 5, 0, 5); /* max_len 4 */
    st[5] = send(9, 1, 0, 6);    /* no such TO */
    st[6] = send(TO_F, 0, 0, 7);
}

static void test_fifo_order_limits_and_confirmation(void **state)
{
    (void)state;
    in_task(TASK_A, fifo_sends);
    assert_int_equal(st[0], MUX_OK);
    assert_int_equal(st[1], MUX_OK);
    assert_int_equal(st[2], MUX_OK);
    assert_int_equal(st[3], MUX_EFULL);
    assert_int_equal(st[4], MUX_ETOOLONG);
    assert_int_equal(st[5], MUX_ENOTO);
    assert_int_equal(st[6], MUX_EINVAL);
    const mux_tx_counters *c = mux_tx_stats(0);
    assert_int_equal(c->enqueued, 3);
    assert_int_equal(c->full, 1);
    assert_int_equal(c->too_long, 1);

    mux_entry *e = mux_pick(0);
    assert_non_null(e);
    assert_int_equal(e->tag, 1);
    /* the frame: data, short addresses, PAN compression; sequence; PAN; to; from; payload */
    static const uint8_t hdr[] = {0x41, 0x88, 0, PAN, 0, 0xFF, 0xFF, ME, 0, 0xA0, 1, 2, 3};
    assert_int_equal(e->len, MUX_HDR_LEN + 4);
    assert_memory_equal(e->mpdu, hdr, 2);
    assert_memory_equal(e->mpdu + 3, hdr + 3, sizeof hdr - 3); /* [2]: the sequence number */
    assert_null(mux_pick(0)); /* its head is out, the other TOs are empty */
    mux_done(e, true, 1234);
    for (uint16_t tag = 2; tag <= 3; tag++) {
        e = mux_pick(1);
        assert_int_equal(e->tag, tag);
        assert_int_equal(e->len, MUX_HDR_LEN + (tag == 2 ? 2 : 1));
        mux_done(e, true, 1234);
    }
    assert_null(mux_pick(0));
    settle();
    assert_string_equal(logged(), "Ca:1:MUX_OK:1 Ca:2:MUX_OK:1 Ca:3:MUX_OK:1");
    assert_int_equal(c->sent, 3);
}

static tern_time t_now;

static void edf_sends(void)
{
    t_now = tern_now();
    st[0] = send(TO_E, 1, t_now + 5000, 10);
    st[1] = send(TO_E, 1, t_now + 3000, 11);
    st[2] = send(TO_E, 1, 0, 12); /* no deadline: last */
    st[3] = send(TO_E, 1, t_now + 4000, 13);
}

static void edf_earlier(void) { st[4] = send(TO_E, 1, t_now + 1000, 14); }

static void edf_late(void)
{
    st[5] = send(TO_E, 1, tern_now() + 10, 15);
    st[6] = send(TO_E, 1, tern_now() + 100000, 16);
}

static void test_edf_order_and_late_frames(void **state)
{
    (void)state;
    in_task(TASK_B, edf_sends);
    mux_entry *e = mux_pick(0);
    assert_int_equal(e->tag, 11);
    /* an earlier deadline goes ahead of all but the head that is out */
    in_task(TASK_B, edf_earlier);
    assert_int_equal(st[4], MUX_OK);
    mux_done(e, true, 1);
    static const uint16_t order[] = {14, 13, 10, 12};
    for (unsigned i = 0; i < 4; i++) {
        e = mux_pick(0);
        assert_int_equal(e->tag, order[i]);
        mux_done(e, true, 1);
    }
    settle();
    assert_string_equal(logged(), "Cb:11:MUX_OK:1 Cb:14:MUX_OK:1 Cb:13:MUX_OK:1 Cb:10:MUX_OK:1 Cb:12:MUX_OK:1");
    /* a head whose deadline passed is confirmed late at the next pick */
    in_task(TASK_B, edf_late);
    host_run_until(host_time() + 50);
    e = mux_pick(0);
    assert_int_equal(e->tag, 16);
    mux_done(e, true, 1);
    settle();
    assert_string_equal(logged(), "Cb:15:MUX_ELATE:0 Cb:16:MUX_OK:1");
    assert_int_equal(mux_tx_stats(1)->late, 1);
}

static void prio_a(void)
{
    st[0] = send(TO_F, 1, 0, 20);
    st[2] = send(TO_H, 1, 0, 22);
}
static void prio_b(void) { st[1] = send(TO_E, 1, 0, 21); }

static void test_priority_across_tos_and_regions(void **state)
{
    (void)state;
    in_task(TASK_A, prio_a);
    in_task(TASK_B, prio_b);
    mux_entry *e21 = mux_pick(0); /* E (1) over F (0); H is not bound to region 0 */
    assert_int_equal(e21->tag, 21);
    mux_entry *e20 = mux_pick(0); /* E's head is out: the next best */
    assert_int_equal(e20->tag, 20);
    mux_entry *e22 = mux_pick(1); /* H (2); E is not bound to region 1, F's head is out */
    assert_int_equal(e22->tag, 22);
    mux_release(e20); /* not tried: back, and no try counted */
    assert_int_equal(e20->tries, 0);
    assert_ptr_equal(mux_pick(1), e20);
    mux_done(e22, true, 1);
    mux_done(e20, true, 1);
    mux_done(e21, true, 1);
    settle();
    assert_string_equal(logged(), "Ca:22:MUX_OK:1 Ca:20:MUX_OK:1 Cb:21:MUX_OK:1");
}

static void retry_sends(void)
{
    st[0] = send(TO_F, 1, 0, 30);
    st[1] = send(TO_F, 1, 0, 31);
    st[2] = send(TO_E, 1, 0, 32);
    st[3] = mux_send(TO_F, MUX_BROADCAST, "x", 1, 0, 33, MUX_NO_CONFIRM);
}

static void test_retransmissions_then_failure(void **state)
{
    (void)state;
    const mux_tx_counters *f = mux_tx_stats(0);
    uint16_t retries0 = f->retries, sent0 = f->sent;
    in_task(TASK_A, retry_sends);
    for (unsigned k = 1; k <= 3; k++) { /* retries = 2: three tries in all */
        mux_entry *e = mux_pick(1);
        assert_int_equal(e->tag, 30);
        assert_int_equal(e->tries, k - 1);
        mux_done(e, false, 0);
    }
    mux_entry *e = mux_pick(1);
    assert_int_equal(e->tag, 31);
    mux_done(e, false, 0);
    assert_ptr_equal(mux_pick(1), e); /* the retransmission: the same frame, still the head */
    mux_done(e, true, 1);
    e = mux_pick(0); /* E (retries 0) first: one failed try is final */
    assert_int_equal(e->tag, 32);
    mux_done(e, false, 0);
    e = mux_pick(0);
    assert_int_equal(e->tag, 33);
    mux_done(e, true, 1);
    assert_null(mux_pick(0));
    settle();
    assert_string_equal(logged(), "Ca:30:MUX_EFAILED:3 Ca:31:MUX_OK:2 Ca:32:MUX_EFAILED:1"); /* 33: none wanted */
    assert_int_equal(f->retries - retries0, 3);
    assert_int_equal(f->failed, 1);
    assert_int_equal(f->sent - sent0, 2);
    assert_int_equal(mux_tx_stats(1)->failed, 1);
}

/* --- Receiving ---------------------------------------------------------------------------------- */

static cc2420_rx_frame *frame(uint16_t fcf, uint16_t pan, uint16_t dst, uint8_t len)
{
    cc2420_rx_frame *f = tern_alloc(sizeof *f + len);
    assert_non_null(f);
    memset(f, 0, sizeof *f + len);
    uint8_t h[] = {(uint8_t)fcf, (uint8_t)(fcf >> 8), 7, (uint8_t)pan, (uint8_t)(pan >> 8),
                   (uint8_t)dst, (uint8_t)(dst >> 8), 3, 0, 0xB1};
    memcpy(f->data, h, len < sizeof h ? len : sizeof h);
    f->len = len;
    return f;
}

static void test_rx_delivery_and_drops_by_reason(void **state)
{
    (void)state;
    size_t free0 = tern_heap_free_bytes();
    mux_rx(frame(0x8841, PAN, MUX_BROADCAST, MUX_HDR_LEN + 1), 0); /* to both tasks */
    mux_rx(frame(0x8841, PAN, ME, MUX_HDR_LEN + 1), 0);            /* to us: both */
    mux_rx(frame(0x8841, PAN, MUX_BROADCAST, MUX_HDR_LEN - 1), 0); /* header cut short */
    mux_rx(frame(0x8842, PAN, MUX_BROADCAST, MUX_HDR_LEN + 1), 0); /* an acknowledgement */
    mux_rx(frame(0x8841, PAN + 1, MUX_BROADCAST, MUX_HDR_LEN + 1), 0); /* another PAN */
    mux_rx(frame(0x8841, PAN, ME + 1, MUX_HDR_LEN + 1), 0);           /* another node */
    mux_rx(frame(0x8841, PAN, MUX_BROADCAST, MUX_HDR_LEN + 1), 1);    /* no RX TO in region 1 */
    settle();
    assert_string_equal(logged(), "Ra:3:1:b1 Rb:3:1:b1 Ra:3:1:b1 Rb:3:1:b1");
    const mux_counters *m = mux_stats();
    assert_int_equal(m->rx_malformed, 2);
    assert_int_equal(m->rx_foreign, 2);
    assert_int_equal(m->rx_no_to, 1);
    assert_int_equal(mux_rx_stats(0)->delivered, 4);
    assert_int_equal(tern_heap_free_bytes(), free0); /* every block freed, copies included */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configuration_refusals),
        cmocka_unit_test(test_fifo_order_limits_and_confirmation),
        cmocka_unit_test(test_edf_order_and_late_frames),
        cmocka_unit_test(test_priority_across_tos_and_regions),
        cmocka_unit_test(test_retransmissions_then_failure),
        cmocka_unit_test(test_rx_delivery_and_drops_by_reason),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
