"""The metrics of seed 000 (TinyOS vs MANTIS), as pure functions.

Notation and equations from seed 000, sections IV, VI and VII:

- (1)  lambda_n = (2^n - 1) * f_s                    forwarding arrivals per second at tree depth n
- (2)  E_t = sum(e_j) / J                            mean forwarding job time, e = e_stop - e_start
- (3)  I_t = sum(i_k) / T * 100                      percent of the experiment the CPU is idle
- (4)  I_max = (1 - f_s/s_cpu * (l_s + l_p*(2^n - 1))) * 100
                                                     idle percent of an OS with no overhead
- (5)  I_o = I_max - I_t                             the OS overhead, in percentage points
- (6)  I_p = sum(i_k) / k                            mean idle period length

Decisions (the paper does not pin them down):

- Standard deviation is the population one, sigma = sqrt(sum((x - mean)^2) / N).
  The paper writes sigma and reports a deviation of 0 us for MANTIS at n = 1,
  which only the population form gives for a single sample; for the J >= 50 jobs
  of a real run the two forms differ by less than 1 %.
- Percentiles are nearest-rank: the p-th percentile of N sorted values is the
  value at 1-based rank ceil(p/100 * N). It is always a measured value, never an
  interpolation, so p99 is a job that really happened.
- Empty inputs: statistics over no jobs or no idle periods are None (a run
  can legitimately see no arrival); I_t over no idle periods is 0.0 (the CPU
  never idled); an experiment duration T <= 0 is an error (ValueError).
- Units are whatever the caller passes in: the functions are linear in the
  samples, so converting ticks to cycles or microseconds before or after gives
  the same result. I_max takes l_s and l_p in CPU cycles and s_cpu in Hz.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

L_P_CYCLES = 4000  # l_p, forwarding job length in cycles (seed 000, Table I)
F_S_HZ = 1.0  # f_s, sensing frequency (seed 000, Table I)
S_CPU_HZ = 4_000_000  # s_cpu, the ATmega128 of seed 000 at 4 MHz


@dataclass(frozen=True)
class SampleStats:
    """Summary of a sample: count, mean, population sd, min, max, p50, p99."""

    count: int
    mean: float
    sd: float
    minimum: float
    maximum: float
    p50: float
    p99: float

    def scaled(self, factor: float) -> SampleStats:
        """The same summary in another unit (every field is linear in the data)."""
        return SampleStats(
            self.count,
            self.mean * factor,
            self.sd * factor,
            self.minimum * factor,
            self.maximum * factor,
            self.p50 * factor,
            self.p99 * factor,
        )


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean sum(x)/N; None for no values."""
    if not values:
        return None
    return math.fsum(values) / len(values)


def population_sd(values: Sequence[float]) -> float | None:
    """Population standard deviation sqrt(sum((x - mean)^2) / N); None for no values."""
    m = mean(values)
    if m is None:
        return None
    return math.sqrt(math.fsum((x - m) ** 2 for x in values) / len(values))


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile: sorted(values)[ceil(p/100 * N) - 1]; None for no values.

    p must be in (0, 100]. Example: for [1, 2, 3, 4], p = 50 -> rank ceil(2) = 2 -> 2.
    """
    if not 0 < p <= 100:
        raise ValueError(f"percentile must be in (0, 100], not {p}")
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def sample_stats(values: Sequence[float]) -> SampleStats | None:
    """Summary of a sample, or None when it is empty."""
    if not values:
        return None
    m = mean(values)
    sd = population_sd(values)
    p50 = percentile(values, 50)
    p99 = percentile(values, 99)
    assert m is not None and sd is not None and p50 is not None and p99 is not None
    return SampleStats(len(values), m, sd, min(values), max(values), p50, p99)


def job_time_stats(e_j: Sequence[float]) -> SampleStats | None:
    """Forwarding job times e_j -> E_t = sum(e_j)/J (eq. 2), sigma, max, p50, p99.

    None when no job was recorded (J = 0), since E_t is undefined there.
    """
    return sample_stats(e_j)


def idle_percentage(i_k: Sequence[float], duration: float) -> float:
    """I_t = sum(i_k) / T * 100 (eq. 3), i_k and T in the same unit.

    No idle period gives 0.0: the CPU was busy the whole time. T must be positive.
    """
    if duration <= 0:
        raise ValueError(f"experiment duration T must be positive, not {duration}")
    return math.fsum(i_k) / duration * 100


def max_idle_percentage(
    n: int,
    l_s_cycles: float,
    l_p_cycles: float = L_P_CYCLES,
    f_s: float = F_S_HZ,
    s_cpu: float = S_CPU_HZ,
) -> float:
    """I_max = (1 - f_s/s_cpu * (l_s + l_p * (2^n - 1))) * 100 (eq. 4).

    The idle percent an OS without any overhead would leave: the sensing work
    l_s once and the forwarding work l_p lambda_n/f_s = 2^n - 1 times per sensing
    period. It goes negative when the node is overloaded.
    """
    if n < 0:
        raise ValueError(f"tree depth n must be non-negative, not {n}")
    if s_cpu <= 0:
        raise ValueError(f"s_cpu must be positive, not {s_cpu}")
    return (1 - f_s / s_cpu * (l_s_cycles + l_p_cycles * (2**n - 1))) * 100


def os_overhead(i_max: float, i_t: float) -> float:
    """I_o = I_max - I_t (eq. 5), in percentage points."""
    return i_max - i_t


def idle_period_stats(i_k: Sequence[float]) -> SampleStats | None:
    """Idle periods i_k -> I_p = sum(i_k)/k (eq. 6) and its sigma; None for k = 0."""
    return sample_stats(i_k)


def arrival_rate(n: int, f_s: float = F_S_HZ) -> float:
    """lambda_n = (2^n - 1) * f_s (eq. 1), forwarding jobs per second."""
    return (2**n - 1) * f_s
