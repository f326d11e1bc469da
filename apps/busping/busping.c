/* Processor-bus ping-pong for tern-sim (drivers/procbus; docs/tern-sim.md,
 * "Processor bus"): every processor of one node runs this image (each
 * built for its own board) and reads its bus address and the processor
 * count from the bus registers. What it does depends on the address:
 *
 *   0  sends ping k (k = 1..BUSPING_ROUNDS) to processor 1 and the next
 *      one when echo k is back; then broadcasts one frame to all others,
 *      waits until the bus has delivered it, prints a summary, exits 0.
 *   1  echoes every ping to its sender; exits 0 after the broadcast.
 *   2+ exit 0 after the broadcast.
 *
 * A frame is a kind byte ('P' ping, 'E' echo, 'B' broadcast), the round,
 * and 1..8 pattern bytes (round + i), so lengths vary and every byte is
 * checked on arrival. Each processor prints one line per frame received,
 * in order:
 *   busping 1: rx P 3 from 0 len 5
 * A frame that is out of order, of the wrong kind or with a wrong byte is
 * printed as bad and ends the run with status 4; BUSPING_IDLE_MS without
 * progress ends it with status 5; a failed send with status 6; no bus
 * (tern-simavr alone) with status 2. The summary line carries the driver's
 * counters. */
#include "procbus.h"
#include "tern/port.h"
#include "tern/tern.h"

#ifndef BUSPING_ROUNDS
#define BUSPING_ROUNDS 10
#endif
#ifndef BUSPING_IDLE_MS
#define BUSPING_IDLE_MS 1000 /* simulated time without progress before giving up */
#endif
#define RETRY_US 20 /* after PROCBUS_EBUSY, and while waiting for the last frame to arrive */
#define PATTERN_MAX 8
#define FRAME_MAX (2 + PATTERN_MAX)

enum { TASK_BUSPING = 0 };
#define PORT_BUS TERN_PORT_APP(0)
#define TIMER_IDLE 0  /* progress watchdog */
#define TIMER_RETRY 1 /* a send refused as busy, or the final wait */

static struct {
    uint8_t address, count;
    uint8_t round;      /* processor 0: the ping whose echo is awaited; others: pings seen */
    uint8_t finishing;  /* processor 0: the broadcast is out, exit once it has arrived */
    uint8_t pending[FRAME_MAX], pending_len, pending_dst; /* the frame being sent */
    uint8_t unsent;     /* it was refused as busy: retried by TIMER_RETRY */
    uint16_t retries;
} me;

static uint32_t ticks_us(uint32_t us) { return (uint32_t)((uint64_t)tern_clock_hz() * us / 1000000u); }

static void progress(void) { tern_timer_start(TIMER_IDLE, ticks_us(BUSPING_IDLE_MS * 1000ul), 0); }

static uint8_t frame_len(uint8_t round) { return (uint8_t)(2 + 1 + round % PATTERN_MAX); }

static _Noreturn void finish(int status)
{
    const procbus_counters *c = procbus_stats();
    tern_printf("busping %u: summary rounds=%u retries=%u rx_frames=%u bad_len=%u bad_src=%u "
                "no_memory=%u post_failed=%u spurious=%u tx_frames=%u busy=%u invalid=%u "
                "refused=%u\n",
                me.address, me.round, me.retries, c->rx_frames, c->rx_bad_len, c->rx_bad_src,
                c->rx_no_memory, c->rx_post_failed, c->rx_spurious, c->tx_frames, c->tx_busy,
                c->tx_invalid, c->tx_refused);
    port_exit(status);
}

/* Sends me.pending, or retries it in RETRY_US while the bus is busy. */
static void send_pending(void)
{
    procbus_status st = procbus_send(me.pending_dst, me.pending, me.pending_len);
    me.unsent = st == PROCBUS_EBUSY;
    if (me.unsent) {
        me.retries++;
        tern_timer_start(TIMER_RETRY, ticks_us(RETRY_US), 0);
        return;
    }
    if (st != PROCBUS_OK) {
        tern_printf("busping %u: send %c %u: %s\n", me.address, me.pending[0], me.pending[1],
                    procbus_status_name(st));
        finish(6);
    }
    if (me.finishing) /* wait until the broadcast has arrived everywhere */
        tern_timer_start(TIMER_RETRY, ticks_us(RETRY_US), 0);
}

static void send(uint8_t dst, char kind, uint8_t round, uint8_t len)
{
    me.pending[0] = (uint8_t)kind;
    me.pending[1] = round;
    for (uint8_t i = 2; i < len; i++)
        me.pending[i] = (uint8_t)(round + i);
    me.pending_len = len;
    me.pending_dst = dst;
    send_pending();
}

static void ping_next(void)
{
    if (me.round == BUSPING_ROUNDS) {
        me.finishing = 1;
        send(PROCBUS_BROADCAST, 'B', me.round, frame_len(me.round));
        return;
    }
    me.round++;
    send(1, 'P', me.round, frame_len(me.round));
}

/* What this processor expects next: its kind, round and sender. */
static bool expected(const procbus_frame *f, char *kind, uint8_t *round)
{
    *kind = '?';
    *round = 0;
    if (f->len < 2)
        return false;
    *kind = (char)f->data[0];
    *round = f->data[1];
    if (f->len != frame_len(*round))
        return false;
    for (uint8_t i = 2; i < f->len; i++)
        if (f->data[i] != (uint8_t)(*round + i))
            return false;
    if (*kind == 'B')
        return f->src == 0 && me.address != 0 && *round == BUSPING_ROUNDS &&
               (me.address != 1 || me.round == BUSPING_ROUNDS);
    if (me.address == 0)
        return *kind == 'E' && f->src == 1 && *round == me.round && !me.finishing;
    return me.address == 1 && *kind == 'P' && f->src == 0 && *round == me.round + 1;
}

static void received(const procbus_frame *f)
{
    char kind;
    uint8_t round;
    bool ok = expected(f, &kind, &round);
    tern_printf("busping %u: rx %c %u from %u len %u%s\n", me.address, kind, round, f->src, f->len,
                ok ? "" : " bad");
    if (!ok)
        finish(4);
    progress();
    if (kind == 'B')
        finish(0);
    if (me.address == 0) {
        ping_next();
    } else {
        me.round = round;
        send(f->src, 'E', round, f->len);
    }
}

static tern_status busping_task(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT: {
        procbus_config cfg = {.rx_task = TASK_BUSPING, .rx_port = PORT_BUS};
        procbus_status st = procbus_init(&cfg);
        me.address = procbus_address();
        me.count = procbus_count();
        tern_printf("busping %u: of %u processors, board %s, model %s, %lu Hz\n", me.address,
                    me.count, TERN_BOARD_NAME, TERN_MODEL_NAME, (unsigned long)tern_clock_hz());
        if (st != PROCBUS_OK) {
            tern_printf("busping: procbus_init: %s\n", procbus_status_name(st));
            port_exit(2);
        }
        if (me.count < 2) {
            tern_printf("busping: a bus of one processor: nobody to ping\n");
            finish(2);
        }
        progress();
        if (me.address == 0)
            ping_next();
        break;
    }
    case PORT_BUS:
        received(m->payload); /* the kernel frees the frame when this returns */
        break;
    case TERN_PORT_TIMEOUT(TIMER_RETRY):
        if (me.unsent) {
            send_pending();
        } else if (procbus_tx_free()) {
            finish(0); /* the broadcast has arrived */
        } else {
            tern_timer_start(TIMER_RETRY, ticks_us(RETRY_US), 0);
        }
        break;
    case TERN_PORT_TIMEOUT(TIMER_IDLE):
        tern_printf("busping %u: nothing for %u ms\n", me.address, BUSPING_IDLE_MS);
        finish(5);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "busping", .id = TASK_BUSPING, .priority = 1, .handler = busping_task,
         .n_in_ports = 1},
    };
    static const tern_app_desc app = {.name = "busping", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
