/*
 * medium.h - the radio medium of tern-sim: who hears which transmission, at
 * what power, and which receptions a loss draw spoils; the PCAP of every
 * frame on air. Runs between lockstep windows, on the main thread only.
 */
#ifndef TERN_SIM_MEDIUM_H
#define TERN_SIM_MEDIUM_H

#include "sim.h"

enum medium_model { MEDIUM_UDGM, MEDIUM_TABLE };

struct link {
	uint32_t from, to;
	double prr;
	double rssi_dbm;	/* at 0 dBm output; follows the sender's power */
};

struct medium_config {
	enum medium_model model;
	double tx_range_m, int_range_m;
	double success_tx, success_rx;
	double capture_db;
	uint8_t channel;
	struct link *links;
	size_t n_links;
};

struct medium;

struct medium *medium_new(const struct medium_config *cfg, struct sim_node **nodes, size_t n_nodes,
			  uint64_t seed, FILE *pcap);
/* Take what the nodes that ran (in index order) announced in the window. */
void medium_collect(struct medium *m, struct sim_node **ran, size_t n_ran);
/* Hand the receivers every signal start and end before `until`; called at
 * the start of each window, before the nodes run to `until`. */
void medium_deliver(struct medium *m, sim_ps until);
/* The earliest start or end not yet delivered (SIM_PS_MAX: none). */
sim_ps medium_next(const struct medium *m);
/* Is a transmission announced or on air? Then one can be stopped early. */
bool medium_busy(const struct medium *m);
struct log_buf *medium_log(struct medium *m);
/* Write the remaining frames to the PCAP. */
void medium_finish(struct medium *m);

#endif
