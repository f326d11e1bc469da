/* The communication scheduler's timer on the MicaZ (net/bcs_timer.h), and
 * on micaz-1284p, which includes this file: Timer3 of the ATmega128 (of
 * the ATmega1284P), counting CPU cycles (prescaler 1) like Timer1,
 * the kernel's clock, so one Timer3 tick is one kernel tick. Channel
 * BCS_TIMER_SLOT is output compare 3A, BCS_TIMER_MAC is 3B.
 *
 * Take-over before the event (seed 004 §4.2: "we let BCS take over control
 * d_intr^max before a time-critical event"), when BCS_TIMER_LEAD_TICKS is
 * set: a channel's compare matches
 * BCS_TIMER_LEAD_TICKS before its target. The interrupt does the slow part
 * there -- ignoring matches of earlier 16-bit wraps, tern_isr_enter (which
 * closes an idle period) -- then waits with interrupts disabled, polling
 * TCNT1, until the target, and calls the channel's function: its first
 * instruction comes a constant few cycles after the target, whatever the
 * CPU was doing, as long as nothing kept interrupts disabled for longer
 * than the lead minus the slow part (`tern bench bips timers`, docs/bips.md,
 * measures both). The lead is busy CPU time on every event.
 *
 * Kernel time -> Timer3 count: the two counters run in step, a constant
 * `t3_minus_t1` apart, measured once at start-up by reading both in two
 * instructions a known 4 cycles apart. Only the early match depends on it;
 * the target itself is read from TCNT1.
 *
 * Long delays: a 16-bit compare matches once every 65,536 cycles; the
 * interrupt compares the 32-bit clock with the wake-up time and ignores the
 * matches of earlier wraps (counting the wraps instead lost events under
 * simavr when the other channel's flag was cleared, see docs/bips.md). The
 * region pin is PC0 (free on the MicaZ). */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "avr.h"
#include "avr_mcu.h"
#include "bcs_timer.h"
#include "tern/port.h"

/* A target closer than this (or past) is moved out to it: from reading
 * the clock to writing OCR3x takes ~60 cycles of 32-bit arithmetic, and a
 * compare value already passed would match only a wrap later. */
#define SOON_TICKS 300u
/* A match this close before the target counts as the target's: the offset
 * between the counters is measured, not given, and could be a cycle or
 * two off; matches of earlier wraps are 65,536 ticks before. */
#define SLACK_TICKS 64
/* From the early match to the target: the slow part of the interrupt
 * (~350 cycles when it wakes the CPU from idle) plus what other interrupts
 * and critical sections may delay it by (the kernel's Timer1 interrupt:
 * ~1,600 cycles). An app may set it (-D): 1500 meets the 40-cycle path
 * without load, 3500 under load too (docs/bips.md, experiment 1). Off by
 * default: with 1500, apps/bips lost a confirmation in
 * tests/sim/test_bips.py (not investigated yet, docs/bips.md). */
#ifndef BCS_TIMER_LEAD_TICKS
#define BCS_TIMER_LEAD_TICKS 0u
#endif

static bcs_timer_fn fn[BCS_TIMER_CHANNELS];
static uint32_t target[BCS_TIMER_CHANNELS]; /* low 32 bits of the kernel time */
static uint32_t wake[BCS_TIMER_CHANNELS];   /* the early match: target - lead, or soon */
static uint16_t t3_minus_t1;

#define OCR(ch) (*((ch) == BCS_TIMER_SLOT ? &OCR3A : &OCR3B))
#define FLAG(ch) ((uint8_t)((ch) == BCS_TIMER_SLOT ? _BV(OCF3A) : _BV(OCF3B)))
#define ENABLE(ch) ((uint8_t)((ch) == BCS_TIMER_SLOT ? _BV(OCIE3A) : _BV(OCIE3B)))

void bcs_timer_init(bcs_timer_fn slot_fn, bcs_timer_fn mac_fn)
{
    uint8_t s = SREG;
    cli();
    fn[BCS_TIMER_SLOT] = slot_fn;
    fn[BCS_TIMER_MAC] = mac_fn;
    AVR_TIMER3_IMSK &= (uint8_t)~(_BV(OCIE3A) | _BV(OCIE3B) | _BV(TOIE3));
    TCCR3A = 0;
    TCCR3B = _BV(CS30); /* normal mode, prescaler 1 */
    /* TCNT1 then TCNT3, each low byte first (it latches the high byte):
     * four LDS of two cycles, so TCNT3L is read 4 cycles after TCNT1L. */
    uint8_t t1l, t1h, t3l, t3h;
    __asm__ volatile("lds %0, %4\n\t"
                     "lds %1, %5\n\t"
                     "lds %2, %6\n\t"
                     "lds %3, %7\n\t"
                     : "=r"(t1l), "=r"(t1h), "=r"(t3l), "=r"(t3h)
                     : "i"(_SFR_MEM_ADDR(TCNT1L)), "i"(_SFR_MEM_ADDR(TCNT1H)),
                       "i"(_SFR_MEM_ADDR(TCNT3L)), "i"(_SFR_MEM_ADDR(TCNT3H)));
    uint16_t t1 = (uint16_t)(t1l | t1h << 8);
    uint16_t t3 = (uint16_t)(t3l | t3h << 8);
    t3_minus_t1 = (uint16_t)(t3 - t1 - 4u);
    DDRC |= _BV(PC0);
    PORTC &= (uint8_t)~_BV(PC0);
    SREG = s;
}

void bcs_timer_set(uint8_t ch, tern_time at)
{
    uint8_t s = SREG;
    cli();
    uint32_t t = (uint32_t)at - BCS_TIMER_LEAD_TICKS;
    uint32_t now = port_counter_read();
    if ((int32_t)(t - now) < (int32_t)SOON_TICKS)
        t = now + SOON_TICKS;
    target[ch] = (uint32_t)at;
    wake[ch] = t;
    OCR(ch) = (uint16_t)((uint16_t)t + t3_minus_t1);
    /* No flag is cleared: a stale match only makes the interrupt look at
     * the clock once (clearing one flag of ETIFR must not risk another's). */
    AVR_TIMER3_IMSK |= ENABLE(ch);
    SREG = s;
}

void bcs_timer_cancel(uint8_t ch)
{
    uint8_t s = SREG;
    cli();
    AVR_TIMER3_IMSK &= (uint8_t)~ENABLE(ch);
    SREG = s;
}

void bcs_timer_pin(bool high)
{
    if (high)
        PORTC |= _BV(PC0);
    else
        PORTC &= (uint8_t)~_BV(PC0);
}

static inline void expired(uint8_t ch)
{
    /* A match of an earlier wrap (or a stale flag): not yet. */
    if ((int32_t)(port_counter_read() - wake[ch]) < -SLACK_TICKS)
        return;
    AVR_TIMER3_IMSK &= (uint8_t)~ENABLE(ch);
    tern_isr_enter();
    bcs_timer_fn f = fn[ch];
    /* Wait for the target on the kernel clock's low 16 bits (it is at most
     * the lead ahead, or past: then at once). 8 cycles a round. */
    uint16_t t16 = (uint16_t)target[ch];
    if (BCS_TIMER_LEAD_TICKS && (int32_t)(port_counter_read() - target[ch]) < 0)
        while ((int16_t)(TCNT1 - t16) < 0)
            ;
    f();
    tern_isr_exit();
}

ISR(TIMER3_COMPA_vect) { expired(BCS_TIMER_SLOT); }
ISR(TIMER3_COMPB_vect) { expired(BCS_TIMER_MAC); }
