/* Processor bus guest. Address 0 sends FRAMES numbered frames (to address
 * 1, or to every other processor when BROADCAST is defined), each as soon
 * as TX_FREE allows, and prints "sent N"; the others poll for frames,
 * starting READ_DELAY_MS late, and print "rx src=S len=L n=N". With STAMP,
 * even-numbered frames are sent timestamped and every processor runs Timer1
 * at one count a cycle and prints "icr C" for each capture of ICP1. */
#include "../../harness/guests/console.h"
#include "tern_simavr_abi.h"
#include <util/delay.h>

#ifndef FRAMES
#define FRAMES 10
#endif
#ifndef READ_DELAY_MS
#define READ_DELAY_MS 0
#endif
#define REG(a) (*(volatile uint8_t *)(a))

#ifdef STAMP
#include <avr/io.h>
#ifdef TIFR1
#define CAPTURE_FLAGS TIFR1
#else
#define CAPTURE_FLAGS TIFR
#endif
/* a capture since the last look: print it */
static void print_capture(void)
{
	if (!(CAPTURE_FLAGS & _BV(ICF1)))
		return;
	uint16_t icr = ICR1;
	CAPTURE_FLAGS = _BV(ICF1);
	console_puts("icr ");
	console_dec(icr);
	console_putc('\n');
}
#define SEND_VALUE(n) ((n) % 2 ? TERN_BUS_SEND : TERN_BUS_SEND | TERN_BUS_SEND_STAMP)
#else
static void print_capture(void) {}
#define SEND_VALUE(n) TERN_BUS_SEND
#endif

int main(void)
{
	console_init();
#ifdef STAMP
	TCCR1B = _BV(ICES1) | _BV(CS10);	/* rising edge, prescaler 1 */
#endif
	uint8_t self = REG(TERN_BUS_ADDRESS_ADDR);
	if (self == 0) {
		for (uint8_t n = 0; n < FRAMES; n++) {
			while (!(REG(TERN_BUS_STATUS_ADDR) & TERN_BUS_TX_FREE))
				print_capture();
#ifdef BROADCAST
			REG(TERN_BUS_TX_DST_ADDR) = TERN_BUS_BROADCAST;
#else
			REG(TERN_BUS_TX_DST_ADDR) = 1;
#endif
			REG(TERN_BUS_TX_DATA_ADDR) = n;
			for (uint8_t i = 1; i < 20; i++)
				REG(TERN_BUS_TX_DATA_ADDR) = i;
			REG(TERN_BUS_TX_SEND_ADDR) = SEND_VALUE(n);
			console_puts("sent ");
			console_dec(n);
			console_putc('\n');
		}
		/* a send while the frame is in flight is refused, not queued */
		REG(TERN_BUS_TX_DST_ADDR) = 1;
		REG(TERN_BUS_TX_DATA_ADDR) = 0xEE;
		REG(TERN_BUS_TX_SEND_ADDR) = 1;
		console_puts("errors ");
		console_dec(REG(TERN_BUS_ERRORS_ADDR));
		console_putc('\n');
		for (;;)
			print_capture();
	}
	for (uint16_t i = READ_DELAY_MS; i > 0; i--)
		_delay_ms(1);
	for (;;) {
		print_capture();
		if (!(REG(TERN_BUS_STATUS_ADDR) & TERN_BUS_RX_READY))
			continue;
		uint8_t src = REG(TERN_BUS_RX_SRC_ADDR), len = REG(TERN_BUS_RX_LEN_ADDR);
		uint8_t n = REG(TERN_BUS_RX_DATA_ADDR);
		REG(TERN_BUS_RX_NEXT_ADDR) = 1;
		console_puts("rx src=");
		console_dec(src);
		console_puts(" len=");
		console_dec(len);
		console_puts(" n=");
		console_dec(n);
		console_putc('\n');
	}
}
