/* Fuzz target: frames from the processor bus into kernel/remote.c's receive
 * path (tern_remote_receive), on the fifo kernel of the host port. This
 * process is bus address 0 of three; the app has local tasks, remote ones
 * and groups with local members, none, or one task twice.
 *
 * The input is a program: frames of any length and content (each in a
 * buffer of exactly its size, handed over in an interrupt as the bus
 * driver does; most with their CRC-16 computed here so that the bytes
 * reach the parsers, the others with whatever CRC the input gives), runs of the main loop, and a hog that leaves the heap a
 * few bytes short or lets frames pile up until the message pool is empty,
 * so frames are deferred and offered again through the bus's poll().
 *
 * Invariants: no out-of-bounds access or UB; each offer of a frame moves
 * exactly one counter: rx_deferred (it returned false, and the fake bus
 * keeps it, flow control holding every other frame), or its one outcome,
 * computed here from the frame and the description (bad_frame, bad_crc,
 * no_task, no_port (a system port too), rx_frames, rx_mcast); every local delivery the frame implies
 * reaches its handler exactly once with its source, port and bytes intact
 * (a multicast deferred half-way is not delivered twice); nothing else is
 * delivered; at the end nothing waits, the message pool holds all its
 * TERN_MSG_POOL messages and the heap is back at its baseline. */
#include <string.h>

#include "fuzz.h"
#include "host.h"
#include "tern/port.h"
#include "tern/remote.h"
#include "tern/tern.h"

#define IN(n) TERN_PORT_APP(n)
#define M(a) TERN_MODULE(a)
#define SETTLE 100000

/* ---- the app: tasks 0, 1, 5 here (module 1), 2 and 3 elsewhere ---- */

static tern_status on_msg(void *state, tern_msg *m);

static const tern_endpoint g1[] = {{0, IN(0)}, {2, IN(0)}, {1, IN(2)}};
static const tern_endpoint g3[] = {{2, IN(0)}, {3, IN(1)}};           /* no local member */
static const tern_endpoint g7[] = {{1, IN(0)}, {1, IN(1)}, {0, IN(0)}}; /* task 1 twice */
static const tern_group_desc groups[] = {
    {.id = 1, .n_members = 3, .members = g1},
    {.id = 3, .n_members = 2, .members = g3},
    {.id = 7, .n_members = 3, .members = g7},
};
static const tern_task_desc tasks[] = {
    {.name = "a", .id = 0, .priority = 2, .handler = on_msg, .module = M(0), .n_in_ports = 1},
    {.name = "b", .id = 1, .priority = 1, .handler = on_msg, .module = M(0), .n_in_ports = 3},
    {.name = "c", .id = 2, .priority = 3, .handler = on_msg, .module = M(1), .n_in_ports = 1},
    {.name = "d", .id = 3, .priority = 4, .handler = on_msg, .module = M(2), .n_in_ports = 2},
    {.name = "e", .id = 5, .priority = 2, .handler = on_msg, .module = M(0), .n_in_ports = 0},
};
static const tern_app_desc app = {"remote", tasks, 5, groups, 3, 3, NULL};

static const tern_task_desc *local_task(uint8_t id)
{
    for (unsigned i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
        if (tasks[i].id == id && tasks[i].module == M(0))
            return &tasks[i];
    return NULL;
}

static const tern_group_desc *group(uint8_t id)
{
    for (unsigned i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (groups[i].id == id)
            return &groups[i];
    return NULL;
}

/* ---- what must reach the handlers ---- */

#define EXPECT_MAX 2048
typedef struct {
    const uint8_t *frame; /* the payload is frame + TERN_REMOTE_HEADER */
    uint8_t task, port, src, len;
    bool done;
} delivery;
static delivery expect[EXPECT_MAX];
static unsigned n_expect, n_delivered;
static bool running; /* the INITs are over */

#define FRAMES_MAX 512
static uint8_t *frames[FRAMES_MAX]; /* every frame offered, freed at the end */
static unsigned n_frames;

static tern_status on_msg(void *state, tern_msg *m)
{
    (void)state;
    if (!running)
        return TERN_OK;
    tern_task_id self = tern_self();
    for (unsigned i = 0; i < n_expect; i++) {
        if (expect[i].done || expect[i].task != self || expect[i].port != m->port ||
            expect[i].src != m->src || expect[i].len != m->len)
            continue;
        if (m->len && memcmp(m->payload, expect[i].frame + TERN_REMOTE_HEADER, m->len))
            continue;
        CHECK(m->len ? m->payload != NULL : m->payload == NULL, "payload %p of %u bytes",
              m->payload, m->len);
        expect[i].done = true;
        n_delivered++;
        return TERN_OK;
    }
    CHECK(false, "task %u got a message nobody sent: port %u from %u, %u bytes", self, m->port,
          m->src, m->len);
    return TERN_OK;
}

static void want(const uint8_t *frame, uint8_t task, uint8_t port, uint8_t len)
{
    CHECK(n_expect < EXPECT_MAX, "harness: too many deliveries");
    expect[n_expect++] = (delivery){frame, task, port, frame[1], len, false};
}

/* ---- the fake bus: one frame in its receive buffer ---- */

enum { O_DEFERRED, O_BAD, O_BAD_CRC, O_NO_TASK, O_NO_PORT, O_UNICAST, O_MCAST };
static const char *const outcome_name[] = {"deferred", "bad_frame", "bad_crc", "no_task",
                                           "no_port", "unicast", "mcast"};

static const uint8_t *pending; /* refused for room: offered again by poll */
static uint8_t pending_len;

/* The outcome the frame must have when there is room, and the deliveries
 * it implies (recorded on its first offer only). */
static int classify(const uint8_t *f, uint8_t len, bool record)
{
    if (len < TERN_REMOTE_HEADER)
        return O_BAD;
    if ((f[TERN_REMOTE_CRC_AT] | f[TERN_REMOTE_CRC_AT + 1] << 8) != tern_remote_frame_crc(f, len))
        return O_BAD_CRC;
    if (f[1] >= TERN_MAX_TASKS && f[1] != TERN_NO_TASK)
        return O_BAD;
    uint8_t n = (uint8_t)(len - TERN_REMOTE_HEADER);
    if (f[0] == 'U') {
        if (f[3] == TERN_PORT_INIT || f[3] == TERN_PORT_FINAL || f[3] == TERN_PORT_SERIALIZE ||
            f[3] == TERN_PORT_DESERIALIZE)
            return O_NO_PORT; /* the local kernel's and migrator's only */
        const tern_task_desc *t = local_task(f[2]);
        if (!t)
            return O_NO_TASK;
        if (f[3] >= TERN_PORT_APP0 + t->n_in_ports)
            return O_NO_PORT;
        if (record)
            want(f, f[2], f[3], n);
        return O_UNICAST;
    }
    if (f[0] == 'M') {
        const tern_group_desc *g = group(f[2]);
        if (!g)
            return O_BAD;
        for (uint8_t i = 0; record && i < g->n_members; i++)
            if (local_task(g->members[i].task))
                want(f, g->members[i].task, g->members[i].port, n);
        return O_MCAST;
    }
    return O_BAD;
}

static int outcome(const tern_remote_counters *b, const tern_remote_counters *a)
{
    int moved = 0, which = -1;
#define MOVED(field, o)                                                                    \
    if (a->field != b->field) {                                                            \
        CHECK(a->field == b->field + 1, #field " moved by %u", a->field - b->field);        \
        moved++;                                                                           \
        which = o;                                                                         \
    }
    MOVED(rx_deferred, O_DEFERRED)
    MOVED(dropped[TERN_REMOTE_DROP_BAD_FRAME], O_BAD)
    MOVED(dropped[TERN_REMOTE_DROP_BAD_CRC], O_BAD_CRC)
    MOVED(dropped[TERN_REMOTE_DROP_NO_TASK], O_NO_TASK)
    MOVED(dropped[TERN_REMOTE_DROP_NO_PORT], O_NO_PORT)
    MOVED(rx_frames, O_UNICAST)
    MOVED(rx_mcast, O_MCAST)
#undef MOVED
    CHECK(moved == 1, "one offer moved %d counters", moved);
    for (int r = 0; r < TERN_REMOTE_DROP_REASONS; r++)
        if (r != TERN_REMOTE_DROP_BAD_FRAME && r != TERN_REMOTE_DROP_NO_TASK &&
            r != TERN_REMOTE_DROP_NO_PORT && r != TERN_REMOTE_DROP_BAD_CRC)
            CHECK(a->dropped[r] == b->dropped[r], "drop %s moved by a received frame",
                  tern_remote_drop_name((tern_remote_drop_reason)r));
    CHECK(a->tx_frames == b->tx_frames && a->tx_mcast == b->tx_mcast && a->queue_depth == 0,
          "a received frame went onto the bus");
    return which;
}

static void offer(const uint8_t *f, uint8_t len, bool first)
{
    int want_o = classify(f, len, first);
    tern_remote_counters before = *tern_remote_stats();
    bool done = tern_remote_receive(1, f, len);
    int got = outcome(&before, tern_remote_stats());
    CHECK(done == (got != O_DEFERRED), "receive returned %d, counted %s", done, outcome_name[got]);
    CHECK(got == O_DEFERRED || got == want_o, "frame counted %s, should be %s", outcome_name[got],
          outcome_name[want_o]);
    pending = done ? NULL : f;
    pending_len = len;
}

static tern_bus_result bus_send(uint8_t dst, const uint8_t *head, uint8_t head_len,
                                const void *body, uint8_t body_len)
{
    (void)dst;
    (void)head;
    (void)head_len;
    (void)body;
    (void)body_len;
    CHECK(false, "nothing here sends: a received frame went back onto the bus");
    return TERN_BUS_FAILED;
}

static void bus_poll(void)
{
    if (pending)
        offer(pending, pending_len, false);
}

static const tern_bus bus = {.send = bus_send, .poll = bus_poll, .address = 0, .count = 3,
                             .frame_max = TERN_REMOTE_FRAME_MAX, .retry_ticks = 20};

/* ---- the program ---- */

/* An interrupt now, without the main loop running. */
static void irq_now(host_irq_fn fn, void *arg)
{
    host_inject(host_time(), fn, arg);
    port_irq_restore(port_irq_save());
}

static uint8_t *next_frame;
static uint8_t next_len;
static void rx_irq(void *arg)
{
    (void)arg;
    offer(next_frame, next_len, true);
}

static void *hog;
static void hog_irq(void *arg)
{
    size_t leave = (uintptr_t)arg;
    size_t take = tern_heap_largest_free();
    hog = take > leave ? tern_alloc(take - leave) : NULL;
}

static unsigned probe_ok;
static void probe_pool(void *arg)
{
    (void)arg;
    for (int i = 0; i <= TERN_MSG_POOL; i++)
        probe_ok += tern_send(0, IN(0), NULL, 0, 0) == TERN_OK;
}

static void release_hog(void)
{
    if (hog)
        tern_free(hog);
    hog = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader in = {data, size};
    host_reset(0);
    tern_init();
    CHECK(tern_remote_attach(&bus) == TERN_OK, "bus refused");
    tern_app_error err;
    CHECK(tern_app_start(&app, &err) == TERN_OK, "app refused: %s", err.text);
    host_run_until(10); /* the INITs */
    size_t heap_base = tern_heap_free_bytes(), largest_base = tern_heap_largest_free();
    n_expect = n_delivered = n_frames = 0;
    pending = NULL;
    hog = NULL;
    running = true;

    while (in.n && n_frames < FRAMES_MAX) {
        uint8_t op = fz_u8(&in);
        if (op < 0xE0) { /* a frame: most inputs are frames */
            /* below 0x70: `op` bytes, their CRC computed here; above:
             * op - 0x70 bytes as they are, CRC included */
            bool crc = op < 0x70;
            uint8_t len = (uint8_t)(crc ? op : op - 0x70);
            len = (uint8_t)(len > in.n ? in.n : len);
            /* Flow control: the next frame waits until the bus buffer is
             * free, which room again and the main loop (poll) bring. */
            if (pending)
                release_hog();
            for (int i = 0; i < 20 && pending; i++)
                host_run_until(host_time() + 50);
            CHECK(!pending, "a deferred frame was not taken with room again");
            uint8_t *f = malloc(len ? len : 1); /* exactly its size: ASan sees an over-read */
            memcpy(f, in.p, len);
            in.p += len;
            in.n -= len;
            if (crc && len >= TERN_REMOTE_HEADER) {
                uint16_t c = tern_remote_frame_crc(f, len);
                f[TERN_REMOTE_CRC_AT] = (uint8_t)c;
                f[TERN_REMOTE_CRC_AT + 1] = (uint8_t)(c >> 8);
            }
            frames[n_frames++] = f;
            next_frame = f;
            next_len = len;
            irq_now(rx_irq, NULL); /* handlers wait for the main loop (fifo) */
        } else if (op < 0xF0) { /* run the main loop (handlers, poll, retry alarm) */
            host_run_until(host_time() + 1 + (op & 15) * 10u);
        } else if (op < 0xF8) { /* leave the heap (op & 7) * 8 bytes short of a block */
            release_hog();
            irq_now(hog_irq, (void *)(uintptr_t)((op & 7) * 8u));
        } else {
            release_hog();
        }
    }

    /* The end: room again, every deferred frame taken, every handler run. */
    release_hog();
    for (int i = 0; i < 50 && (pending || tern_stats()->queue_depth); i++)
        host_run_until(host_time() + 1000);
    CHECK(!pending, "a deferred frame was never taken");
    for (unsigned i = 0; i < n_expect; i++)
        CHECK(expect[i].done, "frame to task %u port %u (%u bytes) never delivered",
              expect[i].task, expect[i].port, expect[i].len);
    CHECK(n_delivered == n_expect, "%u delivered, %u expected", n_delivered, n_expect);
    CHECK(tern_stats()->queue_depth == 0, "%u messages still queued", tern_stats()->queue_depth);
    CHECK(tern_heap_free_bytes() == heap_base && tern_heap_largest_free() == largest_base,
          "heap not back to its baseline: %zu free, %zu largest, of %zu, %zu", tern_heap_free_bytes(),
          tern_heap_largest_free(), heap_base, largest_base);
    running = false;
    probe_ok = 0;
    host_inject(host_time(), probe_pool, NULL);
    host_run_until(host_time() + SETTLE);
    CHECK(probe_ok == TERN_MSG_POOL, "pool holds %u free messages, not %u", probe_ok,
          TERN_MSG_POOL);
    for (unsigned i = 0; i < n_frames; i++)
        free(frames[i]);
    return 0;
}
