/* Time sync over the processor bus (procbus_sync.h): the rounds, and the
 * Timer1 capture that timestamps SYNC frames on both ends. */
#include "procbus_sync.h"

#include <avr/interrupt.h>
#include <avr/io.h>

#include "avr.h"
#include "tern/gtime.h"
#include "tern/port.h"
#include "tern/time.h"

/* ICP1 and the capture unit's bits, per part: the ATmega128 shares TIMSK
 * and TIFR among its timers and has ICP1 on PD4, the newer parts have
 * TIMSK1/TIFR1 and ICP1 on PD6. */
#ifdef TIFR1
#define CAPT_FLAGS TIFR1
#define CAPT_MASK TIMSK1
#define CAPT_ENABLE ICIE1
#define ICP1_BIT PD6
#else
#define CAPT_FLAGS TIFR
#define CAPT_MASK TIMSK
#define CAPT_ENABLE TICIE1
#define ICP1_BIT PD4
#endif

#define RETRY_US 100
/* A receiver's capture older than this when its SYNC frame is read is
 * not that frame's (one was missed): no sample. A SYNC frame is read
 * within a few frame times of its start. */
#define CAPTURE_MAX_AGE_MS 100
#define SYNC_LEN 3
#define FOLLOW_LEN 11

static procbus_sync_counters counters;
static uint8_t master_address;
static bool is_master;

/* --- Master ------------------------------------------------------------------ */

/* A round: SYNC until the bus takes it, wait for its capture, FOLLOW until
 * the bus takes it. */
static enum { IDLE, SEND_SYNC, WAIT_CAPTURE, SEND_FOLLOW } state;
static uint8_t seq;
static tern_time sent_at; /* the master's capture of its SYNC */
static tern_alarm round_alarm, retry_alarm;

static tern_time ticks_of_ms(uint32_t ms) { return (tern_time)tern_clock_hz() * ms / 1000u; }

static void retry_later(void)
{
    counters.tx_retries++;
    tern_alarm_set(&retry_alarm, tern_now() + (tern_time)tern_clock_hz() * RETRY_US / 1000000u, 0);
}

/* Interrupt context (alarms, capture). */
static void step(void)
{
    procbus_status st;
    if (state == SEND_SYNC) {
        uint8_t f[SYNC_LEN] = {PROCBUS_SYNC_KIND, 'S', seq};
        st = procbus_send_stamped(PROCBUS_BROADCAST, f, sizeof f);
        if (st == PROCBUS_OK) {
            counters.tx_sync++;
            state = WAIT_CAPTURE;
            return;
        }
    } else if (state == SEND_FOLLOW) {
        uint8_t f[FOLLOW_LEN] = {PROCBUS_SYNC_KIND, 'F', seq};
        tern_gtime g = tern_global_from_local(sent_at);
        for (uint8_t i = 0; i < 8; i++)
            f[3 + i] = (uint8_t)(g >> (8 * i));
        st = procbus_send(PROCBUS_BROADCAST, f, sizeof f);
        if (st == PROCBUS_OK) {
            counters.tx_follow++;
            state = IDLE;
            return;
        }
    } else {
        return;
    }
    if (st == PROCBUS_EBUSY) {
        retry_later();
        return;
    }
    counters.tx_failed++;
    state = IDLE;
}

static void on_round(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    if (state != IDLE)
        counters.rounds_lost++;
    seq++;
    state = SEND_SYNC;
    step();
}

static void on_retry(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    step();
}

procbus_status procbus_sync_set_period(uint32_t period_ms)
{
    if (!is_master)
        return PROCBUS_ESTATE;
    if (period_ms == 0)
        return PROCBUS_EINVAL;
    tern_time p = ticks_of_ms(period_ms);
    tern_alarm_set(&round_alarm, tern_now() + p, p);
    return PROCBUS_OK;
}

/* --- The others ---------------------------------------------------------------- */

static bool have_capture, have_sync;
static tern_time captured_at, sync_at;
static uint8_t sync_seq;

static void on_capture(tern_time t);

/* The capture unit's latest capture, converted at once: it is exact while
 * younger than one Timer1 wrap (avr_timer1_capture_time). */
static void take_capture(void) { on_capture(avr_timer1_capture_time(ICR1)); }

/* A claimed frame (procbus_claim), in the bus interrupt. */
static bool on_frame(uint8_t src, const uint8_t *d, uint8_t len)
{
    if (is_master || src != master_address || len < 2) {
        counters.rx_bad++;
        return true;
    }
    if (d[1] == 'S' && len == SYNC_LEN) {
        /* The bus interrupt may come first when both wait (a lower
         * vector): take the SYNC frame's capture now. */
        if (CAPT_FLAGS & _BV(ICF1)) {
            CAPT_FLAGS = _BV(ICF1);
            take_capture();
        }
        have_sync = have_capture && tern_now() - captured_at < ticks_of_ms(CAPTURE_MAX_AGE_MS);
        have_capture = false;
        if (!have_sync) {
            counters.rx_no_capture++;
            return true;
        }
        counters.rx_sync++;
        sync_at = captured_at;
        sync_seq = d[2];
    } else if (d[1] == 'F' && len == FOLLOW_LEN) {
        if (!have_sync || d[2] != sync_seq) {
            counters.rx_unmatched++;
            return true;
        }
        tern_gtime g = 0;
        for (uint8_t i = 8; i > 0; i--)
            g = g << 8 | d[2 + i];
        have_sync = false;
        counters.rx_samples++;
        tern_gtime_sample(sync_at, g);
    } else {
        counters.rx_bad++;
    }
    return true;
}

/* --- Capture: the start of a SYNC frame, on either end ------------------------ */

static void on_capture(tern_time t)
{
    if (!is_master) {
        captured_at = t;
        have_capture = true;
    } else if (state == WAIT_CAPTURE) {
        sent_at = t;
        state = SEND_FOLLOW;
        step(); /* busy until the SYNC frame has arrived: retries */
    }
}

ISR(TIMER1_CAPT_vect)
{
    tern_isr_enter();
    take_capture();
    tern_isr_exit();
}

/* --- Set-up ---------------------------------------------------------------------- */

procbus_status procbus_sync_start(uint8_t master, uint32_t period_ms)
{
    if (procbus_count() == 0)
        return PROCBUS_ESTATE;
    if (master >= procbus_count() || period_ms == 0)
        return PROCBUS_EINVAL;
    tern_irq_state s = port_irq_save();
    master_address = master;
    is_master = procbus_address() == master;
    /* ICP1: an input the bus drives, captured on its rising edge (Timer1
     * runs at one count a cycle, avr_board.c); a stale flag cleared */
    DDRD &= (uint8_t)~_BV(ICP1_BIT);
    PORTD &= (uint8_t)~_BV(ICP1_BIT);
    TCCR1B |= _BV(ICES1);
    CAPT_FLAGS = _BV(ICF1);
    CAPT_MASK |= _BV(CAPT_ENABLE);
    procbus_claim(PROCBUS_SYNC_KIND, on_frame);
    port_irq_restore(s);
    if (is_master) {
        tern_gtime_set_master();
        tern_alarm_init(&round_alarm, on_round, NULL);
        tern_alarm_init(&retry_alarm, on_retry, NULL);
        return procbus_sync_set_period(period_ms);
    }
    return PROCBUS_OK;
}

const procbus_sync_counters *procbus_sync_stats(void) { return &counters; }
