/*
 * sim.h - what the parts of tern-sim share: global time, nodes, their event
 * queues, the event log and the outbox through which a node tells the radio
 * medium what it puts on air.
 *
 * Concurrency: within a lockstep window every node runs on its own (possibly
 * on its own host thread) and touches only its own struct sim_node: its core,
 * its radio, its event queue, its log buffer and its outbox. The medium and
 * the log writer run between windows, on the main thread, in node order.
 */
#ifndef TERN_SIM_H
#define TERN_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sim_avr.h>
#include <sim_irq.h>

typedef uint64_t sim_ps;	/* simulated time, picoseconds since the start */
#define SIM_PS_MAX UINT64_MAX
#define PS_PER_US 1000000ull

/* 802.15.4 at 2.4 GHz: 250 kbit/s, 32 us a byte; a frame on air is the
 * synchronization header (4 preamble bytes and the SFD), the length byte
 * and the PSDU. */
#define PHY_BYTE_PS (32 * PS_PER_US)
#define PHY_SHR_BYTES 5

/* Memory for the simulator's own tables: never NULL, an exhausted host ends
 * the run with a message (node.c). sim_grow doubles an array of *cap
 * elements (first 8) for the "n == cap" pattern. */
void *sim_calloc(size_t n, size_t size);
void *sim_realloc(void *p, size_t size);
void *sim_grow(void *p, size_t *cap, size_t size);

/* splitmix64: the one generator behind every random draw, each device with
 * its own state seeded from the scenario's seed, so draws repeat exactly. */
static inline uint64_t sim_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 bits. */
static inline double sim_uniform(uint64_t *state)
{
	return (double)(sim_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

struct sim_node;
struct cc2420;
struct bus_port;
struct tun;

/* --- the node's own event queue -------------------------------------------
 * Devices schedule callbacks at exact global times; the queue keeps one
 * libsimavr cycle timer armed at the earliest (simavr's own pool holds only
 * 64 timers per core). Events of equal time run in the order they were
 * scheduled. */
typedef void (*sim_event_fn)(struct sim_node *node, sim_ps when, void *arg, uint32_t data);

struct sim_event {
	sim_ps when;
	uint64_t seq;
	sim_event_fn fn;
	void *arg;
	uint32_t data;
};

void node_at(struct sim_node *node, sim_ps when, sim_event_fn fn, void *arg, uint32_t data);

/* --- transmissions ---------------------------------------------------------
 * What one radio puts on air, announced to the medium through the outbox
 * before it starts (the CC2420's 192 us of calibration give the lookahead). */
enum tx_kind { TX_FRAME, TX_CARRIER };

#define FRAME_MAX 127	/* PSDU bytes, FCS included */

struct tx_announce {
	uint64_t id;		/* unique: node index << 32 | the node's count */
	enum tx_kind kind;
	uint8_t channel;
	int8_t power_dbm;
	uint8_t len;		/* PSDU length (frame): the bytes on air */
	uint8_t phr;		/* the length byte sent: len, except for injected frames */
	sim_ps start;		/* first preamble symbol on air */
	sim_ps end;		/* last symbol; SIM_PS_MAX for a carrier until stopped */
	uint8_t psdu[FRAME_MAX];
};

struct tx_stop {
	uint64_t id;
	sim_ps at;		/* the transmission ends here instead */
};

/* What the medium delivers to a receiver, at the times it names. */
struct air_signal {
	uint64_t tx;
	uint16_t from;		/* sender's node index */
	uint32_t to;		/* receiver's node index */
	enum tx_kind kind;
	uint8_t channel;
	uint8_t len;		/* PSDU bytes on air */
	uint8_t phr;		/* the length byte receivers read */
	bool receivable;	/* in range and the loss draw let it through */
	bool in_range;		/* within transmission range (a loss is logged) */
	double rx_dbm;
	sim_ps start, end;
	const uint8_t *psdu;	/* the medium's copy, valid until `end` */
};

/* --- the event log ---------------------------------------------------------
 * Lines are buffered per node and merged in (time, node, seq) order between
 * windows, so the file is the same whatever ran on which thread. */
struct log_line {
	sim_ps t;
	uint32_t node;
	uint64_t seq;
	char *text;		/* the JSON fields after "t_ps" and "node" */
};

struct log_buf {
	struct log_line *lines;
	size_t n, cap;
	uint64_t seq;
};

void log_event(struct log_buf *buf, sim_ps t, uint32_t node, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* --- one node (one AVR core and its devices) ------------------------------ */
enum node_status { NODE_RUNNING, NODE_EXITED, NODE_CRASHED, NODE_HALTED };

struct icp1_regs;
struct adc_node;

struct sim_node {
	uint32_t index;
	char name[64];
	char elf[1024];
	char mcu[32];
	uint32_t freq_hz;
	int64_t ppb;		/* clock error, parts per billion */
	double x, y, z;
	int8_t tx_power_dbm;
	bool has_radio;

	avr_t *avr;
	bool m128;		/* an ATmega128: its register layout (sleep bits, ICP1 on PD4) */
	const struct icp1_regs *icp1;	/* its Timer1 input capture, NULL if unknown */
	struct adc_node *adc;	/* its ADC's signal files (adc.c), NULL if none */
	unsigned __int128 ps_den;	/* freq_hz * (1e9 + ppb): cycle <-> ps */
	enum node_status status;
	uint8_t exit_status;
	char crash_reason[160];
	uint32_t crash_pc;
	sim_ps end_ps;
	sim_ps halt_ps;		/* the config's halt_us: the core stops then (a processor that dies), 0: never */

	/* when the node next needs to run, kept by the main loop in one array
	 * (a scan of 10,000 nodes per window touches 80 KB, not 10,000 cores) */
	sim_ps *wake;

	/* event queue (binary heap) */
	struct sim_event *events;
	size_t n_events, cap_events;
	uint64_t event_seq;
	avr_cycle_count_t armed_cycle;	/* cycle of the armed simavr timer, 0 = none */
	avr_cycle_count_t barrier_cycle;

	/* console */
	FILE *console;

	/* outbox to the medium, emptied between windows */
	struct tx_announce *announces;
	size_t n_announces, cap_announces;
	struct tx_stop *stops;
	size_t n_stops, cap_stops;

	struct log_buf log;
	struct cc2420 *radio;
	struct bus_port *bus_port;	/* processor bus, if the node is on one */
	struct tun *tun;		/* USART0 bridged to a host TUN interface (tun.c), or NULL */

	/* accounting */
	uint64_t sleep_cycles;
	uint64_t sleep_by_mode[8];	/* by the SM2..0 bits at the time of SLEEP */
	uint64_t wakes_by_mode[8];	/* sleeps ended, by the same bits */
	/* a sleep mode that stops the synchronous timers (node.c): which ones
	 * are held (bit per timer), their clock selects and counts */
	uint8_t timers_held;
	uint8_t held_cs[4];
	uint16_t held_tcnt[4];
	int invalid_opcode;
	sim_ps edge_at;		/* while a device drives a pin: the edge's exact time */
	uint8_t channel_reg;	/* what the guest reads at TERN_SIM_CHANNEL_ADDR */
	uint16_t node_count;	/* ... and at TERN_SIM_NODE_COUNT_*_ADDR */
	uint32_t duration_s;	/* the run's length in whole seconds, at TERN_SIM_DURATION_S_ADDR */
	/* --profile: cycles per flash word (a sleep counted at its SLEEP), NULL when off;
	 * with --profile-windows only the cycles inside this node's windows
	 * [from, to) (sorted, disjoint), pwin_at the first not yet over */
	uint64_t *profile;
	size_t profile_words;
	struct profile_window {
		avr_cycle_count_t from, to;
	} *pwin;
	size_t n_pwin, pwin_at;
};

/* ps per cycle = 1e12 / (freq_hz * (1 + ppb/1e9)) = 1e21 / ps_den */
#define SIM_PS_SCALE ((unsigned __int128)1000000000u * 1000000000000u)

static inline sim_ps node_cycle_to_ps(const struct sim_node *n, avr_cycle_count_t c)
{
	return (sim_ps)((unsigned __int128)c * SIM_PS_SCALE / n->ps_den);
}

/* The first cycle at or after time t. */
static inline avr_cycle_count_t node_ps_to_cycle(const struct sim_node *n, sim_ps t)
{
	unsigned __int128 num = (unsigned __int128)t * n->ps_den;
	return (avr_cycle_count_t)((num + SIM_PS_SCALE - 1) / SIM_PS_SCALE);
}

static inline sim_ps node_now(const struct sim_node *n)
{
	return node_cycle_to_ps(n, n->avr->cycle);
}

void node_announce(struct sim_node *node, const struct tx_announce *a);
void node_stop_tx(struct sim_node *node, uint64_t id, sim_ps at);

int node_load(struct sim_node *node, FILE *console, char *err, size_t errlen);
void node_run_until(struct sim_node *node, sim_ps end);
void node_arm_halt(struct sim_node *node);	/* once loaded: stop at halt_ps, if set */
/* When the node next needs to run: now if awake, its next timer if asleep. */
sim_ps node_next_ps(const struct sim_node *node);
/* Logic analyser: log every edge of this pin as a "pin" event. */
int node_probe_pin(struct sim_node *node, char port, uint8_t bit, const char *label);

/* Drive an input pin of the node's AVR (port letter, bit) from a device, at
 * time `when` (now, or a moment ago within the instruction just executed:
 * the logic analyser and Timer1's input capture record `when`). */
void node_drive_pin(struct sim_node *node, char port, int bit, int value, sim_ps when);
/* Timer1's input capture pin (ICP1) of the node's part: the port letter
 * (0 when unknown) and bit. */
char node_icp1_pin(const struct sim_node *node, uint8_t *bit);
avr_irq_t *node_pin_irq(struct sim_node *node, char port, int bit);

#endif
