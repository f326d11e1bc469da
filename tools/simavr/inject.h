/*
 * inject.h - a raw frame put on the air at a chosen time, from a node's
 * position but not by its radio: a length byte (PHR) that need not match
 * the bytes sent, a good, bad or raw FCS, a transmission cut short. The
 * instrument for testing what a receiver's driver and stack do with frames
 * no correct sender makes (docs/tern-sim.md, "Injected frames").
 */
#ifndef TERN_SIM_INJECT_H
#define TERN_SIM_INJECT_H

#include "sim.h"

enum inject_fcs { INJECT_FCS_GOOD, INJECT_FCS_BAD, INJECT_FCS_RAW };

struct inject_config {
	sim_ps at_ps;		/* the first preamble symbol on air */
	uint8_t psdu[FRAME_MAX];
	uint8_t n_bytes;	/* given bytes; GOOD/BAD append the FCS (2 more) */
	enum inject_fcs fcs;
	int phr;		/* the length byte sent; -1: the PSDU's length */
	int stop_after;		/* PSDU bytes on air before the signal stops; -1: all */
	uint8_t channel;
};

/* Schedule the injection from `node`'s position; k numbers it (its tx id). */
int inject_attach(struct sim_node *node, const struct inject_config *cfg, uint32_t k);

#endif
