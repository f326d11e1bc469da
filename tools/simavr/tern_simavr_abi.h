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

/* tern-sim only (many nodes, docs/tern-sim.md): read-only registers that tell
 * one image which node of the scenario it runs as. tern-simavr (one core)
 * reads them as node 0 on channel 26. */
#define TERN_SIM_NODE_ID_LO_ADDR 0xFE
#define TERN_SIM_NODE_ID_HI_ADDR 0xFD
#define TERN_SIM_CHANNEL_ADDR 0xFC

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

static inline uint8_t tern_sim_channel(void)
{
	return *(volatile uint8_t *)TERN_SIM_CHANNEL_ADDR;
}
#endif

#endif /* TERN_SIMAVR_ABI_H */
