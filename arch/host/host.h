/* The host port: a deterministic fake clock (1 tick = 1 us) and interrupts
 * injected at chosen times, so a unit test can script "at t = 100 an
 * interrupt posts to a high-priority task while a low-priority handler
 * runs" and check the exact order and times of what follows. */
#ifndef TERN_HOST_H
#define TERN_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reset the fake machine; call before tern_init(). The clock starts at
 * `start` (pick one near 2^32 to cross a counter wrap). */
void host_reset(uint64_t start);
uint64_t host_time(void);

/* A handler doing `ticks` of work: interrupts due meanwhile fire at their
 * exact time (when enabled) and may preempt it. */
void host_work(uint64_t ticks);

/* An interrupt at absolute time `at` that calls fn(arg) in interrupt
 * context. Up to 64 pending. */
typedef void (*host_irq_fn)(void *arg);
void host_inject(uint64_t at, host_irq_fn fn, void *arg);

/* Run the kernel's main loop until the clock reaches `until` or nothing
 * is left that could wake it. */
void host_run_until(uint64_t until);

/* Everything written to the console since host_reset(). */
const char *host_console(void);

/* The dispatch level the kernel last set (-1 = none). */
int host_level(void);

#endif
