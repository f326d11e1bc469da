/* Processor-bus driver: the bus between the processors of one
 * multi-processor node (seed 002's mPlatform), through tern-sim's register
 * interface (tools/simavr/tern_simavr_abi.h, TERN_BUS_*; docs/tern-sim.md,
 * "Processor bus").
 *
 * A frame carries 1..PROCBUS_FRAME_MAX bytes from this processor to one
 * other (address 0..count-1) or to all others (PROCBUS_BROADCAST). The bus
 * has one transmit buffer per processor and hardware flow control: a frame
 * handed over is delivered, never dropped for want of room at a receiver.
 *
 * Sending never waits: procbus_send() refuses with PROCBUS_EBUSY while the
 * previous frame has not arrived yet (the caller retries later, e.g. from a
 * timer), so it may be called from a handler or an interrupt.
 *
 * Receiving: the board's bus pin (BOARD_BUS_INT in its board.h, the INTn
 * that tern-sim's bus_irq names) interrupts for each waiting frame; the
 * driver copies it into a heap block (a procbus_frame) and posts it to the
 * configured task and port. Ownership travels with the message, as for any
 * heap payload: tern_take() keeps it, otherwise the kernel frees it when
 * the handler returns. The vector is fixed at link time, so the pin is the
 * board's choice, not an argument.
 *
 * A processor that has stopped for good (no power) acknowledges nothing: a
 * frame to it is lost on the bus, the bus says so (TX_NACK), and the driver
 * counts it (tx_nacked) and tells nack_fn. Until then the next send waits
 * (PROCBUS_EBUSY). A powered-down processor still acknowledges: the frame
 * wakes it.
 *
 * Nothing is dropped silently: every refused send and every frame that is
 * not delivered is counted by reason in procbus_counters. */
#ifndef TERN_PROCBUS_H
#define TERN_PROCBUS_H

#include <stdbool.h>
#include <stdint.h>

#include "tern/types.h"

#define PROCBUS_FRAME_MAX 64   /* TERN_BUS_FRAME_MAX */
#define PROCBUS_BROADCAST 0xFF /* every processor but the sender */

typedef enum {
    PROCBUS_OK = 0,
    PROCBUS_ENOBUS,   /* the bus registers report no bus (count 0, or our address outside it) */
    PROCBUS_ESTATE,   /* not initialised (or initialisation failed) */
    PROCBUS_EINVAL,   /* bad destination (ourselves, beyond count) or length (0, > 64) */
    PROCBUS_EBUSY,    /* the previous frame has not arrived yet: try again later */
    PROCBUS_EREFUSED, /* the bus refused the frame (its error count rose) */
    PROCBUS_STATUS_COUNT
} procbus_status;

/* A stable name such as "PROCBUS_EBUSY". */
const char *procbus_status_name(procbus_status s);

/* Takes a received frame (interrupts disabled), true when done with it;
 * false keeps it on the bus (which holds its sender back) until
 * procbus_poll() offers it again. tern_remote_receive is one. */
typedef bool (*procbus_rx_fn)(uint8_t src, const uint8_t *data, uint8_t len);

/* The frame last sent to bus address dst was not acknowledged: that
 * processor has no power (halted, off for good; a sleeping one
 * acknowledges). The frame is lost. In the bus interrupt or procbus_poll,
 * interrupts disabled; never from inside a send. tern_remote_nack is one. */
typedef void (*procbus_nack_fn)(uint8_t dst);

typedef struct {
    tern_task_id rx_task; /* every received frame goes to (rx_task, rx_port)... */
    tern_port rx_port;
    procbus_rx_fn rx_fn;  /* ...or, when set, to rx_fn instead */
    procbus_nack_fn nack_fn; /* optional: told of each frame not acknowledged */
} procbus_config;

/* The payload of a received-frame message: a heap block. */
typedef struct {
    uint8_t src;    /* the sender's bus address */
    uint8_t len;    /* bytes of data[], 1..PROCBUS_FRAME_MAX */
    uint8_t data[];
} procbus_frame;

/* What went through, and why anything did not. */
typedef struct {
    uint16_t rx_frames;      /* delivered to rx_task or rx_fn */
    uint16_t rx_claimed;     /* delivered to the procbus_claim() function */
    uint16_t rx_bad_len;     /* length 0 or over 64: released unread */
    uint16_t rx_bad_src;     /* sender address outside the bus: released unread */
    uint16_t rx_no_memory;   /* no heap block for it: released, lost */
    uint16_t rx_post_failed; /* tern_send refused the message (pool full, no port...) */
    uint16_t rx_spurious;    /* the bus interrupt came with no frame waiting */
    uint16_t tx_frames;      /* handed to the bus */
    uint16_t tx_busy;        /* refused: the previous frame was still under way */
    uint16_t tx_invalid;     /* refused here: bad destination or length */
    uint16_t tx_refused;     /* refused by the bus itself (TERN_BUS_ERRORS rose) */
    uint16_t tx_nacked;      /* sent, not acknowledged: the destination has no power */
} procbus_counters;

/* Reads the bus address and count, sets up the bus pin (input, rising
 * edge) and enables its interrupt. From a task, once. PROCBUS_ENOBUS
 * without a bus (e.g. under tern-simavr alone). */
procbus_status procbus_init(const procbus_config *cfg);

/* This processor's address and the number of processors on the bus, as
 * read by procbus_init (0 and 0 before it). */
uint8_t procbus_address(void);
uint8_t procbus_count(void);

/* Hands one frame to the bus, copying the payload; PROCBUS_OK means it will
 * be delivered. Any context; never waits. */
procbus_status procbus_send(uint8_t dst, const void *payload, uint8_t len);

/* The same, the frame given in two parts (a header, then a body; either
 * may be empty) written one after the other into the bus's transmit
 * register: the sender needs no buffer for the whole frame on its stack. */
procbus_status procbus_send_parts(uint8_t dst, const void *head, uint8_t head_len,
                                  const void *body, uint8_t body_len);

/* The same, as a timestamped frame: the bus drives the Timer1 input
 * capture pin of this processor and of each destination high while the
 * frame is on the bus, so both ends capture its start on their own clocks
 * (tern_simavr_abi.h, TERN_BUS_SEND_STAMP). For time sync only: it tells
 * captures apart by stamping nothing else. */
procbus_status procbus_send_stamped(uint8_t dst, const void *payload, uint8_t len);

/* Frames whose first byte is `kind` go to fn instead of the configured
 * receiver, in the bus interrupt, and are released when it returns (its
 * result is ignored). Up to PROCBUS_CLAIMS kinds; a later claim of the same
 * kind replaces it; one more kind is refused, PROCBUS_EINVAL. Time sync's
 * frames (procbus_sync.h) and power requests (procbus_power.h) pass by the
 * bus manager this way. */
#define PROCBUS_CLAIMS 2
procbus_status procbus_claim(uint8_t kind, procbus_rx_fn fn);

/* True when a send would not be refused as busy: the last frame has
 * arrived. */
bool procbus_tx_free(void);

/* With rx_fn: offer the frame it refused again, or take one waiting on the
 * bus. Any context. */
void procbus_poll(void);

const procbus_counters *procbus_stats(void);

#endif
