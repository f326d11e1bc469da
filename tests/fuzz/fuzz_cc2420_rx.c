/* Fuzz target: the CC2420 driver's receive path (drivers/cc2420/cc2420.c:
 * the FIFOP interrupt, the length byte, the FIFO read, the RSSI and
 * CRC_OK/correlation bytes, the frame to a task as a heap message), the
 * driver's own code compiled for the host against tests/fuzz/avr_shim/:
 * every register access goes through cc2420_fake_reg() below, where a
 * fake chip answers the SPI from an RX FIFO the input fills. The kernel
 * is the host port's fifo model; the frames go to one task.
 *
 * The chip as the datasheet has it: 128 bytes of RX FIFO (more is an
 * overflow: the FIFO pin low, FIFOP high until SFLUSHRX), the FIFO pin
 * high while bytes wait, FIFOP raised when a frame is complete and
 * lowered as reading begins, SFD high while a frame is still arriving.
 *
 * The input is a program: bytes into the FIFO (any: length bytes over
 * 127, under 5, past what the FIFO holds, CRC_OK clear), the FIFOP
 * interrupt, bytes of a frame still arriving, SFD edges and Timer1's
 * capture of them (missed ones too), an overflow, runs of the main loop,
 * a heap left a few bytes short; frames pile up in the pool while the
 * main loop does not run. An operation switches the frames to the
 * driver's interrupt-level client, the multiplexer's mux_rx (net/mux.c),
 * in the slot region the input names.
 *
 * Invariants: no out-of-bounds access or UB; after every interrupt the
 * counters moved exactly as the datasheet's reading of that FIFO says
 * (bad length, too short, truncated, bad CRC, overflow; a good frame is
 * delivered, or counted as no memory / post failed) and the driver
 * consumed exactly the bytes it should; every delivered frame reaches the
 * task once, in order, with its bytes, RSSI and LQI intact, and an SFD
 * time that is 0 (counted unknown) or a captured rise no other frame has;
 * the multiplexer counts each frame malformed, foreign or without a TO,
 * or once per bound destination, which gets it in order, intact; at the
 * end the pool holds all its messages and the heap is back at its
 * baseline. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <string.h>

#include "cc2420.h"
#include "fuzz.h"
#include "host.h"
#include "mux.h"
#include "tern/port.h"
#include "tern/tern.h"

#define FIFO_SIZE 128
#define SETTLE 100000

/* ---- the fake chip ---- */

typedef struct {
    uint8_t buf[FIFO_SIZE];
    uint8_t n;      /* bytes waiting, buf[0] first */
    bool overflow;  /* more arrived than fit: FIFO pin low, FIFOP high */
    bool fifop;
    bool sfd;       /* a frame is still arriving */
} rx_fifo;

static rx_fifo chip;
static volatile uint8_t regs[FAKE_REGS];
static unsigned pos;   /* byte of the SPI transaction (0: the command) */
static uint8_t cmd;

static bool fifo_pin(const rx_fifo *f) { return f->n && !f->overflow; }

static uint8_t pop(rx_fifo *f)
{
    if (!f->n)
        return 0; /* a real chip shifts out something: the driver must not rely on it */
    uint8_t b = f->buf[0];
    memmove(f->buf, f->buf + 1, --f->n);
    return b;
}

static void flush(rx_fifo *f)
{
    f->n = 0;
    f->overflow = f->fifop = false;
}

static uint8_t exchange(uint8_t out)
{
    if (pos++ == 0) {
        cmd = out;
        if (out == 0x08) /* SFLUSHRX */
            flush(&chip);
        return 0x40; /* status: XOSC16M_STABLE */
    }
    switch (cmd) {
    case 0x3F | 0x40: /* RXFIFO read */
        chip.fifop = false;
        return chip.overflow ? 0 : pop(&chip);
    case 0x1E | 0x40: /* MANFIDL: the CC2420's */
        return pos == 2 ? 0x23 : 0x3D;
    default:
        return 0;
    }
}

volatile uint8_t *cc2420_fake_reg(int r)
{
    if (regs[FAKE_PORTB] & 1) /* CSn high: the next byte starts a transaction */
        pos = 0;
    switch (r) {
    case FAKE_PINB: regs[r] = fifo_pin(&chip) ? 0x80 : 0; break;
    case FAKE_PINE: regs[r] = chip.fifop ? 0x40 : 0; break;
    case FAKE_PIND: regs[r] = (uint8_t)(0x40 | (chip.sfd ? 0x10 : 0)); break; /* CCA clear */
    case FAKE_SPSR:
        if (!(regs[FAKE_PORTB] & 1)) { /* a transfer: SPDR holds the byte out */
            regs[FAKE_SPDR] = exchange(regs[FAKE_SPDR]);
            regs[r] |= 0x80; /* SPIF */
        }
        break;
    case FAKE_TIFR: regs[r] = 0; break; /* no SFD capture pending (writing 1 clears a flag) */
    default: break;
    }
    return &regs[r];
}

/* SFD captures: ICR1 as the harness sets it, and its time is the value
 * itself (never 0), so each rise the driver takes is known here. */
#define RISES_MAX 256
static uint16_t icr1;
static tern_time rises[RISES_MAX]; /* the rising captures the driver read */
static bool rise_used[RISES_MAX];
static unsigned n_rises;

uint16_t cc2420_fake_icr1(void) { return icr1; }
tern_time avr_timer1_capture_time(uint16_t icr)
{
    if (n_rises < RISES_MAX) {
        rises[n_rises] = icr;
        rise_used[n_rises++] = false;
    }
    return icr;
}

/* ---- the oracle: what the driver must do with a FIFO ---- */

typedef struct {
    uint16_t len_invalid, too_short, past_fifo, bad_crc, good, overflows;
} rx_count;

#define GOOD_MAX 4096
typedef struct {
    uint8_t len, rssi, corr;
    uint8_t data[FIFO_SIZE];
} good_frame;
static good_frame good[GOOD_MAX];
static unsigned n_good, next_match, n_matched;
static bool via_mux;          /* frames go to mux_rx (rx_isr), not to the task */
static unsigned task_frames;  /* the driver's rx_frames while they went to the task */
static unsigned task_unknown, task_post_failed; /* its rx_sfd_unknown, rx_post_failed then */
static unsigned zero_sfd;     /* frames that reached the task with SFD time 0 */

/* rx_drain's rule, from the datasheet: up to 22 frames an interrupt,
 * while FIFOP is high or bytes wait with no frame arriving. */
static void predict(rx_fifo *f, rx_count *c)
{
    for (int i = 0; i < 22; i++) {
        if (f->fifop && !fifo_pin(f)) {
            c->overflows++;
            flush(f);
            return;
        }
        if (!f->fifop && !(fifo_pin(f) && !f->sfd))
            return;
        f->fifop = false;
        uint8_t len = pop(f);
        if (len > 127) {
            c->len_invalid++;
            flush(f);
            continue;
        }
        bool whole = f->n >= len;
        if (len < 5) {
            c->too_short++;
            for (uint8_t k = 0; k < len && f->n; k++)
                pop(f);
            if (!whole) {
                c->past_fifo++;
                flush(f);
            }
            continue;
        }
        if (!whole) {
            c->past_fifo++;
            flush(f);
            continue;
        }
        good_frame *g = &good[n_good < GOOD_MAX ? n_good : GOOD_MAX - 1];
        g->len = (uint8_t)(len - 2);
        for (uint8_t k = 0; k < g->len; k++)
            g->data[k] = pop(f);
        g->rssi = pop(f);
        g->corr = pop(f);
        if (!(g->corr & 0x80)) {
            c->bad_crc++;
            continue;
        }
        c->good++;
        CHECK(n_good < GOOD_MAX, "harness: too many frames");
        n_good++;
    }
}

/* ---- the task that gets the frames ---- */

static bool running;
static void mux_match(tern_msg *m, const cc2420_rx_frame *f);

static tern_status on_frame(void *state, tern_msg *m)
{
    (void)state;
    if (!running || m->port < TERN_PORT_APP(0))
        return TERN_OK;
    const cc2420_rx_frame *f = m->payload;
    CHECK(f && m->len == sizeof *f + f->len, "message of %u bytes for a frame of %u", m->len,
          f ? f->len : 0);
    if (m->port != TERN_PORT_APP(0)) {
        mux_match(m, f);
        return TERN_OK;
    }
    /* In order: the frames counted no_memory or post_failed are skipped. */
    for (; next_match < n_good; next_match++) {
        const good_frame *g = &good[next_match];
        if (g->len == f->len && !memcmp(g->data, f->data, f->len) &&
            f->rssi_dbm == (int8_t)((int8_t)g->rssi - 45) && f->lqi == (g->corr & 0x7F))
            break;
    }
    CHECK(next_match < n_good, "a frame of %u bytes that was never good, or twice", f->len);
    /* A frame's SFD time is unknown (0) or a captured rise no other frame has. */
    zero_sfd += f->sfd == 0;
    if (f->sfd) {
        unsigned k = 0;
        while (k < n_rises && (rises[k] != f->sfd || rise_used[k]))
            k++;
        CHECK(k < n_rises, "SFD time %llu: no capture, or another frame's",
              (unsigned long long)f->sfd);
        rise_used[k] = true;
    }
    next_match++;
    n_matched++;
    return TERN_OK;
}

/* ---- the multiplexer above it (net/mux.c): the driver's interrupt-level
 * client hands each frame to mux_rx, as the MAC protocols do ---- */

#define PAN 0x22
#define ADDR 1
static const tern_endpoint rx0_dests[] = {{0, TERN_PORT_APP(1)}, {0, TERN_PORT_APP(2)}};
static const tern_endpoint rx1_dests[] = {{0, TERN_PORT_APP(3)}};
static const mux_rx_desc mux_rx_tos[] = {
    {.id = 1, .regions = 0x3, .n_dests = 2, .dests = rx0_dests}, /* regions 0 and 1 */
    {.id = 2, .regions = 0x2, .n_dests = 1, .dests = rx1_dests}, /* region 1 */
};
static const mux_config mux_cfg = {.pan_id = PAN, .short_addr = ADDR, .rx = mux_rx_tos, .n_rx = 2};
static const bcs_region regions[] = {{.id = 0, .len_us = 1000}, {.id = 1, .start_us = 1000, .len_us = 1000},
                                     {.id = 2, .start_us = 2000, .len_us = 1000}};
static const bcs_macro_slot slot = {.regions = regions, .n_regions = 3};
static const bcs_config bcs = {.macro_slot_us = 10000, .sync_us = 1000, .slots = &slot, .n_slots = 1};

typedef struct {
    uint8_t port, len;
    uint8_t data[FIFO_SIZE];
} mux_delivery;
static mux_delivery mux_want[GOOD_MAX];
static unsigned n_mux_want, next_mux, n_mux_matched;
static uint8_t region; /* the slot region the frame is received in */

static unsigned mux_sent; /* destinations the multiplexer posted to, this input */

/* The RX TOs' counters moved since `b` (uint16_t: they wrap over many inputs). */
static unsigned mux_moved(const mux_rx_counters *b, bool delivered_only)
{
    unsigned n = 0;
    for (uint8_t i = 0; i < 2; i++) {
        const mux_rx_counters *a = mux_rx_stats(i);
        n += (uint16_t)(a->delivered - b[i].delivered);
        if (!delivered_only)
            n += (uint16_t)(a->no_memory - b[i].no_memory) +
                 (uint16_t)(a->post_failed - b[i].post_failed);
    }
    return n;
}

static void mux_hook(cc2420_rx_frame *f)
{
    mux_counters b = *mux_stats();
    mux_rx_counters before[2] = {*mux_rx_stats(0), *mux_rx_stats(1)};
    unsigned want = 0;
    const uint8_t *d = f->data;
    int why = 0; /* 1 malformed, 2 foreign, 3 no TO */
    if (f->len < MUX_HDR_LEN || (d[0] & 7) != 1)
        why = 1;
    else if ((d[3] | d[4] << 8) != PAN || ((d[5] | d[6] << 8) != ADDR && (d[5] | d[6] << 8) != 0xFFFF))
        why = 2;
    else if (region > 1)
        why = 3;
    else
        for (uint8_t i = 0; i < 2; i++)
            if (mux_rx_tos[i].regions & (1u << region))
                for (uint8_t k = 0; k < mux_rx_tos[i].n_dests; k++) {
                    CHECK(n_mux_want < GOOD_MAX, "harness: too many deliveries");
                    mux_delivery *m = &mux_want[n_mux_want++];
                    m->port = mux_rx_tos[i].dests[k].port;
                    m->len = f->len;
                    memcpy(m->data, f->data, f->len);
                    want++;
                }
    mux_rx(f, region);
    const mux_counters *a = mux_stats();
    uint16_t malformed = (uint16_t)(a->rx_malformed - b.rx_malformed),
             foreign = (uint16_t)(a->rx_foreign - b.rx_foreign),
             no_to = (uint16_t)(a->rx_no_to - b.rx_no_to);
    CHECK(malformed == (why == 1) && foreign == (why == 2) && no_to == (why == 3),
          "mux: malformed %u, foreign %u, no TO %u for a frame of reason %d", malformed, foreign,
          no_to, why);
    CHECK(mux_moved(before, false) == want, "mux: %u destinations counted, %u bound",
          mux_moved(before, false), want);
    mux_sent += mux_moved(before, true);
}

/* A message from the multiplexer: the next bound destination still
 * expected, in order (copies that found no heap or pool are skipped). */
static void mux_match(tern_msg *m, const cc2420_rx_frame *f)
{
    for (; next_mux < n_mux_want; next_mux++) {
        const mux_delivery *w = &mux_want[next_mux];
        if (w->port == m->port && w->len == f->len && !memcmp(w->data, f->data, f->len))
            break;
    }
    CHECK(next_mux < n_mux_want, "mux: a frame of %u bytes to port %u never bound, or twice",
          f->len, m->port);
    next_mux++;
    n_mux_matched++;
}

static const tern_task_desc tasks[] = {
    {.name = "radio", .id = 0, .priority = 1, .handler = on_frame, .n_in_ports = 4}};
static const tern_app_desc app = {"cc2420", tasks, 1, NULL, 0, 0, NULL};

/* ---- the program ---- */

static void irq_now(host_irq_fn fn, void *arg)
{
    host_inject(host_time(), fn, arg);
    port_irq_restore(port_irq_save());
}


static void *hog;
static void hog_irq(void *arg)
{
    size_t leave = (uintptr_t)arg, take = tern_heap_largest_free();
    hog = take > leave ? tern_alloc(take - leave) : NULL;
}

static void release_hog(void)
{
    if (hog)
        tern_free(hog);
    hog = NULL;
}

static unsigned probe_ok;
static void probe_pool(void *arg)
{
    (void)arg;
    for (int i = 0; i <= TERN_MSG_POOL; i++)
        probe_ok += tern_send(0, TERN_PORT_APP(0), NULL, 0, 0) == TERN_OK;
}

static void push(fz_reader *in, uint8_t n)
{
    for (uint8_t k = 0; k < n && in->n; k++) {
        uint8_t b = fz_u8(in);
        if (chip.n < FIFO_SIZE && !chip.overflow)
            chip.buf[chip.n++] = b;
        else
            chip.overflow = true;
    }
}

/* The FIFOP interrupt, checked against the oracle. */
static void interrupt(void)
{
    rx_fifo after = chip;
    rx_count want = {0};
    predict(&after, &want);
    cc2420_counters b = *cc2420_stats();
    tern_irq_state s = port_irq_save(); /* the vector enters and leaves the interrupt */
    INT6_vect();
    port_irq_restore(s);
    const cc2420_counters *a = cc2420_stats();
#define SAME(field, expected)                                                              \
    CHECK((uint16_t)(a->field - b.field) == (expected), #field " moved by %u, not %u",      \
          (unsigned)(uint16_t)(a->field - b.field), (unsigned)(expected))
    SAME(rx_len_invalid, want.len_invalid);
    SAME(rx_too_short, want.too_short);
    SAME(rx_len_past_fifo, want.past_fifo);
    SAME(rx_bad_crc, want.bad_crc);
    SAME(rx_overflows, want.overflows);
    unsigned good_now = (uint16_t)(a->rx_frames - b.rx_frames) +
                        (uint16_t)(a->rx_no_memory - b.rx_no_memory) +
                        (uint16_t)(a->rx_post_failed - b.rx_post_failed);
    CHECK(good_now == want.good, "%u good frames counted, not %u", good_now, want.good);
    if (!via_mux) {
        task_frames += (uint16_t)(a->rx_frames - b.rx_frames);
        task_unknown += (uint16_t)(a->rx_sfd_unknown - b.rx_sfd_unknown);
        task_post_failed += (uint16_t)(a->rx_post_failed - b.rx_post_failed);
    }
    /* every frame handed on has an SFD time or counts as unknown */
    CHECK((uint16_t)(a->rx_sfd_unknown - b.rx_sfd_unknown) <=
              (uint16_t)(a->rx_frames - b.rx_frames) + (uint16_t)(a->rx_post_failed - b.rx_post_failed),
          "%u unknown SFD times for fewer frames", (unsigned)(uint16_t)(a->rx_sfd_unknown - b.rx_sfd_unknown));
#undef SAME
    CHECK(a->spi_stalls == 0 && a->tx_frames == 0, "SPI stalled or a frame went out");
    CHECK(chip.n == after.n && !memcmp(chip.buf, after.buf, chip.n) &&
              chip.overflow == after.overflow && chip.fifop == after.fifop,
          "the driver left %u bytes in the FIFO, should leave %u", chip.n, after.n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader in = {data, size};
    host_reset(0);
    tern_init();
    memset((void *)regs, 0, sizeof regs);
    regs[FAKE_PORTB] = 1;
    memset(&chip, 0, sizeof chip);
    tern_app_error err;
    CHECK(tern_app_start(&app, &err) == TERN_OK, "app refused: %s", err.text);
    host_run_until(10);
    cc2420_config cfg = {.channel = 26, .pan_id = PAN, .short_addr = ADDR, .rx_task = 0,
                         .rx_port = TERN_PORT_APP(0), .tx_task = TERN_NO_TASK};
    CHECK(cc2420_init(&cfg) == CC2420_OK, "the fake chip was not taken");
    static bool mux_started;
    if (!mux_started) {
        mux_error merr;
        CHECK(mux_start(&mux_cfg, &bcs, &merr) == MUX_OK, "mux refused: %s", merr.text);
        mux_started = true;
    }
    via_mux = false;
    region = 0;
    task_frames = n_mux_want = next_mux = n_mux_matched = mux_sent = n_rises = 0;
    task_unknown = task_post_failed = zero_sfd = 0;
    size_t heap_base = tern_heap_free_bytes(), largest_base = tern_heap_largest_free();
    n_good = next_match = n_matched = 0;
    hog = NULL;
    running = true;

    while (in.n) {
        uint8_t op = fz_u8(&in);
        if (op < 0x80) { /* frames complete: bytes in, FIFOP, the interrupt */
            push(&in, op);
            chip.sfd = false;
            chip.fifop = true;
            interrupt();
        } else if (op < 0xC0) { /* a frame still arriving: bytes, SFD high, no FIFOP */
            push(&in, op & 0x3F);
            chip.sfd = true;
        } else if (op < 0xD0) {
            host_run_until(host_time() + 1 + (op & 15) * 10u);
        } else if (op < 0xD8) {
            release_hog();
            irq_now(hog_irq, (void *)(uintptr_t)((op & 7) * 8u));
        } else if (op == 0xD8) {
            release_hog();
        } else if (op < 0xDC) { /* an overflow: FIFOP high, FIFO low */
            chip.overflow = chip.fifop = true;
            interrupt();
        } else if (op == 0xDC) { /* frames to the multiplexer (interrupt level) or the task */
            via_mux = !via_mux;
            cfg.rx_isr = via_mux ? mux_hook : NULL;
            CHECK(cc2420_init(&cfg) == CC2420_OK, "the fake chip was not taken");
        } else if (op < 0xE0) {
            region = (uint8_t)(op - 0xDD); /* 2: a region no RX TO is bound to */
        } else if (op >= 0xE8) { /* an SFD edge (bit 0: it rose) and Timer1's capture */
            chip.sfd = op & 1;
            icr1 = (uint16_t)(1 + (fz_u16(&in) % 0xFFFE)); /* a time of 0 means unknown */
            tern_irq_state st = port_irq_save();
            TIMER1_CAPT_vect();
            port_irq_restore(st);
        } else { /* the interrupt, FIFOP as it is */
            interrupt();
        }
    }

    release_hog();
    host_run_until(host_time() + SETTLE);
    const cc2420_counters *c = cc2420_stats();
    (void)c;
    /* rx_sfd_unknown counts exactly the frames handed on with SFD time 0
     * (some of them may then have found the pool full) */
    CHECK(zero_sfd <= task_unknown && task_unknown <= zero_sfd + task_post_failed,
          "%u frames reached the task with SFD time 0, %u counted unknown (%u post failed)",
          zero_sfd, task_unknown, task_post_failed);
    CHECK(n_matched == task_frames, "%u frames reached the task, %u delivered", n_matched,
          task_frames);
    CHECK(n_mux_matched == mux_sent, "%u frames from the multiplexer reached the task, %u posted",
          n_mux_matched, mux_sent);
    CHECK(tern_stats()->queue_depth == 0, "%u messages still queued", tern_stats()->queue_depth);
    CHECK(tern_heap_free_bytes() == heap_base && tern_heap_largest_free() == largest_base,
          "heap not back to its baseline: %zu free, %zu largest, of %zu, %zu",
          tern_heap_free_bytes(), tern_heap_largest_free(), heap_base, largest_base);
    running = false;
    probe_ok = 0;
    irq_now(probe_pool, NULL);
    host_run_until(host_time() + SETTLE);
    CHECK(probe_ok == TERN_MSG_POOL, "pool holds %u free messages, not %u", probe_ok,
          TERN_MSG_POOL);
    return 0;
}
