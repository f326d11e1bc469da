/*
 * bus.h - the processor bus of a multi-processor node (seed 002's mPlatform
 * bus): unicast and broadcast frames between the processors attached, TDMA
 * slots in address order, hardware flow control, a receive interrupt pin.
 * The register interface is in tern_simavr_abi.h; the timing rules in
 * docs/tern-sim.md, "Processor bus".
 */
#ifndef TERN_SIM_BUS_H
#define TERN_SIM_BUS_H

#include "sim.h"

struct bus_config {
	char name[64];
	uint32_t throughput_bps;
	sim_ps slot_ps;		/* one processor's TDMA slot */
	sim_ps latency_ps;	/* arbitration: what a slot may see of the processors */
	unsigned rx_frames;	/* receive queue of each processor, in frames */
};

struct bus;

struct bus *bus_new(const struct bus_config *cfg);
/* Attach a processor; its address is the order of attachment. irq_port and
 * irq_bit name the AVR pin the bus's receive interrupt drives. */
int bus_attach(struct bus *bus, struct sim_node *node, char irq_port, uint8_t irq_bit);
const struct bus_config *bus_config(const struct bus *bus);
/* Between windows: take what the processors sent and released ... */
void bus_collect(struct bus *bus);
/* ... and run every slot that starts before `until`. */
void bus_schedule(struct bus *bus, sim_ps until);
/* The next slot in which a waiting frame may leave (SIM_PS_MAX: none). */
sim_ps bus_next(const struct bus *bus, sim_ps now);
struct log_buf *bus_log(struct bus *bus);

/* A processor's counters, for the summary. */
struct bus_counters {
	uint64_t frames_sent, frames_received, bytes_sent, refused;
	uint64_t nacked;	/* destinations that did not acknowledge (unpowered) */
	sim_ps waited_ps;	/* from send to the start of the slot it left in */
};
const struct bus_counters *bus_node_counters(const struct sim_node *node);

#endif
