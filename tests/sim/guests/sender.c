/* Sends a frame of LEN bytes every PERIOD_MS, the first after START_US, with
 * STXON, or with STXONCCA when CCA is defined (then "busy" is printed for a
 * refused strobe); CARRIER_US > 0 sends an unmodulated carrier of that length
 * (a black burst) instead of each frame. Runs until the scenario ends. */
#include "../../harness/guests/console.h"
#include "guest_cc2420.h"

#ifndef LEN
#define LEN 20
#endif
#ifndef PERIOD_MS
#define PERIOD_MS 10
#endif
#ifndef START_US
#define START_US 2000
#endif
#ifndef CARRIER_US
#define CARRIER_US 0
#endif

int main(void)
{
	console_init();
	uint16_t id = tern_sim_node_id();
	if (radio_on(tern_sim_channel())) {
		console_puts("no radio\n");
		tern_simavr_exit(1);
	}
	_delay_us(START_US);
	for (uint8_t seq = 0;; seq++) {
		if (CARRIER_US) {
			reg_write(MDMCTRL1, 2 << 2);	/* TX_MODE 2 */
			reg_write(DACTST, 0x1800);	/* unmodulated */
			strobe(STXON);
			_delay_us(CARRIER_US);
			strobe(SRFOFF);
			reg_write(MDMCTRL1, 0);
			reg_write(DACTST, 0);
			strobe(SRXON);
			console_puts("burst\n");
		} else {
			load_frame(LEN, seq, id);
#ifdef CCA
			_delay_us(200);	/* CCA is valid 8 symbols into RX */
			uint8_t st = strobe(STXONCCA);
			(void)st;
			_delay_us(20);
			if (!(strobe(0) & 0x08)) {
				console_puts("busy\n");
				strobe(SRXON);
				_delay_ms(PERIOD_MS);
				continue;
			}
#else
			strobe(STXON);
#endif
			console_puts("tx ");
			console_dec(seq);
			console_putc('\n');
		}
		_delay_ms(PERIOD_MS);
	}
}
