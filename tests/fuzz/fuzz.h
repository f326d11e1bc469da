/* Shared by the fuzz targets: a reader that turns libFuzzer's bytes into
 * values (zeros once the input is used up, so every input decodes to
 * something), and CHECK, which stops the run with a message naming the
 * broken invariant: libFuzzer then saves the input as a crash. */
#ifndef TERN_FUZZ_H
#define TERN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const uint8_t *p;
    size_t n;
} fz_reader;

static inline uint8_t fz_u8(fz_reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static inline uint16_t fz_u16(fz_reader *r)
{
    uint16_t lo = fz_u8(r);
    return (uint16_t)(lo | (uint16_t)fz_u8(r) << 8);
}

static inline uint32_t fz_u32(fz_reader *r)
{
    uint32_t lo = fz_u16(r);
    return lo | (uint32_t)fz_u16(r) << 16;
}

static inline uint64_t fz_u64(fz_reader *r)
{
    uint64_t lo = fz_u32(r);
    return lo | (uint64_t)fz_u32(r) << 32;
}

/* A duration or size that is usually small but reaches the edges a
 * sensor node's counters have: 0, 2^31, 2^32 and the top of 64 bits. */
static inline uint64_t fz_span(fz_reader *r)
{
    switch (fz_u8(r) % 8) {
    case 0: return 0;
    case 1: return fz_u8(r);
    case 2: return fz_u16(r);
    case 3: return fz_u32(r);
    case 4: return UINT64_MAX - fz_u8(r);
    case 5: return ((uint64_t)1 << 31) + fz_u8(r) - 128;
    case 6: return ((uint64_t)1 << 32) + fz_u8(r) - 128;
    default: return fz_u64(r);
    }
}

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz: invariant broken at %s:%d: %s: ", __FILE__, __LINE__,   \
                    #cond);                                                                \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

#endif
