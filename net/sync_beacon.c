/* Beacon synchronization: see sync_beacon.h. Beacon frame (MPDU):
 *   FCF 2 (beacon, source short address), sequence 1, source PAN 2,
 *   source 2, macro slot 1, delay 4 (ticks, little-endian) = 12 bytes. */
#include "sync_beacon.h"
#include "tern/mem.h"

#define FCF_BEACON 0x8000 /* frame type 0, source addressing mode short */
#define BEACON_LEN 12

static bool master;
static uint16_t pan, addr;
static uint8_t seq;
static bool waiting;    /* slave: a sync phase began and no beacon yet */
static bool have_sync;  /* slave: synchronized at least once */
static tern_time phase_start;
static uint8_t frame[BEACON_LEN];
static sync_beacon_counters counters;

void sync_beacon_init(bool is_master, uint16_t pan_id, uint16_t short_addr)
{
    master = is_master;
    pan = pan_id;
    addr = short_addr;
}

const sync_beacon_counters *sync_beacon_stats(void) { return &counters; }

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void beacon_phase(tern_time start, uint8_t slot)
{
    phase_start = start;
    if (!master) {
        if (waiting)
            counters.missed++;
        waiting = true;
        return;
    }
    put16(&frame[0], FCF_BEACON);
    frame[2] = seq++;
    put16(&frame[3], pan);
    put16(&frame[5], addr);
    frame[7] = slot;
    uint32_t d = counters.delay;
    for (uint8_t i = 0; i < 4; i++)
        frame[8 + i] = (uint8_t)(d >> (8 * i));
    if (cc2420_send(frame, BEACON_LEN, false) != CC2420_OK)
        counters.send_failed++;
}

static void beacon_tx_done(const cc2420_tx_result *r)
{
    if (!master)
        return;
    if (r->status != CC2420_OK || r->sfd == 0) {
        counters.send_failed++;
        return;
    }
    counters.sent++;
    counters.delay = (uint32_t)(r->sfd - phase_start);
}

static void beacon_rx(cc2420_rx_frame *f)
{
    const uint8_t *d = f->data;
    if (master) {
        counters.ignored++; /* a second master? */
    } else if (f->len != BEACON_LEN || (uint16_t)(d[3] | d[4] << 8) != pan) {
        counters.malformed++;
    } else {
        uint32_t delay = 0;
        for (uint8_t i = 0; i < 4; i++)
            delay |= (uint32_t)d[8 + i] << (8 * i);
        if (delay == 0 || f->sfd == 0) {
            counters.ignored++; /* the master's first beacon, or an SFD time lost */
        } else {
            tern_time start = f->sfd - delay;
            if (have_sync) {
                int32_t corr = (int32_t)(start - phase_start);
                counters.last_corr = corr;
                uint32_t mag = corr < 0 ? (uint32_t)-corr : (uint32_t)corr;
                if (mag > counters.max_corr)
                    counters.max_corr = mag;
            }
            phase_start = start;
            have_sync = true;
            waiting = false;
            counters.received++;
            bcs_sync_adjust(start, d[7]);
        }
    }
    tern_free(f);
}

const bcs_sync sync_beacon = {
    .name = "beacon",
    .phase = beacon_phase,
    .rx = beacon_rx,
    .tx_done = beacon_tx_done,
};
