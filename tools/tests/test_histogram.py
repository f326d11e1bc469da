"""The job-time histogram: hist_bucket against bucket_of() compiled from the
guest's own source, the bucket ranges, and percentiles read from it."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, require_tool, run_checked

from terntools import metrics
from terntools.metrics import hist_bucket, hist_bucket_range, hist_percentile

SEED000_C = ROOT / "bench" / "seed000" / "seed000.c"


def test_hand_picked_buckets_at_sub_bits_6() -> None:
    # below 64 every value has its own bucket
    assert [hist_bucket(v, 6) for v in (0, 1, 63)] == [0, 1, 63]
    # 64..127 (octave 6) is still one value per bucket: (6-6+1)<<6 | mantissa
    assert [hist_bucket(v, 6) for v in (64, 100, 127)] == [64, 100, 127]
    # octave 7 has buckets two values wide: 128,129 -> 128; 130 -> 129; 255 -> 191
    assert [hist_bucket(v, 6) for v in (128, 129, 130, 255)] == [128, 128, 129, 191]
    # 6400 = 100 * 64: octave 12, mantissa 100 & 63 = 36 -> 7 * 64 + 36 = 484
    assert hist_bucket(6400, 6) == 484
    # 2^24 opens octave 24: (24-6+1) * 64 = 1216; 2^25 - 1 is its last bucket 1279
    assert hist_bucket(2**24, 6) == 1216
    assert hist_bucket(2**25 - 1, 6) == 1279
    # everything above octave 24 shares the last bucket, as in the guest
    assert metrics.hist_bucket_count(6) == 1280
    assert hist_bucket(2**25, 6) == 1279
    assert hist_bucket(2**32 - 1, 6) == 1279


def test_hist_bucket_refuses_values_a_uint32_cannot_hold() -> None:
    with pytest.raises(ValueError, match="uint32"):
        hist_bucket(-1, 6)
    with pytest.raises(ValueError, match="uint32"):
        hist_bucket(2**32, 6)


@pytest.mark.parametrize("sub_bits", [2, 4, 6])
def test_bucket_ranges_tile_the_values_brute_force(sub_bits: int) -> None:
    """Walk every value up to 2^17: buckets never go down, advance by at most
    one, the value lies in its bucket's range, and each range starts where the
    previous ended and is at most 1/2^sub_bits of its low end wide."""
    previous_bucket = -1
    previous_high = 0
    for v in range(2**17):
        b = hist_bucket(v, sub_bits)
        low, high = hist_bucket_range(b, sub_bits)
        assert low <= v < high
        assert b in (previous_bucket, previous_bucket + 1)
        if b != previous_bucket:
            assert low == previous_high == v
            assert (high - low) * 2**sub_bits <= max(low, 2**sub_bits)
            previous_bucket, previous_high = b, high


@pytest.mark.parametrize("e", range(6, 32))
def test_octave_boundaries(e: int) -> None:
    # the last value of octave e-1 and the first of octave e fall in neighbouring buckets
    below, at = hist_bucket(2**e - 1, 6), hist_bucket(2**e, 6)
    if e <= 24:
        assert at == below + 1
        assert hist_bucket_range(at, 6)[0] == 2**e
    else:
        assert at == below == 1279


def test_last_bucket_is_open_ended() -> None:
    # 2^24 + 63 * 2^18 = 33292288 is the low end of bucket 1279; it takes every larger uint32
    assert hist_bucket_range(1279, 6) == (33292288, 2**32)
    with pytest.raises(ValueError, match="0..1279"):
        hist_bucket_range(1280, 6)


def test_percentile_of_one_value_buckets_is_exact() -> None:
    hist = {v: 1 for v in (1, 2, 3, 4)}
    assert hist_percentile(hist, 50, 6, 1, 4) == 2  # rank 2
    assert hist_percentile(hist, 99, 6, 1, 4) == 4  # rank ceil(3.96) = 4
    assert hist_percentile({}, 50, 6, 0, 0) is None


def test_percentile_cuts_the_bucket_to_the_measured_range() -> None:
    # 5000 and 5010 share bucket [4992, 5056); what was measured is [5000, 5010]: middle 5005
    b = hist_bucket(5000, 6)
    assert b == hist_bucket(5010, 6) and hist_bucket_range(b, 6) == (4992, 5056)
    assert hist_percentile({b: 2}, 50, 6, 5000, 5010) == 5005
    # three jobs of exactly 5000: min = max = 5000 gives the exact value
    assert hist_percentile({b: 3}, 99, 6, 5000, 5000) == 5000
    # 2^26 and 2^27 both overflow into bucket 1279: middle of [2^26, 2^27] = 100663296
    assert hist_percentile({1279: 2}, 50, 6, 2**26, 2**27) == 100663296


def test_percentile_rank_walks_the_buckets_in_order() -> None:
    # 90 jobs of 100 and 10 of 1000..1003. 1000 is in octave 9 (buckets 8 wide):
    # 1000 >> 3 = 125, bucket [1000, 1008). p50 = 100, p90 = 100 (rank 90 is the last fast job);
    # p91 falls in the slow bucket, cut to the max 1003 -> middle of 1000..1003 = 1001.5
    hist = {hist_bucket(1003, 6): 10, hist_bucket(100, 6): 90}
    assert hist_bucket_range(hist_bucket(1003, 6), 6) == (1000, 1008)
    assert hist_percentile(hist, 50, 6, 100, 1003) == 100
    assert hist_percentile(hist, 90, 6, 100, 1003) == 100
    assert hist_percentile(hist, 91, 6, 100, 1003) == 1001.5


def test_percentile_refuses_a_bucket_outside_the_measured_range() -> None:
    with pytest.raises(ValueError, match="outside the measured range"):
        hist_percentile({hist_bucket(5000, 6): 1}, 50, 6, 6000, 7000)


# --------------------------------------------------------------------------- the C twin


def _c_source_of_bucket_of() -> str:
    """The macros and bucket_of() exactly as bench/seed000/seed000.c has them."""
    src = SEED000_C.read_text(encoding="utf-8")
    macros = re.search(r"#ifndef SEED000_HIST_SUB_BITS\n.*?#define HIST_BUCKETS(?:[^\n]*\\\n)*[^\n]*\n", src, re.S)
    func = re.search(r"static uint32_t bucket_of\(uint32_t v\)\n\{\n.*?\n\}\n", src, re.S)
    if macros is None or func is None:
        pytest.fail(f"{SEED000_C} no longer has the HIST macros and bucket_of() this test extracts; update the test")
    return macros.group(0) + func.group(0)


def _bucket_of_binary(sub_bits: int, out: Path) -> Path:
    cc = require_tool("cc")
    c = out / "bucket_of.c"
    c.write_text(
        "#include <stdint.h>\n#include <stdio.h>\n"
        + _c_source_of_bucket_of()
        + "int main(void)\n{\n    unsigned long v;\n    printf(\"%d\\n\", HIST_BUCKETS);\n"
        "    while (scanf(\"%lu\", &v) == 1)\n"
        "        printf(\"%lu\\n\", (unsigned long)bucket_of((uint32_t)v));\n    return 0;\n}\n",
        encoding="utf-8",
    )
    exe = out / f"bucket_of_{sub_bits}"
    run_checked([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", f"-DSEED000_HIST_SUB_BITS={sub_bits}",
                 "-o", str(exe), str(c)])  # fmt: skip
    return exe


@pytest.mark.parametrize("sub_bits", [6, 4])
def test_hist_bucket_matches_the_guest_bucket_of(sub_bits: int, tmp_path: Path) -> None:
    exe = _bucket_of_binary(sub_bits, tmp_path)
    values = list(range(70_000))
    for e in range(7, 32):
        values += [2**e - 2, 2**e - 1, 2**e, 2**e + 1, 2**e + 2**(e - 1) + 12345 % 2**(e - 1)]
    values += [2**32 - 1, 6400, 6720, 7040, 12_345_678, 987_654_321]
    proc = subprocess.run([str(exe)], input="\n".join(map(str, values)) + "\n", capture_output=True, text=True,
                          check=True)  # fmt: skip
    lines = proc.stdout.split()
    assert int(lines[0]) == metrics.hist_bucket_count(sub_bits)
    c_buckets = list(map(int, lines[1:]))
    assert len(c_buckets) == len(values)
    mismatches = [(v, c, hist_bucket(v, sub_bits)) for v, c in zip(values, c_buckets) if c != hist_bucket(v, sub_bits)]
    assert mismatches == [], f"value, C bucket, Python bucket: {mismatches[:5]}"
