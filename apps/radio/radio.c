/* Radio ping-pong over the CC2420 (boards with a radio: micaz), for
 * tern-sim (docs/tern-sim.md). Each node reads its id and the channel from
 * the simulator (tern_simavr_abi.h); what it does depends on the id:
 *
 *   node 0  pinger: sends ping k (k = 1..RADIO_ROUNDS) to node 1 and sends
 *           the next when the answer to k arrives, or after RADIO_REPLY_MS
 *           without one (a timeout, counted); then prints a summary and
 *           exits 0.
 *   node 1  ponger: answers every ping with the same sequence number and
 *           payload; exits after answering ping RADIO_ROUNDS, or after
 *           RADIO_IDLE_MS without a ping.
 *   node 2+ beacon: broadcasts a frame of RADIO_BEACON_LEN bytes (MPDU,
 *           FCS excluded) every RADIO_BEACON_PERIOD_MS, RADIO_BEACON_COUNT
 *           times, the first 3 ms x id after RADIO_START_MS; with CCA, no
 *           retry (a busy channel is printed and counted); then exits 0.
 *           Tests use it for load, collisions, CCA.
 *
 * Frames are 802.15.4 data frames, PAN 0x22, PAN id compression, short
 * addresses = node ids. Every event is one line:
 *   tx seq=3 sfd=<ticks>              a frame went out (SFD time)
 *   rx seq=3 from=1 len=17 rssi=-45 lqi=107 sfd=<ticks>
 *   timeout seq=3 | tx seq=3 failed CC2420_E...
 * and the last line is the summary with the driver's counters.
 * -DRADIO_DEAF_MS=n (tests): the ponger masks interrupts for n ms once its
 * radio is up, as a long critical section would, so that frames arriving
 * meanwhile overflow the RX FIFO and the driver's recovery is exercised. Without a
 * radio (tern-simavr alone) cc2420_init fails by name and the node exits 2. */
#include <string.h>

#include "cc2420.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"

#ifndef RADIO_ROUNDS
#define RADIO_ROUNDS 10
#endif
#ifndef RADIO_PAYLOAD
#define RADIO_PAYLOAD 8 /* bytes of ping payload */
#endif
#ifndef RADIO_REPLY_MS
#define RADIO_REPLY_MS 30
#endif
#ifndef RADIO_IDLE_MS
#define RADIO_IDLE_MS 2000
#endif
#ifndef RADIO_START_MS
#define RADIO_START_MS 10 /* the pinger's first ping: node 1 is listening by then */
#endif
#ifndef RADIO_BEACON_LEN
#define RADIO_BEACON_LEN 20
#endif
#ifndef RADIO_BEACON_PERIOD_MS
#define RADIO_BEACON_PERIOD_MS 50
#endif
#ifndef RADIO_BEACON_COUNT
#define RADIO_BEACON_COUNT 20
#endif

#define PAN_ID 0x22
#define BROADCAST 0xFFFF

/* Frame control: data frame, PAN id compression, short destination and
 * source addresses, frame version 0. */
#define FCF_DATA_SHORT 0x8841
#define HDR_LEN 9 /* FCF 2, sequence 1, PAN 2, destination 2, source 2 */

_Static_assert(HDR_LEN + RADIO_PAYLOAD <= 125, "a ping fits one frame");
_Static_assert(RADIO_BEACON_LEN >= HDR_LEN && RADIO_BEACON_LEN <= 125,
               "a beacon is a header and at most 125 bytes");

enum { TASK_RADIO = 0 };
#define PORT_RX TERN_PORT_APP(0)
#define PORT_TX TERN_PORT_APP(1)
#define TIMER 0 /* reply timeout (pinger), idle limit (ponger), period (beacon) */

typedef enum { ROLE_PINGER, ROLE_PONGER, ROLE_BEACON } role;

static struct {
    role role;
    uint16_t id;
    uint8_t seq;       /* the frame being sent or waited for */
    uint8_t waiting;   /* pinger: a ping is out, its answer not yet in */
    uint8_t finishing; /* exit when this transmission's outcome arrives */
    uint8_t tx_out;    /* a transmission is under way, its outcome to come */
    uint16_t answered, timeouts, bad_echo, foreign, tx_failed;
    uint8_t frame[125];
} node;

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Header into node.frame; returns its length. */
static uint8_t header(uint8_t seq, uint16_t dst)
{
    put16(&node.frame[0], FCF_DATA_SHORT);
    node.frame[2] = seq;
    put16(&node.frame[3], PAN_ID);
    put16(&node.frame[5], dst);
    put16(&node.frame[7], node.id);
    return HDR_LEN;
}

static void send(uint8_t len)
{
    cc2420_status st = cc2420_send(node.frame, len, true);
    node.tx_out = st == CC2420_OK;
    if (st != CC2420_OK) {
        node.tx_failed++;
        tern_printf("tx seq=%u failed %s\n", node.seq, cc2420_status_name(st));
    }
}

static _Noreturn void finish(void)
{
    const cc2420_counters *c = cc2420_stats();
    tern_printf("summary node=%u rounds=%u answered=%u timeouts=%u bad_echo=%u foreign=%u "
                "tx_failed=%u\n",
                node.id, node.seq, node.answered, node.timeouts, node.bad_echo, node.foreign,
                node.tx_failed);
    tern_printf("cc2420 rx_frames=%u bad_crc=%u len_invalid=%u len_past_fifo=%u too_short=%u "
                "no_memory=%u post_failed=%u overflows=%u sfd_unknown=%u\n",
                c->rx_frames, c->rx_bad_crc, c->rx_len_invalid, c->rx_len_past_fifo,
                c->rx_too_short, c->rx_no_memory, c->rx_post_failed, c->rx_overflows,
                c->rx_sfd_unknown);
    tern_printf("cc2420 tx_frames=%u busy=%u cca_busy=%u no_start=%u no_sfd=%u no_end=%u "
                "post_failed=%u missed_edges=%u spi_stalls=%u\n",
                c->tx_frames, c->tx_busy, c->tx_cca_busy, c->tx_no_start, c->tx_no_sfd,
                c->tx_no_end, c->tx_post_failed, c->sfd_missed_edges, c->spi_stalls);
    port_exit(0);
}

/* --- Pinger --------------------------------------------------------------- */

static void ping_next(void)
{
    if (node.seq == RADIO_ROUNDS)
        finish();
    node.seq++;
    uint8_t len = header(node.seq, 1);
    for (uint8_t i = 0; i < RADIO_PAYLOAD; i++)
        node.frame[len++] = (uint8_t)(node.seq + i);
    node.waiting = 1;
    send(len);
    /* a failed send is waited out like a lost answer */
    tern_timer_start(TIMER, ms(RADIO_REPLY_MS), 0);
}

static void pinger_rx(const cc2420_rx_frame *f, uint8_t seq, uint16_t from)
{
    if (!node.waiting || from != 1 || seq != node.seq) {
        node.foreign++;
        return;
    }
    uint8_t n = (uint8_t)(f->len - HDR_LEN);
    bool same = n == RADIO_PAYLOAD;
    for (uint8_t i = 0; same && i < n; i++)
        same = f->data[HDR_LEN + i] == (uint8_t)(seq + i);
    if (!same) {
        node.bad_echo++;
        return;
    }
    node.answered++;
    node.waiting = 0;
    tern_timer_cancel(TIMER);
    ping_next();
}

/* --- Ponger ------------------------------------------------------------------ */

static void ponger_rx(const cc2420_rx_frame *f, uint8_t seq, uint16_t from)
{
    if (from != 0 || get16(&f->data[5]) != node.id) {
        node.foreign++;
        return;
    }
    node.seq = seq;
    uint8_t len = header(seq, from);
    memcpy(&node.frame[len], &f->data[HDR_LEN], (size_t)(f->len - HDR_LEN));
    len = (uint8_t)(len + f->len - HDR_LEN);
    node.answered++;
    if (seq == RADIO_ROUNDS)
        node.finishing = 1;
    send(len);
    tern_timer_start(TIMER, ms(RADIO_IDLE_MS), 0);
}

/* --- Beacon ------------------------------------------------------------------ */

static void beacon_next(void)
{
    if (node.seq == RADIO_BEACON_COUNT) {
        if (!node.tx_out)
            finish();
        node.finishing = 1; /* when the last outcome comes */
        tern_timer_cancel(TIMER);
        return;
    }
    node.seq++;
    uint8_t len = header(node.seq, BROADCAST);
    while (len < RADIO_BEACON_LEN) {
        node.frame[len] = len;
        len++;
    }
    send(len);
}

/* --- Events -------------------------------------------------------------------- */

static void received(const cc2420_rx_frame *f)
{
    if (f->len < HDR_LEN || get16(&f->data[0]) != FCF_DATA_SHORT ||
        get16(&f->data[3]) != PAN_ID) {
        node.foreign++; /* not one of ours: a parser never trusts a frame */
        tern_printf("rx not ours len=%u\n", f->len);
        return;
    }
    uint8_t seq = f->data[2];
    uint16_t from = get16(&f->data[7]);
    /* The ponger answers before it prints: its turnaround is then the
     * driver's and the radio's, not the console's (this line alone takes
     * ~2 ms on the AVR: 64-bit decimal digits and 88 cycles a byte). */
    if (node.role == ROLE_PONGER)
        ponger_rx(f, seq, from);
    tern_printf("rx seq=%u from=%u len=%u rssi=%d lqi=%u sfd=%llu\n", seq, from, f->len,
                f->rssi_dbm, f->lqi, (unsigned long long)f->sfd);
    if (node.role == ROLE_PINGER)
        pinger_rx(f, seq, from);
}

static void sent(const cc2420_tx_result *r)
{
    node.tx_out = 0;
    if (r->status == CC2420_OK) {
        tern_printf("tx seq=%u sfd=%llu\n", node.seq, (unsigned long long)r->sfd);
    } else {
        node.tx_failed++;
        tern_printf("tx seq=%u failed %s\n", node.seq,
                    cc2420_status_name((cc2420_status)r->status));
    }
    if (node.finishing)
        finish();
}

static void timed_out(void)
{
    switch (node.role) {
    case ROLE_PINGER:
        node.timeouts++;
        node.waiting = 0;
        tern_printf("timeout seq=%u\n", node.seq);
        ping_next();
        break;
    case ROLE_PONGER:
        tern_printf("idle %u ms: no more pings\n", RADIO_IDLE_MS);
        finish();
        break;
    case ROLE_BEACON:
        beacon_next();
        break;
    }
}

static void start(void)
{
    node.id = tern_sim_node_id();
    node.role = node.id == 0 ? ROLE_PINGER : node.id == 1 ? ROLE_PONGER : ROLE_BEACON;
    uint8_t channel = tern_sim_channel();
    const cc2420_config cfg = {
        .channel = channel,
        .pan_id = PAN_ID,
        .short_addr = node.id,
        .rx_task = TASK_RADIO,
        .rx_port = PORT_RX,
        .tx_task = TASK_RADIO,
        .tx_port = PORT_TX,
    };
    static const char *const roles[] = {"pinger", "ponger", "beacon"};
    tern_printf("radio node=%u role=%s channel=%u model=%s\n", node.id, roles[node.role],
                channel, tern_model_name);
    cc2420_status st = cc2420_init(&cfg);
    if (st != CC2420_OK) {
        tern_printf("radio: cc2420_init: %s\n", cc2420_status_name(st));
        port_exit(2);
    }
    tern_printf("radio: cc2420 up at %llu\n", (unsigned long long)tern_now());
    switch (node.role) {
    case ROLE_PINGER:
        tern_timer_start(TIMER, ms(RADIO_START_MS), 0);
        break;
    case ROLE_PONGER:
#ifdef RADIO_DEAF_MS
        {
            tern_irq_state s = port_irq_save();
            port_work(ms(RADIO_DEAF_MS));
            port_irq_restore(s);
        }
#endif
        tern_timer_start(TIMER, ms(RADIO_IDLE_MS), 0);
        break;
    case ROLE_BEACON:
        /* staggered by id, 3 ms apart (a 20-byte frame is on air for
         * 1.1 ms), so that beacons of one period do not meet */
        tern_timer_start(TIMER, ms(RADIO_START_MS + 3u * node.id), ms(RADIO_BEACON_PERIOD_MS));
        break;
    }
}

static tern_status radio_task(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT:
        start();
        break;
    case PORT_RX:
        received(m->payload);
        break;
    case PORT_TX:
        sent(m->payload);
        break;
    case TERN_PORT_TIMEOUT(TIMER):
        if (node.role == ROLE_PINGER && node.seq == 0)
            ping_next();
        else
            timed_out();
        break;
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "radio", .id = TASK_RADIO, .priority = 1, .handler = radio_task,
         .n_in_ports = 2},
    };
    static const tern_app_desc app = {.name = "radio", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
