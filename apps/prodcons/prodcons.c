/* Producer/consumer: on each of three timer expiries the producer (priority
 * 2) makes ITEMS heap-allocated items and posts each to the consumer
 * (priority 5), handing over ownership of the payload; the consumer takes
 * it without copying and frees it. Under `stack` the consumer preempts the
 * producer at every post (produce 1, consume 1, produce 2, ...); under
 * `fifo` and `priority` it runs only after the producer's handler returns.
 * At the end every byte must be back on the heap. */
#include "tern/port.h"
#include "tern/tern.h"

#define ITEMS 3u
#define ROUNDS 3u
#define PERIOD 20000u /* cycles */

enum { PRODUCER, CONSUMER };

static unsigned produced, consumed, rounds;

static tern_status producer(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT)
        return tern_timer_start(0, tern_cycles_to_ticks(PERIOD), tern_cycles_to_ticks(PERIOD));
    if (m->port != TERN_PORT_TIMEOUT(0))
        return TERN_OK;
    if (rounds++ == ROUNDS) {
        tern_printf("produced %u consumed %u heap in use %u lost %lu\n", produced, consumed,
                    (unsigned)(tern_heap_used_by(PRODUCER) + tern_heap_used_by(CONSUMER) +
                               tern_heap_used_by(TERN_OWNER_TRANSIT)),
                    (unsigned long)tern_stats()->dropped[TERN_DROP_POOL_FULL]);
        port_exit(produced == consumed ? 0 : 1);
    }
    for (unsigned i = 0; i < ITEMS; i++) {
        uint32_t *item = tern_alloc(sizeof *item);
        if (!item) {
            tern_printf("producer: heap exhausted\n");
            port_exit(1);
        }
        *item = ++produced;
        tern_printf("produce %lu\n", (unsigned long)*item);
        tern_status st = tern_post(0, item, sizeof *item, TERN_MSG_HEAP);
        if (st != TERN_OK) {
            tern_printf("producer: post failed: %s\n", tern_status_name(st));
            port_exit(1);
        }
    }
    tern_printf("producer done\n");
    return TERN_OK;
}

static tern_status consumer(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != TERN_PORT_APP(0))
        return TERN_OK;
    uint32_t *item = tern_take(m);
    if (!item) {
        tern_printf("consumer: no payload\n");
        port_exit(1);
    }
    consumed++;
    tern_printf("consume %lu\n", (unsigned long)*item);
    tern_free(item);
    return TERN_OK;
}

int main(void)
{
    static const tern_route producer_routes[] = {TERN_TO_TASK(CONSUMER, TERN_PORT_APP(0))};
    static const tern_task_desc tasks[] = {
        {.name = "producer", .id = PRODUCER, .priority = 2, .handler = producer,
         .n_out_ports = 1, .routes = producer_routes},
        {.name = "consumer", .id = CONSUMER, .priority = 5, .handler = consumer,
         .n_in_ports = 1},
    };
    static const tern_app_desc app = {.name = "prodcons", .tasks = tasks, .n_tasks = 2};

    tern_init();
    tern_app_run(&app);
}
