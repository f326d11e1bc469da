/* MB, mode-based scheduling with fast mode-signaling (seed 004 §3.1;
 * Braun, Gotzhein, Wirth 2014; docs/bips.md says which description is
 * followed and what was decided here).
 *
 * An MB region is divided into n_slots slots of slot_us from its hand-over
 * time t1 on. Each slot has one sender per operating mode:
 * senders[k * n_modes + m] is the node that sends in slot k when the slot
 * runs in mode m (MB_NONE: nobody). Modes are priorities: mode 0 is the
 * base (periodic traffic), higher modes win (sporadic, alarm traffic). So a
 * slot reserved for a high-priority sender is used by the lower-mode sender
 * whenever the owner has nothing to send, and the owner gets it whenever it
 * has: a deterministic guarantee with a controlled amount of contention.
 *
 * Which mode a slot runs in is decided at its start by fast mode-signaling:
 * every node with a frame whose slot it is in some mode requests the
 * highest such mode not above its frame's class (the priority of the frame's
 * TX TO); the requests are arbitrated by binary countdown with black bursts
 * over the mode number, most significant bit first -- a 1 is a burst, a 0
 * silence -- and every burst is relayed by every node that hears it, once,
 * MB_RELAY_US after detecting it (at most BB_CCA_US after it started), so
 * that a bit reaches the whole network (n_hops hops) within its window. A
 * node whose own burst did not go out stays silent in the slot: it cannot
 * know what the others decided. After the last bit every node
 * knows the slot's mode, and exactly one node -- the sender of that mode,
 * the only one that can have requested it -- sends its frame. A slot without
 * any sender in any mode is skipped (no signaling).
 *
 * Slot layout on the local clock (mb_timing gives the durations):
 *   [0, lead)                quiet: the previous slot's frame, its CCA tail
 *                            and its sender's return to RX end everywhere;
 *   [lead, lead + bits * W)  one window W per mode bit;
 *   then data                the winner's cc2420_send, MB_SEND_MARGIN_US for
 *                            loading the TX FIFO, the frame (192 us + bytes);
 * all nodes' clocks within d_maxOffset of each other. */
#ifndef TERN_NET_MAC_MB_H
#define TERN_NET_MAC_MB_H

#include <stdint.h>

#include "bcs.h"
#include "blackburst.h"

#define MB_NONE 0xFFFF     /* senders[]: nobody in this slot and mode */
#define MB_MAX_MODES 4     /* two signaling bits */
#define MB_MAX_SCHEDULES 2 /* MB region ids a node can have schedules for */
#define MB_MAX_SLOTS 16
#define MB_MAX_HOPS 4
#define MB_BURST_US 160u   /* a burst: the datasheet's 128 us CCA average + 2 symbols */
/* A heard burst is relayed this long after its detection: the strobe needs
 * BB_TURNAROUND_US + BB_ON_US ahead of the carrier, and the code from the
 * detection to bb_send's strobe: 75 us on the ATmega128 at 7.37 MHz. */
#define MB_RELAY_US 300u
#define MB_SLOP_US 16u     /* the CCA polling loop's pass and the clock reads */
/* cc2420_burst_off's SRXON comes after two register writes, as long as
 * burst_on's (BB_ON_US): a node hears again BB_RX_AGAIN_US after that.
 * Without it a node that sent the previous bit read its CCA as busy at
 * the next bit's start under tern-sim (a mode signaled that nobody sent). */
#define MB_OFF_US BB_ON_US
/* Signaling end to STXON of the frame: cc2420_send loads the TX FIFO over
 * SPI first (RB measured 260 us from a slot timer to STXON). */
#define MB_SEND_MARGIN_US 300u

typedef enum {
    MB_OK = 0,
    MB_EINVAL,         /* a zero, missing or out-of-range field (named in the text) */
    MB_ENOSCHEDULE,    /* an MB region of the BCS configuration has no schedule */
    MB_ENOREGION,      /* a schedule for a region id no MB region has */
    MB_EDUPLICATE,     /* two schedules for one region id */
    MB_ESLOT_SHORT,    /* slot_us cannot hold lead, signaling and a max_len frame */
    MB_EREGION_SHORT,  /* the slots do not end by t2 in a region with that id */
    MB_STATUS_COUNT
} mb_status;

const char *mb_status_name(mb_status s);

typedef struct {
    uint8_t region_id;       /* the BCS region id (protocol BCS_MAC_MB) it divides */
    uint8_t max_len;         /* MPDU bytes (header + payload, FCS excluded) a slot holds */
    uint16_t slot_us;
    uint8_t n_slots;         /* 1..MB_MAX_SLOTS */
    uint8_t n_modes;         /* 1..MB_MAX_MODES (1: no signaling, plain TDMA) */
    const uint16_t *senders; /* n_slots * n_modes node ids (or MB_NONE), slot-major */
} mb_schedule;

typedef struct {
    const mb_schedule *schedules;
    uint8_t n_schedules;
    uint8_t n_hops;          /* how far a mode bit must travel: the network's diameter */
    uint16_t node_id;        /* whose slots this node's are */
    /* Optional, at interrupt level: slot `slot` of the running region runs
     * in `mode` (called on every node as soon as signaling ends). */
    void (*decided)(uint8_t slot, uint8_t mode);
} mb_config;

typedef struct {
    mb_status code;
    int8_t schedule; /* index of the schedule at fault, -1 if none */
    char text[64];
} mb_error;

/* The durations of the slot layout (us), for d_maxOffset, the hops a bit
 * travels and the number of modes; and the slot and region lengths they
 * need for a frame of max_len MPDU bytes. `region_us` is one such slot in
 * a region: d_maxOffset before t1, d_stop after t2 (bcs.h). The first
 * figures, without MB_SEND_MARGIN_US, are the protocol's on a CC2420;
 * `slot_us` includes tern's send margin. */
typedef struct {
    uint32_t hop_us;      /* a burst's start to its relay's start, at most */
    uint32_t window_us;   /* W: one mode bit */
    uint32_t lead_us;     /* the quiet part before signaling */
    uint32_t signal_us;   /* lead + bits * W */
    uint32_t air_us;      /* 192 us + the max_len frame with SHR, PHR, FCS */
    uint32_t region_min_us; /* d_maxOffset + signal + air + d_stop: seed 004's figure */
    uint32_t slot_us;     /* signal + MB_SEND_MARGIN_US + air: what mb_init asks for */
} mb_timing;

void mb_timing_of(uint32_t max_offset_us, uint8_t n_hops, uint8_t n_modes, uint8_t max_len,
                  mb_timing *t);

typedef struct {
    uint16_t slots;        /* slots signaled (not counting empty ones) */
    uint16_t requested;    /* slots in which this node requested a mode */
    uint16_t won;          /* ... and its mode was decided: it sent */
    uint16_t lost;         /* ... and a higher mode was decided */
    uint16_t sent;         /* frames completed */
    uint16_t bursts;       /* bursts sent: own bits */
    uint16_t relayed;      /* bursts sent: relays */
    uint16_t late;         /* a slot's timer or burst too late to take part: silent in it */
    uint16_t too_long;     /* frames longer than max_len: failed tries */
    uint16_t tx_failed;    /* cc2420_send or a burst refused, or the frame failed on air */
    uint16_t overrun;      /* a transmission still under way at t2 (must stay 0) */
    uint16_t rx;           /* data frames passed to the mux */
    uint16_t rx_unexpected; /* a data frame from another node than the decided mode's sender */
    uint16_t mode[MB_MAX_MODES]; /* slots decided in each mode */
    uint16_t max_delay;    /* the largest delay from a slot timer's time to its handler (ticks) */
} mb_counters;

extern const bcs_mac mac_mb;

/* Check the schedules against the BCS configuration and keep them. Before
 * bcs_start. */
mb_status mb_init(const mb_config *cfg, const bcs_config *bcs, mb_error *err);
const mb_counters *mb_stats(void);

#endif
