/* The fault-injection rows of docs/reliability.md on a real board: a
 * message to a missing task, port or route, the heap exhausted, the message
 * pool exhausted. For each the kernel must answer with the named error,
 * move exactly the counter of that reason, keep running, and lose nothing:
 * a refused heap payload stays the sender's, every accepted message is
 * delivered, the heap returns to its baseline in one piece. The app prints
 * what it observed; tests/target/test_faults.py judges it. */
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/stats.h"
#include "tern/tern.h"

enum { DRIVER = 0, SINK = 1 };
#define MAX_BLOCKS 64

static uint32_t accepted;  /* messages the pool took before it was full */
static uint32_t delivered; /* of those, handled by the sink */

static uint32_t dropped(tern_drop_reason r)
{
    return tern_stats()->dropped[r];
}

/* A refused send must name its reason, move that counter by one, and
 * leave a heap payload with its sender. */
static void refused_sends(void)
{
    uint8_t *block = tern_alloc(16);
    size_t owned = tern_heap_used_by(DRIVER);
    uint32_t no_task = dropped(TERN_DROP_NO_TASK);
    uint32_t no_port = dropped(TERN_DROP_NO_PORT);
    uint32_t no_route = dropped(TERN_DROP_NO_ROUTE);

    tern_status to_task = tern_send(99, TERN_PORT_APP(0), block, 16, TERN_MSG_HEAP);
    tern_status to_port = tern_send(SINK, TERN_PORT_APP(5), block, 16, TERN_MSG_HEAP);
    tern_status to_route = tern_post(1, block, 16, TERN_MSG_HEAP);
    tern_printf("faults: missing task=%s+%lu port=%s+%lu route=%s+%lu payload=%s\n",
                tern_status_name(to_task), (unsigned long)(dropped(TERN_DROP_NO_TASK) - no_task),
                tern_status_name(to_port), (unsigned long)(dropped(TERN_DROP_NO_PORT) - no_port),
                tern_status_name(to_route),
                (unsigned long)(dropped(TERN_DROP_NO_ROUTE) - no_route),
                tern_heap_used_by(DRIVER) == owned ? "kept" : "lost");
    tern_free(block);
}

/* Allocate until the heap refuses, then give everything back: one failure
 * counted, the free bytes and the largest block as before. */
static void heap_exhaustion(void)
{
    static void *blocks[MAX_BLOCKS];
    size_t baseline = tern_heap_free_bytes();
    size_t largest = tern_heap_largest_free();
    size_t size = baseline / (MAX_BLOCKS - 2) + 1; /* runs out before the table does */
    uint32_t failures = tern_stats()->alloc_failures;
    unsigned n = 0;

    while (n < MAX_BLOCKS && (blocks[n] = tern_alloc(size)) != NULL)
        n++;
    uint32_t counted = tern_stats()->alloc_failures - failures;
    while (n > 0)
        tern_free(blocks[--n]);
    tern_printf("faults: heap exhausted failures=+%lu returned=%s\n", (unsigned long)counted,
                tern_heap_free_bytes() == baseline && tern_heap_largest_free() == largest
                    ? "whole"
                    : "short");
}

/* Send to the lower-priority sink until the pool is full: the sink runs
 * only after this handler returns, so every accepted message waits. */
static void pool_exhaustion(void)
{
    uint32_t full = dropped(TERN_DROP_POOL_FULL);
    tern_status s;

    while ((s = tern_send(SINK, TERN_PORT_APP(0), NULL, 0, 0)) == TERN_OK)
        accepted++;
    tern_printf("faults: pool accepted=%lu refused=%s+%lu\n", (unsigned long)accepted,
                tern_status_name(s), (unsigned long)(dropped(TERN_DROP_POOL_FULL) - full));
}

static tern_status driver(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        refused_sends();
        heap_exhaustion();
        pool_exhaustion();
    } else if (m->port == TERN_PORT_APP(0)) {
        /* The sink has handled every accepted message: the pool has room again. */
        tern_status again = tern_send(SINK, TERN_PORT_APP(1), NULL, 0, 0);
        tern_printf("faults: pool delivered=%lu after=%s\n", (unsigned long)delivered,
                    tern_status_name(again));
    }
    return TERN_OK;
}

static tern_status sink(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_APP(0) && ++delivered == accepted)
        (void)tern_send(DRIVER, TERN_PORT_APP(0), NULL, 0, 0);
    else if (m->port == TERN_PORT_APP(1)) {
        tern_printf("faults: done\n");
        port_exit(0);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_route driver_routes[] = {
        TERN_TO_TASK(SINK, TERN_PORT_APP(0)),
        {.kind = TERN_ROUTE_NONE}, /* output 1 deliberately not wired */
    };
    static const tern_task_desc tasks[] = {
        {.name = "driver", .id = DRIVER, .priority = 2, .handler = driver, .n_in_ports = 1,
         .n_out_ports = 2, .routes = driver_routes},
        {.name = "sink", .id = SINK, .priority = 1, .handler = sink, .n_in_ports = 2},
    };
    static const tern_app_desc app = {.name = "faults", .tasks = tasks, .n_tasks = 2};

    tern_init();
    tern_app_run(&app);
}
