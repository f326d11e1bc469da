"""The precision of processor time sync (docs/multiprocessor.md, "Time sync"),
from a tern-sim run of apps/psync: every processor raises a pin at the same
global instant once a second; the logic analyser's rising edges, one per
processor per second, give each processor's offset from the reference (the
sync master) in simulated time. A processor without an edge within
MATCH_WINDOW_PS of the reference's is counted missing, never skipped.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from terntools.errors import TernError

MATCH_WINDOW_PS = 1_000_000_000  # 1 ms: far beyond any sync error, far under the 1 s between pulses
PS_PER_US = 1_000_000


@dataclass(frozen=True)
class Second:
    t_s: float  # the reference's edge, simulated seconds
    offsets_us: dict[str, float]  # processor -> its edge minus the reference's, simulated us
    missing: tuple[str, ...]  # processors without an edge within MATCH_WINDOW_PS

    @property
    def max_abs_us(self) -> float:
        return max((abs(v) for v in self.offsets_us.values()), default=0.0)

    @property
    def spread_us(self) -> float:
        """Latest minus earliest edge, the reference included."""
        values = [0.0, *self.offsets_us.values()]
        return max(values) - min(values)


@dataclass(frozen=True)
class Precision:
    reference: str
    label: str
    seconds: tuple[Second, ...]

    @property
    def max_abs_us(self) -> float:
        return max((s.max_abs_us for s in self.seconds), default=0.0)

    @property
    def max_spread_us(self) -> float:
        return max((s.spread_us for s in self.seconds), default=0.0)

    @property
    def missing(self) -> int:
        return sum(len(s.missing) for s in self.seconds)

    def percentile_max_abs_us(self, q: float) -> float:
        """The q-quantile (0..1, nearest rank) of the per-second max |offset|."""
        values = sorted(s.max_abs_us for s in self.seconds)
        if not values:
            return 0.0
        return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]

    @property
    def mean_offset_us(self) -> float:
        values = [v for s in self.seconds for v in s.offsets_us.values()]
        return sum(values) / len(values) if values else 0.0


def rising_edges(events: Path, label: str) -> dict[str, list[int]]:
    """Each node's rising edges of the pin `label`, in ps, in order."""
    edges: dict[str, list[int]] = {}
    with events.open() as f:
        for line in f:
            e = json.loads(line)
            if e.get("event") == "pin" and e.get("label") == label and e.get("value") == 1:
                edges.setdefault(str(e["node"]), []).append(int(e["t_ps"]))
    return edges


def precision(edges: dict[str, list[int]], reference: str, label: str = "pulse") -> Precision:
    if reference not in edges:
        raise TernError(f"no rising edge of pin {label!r} on the reference {reference!r} "
                        f"(nodes with edges: {', '.join(sorted(edges)) or 'none'})")  # fmt: skip
    others = sorted(n for n in edges if n != reference)
    seconds = []
    for t in edges[reference]:
        offsets: dict[str, float] = {}
        missing = []
        for n in others:
            near = [e for e in edges[n] if abs(e - t) <= MATCH_WINDOW_PS]
            if near:
                offsets[n] = (min(near, key=lambda e: abs(e - t)) - t) / PS_PER_US
            else:
                missing.append(n)
        seconds.append(Second(t / 1e12, offsets, tuple(missing)))
    return Precision(reference, label, tuple(seconds))


def of_run(run: Path, reference: str, label: str = "pulse") -> Precision:
    events = run / "events.jsonl"
    if not events.is_file():
        raise TernError(f"{events}: no such file (a `tern sim --out {run}` run directory?)")
    return precision(rising_edges(events, label), reference, label)


def to_json(p: Precision) -> dict[str, Any]:
    return {
        "unit": "simulated us",
        "reference": p.reference,
        "label": p.label,
        "max_abs_us": p.max_abs_us,
        "max_spread_us": p.max_spread_us,
        "median_max_abs_us": p.percentile_max_abs_us(0.5),
        "p95_max_abs_us": p.percentile_max_abs_us(0.95),
        "mean_offset_us": p.mean_offset_us,
        "missing": p.missing,
        "seconds": [{**asdict(s), "max_abs_us": s.max_abs_us, "spread_us": s.spread_us} for s in p.seconds],
    }


def text_table(p: Precision) -> str:
    names = sorted({n for s in p.seconds for n in s.offsets_us} | {n for s in p.seconds for n in s.missing})
    head = ["t [s]", *(f"{n} [us]" for n in names), "max|off| [us]", "spread [us]"]
    rows = [head]
    for s in p.seconds:
        cells = [f"{s.offsets_us[n]:+.3f}" if n in s.offsets_us else "missing" for n in names]
        rows.append([f"{s.t_s:.6f}", *cells, f"{s.max_abs_us:.3f}", f"{s.spread_us:.3f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    lines.append(f"offsets from {p.reference}'s edge of pin {p.label!r} (simulated us): "
                 f"max |offset| {p.max_abs_us:.3f}, max spread {p.max_spread_us:.3f}, "
                 f"{len(p.seconds)} seconds, {p.missing} missing")  # fmt: skip
    lines.append(f"per-second max |offset|: median {p.percentile_max_abs_us(0.5):.3f}, "
                 f"95th percentile {p.percentile_max_abs_us(0.95):.3f}, max {p.max_abs_us:.3f}; "
                 f"mean offset {p.mean_offset_us:+.3f}")  # fmt: skip
    return "\n".join(lines) + "\n"
