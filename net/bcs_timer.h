/* What a board supplies to the communication scheduler (net/bcs.c): a
 * hardware timer of its own, apart from the kernel's clock, with two
 * compare channels, and a pin for the logic analyser.
 *
 * The BCS runs MAC protocols at interrupt level, above every execution
 * model (seed 004 §4.1: "the BCS uses a dedicated hardware timer"). Its
 * timer must therefore not be the kernel's deadline timer, whose interrupt
 * first walks the kernel's alarm list: a compare match here calls the
 * BCS's function directly. Times are kernel times (tern_now's ticks), so
 * that SFD captures (also kernel times) and BCS events share one scale.
 *
 * The micaz board's is boards/micaz/bcs_timer.c (Timer3 of the
 * ATmega128). An app using net/ compiles boards/<board>/bcs_timer.c. */
#ifndef TERN_NET_BCS_TIMER_H
#define TERN_NET_BCS_TIMER_H

#include <stdbool.h>

#include "tern/types.h"

enum {
    BCS_TIMER_SLOT = 0, /* the BCS's own events: region starts, hand-over, stop */
    BCS_TIMER_MAC = 1,  /* the active MAC protocol's (backoffs, slot times) */
    BCS_TIMER_CHANNELS
};

typedef void (*bcs_timer_fn)(void);

/* Start the timer; fn[ch] is called in interrupt context (between
 * tern_isr_enter and tern_isr_exit, so it may post messages) when channel
 * ch expires. Interrupts enabled or not; no channel armed. */
void bcs_timer_init(bcs_timer_fn slot_fn, bcs_timer_fn mac_fn);

/* Arm channel ch for kernel time `at`, at most 2^31 ticks ahead (a past or
 * too close `at` fires as soon as the hardware can). Replaces an earlier
 * setting of the channel. Callable from any context. */
void bcs_timer_set(uint8_t ch, tern_time at);
void bcs_timer_cancel(uint8_t ch);

/* The region pin (a logic-analyser probe): high from a slot region's start
 * t0 to its stop t2. */
void bcs_timer_pin(bool high);

#endif
