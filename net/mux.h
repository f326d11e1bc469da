/* The multiplexer (seed 004 §3.3): between tasks and the MAC protocols.
 *
 * TX TOs (transmission opportunities) are queues of frames with an id, a
 * priority, an order (FIFO, or EDF by each frame's deadline), a depth, a
 * payload length limit, a number of retransmissions, and a mask of the
 * slot-region ids they are bound to. A task enqueues with mux_send();
 * at a region's start the BCS hands the head of the highest-priority
 * non-empty TX TO bound to that region to the region's protocol
 * (mux_pick), which reports the outcome (mux_done) or gives the frame back
 * unsent (mux_release). A frame's outcome -- sent, or failed after its
 * retransmissions, or late -- is confirmed to the task that enqueued it
 * with a mux_confirm message, so several tasks can share a TO.
 *
 * RX TOs deliver every data frame received in the regions they are bound
 * to, as a cc2420_rx_frame heap message, to each of their destinations
 * (task, port): the first gets the received block, the others copies.
 *
 * Frames are 802.15.4 data frames built here: frame control, sequence,
 * PAN id, destination and source short addresses, then the payload.
 *
 * Configuration is data, checked by mux_start(). Nothing is dropped
 * silently: every refusal has a status, every loss a counter. */
#ifndef TERN_NET_MUX_H
#define TERN_NET_MUX_H

#include <stdint.h>

#include "bcs.h"
#include "cc2420.h"
#include "tern/app.h"
#include "tern/types.h"

typedef enum {
    MUX_OK = 0,
    MUX_EINVAL,     /* a bad field in the configuration or call (named in the text) */
    MUX_ENOTO,      /* no TX TO with that id */
    MUX_ETOOLONG,   /* payload longer than the TO's max_len (counted: too_long) */
    MUX_EFULL,      /* the TO holds `depth` frames already (counted: full) */
    MUX_EDUPLICATE, /* two TOs with one id */
    MUX_ENOREGION,  /* a TO bound to a region id no region of the BCS has */
    MUX_ESTATE,     /* not started, or started twice */
    /* Confirmations only: */
    MUX_EFAILED,    /* the protocol failed on every try (channel busy, radio error) */
    MUX_ELATE,      /* EDF: its deadline passed before it could be sent */
    MUX_STATUS_COUNT
} mux_status;

const char *mux_status_name(mux_status s);

typedef enum { MUX_FIFO = 0, MUX_EDF = 1 } mux_order;

#define MUX_HDR_LEN 9          /* FCF 2, sequence 1, PAN 2, destination 2, source 2 */
#define MUX_MAX_PAYLOAD 116    /* 127 - FCS 2 - header 9 */
#define MUX_BROADCAST 0xFFFF
#define MUX_NO_CONFIRM 0xFF    /* as confirm_port: no confirmation wanted */

/* One frame in a TX TO. */
typedef struct mux_entry {
    tern_time deadline; /* EDF order; 0: none */
    uint16_t tag;       /* the sender's, echoed in the confirmation */
    uint8_t len;        /* MPDU bytes (header + payload) */
    uint8_t tries;      /* transmissions attempted so far */
    uint8_t to;         /* index of its TO */
    tern_task_id task;  /* who enqueued it */
    tern_port confirm_port;
    uint8_t *mpdu;      /* its bytes in the TO's storage */
} mux_entry;

/* Storage of a TX TO: MUX_TX_STORAGE(name, depth, max_len) declares
 * name_entries and name_bytes; MUX_TX_TO fills a descriptor from them. */
#define MUX_TX_STORAGE(name, depth, max_len)                                                \
    static mux_entry name##_entries[depth];                                                  \
    static uint8_t name##_bytes[(depth) * (MUX_HDR_LEN + (max_len))]

typedef struct {
    uint8_t id;
    uint8_t priority; /* higher first */
    uint8_t order;    /* mux_order */
    uint8_t depth;    /* frames it holds, 1..16 */
    uint8_t max_len;  /* payload bytes, 1..MUX_MAX_PAYLOAD */
    uint8_t retries;  /* retransmissions after a failed try */
    uint16_t regions; /* bit r: bound to slot-region id r */
    mux_entry *entries; /* depth of them */
    uint8_t *bytes;     /* depth * (MUX_HDR_LEN + max_len) */
} mux_tx_desc;

typedef struct {
    uint8_t id;
    uint16_t regions;
    uint8_t n_dests;
    const tern_endpoint *dests;
} mux_rx_desc;

typedef struct {
    uint16_t pan_id;
    uint16_t short_addr; /* the node's: source of every frame */
    const mux_tx_desc *tx;
    uint8_t n_tx;
    const mux_rx_desc *rx;
    uint8_t n_rx;
} mux_config;

typedef struct {
    mux_status code;
    int8_t tx; /* index of the TX or RX TO at fault, -1 if none */
    int8_t rx;
    char text[64];
} mux_error;

/* The payload of a confirmation message (a heap block). */
typedef struct {
    uint8_t to_id;
    uint8_t status; /* mux_status: MUX_OK, MUX_EFAILED, MUX_ELATE */
    uint8_t tries;
    uint16_t tag;
    tern_time sfd;  /* when the frame's SFD went out (MUX_OK) */
} mux_confirm;

#define MUX_MAX_TX 4
#define MUX_MAX_RX 4

typedef struct {
    uint16_t enqueued, full, sent, failed, late, retries, confirm_lost;
    uint16_t too_long; /* mux_send refused MUX_ETOOLONG */
} mux_tx_counters;

typedef struct {
    uint16_t delivered;   /* messages posted (one per destination) */
    uint16_t no_memory;   /* a copy for a further destination: no heap */
    uint16_t post_failed; /* tern_send refused */
} mux_rx_counters;

typedef struct {
    uint16_t rx_no_to;      /* a data frame in a region no RX TO is bound to */
    uint16_t rx_malformed;  /* shorter than the header, or not a data frame: dropped */
    uint16_t rx_foreign;    /* another PAN, or addressed to another node */
} mux_counters;

/* Checks against the BCS configuration (region ids must exist) and starts.
 * Before bcs_start. */
mux_status mux_start(const mux_config *cfg, const bcs_config *bcs, mux_error *err);

/* From a task: enqueue `len` payload bytes for `dst` in TX TO `to_id`.
 * deadline: for EDF TOs (kernel time; 0: none). tag: echoed in the
 * confirmation, which goes to (caller, confirm_port) unless confirm_port
 * is MUX_NO_CONFIRM. */
mux_status mux_send(uint8_t to_id, uint16_t dst, const void *payload, uint8_t len,
                    tern_time deadline, uint16_t tag, tern_port confirm_port);

/* For protocols, at interrupt level. mux_pick: the head of the best TX TO
 * bound to region `region_id`, reserved for the caller until mux_done or
 * mux_release (NULL: nothing). mux_done: the outcome of one try (success:
 * CC2420_OK, with the SFD time). mux_release: not tried, back to its TO. */
mux_entry *mux_pick(uint8_t region_id);
void mux_done(mux_entry *e, bool ok, tern_time sfd);
void mux_release(mux_entry *e);
/* The priority of the TO an entry comes from (contention windows by priority). */
uint8_t mux_priority(const mux_entry *e);

/* A data frame received in region `region_id`: to the RX TOs (the block is
 * the mux's). */
void mux_rx(cc2420_rx_frame *f, uint8_t region_id);

/* Header fields of a received frame (checked by mux_rx before delivery). */
uint16_t mux_frame_src(const cc2420_rx_frame *f);
const uint8_t *mux_frame_payload(const cc2420_rx_frame *f, uint8_t *len);

const mux_counters *mux_stats(void);
const mux_tx_counters *mux_tx_stats(uint8_t index);
const mux_rx_counters *mux_rx_stats(uint8_t index);

#endif
