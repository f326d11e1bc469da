/* Keeps the radio in RX and prints every frame the FIFOP pin announces:
 * "rx len=L seq=S src=N crc=1 rssi=R" (crc and rssi from the two status
 * bytes AUTOCRC puts in place of the FCS); an RX FIFO overflow is flushed
 * and printed. Built with NO_READ, it never reads: the RX FIFO overflows.
 * Runs until the scenario ends. */
#include "../../harness/guests/console.h"
#include "guest_cc2420.h"

int main(void)
{
	console_init();
	if (radio_on(tern_sim_channel())) {
		console_puts("no radio\n");
		tern_simavr_exit(1);
	}
#ifdef NO_READ
	for (;;)
		;
#endif
	for (;;) {
		if (!(PINE & _BV(6)))	/* FIFOP */
			continue;
		if (!(PINB & _BV(7))) {	/* FIFOP without FIFO: overflow */
			strobe(SFLUSHRX);
			strobe(SFLUSHRX);
			console_puts("overflow\n");
			continue;
		}
		cs_low();
		spi(RXFIFO | 0x40);
		uint8_t len = spi(0), b[128];
		for (uint8_t i = 0; i < len && i < sizeof b; i++)
			b[i] = spi(0);
		cs_high();
		console_puts("rx len=");
		console_dec(len);
		console_puts(" seq=");
		console_dec(b[2]);
		console_puts(" src=");
		console_dec((uint16_t)(b[7] | b[8] << 8));
		console_puts(" crc=");
		console_dec(len >= 2 && (b[len - 1] & 0x80) ? 1 : 0);
		console_puts(" rssi=");
		int8_t rssi = (int8_t)b[len - 2];
		if (rssi < 0) {
			console_putc('-');
			rssi = (int8_t)-rssi;
		}
		console_dec((uint16_t)rssi);
		console_putc('\n');
	}
}
