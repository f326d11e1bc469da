/*
 * node.c - one simulated node of tern-sim: an AVR core on libsimavr with its
 * console, exit port and node-id registers, its event queue, its pins and the
 * stepping of one lockstep window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include <avr_extint.h>
#include <avr_ioport.h>
#include <sim_interrupts.h>
#include <sim_io.h>

#include "avr_load.h"
#include "sim.h"
#include "tern_simavr_abi.h"
#include "tun.h"

static void node_sleep(avr_t *avr, avr_cycle_count_t how_long);

static void *must(void *p)
{
	if (!p) {
		fprintf(stderr, "tern-sim: error: out of memory\n");
		exit(1);
	}
	return p;
}

void *sim_calloc(size_t n, size_t size) { return must(calloc(n ? n : 1, size)); }
void *sim_realloc(void *p, size_t size) { return must(realloc(p, size ? size : 1)); }

void *sim_grow(void *p, size_t *cap, size_t size)
{
	*cap = *cap ? 2 * *cap : 8;
	return sim_realloc(p, *cap * size);
}

/* --- event log -------------------------------------------------------------- */

void log_event(struct log_buf *buf, sim_ps t, uint32_t node, const char *fmt, ...)
{
	if (buf->n == buf->cap)
		buf->lines = sim_grow(buf->lines, &buf->cap, sizeof *buf->lines);
	va_list ap;
	va_start(ap, fmt);
	char *text;
	if (vasprintf(&text, fmt, ap) < 0)
		must(NULL);
	va_end(ap);
	buf->lines[buf->n++] = (struct log_line){ .t = t, .node = node, .seq = buf->seq++, .text = text };
}

/* --- event queue ---------------------------------------------------------- */

static bool event_before(const struct sim_event *a, const struct sim_event *b)
{
	return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static void heap_push(struct sim_node *n, struct sim_event ev)
{
	if (n->n_events == n->cap_events)
		n->events = sim_grow(n->events, &n->cap_events, sizeof *n->events);
	size_t i = n->n_events++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!event_before(&ev, &n->events[parent]))
			break;
		n->events[i] = n->events[parent];
		i = parent;
	}
	n->events[i] = ev;
}

static struct sim_event heap_pop(struct sim_node *n)
{
	struct sim_event top = n->events[0];
	struct sim_event last = n->events[--n->n_events];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n->n_events)
			break;
		if (c + 1 < n->n_events && event_before(&n->events[c + 1], &n->events[c]))
			c++;
		if (!event_before(&n->events[c], &last))
			break;
		n->events[i] = n->events[c];
		i = c;
	}
	if (n->n_events)
		n->events[i] = last;
	return top;
}

static avr_cycle_count_t queue_timer(avr_t *avr, avr_cycle_count_t when, void *param);

/* Keep one simavr cycle timer on the earliest event. While the queue is being
 * dispatched the timer is detached by simavr, which re-arms it from the
 * callback's return value instead. */
static __thread bool dispatching;	/* a node runs on one thread at a time */

static void arm(struct sim_node *n)
{
	if (dispatching || !n->n_events)
		return;
	avr_cycle_count_t c = node_ps_to_cycle(n, n->events[0].when);
	if (n->armed_cycle == c && c > n->avr->cycle)
		return;
	n->armed_cycle = c;
	avr_cycle_timer_register(n->avr, c > n->avr->cycle ? c - n->avr->cycle : 0, queue_timer, n);
}

void node_at(struct sim_node *n, sim_ps when, sim_event_fn fn, void *arg, uint32_t data)
{
	heap_push(n, (struct sim_event){ .when = when, .seq = n->event_seq++, .fn = fn, .arg = arg, .data = data });
	arm(n);
	if (n->wake && when < *n->wake)
		*n->wake = when;
}

static avr_cycle_count_t queue_timer(avr_t *avr, avr_cycle_count_t when, void *param)
{
	(void)when;
	struct sim_node *n = param;
	dispatching = true;
	while (n->n_events && node_ps_to_cycle(n, n->events[0].when) <= avr->cycle) {
		struct sim_event ev = heap_pop(n);
		ev.fn(n, ev.when, ev.arg, ev.data);
	}
	dispatching = false;
	if (!n->n_events) {
		n->armed_cycle = 0;
		return 0;
	}
	n->armed_cycle = node_ps_to_cycle(n, n->events[0].when);
	return n->armed_cycle;
}

/* --- outbox ---------------------------------------------------------------- */

void node_announce(struct sim_node *n, const struct tx_announce *a)
{
	if (n->n_announces == n->cap_announces)
		n->announces = sim_grow(n->announces, &n->cap_announces, sizeof *n->announces);
	n->announces[n->n_announces++] = *a;
}

void node_stop_tx(struct sim_node *n, uint64_t id, sim_ps at)
{
	if (n->n_stops == n->cap_stops)
		n->stops = sim_grow(n->stops, &n->cap_stops, sizeof *n->stops);
	n->stops[n->n_stops++] = (struct tx_stop){ .id = id, .at = at };
}

/* --- pins ------------------------------------------------------------------ */

avr_irq_t *node_pin_irq(struct sim_node *n, char port, int bit)
{
	return avr_io_getirq(n->avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit);
}

/* Timer1 input capture (ICP1): libsimavr copies TCNT1 to ICR1 when the
 * pin's edge is raised, which is at the end of the instruction during which
 * it happened. The capture unit samples the pin every cycle, so ICR1 is put
 * back to the count at the edge itself. Register addresses per part (data
 * space): the ATmega128's on PD4, the ATmega1284P's on PD6. */
struct icp1_regs {
	char port;
	uint8_t bit;
	uint16_t icr1l, tccr1b, tifr;
	uint8_t icf1;
};
static const struct icp1_regs icp1_m128 = { 'D', 4, 0x46, 0x4E, 0x56, 0x20 };
static const struct icp1_regs icp1_m1284 = { 'D', 6, 0x86, 0x81, 0x36, 0x20 };

char node_icp1_pin(const struct sim_node *n, uint8_t *bit)
{
	if (!n->icp1)
		return 0;
	*bit = n->icp1->bit;
	return n->icp1->port;
}

static void capture_at_edge(struct sim_node *n, uint8_t tifr_before, sim_ps when)
{
	const struct icp1_regs *r = n->icp1;
	uint8_t *d = n->avr->data;
	if ((tifr_before & r->icf1) || !(d[r->tifr] & r->icf1))
		return;	/* no new capture */
	static const unsigned prescale[8] = { 0, 1, 8, 64, 256, 1024, 0, 0 };
	unsigned div = prescale[d[r->tccr1b] & 7];
	avr_cycle_count_t edge = node_ps_to_cycle(n, when);
	if (!div || edge >= n->avr->cycle)
		return;
	/* counts elapsed since the edge (at this prescaler's phase) */
	uint16_t late = (uint16_t)(n->avr->cycle / div - edge / div);
	uint16_t icr = (uint16_t)(d[r->icr1l] | d[r->icr1l + 1] << 8);
	icr = (uint16_t)(icr - late);
	d[r->icr1l] = (uint8_t)icr;
	d[r->icr1l + 1] = (uint8_t)(icr >> 8);
}

void node_drive_pin(struct sim_node *n, char port, int bit, int value, sim_ps when)
{
	avr_irq_t *irq = node_pin_irq(n, port, bit);
	if (!irq)
		return;
	bool icp1 = n->icp1 && port == n->icp1->port && bit == n->icp1->bit;
	uint8_t tifr = icp1 ? n->avr->data[n->icp1->tifr] : 0;
	n->edge_at = when;
	avr_raise_irq(irq, value ? 1 : 0);
	n->edge_at = 0;
	if (icp1)
		capture_at_edge(n, tifr, when);
}

struct probe_state {
	struct sim_node *node;
	char port;
	uint8_t bit;
	char label[32];
	int last;	/* the level last logged, -1 before the first */
};

static void probe_edge(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	struct probe_state *p = param;
	int v = value & 1;
	if (v == p->last)
		return;
	p->last = v;
	struct sim_node *n = p->node;
	log_event(&n->log, n->edge_at ? n->edge_at : node_now(n), n->index,
		  "\"event\":\"pin\",\"port\":\"%c\",\"bit\":%u,\"label\":\"%s\",\"value\":%d",
		  p->port, p->bit, p->label, v);
}

int node_probe_pin(struct sim_node *n, char port, uint8_t bit, const char *label)
{
	avr_irq_t *irq = node_pin_irq(n, port, bit);
	if (!irq)
		return -1;
	struct probe_state *p = sim_calloc(1, sizeof *p);
	p->node = n;
	p->port = port;
	p->bit = bit;
	snprintf(p->label, sizeof p->label, "%s", label);
	p->last = -1;
	avr_irq_register_notify(irq, probe_edge, p);
	return 0;
}

/* --- the core ---------------------------------------------------------------- */

static void uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	struct sim_node *n = param;
	if (n->tun)
		tun_uart_out(n->tun, (uint8_t)value);
	else
		fputc((int)(value & 0xff), n->console);
}

static void exit_port_write(avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
	(void)addr;
	struct sim_node *n = param;
	n->status = NODE_EXITED;
	n->exit_status = v;
	n->end_ps = node_now(n);
	avr->state = cpu_Done;
	log_event(&n->log, n->end_ps, n->index, "\"event\":\"exit\",\"status\":%u", v);
}

/* The config's halt_us: the core stops where it is, as a processor that
 * loses power mid-work; frames sent to it are lost (bus.c). */
static void halt_now(struct sim_node *n, sim_ps when, void *arg, uint32_t unused)
{
	(void)arg;
	(void)unused;
	n->status = NODE_HALTED;
	n->end_ps = when;
	n->avr->state = cpu_Done;
	log_event(&n->log, when, n->index, "\"event\":\"halt\"");
}

void node_arm_halt(struct sim_node *n)
{
	if (n->halt_ps)
		node_at(n, n->halt_ps, halt_now, NULL, 0);
}

static uint8_t abi_read(avr_t *avr, avr_io_addr_t addr, void *param)
{
	(void)avr;
	struct sim_node *n = param;
	switch (addr) {
	case TERN_SIM_NODE_ID_LO_ADDR: return (uint8_t)n->index;
	case TERN_SIM_NODE_ID_HI_ADDR: return (uint8_t)(n->index >> 8);
	case TERN_SIM_CHANNEL_ADDR: return n->channel_reg;
	case TERN_SIM_NODE_COUNT_LO_ADDR: return (uint8_t)n->node_count;
	case TERN_SIM_NODE_COUNT_HI_ADDR: return (uint8_t)(n->node_count >> 8);
	case TERN_SIM_DURATION_S_ADDR:
	case TERN_SIM_DURATION_S_ADDR + 1:
	case TERN_SIM_DURATION_S_ADDR + 2:
	case TERN_SIM_DURATION_S_ADDR + 3:
		return (uint8_t)(n->duration_s >> 8 * (addr - TERN_SIM_DURATION_S_ADDR));
	default: return 0;
	}
}

/* The end of a window. It stays armed one cycle ahead until node_run_until
 * cancels it: simavr runs the due timers and then lets a sleeping core jump
 * to the next one, so a SLEEP executed in the barrier's own cycle would
 * otherwise jump past the window (by milliseconds, into events the medium
 * has already freed; found by the soak, docs/reliability.md). */
static avr_cycle_count_t barrier(avr_t *avr, avr_cycle_count_t when, void *param)
{
	(void)when;
	(void)param;
	return avr->cycle + 1;
}

int node_load(struct sim_node *n, FILE *console, char *err, size_t errlen)
{
	enum avr_core_error why;
	char msg[1200];
	n->console = console;
	n->avr = avr_harness_core(n->elf, n->mcu, n->freq_hz, uart_out, n, &why, msg, sizeof msg);
	if (!n->avr) {
		snprintf(err, errlen, "node %s: %s", n->name, msg);
		return -1;
	}
	n->m128 = strcmp(n->mcu, "atmega128") == 0;
	n->avr->custom.data = n;	/* for node_sleep */
	n->avr->sleep = node_sleep;
	n->icp1 = n->m128 ? &icp1_m128 : strcmp(n->mcu, "atmega1284p") == 0 ? &icp1_m1284 : NULL;
	n->ps_den = (unsigned __int128)n->freq_hz * (unsigned __int128)(1000000000 + n->ppb);

	/* libsimavr polls a low-level external interrupt pin on every cycle
	 * while it is low, enabled or not (a device pin idling low, like FIFOP,
	 * made the simulation 4x slower); its non-strict mode triggers on the
	 * falling edge instead (docs/tern-sim.md). */
	for (uint8_t i = 0; i < 8; i++)
		avr_extint_set_strict_lvl_trig(n->avr, i, 0);
	avr_register_io_write(n->avr, TERN_SIMAVR_EXIT_ADDR, exit_port_write, n);
	avr_register_io_read(n->avr, TERN_SIM_NODE_ID_LO_ADDR, abi_read, n);
	avr_register_io_read(n->avr, TERN_SIM_NODE_ID_HI_ADDR, abi_read, n);
	avr_register_io_read(n->avr, TERN_SIM_CHANNEL_ADDR, abi_read, n);
	avr_register_io_read(n->avr, TERN_SIM_NODE_COUNT_LO_ADDR, abi_read, n);
	avr_register_io_read(n->avr, TERN_SIM_NODE_COUNT_HI_ADDR, abi_read, n);
	for (unsigned i = 0; i < 4; i++)
		avr_register_io_read(n->avr, TERN_SIM_DURATION_S_ADDR + i, abi_read, n);
	return 0;
}

static void __attribute__((format(printf, 3, 4)))
node_crash(struct sim_node *n, uint32_t pc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(n->crash_reason, sizeof n->crash_reason, fmt, ap);
	va_end(ap);
	n->status = NODE_CRASHED;
	n->crash_pc = pc;
	n->end_ps = node_now(n);
	log_event(&n->log, n->end_ps, n->index, "\"event\":\"crash\",\"reason\":\"%s\",\"pc\":%" PRIu32,
		  n->crash_reason, pc);
}

sim_ps node_next_ps(const struct sim_node *n)
{
	if (n->status != NODE_RUNNING)
		return SIM_PS_MAX;
	const avr_t *avr = n->avr;
	if (avr->state == cpu_Running || avr_has_pending_interrupts((avr_t *)avr))
		return node_now(n);
	if (!avr->cycle_timers.timer)
		return SIM_PS_MAX;
	return node_cycle_to_ps(n, avr->cycle_timers.timer->when);
}

/* The sleep mode selected: SM2..0 of MCUCR on the ATmega128, of SMCR on
 * the newer parts. */
static unsigned sleep_mode(const struct sim_node *n)
{
	if (n->m128) {
		uint8_t mcucr = n->avr->data[0x55];
		return (unsigned)((mcucr >> 2 & 1) << 2 | (mcucr >> 4 & 1) << 1 | (mcucr >> 3 & 1));
	}
	return (n->avr->data[0x53] >> 1) & 7;
}

static void run_to(struct sim_node *n, avr_cycle_count_t end_cycle);

/* --- Sleep modes that stop the synchronous timers --------------------------- */

/* Every sleep mode but idle halts clk_I/O: the synchronous timers hold
 * their count until the wake (ATmega128 datasheet, "Power Management and
 * Sleep Modes", table "Active Clock Domains"; the same on the ATmega1284P).
 * Only the asynchronous timer runs on, from its own 32 kHz crystal, in
 * power-save and extended standby (and ADC noise reduction): Timer0 with
 * AS0 set on the ATmega128, Timer2 with AS2 on the newer parts. simavr 1.6
 * ignores the SM bits and runs every timer through every sleep, which
 * flatters a kernel that keeps time with Timer1. The node stops them as the
 * SLEEP takes effect (simavr's sleep callback, called at the SLEEP's cycle,
 * before the core jumps to its next event) and restarts them at the wake,
 * each from the count it held: through simavr's own register writes, the clock-select bits cleared
 * (which cancels the timer's events), then set again and the count
 * written back (which schedules them from there). Data addresses. */
struct sync_timer {
	uint16_t tccr;	/* the register with the clock-select bits CS2..0 */
	uint16_t tcnt;	/* the count, low byte */
	uint16_t tcnth;	/* its high byte; 0 for an 8-bit timer */
	uint16_t assr;	/* 0, or ASSR: asynchronous when its bit `as` is set */
	uint8_t as;
};
static const struct sync_timer timers_m128[] = {
	{ 0x53, 0x52, 0, 0x50, 3 },	/* Timer0: TCCR0, TCNT0; AS0 */
	{ 0x4E, 0x4C, 0x4D, 0, 0 },	/* Timer1: TCCR1B, TCNT1 */
	{ 0x45, 0x44, 0, 0, 0 },	/* Timer2: TCCR2, TCNT2 */
	{ 0x8A, 0x88, 0x89, 0, 0 },	/* Timer3: TCCR3B, TCNT3 */
};
static const struct sync_timer timers_mx4[] = {
	{ 0x45, 0x46, 0, 0, 0 },	/* Timer0: TCCR0B, TCNT0 */
	{ 0x81, 0x84, 0x85, 0, 0 },	/* Timer1: TCCR1B, TCNT1 */
	{ 0xB1, 0xB2, 0, 0xB6, 5 },	/* Timer2: TCCR2B, TCNT2; AS2 */
	{ 0x91, 0x94, 0x95, 0, 0 },	/* Timer3: TCCR3B, TCNT3 */
};
#define SYNC_TIMERS 4

/* A register access through simavr's handlers, as an instruction's. */
static uint8_t io_read(avr_t *avr, uint16_t addr)
{
	avr_io_addr_t io = AVR_DATA_TO_IO(addr);
	if (avr->io[io].r.c)
		avr->data[addr] = avr->io[io].r.c(avr, addr, avr->io[io].r.param);
	return avr->data[addr];
}

static void io_write(avr_t *avr, uint16_t addr, uint8_t v)
{
	avr_io_addr_t io = AVR_DATA_TO_IO(addr);
	if (avr->io[io].w.c)
		avr->io[io].w.c(avr, addr, v, avr->io[io].w.param);
	else
		avr->data[addr] = v;
}

/* The modes in which the asynchronous timer runs on: ADC noise reduction,
 * power-save and extended standby (not power-down, not standby). */
#define ASYNC_RUNS(mode) ((mode) == 1 || (mode) == 3 || (mode) == 7)

static void timers_stop(struct sim_node *n, unsigned mode)
{
	const struct sync_timer *t = n->m128 ? timers_m128 : timers_mx4;
	for (unsigned i = 0; i < SYNC_TIMERS; i++, t++) {
		uint8_t tccr = n->avr->data[t->tccr];
		n->held_cs[i] = tccr & 7;
		if (!n->held_cs[i] || (ASYNC_RUNS(mode) && t->assr && (n->avr->data[t->assr] >> t->as & 1)))
			continue; /* stopped, or asynchronous in a mode that keeps its crystal */
		n->held_tcnt[i] = io_read(n->avr, t->tcnt);
		if (t->tcnth)
			n->held_tcnt[i] |= (uint16_t)(n->avr->data[t->tcnth] << 8);
		io_write(n->avr, t->tccr, tccr & ~7);
		n->timers_held |= 1u << i;
	}
}

/* libsimavr's sleep callback: the core is asleep and about to jump to its
 * next event (avr_load.c's sleep_no_wait does nothing else either). Called
 * at every jump of a sleep: the timers stop at the first. */
static void node_sleep(avr_t *avr, avr_cycle_count_t how_long)
{
	(void)how_long;
	struct sim_node *n = avr->custom.data;
	unsigned mode = sleep_mode(n);
	if (mode && !n->timers_held)
		timers_stop(n, mode);
}

static void timers_resume(struct sim_node *n)
{
	const struct sync_timer *t = n->m128 ? timers_m128 : timers_mx4;
	for (unsigned i = 0; i < SYNC_TIMERS; i++, t++) {
		if (!(n->timers_held >> i & 1))
			continue;
		/* a guest that stopped the timer meanwhile (an interrupt handler
		 * cannot run before the wake) is not restarted */
		uint8_t tccr = n->avr->data[t->tccr];
		if (tccr & 7)
			continue;
		io_write(n->avr, t->tccr, (uint8_t)(tccr | n->held_cs[i]));
		/* a 16-bit count is written high byte first, as the part's TEMP
		 * register wants; simavr takes both at the low byte's write */
		if (t->tcnth)
			n->avr->data[t->tcnth] = (uint8_t)(n->held_tcnt[i] >> 8);
		io_write(n->avr, t->tcnt, (uint8_t)n->held_tcnt[i]);
	}
	n->timers_held = 0;
}

void node_run_until(struct sim_node *n, sim_ps end)
{
	if (n->status != NODE_RUNNING)
		return;
	avr_t *avr = n->avr;
	const avr_cycle_count_t end_cycle = node_ps_to_cycle(n, end);
	if (avr->cycle >= end_cycle)
		return;
	/* A sleeping core jumps to its next cycle timer: this one keeps it
	 * from jumping past the window, where another node may yet send it
	 * something. */
	avr_cycle_timer_register(avr, end_cycle - avr->cycle, barrier, n);
	run_to(n, end_cycle);
	/* A sleep ends one cycle past the timer that ends it, with the timer
	 * not yet run: without this the barrier would look like the node's
	 * next event and wake it in every window. */
	avr_cycle_timer_cancel(avr, barrier, n);
}

/* Cycles [from, to) spent at flash address at, or the part of them inside
 * the node's profile windows when it has any. */
static void profile_add(struct sim_node *n, avr_flashaddr_t at, avr_cycle_count_t from, avr_cycle_count_t to)
{
	if (at / 2 >= n->profile_words)
		return;
	if (!n->pwin) {
		n->profile[at / 2] += to - from;
		return;
	}
	for (size_t w = n->pwin_at; w < n->n_pwin && n->pwin[w].from < to; w++) {
		avr_cycle_count_t a = from > n->pwin[w].from ? from : n->pwin[w].from;
		avr_cycle_count_t b = to < n->pwin[w].to ? to : n->pwin[w].to;
		if (a < b)
			n->profile[at / 2] += b - a;
	}
	while (n->pwin_at < n->n_pwin && n->pwin[n->pwin_at].to <= to)
		n->pwin_at++;
}

static void run_to(struct sim_node *n, avr_cycle_count_t end_cycle)
{
	avr_t *avr = n->avr;
	while (avr->cycle < end_cycle) {
		const avr_flashaddr_t pc = avr->pc;
		const avr_cycle_count_t before = avr->cycle;
		const bool asleep = avr->state == cpu_Sleeping;
		const unsigned mode = asleep ? sleep_mode(n) : 0;
		int state = avr_run(avr);
		if (n->profile)
			profile_add(n, asleep ? pc - 2 : pc, before, avr->cycle);	/* a sleeping PC is past its SLEEP */
		if (n->timers_held && avr->state != cpu_Sleeping)
			timers_resume(n);
		if (asleep) {
			n->sleep_cycles += avr->cycle - before;
			n->sleep_by_mode[mode] += avr->cycle - before;
			/* the energy of the oscillator's start-up (tern-sim.c) */
			if (avr->state != cpu_Sleeping)
				n->wakes_by_mode[mode]++;
		}
		if (n->status != NODE_RUNNING)
			return;
		if (n->invalid_opcode) {
			node_crash(n, pc, "invalid opcode at PC 0x%05" PRIx32, (uint32_t)pc);
			return;
		}
		if (state == cpu_Running || state == cpu_Sleeping)
			continue;
		if (state == cpu_Done)
			node_crash(n, pc, "sleeping forever: SLEEP with interrupts disabled (PC 0x%05" PRIx32 ")",
				   (uint32_t)pc);
		else
			node_crash(n, pc, "CPU crashed at PC 0x%05" PRIx32 " (simavr state %d)",
				   (uint32_t)pc, state);
		return;
	}
}
