/*
 * inject.c - a raw frame on the air (inject.h). Announced to the medium
 * 12 symbols before it starts, like a radio's transmission, from an event
 * in the node's own queue; the node's radio knows nothing of it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cc2420.h"
#include "inject.h"

#define ANNOUNCE_PS (12 * 16 * PS_PER_US)	/* the CC2420's STXON lead: the medium's lookahead */

struct injection {
	struct inject_config cfg;
	uint64_t id;
};

static void announce(struct sim_node *node, sim_ps when, void *arg, uint32_t unused)
{
	(void)unused;
	struct injection *in = arg;
	const struct inject_config *c = &in->cfg;
	struct tx_announce a = {
		.id = in->id, .kind = TX_FRAME, .channel = c->channel, .power_dbm = 0, .start = when + ANNOUNCE_PS,
	};
	uint8_t len = c->n_bytes;
	memcpy(a.psdu, c->psdu, len);
	if (c->fcs != INJECT_FCS_RAW) {
		uint16_t fcs = ieee802154_fcs(a.psdu, len);
		if (c->fcs == INJECT_FCS_BAD)
			fcs ^= 0x0001;
		a.psdu[len++] = (uint8_t)fcs;
		a.psdu[len++] = (uint8_t)(fcs >> 8);
	}
	a.len = len;
	a.phr = (uint8_t)(c->phr >= 0 ? c->phr : len);
	a.end = a.start + (PHY_SHR_BYTES + 1 + (sim_ps)len) * PHY_BYTE_PS;
	node_announce(node, &a);
	if (c->stop_after >= 0 && c->stop_after < len)
		node_stop_tx(node, a.id, a.start + (PHY_SHR_BYTES + 1 + (sim_ps)c->stop_after) * PHY_BYTE_PS);
	log_event(&node->log, a.start, node->index,
		  "\"event\":\"inject\",\"tx\":%" PRIu64 ",\"phr\":%u,\"len\":%u,\"fcs\":\"%s\",\"stop_after\":%d", a.id,
		  a.phr, len, c->fcs == INJECT_FCS_GOOD ? "good" : c->fcs == INJECT_FCS_BAD ? "bad" : "raw",
		  c->stop_after);
}

int inject_attach(struct sim_node *node, const struct inject_config *cfg, uint32_t k)
{
	if (!node->has_radio || cfg->at_ps < ANNOUNCE_PS)
		return -1;
	size_t total = cfg->n_bytes + (cfg->fcs == INJECT_FCS_RAW ? 0u : 2u);
	if (total == 0 || total > FRAME_MAX)
		return -1;
	struct injection *in = calloc(1, sizeof *in);
	if (!in)
		return -1;
	in->cfg = *cfg;
	/* apart from the radio's own ids (index << 32 | its count) */
	in->id = (uint64_t)node->index << 32 | 0x80000000u | k;
	node_at(node, cfg->at_ps - ANNOUNCE_PS, announce, in, 0);
	return 0;
}
