"""terntools.metrics against examples worked out by hand (numbers in the comments)."""
from __future__ import annotations

import math

import pytest

from terntools import metrics
from terntools.metrics import Aggregate


# --------------------------------------------------------------------------- sample statistics


def test_mean_and_population_sd_of_the_textbook_sample() -> None:
    # 2,4,4,4,5,5,7,9: sum 40, mean 5; squared deviations 9,1,1,1,0,0,4,16 = 32;
    # population sd sqrt(32/8) = 2 (the sample form would be sqrt(32/7) = 2.138).
    xs = [2, 4, 4, 4, 5, 5, 7, 9]
    assert metrics.mean(xs) == 5
    assert metrics.population_sd(xs) == 2


def test_single_sample_has_zero_deviation_and_empty_has_none() -> None:
    # seed 000 reports sigma = 0 for one MANTIS job: only the population form gives that.
    assert metrics.population_sd([1234]) == 0
    assert metrics.mean([]) is None
    assert metrics.population_sd([]) is None
    assert metrics.sample_stats([]) is None


@pytest.mark.parametrize(
    ("p", "expected"),
    # 15,20,35,40,50: rank ceil(p/100 * 5)
    [(5, 15), (30, 20), (40, 20), (50, 35), (60, 35), (61, 40), (99, 50), (100, 50)],
)
def test_nearest_rank_percentile(p: float, expected: float) -> None:
    assert metrics.percentile([50, 15, 40, 35, 20], p) == expected


@pytest.mark.parametrize("p", [0, -1, 100.5])
def test_percentile_outside_0_100_is_refused(p: float) -> None:
    with pytest.raises(ValueError, match="percentile"):
        metrics.percentile([1, 2], p)


def test_sample_stats_and_scaling_to_microseconds() -> None:
    # 1,2,3,4: mean 2.5, deviations 2.25+0.25+0.25+2.25 = 5 -> sd sqrt(1.25);
    # p50 rank 2 -> 2, p99 rank ceil(3.96) = 4 -> 4. At 0.25 us per tick all scale by 1/4.
    s = metrics.sample_stats([4, 1, 3, 2])
    assert s is not None
    assert (s.count, s.mean, s.minimum, s.maximum, s.p50, s.p99) == (4, 2.5, 1, 4, 2, 4)
    assert s.sd == pytest.approx(math.sqrt(1.25))
    us = s.scaled(0.25)
    assert (us.mean, us.minimum, us.maximum, us.p50, us.p99) == (0.625, 0.25, 1.0, 0.5, 1.0)
    assert us.sd == pytest.approx(math.sqrt(1.25) / 4)


# --------------------------------------------------------------------------- seed 000 equations


@pytest.mark.parametrize(
    ("n", "l_s_ms", "expected"),
    [
        # l_s = 1 ms = 4000 cycles, l_p (2^1 - 1) = 4000: 1 - 8000/4e6 = 0.998
        (1, 1, 99.8),
        # 40000 + 4000 * 15 = 100000 cycles of 4e6: 97.5 %
        (4, 10, 97.5),
        # 300000 + 4000 * 255 = 1320000 cycles of 4e6: 67 %
        (8, 75, 67.0),
        # 400000 + 1020000 = 1420000: 64.5 %
        (8, 100, 64.5),
        # overloaded: 4000 + 4000 * 4095 = 16384000 cycles in one second of 4e6: -309.6 %
        (12, 1, -309.6),
    ],
)
def test_max_idle_percentage_eq4(n: int, l_s_ms: int, expected: float) -> None:
    assert metrics.max_idle_percentage(n, l_s_ms * 4000) == pytest.approx(expected, abs=1e-9)


def test_max_idle_percentage_uses_the_given_cpu_and_job_length() -> None:
    # 8 MHz, l_p = 2000, n = 2: (8000 + 2000 * 3) / 8e6 = 0.00175 -> 99.825 %
    assert metrics.max_idle_percentage(2, 8000, 2000, 1.0, 8_000_000) == pytest.approx(99.825)
    with pytest.raises(ValueError, match="s_cpu"):
        metrics.max_idle_percentage(1, 4000, s_cpu=0)


def test_idle_percentage_and_overhead() -> None:
    # idle periods 1, 2, 3 of a 12-tick window: 6/12 = 50 %
    assert metrics.idle_percentage([1, 2, 3], 12) == 50.0
    assert metrics.idle_percentage([], 12) == 0.0
    with pytest.raises(ValueError, match="positive"):
        metrics.idle_percentage([1], 0)
    # I_max 67 % (n = 8, l_s = 75 ms), measured 60 %: the OS used 7 points
    assert metrics.os_overhead(67.0, 60.0) == pytest.approx(7.0)


def test_arrival_rate_eq1() -> None:
    assert [metrics.arrival_rate(n) for n in (1, 2, 8)] == [1, 3, 255]
    assert metrics.arrival_rate(3, f_s=2.0) == 14


# --------------------------------------------------------------------------- guest aggregates


def test_aggregate_reproduces_mean_and_sd() -> None:
    # 2,4,4,4,5,5,7,9: sum 40, sum of squares 4+3*16+2*25+49+81 = 232;
    # sd = sqrt(8*232 - 40^2) / 8 = sqrt(256) / 8 = 2
    agg = Aggregate.of([2, 4, 4, 4, 5, 5, 7, 9])
    assert (agg.count, agg.total, agg.total_sq, agg.minimum, agg.maximum) == (8, 40, 232, 2, 9)
    assert agg.mean() == 5
    assert agg.population_sd() == 2


def test_aggregate_sd_is_exact_for_large_values() -> None:
    # 2^32-1 and 2^32-3: mean 2^32-2, sd exactly 1. In floating point, sum x^2/N - mean^2
    # would cancel ~1.8e19 against ~1.8e19 and lose every digit.
    agg = Aggregate.of([2**32 - 1, 2**32 - 3])
    assert agg.mean() == 2**32 - 2
    assert agg.population_sd() == 1.0


def test_empty_aggregate_has_no_statistics() -> None:
    agg = Aggregate.of([])
    assert agg.mean() is None and agg.population_sd() is None
    assert metrics.aggregate_stats(agg) is None


@pytest.mark.parametrize(
    ("fields", "complaint"),
    [
        ((0, 5, 25, 0, 0), "no samples"),
        ((2, 5, 13, 3, 2), "min 3 > max 2"),
        ((2, 30, 450, 5, 10), "outside count"),  # two values of at most 10 cannot sum to 30
        ((2, 10, 40, 5, 5), "inconsistent"),  # 2 * 40 < 10^2: impossible by Cauchy-Schwarz
        ((2, 10, 100, 1, 9), "exceeds max"),  # x^2 <= 9x, so sum x^2 <= 90
        ((1, -1, 1, None, 1), "non-negative"),
    ],
)
def test_aggregate_refuses_impossible_numbers(fields: tuple[int, ...], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        Aggregate(*fields)


def test_aggregate_without_minimum_is_allowed() -> None:
    # the guest's idle aggregate has no minimum: periods 3 and 5
    stats = metrics.aggregate_stats(Aggregate(2, 8, 34, None, 5))
    assert stats is not None
    assert (stats.mean, stats.sd, stats.minimum, stats.maximum, stats.p50) == (4, 1, None, 5, None)
    assert stats.scaled(2).minimum is None


def test_aggregate_stats_percentiles_from_the_histogram() -> None:
    # 6400, 6720, 7040 ticks: buckets (sub_bits 6, octave 12, width 64) 484, 489, 494.
    # p50: rank 2, bucket 489 = [6720, 6784) -> middle of 6720..6783 = 6751.5
    # p99: rank 3, bucket 494 = [7040, 7104) cut at the measured max 7040 -> 7040
    values = [6400, 6720, 7040]
    hist = {metrics.hist_bucket(v, 6): 1 for v in values}
    assert sorted(hist) == [484, 489, 494]
    stats = metrics.aggregate_stats(Aggregate.of(values), hist, 6)
    assert stats is not None
    assert stats.p50 == 6751.5
    assert stats.p99 == 7040
    assert stats.sd == pytest.approx(320 * math.sqrt(2 / 3))


def test_aggregate_stats_refuses_a_histogram_of_another_size() -> None:
    with pytest.raises(ValueError, match="histogram holds 1 samples, the aggregate 2"):
        metrics.aggregate_stats(Aggregate.of([5, 6]), {5: 1}, 6)
