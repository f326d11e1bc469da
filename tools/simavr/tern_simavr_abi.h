/*
 * tern_simavr_abi.h - what a guest image may rely on when it runs under
 * tools/simavr/build/tern-simavr (libsimavr 1.6, ATmega128 at 4 MHz).
 *
 * Console: every byte the guest writes to UDR0 (USART0) goes to the harness's
 * stdout, unchanged. Transmission still takes the simulated time the baud
 * rate implies (UDRE0 stays clear for one frame), so pick a fast setting,
 * e.g. UBRR0 = 0 with U2X0 = 1 (500 kbit/s at 4 MHz). simavr 1.6 computes the
 * frame time only when UBRR0L is written, from U2X0 and the frame format set
 * at that moment: write UCSR0A and UCSR0C first, UBRR0L last. It counts a
 * parity bit even when parity is off (8N1 = 11 bits, 88 cycles per byte at
 * 500 kbit/s instead of 80).
 *
 * Exit: write the status byte to the exit port. The harness stops right after
 * that instruction and exits with the status as its own exit code:
 *
 *     *(volatile uint8_t *)TERN_SIMAVR_EXIT_ADDR = status;
 *
 * or call tern_simavr_exit(status). Use statuses 0..99: 100 and up are the
 * harness's own error codes (see tools/simavr/README.md). Returning from
 * main() does not stop the simulation (avr-libc's _exit spins with
 * interrupts disabled); the run then ends at the cycle limit.
 *
 * Sleep: SLEEP costs no wall time; simulated time jumps to the next
 * peripheral event. A SLEEP that nothing can end (interrupts disabled, or no
 * timer running and no interrupt pending) stops the run with an error.
 * simavr 1.6 sleeps on SLEEP even when SE is clear, where the real ATmega128
 * does nothing.
 *
 * The address is in the data space, in the block 0x9E..0xFF that the
 * ATmega128 datasheet (and avr-libc's <avr/iom128.h>) leaves reserved, and
 * no simavr 1.6 peripheral of the ATmega128 claims it. Access it with a data
 * store (STS/ST), not OUT: it lies beyond the 64 I/O-space addresses.
 */
#ifndef TERN_SIMAVR_ABI_H
#define TERN_SIMAVR_ABI_H

#define TERN_SIMAVR_EXIT_ADDR 0xFF

/* tern-sim (many nodes, docs/tern-sim.md): read-only registers that tell
 * one image which node of the scenario it runs as, how many nodes there are,
 * the scenario's radio channel and how long the run lasts (whole simulated
 * seconds, little-endian at DURATION_S_ADDR .. +3; a node can end its work
 * before the run does). tern-simavr (one core) answers node 0 of 1 on
 * channel 26, duration 0 (unknown). */
#define TERN_SIM_NODE_ID_LO_ADDR 0xFE
#define TERN_SIM_NODE_ID_HI_ADDR 0xFD
#define TERN_SIM_CHANNEL_ADDR 0xFC
#define TERN_SIM_NODE_COUNT_LO_ADDR 0xEF
#define TERN_SIM_NODE_COUNT_HI_ADDR 0xEE
#define TERN_SIM_DURATION_S_ADDR 0xEA /* 0xEA..0xED */

/* tern-sim processor bus (seed 002's mPlatform bus between the processors of
 * one node; docs/tern-sim.md, "Processor bus"). Data addresses, accessed
 * with LDS/STS. A frame carries 1..TERN_BUS_FRAME_MAX payload bytes from one
 * processor to another (address 0..count-1) or to all others (0xFF).
 *
 * To send: wait for TERN_BUS_TX_FREE, write the destination to
 * TERN_BUS_TX_DST_ADDR, the payload byte by byte to TERN_BUS_TX_DATA_ADDR,
 * then TERN_BUS_SEND (or TERN_BUS_SEND | TERN_BUS_SEND_STAMP) to
 * TERN_BUS_TX_SEND_ADDR. The frame leaves in the sender's
 * next TDMA slot in which every destination has room (hardware flow control:
 * it waits, nothing is dropped); TX_FREE is set again when it has arrived.
 * A send while TX_FREE is clear, an empty or oversized frame or a bad
 * destination is refused and counted (TERN_BUS_ERRORS_ADDR), not sent.
 * A processor that has stopped for good (a node's `halt`, exit or crash)
 * has no power at its bus interface: it acknowledges nothing and holds
 * nobody back. A unicast to it is lost on the bus and the sender told:
 * with TX_FREE comes TERN_BUS_TX_NACK and an edge on the sender's bus pin;
 * the bit stays until written to TERN_BUS_TX_NACK_CLEAR_ADDR. A broadcast
 * reaches the others and is not NACKed. A processor that sleeps (power-down
 * included) is powered: it acknowledges, and the frame wakes it.
 *
 * To receive: the bus's interrupt pin (named per processor in the scenario,
 * e.g. PE4 = INT4) rises when a frame arrives at an empty receive queue and
 * after TERN_BUS_RX_NEXT when another frame waits; TERN_BUS_RX_READY is set
 * while a frame waits. Read TERN_BUS_RX_SRC_ADDR, TERN_BUS_RX_LEN_ADDR and
 * the payload from TERN_BUS_RX_DATA_ADDR, then write TERN_BUS_RX_NEXT_ADDR
 * to release the frame (that frees room for the next sender). The pin also
 * rises for a NACK (above) and stays high while a frame or the NACK waits.
 *
 * Timestamps: a frame sent with TERN_BUS_SEND_STAMP drives the Timer1 input
 * capture pin (ICP1: PD4 on the ATmega128, PD6 on the ATmega1284P) of its
 * sender and of every destination high while it is on the bus, as a
 * CC2420's SFD pin is: ICR1 latches the frame's start on both ends, each on
 * its own clock (time sync, drivers/procbus/procbus_sync.c). Only stamped
 * frames touch the pin, so a driver that stamps only its sync frames knows
 * which frame each capture belongs to. */
#define TERN_BUS_STATUS_ADDR 0xF0	/* read: TERN_BUS_RX_READY | TERN_BUS_TX_FREE | TERN_BUS_TX_NACK */
#define TERN_BUS_RX_READY 0x01
#define TERN_BUS_TX_FREE 0x02
#define TERN_BUS_TX_NACK 0x04	/* the last frame's destination did not acknowledge it */
#define TERN_BUS_ADDRESS_ADDR 0xF1	/* read: this processor's bus address */
#define TERN_BUS_COUNT_ADDR 0xF2	/* read: processors on the bus */
#define TERN_BUS_TX_DST_ADDR 0xF3	/* write: destination, 0xFF = all others */
#define TERN_BUS_TX_DATA_ADDR 0xF4	/* write: next payload byte */
#define TERN_BUS_TX_SEND_ADDR 0xF5	/* write: send the frame */
#define TERN_BUS_SEND 0x01
#define TERN_BUS_SEND_STAMP 0x02	/* ...with edges on ICP1 (see above) */
#define TERN_BUS_RX_SRC_ADDR 0xF6	/* read: sender of the waiting frame */
#define TERN_BUS_RX_LEN_ADDR 0xF7	/* read: its payload length */
#define TERN_BUS_RX_DATA_ADDR 0xF8	/* read: its next payload byte */
#define TERN_BUS_RX_NEXT_ADDR 0xF9	/* write: release it */
#define TERN_BUS_ERRORS_ADDR 0xFA	/* read: refused sends so far (saturating) */
#define TERN_BUS_TX_NACK_CLEAR_ADDR 0xFB	/* write: clear TERN_BUS_TX_NACK */
#define TERN_BUS_BROADCAST 0xFF
#define TERN_BUS_FRAME_MAX 64

#ifdef __AVR__
#include <stdint.h>

static inline void __attribute__((noreturn)) tern_simavr_exit(uint8_t status)
{
	*(volatile uint8_t *)TERN_SIMAVR_EXIT_ADDR = status;
	for (;;)
		;	/* not reached under the harness; on hardware, stop here */
}

static inline uint16_t tern_sim_node_id(void)
{
	return (uint16_t)(*(volatile uint8_t *)TERN_SIM_NODE_ID_LO_ADDR |
			  *(volatile uint8_t *)TERN_SIM_NODE_ID_HI_ADDR << 8);
}

static inline uint16_t tern_sim_node_count(void)
{
	return (uint16_t)(*(volatile uint8_t *)TERN_SIM_NODE_COUNT_LO_ADDR |
			  *(volatile uint8_t *)TERN_SIM_NODE_COUNT_HI_ADDR << 8);
}

/* 0 where no simulator answers (or under tern-simavr) */
static inline uint32_t tern_sim_duration_s(void)
{
	volatile uint8_t *r = (volatile uint8_t *)TERN_SIM_DURATION_S_ADDR;
	return (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 | (uint32_t)r[3] << 24;
}

/* 11..26; 26 where no simulator answers (the register reads as RAM there) */
static inline uint8_t tern_sim_channel(void)
{
	uint8_t c = *(volatile uint8_t *)TERN_SIM_CHANNEL_ADDR;
	return c >= 11 && c <= 26 ? c : 26;
}
#endif

#endif /* TERN_SIMAVR_ABI_H */
