/*
 * bus.c - the processor bus: register interface on each processor (its own
 * state, touched only while it runs) and the arbiter (between windows).
 *
 * Timing: the bus is divided into slots of slot_ps, owned in turn by the
 * processors in address order. A frame sent at time t may leave in a slot of
 * its sender that starts at s >= t + latency, if every destination had room
 * at s - latency; it then occupies the bus for (2 + len) bytes at the
 * configured throughput and arrives at the end of that. Decisions look only
 * at what happened up to latency before the slot, and the window of the
 * lockstep is no longer than that latency: so every slot can be decided
 * between windows, identically whatever the window or thread count.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sim_io.h>

#include "bus.h"
#include "tern_simavr_abi.h"

struct bus_frame {
	uint8_t src, dst, len;
	bool stamp;	/* a timestamped frame: edges on the ICP1 pins */
	uint8_t data[TERN_BUS_FRAME_MAX];
};

struct timed_frame {
	sim_ps t;
	struct bus_frame f;
};

/* One processor's side of the bus. */
struct bus_port {
	struct bus *bus;
	struct sim_node *node;
	uint8_t address;
	char irq_port;
	uint8_t irq_bit;
	char edge_port;	/* ICP1: the frame-edge pin of stamped frames (0: none) */
	uint8_t edge_bit;

	/* registers */
	struct bus_frame tx;
	bool tx_overrun;
	bool tx_free;
	bool tx_nack;	/* the last frame's destination was unpowered: TERN_BUS_TX_NACK */
	struct bus_frame *rx;	/* queue of cfg.rx_frames */
	unsigned rx_head, rx_count, rx_read;
	uint8_t errors;

	/* outbox, emptied by bus_collect */
	struct timed_frame *sent;
	size_t n_sent, cap_sent;
	sim_ps *released;
	size_t n_released, cap_released;

	/* arbiter's view (main thread only) */
	bool pending;
	struct timed_frame waiting;
	unsigned occupied;	/* frames scheduled to it, not yet released */
	sim_ps *releases;	/* release times not yet applied */
	size_t n_releases, cap_releases, releases_head;

	struct bus_counters count;
};

struct bus {
	struct bus_config cfg;
	struct bus_port **ports;
	size_t n_ports;
	sim_ps next_slot;	/* slots starting before it are decided */
	uint64_t slot_index;
	struct log_buf log;
};

struct bus *bus_new(const struct bus_config *cfg)
{
	struct bus *b = calloc(1, sizeof *b);
	if (b)
		b->cfg = *cfg;
	return b;
}

const struct bus_config *bus_config(const struct bus *b) { return &b->cfg; }
struct log_buf *bus_log(struct bus *b) { return &b->log; }

const struct bus_counters *bus_node_counters(const struct sim_node *n)
{
	return n->bus_port ? &n->bus_port->count : NULL;
}

/* --- the processor's registers ------------------------------------------- */

static void set_irq(struct bus_port *p, int level, sim_ps when)
{
	node_drive_pin(p->node, p->irq_port, p->irq_bit, level, when);
}

static void refuse(struct bus_port *p, const char *why)
{
	if (p->errors < 255)
		p->errors++;
	p->count.refused++;
	log_event(&p->node->log, node_now(p->node), p->node->index, "\"event\":\"bus_refused\",\"reason\":\"%s\"",
		  why);
}

static void send_frame(struct bus_port *p)
{
	size_t n = p->bus->n_ports;
	if (!p->tx_free)
		return refuse(p, "busy");
	if (p->tx_overrun || p->tx.len == 0)
		return refuse(p, p->tx.len ? "too long" : "empty");
	if (p->tx.dst != TERN_BUS_BROADCAST && (p->tx.dst >= n || p->tx.dst == p->address))
		return refuse(p, "destination");
	if (p->n_sent == p->cap_sent)
		p->sent = sim_grow(p->sent, &p->cap_sent, sizeof *p->sent);
	p->tx.src = p->address;
	p->sent[p->n_sent++] = (struct timed_frame){ .t = node_now(p->node), .f = p->tx };
	p->tx_free = false;
	p->tx.len = 0;
}

static void next_frame(struct bus_port *p)
{
	if (!p->rx_count)
		return;
	p->rx_head = (p->rx_head + 1) % p->bus->cfg.rx_frames;
	p->rx_count--;
	p->rx_read = 0;
	sim_ps now = node_now(p->node);
	if (p->n_released == p->cap_released)
		p->released = sim_grow(p->released, &p->cap_released, sizeof *p->released);
	p->released[p->n_released++] = now;
	set_irq(p, 0, now);
	if (p->rx_count || p->tx_nack)
		set_irq(p, 1, now);	/* the next one, or the NACK: a new edge */
}

/* TERN_BUS_TX_NACK_CLEAR: the driver has seen the NACK. The pin falls
 * unless a frame waits (then it stays high, as it was). */
static void clear_nack(struct bus_port *p)
{
	if (!p->tx_nack)
		return;
	p->tx_nack = false;
	if (!p->rx_count)
		set_irq(p, 0, node_now(p->node));
}

static uint8_t reg_read(avr_t *avr, avr_io_addr_t addr, void *param)
{
	(void)avr;
	struct bus_port *p = param;
	const struct bus_frame *head = p->rx_count ? &p->rx[p->rx_head] : NULL;
	switch (addr) {
	case TERN_BUS_STATUS_ADDR:
		return (uint8_t)((p->rx_count ? TERN_BUS_RX_READY : 0) | (p->tx_free ? TERN_BUS_TX_FREE : 0) |
				 (p->tx_nack ? TERN_BUS_TX_NACK : 0));
	case TERN_BUS_ADDRESS_ADDR: return p->address;
	case TERN_BUS_COUNT_ADDR: return (uint8_t)p->bus->n_ports;
	case TERN_BUS_RX_SRC_ADDR: return head ? head->src : 0;
	case TERN_BUS_RX_LEN_ADDR: return head ? head->len : 0;
	case TERN_BUS_RX_DATA_ADDR: return head && p->rx_read < head->len ? head->data[p->rx_read++] : 0;
	case TERN_BUS_ERRORS_ADDR: return p->errors;
	default: return 0;
	}
}

static void reg_write(avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
	(void)avr;
	struct bus_port *p = param;
	switch (addr) {
	case TERN_BUS_TX_DST_ADDR:
		p->tx.dst = v;
		p->tx.len = 0;
		p->tx_overrun = false;
		break;
	case TERN_BUS_TX_DATA_ADDR:
		if (p->tx.len < TERN_BUS_FRAME_MAX)
			p->tx.data[p->tx.len++] = v;
		else
			p->tx_overrun = true;
		break;
	case TERN_BUS_TX_SEND_ADDR:
		p->tx.stamp = (v & TERN_BUS_SEND_STAMP) != 0;
		send_frame(p);
		break;
	case TERN_BUS_RX_NEXT_ADDR: next_frame(p); break;
	case TERN_BUS_TX_NACK_CLEAR_ADDR: clear_nack(p); break;
	default: break;
	}
}

int bus_attach(struct bus *b, struct sim_node *n, char irq_port, uint8_t irq_bit)
{
	if (b->n_ports >= 254 || !node_pin_irq(n, irq_port, irq_bit))
		return -1;
	struct bus_port *p = calloc(1, sizeof *p);
	struct bus_frame *rx = calloc(b->cfg.rx_frames, sizeof *rx);
	struct bus_port **ports = realloc(b->ports, (b->n_ports + 1) * sizeof *ports);
	if (!p || !rx || !ports)
		return -1;
	b->ports = ports;
	p->bus = b;
	p->node = n;
	p->address = (uint8_t)b->n_ports;
	p->irq_port = irq_port;
	p->irq_bit = irq_bit;
	p->edge_port = node_icp1_pin(n, &p->edge_bit);
	p->tx_free = true;
	p->rx = rx;
	b->ports[b->n_ports++] = p;
	n->bus_port = p;
	static const avr_io_addr_t readable[] = {
		TERN_BUS_STATUS_ADDR, TERN_BUS_ADDRESS_ADDR, TERN_BUS_COUNT_ADDR, TERN_BUS_RX_SRC_ADDR,
		TERN_BUS_RX_LEN_ADDR, TERN_BUS_RX_DATA_ADDR, TERN_BUS_ERRORS_ADDR,
	};
	static const avr_io_addr_t writable[] = {
		TERN_BUS_TX_DST_ADDR, TERN_BUS_TX_DATA_ADDR, TERN_BUS_TX_SEND_ADDR, TERN_BUS_RX_NEXT_ADDR,
		TERN_BUS_TX_NACK_CLEAR_ADDR,
	};
	for (size_t i = 0; i < sizeof readable / sizeof readable[0]; i++)
		avr_register_io_read(n->avr, readable[i], reg_read, p);
	for (size_t i = 0; i < sizeof writable / sizeof writable[0]; i++)
		avr_register_io_write(n->avr, writable[i], reg_write, p);
	set_irq(p, 0, 0);
	return 0;
}

/* --- events on the processors, at the start and end of a transfer -------- */

/* A stamped frame's edge pin (ICP1) is high while it is on the bus, on its
 * sender and on each destination: the rising edge is the frame's start,
 * captured by Timer1 as a CC2420's SFD is. */
static void frame_edge(struct sim_node *n, sim_ps when, void *arg, uint32_t level)
{
	(void)arg;
	struct bus_port *p = n->bus_port;
	if (p->edge_port)
		node_drive_pin(n, p->edge_port, p->edge_bit, (int)level, when);
}

static void edges_at(struct bus_port *p, sim_ps start, sim_ps end)
{
	if (p->node->status != NODE_RUNNING)
		return;
	node_at(p->node, start, frame_edge, NULL, 1);
	node_at(p->node, end, frame_edge, NULL, 0);
}

static void frame_arrives(struct sim_node *n, sim_ps when, void *arg, uint32_t unused)
{
	(void)unused;
	struct bus_port *p = n->bus_port;
	struct bus_frame *f = arg;
	/* the arbiter reserved the room: the queue cannot be full */
	unsigned tail = (p->rx_head + p->rx_count) % p->bus->cfg.rx_frames;
	p->rx[tail] = *f;
	p->rx_count++;
	p->count.frames_received++;
	free(f);
	if (p->rx_count == 1 && !p->tx_nack)	/* with a NACK waiting the pin is high already */
		set_irq(p, 1, when);
}

/* The end of the sender's frame: TX_FREE again; `nack`: its destination did
 * not acknowledge it (unpowered), said by TX_NACK and an edge on the pin. */
static void frame_delivered(struct sim_node *n, sim_ps when, void *arg, uint32_t nack)
{
	(void)arg;
	struct bus_port *p = n->bus_port;
	p->tx_free = true;
	if (!nack)
		return;
	if (!p->tx_nack && !p->rx_count)
		set_irq(p, 1, when);
	p->tx_nack = true;
}

/* --- the arbiter ------------------------------------------------------------ */

void bus_collect(struct bus *b)
{
	for (size_t i = 0; i < b->n_ports; i++) {
		struct bus_port *p = b->ports[i];
		for (size_t k = 0; k < p->n_sent; k++) {
			/* TX_FREE allows one frame in flight per processor */
			p->pending = true;
			p->waiting = p->sent[k];
		}
		p->n_sent = 0;
		for (size_t k = 0; k < p->n_released; k++) {
			if (p->n_releases == p->cap_releases)
				p->releases = sim_grow(p->releases, &p->cap_releases, sizeof *p->releases);
			p->releases[p->n_releases++] = p->released[k];
		}
		p->n_released = 0;
	}
}

/* Releases up to `seen` count for this slot; later ones do not yet. */
static void apply_releases(struct bus_port *p, sim_ps seen)
{
	while (p->releases_head < p->n_releases && p->releases[p->releases_head] <= seen) {
		p->occupied--;
		p->releases_head++;
	}
	if (p->releases_head == p->n_releases)
		p->releases_head = p->n_releases = 0;
}

static bool has_room(const struct bus *b, const struct bus_port *to)
{
	return to->occupied < b->cfg.rx_frames;
}

/* A processor that stopped for good (halted, exited, crashed) by `seen`
 * has no power at its bus interface: it acknowledges nothing and holds no
 * frame back. One that sleeps, powered down included, still takes frames:
 * they are what wakes it. end_ps <= seen, not the status alone: the
 * decision must not depend on how far the window has run. */
static bool unpowered(const struct bus_port *p, sim_ps seen)
{
	return p->node->status != NODE_RUNNING && p->node->end_ps <= seen;
}

static void transfer(struct bus *b, struct bus_port *src, sim_ps start, sim_ps seen)
{
	const struct bus_frame *f = &src->waiting.f;
	sim_ps bytes = 2u + f->len;
	sim_ps end = start + (bytes * 8 * 1000000000000ull + b->cfg.throughput_bps - 1) / b->cfg.throughput_bps;
	bool nack = false;
	for (size_t i = 0; i < b->n_ports; i++) {
		struct bus_port *to = b->ports[i];
		if (to == src || (f->dst != TERN_BUS_BROADCAST && f->dst != to->address))
			continue;
		if (unpowered(to, seen)) {
			/* a broadcast reaches the others and is acknowledged by them */
			nack = f->dst != TERN_BUS_BROADCAST;
			src->count.nacked++;
			log_event(&b->log, start, src->node->index,
				  "\"event\":\"bus_nack\",\"bus\":\"%s\",\"src\":%u,\"dst\":%u", b->cfg.name, f->src,
				  to->address);
			continue;
		}
		to->occupied++;
		if (f->stamp)
			edges_at(to, start, end);
		struct bus_frame *copy = sim_calloc(1, sizeof *copy);
		*copy = *f;
		if (to->node->status == NODE_RUNNING)
			node_at(to->node, end, frame_arrives, copy, 0);
		else
			free(copy);
	}
	if (f->stamp)
		edges_at(src, start, end);
	if (src->node->status == NODE_RUNNING)
		node_at(src->node, end, frame_delivered, NULL, nack);
	src->count.frames_sent++;
	src->count.bytes_sent += f->len;
	src->count.waited_ps += start - src->waiting.t;
	log_event(&b->log, start, src->node->index,
		  "\"event\":\"bus\",\"bus\":\"%s\",\"src\":%u,\"dst\":%u,\"len\":%u,\"stamp\":%s,\"end_ps\":%" PRIu64,
		  b->cfg.name, f->src, f->dst, f->len, f->stamp ? "true" : "false", end);
	src->pending = false;
}

static bool any_pending(const struct bus *b)
{
	for (size_t i = 0; i < b->n_ports; i++)
		if (b->ports[i]->pending)
			return true;
	return false;
}

void bus_schedule(struct bus *b, sim_ps until)
{
	if (!b->n_ports)
		return;
	if (!any_pending(b)) {
		/* nothing can leave before the next collect: skip to `until` */
		uint64_t k = (until + b->cfg.slot_ps - 1) / b->cfg.slot_ps;
		if (k > b->slot_index) {
			b->slot_index = k;
			b->next_slot = k * b->cfg.slot_ps;
		}
		return;
	}
	while (b->next_slot < until) {
		sim_ps s = b->next_slot;
		sim_ps seen = s >= b->cfg.latency_ps ? s - b->cfg.latency_ps : 0;
		for (size_t i = 0; i < b->n_ports; i++)
			apply_releases(b->ports[i], seen);
		struct bus_port *owner = b->ports[b->slot_index % b->n_ports];
		if (owner->pending && owner->waiting.t <= seen) {
			const struct bus_frame *f = &owner->waiting.f;
			bool room = true;
			for (size_t i = 0; i < b->n_ports && room; i++) {
				struct bus_port *to = b->ports[i];
				if (to != owner && (f->dst == TERN_BUS_BROADCAST || f->dst == to->address))
					room = has_room(b, to) || unpowered(to, seen);
			}
			if (room)
				transfer(b, owner, s, seen);
		}
		b->slot_index++;
		b->next_slot = b->slot_index * b->cfg.slot_ps;
	}
}

sim_ps bus_next(const struct bus *b, sim_ps now)
{
	sim_ps next = SIM_PS_MAX;
	for (size_t i = 0; i < b->n_ports; i++) {
		const struct bus_port *p = b->ports[i];
		if (!p->pending)
			continue;
		sim_ps from = p->waiting.t + b->cfg.latency_ps;
		if (from < now)
			from = now;
		/* the first slot of this processor at or after `from` */
		uint64_t k = (from + b->cfg.slot_ps - 1) / b->cfg.slot_ps;
		uint64_t turn = (i + b->n_ports - k % b->n_ports) % b->n_ports;
		sim_ps s = (k + turn) * b->cfg.slot_ps;
		if (s < next)
			next = s;
	}
	return next;
}
