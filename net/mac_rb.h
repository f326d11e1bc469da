/* RB, the reservation-based MAC protocol (seed 004 §3.1): TDMA with
 * exclusive slot reservations inside a slot region.
 *
 * An RB region is divided into n_slots slots of slot_us, from its hand-over
 * time t1 on; slot k belongs to node owners[k] (RB_FREE: to nobody). The
 * schedule is configuration data, the same on every node (like the BCS's),
 * and checked by rb_init() against the BCS configuration. In each of its
 * own slots a node sends one frame -- the head of the best TX TO bound to
 * the region -- at the slot's start, without CCA: the slot is its alone,
 * so there is nothing to contend for and, with every node's slot bounds
 * within d_maxOffset of each other, no collision.
 *
 * A slot must hold the longest frame it is meant for (max_len MPDU bytes)
 * with the chip's RX->TX calibration before it and d_maxOffset after it,
 * so that the next owner, whose clock may run up to d_maxOffset ahead,
 * starts after the frame has ended everywhere; plus RB_SEND_MARGIN_US for
 * the interrupt path from the slot's timer to the strobe. A slot's timer
 * that comes so late that the frame could not end in time leaves the frame
 * queued for the next own slot (counter late). rb_init refuses
 * shorter slots (RB_ESLOT_SHORT) and schedules that do not end by t2
 * (RB_EREGION_SHORT). A frame longer than max_len is not sent: it counts as
 * a failed try (counter too_long), so the multiplexer confirms it
 * MUX_EFAILED after its retransmissions. */
#ifndef TERN_NET_MAC_RB_H
#define TERN_NET_MAC_RB_H

#include <stdint.h>

#include "bcs.h"

#define RB_FREE 0xFFFF       /* owners[k]: a slot nobody sends in */
#define RB_MAX_SCHEDULES 4   /* RB region ids a node can have schedules for */
#define RB_MAX_SLOTS 32
/* Slot start to STXON: the timer interrupt's entry and mux_pick and loading
 * the TX FIFO, measured 260 us under tern-sim with a 17-byte MPDU (the
 * kernel's 64-bit clock reads in the interrupt paths, docs/bips.md). */
#define RB_SEND_MARGIN_US 300

typedef enum {
    RB_OK = 0,
    RB_EINVAL,         /* a zero, missing or out-of-range field (named in the text) */
    RB_ENOSCHEDULE,    /* an RB region of the BCS configuration has no schedule */
    RB_ENOREGION,      /* a schedule for a region id no RB region has */
    RB_EDUPLICATE,     /* two schedules for one region id */
    RB_ESLOT_SHORT,    /* slot_us cannot hold a max_len frame and its guards */
    RB_EREGION_SHORT,  /* the slots do not end by t2 in a region with that id */
    RB_STATUS_COUNT
} rb_status;

const char *rb_status_name(rb_status s);

typedef struct {
    uint8_t region_id;       /* the BCS region id (protocol BCS_MAC_RB) it divides */
    uint8_t max_len;         /* MPDU bytes (header + payload, FCS excluded) a slot holds */
    uint16_t slot_us;
    uint8_t n_slots;         /* 1..RB_MAX_SLOTS */
    const uint16_t *owners;  /* n_slots node ids (or RB_FREE) */
} rb_schedule;

typedef struct {
    const rb_schedule *schedules;
    uint8_t n_schedules;
    uint16_t node_id;        /* whose slots this node's are */
} rb_config;

typedef struct {
    rb_status code;
    int8_t schedule; /* index of the schedule at fault, -1 if none */
    char text[64];
} rb_error;

typedef struct {
    uint16_t slots_own;   /* own slots that came */
    uint16_t sent;        /* frames completed */
    uint16_t empty;       /* own slots with nothing to send */
    uint16_t too_long;    /* frames longer than max_len: failed tries */
    uint16_t late;        /* the slot's timer came too late to end in the slot: frame kept */
    uint16_t tx_failed;   /* cc2420_send refused, or the frame failed on air */
    uint16_t overrun;     /* a transmission still under way at t2 (must stay 0) */
    uint16_t rx;          /* data frames passed to the mux */
    uint16_t max_delay;   /* the largest delay from a slot's start to its timer handler (ticks) */
} rb_counters;

extern const bcs_mac mac_rb;

/* Check the schedules against the BCS configuration and keep them. Before
 * bcs_start. */
rb_status rb_init(const rb_config *cfg, const bcs_config *bcs, rb_error *err);
const rb_counters *rb_stats(void);

#endif
