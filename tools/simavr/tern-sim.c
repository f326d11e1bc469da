/*
 * tern-sim - many AVR nodes with CC2420 radios in one deterministic,
 * cycle-exact simulation on libsimavr.
 *
 *   tern-sim [--threads N] [--profile] [--profile-windows FILE] CONFIG
 *
 * CONFIG is the line format of docs/tern-sim.md (`./tern sim` writes it from
 * a scenario TOML). Outputs go to the directory the config names: consoles,
 * air.pcap, events.jsonl, summary.json; with --profile also
 * profile/<node>.txt, tern-simavr's --profile format (the cycles at each
 * instruction address, a sleep counted at its SLEEP) for `./tern profile`.
 * --profile-windows FILE (implies --profile) counts only the cycles inside
 * its windows, a line "NODE FROM_PS TO_PS" each (simulated time, a node's
 * windows in order and disjoint): where the cycles of chosen intervals went.
 *
 * Nodes run in lockstep windows no longer than the shortest latency with
 * which one node can affect another: a transmission goes on air 12 symbols
 * after its strobe (LONG_WINDOW_PS), and while one is on air or about to
 * be, a strobe can stop it one symbol later (SHORT_WINDOW_PS). What the nodes
 * put on air is collected and handed to the receivers between windows, in
 * node order. A window's
 * nodes may run on several host threads: they share nothing while they run,
 * so the outputs do not depend on the thread count.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "avr_load.h"
#include "bus.h"
#include "cc2420.h"
#include "medium.h"
#include "stimulus.h"
#include "adc.h"
#include "inject.h"
#include "sim.h"
#include "tern_simavr_abi.h"
#include "tun.h"

enum { EXIT_OK = 0, EXIT_USAGE = 100, EXIT_LOAD = 101, EXIT_WALL_LIMIT = 105, EXIT_TUN = 106 };

#define SHORT_WINDOW_PS (16 * PS_PER_US)
#define LONG_WINDOW_PS (192 * PS_PER_US)
#define PROBES_MAX 256
#define BUSES_MAX 64
#define STIMULI_MAX 256
#define INJECTS_MAX 256
#define TUNS_MAX 8
#define ADCS_MAX 256
/* The longest time a config may give in microseconds: in picoseconds it
 * must fit a sim_ps (2^64 ps is 1.8e13 us, 213 days), or the conversion
 * is undefined (fuzz_simcfg: duration_us=20000002000000). */
#define US_MAX 1.8e13

/* Supply and currents for the energy figures (docs/tern-sim.md, "Energy"),
 * per MCU. A sleep in power-down or power-save stops the main oscillator:
 * waking pays its start-up, wake_cycles (16K CK, a crystal oscillator, from
 * the datasheets' start-up tables) at the idle current, E_W = P_I * T_W. */
#define RADIO_SUPPLY_V 3.0
struct cpu_power {
	const char *mcu;
	double supply_v;
	double per_mhz;		/* 0: the currents below are absolute; else active and idle scale with f */
	double active_ma;	/* at 1 MHz when per_mhz */
	double sleep_ma[8];	/* by SM2..0; [0] idle (at 1 MHz when per_mhz) */
	uint32_t wake_cycles[8];
};
static const struct cpu_power cpu_powers[] = {
	/* ATmega128L at 7.3728 MHz, 3 V: MicaZ datasheet (active 8 mA, sleep < 15 uA),
	 * ATmega128L datasheet (idle, ADC noise reduction, standby) */
	{ "atmega128", 3.0, 0, 8.0, { 3.2, 1.0, 0.015, 0.015, 3.2, 3.2, 0.2, 0.2 },
	  { 0, 0, 16384, 16384, 0, 0, 0, 0 } },
	/* ATmega164A/PA/324A/PA/644A/PA/1284/P datasheet, DC characteristics (the
	 * ATmega324PA row: active 5.2 mA and idle 1.3 mA at 8 MHz, 5 V, scaled with f;
	 * power-down 0.15 uA, power-save 0.6 uA with the 32 kHz oscillator, at 3 V);
	 * 5 V, as 20 MHz needs 4.5 V or more. Standby: not in that table, the 128L's. */
	{ "atmega1284p", 5.0, 1, 5.2 / 8, { 1.3 / 8, 1.3 / 8, 0.00015, 0.0006, 1.3 / 8, 1.3 / 8, 0.2, 0.2 },
	  { 0, 0, 16384, 16384, 0, 0, 0, 0 } },
};

static const struct cpu_power *cpu_power_of(const char *mcu)
{
	for (size_t i = 0; i < sizeof cpu_powers / sizeof cpu_powers[0]; i++)
		if (strcmp(cpu_powers[i].mcu, mcu) == 0)
			return &cpu_powers[i];
	return &cpu_powers[0];
}

/* The CPU's energy in mJ: each cycle at its state's current, plus each
 * wake from a state that stopped the oscillator. */
static double cpu_energy_mj(const struct sim_node *n, double seconds)
{
	const struct cpu_power *p = cpu_power_of(n->mcu);
	uint64_t cycles = n->avr->cycle;
	if (!cycles)
		return 0;
	double scale = p->per_mhz ? n->freq_hz / 1e6 : 1;
	double ma_cycles = 0;	/* mA x cycles */
	for (int m = 0; m < 8; m++) {
		double ma = m == 0 || m == 1 || m == 4 || m == 5 ? p->sleep_ma[m] * scale : p->sleep_ma[m];
		ma_cycles += ma * (double)n->sleep_by_mode[m];
		ma_cycles += p->sleep_ma[0] * scale * (double)n->wakes_by_mode[m] * p->wake_cycles[m];
	}
	double active_cycles = cycles > n->sleep_cycles ? (double)(cycles - n->sleep_cycles) : 0;
	ma_cycles += p->active_ma * scale * active_cycles;
	return p->supply_v * ma_cycles / (double)cycles * seconds;
}

static const double radio_ma[CC2420_ACCT_STATES] = { 0.00002, 0.020, 0.426, 18.8, 17.4 };

struct probe_cfg {
	uint32_t node;
	char port;
	uint8_t bit;
	char label[32];
};

struct config {
	uint64_t seed;
	sim_ps duration;
	char out[1024];
	unsigned threads;
	bool profile;
	const char *profile_windows;	/* --profile-windows FILE, NULL if none */
	double max_wall_s;
	struct medium_config medium;
	bool medium_seen;
	struct sim_node **nodes;
	size_t n_nodes;
	struct probe_cfg probes[PROBES_MAX];
	size_t n_probes;
	struct stimulus_config stimuli[STIMULI_MAX];
	uint32_t stimulus_node[STIMULI_MAX];
	size_t n_stimuli;
	struct inject_config injects[INJECTS_MAX];
	uint32_t inject_node[INJECTS_MAX];
	size_t n_injects;
	struct bus *buses[BUSES_MAX];
	size_t n_buses;
	struct tun_config tun_cfg[TUNS_MAX];
	uint32_t tun_node[TUNS_MAX];
	size_t n_tuns;
	struct adc_cfg {
		uint32_t node;
		unsigned channel;
		struct adc_source *src;
	} adcs[ADCS_MAX];
	size_t n_adcs;
	/* per node: its bus and the pin the bus interrupts on */
	struct node_bus {
		int bus;	/* index into buses, -1: none */
		char irq_port;
		uint8_t irq_bit;
	} *node_bus;
};

/* --- config --------------------------------------------------------------- */

static const char *config_path;
static unsigned config_line;

static void __attribute__((noreturn, format(printf, 1, 2))) config_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "tern-sim: %s:%u: ", config_path, config_line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_USAGE);
}

struct kv {
	char *key, *value;
	bool used;
};

static const char *take(struct kv *kv, int n, const char *key, bool required)
{
	for (int i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0) {
			kv[i].used = true;
			return kv[i].value;
		}
	if (required)
		config_error("missing %s=", key);
	return NULL;
}

static double number(const char *key, const char *v, double lo, double hi)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi)
		config_error("%s=%s: must be a number in [%g, %g]", key, v, lo, hi);
	return d;
}

static uint64_t integer(const char *key, const char *v, uint64_t hi)
{
	char *end;
	errno = 0;
	unsigned long long u = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || u > hi)
		config_error("%s=%s: must be an integer in [0, %" PRIu64 "]", key, v, hi);
	return u;
}

static uint32_t node_index(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->n_nodes; i++)
		if (strcmp(c->nodes[i]->name, name) == 0)
			return (uint32_t)i;
	config_error("no node named '%s' (nodes come before the lines that name them)", name);
}

static void copy_str(char *dst, size_t size, const char *key, const char *v)
{
	if (strlen(v) >= size)
		config_error("%s: longer than %zu characters", key, size - 1);
	strcpy(dst, v);
}

static void parse_line(struct config *c, char *line)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *save, *word = strtok_r(line, " \t\r\n", &save);
	if (!word)
		return;
	struct kv kv[32];
	int n = 0;
	for (char *tok; (tok = strtok_r(NULL, " \t\r\n", &save));) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok)
			config_error("'%s': expected key=value", tok);
		if (n == 32)
			config_error("too many keys");
		*eq = '\0';
		kv[n++] = (struct kv){ .key = tok, .value = eq + 1 };
	}
	if (strcmp(word, "sim") == 0) {
		c->seed = integer("seed", take(kv, n, "seed", true), UINT64_MAX);
		double us = number("duration_us", take(kv, n, "duration_us", true), 1, US_MAX);
		c->duration = (sim_ps)(us * PS_PER_US);
		copy_str(c->out, sizeof c->out, "out", take(kv, n, "out", true));
		const char *t = take(kv, n, "threads", false);
		if (t && c->threads == 0)
			c->threads = (unsigned)integer("threads", t, 256);
		const char *w = take(kv, n, "max_wall_s", false);
		if (w)
			c->max_wall_s = number("max_wall_s", w, 0, 1e9);
	} else if (strcmp(word, "medium") == 0) {
		struct medium_config *m = &c->medium;
		const char *model = take(kv, n, "model", true);
		if (strcmp(model, "udgm") == 0) {
			m->model = MEDIUM_UDGM;
			m->tx_range_m = number("tx_range_m", take(kv, n, "tx_range_m", true), 0, 1e7);
			m->int_range_m = number("int_range_m", take(kv, n, "int_range_m", true), m->tx_range_m, 1e7);
			m->success_tx = number("success_tx", take(kv, n, "success_tx", true), 0, 1);
			m->success_rx = number("success_rx", take(kv, n, "success_rx", true), 0, 1);
		} else if (strcmp(model, "table") == 0) {
			m->model = MEDIUM_TABLE;
		} else {
			config_error("model=%s: must be udgm or table", model);
		}
		m->capture_db = number("capture_db", take(kv, n, "capture_db", true), 0, 100);
		m->channel = (uint8_t)number("channel", take(kv, n, "channel", true), 11, 26);
		c->medium_seen = true;
	} else if (strcmp(word, "bus") == 0) {
		if (c->n_buses == BUSES_MAX)
			config_error("more than %d buses", BUSES_MAX);
		struct bus_config b = { 0 };
		const char *name = take(kv, n, "name", true);
		for (size_t i = 0; i < c->n_buses; i++)
			if (strcmp(bus_config(c->buses[i])->name, name) == 0)
				config_error("name=%s: a second bus of that name", name);
		copy_str(b.name, sizeof b.name, "name", name);
		b.throughput_bps = (uint32_t)number("throughput_bps", take(kv, n, "throughput_bps", true), 1000, 1e9);
		b.slot_ps = (sim_ps)(number("slot_us", take(kv, n, "slot_us", true), 1, 1e6) * PS_PER_US);
		b.latency_ps = (sim_ps)(number("latency_us", take(kv, n, "latency_us", true), 1, 1e6) * PS_PER_US);
		b.rx_frames = (unsigned)integer("rx_frames", take(kv, n, "rx_frames", true), 255);
		if (b.rx_frames == 0)
			config_error("rx_frames=0: a processor must be able to hold a frame");
		/* a slot holds the longest frame: 2 + 64 bytes */
		double longest_ps = (2.0 + TERN_BUS_FRAME_MAX) * 8 * 1e12 / b.throughput_bps;
		if ((double)b.slot_ps < longest_ps)
			config_error("slot_us: a slot must hold the longest frame (%.1f us at %u bit/s)", longest_ps / 1e6,
				     b.throughput_bps);
		c->buses[c->n_buses] = bus_new(&b);
		if (!c->buses[c->n_buses])
			config_error("out of memory");
		c->n_buses++;
	} else if (strcmp(word, "link") == 0) {
		struct medium_config *m = &c->medium;
		struct link l = {
			.from = node_index(c, take(kv, n, "from", true)),
			.to = node_index(c, take(kv, n, "to", true)),
			.prr = number("prr", take(kv, n, "prr", true), 0, 1),
			.rssi_dbm = number("rssi_dbm", take(kv, n, "rssi_dbm", true), -200, 30),
		};
		if (l.from == l.to)
			config_error("a link from a node to itself");
		m->links = realloc(m->links, (m->n_links + 1) * sizeof *m->links);
		if (!m->links)
			config_error("out of memory");
		m->links[m->n_links++] = l;
	} else if (strcmp(word, "node") == 0) {
		struct sim_node *nd = calloc(1, sizeof *nd);
		if (!nd)
			config_error("out of memory");
		const char *name = take(kv, n, "name", true);
		for (const char *p = name; *p; p++)
			if (!(*p == '-' || *p == '_' || (*p >= '0' && *p <= '9') || ((*p | 32) >= 'a' && (*p | 32) <= 'z')))
				config_error("name=%s: only letters, digits, - and _", name);
		for (size_t i = 0; i < c->n_nodes; i++)
			if (strcmp(c->nodes[i]->name, name) == 0)
				config_error("name=%s: a second node of that name", name);
		copy_str(nd->name, sizeof nd->name, "name", name);
		copy_str(nd->elf, sizeof nd->elf, "elf", take(kv, n, "elf", true));
		copy_str(nd->mcu, sizeof nd->mcu, "mcu", take(kv, n, "mcu", true));
		nd->freq_hz = (uint32_t)number("freq_hz", take(kv, n, "freq_hz", true), 1000, 1e9);
		nd->ppb = llround(number("ppm", take(kv, n, "ppm", true), -1000, 1000) * 1000);
		nd->x = number("x", take(kv, n, "x", true), -1e7, 1e7);
		nd->y = number("y", take(kv, n, "y", true), -1e7, 1e7);
		nd->z = number("z", take(kv, n, "z", true), -1e7, 1e7);
		const char *radio = take(kv, n, "radio", true);
		if (strcmp(radio, "cc2420") != 0 && strcmp(radio, "none") != 0)
			config_error("radio=%s: must be cc2420 or none", radio);
		nd->has_radio = strcmp(radio, "cc2420") == 0;
		const char *p = take(kv, n, "tx_power_dbm", false);
		nd->tx_power_dbm = p ? (int8_t)number("tx_power_dbm", p, -30, 10) : 0;
		const char *halt = take(kv, n, "halt_us", false);
		nd->halt_ps = halt ? (sim_ps)(number("halt_us", halt, 1, US_MAX) * PS_PER_US) : 0;
		nd->index = (uint32_t)c->n_nodes;
		if (c->n_nodes >= 65535)
			config_error("more than 65,535 nodes");
		int bus = -1;
		char irq_port = 0;
		uint8_t irq_bit = 0;
		const char *bus_name = take(kv, n, "bus", false);
		if (bus_name) {
			for (size_t i = 0; i < c->n_buses; i++)
				if (strcmp(bus_config(c->buses[i])->name, bus_name) == 0)
					bus = (int)i;
			if (bus < 0)
				config_error("bus=%s: no bus of that name (buses come before their processors)", bus_name);
			const char *pin = take(kv, n, "bus_irq", true);
			if (strlen(pin) != 2 || pin[0] < 'A' || pin[0] > 'G' || pin[1] < '0' || pin[1] > '7')
				config_error("bus_irq=%s: a pin such as E4", pin);
			irq_port = pin[0];
			irq_bit = (uint8_t)(pin[1] - '0');
		}
		c->node_bus = realloc(c->node_bus, (c->n_nodes + 1) * sizeof *c->node_bus);
		if (!c->node_bus)
			config_error("out of memory");
		c->node_bus[c->n_nodes] = (struct node_bus){ bus, irq_port, irq_bit };
		c->nodes = realloc(c->nodes, (c->n_nodes + 1) * sizeof *c->nodes);
		if (!c->nodes)
			config_error("out of memory");
		c->nodes[c->n_nodes++] = nd;
	} else if (strcmp(word, "stimulus") == 0) {
		if (c->n_stimuli == STIMULI_MAX)
			config_error("more than %d stimuli", STIMULI_MAX);
		struct stimulus_config *st = &c->stimuli[c->n_stimuli];
		c->stimulus_node[c->n_stimuli] = node_index(c, take(kv, n, "node", true));
		const char *pin = take(kv, n, "pin", true);
		if (strlen(pin) != 2 || pin[0] < 'A' || pin[0] > 'G' || pin[1] < '0' || pin[1] > '7')
			config_error("pin=%s: a pin such as E5", pin);
		st->port = pin[0];
		st->bit = (uint8_t)(pin[1] - '0');
		const char *kind = take(kv, n, "kind", true);
		st->start_ps = (sim_ps)(number("start_us", take(kv, n, "start_us", true), 0, US_MAX) * PS_PER_US);
		st->width_ps = (sim_ps)(number("width_us", take(kv, n, "width_us", true), 0.001, 1e9) * PS_PER_US);
		const char *count = take(kv, n, "count", false);
		st->count = count ? integer("count", count, UINT64_MAX) : 0;
		if (strcmp(kind, "periodic") == 0) {
			st->kind = STIMULUS_PERIODIC;
			st->period_ps = (sim_ps)(number("period_us", take(kv, n, "period_us", true), 0.001, US_MAX) * PS_PER_US);
			if (st->period_ps <= st->width_ps)
				config_error("period_us: must be longer than width_us");
		} else if (strcmp(kind, "poisson") == 0) {
			st->kind = STIMULUS_POISSON;
			st->rate_hz = number("rate_hz", take(kv, n, "rate_hz", true), 1e-9, 1e9);
		} else {
			config_error("kind=%s: must be periodic or poisson", kind);
		}
		c->n_stimuli++;
	} else if (strcmp(word, "inject") == 0) {
		if (c->n_injects == INJECTS_MAX)
			config_error("more than %d injected frames", INJECTS_MAX);
		struct inject_config *in = &c->injects[c->n_injects];
		c->inject_node[c->n_injects] = node_index(c, take(kv, n, "node", true));
		in->at_ps = (sim_ps)(number("at_us", take(kv, n, "at_us", true), 192, US_MAX) * PS_PER_US);
		const char *hex = take(kv, n, "psdu", true);
		size_t hl = strlen(hex);
		if (hl % 2 || hl / 2 > FRAME_MAX)
			config_error("psdu=%s: pairs of hex digits, at most %d bytes", hex, FRAME_MAX);
		for (size_t i = 0; i < hl / 2; i++) {
			char b[3] = { hex[2 * i], hex[2 * i + 1], 0 }, *end;
			in->psdu[i] = (uint8_t)strtoul(b, &end, 16);
			if (*end)
				config_error("psdu=%s: not hex", hex);
		}
		in->n_bytes = (uint8_t)(hl / 2);
		const char *fcs = take(kv, n, "fcs", false);
		if (!fcs || strcmp(fcs, "good") == 0)
			in->fcs = INJECT_FCS_GOOD;
		else if (strcmp(fcs, "bad") == 0)
			in->fcs = INJECT_FCS_BAD;
		else if (strcmp(fcs, "raw") == 0)
			in->fcs = INJECT_FCS_RAW;
		else
			config_error("fcs=%s: good, bad or raw", fcs);
		const char *phr = take(kv, n, "phr", false);
		in->phr = phr ? (int)integer("phr", phr, 127) : -1;
		const char *stop = take(kv, n, "stop_after", false);
		in->stop_after = stop ? (int)integer("stop_after", stop, FRAME_MAX) : -1;
		c->n_injects++;
	} else if (strcmp(word, "tun") == 0) {
		if (c->n_tuns == TUNS_MAX)
			config_error("more than %d tun lines", TUNS_MAX);
		struct tun_config *t = &c->tun_cfg[c->n_tuns];
		uint32_t node = node_index(c, take(kv, n, "node", true));
		for (size_t i = 0; i < c->n_tuns; i++)
			if (c->tun_node[i] == node)
				config_error("node=%s: a second tun for that node", c->nodes[node]->name);
		const char *name = take(kv, n, "name", true);
		if (!*name || strlen(name) >= sizeof t->ifname || strchr(name, '/'))
			config_error("name=%s: an interface name of 1..%zu characters", name, sizeof t->ifname - 1);
		strcpy(t->ifname, name);
		const char *host = take(kv, n, "host", true), *route = take(kv, n, "route", true);
		if (tun_parse_prefix(host, &t->host, &t->host_len) != 0)
			config_error("host=%s: an IPv6 address with its prefix length, e.g. 2001:db8:1::1/64", host);
		if (tun_parse_prefix(route, &t->route, &t->route_len) != 0)
			config_error("route=%s: an IPv6 prefix, e.g. 2001:db8::/64", route);
		c->tun_node[c->n_tuns++] = node;
	} else if (strcmp(word, "adc") == 0) {
		if (c->n_adcs == ADCS_MAX)
			config_error("more than %d adc lines", ADCS_MAX);
		struct adc_cfg *a = &c->adcs[c->n_adcs];
		a->node = node_index(c, take(kv, n, "node", true));
		a->channel = (unsigned)integer("channel", take(kv, n, "channel", true), ADC_CHANNELS - 1);
		for (size_t i = 0; i < c->n_adcs; i++)
			if (c->adcs[i].node == a->node && c->adcs[i].channel == a->channel)
				config_error("node=%s channel=%u: a second file for that channel", c->nodes[a->node]->name,
					     a->channel);
		char err[1200];
		a->src = adc_load(take(kv, n, "file", true), err, sizeof err);
		if (!a->src)
			config_error("%s", err);
		c->n_adcs++;
	} else if (strcmp(word, "pin") == 0) {
		if (c->n_probes == PROBES_MAX)
			config_error("more than %d pins", PROBES_MAX);
		struct probe_cfg *p = &c->probes[c->n_probes++];
		p->node = node_index(c, take(kv, n, "node", true));
		const char *port = take(kv, n, "port", true);
		if (strlen(port) != 1 || port[0] < 'A' || port[0] > 'G')
			config_error("port=%s: must be one of A..G", port);
		p->port = port[0];
		p->bit = (uint8_t)integer("bit", take(kv, n, "bit", true), 7);
		const char *label = take(kv, n, "label", false);
		copy_str(p->label, sizeof p->label, "label", label ? label : "pin");
	} else {
		config_error("unknown directive '%s'", word);
	}
	for (int i = 0; i < n; i++)
		if (!kv[i].used)
			config_error("%s: unknown key", kv[i].key);
}

static void read_config(struct config *c, const char *path)
{
	config_path = path;
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "tern-sim: cannot read '%s': %s\n", path, strerror(errno));
		exit(EXIT_USAGE);
	}
	char line[4096];
	while (fgets(line, sizeof line, f)) {
		config_line++;
		if (!strchr(line, '\n') && !feof(f))
			config_error("line longer than %zu characters", sizeof line - 1);
		parse_line(c, line);
	}
	fclose(f);
	config_line = 0;
	if (!c->duration)
		config_error("no 'sim' line");
	for (size_t i = 0; !c->medium_seen && i < c->n_nodes; i++)
		if (c->nodes[i]->has_radio)
			config_error("node %s has a radio, but there is no 'medium' line", c->nodes[i]->name);
	if (!c->n_nodes)
		config_error("no 'node' line");
	if (c->threads == 0)
		c->threads = 1;
}

/* --- the event log -------------------------------------------------------------- */

static struct config cfg;

static struct log_line *pending;
static size_t n_pending, cap_pending;

static int line_order(const void *pa, const void *pb)
{
	const struct log_line *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void gather(struct log_buf *buf, uint64_t source)
{
	for (size_t i = 0; i < buf->n; i++) {
		if (n_pending == cap_pending) {
			cap_pending = cap_pending ? 2 * cap_pending : 256;
			pending = realloc(pending, cap_pending * sizeof *pending);
			if (!pending) {
				fprintf(stderr, "tern-sim: error: out of memory\n");
				exit(1);
			}
		}
		struct log_line l = buf->lines[i];
		l.seq = l.seq << 1 | source;	/* a node's own lines before the medium's */
		pending[n_pending++] = l;
	}
	buf->n = 0;
}

/* The lines of the medium and the buses (the nodes' are gathered as they run). */
static void gather_shared(struct medium *medium)
{
	gather(medium_log(medium), 1);
	for (size_t b = 0; b < cfg.n_buses; b++)
		gather(bus_log(cfg.buses[b]), 1);
}

/* Write every gathered line before `until` in time order. */
static void flush_log(FILE *out, struct sim_node **nodes, sim_ps until)
{
	qsort(pending, n_pending, sizeof *pending, line_order);
	size_t k = 0;
	for (; k < n_pending && pending[k].t < until; k++) {
		fprintf(out, "{\"t_ps\":%" PRIu64 ",\"node\":\"%s\",%s}\n", pending[k].t,
			nodes[pending[k].node]->name, pending[k].text);
		free(pending[k].text);
	}
	memmove(pending, pending + k, (n_pending - k) * sizeof *pending);
	n_pending -= k;
}

/* --- threads -------------------------------------------------------------------- */

struct pool {
	unsigned n;
	pthread_t *threads;
	pthread_barrier_t start, done;
	struct sim_node **run;
	size_t n_run;
	sim_ps until;
	bool quit;
};

static void run_share(struct pool *p, unsigned share)
{
	for (size_t i = share; i < p->n_run; i += p->n)
		node_run_until(p->run[i], p->until);
}

struct worker_arg {
	struct pool *pool;
	unsigned share;
};

static void *worker(void *arg)
{
	struct worker_arg *w = arg;
	for (;;) {
		pthread_barrier_wait(&w->pool->start);
		if (w->pool->quit)
			return NULL;
		run_share(w->pool, w->share);
		pthread_barrier_wait(&w->pool->done);
	}
}

static void pool_start(struct pool *p, unsigned n)
{
	p->n = n;
	if (n < 2)
		return;
	p->threads = calloc(n, sizeof *p->threads);
	struct worker_arg *args = calloc(n, sizeof *args);
	if (!p->threads || !args) {
		fprintf(stderr, "tern-sim: error: out of memory\n");
		exit(1);
	}
	pthread_barrier_init(&p->start, NULL, n);
	pthread_barrier_init(&p->done, NULL, n);
	for (unsigned i = 1; i < n; i++) {
		args[i] = (struct worker_arg){ .pool = p, .share = i };
		pthread_create(&p->threads[i], NULL, worker, &args[i]);
	}
}

/* Nodes of one window: on the pool when there is enough work to share.
 * Handing a window to the threads costs two barrier waits (microseconds);
 * a 16 us window of a node is ~120 cycles, so only many nodes or long
 * windows pay for it. */
#define PARALLEL_NODE_WINDOW_PS (64 * 16 * PS_PER_US)

static void run_window(struct pool *p, struct sim_node **run, size_t n_run, sim_ps until, sim_ps window)
{
	if (p->n < 2 || n_run < 2 || (sim_ps)n_run * window < PARALLEL_NODE_WINDOW_PS) {
		for (size_t i = 0; i < n_run; i++)
			node_run_until(run[i], until);
		return;
	}
	p->run = run;
	p->n_run = n_run;
	p->until = until;
	pthread_barrier_wait(&p->start);
	run_share(p, 0);
	pthread_barrier_wait(&p->done);
}

static void pool_stop(struct pool *p)
{
	if (p->n < 2)
		return;
	p->quit = true;
	pthread_barrier_wait(&p->start);
	for (unsigned i = 1; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
}

/* --- main ------------------------------------------------------------------------ */

/* With a TUN the run lasts until the scenario's duration or a SIGINT or
 * SIGTERM, which ends it as the duration would: outputs written. */
static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* simavr logs an invalid opcode and carries on; for a kernel that is a wild
 * jump, so the node counts as crashed. Other messages: errors only. */
static void logger(avr_t *avr, const int level, const char *fmt, va_list ap)
{
	if (strstr(fmt, "Invalid Opcode")) {
		for (size_t i = 0; i < cfg.n_nodes; i++)
			if (cfg.nodes[i]->avr == avr)
				cfg.nodes[i]->invalid_opcode = 1;
	}
	if (level <= LOG_ERROR)
		avr_log_plain(fmt, ap);
}

static FILE *open_out(const char *dir, const char *name, const char *mode)
{
	char path[2048];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, mode);
	if (!f) {
		fprintf(stderr, "tern-sim: cannot write '%s': %s\n", path, strerror(errno));
		exit(EXIT_USAGE);
	}
	return f;
}

/* mkdir -p */
static void make_dir(const char *path)
{
	char partial[1100];
	for (const char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		snprintf(partial, sizeof partial, "%.*s", (int)(slash - path), path);
		mkdir(partial, 0777);
	}
	if (mkdir(path, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "tern-sim: cannot create '%s': %s\n", path, strerror(errno));
		exit(EXIT_USAGE);
	}
}

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void write_summary(FILE *f, sim_ps end)
{
	fprintf(f, "{\"seed\": %" PRIu64 ", \"duration_ps\": %" PRIu64 ", \"end_ps\": %" PRIu64
		",\n \"nodes\": [",
		cfg.seed, cfg.duration, end);
	for (size_t i = 0; i < cfg.n_nodes; i++) {
		struct sim_node *n = cfg.nodes[i];
		sim_ps node_end = n->status == NODE_RUNNING ? end : n->end_ps;
		uint64_t cycles = n->avr->cycle;
		double seconds = node_end / 1e12;
		double cpu_mj = cpu_energy_mj(n, seconds);
		static const char *const status[] = { "running", "exit", "crash", "halt" };
		fprintf(f, "%s\n  {\"name\": \"%s\", \"status\": \"%s\", \"exit_status\": %d, \"end_ps\": %" PRIu64
			", \"cycles\": %" PRIu64 ", \"sleep_cycles\": %" PRIu64,
			i ? "," : "", n->name, status[n->status], n->status == NODE_EXITED ? n->exit_status : -1,
			node_end, cycles, n->sleep_cycles);
		/* by SM2..0: idle, ADC noise reduction, power-down, power-save, -, -, standby, extended standby */
		fprintf(f, ",\n   \"sleep_by_mode\": [");
		for (int m = 0; m < 8; m++)
			fprintf(f, "%s%" PRIu64, m ? ", " : "", n->sleep_by_mode[m]);
		fprintf(f, "], \"wakes_by_mode\": [");
		for (int m = 0; m < 8; m++)
			fprintf(f, "%s%" PRIu64, m ? ", " : "", n->wakes_by_mode[m]);
		fprintf(f, "]");
		if (n->status == NODE_CRASHED)
			fprintf(f, ", \"crash\": \"%s\", \"crash_pc\": %" PRIu32, n->crash_reason, n->crash_pc);
		double radio_mj = 0;
		if (n->radio) {
			cc2420_finish(n->radio, node_end);
			const struct cc2420_counters *c = cc2420_counters(n->radio);
			const sim_ps *acct = cc2420_acct(n->radio);
			fprintf(f, ",\n   \"frames_sent\": %" PRIu64 ", \"frames_aborted\": %" PRIu64
				", \"frames_received\": %" PRIu64 ", \"frames_bad_fcs\": %" PRIu64
				", \"frames_collided\": %" PRIu64 ", \"frames_lost\": %" PRIu64
				", \"frames_rejected\": %" PRIu64 ", \"rx_overflows\": %" PRIu64
				", \"tx_underflows\": %" PRIu64 ", \"rxfifo_underflows\": %" PRIu64
				", \"unsupported_strobes\": %" PRIu64 ",\n   \"radio_ps\": {",
				c->frames_sent, c->frames_aborted, c->frames_received, c->frames_bad_fcs,
				c->frames_collided, c->frames_lost, c->frames_rejected, c->rx_overflows,
				c->tx_underflows, c->rxfifo_underflows, c->unsupported_strobes);
			for (int s = 0; s < CC2420_ACCT_STATES; s++) {
				fprintf(f, "%s\"%s\": %" PRIu64, s ? ", " : "", cc2420_acct_names[s], acct[s]);
				radio_mj += RADIO_SUPPLY_V * radio_ma[s] * (acct[s] / 1e12);
			}
			fputc('}', f);
		}
		const struct bus_counters *bc = bus_node_counters(n);
		if (bc)
			fprintf(f, ",\n   \"bus\": {\"frames_sent\": %" PRIu64 ", \"frames_received\": %" PRIu64
				", \"bytes_sent\": %" PRIu64 ", \"refused\": %" PRIu64 ", \"nacked\": %" PRIu64
				", \"waited_ps\": %" PRIu64 "}",
				bc->frames_sent, bc->frames_received, bc->bytes_sent, bc->refused, bc->nacked, bc->waited_ps);
		if (n->tun)
			tun_summary(n->tun, f);
		adc_summary(n, f);
		fprintf(f, ",\n   \"energy_mj\": {\"cpu\": %.6f, \"radio\": %.6f, \"total\": %.6f}}", cpu_mj,
			radio_mj, cpu_mj + radio_mj);
	}
	fprintf(f, "\n]}\n");
}

/* tests/fuzz/fuzz_simcfg.c includes this file for its config reader. */
#ifndef TERN_SIM_FUZZ
/* OUT/profile/<node>.txt: "0x<byte address> <cycles>" for every address that
 * ran, for each node profiled. */
static void write_profiles(void)
{
	char dir[1100];
	snprintf(dir, sizeof dir, "%s/profile", cfg.out);
	make_dir(dir);
	for (size_t i = 0; i < cfg.n_nodes; i++) {
		const struct sim_node *n = cfg.nodes[i];
		if (!n->profile)
			continue;
		char name[128];
		snprintf(name, sizeof name, "%s.txt", n->name);
		FILE *f = open_out(dir, name, "w");
		for (size_t w = 0; w < n->profile_words; w++)
			if (n->profile[w])
				fprintf(f, "0x%05zx %" PRIu64 "\n", 2 * w, n->profile[w]);
		fclose(f);
	}
}

/* --profile-windows FILE: "NODE FROM_PS TO_PS" a line, into each node's
 * windows in cycles; 0, or 1 after naming what is wrong. */
static int read_profile_windows(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "tern-sim: --profile-windows %s: %s\n", path, strerror(errno));
		return 1;
	}
	char name[64];
	unsigned long long from, to;
	unsigned line = 0;
	int got;
	while ((got = fscanf(f, "%63s %llu %llu", name, &from, &to)) == 3) {
		line++;
		struct sim_node *n = NULL;
		for (size_t i = 0; i < cfg.n_nodes && !n; i++)
			if (strcmp(cfg.nodes[i]->name, name) == 0)
				n = cfg.nodes[i];
		struct profile_window w = { n ? node_ps_to_cycle(n, from) : 0, n ? node_ps_to_cycle(n, to) : 0 };
		const char *bad = !n ? "no such node" : from >= to ? "FROM_PS must be below TO_PS"
			: n->n_pwin && w.from < n->pwin[n->n_pwin - 1].to ? "windows out of order or overlapping" : NULL;
		if (bad) {
			fprintf(stderr, "tern-sim: --profile-windows %s: line %u (%s): %s\n", path, line, name, bad);
			fclose(f);
			return 1;
		}
		struct profile_window *p = realloc(n->pwin, (n->n_pwin + 1) * sizeof *p);
		if (!p) {
			fprintf(stderr, "tern-sim: error: out of memory\n");
			fclose(f);
			return 1;
		}
		n->pwin = p;
		n->pwin[n->n_pwin++] = w;
	}
	fclose(f);
	if (got != EOF) {
		fprintf(stderr, "tern-sim: --profile-windows %s: line %u: expected NODE FROM_PS TO_PS\n", path, line + 1);
		return 1;
	}
	for (size_t i = 0; i < cfg.n_nodes; i++)
		if (!cfg.nodes[i]->n_pwin) {	/* no window: no profile */
			free(cfg.nodes[i]->profile);
			cfg.nodes[i]->profile = NULL;
		}
	return 0;
}

int main(int argc, char **argv)
{
	int a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc) {
			char *end;
			long t = strtol(argv[++a], &end, 10);
			if (*end || t < 1 || t > 256) {
				fprintf(stderr, "tern-sim: --threads %s: must be 1..256\n", argv[a]);
				return EXIT_USAGE;
			}
			cfg.threads = (unsigned)t;
		} else if (strcmp(argv[a], "--profile") == 0) {
			cfg.profile = true;
		} else if (strcmp(argv[a], "--profile-windows") == 0 && a + 1 < argc) {
			cfg.profile = true;
			cfg.profile_windows = argv[++a];
		} else {
			fprintf(stderr, "usage: tern-sim [--threads N] [--profile] [--profile-windows FILE] CONFIG\n");
			return strcmp(argv[a], "--help") == 0 ? 0 : EXIT_USAGE;
		}
	}
	if (a != argc - 1) {
		fprintf(stderr, "usage: tern-sim [--threads N] [--profile] [--profile-windows FILE] CONFIG\n");
		return EXIT_USAGE;
	}
	read_config(&cfg, argv[a]);
	avr_global_logger_set(logger);

	make_dir(cfg.out);
	char dir[1100];
	snprintf(dir, sizeof dir, "%s/console", cfg.out);
	make_dir(dir);
	for (size_t i = 0; i < cfg.n_nodes; i++) {
		struct sim_node *n = cfg.nodes[i];
		char name[128], err[1400];
		snprintf(name, sizeof name, "%s.txt", n->name);
		FILE *console = open_out(dir, name, "wb");
		if (node_load(n, console, err, sizeof err) != 0) {
			fprintf(stderr, "tern-sim: %s\n", err);
			return EXIT_LOAD;
		}
		node_arm_halt(n);
		if (cfg.profile) {
			n->profile_words = ((size_t)n->avr->flashend + 1) / 2;
			n->profile = calloc(n->profile_words, sizeof *n->profile);
			if (!n->profile) {
				fprintf(stderr, "tern-sim: error: out of memory for node %s's profile\n", n->name);
				return 1;
			}
		}
		n->channel_reg = cfg.medium_seen ? cfg.medium.channel : 26;
		n->node_count = (uint16_t)cfg.n_nodes;
		n->duration_s = (uint32_t)(cfg.duration / (PS_PER_US * 1000000u));
		if (n->has_radio && !cc2420_attach(n, cfg.medium.capture_db, cfg.seed)) {
			fprintf(stderr, "tern-sim: node %s: no CC2420 wiring for MCU '%s' (tools/simavr/cc2420.c)\n", n->name,
				n->mcu);
			return EXIT_LOAD;
		}
		const struct node_bus *nb = &cfg.node_bus[i];
		if (nb->bus >= 0 && bus_attach(cfg.buses[nb->bus], n, nb->irq_port, nb->irq_bit) != 0) {
			fprintf(stderr, "tern-sim: node %s: cannot attach to bus %s (pin P%c%u missing?)\n", n->name,
				bus_config(cfg.buses[nb->bus])->name, nb->irq_port, nb->irq_bit);
			return EXIT_LOAD;
		}
	}
	if (cfg.profile_windows && read_profile_windows(cfg.profile_windows) != 0)
		return EXIT_USAGE;
	for (size_t i = 0; i < cfg.n_stimuli; i++) {
		struct sim_node *n = cfg.nodes[cfg.stimulus_node[i]];
		if (stimulus_attach(n, &cfg.stimuli[i], cfg.seed, (uint32_t)i) != 0) {
			fprintf(stderr, "tern-sim: node %s has no pin P%c%u for a stimulus\n", n->name,
				cfg.stimuli[i].port, cfg.stimuli[i].bit);
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < cfg.n_adcs; i++) {
		struct sim_node *n = cfg.nodes[cfg.adcs[i].node];
		if (adc_attach(n, cfg.adcs[i].channel, cfg.adcs[i].src) != 0) {
			fprintf(stderr, "tern-sim: node %s: MCU '%s' has no ADC channel %u\n", n->name, n->mcu,
				cfg.adcs[i].channel);
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < cfg.n_injects; i++) {
		struct sim_node *n = cfg.nodes[cfg.inject_node[i]];
		cfg.injects[i].channel = cfg.medium_seen ? cfg.medium.channel : 26;
		if (inject_attach(n, &cfg.injects[i], (uint32_t)i) != 0) {
			fprintf(stderr, "tern-sim: inject %zu: node %s has no radio, or the frame is empty or too long\n",
				i, n->name);
			return EXIT_USAGE;
		}
	}
	struct tun *tuns[TUNS_MAX];
	for (size_t i = 0; i < cfg.n_tuns; i++) {
		char err[512];
		tuns[i] = tun_attach(cfg.nodes[cfg.tun_node[i]], &cfg.tun_cfg[i], err, sizeof err);
		if (!tuns[i]) {
			fprintf(stderr, "tern-sim: node %s: %s\n", cfg.nodes[cfg.tun_node[i]]->name, err);
			return EXIT_TUN;
		}
	}
	if (cfg.n_tuns) {
		struct sigaction sa = { .sa_handler = request_stop };	/* no SA_RESTART: ppoll returns */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	for (size_t i = 0; i < cfg.n_probes; i++) {
		struct probe_cfg *p = &cfg.probes[i];
		if (node_probe_pin(cfg.nodes[p->node], p->port, p->bit, p->label) != 0) {
			fprintf(stderr, "tern-sim: node %s has no pin P%c%u\n", cfg.nodes[p->node]->name, p->port,
				p->bit);
			return EXIT_USAGE;
		}
	}
	FILE *pcap = open_out(cfg.out, "air.pcap", "wb");
	FILE *events = open_out(cfg.out, "events.jsonl", "w");
	struct medium *medium = medium_new(&cfg.medium, cfg.nodes, cfg.n_nodes, cfg.seed, pcap);
	struct sim_node **run = calloc(cfg.n_nodes, sizeof *run);
	if (!medium || !run) {
		fprintf(stderr, "tern-sim: error: out of memory\n");
		return 1;
	}
	struct pool pool = { 0 };
	pool_start(&pool, cfg.threads);

	const double wall0 = wall_seconds();
	const double wall_deadline = cfg.max_wall_s > 0 ? wall0 + cfg.max_wall_s : 0;
	int code = EXIT_OK;
	sim_ps now = 0;
	sim_ps *wake = calloc(cfg.n_nodes, sizeof *wake);
	if (!wake) {
		fprintf(stderr, "tern-sim: error: out of memory\n");
		return 1;
	}
	size_t alive = cfg.n_nodes;
	for (size_t i = 0; i < cfg.n_nodes; i++) {
		wake[i] = node_next_ps(cfg.nodes[i]);
		cfg.nodes[i]->wake = &wake[i];
		gather(&cfg.nodes[i]->log, 0);	/* pin levels set up at reset */
	}
	for (uint64_t windows = 0; now < cfg.duration && alive && !stop_requested; windows++) {
		sim_ps window = medium_busy(medium) ? SHORT_WINDOW_PS : LONG_WINDOW_PS;
		for (size_t b = 0; b < cfg.n_buses; b++)
			if (bus_config(cfg.buses[b])->latency_ps < window)
				window = bus_config(cfg.buses[b])->latency_ps;
		sim_ps until = now + window < cfg.duration ? now + window : cfg.duration;
		medium_deliver(medium, until);
		for (size_t b = 0; b < cfg.n_buses; b++)
			bus_schedule(cfg.buses[b], until);
		size_t n_run = 0;
		for (size_t i = 0; i < cfg.n_nodes; i++)
			if (wake[i] < until)
				run[n_run++] = cfg.nodes[i];
		run_window(&pool, run, n_run, until, window);
		for (size_t r = 0; r < n_run; r++) {
			struct sim_node *n = run[r];
			wake[n->index] = node_next_ps(n);
			if (n->status != NODE_RUNNING) {
				alive--;
				n->wake = NULL;
			}
			gather(&n->log, 0);
		}
		medium_collect(medium, run, n_run);
		for (size_t b = 0; b < cfg.n_buses; b++)
			bus_collect(cfg.buses[b]);
		gather_shared(medium);
		flush_log(events, cfg.nodes, until);
		now = until;

		/* Nobody awake: jump to the next thing that happens. */
		sim_ps next = medium_next(medium);
		for (size_t b = 0; b < cfg.n_buses; b++) {
			sim_ps t = bus_next(cfg.buses[b], now);
			if (t < next)
				next = t;
		}
		for (size_t i = 0; i < cfg.n_nodes; i++)
			if (wake[i] < next)
				next = wake[i];
		sim_ps target = next > now ? (next < cfg.duration ? next : cfg.duration) : now;
		/* With the host in the loop, never ahead of wall-clock time; a
		 * datagram from the host may end the jump early (tun.h). */
		now = cfg.n_tuns ? tun_wait(tuns, cfg.n_tuns, now, target, wall0) : target;
		if (wall_deadline && windows % 4096 == 0 && wall_seconds() > wall_deadline) {
			fprintf(stderr, "tern-sim: error: wall-time limit of %g s reached at %.6f s simulated\n",
				cfg.max_wall_s, now / 1e12);
			code = EXIT_WALL_LIMIT;
			break;
		}
	}
	pool_stop(&pool);
	medium_deliver(medium, now);
	medium_finish(medium);
	for (size_t i = 0; i < cfg.n_nodes; i++)
		gather(&cfg.nodes[i]->log, 0);
	gather_shared(medium);
	flush_log(events, cfg.nodes, SIM_PS_MAX);

	if (cfg.profile)
		write_profiles();
	FILE *summary = open_out(cfg.out, "summary.json", "w");
	write_summary(summary, now);
	fclose(summary);
	fclose(events);
	fclose(pcap);
	/* newest first: glibc keeps open FILEs in a list, newest at its head,
	 * and closing the oldest of 10,000 first walks it 10,000 times */
	for (size_t i = cfg.n_nodes; i-- > 0;)
		fclose(cfg.nodes[i]->console);
	if (stop_requested)
		fprintf(stderr, "tern-sim: stopped by a signal at %.6f s simulated\n", now / 1e12);
	for (size_t i = 0; i < cfg.n_nodes; i++) {
		struct sim_node *n = cfg.nodes[i];
		if (n->status == NODE_CRASHED)
			fprintf(stderr, "tern-sim: node %s crashed: %s\n", n->name, n->crash_reason);
	}
	return code;
}
#endif
