/*
 * medium.c - the radio medium: unit disk (as Cooja's UDGM) or a table of
 * links; signals delivered to every node in interference range at exact
 * times; a seeded generator draws every loss, in a fixed order.
 *
 * A transmission is announced when its sender strobes, 12 symbols before its
 * first symbol goes on air; an early stop takes effect one symbol after the
 * strobe that orders it. Both are later than the end of the window in which
 * the node ran, so the medium can hand every receiver its signals in time.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cc2420.h"
#include "medium.h"

struct tx_rec {
	struct tx_announce a;
	uint32_t src;
	bool aborted;
	bool start_delivered, end_delivered, written;
	struct air_signal *signals;
	size_t n_signals;
	struct tx_rec *next;	/* in (start, id) order */
};

/* Unit disk: the nodes with a radio within interference range of each node,
 * in index order (the order of the loss draws), found once: positions do
 * not change. */
struct neighbour {
	uint32_t node;
	double distance_m;
};

struct neighbours {
	struct neighbour *list;
	size_t n;
};

struct medium {
	struct medium_config cfg;
	struct neighbours *neighbours;	/* per node, udgm only */
	struct sim_node **nodes;
	size_t n_nodes;
	uint64_t prng;
	FILE *pcap;
	struct tx_rec *head;
	sim_ps reached;	/* every node has run this far: the last call's `until` */
	struct log_buf log;
};

/* A receiver may still read a signal's announcement this long after its
 * start: a garbled length byte can stretch a reception to 127 bytes. */
#define RECEPTION_MAX_PS ((PHY_SHR_BYTES + 1 + FRAME_MAX + 2) * PHY_BYTE_PS)

static void pcap_header(FILE *f)
{
	/* nanosecond-resolution pcap, LINKTYPE_IEEE802_15_4_WITHFCS */
	const uint32_t h[6] = { 0xA1B23C4D, 0x00040002, 0, 0, 65535, 195 };
	fwrite(h, sizeof h, 1, f);
}

struct cell_entry {
	int64_t cx, cy;
	uint32_t node;
};

static int cell_order(const void *pa, const void *pb)
{
	const struct cell_entry *a = pa, *b = pb;
	if (a->cx != b->cx)
		return a->cx < b->cx ? -1 : 1;
	if (a->cy != b->cy)
		return a->cy < b->cy ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static int neighbour_order(const void *pa, const void *pb)
{
	const struct neighbour *a = pa, *b = pb;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* A grid of cells one interference range wide: a node's neighbours lie in
 * its own cell and the eight around it. */
static void find_neighbours(struct medium *m)
{
	double cell = m->cfg.int_range_m > 0 ? m->cfg.int_range_m : 1.0;
	struct cell_entry *cells = sim_calloc(m->n_nodes, sizeof *cells);
	size_t n_cells = 0;
	for (size_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i]->has_radio)
			cells[n_cells++] = (struct cell_entry){ (int64_t)floor(m->nodes[i]->x / cell),
								(int64_t)floor(m->nodes[i]->y / cell), (uint32_t)i };
	qsort(cells, n_cells, sizeof *cells, cell_order);
	m->neighbours = sim_calloc(m->n_nodes, sizeof *m->neighbours);
	for (size_t k = 0; k < n_cells; k++) {
		const struct sim_node *src = m->nodes[cells[k].node];
		struct neighbours *nb = &m->neighbours[cells[k].node];
		size_t cap = 0;
		for (int64_t dx = -1; dx <= 1; dx++)
			for (int64_t dy = -1; dy <= 1; dy++) {
				struct cell_entry key = { cells[k].cx + dx, cells[k].cy + dy, 0 };
				/* first entry of that cell */
				size_t lo = 0, hi = n_cells;
				while (lo < hi) {
					size_t mid = (lo + hi) / 2;
					if (cell_order(&cells[mid], &key) < 0)
						lo = mid + 1;
					else
						hi = mid;
				}
				for (size_t j = lo; j < n_cells && cells[j].cx == key.cx && cells[j].cy == key.cy; j++) {
					const struct sim_node *n = m->nodes[cells[j].node];
					if (n == src)
						continue;
					double ddx = n->x - src->x, ddy = n->y - src->y, ddz = n->z - src->z;
					double d = sqrt(ddx * ddx + ddy * ddy + ddz * ddz);
					if (d > m->cfg.int_range_m)
						continue;
					if (nb->n == cap) {
						cap = cap ? 2 * cap : 8;
						nb->list = sim_realloc(nb->list, cap * sizeof *nb->list);
					}
					nb->list[nb->n++] = (struct neighbour){ cells[j].node, d };
				}
			}
		qsort(nb->list, nb->n, sizeof *nb->list, neighbour_order);
	}
	free(cells);
}

struct medium *medium_new(const struct medium_config *cfg, struct sim_node **nodes, size_t n_nodes,
			  uint64_t seed, FILE *pcap)
{
	struct medium *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->cfg = *cfg;
	m->nodes = nodes;
	m->n_nodes = n_nodes;
	m->prng = seed ^ 0x6A09E667F3BCC908ull;
	m->pcap = pcap;
	if (pcap)
		pcap_header(pcap);
	if (cfg->model == MEDIUM_UDGM)
		find_neighbours(m);
	return m;
}

struct log_buf *medium_log(struct medium *m) { return &m->log; }

static void add_signal(struct tx_rec *t, const struct air_signal *s)
{
	t->signals = sim_realloc(t->signals, (t->n_signals + 1) * sizeof *t->signals);
	t->signals[t->n_signals++] = *s;
}

/* Who hears it, how strongly, and whether the loss draws let it through. */
static void find_receivers(struct medium *m, struct tx_rec *t)
{
	struct air_signal base = {
		.tx = t->a.id, .from = (uint16_t)t->src, .kind = t->a.kind, .channel = t->a.channel,
		.len = t->a.len, .phr = t->a.phr, .start = t->a.start, .end = t->a.end,
	};
	if (m->cfg.model == MEDIUM_TABLE) {
		for (size_t i = 0; i < m->cfg.n_links; i++) {
			const struct link *l = &m->cfg.links[i];
			if (l->from != t->src || !m->nodes[l->to]->has_radio)
				continue;
			struct air_signal s = base;
			s.to = l->to;
			s.in_range = true;
			s.receivable = sim_uniform(&m->prng) < l->prr;
			s.rx_dbm = l->rssi_dbm + t->a.power_dbm;
			add_signal(t, &s);
		}
		return;
	}
	bool sent_ok = sim_uniform(&m->prng) < m->cfg.success_tx;	/* once per transmission, as UDGM */
	const struct neighbours *nb = &m->neighbours[t->src];
	for (size_t k = 0; k < nb->n; k++) {
		const struct neighbour *e = &nb->list[k];
		struct air_signal s = base;
		s.to = e->node;
		s.in_range = e->distance_m <= m->cfg.tx_range_m;
		s.receivable = s.in_range && sent_ok && sim_uniform(&m->prng) < m->cfg.success_rx;
		/* unit disk: everyone in interference range hears it above the
		 * CC2420's default CCA threshold (-77 dBm), fading with distance */
		s.rx_dbm = t->a.power_dbm - 40.0 -
			30.0 * (m->cfg.int_range_m > 0 ? e->distance_m / m->cfg.int_range_m : 0);
		add_signal(t, &s);
	}
}

static void insert_sorted(struct medium *m, struct tx_rec *t)
{
	struct tx_rec **p = &m->head;
	while (*p && ((*p)->a.start < t->a.start || ((*p)->a.start == t->a.start && (*p)->a.id < t->a.id)))
		p = &(*p)->next;
	t->next = *p;
	*p = t;
}

void medium_collect(struct medium *m, struct sim_node **ran, size_t n_ran)
{
	for (size_t r = 0; r < n_ran; r++) {
		struct sim_node *n = ran[r];
		size_t i = n->index;
		for (size_t k = 0; k < n->n_announces; k++) {
			struct tx_rec *t = sim_calloc(1, sizeof *t);
			t->a = n->announces[k];
			t->src = (uint32_t)i;
			find_receivers(m, t);
			for (size_t s = 0; s < t->n_signals; s++)
				t->signals[s].psdu = t->a.psdu;
			insert_sorted(m, t);
		}
		n->n_announces = 0;
		for (size_t k = 0; k < n->n_stops; k++) {
			const struct tx_stop *stop = &n->stops[k];
			for (struct tx_rec *t = m->head; t; t = t->next) {
				if (t->a.id != stop->id || t->end_delivered || stop->at >= t->a.end)
					continue;
				t->a.end = stop->at < t->a.start ? t->a.start : stop->at;
				t->aborted = true;
				for (size_t s = 0; s < t->n_signals; s++)
					t->signals[s].end = t->a.end;
			}
		}
		n->n_stops = 0;
	}
}

sim_ps medium_next(const struct medium *m)
{
	sim_ps next = SIM_PS_MAX;
	for (const struct tx_rec *t = m->head; t; t = t->next) {
		if (!t->start_delivered && t->a.start < next)
			next = t->a.start;
		else if (t->start_delivered && !t->end_delivered && t->a.end < next)
			next = t->a.end;
	}
	return next;
}

bool medium_busy(const struct medium *m)
{
	for (const struct tx_rec *t = m->head; t; t = t->next)
		if (!t->end_delivered)
			return true;
	return false;
}

static void write_pcap(struct medium *m, const struct tx_rec *t)
{
	if (!m->pcap || t->a.kind != TX_FRAME || t->a.end <= t->a.start)
		return;
	/* the bytes that made it on air: the PSDU starts after SHR and length */
	sim_ps psdu_start = t->a.start + (PHY_SHR_BYTES + 1) * PHY_BYTE_PS;
	uint32_t sent = t->a.len;
	if (t->aborted)
		sent = t->a.end <= psdu_start ? 0 : (uint32_t)((t->a.end - psdu_start) / PHY_BYTE_PS);
	if (sent > t->a.len)
		sent = t->a.len;
	if (sent == 0)
		return;
	sim_ps ns = t->a.start / 1000;
	uint32_t rec[4] = { (uint32_t)(ns / 1000000000u), (uint32_t)(ns % 1000000000u), sent, t->a.len };
	fwrite(rec, sizeof rec, 1, m->pcap);
	fwrite(t->a.psdu, 1, sent, m->pcap);
}

void medium_deliver(struct medium *m, sim_ps until)
{
	for (struct tx_rec *t = m->head; t; t = t->next) {
		if (!t->start_delivered && t->a.start < until) {
			if (t->a.end <= t->a.start) {	/* stopped before it began */
				t->start_delivered = t->end_delivered = t->written = true;
				continue;
			}
			t->start_delivered = true;
			log_event(&m->log, t->a.start, t->src,
				  "\"event\":\"tx_start\",\"tx\":%" PRIu64 ",\"len\":%u,\"channel\":%u,\"kind\":\"%s\"",
				  t->a.id, t->a.len, t->a.channel, t->a.kind == TX_FRAME ? "frame" : "carrier");
			for (size_t s = 0; s < t->n_signals; s++) {
				struct sim_node *n = m->nodes[t->signals[s].to];
				if (n->status == NODE_RUNNING)
					node_at(n, t->a.start, cc2420_air_start, &t->signals[s], 0);
			}
		}
		if (t->start_delivered && !t->end_delivered && t->a.end < until) {
			t->end_delivered = true;
			log_event(&m->log, t->a.end, t->src, "\"event\":\"tx_end\",\"tx\":%" PRIu64 ",\"aborted\":%s",
				  t->a.id, t->aborted ? "true" : "false");
			for (size_t s = 0; s < t->n_signals; s++) {
				struct sim_node *n = m->nodes[t->signals[s].to];
				if (n->status == NODE_RUNNING)
					node_at(n, t->a.end, cc2420_air_end, &t->signals[s], 0);
			}
		}
	}
	/* Write finished frames in start order; free what no receiver can
	 * still look at. The nodes are only at the previous call's `until`
	 * (they run this window after this call): a reception with a garbled
	 * length byte may still be reading the signal anywhere before `keep`. */
	sim_ps reached = m->reached;
	m->reached = until;
	while (m->head && m->head->end_delivered) {
		struct tx_rec *t = m->head;
		if (!t->written) {
			write_pcap(m, t);
			t->written = true;
		}
		sim_ps keep = t->a.end > t->a.start + RECEPTION_MAX_PS ? t->a.end : t->a.start + RECEPTION_MAX_PS;
		if (keep + PHY_BYTE_PS >= reached)
			break;
		m->head = t->next;
		free(t->signals);
		free(t);
	}
}

void medium_finish(struct medium *m)
{
	for (struct tx_rec *t = m->head; t; t = t->next)
		if (!t->written && t->end_delivered)
			write_pcap(m, t);
}
