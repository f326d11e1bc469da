/* The bus frame's CRC-16/CCITT-FALSE three ways, timed on the ATmega128
 * under tern-simavr (`make -C bench/crc`, docs/comos.md): the word-shift
 * form kernel/remote.c had, the byte form it has now (kernel/crc16.h), and a
 * 256-entry table in flash. Each runs ROUNDS times over one 64-byte frame
 * (the largest); the three must agree with each other and with the check
 * value over "123456789" (0x29B1), or the image exits 1. */
#include <stdint.h>

#include "crc16.h"
#include "tern_simavr_abi.h"

#define ROUNDS 100
#define FRAME 64

__attribute__((noinline)) uint16_t crc_words(uint16_t crc, const uint8_t *p, uint8_t n)
{
    while (n--) {
        uint8_t x = (uint8_t)((crc >> 8) ^ *p++);
        x ^= (uint8_t)(x >> 4);
        crc = (uint16_t)((crc << 8) ^ ((uint16_t)x << 12) ^ ((uint16_t)x << 5) ^ x);
    }
    return crc;
}

/* kernel/crc16.h's, the kernel's own code */
__attribute__((noinline)) uint16_t crc_bytes(uint16_t crc, const uint8_t *p, uint8_t n)
{
    return crc16_ccitt(crc, p, n);
}

/* crc_table_data[i]: the CRC register after shifting byte i in from zero. */
static const __flash uint16_t crc_table_data[256] = {
#include "table.inc"
};

__attribute__((noinline)) uint16_t crc_table(uint16_t crc, const uint8_t *p, uint8_t n)
{
    while (n--)
        crc = (uint16_t)((crc << 8) ^ crc_table_data[(uint8_t)((crc >> 8) ^ *p++)]);
    return crc;
}

static uint8_t frame[FRAME];
static volatile uint16_t out;

int main(void)
{
    static const uint8_t check[] = "123456789";
    uint8_t ok = crc_words(0xFFFF, check, 9) == 0x29B1 && crc_bytes(0xFFFF, check, 9) == 0x29B1 &&
                 crc_table(0xFFFF, check, 9) == 0x29B1;
    for (uint8_t i = 0; i < FRAME; i++)
        frame[i] = (uint8_t)(i * 37u + 11u);
    for (uint8_t k = 0; k < ROUNDS; k++) {
        uint16_t a = crc_words(0xFFFF, frame, FRAME);
        uint16_t b = crc_bytes(0xFFFF, frame, FRAME);
        uint16_t c = crc_table(0xFFFF, frame, FRAME);
        ok &= a == b && b == c;
        out = a;
    }
    tern_simavr_exit(ok ? 0 : 1);
}
