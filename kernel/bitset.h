/*
 * bitset.h - one bit per small number (a task id, a bus address) in a
 * byte array, for the kernel's per-task and per-processor flags.
 */
#ifndef TERN_KERNEL_BITSET_H
#define TERN_KERNEL_BITSET_H

#include <stdbool.h>
#include <stdint.h>

static inline bool bit(const uint8_t *set, uint8_t i) { return set[i >> 3] & (1u << (i & 7)); }

static inline void set_bit(uint8_t *set, uint8_t i, bool on)
{
    if (on)
        set[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
        set[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

#endif
