"""Bit-exact twin of bench/seed000/arrivals.c.

The guest draws forwarding-job arrivals from an integer xorshift32 PRNG and
a fixed-point -ln; this module reproduces the same gaps so the host knows
how many arrivals every configuration must produce (the same for every
execution model), without running the guest.
"""

from __future__ import annotations

import math

CPU_HZ = 4_000_000
_LN2_Q16 = 45426
# log2(1 + i/64) in Q16, the top entry capped to 16 bits as in the C table.
_LOG2_TABLE = [min(round(math.log2(1 + i / 64) * 65536), 65535) for i in range(65)]


class ArrivalRng:
    """xorshift32 seeded like the guest: the seed through MurmurHash3's finaliser (0 -> a constant)."""

    def __init__(self, seed: int) -> None:
        h = seed & 0xFFFFFFFF
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & 0xFFFFFFFF
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & 0xFFFFFFFF
        h ^= h >> 16
        self.state = h or 0x9E3779B9

    def next_u32(self) -> int:
        x = self.state
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.state = x
        return x

    def next_gap(self, mean_cycles: int) -> int:
        """Exponential gap in cycles: mean * -ln(U), U in (0, 1] on 24 bits."""
        u = (self.next_u32() >> 8) + 1
        gap = (mean_cycles * neg_ln_q16(u)) >> 16
        return gap if gap else 1


def _log2_q16(u: int) -> int:
    e = u.bit_length() - 1
    frac = (u >> (e - 16)) & 0xFFFF if e >= 16 else (u << (16 - e)) & 0xFFFF
    i, rest = frac >> 10, frac & 0x3FF
    lo, hi = _LOG2_TABLE[i], _LOG2_TABLE[i + 1]
    return (e << 16) + lo + (((hi - lo) * rest) >> 10)


def neg_ln_q16(u: int) -> int:
    """-ln(u / 2^24) in Q16 for 1 <= u <= 2^24."""
    if not 1 <= u <= 1 << 24:
        raise ValueError(f"u must be in 1..2^24, got {u}")
    return (((24 << 16) - _log2_q16(u)) * _LN2_Q16) >> 16


def mean_gap_cycles(n: int, cpu_hz: int = CPU_HZ) -> int:
    """Mean inter-arrival time for a node at depth n: rate (2^n - 1) f_s, f_s = 1 Hz."""
    return cpu_hz // ((1 << n) - 1)


def arrival_count(seed: int, n: int, samples: int, cpu_hz: int = CPU_HZ) -> int:
    """How many forwarding jobs arrive within `samples` sensing periods of 1 s.

    The guest schedules an arrival only if it falls strictly before the end of
    the measurement window, exactly as counted here (in cycles; the guest's
    conversion to board ticks is monotonic and exact at the window's end).
    """
    rng = ArrivalRng(seed)
    mean = mean_gap_cycles(n, cpu_hz)
    window = samples * cpu_hz
    t, count = 0, 0
    while True:
        t += rng.next_gap(mean)
        if t >= window:
            return count
        count += 1
