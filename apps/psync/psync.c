/* Processor time sync, measured (drivers/procbus/procbus_sync.c,
 * tern/gtime.h; docs/multiprocessor.md, "Time sync"). Every processor of
 * one node runs this image. Address 0 is the master: it broadcasts a sync
 * round every PSYNC_PERIOD_MS; the others keep their offset and rate to
 * its clock. Each processor raises PA0 at the same global instant,
 * PSYNC_PHASE_MS after each global second from PSYNC_FIRST_S on, so a
 * logic analyser on PA0 gives the achieved precision: the spread of one
 * second's rising edges across the processors, in simulated time.
 *
 * The pin rises from the capture-free path: an alarm PSYNC_MARGIN_US
 * before the instant converts it to a local tick with the newest model,
 * then spins on Timer1 with interrupts off and sets the pin at that tick
 * (a few cycles of loop, as an output compare would do in hardware). The
 * pin falls PSYNC_MARGIN_US before the next one.
 *
 * With PSYNC_LOAD_MS, every other processor also sends the master a
 * 32-byte frame that often, and the master broadcasts one as often, so
 * the sync frames share the bus (and the master's own transmit buffer).
 * Frames are taken by a receive function (procbus_config.rx_fn), as under
 * the bus manager (procbus_remote.c): the sync driver's claim takes its
 * own frames before it.
 *
 * After global second PSYNC_REPORT_S each prints
 *   psync A: summary pulses=.. late=.. samples=.. rate_ppb=.. last_error_ns=.. ...
 * and goes on until the scenario's duration ends it (exit 2: no bus). */
#include <avr/io.h>

#include "procbus.h"
#include "procbus_sync.h"
#include "tern/gtime.h"
#include "tern/port.h"
#include "tern/tern.h"

#ifndef PSYNC_PERIOD_MS
#define PSYNC_PERIOD_MS 1000
#endif
#ifndef PSYNC_FIRST_S
#define PSYNC_FIRST_S 3 /* two rounds have given offset and rate */
#endif
#ifndef PSYNC_REPORT_S
#define PSYNC_REPORT_S 10
#endif
#ifndef PSYNC_PHASE_MS
#define PSYNC_PHASE_MS 900 /* 0.9 s after the round: the extrapolation at its longest */
#endif
#ifndef PSYNC_MARGIN_US
#define PSYNC_MARGIN_US 1000
#endif
#ifndef PSYNC_LOAD_MS
#define PSYNC_LOAD_MS 5
#endif

enum { TASK_PSYNC = 0 };
#define TIMER_REPORT 0
#define TIMER_LOAD 1

#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull

static tern_alarm pulse_alarm;
static uint32_t second;            /* global second of the next pulse */
static uint16_t pulses, late, load_sent, load_busy;

static tern_gtime instant(uint32_t s)
{
    return (tern_gtime)s * TERN_GTIME_NS_PER_S + PSYNC_PHASE_MS * NS_PER_MS;
}

static void arm_pulse(void)
{
    tern_gtime early = instant(second) - PSYNC_MARGIN_US * NS_PER_US;
    tern_alarm_set(&pulse_alarm, tern_local_from_global(early), 0);
}

/* Interrupt context: the alarm PSYNC_MARGIN_US before the instant. */
static void pulse(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    PORTA &= (uint8_t)~_BV(PA0);
    tern_time target = tern_local_from_global(instant(second));
    tern_irq_state s = port_irq_save();
    tern_time now = tern_now();
    if (now >= target) {
        late++; /* the alarm came too late: no edge this second */
    } else {
        while (target - tern_now() > 16000u) /* within half a Timer1 wrap */
            ;
        uint16_t at = (uint16_t)target;
        while ((int16_t)(TCNT1 - at) < 0)
            ;
        PORTA |= _BV(PA0);
        pulses++;
    }
    port_irq_restore(s);
    second++;
    arm_pulse();
}

static void report(void)
{
    const tern_gtime_stats *g = tern_gtime_stats_get();
    const procbus_sync_counters *c = procbus_sync_stats();
    const procbus_counters *b = procbus_stats();
    tern_printf("psync %u: summary pulses=%u late=%u samples=%u refused=%u rate_ppb=%ld "
                "last_error_ns=%ld offset_only_error_ns=%ld max_error_ns=%lu tx_sync=%u "
                "tx_follow=%u tx_retries=%u tx_failed=%u "
                "rounds_lost=%u rx_sync=%u rx_samples=%u rx_no_capture=%u rx_unmatched=%u "
                "rx_bad=%u load_sent=%u load_busy=%u rx_frames=%u\n",
                procbus_address(), pulses, late, g->samples, g->refused, (long)g->rate_ppb,
                (long)g->last_error_ns, (long)g->offset_only_error_ns,
                (unsigned long)g->max_error_ns, c->tx_sync, c->tx_follow, c->tx_retries,
                c->tx_failed,
                c->rounds_lost, c->rx_sync, c->rx_samples, c->rx_no_capture, c->rx_unmatched,
                c->rx_bad, load_sent, load_busy, b->rx_frames);
}

/* A load frame, in the bus interrupt: counted by procbus (rx_frames). */
static bool take_load(uint8_t src, const uint8_t *data, uint8_t len)
{
    (void)src;
    (void)data;
    (void)len;
    return true;
}

static tern_time ms(uint32_t n) { return (tern_time)tern_clock_hz() * n / 1000u; }

static tern_status psync_task(void *state, tern_msg *m)
{
    (void)state;
    switch (m->port) {
    case TERN_PORT_INIT: {
        procbus_config cfg = {.rx_task = TERN_NO_TASK, .rx_fn = take_load};
        procbus_status st = procbus_init(&cfg);
        if (st == PROCBUS_OK)
            st = procbus_sync_start(0, PSYNC_PERIOD_MS);
        tern_printf("psync %u: of %u processors, board %s, model %s, %lu Hz\n", procbus_address(),
                    procbus_count(), TERN_BOARD_NAME, TERN_MODEL_NAME,
                    (unsigned long)tern_clock_hz());
        if (st != PROCBUS_OK) {
            tern_printf("psync: %s\n", procbus_status_name(st));
            port_exit(2);
        }
        DDRA |= _BV(PA0);
        second = PSYNC_FIRST_S;
        tern_alarm_init(&pulse_alarm, pulse, NULL);
        arm_pulse();
        tern_timer_start(TIMER_REPORT, ms(PSYNC_REPORT_S * 1000u + PSYNC_PHASE_MS + 50u), 0);
        if (PSYNC_LOAD_MS)
            tern_timer_start(TIMER_LOAD, ms(PSYNC_LOAD_MS), ms(PSYNC_LOAD_MS));
        break;
    }
    case TERN_PORT_TIMEOUT(TIMER_LOAD): {
        uint8_t frame[32] = {'L'};
        uint8_t to = procbus_address() == 0 ? PROCBUS_BROADCAST : 0;
        if (procbus_send(to, frame, sizeof frame) == PROCBUS_OK)
            load_sent++;
        else
            load_busy++;
        break;
    }
    case TERN_PORT_TIMEOUT(TIMER_REPORT):
        report();
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "psync", .id = TASK_PSYNC, .priority = 1, .handler = psync_task},
    };
    static const tern_app_desc app = {.name = "psync", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
