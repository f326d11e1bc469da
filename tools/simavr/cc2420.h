/*
 * cc2420.h - the CC2420 radio of a tern-sim node, wired as on the MicaZ.
 * Behaviour and its limits: docs/tern-sim.md, "CC2420 model".
 */
#ifndef TERN_SIM_CC2420_H
#define TERN_SIM_CC2420_H

#include "sim.h"

struct cc2420_counters {
	uint64_t frames_sent;		/* frames that went on air complete */
	uint64_t frames_aborted;	/* transmissions stopped by a strobe */
	uint64_t frames_received;	/* complete, good FCS */
	uint64_t frames_bad_fcs;	/* complete, bad FCS */
	uint64_t frames_collided;	/* receptions destroyed by another signal */
	uint64_t frames_lost;		/* in range, not received (off, busy, channel, loss, overflow) */
	uint64_t frames_rejected;	/* address recognition refused them */
	uint64_t rx_overflows;
	uint64_t tx_underflows;
	uint64_t rxfifo_underflows;	/* reads of an empty RX FIFO */
	uint64_t unsupported_strobes;	/* security strobes: not modelled */
};

struct cc2420 *cc2420_attach(struct sim_node *node, double capture_db, uint64_t seed);

/* From the medium, at the signal's start and end at this node. */
void cc2420_air_start(struct sim_node *node, sim_ps when, void *signal, uint32_t unused);
void cc2420_air_end(struct sim_node *node, sim_ps when, void *signal, uint32_t unused);

/* Close the accounting at the end of the run. */
void cc2420_finish(struct cc2420 *radio, sim_ps end);
const struct cc2420_counters *cc2420_counters(const struct cc2420 *radio);
/* Time in each radio state: off (regulator off), power-down, idle, RX, TX. */
enum { CC2420_ACCT_OFF, CC2420_ACCT_POWER_DOWN, CC2420_ACCT_IDLE, CC2420_ACCT_RX, CC2420_ACCT_TX,
       CC2420_ACCT_STATES };
extern const char *const cc2420_acct_names[CC2420_ACCT_STATES];
const sim_ps *cc2420_acct(const struct cc2420 *radio);

/* IEEE 802.15.4 FCS (CRC-16/KERMIT as transmitted, little-endian). */
uint16_t ieee802154_fcs(const uint8_t *data, size_t len);

#endif
