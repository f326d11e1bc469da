/* The CRC of the processor bus's frames (kernel/remote.c), in a header of
 * its own so that bench/crc times this very code. */
#ifndef TERN_CRC16_H
#define TERN_CRC16_H

#include <stdint.h>

/* CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), a byte at a
 * time by shifts (the polynomial's terms x^12, x^5, 1), written byte by
 * byte: the new high byte is the old low one ^ x<<4 ^ x>>3, the new low
 * byte x<<5 ^ x, so that an 8-bit CPU shifts bytes, not words in a loop.
 * On the ATmega128 (make -C bench/crc): 29 cycles a byte in 58 bytes of
 * code, against 51 for the word-shift form (62 bytes) and 22 for a table
 * in flash (36 bytes of code and 512 of table): the table's 7 cycles a
 * byte (a 64-byte frame: 448 cycles) did not pay its 512 bytes
 * (docs/comos.md). Bit by bit took ~5,000 cycles a 64-byte frame, which
 * in the receive interrupt of a 7.37 MHz ATmega128 re-offered a deferred
 * frame every 100 us outran the main loop that would make room
 * (apps/migrate hung at its largest move). */
static inline uint16_t crc16_ccitt(uint16_t crc, const uint8_t *p, uint8_t n)
{
    while (n--) {
        uint8_t x = (uint8_t)((crc >> 8) ^ *p++);
        x ^= (uint8_t)(x >> 4);
        uint8_t hi = (uint8_t)((uint8_t)crc ^ (uint8_t)(x << 4) ^ (uint8_t)(x >> 3));
        crc = (uint16_t)((uint16_t)hi << 8 | (uint8_t)((uint8_t)(x << 5) ^ x));
    }
    return crc;
}

#endif
