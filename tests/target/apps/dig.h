/* A recursion that eats stack on purpose, for the apps that must overflow
 * one (overflow, hybrid/overflow, main_overflow): each frame fills a 64-byte
 * buffer it reads after the call, so the compiler can neither drop nor
 * flatten it; about 80 bytes a frame. */
#ifndef TERN_TEST_DIG_H
#define TERN_TEST_DIG_H

#include <stdint.h>

static uint32_t dig(uint32_t n)
{
    volatile uint8_t buf[64];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)n;
    if (n == 0)
        return buf[0];
    return dig(n - 1) + buf[63];
}

#endif
