/*
 * stimulus.c - pulses on a node's input pin, scheduled in the node's own
 * event queue (so it runs on the node's thread, in exact simulated time).
 */
#include <math.h>
#include <stdlib.h>

#include "stimulus.h"

struct stimulus {
	struct stimulus_config cfg;
	uint64_t prng;
	uint64_t emitted;
};

/* The gap to the next pulse's rising edge. */
static sim_ps gap(struct stimulus *s)
{
	if (s->cfg.kind == STIMULUS_PERIODIC)
		return s->cfg.period_ps;
	double seconds = -log(1.0 - sim_uniform(&s->prng)) / s->cfg.rate_hz;
	sim_ps g = (sim_ps)llround(seconds * 1e12);
	/* a pulse cannot start before the previous one has ended */
	return g > s->cfg.width_ps ? g : s->cfg.width_ps + 1;
}

static void edge(struct sim_node *node, sim_ps when, void *arg, uint32_t level)
{
	struct stimulus *s = arg;
	node_drive_pin(node, s->cfg.port, s->cfg.bit, (int)level, when);
	if (level) {
		s->emitted++;
		/* times past 2^64 ps (213 days) never come: not scheduled, not wrapped */
		if (when <= SIM_PS_MAX - s->cfg.width_ps)
			node_at(node, when + s->cfg.width_ps, edge, s, 0);
		sim_ps g = gap(s);
		if ((!s->cfg.count || s->emitted < s->cfg.count) && when <= SIM_PS_MAX - g)
			node_at(node, when + g, edge, s, 1);
	}
}

int stimulus_attach(struct sim_node *node, const struct stimulus_config *cfg, uint64_t seed, uint32_t k)
{
	if (!node_pin_irq(node, cfg->port, cfg->bit))
		return -1;
	struct stimulus *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	s->cfg = *cfg;
	s->prng = seed ^ (0xD6E8FEB86659FD93ull * (k + 1));
	node_drive_pin(node, cfg->port, cfg->bit, 0, 0);
	sim_ps g = cfg->kind == STIMULUS_PERIODIC ? 0 : gap(s);
	if (cfg->start_ps <= SIM_PS_MAX - g)
		node_at(node, cfg->start_ps + g, edge, s, 1);
	return 0;
}
