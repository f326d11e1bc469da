/* seed000_trace.elf: bench/seed000's node with the kernel trace on, for
 * `tern run --trace-out` and `tern trace export` (docs/traces.md).
 *
 * The same source, seed000.c, included with one change: the idle work it
 * installs is wrapped so that the trace ring goes to the console every
 * time the node is about to idle (before IDLE_ENTER), which keeps the
 * busy period before it complete in a ring of TERN_TRACE_EVENTS. The
 * console output costs the node time it would otherwise idle; this build
 * shows what happens, bench/seed000's measurements come from seed000.elf. */
#include "tern/tern.h"

void seed000_trace_set_work(tern_idle_work work);

#define tern_idle_set_work seed000_trace_set_work
#include "seed000.c"
#undef tern_idle_set_work

static tern_idle_work app_work;

static bool drain_then_work(void)
{
    tern_trace_drain();
    return app_work ? app_work() : false;
}

void seed000_trace_set_work(tern_idle_work work)
{
    app_work = work;
    tern_idle_set_work(drain_then_work);
}
