"""tools/terntools/psync.py: matching each processor's pulse edge to the reference's."""
from __future__ import annotations

from terntools import psync


def test_without_matching_edges_a_processor_is_missing_not_skipped() -> None:
    edges = {"master": [1_000_000_000_000, 2_000_000_000_000], "a": [1_000_000_500_000],
             "b": [1_000_001_000_000, 2_000_002_000_000]}  # fmt: skip
    p = psync.precision(edges, "master")
    assert p.seconds[0].offsets_us == {"a": 0.5, "b": 1.0} and p.seconds[1].missing == ("a",)
    assert p.missing == 1 and p.max_abs_us == 2.0
    assert p.percentile_max_abs_us(0.5) == 1.0 and p.percentile_max_abs_us(0.95) == 2.0
    assert p.mean_offset_us == 3.5 / 3
