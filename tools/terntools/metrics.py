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
    minimum: float | None  # None: not reported (the guest's idle aggregate)
    maximum: float
    p50: float | None  # None: not known (an aggregate without a histogram)
    p99: float | None

    def scaled(self, factor: float) -> SampleStats:
        """The same summary in another unit (every field is linear in the data)."""
        return SampleStats(
            self.count,
            self.mean * factor,
            self.sd * factor,
            None if self.minimum is None else self.minimum * factor,
            self.maximum * factor,
            None if self.p50 is None else self.p50 * factor,
            None if self.p99 is None else self.p99 * factor,
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
    return (1 - f_s / s_cpu * (l_s_cycles + l_p_cycles * ((1 << n) - 1))) * 100


def os_overhead(i_max: float, i_t: float) -> float:
    """I_o = I_max - I_t (eq. 5), in percentage points."""
    return i_max - i_t


def idle_period_stats(i_k: Sequence[float]) -> SampleStats | None:
    """Idle periods i_k -> I_p = sum(i_k)/k (eq. 6) and its sigma; None for k = 0."""
    return sample_stats(i_k)


def arrival_rate(n: int, f_s: float = F_S_HZ) -> float:
    """lambda_n = (2^n - 1) * f_s (eq. 1), forwarding jobs per second."""
    return ((1 << n) - 1) * f_s


# --------------------------------------------------------------------------- in-guest aggregates
#
# The seed-000 guest does not print one record per job: at n = 8 that would
# be 255 console lines per second of a 4 MHz CPU, and the UART time would
# become part of what is measured. It keeps count, sum, sum of squares,
# min, max and a log-linear histogram (bench/seed000/seed000.c, bucket_of)
# and prints them once. Mean and sigma come out exact; percentiles come from
# the histogram to within one bucket (<= 1/64 of the value at sub_bits 6).


HIST_MAX_OCTAVE = 24  # bench/seed000/seed000.c: values of 2^25 ticks and more share the last bucket
U32_LIMIT = 1 << 32  # the guest's values are uint32_t


def hist_bucket_count(sub_bits: int, max_octave: int = HIST_MAX_OCTAVE) -> int:
    """HIST_BUCKETS of seed000.c: 2^sub_bits exact buckets, then 2^sub_bits per octave."""
    return ((max_octave - sub_bits + 1) << sub_bits) + (1 << sub_bits)


def hist_bucket(value: int, sub_bits: int, max_octave: int = HIST_MAX_OCTAVE) -> int:
    """The histogram bucket of a value: the Python twin of bucket_of() in seed000.c.

    Values below 2^sub_bits have a bucket each; above, each octave [2^e, 2^(e+1))
    is split into 2^sub_bits equal buckets. Octaves above max_octave all land in
    the last bucket, as in the guest.
    """
    if not 0 <= value < U32_LIMIT:
        raise ValueError(f"histogram values are uint32, not {value}")
    if value < 1 << sub_bits:
        return value
    e = value.bit_length() - 1
    if e > max_octave:
        return hist_bucket_count(sub_bits, max_octave) - 1
    mantissa = (value >> (e - sub_bits)) & ((1 << sub_bits) - 1)
    return ((e - sub_bits + 1) << sub_bits) | mantissa


def hist_bucket_range(bucket: int, sub_bits: int, max_octave: int = HIST_MAX_OCTAVE) -> tuple[int, int]:
    """[low, high) of the values that fall into a bucket.

    The last bucket also takes every larger uint32 (the guest's overflow rule),
    so its high end is 2^32.
    """
    last = hist_bucket_count(sub_bits, max_octave) - 1
    if not 0 <= bucket <= last:
        raise ValueError(f"bucket must be in 0..{last}, not {bucket}")
    if bucket < 1 << sub_bits:
        return bucket, bucket + 1
    e = (bucket >> sub_bits) - 1 + sub_bits
    mantissa = bucket & ((1 << sub_bits) - 1)
    width = 1 << (e - sub_bits)
    low = ((1 << sub_bits) + mantissa) * width
    return low, U32_LIMIT if bucket == last else low + width


def hist_percentile(
    hist: dict[int, int], p: float, sub_bits: int, lo: float, hi: float, max_octave: int = HIST_MAX_OCTAVE
) -> float | None:
    """Nearest-rank percentile from a histogram {bucket: count}.

    The rank is found exactly; the value is the middle of the bucket's values
    that lie within the measured [lo, hi] (so a bucket one value wide, or a
    sample whose min and max share a bucket edge, gives an exact value).
    None for an empty histogram.
    """
    if not 0 < p <= 100:
        raise ValueError(f"percentile must be in (0, 100], not {p}")
    total = sum(hist.values())
    if total == 0:
        return None
    rank = max(1, math.ceil(p / 100 * total))
    seen = 0
    for bucket in sorted(hist):
        seen += hist[bucket]
        if seen >= rank:
            low, high = hist_bucket_range(bucket, sub_bits, max_octave)
            first, last = max(low, lo), min(high - 1, hi)
            if first > last:  # the bucket lies outside [lo, hi]: the data contradict each other
                raise ValueError(f"bucket {bucket} [{low}, {high}) lies outside the measured range [{lo}, {hi}]")
            return (first + last) / 2
    raise AssertionError("unreachable: rank <= total")


@dataclass(frozen=True)
class Aggregate:
    """count, sum, sum of squares, min and max of integer samples, as the guest keeps them.

    minimum is None when the guest does not report it (its idle aggregate
    prints no minimum). The constructor refuses numbers no real sample can
    produce, with a ValueError that names the broken relation.
    """

    count: int
    total: int
    total_sq: int
    minimum: int | None
    maximum: int

    def __post_init__(self) -> None:
        low = 0 if self.minimum is None else self.minimum
        if min(self.count, self.total, self.total_sq, low, self.maximum) < 0:
            raise ValueError(f"aggregate fields must be non-negative: {self}")
        if not self.count:
            if self.total or self.total_sq:
                raise ValueError(f"aggregate of no samples has sum {self.total}, sum of squares {self.total_sq}")
            return
        if low > self.maximum:
            raise ValueError(f"aggregate min {low} > max {self.maximum}")
        if not self.count * low <= self.total <= self.count * self.maximum:
            raise ValueError(
                f"aggregate sum {self.total} is outside count*[min, max] = [{self.count * low}, {self.count * self.maximum}]"
            )
        # Cauchy-Schwarz: count * sum(x^2) >= sum(x)^2 for any real data; and x^2 <= max * x.
        if self.count * self.total_sq < self.total * self.total:
            raise ValueError(f"aggregate is inconsistent: {self.count} * {self.total_sq} < {self.total}^2")
        if self.total_sq > self.maximum * self.total:
            raise ValueError(f"aggregate sum of squares {self.total_sq} exceeds max * sum = {self.maximum * self.total}")

    @classmethod
    def of(cls, values: Sequence[int]) -> Aggregate:
        """The aggregate the guest would print for these values."""
        if not values:
            return cls(0, 0, 0, 0, 0)
        return cls(len(values), sum(values), sum(v * v for v in values), min(values), max(values))

    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    def population_sd(self) -> float | None:
        """sqrt(sum x^2 / N - mean^2), computed exactly in integers before the root."""
        if not self.count:
            return None
        return math.sqrt(self.count * self.total_sq - self.total * self.total) / self.count


def aggregate_stats(
    agg: Aggregate, hist: dict[int, int] | None = None, sub_bits: int = 6, max_octave: int = HIST_MAX_OCTAVE
) -> SampleStats | None:
    """SampleStats from an aggregate; p50/p99 from the histogram (or None without one).

    minimum is None when the aggregate has none. The histogram must hold
    exactly agg.count samples (ValueError otherwise).
    """
    if not agg.count:
        return None
    m = agg.mean()
    sd = agg.population_sd()
    assert m is not None and sd is not None
    p50 = p99 = None
    if hist:
        if sum(hist.values()) != agg.count:
            raise ValueError(f"histogram holds {sum(hist.values())} samples, the aggregate {agg.count}")
        lo = 0 if agg.minimum is None else agg.minimum
        p50 = hist_percentile(hist, 50, sub_bits, lo, agg.maximum, max_octave)
        p99 = hist_percentile(hist, 99, sub_bits, lo, agg.maximum, max_octave)
    return SampleStats(agg.count, m, sd, agg.minimum, agg.maximum, p50, p99)
