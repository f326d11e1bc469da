"""terntools.arrivals, the host twin of bench/seed000/arrivals.c: bit-exact
against the C generator (tests/unit/arrivals_dump from the host build) and
the arrival counts the guest must produce."""
from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_checked

from terntools import arrivals

HOST_BUILD = ROOT / "build" / "host"
DUMP = HOST_BUILD / "tests" / "unit" / "arrivals_dump"


@pytest.fixture(scope="module")
def arrivals_dump() -> Path:
    """The C reference program; (re)built with the host build when it is missing or
    older than its sources, so a stale binary cannot fake a mismatch."""
    sources = [ROOT / "bench" / "seed000" / "arrivals.c", ROOT / "bench" / "seed000" / "arrivals.h",
               ROOT / "tests" / "unit" / "arrivals_dump.c"]  # fmt: skip
    if not DUMP.is_file() or DUMP.stat().st_mtime < max(src.stat().st_mtime for src in sources):
        if shutil.which("cmake") is None or shutil.which("ninja") is None:
            pytest.skip("cmake or ninja is not installed, so the C arrival generator cannot be built (make apt)")
        if not (HOST_BUILD / "build.ninja").is_file():
            run_checked(["cmake", "-S", str(ROOT), "-B", str(HOST_BUILD), "-G", "Ninja"])
        run_checked(["cmake", "--build", str(HOST_BUILD), "--target", "arrivals_dump"])
    assert DUMP.is_file(), f"the host build did not produce {DUMP}"
    return DUMP


def c_gaps(dump: Path, seed: int, mean: int, count: int) -> list[int]:
    proc = subprocess.run([str(dump), str(seed), str(mean), str(count)], capture_output=True, text=True, check=True)
    return [int(x) for x in proc.stdout.split()]


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 0xDEADBEEF, 2**32 - 1])
@pytest.mark.parametrize("n", [1, 4, 8, 12])
def test_gaps_are_bit_exact_with_the_c_generator(arrivals_dump: Path, seed: int, n: int) -> None:
    mean = arrivals.mean_gap_cycles(n)
    expected = c_gaps(arrivals_dump, seed, mean, 3000)
    rng = arrivals.ArrivalRng(seed)
    assert [rng.next_gap(mean) for _ in range(3000)] == expected


def test_tiny_means_hit_the_one_cycle_floor(arrivals_dump: Path) -> None:
    # mean 1 cycle: most gaps round down to 0 and become 1, as in C
    rng = arrivals.ArrivalRng(7)
    ours = [rng.next_gap(1) for _ in range(500)]
    assert ours == c_gaps(arrivals_dump, 7, 1, 500)
    assert min(ours) == 1


@pytest.mark.parametrize(("seed", "n", "samples"), [(1, 1, 50), (12345, 1, 2), (3, 4, 5), (0xDEADBEEF, 8, 3)])
def test_arrival_count_matches_the_c_gaps(arrivals_dump: Path, seed: int, n: int, samples: int) -> None:
    # the guest schedules an arrival only while the running sum of gaps is inside
    # the window of samples * 4e6 cycles: count the prefix sums of the C gaps
    window = samples * 4_000_000
    t, count = 0, 0
    for gap in c_gaps(arrivals_dump, seed, arrivals.mean_gap_cycles(n), 20 * (2**n) * samples + 100):
        t += gap
        if t >= window:
            break
        count += 1
    else:
        pytest.fail("test bug: the C gaps did not fill the window")
    assert arrivals.arrival_count(seed, n, samples) == count


def test_seed_goes_through_the_murmur3_finaliser() -> None:
    # fmix32(1) = 0x514e28b7 and fmix32(0) = 0, which maps to the constant;
    # the seed is taken modulo 2^32.
    assert arrivals.ArrivalRng(1).state == 0x514E28B7
    assert arrivals.ArrivalRng(0).state == 0x9E3779B9
    assert arrivals.ArrivalRng(2**32 + 1).state == 0x514E28B7


def test_xorshift_first_output_by_hand() -> None:
    # x = 0x9e3779b9: x ^= x << 13 -> 0x710059b9; x ^= x >> 17 -> 0x71006139;
    # x ^= x << 5 -> 0x510c4619 (all mod 2^32)
    assert arrivals.ArrivalRng(0).next_u32() == 0x510C4619


def test_small_seeds_give_the_expected_arrival_count() -> None:
    # Unmixed xorshift from seed 1 drew long gaps first: 28 arrivals in
    # 50 s at 1/s. Mixed, every small seed stays within 3 sigma of 50.
    for seed in range(1, 9):
        assert abs(arrivals.arrival_count(seed, 1, 50) - 50) <= 3 * 50**0.5


def test_neg_ln_fixed_points() -> None:
    assert arrivals.neg_ln_q16(2**24) == 0
    assert arrivals.neg_ln_q16(2**23) == 45426  # ln 2 in Q16
    # -ln(2^-24) = 24 ln 2 = 16.6355; in Q16 24 * 45426 = 1090224
    assert arrivals.neg_ln_q16(1) == 24 * 45426
    # between table points the interpolation stays within 2e-4 of the real -ln
    for u in (3, 1000, 123_457, 9_999_999):
        assert arrivals.neg_ln_q16(u) / 65536 == pytest.approx(-math.log(u / 2**24), abs=2e-4)
    for bad in (0, 2**24 + 1):
        with pytest.raises(ValueError, match="1..2\\^24"):
            arrivals.neg_ln_q16(bad)


def test_log2_table_is_the_c_table() -> None:
    src = (ROOT / "bench" / "seed000" / "arrivals.c").read_text(encoding="utf-8")
    body = re.search(r"log2_table\[65\] = \{(.*?)\};", src, re.S)
    assert body is not None
    assert [int(x) for x in body.group(1).replace("\n", " ").split(",") if x.strip()] == arrivals._LOG2_TABLE


def test_gap_mean_and_rate() -> None:
    # mean 4e6 / 255 = 15686 cycles at n = 8; 200k gaps average within 1 %
    assert arrivals.mean_gap_cycles(8) == 15686
    assert arrivals.mean_gap_cycles(1) == 4_000_000
    rng = arrivals.ArrivalRng(99)
    gaps = [rng.next_gap(15686) for _ in range(200_000)]
    assert sum(gaps) / len(gaps) == pytest.approx(15686, rel=0.01)
