/* The global clock (tern/gtime.h): a line through the last sync sample,
 * global = g0 + ns(local - l0) * (1 + rate). Integer arithmetic only, in
 * 64 bits: intervals are split into whole seconds and the rest, so nothing
 * overflows for intervals of years, and the rate term (ns times ppb) for
 * intervals of up to ~1000 s at the largest rate accepted. */
#include "tern/gtime.h"

#include "tern/port.h"
#include "tern/time.h"

#define NS TERN_GTIME_NS_PER_S
/* A clock that disagrees with the master's by more than 1/MAX_RATE_DIV
 * (1000 ppm) is not a crystal drifting but a wrong sample; samples closer
 * than MIN_INTERVAL_NS give no rate worth having. */
#define MAX_RATE_DIV 1000
#define MIN_INTERVAL_NS 1000000

static bool master, have_sample;
/* The local clock stood still (a power-down): the next sample is a step. */
static bool stepped;
static tern_time l0;
static tern_gtime g0;
static int32_t rate; /* ppb */
static tern_gtime_stats stats;

/* |ticks| -> ns, rounded down. */
static uint64_t ns_of_ticks(uint64_t t)
{
    uint32_t hz = tern_clock_hz();
    return t / hz * NS + t % hz * NS / hz;
}

/* ns -> ticks, rounded up or down. */
static uint64_t ticks_of_ns(uint64_t ns, bool up)
{
    uint32_t hz = tern_clock_hz();
    return ns / NS * hz + (ns % NS * hz + (up ? NS - 1 : 0)) / NS;
}

static int64_t signed_ns(int64_t ticks)
{
    if (ticks < 0)
        return -(int64_t)ns_of_ticks((uint64_t)-ticks);
    return (int64_t)ns_of_ticks((uint64_t)ticks);
}

/* Model evaluation, interrupts off (the model is four words). */
static tern_gtime from_local(tern_time local)
{
    if (master || !have_sample)
        return ns_of_ticks(local);
    int64_t dn = signed_ns((int64_t)(local - l0));
    return g0 + (tern_gtime)(dn + dn * rate / (int64_t)NS);
}

void tern_gtime_set_master(void)
{
    tern_irq_state s = port_irq_save();
    master = true;
    port_irq_restore(s);
}

void tern_gtime_sample(tern_time local, tern_gtime global)
{
    tern_irq_state s = port_irq_save();
    if (stepped && have_sample) {
        /* The line's offset is off by the time the clock stood, which no
         * rate explains: take the sample as the new offset and keep the
         * rate, the crystal's, which did not change. */
        int64_t e = (int64_t)(from_local(local) - global);
        stats.last_step_ns = e < -INT32_MAX ? -INT32_MAX : e > INT32_MAX ? INT32_MAX : (int32_t)e;
        stats.steps++;
        stepped = false;
        l0 = local;
        g0 = global;
        stats.samples++;
        port_irq_restore(s);
        return;
    }
    if (have_sample && (local <= l0 || global <= g0)) {
        stats.refused++;
        port_irq_restore(s);
        return;
    }
    if (have_sample) {
        int64_t dl = (int64_t)ns_of_ticks(local - l0);
        int64_t dg = (int64_t)(global - g0);
        /* refused before the division, which then cannot overflow for
         * samples up to 100 days apart: |dg - dl| <= dl / 1000 */
        int64_t diff = dg - dl;
        if (dl < MIN_INTERVAL_NS || diff > dl / MAX_RATE_DIV || diff < -(dl / MAX_RATE_DIV)) {
            stats.refused++;
            port_irq_restore(s);
            return;
        }
        int64_t r = diff * 1000000 / (dl / 1000);
        /* a statistic: saturated */
        int64_t e = (int64_t)(from_local(local) - global);
        int32_t err = e > INT32_MAX ? INT32_MAX : e < -INT32_MAX ? -INT32_MAX : (int32_t)e;
        stats.last_error_ns = err;
        if (stats.samples == 1)
            stats.offset_only_error_ns = err;
        else if ((uint32_t)(err < 0 ? -err : err) > stats.max_error_ns)
            stats.max_error_ns = (uint32_t)(err < 0 ? -err : err);
        rate = (int32_t)r;
        stats.rate_ppb = rate;
    }
    l0 = local;
    g0 = global;
    have_sample = true;
    stats.samples++;
    port_irq_restore(s);
}

void tern_gtime_clock_stopped(void)
{
    tern_irq_state s = port_irq_save();
    if (!master)
        stepped = true;
    port_irq_restore(s);
}

bool tern_global_synced(void) { return master || (have_sample && !stepped); }

tern_gtime tern_global_from_local(tern_time local)
{
    tern_irq_state s = port_irq_save();
    tern_gtime g = from_local(local);
    port_irq_restore(s);
    return g;
}

tern_gtime tern_global_now(void) { return tern_global_from_local(tern_now()); }

tern_time tern_local_from_global(tern_gtime global)
{
    tern_irq_state s = port_irq_save();
    tern_time t;
    if (master || !have_sample) {
        t = ticks_of_ns(global, true);
    } else {
        /* invert g = g0 + dn (1 + rate): dn = dg - dg rate / (1 + rate) */
        int64_t dg = (int64_t)(global - g0);
        int64_t dn = dg - dg * rate / ((int64_t)NS + rate);
        /* the first tick at or after: up ahead of l0, down behind it */
        t = dn >= 0 ? l0 + ticks_of_ns((uint64_t)dn, true) : l0 - ticks_of_ns((uint64_t)-dn, false);
    }
    port_irq_restore(s);
    return t;
}

const tern_gtime_stats *tern_gtime_stats_get(void) { return &stats; }
