"""The seed-003 driver: parameter block, histogram buckets (the inverse of
bucket_of in bench/seed003/seed003.c), parsing a hand-made guest log, the
errors a broken log must give, and the threads-vs-adaptive summary."""
from __future__ import annotations

import struct

import pytest

from terntools import seed003
from terntools.boards import Board
from terntools.errors import TernError, UsageError

SUB = 5


def bucket_of(v: int, sub: int = SUB, max_octave: int = 26) -> int:
    """Twin of bucket_of() in bench/seed003/seed003.c."""
    if v < 1 << sub:
        return v
    e = v.bit_length() - 1
    if e > max_octave:
        return ((max_octave - sub + 1) << sub) + (1 << sub) - 1
    return ((e - sub + 1) << sub) | ((v >> (e - sub)) & ((1 << sub) - 1))


def test_params_blob_is_the_guest_layout() -> None:
    p = seed003.Params(duration_s=2, neighbours=3, seed=9)
    words = struct.unpack("<8I", seed003.params_blob(p))
    assert words == (0x73656433, 2, 1000, 2000, 300000, 4000, 3, 9)


@pytest.mark.parametrize("bad", [seed003.Params(neighbours=5), seed003.Params(neighbours=0),
                                 seed003.Params(gap_cycles=0), seed003.Params(period_ms=0)])
def test_bad_params_are_refused(bad: seed003.Params) -> None:
    with pytest.raises(UsageError):
        bad.check()


def test_bucket_bounds_by_hand() -> None:
    assert seed003.bucket_bounds(31, SUB) == (31, 31)  # exact below 2^5
    assert bucket_of(64) == 64 and seed003.bucket_bounds(64, SUB) == (64, 65)
    assert bucket_of(100) == 82 and seed003.bucket_bounds(82, SUB) == (100, 101)


@pytest.mark.parametrize("v", [0, 1, 31, 32, 33, 63, 64, 999, 4000, 65535, 123457, 2**26 - 1])
def test_every_value_lies_in_its_buckets_bounds(v: int) -> None:
    low, high = seed003.bucket_bounds(bucket_of(v), SUB)
    assert low <= v <= high


def test_p99_is_the_upper_bound_of_the_bucket_reaching_99_percent() -> None:
    hist = {10: 98, 82: 1, 100: 1}  # 98 jobs of 10, one of ~100, one far out
    assert seed003.percentile_upper(hist, SUB, 0.99) == 101
    assert seed003.percentile_upper(hist, SUB, 0.98) == 10
    with pytest.raises(TernError, match="no processing times"):
        seed003.percentile_upper({}, SUB, 0.99)


P2 = seed003.Params(neighbours=2)
LOG = """SEED003 BEGIN model=threads duration_s=60
SEED003 HIST sub_bits=5
H 10 2
H 82 1
N 0 arrivals=2 jobs=2 ctx=5 invol=1 e_sum=110 e_max=100
N 1 arrivals=1 jobs=1 ctx=3 invol=1 e_sum=10 e_max=10
SEED003 END model=threads T=1000 sensing=1 ctx_vol=7 ctx_invol=4 invol_sensing=2 invol_control=0 sliced_long=2 \
sliced_short=2 pf=0 evict=0 ctx=11 preempt=4 idle_sum=250 dropped=0
"""


def test_parse_a_hand_made_log(mps2: Board) -> None:
    r = seed003.parse_output(LOG, "threads", mps2, P2)
    # one tick is 5/8 of a 4 MHz cycle: 0.15625 us
    assert r.jobs == r.arrivals == 3
    assert r.ctx_vol == 7 and r.ctx_invol == 4 and r.ctx_per_neighbour == [5, 3]
    assert r.invol_sensing == 2 and r.invol_per_neighbour == [1, 1]
    assert r.sliced_long == r.sliced_short == 2 and r.pf_entered == 0
    assert r.busy == 0.75 and r.busy_cycles == 750 * 5 // 8
    assert r.mean_processing_us == pytest.approx(40 * 0.15625, abs=0.006)  # (110 + 10) / 3 ticks
    assert r.p99_processing_us == pytest.approx(101 * 0.15625, abs=0.006)
    assert r.max_processing_us == pytest.approx(100 * 0.15625, abs=0.006)


@pytest.mark.parametrize("change,message", [
    (("SEED003 END", "SEED003 DONE"), "no 'SEED003 END'"),
    (("END model=threads", "END model=stack"), "reports model 'stack'"),
    (("N 1 arrivals=1", "N 1 arrivals=2"), "4 arrivals but 3 jobs done"),
    (("H 82 1", "H 82 2"), "histogram holds 4 jobs, not 3"),
    (("idle_sum=250", "idle_sum=2500"), "not within the window"),
    (("ctx_invol=4 ", ""), "field 'ctx_invol' is missing"),
    (("ctx=3 invol=1 ", "ctx=3 "), "field 'invol' is missing"),
    (("invol_sensing=2", "invol_sensing=3"), "5 involuntary switches out of the threads, 4 in all"),
    (("sliced_short=2", "sliced_short=1"), "3 quanta ended and 0 long threads were preempted, but 4 "),
    (("N 1 arrivals", "X 1 arrivals"), "expected neighbour lines 0..1"),
])
def test_broken_logs_are_refused_naming_the_problem(mps2: Board, change: tuple[str, str],
                                                    message: str) -> None:
    with pytest.raises(TernError, match=message.replace("(", r"\(")):
        seed003.parse_output(LOG.replace(*change), "threads", mps2, P2)


def test_table_compares_adaptive_with_threads(mps2: Board) -> None:
    t = seed003.parse_output(LOG, "threads", mps2, P2)
    a = seed003.parse_output(LOG.replace("model=threads", "model=adaptive").replace("ctx_invol=4", "ctx_invol=2")
                             .replace("sliced_short=2", "sliced_short=0")
                             .replace("N 0 arrivals=2 jobs=2 ctx=5 invol=1", "N 0 arrivals=2 jobs=2 ctx=5 invol=0")
                             .replace("N 1 arrivals=1 jobs=1 ctx=3 invol=1", "N 1 arrivals=1 jobs=1 ctx=3 invol=0"),
                             "adaptive", mps2, P2)  # fmt: skip
    doc = {"board": "mps2-an385", "unit": "instructions", "cpu_hz": 4000000,
           "runs": [vars(t), vars(a)]}
    text = seed003.text_table(doc)
    assert ("50.0 % fewer involuntary switches (0.0 % fewer out of the sensing thread, 100.0 % fewer out "
            "of the neighbours' threads), mean processing time +0.0 %") in text
