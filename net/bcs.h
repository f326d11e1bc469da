/* The communication scheduler (BCS, seed 004 §3.2, §4.1): time is divided
 * into super slots of macro slots; each macro slot opens with a
 * synchronization phase and holds virtual slot regions, each owned by one
 * MAC protocol; the gaps are idle regions, in which the radio is off.
 *
 * The BCS runs at interrupt level on its own hardware timer
 * (net/bcs_timer.h), above every execution model: whatever task runs, a
 * region starts when its time comes. For a region [t0, t3) of the local,
 * synchronized clock:
 *   t0        the protocol's configure(), then the multiplexer hands it
 *             the head of the best TX TO bound to the region;
 *   t1        = t0 + d_maxOffset: every node has reached t0, the medium is
 *             the protocol's (start());
 *   t2        = t3 - d_stop, d_stop = max(d_maxOffset, d_TX->RX): the BCS
 *             takes the medium back (stop()); no transmission may last
 *             beyond t2, so every neighbour receives it inside the region
 *             and a sender is listening again when the next region starts;
 *   t3        the region's end; the radio goes off if the next activity is
 *             far enough away to be worth a crystal start.
 *
 * The configuration is data (a const bcs_config, part of the app), checked
 * by bcs_start() like an application description: a refusal names the
 * macro slot, the region and what is wrong. */
#ifndef TERN_NET_BCS_H
#define TERN_NET_BCS_H

#include <stdbool.h>
#include <stdint.h>

#include "cc2420.h"
#include "tern/types.h"

typedef enum {
    BCS_OK = 0,
    BCS_EINVAL,       /* a zero or out-of-range field (named in the text) */
    BCS_EOVERLAP,     /* two regions of a macro slot overlap, or one overlaps the sync phase */
    BCS_EPAST_SLOT,   /* a region ends after its macro slot */
    BCS_ENOPROTO,     /* a region's protocol is not one the app registered */
    BCS_ETOO_SHORT,   /* a region leaves no time between t1 and t2 */
    BCS_ETOO_MANY,    /* more regions than BCS_MAX_REGIONS in the super slot */
    BCS_ESTATE,       /* bcs_start called twice, or the radio is not up */
    BCS_STATUS_COUNT
} bcs_status;

const char *bcs_status_name(bcs_status s);

/* MAC protocols, by the id a region names. */
typedef enum {
    BCS_MAC_CB = 0, /* contention-based, CSMA/CA (net/mac_cb.c) */
    BCS_MAC_RB,     /* reservation-based TDMA (net/mac_rb.c) */
    BCS_MAC_ACTP,   /* arbitrating, binary countdown with black bursts (net/mac_actp.c) */
    BCS_MAC_MB,     /* mode-based, fast mode-signaling (net/mac_mb.c) */
    BCS_MAC_COUNT
} bcs_mac_id;

#define BCS_MAX_REGIONS 8 /* RAM: 10 bytes each */
#define BCS_REGION_IDS 16 /* region ids 0..15: a TO binds to a mask of them */

typedef struct {
    uint8_t id;        /* 0..BCS_REGION_IDS-1; TX and RX TOs bind to ids */
    uint8_t protocol;  /* bcs_mac_id */
    uint32_t start_us; /* from the macro slot's start */
    uint32_t len_us;   /* t3 - t0 */
} bcs_region;

typedef struct {
    const bcs_region *regions; /* in any order; must not overlap */
    uint8_t n_regions;
} bcs_macro_slot;

typedef struct {
    uint32_t macro_slot_us; /* the resynchronization interval */
    uint32_t sync_us;       /* the synchronization phase opening each macro slot */
    uint32_t max_offset_us; /* d_maxOffset: what the sync protocol guarantees */
    const bcs_macro_slot *slots; /* the super slot */
    uint8_t n_slots;
} bcs_config;

/* Why a configuration was refused. slot/region: indexes, -1 when the fault
 * is not in one. */
typedef struct {
    bcs_status code;
    int8_t slot;
    int8_t region;
    char text[72];
} bcs_error;

/* A region as it runs: its configuration and its four times on the local
 * clock (kernel ticks). */
typedef struct {
    const bcs_region *region;
    uint8_t slot; /* index of the macro slot in the super slot */
    tern_time t0, t1, t2, t3;
} bcs_run;

/* The MAC interface every protocol implements (seed 004 Fig. 3). All hooks
 * run at interrupt level. */
struct mux_entry;
typedef struct {
    const char *name;
    /* t0: the region starts; `first` is the multiplexer's offer (NULL:
     * nothing to send here). */
    void (*configure)(const bcs_run *run, struct mux_entry *first);
    void (*start)(void); /* t1: the medium is the protocol's */
    void (*stop)(void);  /* t2: taken back; give unsent entries back to the mux */
    void (*tx_done)(const cc2420_tx_result *r);
    void (*rx)(cc2420_rx_frame *f); /* a data frame during the region: the protocol's */
    void (*timer)(void);            /* BCS_TIMER_MAC expired */
} bcs_mac;

/* The synchronization protocol (net/sync_beacon.c, net/sync_bbs.c), run in
 * the sync phase. */
typedef struct {
    const char *name;
    /* The sync phase of macro slot `slot` starts at `start` (the radio is
     * listening). Not called while the node is unsynchronized. */
    void (*phase)(tern_time start, uint8_t slot);
    /* Every beacon frame (frame type 0), whenever it arrives; also while
     * unsynchronized. The block is the hook's. */
    void (*rx)(cc2420_rx_frame *f);
    void (*tx_done)(const cc2420_tx_result *r);
    /* BCS_TIMER_MAC expired during the sync phase (optional: a protocol
     * that times its own steps there, as BBS does; the BCS cancels the
     * channel at the phase's end). */
    void (*timer)(void);
} bcs_sync;

typedef struct {
    uint16_t regions_run;     /* regions started (t0) */
    uint16_t slots_run;       /* macro slots started */
    uint16_t radio_offs;      /* idle regions with the radio off */
    uint16_t wake_late;       /* the crystal was not stable at the region's RX-on time */
    uint16_t off_refused;     /* cc2420_off refused (a transmission past t3: an overrun) */
    uint16_t rx_outside;      /* a data frame outside any region: dropped */
    uint16_t rx_no_hook;      /* a beacon without a sync protocol: dropped */
    uint16_t tx_done_orphan;  /* a transmission outcome nobody waited for */
    uint16_t resyncs;         /* bcs_sync_adjust calls */
    uint16_t late_events;     /* an event armed for a time already past */
    uint8_t late_steps;       /* bit s: a late event was step s (bcs.c's order) */
    /* The largest delay from a step's time to its handler reading the
     * clock (ticks), by step: WAKE, RXON, START, HANDOVER, STOP, END. */
    uint16_t max_delay[6];
} bcs_counters;

/* Check a configuration without starting anything. */
bcs_status bcs_validate(const bcs_config *cfg, const bcs_mac *const macs[BCS_MAC_COUNT],
                        bcs_error *err);

/* Validate and start. The radio must be up (cc2420_init, with
 * bcs_radio_rx and bcs_radio_tx_done as its rx_isr and tx_isr). A master
 * (`synced`) starts its first macro slot `lead_us` from now; the others
 * listen until the sync protocol calls bcs_sync_adjust(). */
bcs_status bcs_start(const bcs_config *cfg, const bcs_mac *const macs[BCS_MAC_COUNT],
                     const bcs_sync *sync, bool synced, uint32_t lead_us, bcs_error *err);

/* The radio hooks to put in cc2420_config (rx_isr, tx_isr). */
void bcs_radio_rx(cc2420_rx_frame *f);
void bcs_radio_tx_done(const cc2420_tx_result *r);

/* For the sync protocol: macro slot `slot` started at local time `start`
 * (a past time: the current macro slot). Re-plans the pending event. */
void bcs_sync_adjust(tern_time start, uint8_t slot);
bool bcs_synced(void);

/* For protocols: the region running now (NULL between regions), and the
 * BCS's tick conversion (precomputed values are cheaper in interrupts). */
const bcs_run *bcs_current(void);
uint32_t bcs_us_to_ticks(uint32_t us);
/* d_stop = max(d_maxOffset, d_TX->RX) of a configuration (protocols check
 * their own times against t2 - t1 with it). */
uint32_t bcs_d_stop_us(const bcs_config *c);

const bcs_counters *bcs_stats(void);

#endif
