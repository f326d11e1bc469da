/*
 * tern-simavr - run one AVR image on libsimavr (1.6), fast and cycle-exact.
 *
 *   tern-simavr [--mcu atmega128] [--freq 4000000] [--max-cycles N]
 *               [--max-wall-seconds S] [--profile FILE] [--trace FILE] IMAGE.elf
 *
 * Compared with the stock `simavr` command this harness
 *  - never waits in wall-clock time: SLEEP jumps straight to the next cycle
 *    timer (the next peripheral event) instead of calling usleep();
 *  - sends USART0 output byte for byte to stdout, without simavr's line
 *    echo and without the usleep() simavr does when UCSR0A is polled;
 *  - stops when the guest writes its status to the exit port
 *    (TERN_SIMAVR_EXIT_ADDR, see tern_simavr_abi.h) and exits with it;
 *  - stops with a distinct error code on a crash, a CPU that can never wake
 *    up, or a cycle / wall-time limit, and never starts a gdb server.
 * --profile FILE writes, when the run ends, the cycles spent at each
 * instruction address ("0x<byte address> <cycles>" per line, sleep counted
 * at its SLEEP). --trace FILE writes "<cycle> 0x<byte address>" for every
 * instruction (or sleep) as it starts: the path of one event, cycle by
 * cycle. `./tern profile` maps either to functions.
 * Nothing depends on wall time, so two runs of one image print the same
 * bytes and end on the same cycle.
 *
 * Last line on stderr, always: "tern-simavr: exit=<code> cycles=<cycle>",
 * preceded by a "tern-simavr: error: ..." line when the harness stopped the
 * run itself. The exit codes are listed below.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include <sim_avr.h>
#include <sim_interrupts.h>
#include <sim_io.h>
#include <sim_irq.h>

#include "avr_load.h"
#include "tern_simavr_abi.h"

/* The harness's own exit codes. Otherwise it exits with the guest's status,
 * which should therefore stay in 0..99. */
enum {
	EXIT_USAGE = 100,		/* bad command line, unknown MCU */
	EXIT_LOAD = 101,		/* ELF image unreadable, empty or too big */
	EXIT_CRASH = 102,		/* simavr crashed the CPU, or an invalid opcode */
	EXIT_SLEEP_FOREVER = 103,	/* SLEEP with nothing that can wake the CPU */
	EXIT_CYCLE_LIMIT = 104,		/* --max-cycles reached */
	EXIT_WALL_LIMIT = 105,		/* --max-wall-seconds reached */
};

/* Wall time is read once per this many avr_run() calls (one call is one
 * instruction or one sleep jump), which keeps clock_gettime off the hot path. */
#define WALL_CHECK_INTERVAL (1u << 20)

static int exit_requested;
static uint8_t exit_status;
static int invalid_opcode_seen;

/* --profile: cycles per flash word, written by finish(). */
static uint64_t *profile;
static size_t profile_words;
static const char *profile_path;

static FILE *trace; /* --trace */

static void profile_write(void)
{
	FILE *f = fopen(profile_path, "w");
	if (!f) {
		fprintf(stderr, "tern-simavr: error: cannot write profile '%s'\n",
			profile_path);
		return;
	}
	for (size_t w = 0; w < profile_words; w++)
		if (profile[w])
			fprintf(f, "0x%05zx %" PRIu64 "\n", 2 * w, profile[w]);
	fclose(f);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tern-simavr [--mcu NAME] [--freq HZ] [--max-cycles N]"
		" [--max-wall-seconds S] [--profile FILE] [--trace FILE] IMAGE.elf\n"
		"defaults: --mcu atmega128 --freq 4000000 --max-cycles 4e9"
		" --max-wall-seconds 600\n");
}

/* Flushes the guest's console first so that, on a terminal, the harness's
 * messages come after the output that led to them. */
static void __attribute__((noreturn, format(printf, 3, 4)))
finish(avr_t *avr, int code, const char *fmt, ...)
{
	fflush(stdout);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		fputs("tern-simavr: error: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}
	if (profile)
		profile_write();
	if (trace)
		fclose(trace);
	fprintf(stderr, "tern-simavr: exit=%d cycles=%" PRIu64 "\n", code,
		avr ? (uint64_t)avr->cycle : 0);
	if (avr)
		avr_terminate(avr);	/* closes a VCD trace the image may have asked for */
	exit(code);
}

/*
 * simavr's default logger prints its own messages on stdout, where they would
 * mix with the guest's console. Send errors to stderr, without the terminal
 * colour codes simavr wraps them in, and drop the chatter.
 * simavr 1.6 only logs an invalid opcode and carries on with the next word;
 * for a kernel under test that means a wild jump, so it counts as a crash.
 */
static void log_to_stderr(avr_t *avr, const int level, const char *fmt, va_list ap)
{
	(void)avr;
	if (strstr(fmt, "Invalid Opcode"))
		invalid_opcode_seen = 1;
	if (level > LOG_ERROR)
		return;
	fflush(stdout);
	avr_log_plain(fmt, ap);
}

static void uart_byte_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	(void)param;
	putchar((int)(value & 0xff));
}

/* Marking the CPU done keeps avr_run() from servicing an interrupt after the
 * store, so the final cycle count is that of the exit instruction itself. */
static void exit_port_write(avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
	(void)addr;
	(void)param;
	exit_status = v;
	exit_requested = 1;
	avr->state = cpu_Done;
}

static uint8_t abi_read(avr_t *avr, avr_io_addr_t addr, void *param)
{
	(void)avr;
	(void)param;
	return addr == TERN_SIM_CHANNEL_ADDR ? 26 : addr == TERN_SIM_NODE_COUNT_LO_ADDR ? 1 : 0;
}

/* Accepts plain integers and the "4e9" notation. */
static int parse_number(const char *s, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *mcu = "atmega128";
	double freq = 4000000, max_cycles = 4e9, max_wall = 600;

	static const struct option options[] = {
		{ "mcu", required_argument, NULL, 'm' },
		{ "freq", required_argument, NULL, 'f' },
		{ "max-cycles", required_argument, NULL, 'c' },
		{ "max-wall-seconds", required_argument, NULL, 'w' },
		{ "profile", required_argument, NULL, 'p' },
		{ "trace", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		int bad = 0;
		switch (opt) {
		case 'm': mcu = optarg; break;
		case 'f': bad = parse_number(optarg, UINT32_MAX, &freq) || freq < 1; break;
		case 'c': bad = parse_number(optarg, 1.8e19, &max_cycles); break;
		case 'w': bad = parse_number(optarg, 1e9, &max_wall); break;
		case 'p': profile_path = optarg; break;
		case 't':
			trace = fopen(optarg, "w");
			if (!trace)
				finish(NULL, EXIT_USAGE, "cannot write trace '%s'", optarg);
			break;
		case 'h': usage(stdout); return 0;
		default: bad = 1; break;
		}
		if (bad) {
			usage(stderr);
			finish(NULL, EXIT_USAGE, "bad command line");
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		finish(NULL, EXIT_USAGE, "expected exactly one IMAGE.elf");
	}
	const char *image = argv[optind];

	avr_global_logger_set(log_to_stderr);

	enum avr_core_error why;
	char err[1200];
	avr_t *avr = avr_harness_core(image, mcu, (uint32_t)freq, uart_byte_out, NULL, &why, err, sizeof err);
	if (!avr)
		finish(NULL, why == AVR_CORE_EMCU ? EXIT_USAGE : EXIT_LOAD, "%s", err);

	avr_register_io_write(avr, TERN_SIMAVR_EXIT_ADDR, exit_port_write, NULL);
	/* tern-sim's node registers: the only node, 0 of 1, on channel 26 */
	static const avr_io_addr_t abi[] = { TERN_SIM_NODE_ID_LO_ADDR, TERN_SIM_NODE_ID_HI_ADDR,
					     TERN_SIM_CHANNEL_ADDR, TERN_SIM_NODE_COUNT_LO_ADDR,
					     TERN_SIM_NODE_COUNT_HI_ADDR };
	for (size_t i = 0; i < sizeof abi / sizeof abi[0]; i++)
		avr_register_io_read(avr, abi[i], abi_read, NULL);

	if (profile_path) {
		profile_words = ((size_t)avr->flashend + 1) / 2;
		profile = calloc(profile_words, sizeof *profile);
		if (!profile)
			finish(avr, EXIT_USAGE, "no memory for the profile");
	}

	const avr_cycle_count_t cycle_limit = (avr_cycle_count_t)max_cycles;
	const double wall_deadline = now_seconds() + max_wall;
	for (uint32_t n = 1;; n++) {
		/* Address of the instruction this step executes (or of the SLEEP
		 * being waited in), for the error messages. */
		const avr_flashaddr_t pc = avr->pc;
		const avr_cycle_count_t before = avr->cycle;
		/* A sleeping core's PC is already past its SLEEP. */
		const avr_flashaddr_t at = avr->state == cpu_Sleeping ? pc - 2 : pc;
		if (trace)
			fprintf(trace, "%" PRIu64 " 0x%05" PRIx32 "\n", (uint64_t)before,
				(uint32_t)at);
		int state = avr_run(avr);
		if (profile && at / 2 < profile_words)
			profile[at / 2] += avr->cycle - before;

		if (exit_requested)
			finish(avr, exit_status, NULL);
		if (invalid_opcode_seen)
			finish(avr, EXIT_CRASH, "invalid opcode at PC 0x%05" PRIx32,
			       (uint32_t)pc);
		switch (state) {
		case cpu_Running:
			break;
		case cpu_Sleeping:
			/* Only a cycle timer (a running peripheral) or an already
			 * pending interrupt can end this sleep: nothing outside
			 * feeds the simulated pins or the UART receiver. */
			if (!avr->cycle_timers.timer && !avr_has_pending_interrupts(avr))
				finish(avr, EXIT_SLEEP_FOREVER, "sleeping forever:"
				       " SLEEP with no timer running and no interrupt"
				       " pending (PC 0x%05" PRIx32 ")", (uint32_t)pc);
			break;
		case cpu_Done:
			/* simavr's verdict for SLEEP with the I flag clear. */
			finish(avr, EXIT_SLEEP_FOREVER, "sleeping forever: SLEEP"
			       " with interrupts disabled (PC 0x%05" PRIx32 ")",
			       (uint32_t)pc);
		default:	/* cpu_Crashed: bad data address, PC past flash */
			finish(avr, EXIT_CRASH, "CPU crashed at PC 0x%05" PRIx32
			       " (simavr state %d)", (uint32_t)pc, state);
		}
		if (avr->cycle >= cycle_limit)
			finish(avr, EXIT_CYCLE_LIMIT, "cycle limit of %" PRIu64 " reached",
			       (uint64_t)cycle_limit);
		if (n % WALL_CHECK_INTERVAL == 0 && now_seconds() >= wall_deadline)
			finish(avr, EXIT_WALL_LIMIT, "wall-time limit of %g s reached",
			       max_wall);
	}
}
