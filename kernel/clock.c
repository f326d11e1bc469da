/* The 64-bit monotonic clock: the port's free-running counter extended in
 * software. A wrap is seen as the raw value going backwards, which is
 * exact as long as the clock is read at least once per wrap; timer.c
 * guarantees that by never programming a deadline further than half a
 * wrap ahead. */
#include "kernel.h"
#include "time64.h"

static uint32_t last_raw;

#if defined(__AVR__)
/* On the 8-bit CPU the sum of whole periods is kept as two 32-bit
 * halves: the extension is a 32-bit add on a wrap and an OR, all inline
 * (a 64-bit add is a libgcc call there). */
static uint32_t wraps_lo, wraps_hi; /* sum of whole counter periods seen so far */
static uint32_t step_lo, step_hi;   /* one counter period */

void clock_init(void)
{
    wraps_lo = wraps_hi = 0;
    tern_time step = (tern_time)1 << port_board.counter_bits;
    step_lo = (uint32_t)step;
    step_hi = (uint32_t)(step >> 32);
    last_raw = port_counter_read();
}

static inline __attribute__((always_inline)) tern_time extend(void)
{
    uint32_t raw = port_counter_read();
    if (raw < last_raw) {
        uint32_t lo = wraps_lo + step_lo;
        wraps_hi += step_hi + (lo < wraps_lo);
        wraps_lo = lo;
    }
    last_raw = raw;
    return t64_join(wraps_lo | raw, wraps_hi);
}
#else
static tern_time wraps;     /* sum of whole counter periods seen so far */
static tern_time wrap_step; /* one counter period */

void clock_init(void)
{
    wraps = 0;
    wrap_step = (tern_time)1 << port_board.counter_bits;
    last_raw = port_counter_read();
}

/* always_inline: -Os would call it, and tern_now is the hottest function.
 * wraps is a multiple of the period and raw below it, so OR adds them. */
static inline __attribute__((always_inline)) tern_time extend(void)
{
    uint32_t raw = port_counter_read();
    if (raw < last_raw)
        wraps += wrap_step;
    last_raw = raw;
    return wraps | raw;
}
#endif

#if defined(__AVR__)
/* The AVR's critical section inline: SREG saved, I cleared, SREG put
 * back. port_irq_save/restore are calls, and around them avr-gcc saves
 * and restores most of the register file; nothing here requests a thread
 * switch, so the thread models' restore (which takes a pending one) is not
 * needed either. */
tern_time tern_now(void)
{
    uint8_t s;
    __asm__ volatile("in %0, __SREG__\n\tcli" : "=r"(s)::"memory");
    tern_time t = extend();
    __asm__ volatile("out __SREG__, %0" ::"r"(s) : "memory");
    return t;
}
#else
tern_time tern_now(void)
{
    tern_irq_state s = port_irq_save();
    tern_time t = extend();
    port_irq_restore(s);
    return t;
}
#endif

/* The hot paths (posting) already run with interrupts masked: no second
 * save/restore. */
tern_time clock_now_irqs_off(void) { return extend(); }

uint32_t tern_clock_hz(void) { return port_board.clock_hz; }

/* A 64-bit division costs thousands of cycles on an 8-bit CPU: boards
 * whose tick is one cycle skip it. */
uint64_t tern_ticks_to_cycles(tern_time ticks)
{
    if (port_board.cycles_per_tick_num == port_board.cycles_per_tick_den)
        return ticks;
    return ticks * port_board.cycles_per_tick_num / port_board.cycles_per_tick_den;
}

tern_time tern_cycles_to_ticks(uint64_t cycles)
{
    if (port_board.cycles_per_tick_num == port_board.cycles_per_tick_den)
        return cycles;
    return cycles * port_board.cycles_per_tick_den / port_board.cycles_per_tick_num;
}
