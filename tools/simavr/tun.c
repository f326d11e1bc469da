/*
 * tun.c - a node's USART0 bridged to a host TUN interface. See tun.h.
 */
#define _GNU_SOURCE
#include "tun.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <net/route.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <avr_uart.h>
#include <sim_io.h>

#include "slip.h"

#define QUEUE_BYTES 16384	/* SLIP bytes from the host not yet in the node's UART */
#define HOST_MTU 1280		/* IPv6's minimum: the border router forwards no more */
#define FRAME_MAX_BYTES 2048
#define RX_OFF_RETRY_PS (1000 * PS_PER_US)	/* receiver disabled: look again in 1 ms */

struct tun {
	struct sim_node *node;
	struct tun_config cfg;
	int fd;
	avr_uart_t *uart;
	avr_irq_t *uart_in;

	/* host -> node: SLIP bytes waiting for room in the UART's FIFO */
	uint8_t queue[QUEUE_BYTES];
	size_t q_head, q_len;
	bool feeding;		/* a feed event is scheduled */

	/* node -> host */
	bool in_frame;		/* between a frame's opening END and its closing END */
	size_t frame_bytes;	/* bytes since the opening END */
	slip_rx dec;
	uint8_t frame[FRAME_MAX_BYTES];

	struct {
		uint64_t to_host, from_host;	/* datagrams */
		uint64_t host_dropped;		/* from the host, no room in the queue */
		uint64_t not_ipv6;		/* frames (either way) without IPv6's version */
		uint64_t write_errors;		/* the host refused a datagram */
		uint64_t console_bytes;
	} count;
};

int tun_parse_prefix(const char *text, struct in6_addr *addr, uint8_t *len)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(text, '/');
	if (!slash || (size_t)(slash - text) >= INET6_ADDRSTRLEN)
		return -1;
	memcpy(buf, text, (size_t)(slash - text));
	buf[slash - text] = '\0';
	char *end;
	errno = 0;
	long l = strtol(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || l < 0 || l > 128 || inet_pton(AF_INET6, buf, addr) != 1)
		return -1;
	*len = (uint8_t)l;
	return 0;
}

/* The kernel's struct in6_ifreq (linux/ipv6.h, which clashes with glibc's
 * netinet/in.h). */
struct in6_ifreq_ {
	struct in6_addr addr;
	uint32_t prefixlen;
	int ifindex;
};

static int fail(char *err, size_t errlen, const struct tun_config *c, const char *what)
{
	snprintf(err, errlen, "TUN %s: %s: %s", c->ifname, what, strerror(errno));
	return -1;
}

/* The interface up, MTU 1280, the host's address, the route into the
 * simulation. TUN interfaces are NOARP: no duplicate address detection,
 * so the address is usable at once. */
static int configure_host(const struct tun_config *c, char *err, size_t errlen)
{
	int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return fail(err, errlen, c, "IPv6 socket (IPv6 disabled?)");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", c->ifname);
	int rc = -1;
	if (ioctl(s, SIOCGIFINDEX, &ifr) < 0) {
		fail(err, errlen, c, "SIOCGIFINDEX");
		goto out;
	}
	int ifindex = ifr.ifr_ifindex;
	ifr.ifr_mtu = HOST_MTU;
	if (ioctl(s, SIOCSIFMTU, &ifr) < 0) {
		fail(err, errlen, c, "set MTU");
		goto out;
	}
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		fail(err, errlen, c, "SIOCGIFFLAGS");
		goto out;
	}
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
		fail(err, errlen, c, "bring up");
		goto out;
	}
	struct in6_ifreq_ a = { .addr = c->host, .prefixlen = c->host_len, .ifindex = ifindex };
	if (ioctl(s, SIOCSIFADDR, &a) < 0) {
		fail(err, errlen, c, "add the host's IPv6 address (IPv6 disabled on it?)");
		goto out;
	}
	struct in6_rtmsg r;
	memset(&r, 0, sizeof r);
	r.rtmsg_dst = c->route;
	r.rtmsg_dst_len = c->route_len;
	r.rtmsg_ifindex = ifindex;
	r.rtmsg_flags = RTF_UP;
	r.rtmsg_metric = 1;
	if (ioctl(s, SIOCADDRT, &r) < 0) {
		fail(err, errlen, c, errno == EEXIST ? "add the route into the simulation (routed elsewhere already: "
			"another tern-sim with a TUN?)" : "add the route into the simulation");
		goto out;
	}
	rc = 0;
out:
	close(s);
	return rc;
}

static avr_uart_t *uart0(avr_t *avr)
{
	for (avr_io_t *io = avr->io_port; io; io = io->next)
		if (io->irq_ioctl_get == AVR_IOCTL_UART_GETIRQ('0'))
			return (avr_uart_t *)io;	/* the io is the struct's first member */
	return NULL;
}

struct tun *tun_attach(struct sim_node *n, const struct tun_config *c, char *err, size_t errlen)
{
	struct tun *t = sim_calloc(1, sizeof *t);
	t->node = n;
	t->cfg = *c;
	t->uart = uart0(n->avr);
	t->uart_in = avr_io_getirq(n->avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
	if (!t->uart || !t->uart_in) {
		snprintf(err, errlen, "TUN %s: node %s has no USART0", c->ifname, n->name);
		free(t);
		return NULL;
	}
	slip_rx_init(&t->dec, t->frame, sizeof t->frame);
	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		fail(err, errlen, c, "open /dev/net/tun");
		free(t);
		return NULL;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", c->ifname);
	if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
		fail(err, errlen, c, "create (TUNSETIFF: needs CAP_NET_ADMIN)");
		goto refused;
	}
	if (configure_host(c, err, errlen) < 0)
		goto refused;
	n->tun = t;
	return t;
refused:
	close(t->fd);
	free(t);
	return NULL;
}

/* --- host -> node ---------------------------------------------------------- */

static void feed(struct sim_node *n, sim_ps when, void *arg, uint32_t data);

static void queue_put(void *ctx, uint8_t b)
{
	struct tun *t = ctx;
	t->queue[(t->q_head + t->q_len++) % QUEUE_BYTES] = b;
}

/* One datagram from the host, SLIP-encoded into the queue (whole, or
 * dropped and counted). */
static void from_host(struct tun *t, const uint8_t *p, size_t len, sim_ps at)
{
	t->count.from_host++;
	if ((p[0] >> 4) != 6) {
		t->count.not_ipv6++;
		return;
	}
	if (QUEUE_BYTES - t->q_len < 2 * len + 2) {	/* the worst case: every byte escaped */
		t->count.host_dropped++;
		return;
	}
	slip_write(p, len, SIZE_MAX, 0, queue_put, t);
	if (!t->feeding) {
		t->feeding = true;
		node_at(t->node, at, feed, t, 0);
	}
}

/* simavr's uart_fifo_isfull, which its header declares but does not define */
static bool fifo_full(const avr_uart_t *u)
{
	return ((u->input.write + 1) & (uart_fifo_fifo_size - 1)) == u->input.read;
}

/* Bytes into the UART's receive FIFO while it has room; the rest a byte
 * time later (simavr's FIFO raises RXC once per byte time). */
static void feed(struct sim_node *n, sim_ps when, void *arg, uint32_t data)
{
	(void)data;
	struct tun *t = arg;
	avr_uart_t *u = t->uart;
	sim_ps retry = RX_OFF_RETRY_PS;
	if (avr_regbit_get(n->avr, u->rxen)) {	/* simavr drops what comes while it is off */
		while (t->q_len && !fifo_full(u)) {
			uint8_t b = t->queue[t->q_head];
			t->q_head = (t->q_head + 1) % QUEUE_BYTES;
			t->q_len--;
			avr_raise_irq(t->uart_in, b);
		}
		retry = node_cycle_to_ps(n, u->cycles_per_byte ? u->cycles_per_byte : 1);
	}
	t->feeding = t->q_len != 0;
	if (t->feeding)
		node_at(n, when + retry, feed, t, 0);
}

sim_ps tun_wait(struct tun **tuns, size_t n, sim_ps now, sim_ps target, double wall0)
{
	struct pollfd fds[64];
	if (n > 64)
		n = 64;
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double wall = (double)ts.tv_sec + ts.tv_nsec * 1e-9 - wall0;
		sim_ps wall_ps = wall <= 0 ? 0 : (sim_ps)(wall * 1e12);
		double left_s = wall_ps >= target ? 0 : (double)(target - wall_ps) / 1e12;
		for (size_t i = 0; i < n; i++)
			fds[i] = (struct pollfd){ .fd = tuns[i]->fd, .events = POLLIN };
		struct timespec timeout = { .tv_sec = (time_t)left_s,
					    .tv_nsec = (long)((left_s - (double)(time_t)left_s) * 1e9) };
		int ready = ppoll(fds, n, &timeout, NULL);
		if (ready < 0 && errno == EINTR)
			return now;	/* a signal: the caller looks at its flag */
		if (ready <= 0)
			return target;
		/* a datagram from the host: the simulation takes it now, or at
		 * the earliest time it has not yet simulated */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		wall = (double)ts.tv_sec + ts.tv_nsec * 1e-9 - wall0;
		sim_ps at = (sim_ps)(wall * 1e12);
		if (at < now)
			at = now;
		if (at > target)
			at = target;
		for (size_t i = 0; i < n; i++) {
			if (!(fds[i].revents & POLLIN))
				continue;
			uint8_t buf[HOST_MTU + 64];
			ssize_t len;
			while ((len = read(tuns[i]->fd, buf, sizeof buf)) > 0)
				from_host(tuns[i], buf, (size_t)len, at);
		}
		return at;
	}
}

/* --- node -> host ----------------------------------------------------------- */

static void to_host(struct tun *t, const uint8_t *p, uint16_t len)
{
	if ((p[0] >> 4) != 6) {
		t->count.not_ipv6++;
		return;
	}
	if (write(t->fd, p, len) == (ssize_t)len)
		t->count.to_host++;
	else
		t->count.write_errors++;
}

void tun_uart_out(struct tun *t, uint8_t b)
{
	if (!t->in_frame) {
		if (b == SLIP_END) {
			t->in_frame = true;
			t->frame_bytes = 0;
		} else {
			t->count.console_bytes++;
			fputc(b, t->node->console);
		}
		return;
	}
	uint16_t len = slip_rx_byte(&t->dec, b);
	if (b != SLIP_END) {
		t->frame_bytes++;
		return;
	}
	if (t->frame_bytes == 0)
		return;	/* END END: the first was a frame's end we missed, this one opens */
	t->in_frame = false;	/* the closing END: what follows is console text */
	if (len)
		to_host(t, t->frame, len);
}

void tun_summary(const struct tun *t, FILE *f)
{
	fprintf(f, ",\n   \"tun\": {\"name\": \"%s\", \"to_host\": %" PRIu64 ", \"from_host\": %" PRIu64
		", \"host_dropped\": %" PRIu64 ", \"not_ipv6\": %" PRIu64 ", \"write_errors\": %" PRIu64
		", \"console_bytes\": %" PRIu64 ", \"slip_frames\": %" PRIu32,
		t->cfg.ifname, t->count.to_host, t->count.from_host, t->count.host_dropped, t->count.not_ipv6,
		t->count.write_errors, t->count.console_bytes, t->dec.frames);
	for (int i = 0; i < SLIP_DROP_COUNT; i++)
		fprintf(f, ", \"%s\": %u", slip_drop_name((slip_drop)i), t->dec.dropped[i]);
	fputc('}', f);
}
