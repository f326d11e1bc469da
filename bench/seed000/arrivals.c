#include "arrivals.h"

/* The table stays in flash on the AVR (its .rodata is copied to RAM). */
#ifdef __AVR__
#define ARRIVALS_ROM __flash
#else
#define ARRIVALS_ROM
#endif

/* log2(1 + i/64) in Q16, i = 0..64 (rounded), for table interpolation. */
static const ARRIVALS_ROM uint16_t log2_table[65] = {
    0, 1466, 2909, 4331, 5732, 7112, 8473, 9814,
    11136, 12440, 13727, 14996, 16248, 17484, 18704, 19909,
    21098, 22272, 23433, 24579, 25711, 26830, 27936, 29029,
    30109, 31178, 32234, 33279, 34312, 35334, 36346, 37346,
    38336, 39316, 40286, 41246, 42196, 43137, 44068, 44990,
    45904, 46809, 47705, 48593, 49472, 50344, 51207, 52063,
    52911, 53751, 54584, 55410, 56229, 57040, 57845, 58643,
    59434, 60219, 60997, 61769, 62534, 63294, 64047, 64794,
    65535,
};

/* The seed goes through a bit mixer (MurmurHash3's finaliser) first:
 * xorshift from a small seed such as 1 gives small numbers for its first
 * dozens of draws, i.e. long gaps, and too few arrivals in a short run. */
void arrivals_seed(arrivals_rng *r, uint32_t seed)
{
    uint32_t h = seed;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    r->state = h ? h : 0x9e3779b9u;
}

static uint32_t xorshift32(arrivals_rng *r)
{
    uint32_t x = r->state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    r->state = x;
    return x;
}

/* log2(u) in Q16 for u >= 1: integer part from the top bit, fraction from
 * the next 6 bits by table and the following 10 bits by interpolation. */
static uint32_t log2_q16(uint32_t u)
{
    /* u > 0. A bit scan, not a loop over 1 << e: a variable shift is a
     * loop on the AVR, and that loop cost ~2,000 cycles per arrival. */
    uint32_t e = (uint32_t)(sizeof(unsigned long) * 8 - 1 - (unsigned)__builtin_clzl(u));
    /* normalise the mantissa to 16 fraction bits below the top bit */
    uint32_t frac = e >= 16 ? (u >> (e - 16)) & 0xFFFFu : (u << (16 - e)) & 0xFFFFu;
    uint32_t i = frac >> 10, rest = frac & 0x3FFu;
    uint32_t lo = log2_table[i], hi = log2_table[i + 1];
    return (e << 16) + lo + (((hi - lo) * rest) >> 10);
}

uint32_t arrivals_neg_ln_q16(uint32_t u)
{
    /* -ln(u/2^24) = ln2 * (24 - log2 u); ln2 in Q16 = 45426 */
    uint32_t l2 = (24ul << 16) - log2_q16(u);
    /* (l2 * 45426) >> 16 in 32-bit steps (an 8-bit CPU's 64-bit multiply
     * costs ~1,000 cycles): l2 = h 2^16 + l, and (h 2^16 45426 + l 45426)
     * >> 16 = h 45426 + (l 45426 >> 16) exactly */
    return (l2 >> 16) * 45426u + (((l2 & 0xFFFFu) * 45426u) >> 16);
}

uint32_t arrivals_next_gap(arrivals_rng *r, uint32_t mean_cycles)
{
    uint32_t u = (xorshift32(r) >> 8) + 1; /* 1 .. 2^24 */
    uint32_t x = arrivals_neg_ln_q16(u);
    if (mean_cycles > 0x0F000000ul) { /* beyond any node's rate: the plain product */
        uint64_t gap = ((uint64_t)mean_cycles * x) >> 16;
        return gap ? (uint32_t)gap : 1;
    }
    /* (mean * x) >> 16 in 32-bit steps, exactly (an 8-bit CPU's 64-bit
     * multiply costs ~1,000 cycles): with x = xh 2^16 + xl and mean =
     * mh 2^16 + ml, it is mean xh + mh xl + (ml xl >> 16). Every term and
     * the sum fit 32 bits: x < 17 2^16 (u >= 1), so xh <= 16, and mean <=
     * 0x0F000000. */
    uint32_t xh = x >> 16, xl = x & 0xFFFFu, mh = mean_cycles >> 16, ml = mean_cycles & 0xFFFFu;
    uint32_t gap = mean_cycles * xh + mh * xl + ((ml * xl) >> 16);
    return gap ? gap : 1;
}
