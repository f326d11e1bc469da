/*
 * stimulus.h - a signal generator on a node's input pin: periodic pulses or
 * pulses at Poisson-distributed times, drawn from the scenario's seed. It is
 * the instrument seeds 000 and 001 drove their nodes with (a packet that
 * "arrives", a button, a sensor's data-ready line), kept outside the node so
 * that drawing the next arrival costs the node nothing.
 */
#ifndef TERN_SIM_STIMULUS_H
#define TERN_SIM_STIMULUS_H

#include "sim.h"

enum stimulus_kind { STIMULUS_PERIODIC, STIMULUS_POISSON };

struct stimulus_config {
	char port;
	uint8_t bit;
	enum stimulus_kind kind;
	sim_ps start_ps;	/* the first pulse (periodic), or when arrivals begin (Poisson) */
	sim_ps period_ps;	/* periodic */
	double rate_hz;		/* Poisson */
	sim_ps width_ps;	/* how long the pin stays high */
	uint64_t count;		/* pulses in all; 0: until the end */
};

/* Attach a generator to the node; its draws are seeded from seed and k
 * (the stimulus's index in the config), so runs repeat exactly. */
int stimulus_attach(struct sim_node *node, const struct stimulus_config *cfg, uint64_t seed, uint32_t k);

#endif
