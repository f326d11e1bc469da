/* 64-bit time arithmetic for the kernel's hot paths. A 32-bit CPU does
 * these in two or three instructions; avr-gcc -Os calls libgcc for every
 * 64-bit compare, add and subtract (__cmpdi2, __adddi3, __subdi3: ~50-70
 * cycles each, plus moving eight registers in and out). On the AVR they
 * are done on the two 32-bit halves instead, which it compiles inline;
 * elsewhere they are the plain 64-bit operations. Same results on every
 * target. */
#ifndef TERN_KERNEL_TIME64_H
#define TERN_KERNEL_TIME64_H

#include <string.h>

#include "tern/types.h"

#if defined(__AVR__)
/* The halves of a 64-bit value and back, as register moves: avr-gcc
 * builds a union or a shift by 32 through memory or libgcc. */
static inline __attribute__((always_inline)) uint32_t t64_hi(tern_time t)
{
    uint32_t h;
    __asm__("movw %A0, %r1+4\n\tmovw %C0, %r1+6" : "=r"(h) : "r"(t));
    return h;
}

static inline __attribute__((always_inline)) tern_time t64_join(uint32_t lo, uint32_t hi)
{
    tern_time t;
    __asm__("movw %A0, %A1\n\tmovw %C0, %C1\n\tmovw %r0+4, %A2\n\tmovw %r0+6, %C2"
            : "=&r"(t)
            : "r"(lo), "r"(hi));
    return t;
}

/* The halves of a 64-bit value in memory, read and written in place
 * (memcpy: loads and stores, no copy of all eight bytes through
 * registers). */
static inline __attribute__((always_inline)) uint32_t t64_lo_at(const tern_time *t)
{
    uint32_t v;
    memcpy(&v, t, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) uint32_t t64_hi_at(const tern_time *t)
{
    uint32_t v;
    memcpy(&v, (const uint8_t *)t + 4, sizeof v);
    return v;
}

/* a < b */
static inline __attribute__((always_inline)) bool t64_lt(tern_time a, tern_time b)
{
    uint32_t ah = t64_hi(a), bh = t64_hi(b);
    return ah != bh ? ah < bh : (uint32_t)a < (uint32_t)b;
}

static inline __attribute__((always_inline)) tern_time t64_add(tern_time a, tern_time b)
{
    uint32_t al = (uint32_t)a, lo = al + (uint32_t)b;
    return t64_join(lo, t64_hi(a) + t64_hi(b) + (lo < al));
}

/* Ticks from `now` until `deadline`: 0 if it has passed, at most `cap`. */
static inline __attribute__((always_inline)) uint32_t t64_until(tern_time deadline,
                                                                tern_time now, uint32_t cap)
{
    if (!t64_lt(now, deadline))
        return 0;
    uint32_t dl = (uint32_t)deadline, nl = (uint32_t)now;
    uint32_t lo = dl - nl;
    uint32_t hi = t64_hi(deadline) - t64_hi(now) - (dl < nl);
    return hi || lo > cap ? cap : lo;
}
#else
static inline uint32_t t64_hi(tern_time t) { return (uint32_t)(t >> 32); }
static inline uint32_t t64_lo_at(const tern_time *t) { return (uint32_t)*t; }
static inline uint32_t t64_hi_at(const tern_time *t) { return (uint32_t)(*t >> 32); }
static inline bool t64_lt(tern_time a, tern_time b) { return a < b; }
static inline tern_time t64_add(tern_time a, tern_time b) { return a + b; }
static inline uint32_t t64_until(tern_time deadline, tern_time now, uint32_t cap)
{
    if (deadline <= now)
        return 0;
    return deadline - now > cap ? cap : (uint32_t)(deadline - now);
}
#endif

#endif
