/* The node of tern-sim's benchmark (./tern bench sim): a MicaZ that sleeps,
 * wakes once a second, starts the CC2420's oscillator, sends one 30-byte
 * frame, powers the oscillator down and sleeps again. Bare metal, so the
 * benchmark measures the simulator and not a kernel; nodes are spread over
 * the second by their id, as unsynchronised nodes would be.
 * MicaZ wiring: CSn PB0, SCK PB1, MOSI PB2, MISO PB3, SFD PD4, VREG_EN PA5,
 * RESETn PA6. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>
#include "guest_cc2420.h"	/* tools/simavr: bare-metal SPI, strobes, frames */
#include "tern_simavr_abi.h"

#define FRAME_LEN 30	/* PSDU, FCS included */
#define TICKS_PER_S (F_CPU / 1024)

static volatile uint8_t due;

ISR(TIMER1_COMPA_vect)
{
	OCR1A = TICKS_PER_S - 1;	/* after the first, shorter, period */
	due = 1;
}

static void send(uint8_t seq, uint16_t id)
{
	radio_oscillator_on();
	load_frame(FRAME_LEN, seq, id);
	strobe(STXON);
	loop_until_bit_is_set(PIND, 4);	/* SFD: the frame is going out */
	loop_until_bit_is_clear(PIND, 4);	/* and has ended */
	strobe(SXOSCOFF);
}

int main(void)
{
	uint16_t id = tern_sim_node_id();
	radio_power_up();
	reg_write(FSCTRL, 0x4000 | (357 + 5 * (tern_sim_channel() - 11)));
	strobe(SXOSCOFF);

	/* the first wake-up at a phase within the second that the id picks
	 * (libsimavr 1.6 ignores a TCNT1 preset made before the clock starts) */
	OCR1A = (uint16_t)(((uint32_t)id * 7919u) % TICKS_PER_S);
	TCCR1B = _BV(WGM12) | _BV(CS12) | _BV(CS10);	/* CTC, clk/1024 */
	TIMSK = _BV(OCIE1A);
	set_sleep_mode(SLEEP_MODE_IDLE);
	sleep_enable();
	sei();
	for (uint8_t seq = 0;; seq++) {
		while (!due)
			sleep_cpu();
		due = 0;
		send(seq, id);
	}
}
