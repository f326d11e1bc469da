/* The node's global clock: one time base for every processor of a
 * multi-processor node (seed 002's time synchronization), what timers that
 * migrate between processors carry.
 *
 * Global time is nanoseconds on the master processor's clock (its local
 * ticks converted at its nominal rate): on the master tern_global_now() is
 * its own clock; every other processor keeps the offset and the rate of its
 * clock against the master's, from pairs (local ticks, global time) of the
 * same instant that a sync source hands in (drivers/procbus/procbus_sync.c:
 * the start of a sync frame, captured by both ends' timers). Between two
 * samples the conversion extrapolates with the last rate. */
#ifndef TERN_GTIME_H
#define TERN_GTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "tern/types.h"

typedef uint64_t tern_gtime; /* ns of global time */

#define TERN_GTIME_NS_PER_S 1000000000u

/* This processor's clock is the global clock (the master). */
void tern_gtime_set_master(void);

/* A sync sample: local tick `local` (tern_now's scale) is global time
 * `global`. The first sets the offset; from the second on the rate is the
 * ratio of the global to the local interval since the previous sample.
 * Interrupt context is fine; samples come in order of time. */
void tern_gtime_sample(tern_time local, tern_gtime global);

/* The local clock stood still for a while (the processor was powered
 * down: kernel/power.c calls it): until the next sample the global clock
 * lags by that time and tern_global_synced() is false; the next sample
 * sets the offset again (a step, counted in steps, not refused as a rate
 * beyond 1000 ppm) and keeps the rate. No effect on the master, whose
 * clock is the global clock. */
void tern_gtime_clock_stopped(void);

/* True on the master, and elsewhere once a sample has come in and none
 * is due after a stopped clock. */
bool tern_global_synced(void);

/* Global time now, and of a local tick (before the first sample: the
 * local clock as if it were the master's). */
tern_gtime tern_global_now(void);
tern_gtime tern_global_from_local(tern_time local);

/* The local tick at which the global clock reads `global` (the first tick
 * at or after it, to the precision of the rate). */
tern_time tern_local_from_global(tern_gtime global);

/* What the samples said. */
typedef struct {
    uint16_t samples;     /* taken in */
    uint16_t refused;     /* ignored: not 1 ms after the previous one, or a rate beyond 1000 ppm */
    int32_t rate_ppb;     /* global minus local rate, parts per billion */
    /* Each sample against what the model predicted for it: the sync's
     * own error after one period, before the correction. */
    int32_t last_error_ns;
    int32_t offset_only_error_ns; /* the second sample's: predicted by the offset alone */
    uint32_t max_error_ns;        /* the largest |error| of a sample predicted with a rate */
    uint16_t steps;               /* samples taken as a step after a stopped clock */
    int32_t last_step_ns;         /* the last step: model minus sample (the time the clock stood) */
} tern_gtime_stats;
const tern_gtime_stats *tern_gtime_stats_get(void);

#endif
