/* CC2420 radio driver (802.15.4, 2.4 GHz) for the ATmega128 on the MicaZ
 * wiring (cc2420.c lists the pins).
 *
 * Use from a task: cc2420_init() powers the chip up, configures it and
 * starts listening. Every received frame that passes the chip's address
 * filter and the CRC arrives as a tern message to the configured task and
 * port: its payload is a heap block (a cc2420_rx_frame) whose ownership
 * travels with the message, like any heap payload (tern_take() keeps it,
 * otherwise it is freed when the handler returns). cc2420_send() loads the
 * TX FIFO and starts the transmission; its outcome arrives later as a
 * message (a cc2420_tx_result) to the configured TX task and port.
 *
 * Nothing is dropped silently: every frame or transmission that does not
 * make it is counted by reason in cc2420_counters. */
#ifndef TERN_CC2420_H
#define TERN_CC2420_H

#include <stdbool.h>
#include <stdint.h>

#include "tern/types.h"

typedef enum {
    CC2420_OK = 0,
    CC2420_ENOCHIP,       /* the oscillator never became stable: no chip answers on the SPI */
    CC2420_EBADCHIP,      /* a chip answers, but its MANFIDL is not the CC2420's */
    CC2420_ESTATE,        /* not initialised (or initialisation failed) */
    CC2420_EINVAL,        /* bad argument: channel outside 11..26, frame length */
    CC2420_EBUSY,         /* a transmission is still under way */
    CC2420_ECHANNEL_BUSY, /* STXONCCA refused: the channel was not clear */
    CC2420_ETX_NOSTART,   /* STXON did not start a transmission (TX_ACTIVE never set) */
    CC2420_ETX_NOSFD,     /* TX_ACTIVE was set but the SFD never went out */
    CC2420_ETX_NOEND,     /* the SFD went out but the frame never ended */
    CC2420_EOFF,          /* the radio is off (cc2420_off): call cc2420_on first */
    CC2420_EWARMING,      /* cc2420_on: the crystal is still starting; call it again later */
    CC2420_STATUS_COUNT
} cc2420_status;

/* A stable name such as "CC2420_ENOCHIP". */
const char *cc2420_status_name(cc2420_status s);

struct cc2420_rx_frame;
struct cc2420_tx_result;

typedef struct {
    uint8_t channel;       /* 11..26 */
    uint16_t pan_id;       /* the chip's address filter accepts this PAN ... */
    uint16_t short_addr;   /* ... and this short address (or broadcast 0xffff) */
    tern_task_id rx_task;  /* every received frame goes to (rx_task, rx_port) */
    tern_port rx_port;
    tern_task_id tx_task;  /* the outcome of every cc2420_send() that returned */
    tern_port tx_port;     /* CC2420_OK goes to (tx_task, tx_port) */
    /* Interrupt-level clients (net/bcs.c: the communication scheduler runs
     * MAC protocols at interrupt level, never waiting for a task). When
     * set, a received frame goes to rx_isr instead of (rx_task, rx_port)
     * -- the heap block is the hook's to keep or free -- and a
     * transmission's outcome to tx_isr instead of (tx_task, tx_port). Both
     * are called in interrupt context, interrupts masked. */
    void (*rx_isr)(struct cc2420_rx_frame *f);
    void (*tx_isr)(const struct cc2420_tx_result *r);
    /* Optional: called in the SFD capture interrupt when a frame being
     * received passed its SFD, with the captured (hardware) kernel time,
     * before the frame itself is known (it may still be dropped).
     * Seed 004 §5.3's receivers raise a pin here. */
    void (*sfd_isr)(tern_time sfd);
} cc2420_config;

/* The payload of a received-frame message: a heap block. */
typedef struct cc2420_rx_frame {
    tern_time sfd;    /* kernel time (tern_now) of the frame's SFD; 0: unknown */
    int8_t rssi_dbm;  /* RSSI over the first 8 symbols, in dBm */
    uint8_t lqi;      /* the chip's correlation value, 0..127 */
    uint8_t len;      /* bytes of data[]: the MPDU without its FCS */
    uint8_t data[];   /* the MPDU from the frame control field on */
} cc2420_rx_frame;

/* The payload of a transmission-outcome message. It points at the driver's
 * own copy, valid until the next cc2420_send(): read it in the handler. */
typedef struct cc2420_tx_result {
    uint8_t status;   /* cc2420_status: CC2420_OK or CC2420_ETX_* */
    uint8_t len;      /* MPDU bytes sent, FCS excluded */
    tern_time sfd;    /* kernel time the SFD went out; 0 if it never did */
} cc2420_tx_result;

/* Why frames and transmissions were lost, and what went through. */
typedef struct {
    uint16_t rx_frames;        /* delivered to rx_task */
    uint16_t rx_bad_crc;       /* CRC_OK clear in the appended status byte */
    uint16_t rx_len_invalid;   /* length byte > 127: FIFO flushed */
    uint16_t rx_len_past_fifo; /* the FIFO ran dry before `length` bytes: flushed */
    uint16_t rx_too_short;     /* shorter than an acknowledgement (5 bytes with FCS) */
    uint16_t rx_no_memory;     /* no heap block for the frame */
    uint16_t rx_post_failed;   /* tern_send refused the message (pool full, no port...) */
    uint16_t rx_overflows;     /* RX FIFO overflow: FIFOP high, FIFO low; flushed */
    uint16_t rx_sfd_unknown;   /* delivered, but its SFD time could not be told (sfd 0) */
    uint16_t tx_frames;        /* sent completely */
    uint16_t tx_busy;          /* cc2420_send while one was under way */
    uint16_t tx_cca_busy;      /* STXONCCA refused (busy channel) */
    uint16_t tx_no_start;      /* STXON refused */
    uint16_t tx_no_sfd;        /* started, SFD never went out */
    uint16_t tx_no_end;        /* SFD out, frame never ended */
    uint16_t tx_post_failed;   /* the outcome could not be posted */
    uint16_t tx_bursts;        /* black bursts started (cc2420_burst_on) */
    uint16_t sfd_missed_edges; /* an SFD edge came and went before it was seen */
    uint16_t spi_stalls;       /* SPIF never set within its bound */
} cc2420_counters;

/* Power up (VREG_EN, 0.6 ms, RESETn pulse, SXOSCON, wait for the crystal
 * with a bound), check the chip id, configure (AUTOCRC, address filter,
 * FIFOP threshold, security off, channel, PAN id, short address), turn the
 * receiver on and enable the FIFOP and SFD interrupts. From a task, with
 * interrupts enabled; takes ~2 ms. On an error the chip is powered down. */
cc2420_status cc2420_init(const cc2420_config *cfg);

/* Retune (the receiver is restarted on the new channel). */
cc2420_status cc2420_set_channel(uint8_t channel);
/* The address filter's PAN id and short address. */
cc2420_status cc2420_set_address(uint16_t pan_id, uint16_t short_addr);

/* Send one MPDU (header and payload; the chip appends the FCS), at most
 * 125 bytes. With `cca` the chip sends only if the channel is clear
 * (STXONCCA) and CC2420_ECHANNEL_BUSY says it was not. CC2420_OK means the
 * transmission is under way: its outcome comes as a message. */
cc2420_status cc2420_send(const uint8_t *mpdu, uint8_t len, bool cca);

/* Black bursts (seed 004: BBS and ACTP), from tasks or interrupts; neither
 * waits. cc2420_burst_on() puts an unmodulated carrier on the air
 * (MDMCTRL1 TX_MODE 2, DACTST 0x1800, STXON): energy without a frame,
 * from 12 symbols (192 us) after the strobe until cc2420_burst_off()
 * (SRFOFF: one symbol later), which also returns the chip to buffered
 * mode and RX (listening 12 symbols later). Receivers see a burst on CCA
 * and RSSI only; no SFD, no frame, no tx_isr. While a burst is on,
 * cc2420_send and cc2420_off answer CC2420_EBUSY; cc2420_burst_off without
 * a burst is CC2420_ESTATE. */
cc2420_status cc2420_burst_on(void);
cc2420_status cc2420_burst_off(void);

/* Duty cycling, from tasks or interrupts; neither waits. cc2420_off()
 * stops the receiver (SRFOFF) and the crystal (SXOSCOFF): the chip keeps
 * its registers and RAM (address, channel) and draws the power-down
 * current; a frame being received is lost (and counted by the simulator,
 * not here: it never reached the FIFO), the RX FIFO is flushed, and
 * cc2420_send() answers CC2420_EOFF. Refused with CC2420_EBUSY while a
 * transmission is under way. cc2420_on() restarts the crystal (SXOSCON)
 * and answers CC2420_EWARMING until it is stable (datasheet: under 1 ms);
 * called again once it is, it starts the receiver (SRXON: listening 12
 * symbols later, CCA valid 8 symbols after that) and answers CC2420_OK.
 * On an on radio, cc2420_on() is CC2420_OK and changes nothing. */
cc2420_status cc2420_off(void);
cc2420_status cc2420_on(void);
bool cc2420_is_on(void);

/* The CCA pin right now (true: clear). */
bool cc2420_channel_clear(void);

const cc2420_counters *cc2420_stats(void);

#endif
