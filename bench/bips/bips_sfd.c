/* SFD-based synchronization as seed 004 §5.3 (Figs. 4-6) on the MicaZ
 * (issue 11, experiment 2; `tern bench bips sfd`, docs/bips.md). Node 0
 * sends `frames` broadcast frames, one every 20 ms; every other node
 * receives them and
 *   - raises PC1 (sfd_r) in the SFD capture interrupt (cc2420_config's
 *     sfd_isr: the first instruction of the hook), lowering it when the
 *     frame has been read (rx_isr);
 *   - raises PC2 (slot_r) 10 ms after the frame's SFD timestamp -- the
 *     capture the driver took in hardware (Timer1 input capture) -- on the
 *     BCS's timer (net/bcs_timer.h), as a slot region's start would be;
 *     lowered at the next SFD.
 * The logic analyser records both pins of both receivers (and their SFD
 * pins PD4); the host compares the receivers' edges frame by frame.
 *
 * Output: "SFD node=<id> frames=<n> rx=<n> sfd_unknown=<n> missed_edges=<n>
 * slot_late=<n>" at the end. Parameters (.tern_params): word 0 = frames
 * (default 1500), word 1 = 1: the CPU never sleeps (an idle work hook that
 * always has work), to tell what sleeping adds. */
#include <avr/io.h>

#include "bcs_timer.h"
#include "cc2420.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"
#include "tern_simavr_abi.h"

TERN_PARAMS_DEFAULTS(1500, 0);

#define PAN_ID 0x22
#define PERIOD_MS 20u
#define SLOT_AFTER_US 10000u
#define PAYLOAD 10u
#define SFD_PIN _BV(PC1)
#define SLOT_PIN _BV(PC2)

static uint32_t frames, received, slot_late;
static uint16_t seq;

static uint32_t ms(uint32_t n) { return tern_clock_hz() / 1000u * n; }

static void fail(const char *what, cc2420_status st)
{
    tern_printf("bips_sfd: %s: %s\n", what, cc2420_status_name(st));
    port_exit(2);
}

/* --- receivers: interrupt level -------------------------------------------- */

static void slot_start(void) { PORTC |= SLOT_PIN; }

static void sfd_seen(tern_time t)
{
    PORTC |= SFD_PIN;
    PORTC &= (uint8_t)~SLOT_PIN;
    tern_time at = t + (tern_time)tern_clock_hz() * SLOT_AFTER_US / 1000000u;
    if ((int64_t)(at - tern_now()) <= 0)
        slot_late++;
    bcs_timer_set(BCS_TIMER_SLOT, at);
}

static void frame_in(cc2420_rx_frame *f)
{
    PORTC &= (uint8_t)~SFD_PIN;
    received++;
    tern_free(f);
}

static void no_op(void) {}

/* The idle loop's work hook: "did work", so the CPU never sleeps. */
static bool stay_awake(void) { return true; }

/* --- sender and the end: a task -------------------------------------------------- */

static void send_one(void)
{
    uint8_t mpdu[9 + PAYLOAD] = {0x41, 0x88, (uint8_t)seq, PAN_ID, 0, 0xff, 0xff, 0, 0};
    for (uint8_t i = 0; i < PAYLOAD; i++)
        mpdu[9 + i] = (uint8_t)(seq + i);
    cc2420_status st = cc2420_send(mpdu, sizeof mpdu, false);
    if (st != CC2420_OK)
        fail("cc2420_send", st);
    seq++;
}

static tern_status node_task(void *state, tern_msg *m)
{
    (void)state;
    uint16_t id = tern_sim_node_id();
    if (m->port == TERN_PORT_INIT) {
        frames = tern_params[0];
        if (tern_params[1])
            tern_idle_set_work(stay_awake);
        DDRC |= SFD_PIN | SLOT_PIN;
        PORTC &= (uint8_t)~(SFD_PIN | SLOT_PIN);
        const cc2420_config rc = {
            .channel = tern_sim_channel(), .pan_id = PAN_ID, .short_addr = id,
            .rx_task = TERN_NO_TASK, .tx_task = TERN_NO_TASK,
            .rx_isr = id ? frame_in : NULL, .sfd_isr = id ? sfd_seen : NULL,
        };
        cc2420_status st = cc2420_init(&rc);
        if (st != CC2420_OK)
            fail("cc2420_init", st);
        bcs_timer_init(slot_start, no_op);
        /* the sender starts once every receiver listens (their init ~2 ms) */
        if (id == 0)
            tern_timer_start(0, ms(50), ms(PERIOD_MS));
        tern_timer_start(1, ms(50 + PERIOD_MS * frames + 100), 0);
    } else if (m->port == TERN_PORT_TIMEOUT(0)) {
        if (seq < frames)
            send_one();
    } else if (m->port == TERN_PORT_TIMEOUT(1)) {
        const cc2420_counters *c = cc2420_stats();
        tern_printf("SFD node=%u frames=%lu rx=%lu sfd_unknown=%u missed_edges=%u slot_late=%lu\n", id,
                    (unsigned long)(id ? frames : seq), (unsigned long)received, c->rx_sfd_unknown,
                    c->sfd_missed_edges, (unsigned long)slot_late);
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "node", .id = 0, .priority = 1, .handler = node_task},
    };
    static const tern_app_desc app = {.name = "bips_sfd", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
