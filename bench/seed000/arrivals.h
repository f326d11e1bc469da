/* Poisson arrivals from a seeded integer PRNG, bit-exact with
 * tools/terntools/arrivals.py so the host knows every arrival time the
 * guest will use, for every model alike. */
#ifndef SEED000_ARRIVALS_H
#define SEED000_ARRIVALS_H

#include <stdint.h>

typedef struct {
    uint32_t state; /* xorshift32, never 0 */
} arrivals_rng;

void arrivals_seed(arrivals_rng *r, uint32_t seed);

/* Next inter-arrival gap in cycles of an exponential distribution with
 * mean `mean_cycles`: mean * -ln(U), U uniform in (0, 1] with 24 bits. */
uint32_t arrivals_next_gap(arrivals_rng *r, uint32_t mean_cycles);

/* -ln(u / 2^24) in Q16 fixed point for u in 1 .. 2^24. */
uint32_t arrivals_neg_ln_q16(uint32_t u);

#endif
