/* The 64-bit monotonic clock: the port's free-running counter extended in
 * software. A wrap is seen as the raw value going backwards, which is
 * exact as long as the clock is read at least once per wrap; timer.c
 * guarantees that by never programming a deadline further than half a
 * wrap ahead. */
#include "kernel.h"
#include "time64.h"

static uint32_t last_raw; /* the raw count at the last read */

#if defined(__AVR__)
/* On the 8-bit CPU the counter is 32 bits wide (arch/avr/avr_board.c):
 * it is the clock's low half, the tick that timer.c's hot paths use, and
 * the high half counts its wraps. */
_Static_assert(TERN_COUNTER_BITS == 32, "the AVR clock's low half is the counter");
static uint32_t wraps_hi; /* wraps of the counter seen so far */

void clock_init(void)
{
    wraps_hi = 0;
    last_raw = port_counter_read();
}

/* A wrap of the counter (once per 2^32 ticks): called by clock_extend
 * below with the raw count in r22..r25. */
static __attribute__((noinline)) tern_time extend_wrapped(uint32_t raw)
{
    last_raw = raw;
    return t64_join(raw, ++wraps_hi);
}

static inline __attribute__((always_inline)) void store_at(tern_time *t, uint32_t raw)
{
    memcpy(t, &raw, sizeof raw);
    memcpy((uint8_t *)t + 4, &wraps_hi, sizeof wraps_hi);
}

static __attribute__((noinline)) void clock_wrapped_at(tern_time *t, uint32_t raw)
{
    (void)extend_wrapped(raw);
    store_at(t, raw);
}

void clock_at(tern_time *t, uint32_t raw)
{
    if (raw < last_raw) {
        clock_wrapped_at(t, raw); /* a tail call: raw is not kept across it */
        return;
    }
    last_raw = raw;
    store_at(t, raw);
}
#else
static tern_time wraps;     /* sum of whole counter periods seen so far */
static tern_time wrap_step; /* one counter period */

void clock_init(void)
{
    wraps = 0;
    wrap_step = (tern_time)1 << TERN_COUNTER_BITS;
    last_raw = port_counter_read();
}

/* always_inline: -Os would call it, and tern_now is the hottest function.
 * wraps is a multiple of the period and raw below it, so OR adds them. */
static inline __attribute__((always_inline)) tern_time extend(uint32_t raw)
{
    if (raw < last_raw)
        wraps += wrap_step;
    last_raw = raw;
    return wraps | raw;
}
#endif

#if defined(__AVR__)
/* The clock read in assembly on the AVR, the kernel's most frequent call:
 * avr-gcc moves a 64-bit result through two or three register sets and
 * saves eight registers around that (~160 cycles a tern_now); this takes
 * ~90 with the counter read. The symbols come in as operands (a static
 * named inside the string is invisible to the compiler, which may then
 * drop or rename it) and "memory" says the statics are read and written
 * behind the compiler's back. */
__attribute__((naked)) tern_time clock_now_irqs_off(void)
{
    __asm__ volatile("call %x[read]\n\t" /* raw in r22..r25 */
                     "jmp %x[extend]\n"
                     :
                     : [read] "i"(port_counter_read), [extend] "i"(clock_extend)
                     : "memory");
}

/* A counter value read with interrupts masked, no earlier than the last one
 * extended, as the clock (a vector that has read the counter already does
 * not read it twice). The raw count comes in r22..r25, the result goes out
 * in r18..r25 (low byte first): the raw count below wraps_hi; a wrap goes
 * to extend_wrapped. */
__attribute__((naked)) tern_time clock_extend(uint32_t raw)
{
    (void)raw;
    __asm__ volatile("lds r18, %[last]\n\t"
                     "lds r19, %[last]+1\n\t"
                     "lds r20, %[last]+2\n\t"
                     "lds r21, %[last]+3\n\t"
                     "cp r22, r18\n\t"
                     "cpc r23, r19\n\t"
                     "cpc r24, r20\n\t"
                     "cpc r25, r21\n\t"
                     "brsh 1f\n\t"
                     "jmp %x[wrapped]\n" /* it returns to our caller */
                     "1:\n\t"
                     "sts %[last], r22\n\t"
                     "sts %[last]+1, r23\n\t"
                     "sts %[last]+2, r24\n\t"
                     "sts %[last]+3, r25\n\t"
                     "movw r18, r22\n\t"
                     "movw r20, r24\n\t"
                     "lds r22, %[hi]\n\t"
                     "lds r23, %[hi]+1\n\t"
                     "lds r24, %[hi]+2\n\t"
                     "lds r25, %[hi]+3\n\t"
                     "ret\n"
                     :
                     : [last] "i"(&last_raw), [hi] "i"(&wraps_hi),
                       [wrapped] "i"(extend_wrapped)
                     : "memory");
}

/* The same inside a critical section: SREG saved in r28 (call-saved),
 * I cleared, SREG put back. */
__attribute__((naked)) tern_time tern_now(void)
{
    __asm__ volatile("push r28\n\t"
                     "in r28, __SREG__\n\t"
                     "cli\n\t"
                     "call %x[read]\n\t"
                     "call %x[extend]\n\t"
                     "out __SREG__, r28\n\t"
                     "pop r28\n\t"
                     "ret\n"
                     :
                     : [read] "i"(port_counter_read), [extend] "i"(clock_extend)
                     : "memory");
}
#else
tern_time tern_now(void)
{
    tern_irq_state s = port_irq_save();
    tern_time t = extend(port_counter_read());
    port_irq_restore(s);
    return t;
}

/* The hot paths (posting) already run with interrupts masked: no second
 * save/restore. */
tern_time clock_now_irqs_off(void) { return extend(port_counter_read()); }
#endif

uint32_t tern_clock_hz(void) { return port_board.clock_hz; }

/* A 64-bit division costs thousands of cycles on an 8-bit CPU: boards
 * whose tick is one cycle skip it. The AVR port's tick always is
 * (Timer1 at the CPU clock, arch/avr/avr_board.c), known when it is
 * compiled: its images link neither the multiply nor the divide (~600
 * bytes of libgcc). */
#if defined(__AVR__)
#define TICK_IS_CYCLE true
#else
#define TICK_IS_CYCLE (port_board.cycles_per_tick_num == port_board.cycles_per_tick_den)
#endif

uint64_t tern_ticks_to_cycles(tern_time ticks)
{
    if (TICK_IS_CYCLE)
        return ticks;
    return ticks * port_board.cycles_per_tick_num / port_board.cycles_per_tick_den;
}

tern_time tern_cycles_to_ticks(uint64_t cycles)
{
    if (TICK_IS_CYCLE)
        return cycles;
    return cycles * port_board.cycles_per_tick_den / port_board.cycles_per_tick_num;
}
