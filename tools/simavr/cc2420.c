/*
 * cc2420.c - the CC2420 2.4 GHz IEEE 802.15.4 transceiver, as a MicaZ driver
 * sees it: SPI commands, registers, RAM, 128-byte FIFOs, the pins FIFO,
 * FIFOP, SFD and CCA, and on-air timing. Written from the CC2420 datasheet
 * (rev. 1.4); what it leaves out is listed in docs/tern-sim.md.
 *
 * Wiring: the board's, by the node's part (struct wiring below): the MicaZ's
 * on an ATmega128, micaz-1284p's on an ATmega1284P; SPI on the AVR's SPI.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avr_spi.h>
#include <sim_io.h>

#include "cc2420.h"

/* --- timing (16 us symbols, 2 symbols a byte at 250 kbit/s) --------------- */
#define SYMBOL_PS (16 * PS_PER_US)
#define TURNAROUND_PS (12 * SYMBOL_PS)	/* RX<->TX, and calibration */
#define CCA_VALID_PS (8 * SYMBOL_PS)
#define STOP_PS (1 * SYMBOL_PS)	/* a strobe ending a transmission: see docs */
#define VREG_UP_PS (600 * PS_PER_US)
#define XOSC_UP_PS (860 * PS_PER_US)

/* --- registers ----------------------------------------------------------- */
enum {
	R_MAIN = 0x10, R_MDMCTRL0 = 0x11, R_MDMCTRL1 = 0x12, R_RSSI = 0x13, R_SYNCWORD = 0x14,
	R_TXCTRL = 0x15, R_RXCTRL0 = 0x16, R_RXCTRL1 = 0x17, R_FSCTRL = 0x18, R_SECCTRL0 = 0x19,
	R_SECCTRL1 = 0x1A, R_BATTMON = 0x1B, R_IOCFG0 = 0x1C, R_IOCFG1 = 0x1D, R_MANFIDL = 0x1E,
	R_MANFIDH = 0x1F, R_FSMTC = 0x20, R_MANAND = 0x21, R_MANOR = 0x22, R_AGCCTRL = 0x23,
	R_FSMSTATE = 0x2C, R_DACTST = 0x2E, R_TXFIFO = 0x3E, R_RXFIFO = 0x3F,
};
enum {
	S_SNOP, S_SXOSCON, S_STXCAL, S_SRXON, S_STXON, S_STXONCCA, S_SRFOFF, S_SXOSCOFF,
	S_SFLUSHRX, S_SFLUSHTX, S_SACK, S_SACKPEND, S_SRXDEC, S_STXENC, S_SAES,
};
#define MDMCTRL0_ADR_DECODE (1u << 11)
#define MDMCTRL0_AUTOCRC (1u << 5)
#define MDMCTRL0_AUTOACK (1u << 4)
#define IOCFG0_FIFO_POL (1u << 10)
#define IOCFG0_FIFOP_POL (1u << 9)
#define IOCFG0_SFD_POL (1u << 8)
#define IOCFG0_CCA_POL (1u << 7)
#define STATUS_XOSC_STABLE (1u << 6)
#define STATUS_TX_UNDERFLOW (1u << 5)
#define STATUS_TX_ACTIVE (1u << 3)
#define STATUS_LOCK (1u << 2)
#define STATUS_RSSI_VALID (1u << 1)

#define RAM_TXFIFO 0x000
#define RAM_RXFIFO 0x080
#define RAM_IEEEADR 0x160
#define RAM_PANID 0x168
#define RAM_SHORTADR 0x16A
#define RAM_SIZE 0x170

#define RSSI_OFFSET 45		/* RSSI [dBm] = RSSI_VAL - 45 */
#define NOISE_DBM -100.0
#define CORRELATION 108		/* the LQI-like figure with AUTOCRC: a clean link */

static const uint16_t reg_reset[0x31] = {
	[R_MAIN] = 0xF800, [R_MDMCTRL0] = 0x0AE2, [R_RSSI] = 0xE080, [R_SYNCWORD] = 0xA70F,
	[R_TXCTRL] = 0xA0FF, [R_RXCTRL0] = 0x12E5, [R_RXCTRL1] = 0x0A56, [R_FSCTRL] = 0x4165,
	[R_SECCTRL0] = 0x0364, [R_IOCFG0] = 0x0040, [R_MANFIDL] = 0x233D, [R_MANFIDH] = 0x3000,
	[R_FSMTC] = 0x7A94, [R_MANAND] = 0xFFFF, [R_AGCCTRL] = 0x07F3,
};

/* Chip states; FSMSTATE reads the datasheet's number of each. */
enum state { VREG_OFF, POWER_DOWN, XOSC_STARTING, IDLE, RX_CALIBRATE, RX_SEARCH, RX_OVERFLOW,
	     TX_CALIBRATE, TX_ON_AIR };
static const uint8_t fsmstate_of[] = {
	[VREG_OFF] = 0, [POWER_DOWN] = 0, [XOSC_STARTING] = 0, [IDLE] = 1, [RX_CALIBRATE] = 2,
	[RX_SEARCH] = 3, [RX_OVERFLOW] = 17, [TX_CALIBRATE] = 32, [TX_ON_AIR] = 37,
};

const char *const cc2420_acct_names[CC2420_ACCT_STATES] = { "off", "power_down", "idle", "rx", "tx" };

enum spi_phase { SPI_DESELECTED, SPI_ADDRESS, SPI_REG_HIGH, SPI_REG_LOW, SPI_FIFO, SPI_RAM_ADDRESS,
		 SPI_RAM_DATA };

/* Where the chip's pins meet the AVR's, and where the AVR's SPI registers
 * are (data addresses), per part: the boards/<board>/board.h of the board
 * built on that part says the same to the driver. */
struct pin {
	char port;
	int bit;
};
struct wiring {
	const char *mcu;
	struct pin csn, fifo, fifop, cca, sfd, vreg_en, resetn;
	uint16_t spcr, spsr, spdr;
};
static const struct wiring wirings[] = {
	/* micaz: FIFOP on INT6, SFD on ICP1 */
	{ "atmega128", { 'B', 0 }, { 'B', 7 }, { 'E', 6 }, { 'D', 6 }, { 'D', 4 }, { 'A', 5 }, { 'A', 6 },
	  0x2D, 0x2E, 0x2F },
	/* micaz-1284p: CSn on SS, FIFOP on INT2, SFD on ICP1 */
	{ "atmega1284p", { 'B', 4 }, { 'B', 0 }, { 'B', 2 }, { 'D', 7 }, { 'D', 6 }, { 'A', 5 }, { 'A', 6 },
	  0x4C, 0x4D, 0x4E },
};

struct heard {
	const struct air_signal *sig;
	double mw;
};

struct cc2420 {
	struct sim_node *node;
	const struct wiring *w;
	double capture_ratio;	/* the locked signal must exceed the rest by this */
	uint64_t prng;

	uint16_t reg[0x31];
	uint8_t ram[RAM_SIZE];
	enum state state;
	uint32_t gen;		/* bumps on every state change: stale events are ignored */
	bool vreg_en, resetn;
	sim_ps listening_since;

	/* SPI */
	bool selected;
	enum spi_phase phase;
	uint8_t address;
	uint16_t shift;
	uint16_t ram_address;
	bool ram_read;
	avr_irq_t *spi_in;

	/* TX */
	uint8_t txfifo_len;
	bool tx_underflow;
	uint32_t tx_seq;
	uint64_t tx_id;
	uint8_t ack_dsn;	/* DSN of the last frame received, for SACK */

	/* RX FIFO: a ring of 128 bytes */
	uint8_t rx_head, rx_count, rx_complete;	/* rx_complete: a whole frame arrived, none read since */
	bool overflow;

	/* the reception in progress */
	bool receiving;
	uint32_t rx_gen;
	const struct air_signal *rx_sig;
	uint8_t rx_len;		/* the length byte as received */
	uint8_t rx_frame[FRAME_MAX];
	int corrupt_from;	/* first byte index destroyed by a collision; -1 none */
	uint64_t corrupted_by;
	bool rx_rejected;	/* address recognition */
	bool sfd;		/* the SFD line, logically */

	struct heard *heard;	/* the signals on air here now */
	size_t n_heard, cap_heard;

	/* pins as last driven (electrical level) */
	int pin_fifo, pin_fifop, pin_sfd, pin_cca;

	int acct;
	sim_ps acct_since;
	sim_ps acct_ps[CC2420_ACCT_STATES];
	struct cc2420_counters count;
};

/* --- helpers ------------------------------------------------------------- */

uint16_t ieee802154_fcs(const uint8_t *data, size_t len)
{
	uint16_t crc = 0;
	for (size_t i = 0; i < len; i++) {
		crc ^= data[i];
		for (int b = 0; b < 8; b++)
			crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0x8408) : (uint16_t)(crc >> 1);
	}
	return crc;
}

static uint8_t channel(const struct cc2420 *r)
{
	int freq = r->reg[R_FSCTRL] & 0x3FF;
	int ch = (freq - 357) / 5 + 11;
	return (freq - 357) % 5 == 0 && ch >= 11 && ch <= 26 ? (uint8_t)ch : 0;
}

static int8_t output_dbm(const struct cc2420 *r)
{
	/* PA_LEVEL -> output power (datasheet table 9), between the points
	 * the nearest lower one */
	static const struct { uint8_t level; int8_t dbm; } table[] = {
		{ 31, 0 }, { 27, -1 }, { 23, -3 }, { 19, -5 }, { 15, -7 }, { 11, -10 }, { 7, -15 }, { 3, -25 },
	};
	unsigned level = r->reg[R_TXCTRL] & 0x1F;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (level >= table[i].level)
			return (int8_t)(table[i].dbm + r->node->tx_power_dbm);
	return (int8_t)(-25 + r->node->tx_power_dbm);
}

static double signal_dbm(const struct cc2420 *r)
{
	double mw = pow(10.0, NOISE_DBM / 10.0);
	uint8_t ch = channel(r);
	for (size_t i = 0; i < r->n_heard; i++)
		if (r->heard[i].sig->channel == ch)
			mw += r->heard[i].mw;
	return 10.0 * log10(mw);
}

static bool rssi_valid(const struct cc2420 *r, sim_ps now)
{
	return r->state == RX_SEARCH && now >= r->listening_since + CCA_VALID_PS;
}

static int rssi_val(const struct cc2420 *r, sim_ps now)
{
	if (!rssi_valid(r, now))
		return -128;
	double v = signal_dbm(r) + RSSI_OFFSET;
	return v < -128 ? -128 : v > 127 ? 127 : (int)lround(v);
}

static bool cca_clear(const struct cc2420 *r, sim_ps now)
{
	if (!rssi_valid(r, now))
		return false;
	int8_t thr = (int8_t)(r->reg[R_RSSI] >> 8);
	bool energy_clear = rssi_val(r, now) < thr;
	bool no_frame = !r->receiving;
	switch ((r->reg[R_MDMCTRL0] >> 6) & 3) {
	case 1: return energy_clear;
	case 2: return no_frame;
	case 3: return energy_clear && no_frame;
	default: return true;	/* reserved: clear */
	}
}

static void drive(struct cc2420 *r, int *last, struct pin p, int level, sim_ps now)
{
	if (*last == level)
		return;
	*last = level;
	node_drive_pin(r->node, p.port, p.bit, level, now);
}

/* Recompute the four output pins from the chip's state. */
static void update_pins(struct cc2420 *r, sim_ps now)
{
	const uint16_t io = r->reg[R_IOCFG0];
	bool powered = r->state != VREG_OFF;
	bool fifo = powered && r->rx_count > 0 && !r->overflow;
	bool fifop = powered && (r->overflow || r->rx_count > (io & 0x7F) || r->rx_complete > 0);
	bool cca = powered && cca_clear(r, now);
	bool sfd = powered && r->sfd;
	drive(r, &r->pin_fifo, r->w->fifo, fifo ^ !!(io & IOCFG0_FIFO_POL), now);
	drive(r, &r->pin_fifop, r->w->fifop, fifop ^ !!(io & IOCFG0_FIFOP_POL), now);
	drive(r, &r->pin_cca, r->w->cca, cca ^ !!(io & IOCFG0_CCA_POL), now);
	drive(r, &r->pin_sfd, r->w->sfd, sfd ^ !!(io & IOCFG0_SFD_POL), now);
}

static int acct_of(enum state s)
{
	switch (s) {
	case VREG_OFF: return CC2420_ACCT_OFF;
	case POWER_DOWN: case XOSC_STARTING: return CC2420_ACCT_POWER_DOWN;
	case IDLE: return CC2420_ACCT_IDLE;
	case TX_CALIBRATE: case TX_ON_AIR: return CC2420_ACCT_TX;
	default: return CC2420_ACCT_RX;
	}
}

static void set_state(struct cc2420 *r, enum state s, sim_ps now)
{
	int a = acct_of(s);
	if (a != r->acct) {
		r->acct_ps[r->acct] += now - r->acct_since;
		r->acct = a;
		r->acct_since = now;
	}
	r->state = s;
	r->gen++;
}

static void lost(struct cc2420 *r, sim_ps now, const struct air_signal *sig, const char *reason)
{
	r->count.frames_lost++;
	log_event(&r->node->log, now, r->node->index,
		  "\"event\":\"rx_lost\",\"tx\":%" PRIu64 ",\"from\":%u,\"reason\":\"%s\"", sig->tx, sig->from,
		  reason);
}

/* --- reception ------------------------------------------------------------- */

static void abort_reception(struct cc2420 *r)
{
	if (!r->receiving)
		return;
	r->receiving = false;
	r->rx_gen++;
	r->sfd = false;
}

static void rxfifo_push(struct cc2420 *r, uint8_t byte)
{
	r->ram[RAM_RXFIFO + (uint8_t)(r->rx_head + r->rx_count) % 128] = byte;
	r->rx_count++;
}

/* Would address recognition let this frame through? (datasheet 16.2:
 * data/command frames must carry our PAN and address or the broadcast
 * ones; beacons and acknowledgements pass.) */
static bool address_accepts(const struct cc2420 *r, const uint8_t *f, uint8_t len)
{
	if (!(r->reg[R_MDMCTRL0] & MDMCTRL0_ADR_DECODE))
		return true;
	if (len < 5)
		return false;
	uint16_t fcf = (uint16_t)(f[0] | f[1] << 8);
	unsigned type = fcf & 7, dst_mode = (fcf >> 10) & 3;
	if (type == 0 || type == 2)	/* beacon, ack */
		return true;
	if (type > 3)
		return false;
	if (dst_mode == 0)
		return true;	/* no destination: the PAN coordinator's business */
	if (len < 7)
		return false;
	uint16_t pan = (uint16_t)(f[3] | f[4] << 8);
	uint16_t my_pan = (uint16_t)(r->ram[RAM_PANID] | r->ram[RAM_PANID + 1] << 8);
	if (pan != 0xFFFF && pan != my_pan)
		return false;
	if (dst_mode == 2) {
		uint16_t dst = (uint16_t)(f[5] | f[6] << 8);
		uint16_t mine = (uint16_t)(r->ram[RAM_SHORTADR] | r->ram[RAM_SHORTADR + 1] << 8);
		return dst == 0xFFFF || dst == mine;
	}
	if (dst_mode == 3)
		return len >= 13 && memcmp(f + 5, r->ram + RAM_IEEEADR, 8) == 0;
	return false;
}

static void send_ack(struct cc2420 *r, sim_ps now, bool pending, uint8_t dsn);

static void rx_byte(struct sim_node *node, sim_ps when, void *arg, uint32_t data);

static void rx_frame_done(struct cc2420 *r, sim_ps when)
{
	const struct air_signal *sig = r->rx_sig;
	uint8_t len = r->rx_len;
	r->receiving = false;
	r->sfd = false;
	if (r->rx_rejected) {
		r->count.frames_rejected++;
		return;
	}
	bool crc_ok = len >= 2 && ieee802154_fcs(r->rx_frame, len - 2) ==
		(uint16_t)(r->rx_frame[len - 2] | r->rx_frame[len - 1] << 8);
	r->rx_complete = 1;
	if (crc_ok) {
		r->count.frames_received++;
		log_event(&r->node->log, when, r->node->index,
			  "\"event\":\"rx_ok\",\"tx\":%" PRIu64 ",\"from\":%u,\"len\":%u,\"rssi_dbm\":%.1f",
			  sig->tx, sig->from, len, sig->rx_dbm);
		if (len >= 3) {
			r->ack_dsn = r->rx_frame[2];
			uint16_t fcf = (uint16_t)(r->rx_frame[0] | r->rx_frame[1] << 8);
			bool ack_request = fcf & (1u << 5);
			bool broadcast = len >= 7 && r->rx_frame[5] == 0xFF && r->rx_frame[6] == 0xFF;
			if (ack_request && !broadcast && (r->reg[R_MDMCTRL0] & MDMCTRL0_AUTOACK) &&
			    (r->reg[R_MDMCTRL0] & MDMCTRL0_ADR_DECODE))
				send_ack(r, when, false, r->ack_dsn);
		}
	} else {
		r->count.frames_bad_fcs++;
		log_event(&r->node->log, when, r->node->index,
			  "\"event\":\"rx_bad_fcs\",\"tx\":%" PRIu64 ",\"from\":%u,\"len\":%u", sig->tx,
			  sig->from, len);
	}
}

/* Byte k of the frame (0 = the length byte) has arrived. */
static void rx_byte(struct sim_node *node, sim_ps when, void *arg, uint32_t data)
{
	struct cc2420 *r = arg;
	uint32_t k = data & 0xFF;
	if (!r->receiving || (data >> 8) != (r->rx_gen & 0xFFFFFF))
		return;
	(void)node;
	const struct air_signal *sig = r->rx_sig;
	uint8_t byte;
	bool garbled = r->corrupt_from >= 0 && (int)k >= r->corrupt_from;
	if (k == 0)
		byte = garbled ? (uint8_t)sim_random(&r->prng) & 0x7F : sig->phr;
	else if (k <= sig->len && !garbled)
		byte = sig->psdu[k - 1];
	else
		byte = (uint8_t)sim_random(&r->prng);
	if (k == 0) {
		r->rx_len = byte & 0x7F;
		r->rx_rejected = !address_accepts(r, sig->psdu, sig->len);
	} else {
		r->rx_frame[k - 1] = byte;
	}
	if (!r->rx_rejected) {
		if (r->rx_count == 128) {
			/* RX FIFO overflow: FIFOP high, FIFO low, nothing more
			 * until SFLUSHRX (datasheet 14.3). */
			r->overflow = true;
			r->count.rx_overflows++;
			abort_reception(r);
			set_state(r, RX_OVERFLOW, when);
			lost(r, when, sig, "overflow");
			update_pins(r, when);
			return;
		}
		uint8_t in = byte;
		bool autocrc = r->reg[R_MDMCTRL0] & MDMCTRL0_AUTOCRC;
		if (autocrc && k >= 1 && r->rx_len >= 2 && k == (uint32_t)r->rx_len - 1u)
			in = (uint8_t)(int8_t)rssi_val(r, when);
		if (autocrc && k >= 1 && r->rx_len >= 2 && k == r->rx_len) {
			bool crc_ok = ieee802154_fcs(r->rx_frame, r->rx_len - 2) ==
				(uint16_t)(r->rx_frame[r->rx_len - 2] | byte << 8);
			in = (uint8_t)((crc_ok ? 0x80 : 0) | CORRELATION);
		}
		rxfifo_push(r, in);
	}
	if (k == r->rx_len)
		rx_frame_done(r, when);
	else
		node_at(r->node, r->rx_sig->start + (PHY_SHR_BYTES + 1 + k + 1) * PHY_BYTE_PS, rx_byte, r,
			(r->rx_gen & 0xFFFFFF) << 8 | (k + 1));
	update_pins(r, when);
}

static void rx_sfd(struct sim_node *node, sim_ps when, void *arg, uint32_t data)
{
	(void)node;
	struct cc2420 *r = arg;
	if (!r->receiving || data != (r->rx_gen & 0xFFFFFF))
		return;
	r->sfd = true;
	update_pins(r, when);
}

static double interference_mw(const struct cc2420 *r, const struct air_signal *except)
{
	double mw = 0;
	uint8_t ch = channel(r);
	for (size_t i = 0; i < r->n_heard; i++)
		if (r->heard[i].sig != except && r->heard[i].sig->channel == ch)
			mw += r->heard[i].mw;
	return mw;
}

/* The byte being received now: from it on, a collision garbles the frame. */
static int byte_index_at(const struct air_signal *sig, sim_ps now)
{
	sim_ps first = sig->start + (PHY_SHR_BYTES + 1) * PHY_BYTE_PS;
	if (now < first)
		return 0;
	return (int)((now - first) / PHY_BYTE_PS) + 1;
}

static const struct air_signal *strongest_other(const struct cc2420 *r, const struct air_signal *except)
{
	const struct air_signal *best = NULL;
	double best_mw = -1;
	for (size_t i = 0; i < r->n_heard; i++)
		if (r->heard[i].sig != except && r->heard[i].sig->channel == channel(r) &&
		    r->heard[i].mw > best_mw) {
			best = r->heard[i].sig;
			best_mw = r->heard[i].mw;
		}
	return best;
}

void cc2420_air_start(struct sim_node *node, sim_ps when, void *signal, uint32_t unused)
{
	(void)unused;
	struct cc2420 *r = node->radio;
	const struct air_signal *sig = signal;
	if (r->n_heard == r->cap_heard)
		r->heard = sim_grow(r->heard, &r->cap_heard, sizeof *r->heard);
	r->heard[r->n_heard++] = (struct heard){ .sig = sig, .mw = pow(10.0, sig->rx_dbm / 10.0) };

	/* A reception in progress survives a new signal only if it stays
	 * stronger than everything else on the channel by the capture threshold. */
	if (r->receiving && sig->channel == channel(r) && r->corrupt_from < 0) {
		double own = pow(10.0, r->rx_sig->rx_dbm / 10.0);
		if (own < interference_mw(r, r->rx_sig) * r->capture_ratio) {
			r->corrupt_from = byte_index_at(r->rx_sig, when);
			r->corrupted_by = sig->tx;
			r->count.frames_collided++;
			log_event(&node->log, when, node->index,
				  "\"event\":\"collision\",\"tx\":%" PRIu64 ",\"with\":%" PRIu64, r->rx_sig->tx, sig->tx);
		}
	}

	if (sig->kind == TX_FRAME && sig->in_range) {
		if (r->state == VREG_OFF || r->state == POWER_DOWN || r->state == XOSC_STARTING ||
		    r->state == IDLE || r->state == RX_CALIBRATE)
			lost(r, when, sig, "off");
		else if (r->state == TX_CALIBRATE || r->state == TX_ON_AIR || r->receiving)
			lost(r, when, sig, "busy");
		else if (r->state == RX_OVERFLOW)
			lost(r, when, sig, "overflow");
		else if (sig->channel != channel(r))
			lost(r, when, sig, "channel");
		else if (!sig->receivable)
			lost(r, when, sig, "prr");
		else {
			r->receiving = true;
			r->rx_gen++;
			r->rx_sig = sig;
			r->rx_rejected = false;
			r->corrupt_from = -1;
			double own = pow(10.0, sig->rx_dbm / 10.0);
			if (own < interference_mw(r, sig) * r->capture_ratio) {
				/* it starts under a stronger signal: garbled from the start */
				const struct air_signal *other = strongest_other(r, sig);
				r->corrupt_from = 0;
				r->corrupted_by = other ? other->tx : 0;
				r->count.frames_collided++;
				log_event(&node->log, when, node->index,
					  "\"event\":\"collision\",\"tx\":%" PRIu64 ",\"with\":%" PRIu64, sig->tx,
					  r->corrupted_by);
			}
			uint32_t g = r->rx_gen & 0xFFFFFF;
			node_at(node, sig->start + PHY_SHR_BYTES * PHY_BYTE_PS, rx_sfd, r, g);
			node_at(node, sig->start + (PHY_SHR_BYTES + 1) * PHY_BYTE_PS, rx_byte, r, g << 8);
		}
	}
	update_pins(r, when);
}

void cc2420_air_end(struct sim_node *node, sim_ps when, void *signal, uint32_t unused)
{
	(void)unused;
	struct cc2420 *r = node->radio;
	for (size_t i = 0; i < r->n_heard; i++)
		if (r->heard[i].sig == signal) {
			r->heard[i] = r->heard[--r->n_heard];
			break;
		}
	/* A transmission stopped early leaves the receiver with noise for
	 * the rest of the length it announced. */
	if (r->receiving && r->rx_sig == signal && r->corrupt_from < 0 &&
	    when < r->rx_sig->start + (PHY_SHR_BYTES + 1 + (sim_ps)r->rx_sig->len) * PHY_BYTE_PS)
		r->corrupt_from = byte_index_at(r->rx_sig, when);
	update_pins(r, when);
}

/* --- transmission ------------------------------------------------------------ */

static void rx_listen(struct sim_node *node, sim_ps when, void *arg, uint32_t gen);

static void cca_valid(struct sim_node *node, sim_ps when, void *arg, uint32_t gen)
{
	(void)node;
	struct cc2420 *r = arg;
	if (gen == r->gen)
		update_pins(r, when);
}

static void rx_listen(struct sim_node *node, sim_ps when, void *arg, uint32_t gen)
{
	struct cc2420 *r = arg;
	if (gen != r->gen || r->state != RX_CALIBRATE)
		return;
	set_state(r, RX_SEARCH, when);
	r->listening_since = when;
	node_at(node, when + CCA_VALID_PS, cca_valid, r, r->gen);
	update_pins(r, when);
}

static void start_rx(struct cc2420 *r, sim_ps now)
{
	abort_reception(r);
	set_state(r, RX_CALIBRATE, now);
	node_at(r->node, now + TURNAROUND_PS, rx_listen, r, r->gen);
}

static void tx_sfd(struct sim_node *node, sim_ps when, void *arg, uint32_t gen)
{
	(void)node;
	struct cc2420 *r = arg;
	if (gen != r->gen)
		return;
	r->sfd = true;
	update_pins(r, when);
}

static void tx_on_air(struct sim_node *node, sim_ps when, void *arg, uint32_t gen)
{
	(void)node;
	struct cc2420 *r = arg;
	if (gen != r->gen)
		return;
	set_state(r, TX_ON_AIR, when);
	/* the frame's own events carry the new generation */
	node_at(node, when + PHY_SHR_BYTES * PHY_BYTE_PS, tx_sfd, r, r->gen);
}

static void tx_done(struct sim_node *node, sim_ps when, void *arg, uint32_t gen)
{
	(void)node;
	struct cc2420 *r = arg;
	/* tx_on_air bumped the generation once */
	if (gen + 1 != r->gen || r->state != TX_ON_AIR)
		return;
	r->count.frames_sent++;
	r->sfd = false;
	start_rx(r, when);	/* back to RX after the turnaround */
	update_pins(r, when);
}

/* Put a frame (psdu, FCS included) or a carrier on air, 12 symbols from now. */
static void transmit(struct cc2420 *r, sim_ps now, enum tx_kind kind, const uint8_t *psdu, uint8_t len)
{
	abort_reception(r);
	set_state(r, TX_CALIBRATE, now);
	struct tx_announce a = {
		.id = (uint64_t)r->node->index << 32 | r->tx_seq++,
		.kind = kind,
		.channel = channel(r),
		.power_dbm = output_dbm(r),
		.len = len,
		.phr = len,
		.start = now + TURNAROUND_PS,
	};
	a.end = kind == TX_FRAME ? a.start + (PHY_SHR_BYTES + 1 + (sim_ps)len) * PHY_BYTE_PS : SIM_PS_MAX;
	if (kind == TX_FRAME)
		memcpy(a.psdu, psdu, len);
	r->tx_id = a.id;
	node_announce(r->node, &a);
	node_at(r->node, a.start, tx_on_air, r, r->gen);
	if (kind == TX_FRAME)
		node_at(r->node, a.end, tx_done, r, r->gen);
	update_pins(r, now);
}

static void start_tx(struct cc2420 *r, sim_ps now)
{
	unsigned mode = (r->reg[R_MDMCTRL1] >> 2) & 3;
	if (mode >= 2) {
		/* test modes: with DACTST = 0x1800 an unmodulated carrier; here
		 * either counts as energy without a frame (a black burst) */
		transmit(r, now, TX_CARRIER, NULL, 0);
		return;
	}
	uint8_t len = r->ram[RAM_TXFIFO] & 0x7F;
	bool autocrc = r->reg[R_MDMCTRL0] & MDMCTRL0_AUTOCRC;
	unsigned need = 1u + len - (autocrc ? 2u : 0u);
	if (r->txfifo_len == 0 || len < (autocrc ? 2 : 0) || r->txfifo_len < need) {
		/* not all of the frame is in the TX FIFO: the chip would run out
		 * of bytes mid-frame; the model refuses at once (docs) */
		r->tx_underflow = true;
		r->count.tx_underflows++;
		return;
	}
	uint8_t psdu[FRAME_MAX];
	memcpy(psdu, r->ram + RAM_TXFIFO + 1, len);
	if (autocrc && len >= 2) {
		uint16_t fcs = ieee802154_fcs(psdu, len - 2u);
		psdu[len - 2] = (uint8_t)fcs;
		psdu[len - 1] = (uint8_t)(fcs >> 8);
	}
	transmit(r, now, TX_FRAME, psdu, len);
}

static void send_ack(struct cc2420 *r, sim_ps now, bool pending, uint8_t dsn)
{
	uint8_t ack[5] = { (uint8_t)(0x02 | (pending ? 0x10 : 0)), 0x00, dsn, 0, 0 };
	uint16_t fcs = ieee802154_fcs(ack, 3);
	ack[3] = (uint8_t)fcs;
	ack[4] = (uint8_t)(fcs >> 8);
	transmit(r, now, TX_FRAME, ack, 5);
}

/* A strobe that leaves TX: the signal stops STOP_PS later (docs). The chip
 * is idle until the caller says otherwise. */
static bool stop_tx(struct cc2420 *r, sim_ps now)
{
	if (r->state != TX_CALIBRATE && r->state != TX_ON_AIR)
		return false;
	node_stop_tx(r->node, r->tx_id, now + STOP_PS);
	r->count.frames_aborted++;
	r->sfd = false;
	set_state(r, IDLE, now);
	return true;
}

/* --- power and reset ----------------------------------------------------- */

static void reset_chip(struct cc2420 *r, sim_ps now, enum state to)
{
	abort_reception(r);
	memcpy(r->reg, reg_reset, sizeof r->reg);
	r->txfifo_len = 0;
	r->tx_underflow = false;
	r->rx_head = r->rx_count = r->rx_complete = 0;
	r->overflow = false;
	r->sfd = false;
	set_state(r, to, now);
	update_pins(r, now);
}

static void vreg_up(struct sim_node *node, sim_ps when, void *arg, uint32_t gen)
{
	(void)node;
	struct cc2420 *r = arg;
	if (gen == r->gen && r->state == VREG_OFF)
		reset_chip(r, when, POWER_DOWN);
}

static void xosc_up(struct sim_node *node, sim_ps when, void *arg, uint32_t gen)
{
	(void)node;
	struct cc2420 *r = arg;
	if (gen == r->gen && r->state == XOSC_STARTING) {
		set_state(r, IDLE, when);
		update_pins(r, when);
	}
}

static void vreg_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	struct cc2420 *r = param;
	sim_ps now = node_now(r->node);
	bool on = value & 1;
	if (on == r->vreg_en)
		return;
	r->vreg_en = on;
	stop_tx(r, now);
	reset_chip(r, now, VREG_OFF);
	if (on)
		node_at(r->node, now + VREG_UP_PS, vreg_up, r, r->gen);
}

static void resetn_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	struct cc2420 *r = param;
	bool high = value & 1;
	if (high == r->resetn)
		return;
	r->resetn = high;
	if (!high && r->state != VREG_OFF) {
		sim_ps now = node_now(r->node);
		stop_tx(r, now);
		reset_chip(r, now, POWER_DOWN);
	}
}

/* --- SPI ------------------------------------------------------------------ */

static uint8_t status_byte(const struct cc2420 *r, sim_ps now)
{
	uint8_t s = 0;
	if (r->state >= IDLE)
		s |= STATUS_XOSC_STABLE;
	if (r->tx_underflow)
		s |= STATUS_TX_UNDERFLOW;
	if (r->state == TX_CALIBRATE || r->state == TX_ON_AIR)
		s |= STATUS_TX_ACTIVE;
	if (r->state == RX_SEARCH || r->state == TX_ON_AIR || r->state == RX_OVERFLOW)
		s |= STATUS_LOCK;
	if (rssi_valid(r, now))
		s |= STATUS_RSSI_VALID;
	return s;
}

static void strobe(struct cc2420 *r, uint8_t s, sim_ps now)
{
	bool osc = r->state >= IDLE;
	switch (s) {
	case S_SNOP: case S_STXCAL: break;
	case S_SXOSCON:
		if (r->state == POWER_DOWN) {
			set_state(r, XOSC_STARTING, now);
			node_at(r->node, now + XOSC_UP_PS, xosc_up, r, r->gen);
		}
		break;
	case S_SRXON:
		if (osc) {
			stop_tx(r, now);
			start_rx(r, now);
		}
		break;
	case S_STXON:
		if (osc) {
			stop_tx(r, now);
			start_tx(r, now);
		}
		break;
	case S_STXONCCA:
		if (r->state == RX_SEARCH && cca_clear(r, now))
			start_tx(r, now);
		break;
	case S_SRFOFF:
		if (osc) {
			stop_tx(r, now);
			abort_reception(r);
			set_state(r, IDLE, now);
		}
		break;
	case S_SXOSCOFF:
		if (osc) {
			stop_tx(r, now);
			abort_reception(r);
			set_state(r, POWER_DOWN, now);
		}
		break;
	case S_SFLUSHRX:
		abort_reception(r);
		r->rx_head = r->rx_count = r->rx_complete = 0;
		if (r->overflow) {
			r->overflow = false;
			set_state(r, RX_SEARCH, now);
			r->listening_since = now;
		}
		break;
	case S_SFLUSHTX:
		if (stop_tx(r, now))
			start_rx(r, now);
		r->txfifo_len = 0;
		r->tx_underflow = false;
		break;
	case S_SACK: case S_SACKPEND:
		if (r->state == RX_SEARCH)
			send_ack(r, now, s == S_SACKPEND, r->ack_dsn);
		break;
	default:
		r->count.unsupported_strobes++;
		break;
	}
	update_pins(r, now);
}

static uint16_t reg_read(struct cc2420 *r, uint8_t a, sim_ps now)
{
	switch (a) {
	case R_RSSI: return (uint16_t)((r->reg[R_RSSI] & 0xFF00) | (uint8_t)(int8_t)rssi_val(r, now));
	case R_FSMSTATE: return fsmstate_of[r->state];
	default: return a <= 0x30 ? r->reg[a] : 0;
	}
}

static void reg_write(struct cc2420 *r, uint8_t a, uint16_t v, sim_ps now)
{
	if (a == R_MAIN && !(v & 0x8000)) {	/* RESETn bit: a software reset */
		reset_chip(r, now, r->state == VREG_OFF ? VREG_OFF : POWER_DOWN);
		return;
	}
	if (a <= 0x30 && a != R_MANFIDL && a != R_MANFIDH && a != R_FSMSTATE)
		r->reg[a] = v;
	update_pins(r, now);
}

static uint8_t rxfifo_pop(struct cc2420 *r)
{
	if (r->rx_count == 0) {
		r->count.rxfifo_underflows++;
		return 0;
	}
	uint8_t b = r->ram[RAM_RXFIFO + r->rx_head];
	r->rx_head = (uint8_t)((r->rx_head + 1) % 128);
	r->rx_count--;
	/* FIFOP raised for complete frames falls with the first byte read
	 * (it stays up while more than FIFOP_THR bytes are unread) */
	r->rx_complete = 0;
	return b;
}

/* One byte exchanged while CSn is low: what goes back on MISO. */
static uint8_t spi_byte(struct cc2420 *r, uint8_t in, sim_ps now)
{
	uint8_t out = status_byte(r, now);
	switch (r->phase) {
	case SPI_DESELECTED:
		return 0xFF;
	case SPI_ADDRESS:
		r->address = in;
		if (in & 0x80) {
			r->ram_address = in & 0x7F;
			r->phase = SPI_RAM_ADDRESS;
		} else if ((in & 0x3F) < 0x10) {
			strobe(r, in & 0x0F, now);
		} else if ((in & 0x3F) >= R_TXFIFO) {
			r->phase = SPI_FIFO;
		} else {
			r->shift = reg_read(r, in & 0x3F, now);
			r->phase = SPI_REG_HIGH;
		}
		return out;
	case SPI_REG_HIGH:
		r->phase = SPI_REG_LOW;
		if (r->address & 0x40)
			return (uint8_t)(r->shift >> 8);
		r->shift = (uint16_t)(in << 8);
		return out;
	case SPI_REG_LOW:
		r->phase = SPI_ADDRESS;
		if (r->address & 0x40)
			return (uint8_t)r->shift;
		reg_write(r, r->address & 0x3F, (uint16_t)(r->shift | in), now);
		return out;
	case SPI_FIFO:
		if ((r->address & 0x3F) == R_TXFIFO) {
			if (r->address & 0x40)
				return r->ram[RAM_TXFIFO];
			if (r->txfifo_len < 128)
				r->ram[RAM_TXFIFO + r->txfifo_len++] = in;
			return out;
		}
		if (r->address & 0x40) {
			uint8_t b = rxfifo_pop(r);
			update_pins(r, now);
			return b;
		}
		if (r->rx_count < 128)
			rxfifo_push(r, in);
		update_pins(r, now);
		return out;
	case SPI_RAM_ADDRESS:
		r->ram_address = (uint16_t)(r->ram_address | ((in >> 6) & 3) << 7);
		r->ram_read = in & 0x20;
		r->phase = SPI_RAM_DATA;
		return out;
	case SPI_RAM_DATA: {
		uint16_t a = r->ram_address++ % 0x180;
		if (a >= RAM_SIZE)
			return 0;
		if (r->ram_read)
			return r->ram[a];
		r->ram[a] = in;
		if (a < RAM_RXFIFO && a + 1u > r->txfifo_len)
			r->txfifo_len = (uint8_t)(a + 1);
		return in;
	}
	}
	return out;
}

/* SPDR written: the byte takes 8 SPI clocks, as SPCR/SPSR set them; then the
 * chip's answer arrives through libsimavr's SPI input, which raises SPIF.
 * (libsimavr 1.6 takes 100 us for every byte whatever the clock.) */
static avr_cycle_count_t spi_done(avr_t *avr, avr_cycle_count_t when, void *param)
{
	(void)when;
	struct cc2420 *r = param;
	uint8_t out = r->selected && r->state != VREG_OFF ? spi_byte(r, avr->data[r->w->spdr], node_now(r->node))
							 : 0xFF;
	avr_raise_irq(r->spi_in, out);
	return 0;
}

static void spdr_write(avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
	struct cc2420 *r = param;
	avr->data[addr] = v;
	avr->data[r->w->spsr] &= 0x7F;	/* SPIF */
	uint8_t spcr = avr->data[r->w->spcr];
	if (!(spcr & 0x40) || !(spcr & 0x10))	/* SPE, MSTR */
		return;
	static const unsigned divider[4] = { 4, 16, 64, 128 };
	unsigned div = divider[spcr & 3];
	if (avr->data[r->w->spsr] & 1)	/* SPI2X */
		div /= 2;
	avr_cycle_timer_register(avr, 8 * div, spi_done, param);
}

static void csn_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	struct cc2420 *r = param;
	bool selected = !(value & 1);
	if (selected == r->selected)
		return;
	r->selected = selected;
	r->phase = selected ? SPI_ADDRESS : SPI_DESELECTED;
}

/* --- set-up and figures ----------------------------------------------------- */

struct cc2420 *cc2420_attach(struct sim_node *node, double capture_db, uint64_t seed)
{
	const struct wiring *w = NULL;
	for (size_t i = 0; i < sizeof wirings / sizeof wirings[0]; i++)
		if (strcmp(node->mcu, wirings[i].mcu) == 0)
			w = &wirings[i];
	if (!w)
		return NULL;
	struct cc2420 *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->node = node;
	r->w = w;
	r->capture_ratio = pow(10.0, capture_db / 10.0);
	r->prng = seed ^ (0xC2B2AE3D27D4EB4Full * (node->index + 1));
	r->state = VREG_OFF;
	r->acct = CC2420_ACCT_OFF;
	r->resetn = true;
	r->pin_fifo = r->pin_fifop = r->pin_sfd = r->pin_cca = -1;
	memcpy(r->reg, reg_reset, sizeof r->reg);
	node->radio = r;

	avr_t *avr = node->avr;
	avr_io_addr_t spdr = AVR_DATA_TO_IO(w->spdr);
	avr->io[spdr].w.c = spdr_write;	/* replaces libsimavr's fixed 100 us */
	avr->io[spdr].w.param = r;
	/* libsimavr names the ATmega128's SPI 0, newer parts' SPI '0' */
	r->spi_in = avr_io_getirq(avr, AVR_IOCTL_SPI_GETIRQ(0), SPI_IRQ_INPUT);
	if (!r->spi_in)
		r->spi_in = avr_io_getirq(avr, AVR_IOCTL_SPI_GETIRQ('0'), SPI_IRQ_INPUT);
	avr_irq_t *csn = node_pin_irq(node, w->csn.port, w->csn.bit),
		  *vreg = node_pin_irq(node, w->vreg_en.port, w->vreg_en.bit),
		  *resetn = node_pin_irq(node, w->resetn.port, w->resetn.bit);
	if (!r->spi_in || !csn || !vreg || !resetn) {
		free(r);
		node->radio = NULL;
		return NULL;
	}
	avr_irq_register_notify(csn, csn_pin, r);
	avr_irq_register_notify(vreg, vreg_pin, r);
	avr_irq_register_notify(resetn, resetn_pin, r);
	r->selected = false;
	r->phase = SPI_DESELECTED;
	update_pins(r, 0);
	return r;
}

void cc2420_finish(struct cc2420 *r, sim_ps end)
{
	if (end > r->acct_since) {
		r->acct_ps[r->acct] += end - r->acct_since;
		r->acct_since = end;
	}
}

const struct cc2420_counters *cc2420_counters(const struct cc2420 *r) { return &r->count; }
const sim_ps *cc2420_acct(const struct cc2420 *r) { return r->acct_ps; }
