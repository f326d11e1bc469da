"""seed000_targets: issue 17's ATmega128 targets, each marked met or missed
against a small document made by hand, with the floor arithmetic of a miss."""
from __future__ import annotations

from typing import Any

import pytest

from terntools import seed000_targets as targets
from terntools.errors import TernError


def run(model: str, n: int, ls: int, **values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"model": model, "n": n, "l_s_ms": ls, "samples": 50, "commit": "abc", "jobs": 10_000,
                            "T_s": 50.0, "I_o": 4.0, "E_t": 1100.0, "E_t_sd": 10.0, "E_t_min": 1080.0,
                            "E_t_max": 1200.0, "dropped": 0, "ctx_switches": 0}  # fmt: skip
    return {**base, **values}


ISSUE17 = {"commit": "abc", "irq_to_handler_idle": {"stack": 290, "fifo": 1500},
           "seed000_bare": {"stack": {"flash": 9000, "ram": 283}, "fifo": {"flash": 9001, "ram": 100}},
           "floor": {"irq_to_handler_idle": 44, "parts_irq_to_handler_idle": 320, "parts_event": 400,
                     "parts_stamp_to_handler": 150}, "footprint_floor": {"flash": 3072, "ram": 300},
           "commands": ["./tern run ..."]}  # fmt: skip


def doc(*runs: dict[str, Any], issue17: dict[str, Any] | None = ISSUE17) -> dict[str, Any]:
    d: dict[str, Any] = {"board": "atmega128", "cpu_hz": 4_000_000, "runs": list(runs)}
    if issue17 is not None:
        d["issue17"] = issue17
    return d


def by_what(rows: list[targets.Row]) -> dict[str, targets.Row]:
    """The rows by their target, without the provenance each measured one ends with."""
    return {(r.what.rsplit(" (", 1)[0] if r.what.endswith(")") else r.what): r for r in rows}


def test_every_target_is_marked_with_its_arithmetic() -> None:
    rows = by_what(targets.rows(doc(
        run("stack", 1, 75, E_t=1037.5, E_t_sd=20.5), run("fifo", 8, 75, I_o=2.5),
        run("stack", 8, 75, I_o=3.0), run("threads", 8, 75, I_o=6.5, ctx_switches=20_000))))  # fmt: skip
    e_t = rows["stack E_t, n = 1, l_s = 75 ms <= 1,050 µs"]
    # 1037.5 us = 4,150 cycles: 150 above the work, the floor's path is 150: floor 1,037.5 us
    assert e_t.met is True and e_t.measured == "1,037.5 µs"
    assert "4,150 cycles a job: 4,000 of work and 150 of the kernel" in e_t.why
    assert "(4,000 + 150) / 4 = 1,037.5 µs: the target lies above it" in e_t.why
    assert rows["stack σ(E_t), n = 1, l_s = 75 ms <= 20 µs"].met is False
    fifo = rows["fifo I_o, n = 8, l_s = 75 ms <= 3 points"]
    # 2.5 % of 200,000,000 cycles over 10,000 jobs; 3 % allows 600; the floor 400 x 10,000 / 2e8 = 2 points
    assert fifo.met is True
    assert "= 500 cycles a job; the target allows 600" in fifo.why
    assert "400 cycles a job (the whole event, FLOOR_PARTS) x 10,000 jobs / 200,000,000 cycles = 2.00 points" in fifo.why
    stack = rows["stack I_o, n = 8 <= fifo + 0.5"]
    assert stack.met is True and stack.measured == "3.00 points (bound 3.00)"
    threads = rows["threads I_o, n = 8, l_s = 75 ms <= fifo + 3.5"]
    assert threads.met is False and "with 20,000 context switches" in threads.why
    irq = rows["interrupt to handler from idle (apps/ordering), stack <= 300 cycles"]
    assert irq.met is True
    irq = rows["interrupt to handler from idle (apps/ordering), fifo <= 300 cycles"]
    assert irq.met is False and "320 with each kernel part in its most minimal C" in irq.why
    assert "the target lies below it; the kernel is 1,180 over it" in irq.why
    assert rows["seed000_bare flash <= 9,000 B / RAM <= 283 B, stack"].met is True
    bare = rows["seed000_bare flash <= 9,000 B / RAM <= 283 B, fifo"]
    assert bare.met is False and bare.why.startswith("flash over by 1 B; RAM met")
    # the floor: flash 9,001 - 3,072, RAM 100 - 300 (a floor above the image's RAM is said as it is)
    assert ("floor: 3,072 B / 300 B, the same node with no kernel (bench/floor/seed000_floor.c): the flash target "
            "lies above it, the RAM target below it; the kernel is 5,929 B / -200 B over it") in bare.why  # fmt: skip


def test_what_was_not_run_is_not_marked() -> None:
    rows = targets.rows(doc(run("fifo", 8, 75, samples=10), run("stack", 8, 75), issue17=None))
    marks = {what: r.met for what, r in by_what(rows).items()}
    assert marks["stack E_t, n = 1, l_s = 75 ms <= 1,050 µs"] is None
    assert marks["threads I_o, n = 8, l_s = 75 ms <= fifo + 3.5"] is None
    assert marks["interrupt to handler from idle (apps/ordering), fifo <= 300 cycles"] is None
    # runs of different lengths are not set against each other without saying so
    stack = by_what(rows)["stack I_o, n = 8 <= fifo + 0.5"]
    assert "fifo's run has 10 periods, stack's 50: not comparable" in stack.why
    no_floor = {k: v for k, v in ISSUE17.items() if k != "footprint_floor"}
    bare = by_what(targets.rows(doc(issue17=no_floor)))["seed000_bare flash <= 9,000 B / RAM <= 283 B, stack"]
    assert "no floor measured" in bare.why
    text = "\n".join(targets.markdown(doc(issue17=None)))
    assert "not run for this document" in text and "| n/a |" in text


def test_parsers_name_what_is_missing() -> None:
    text = ("FLOOR parts irq_to_handler_idle min=320 avg=320 max=329\nFLOOR parts event min=400 avg=400 max=409\n"
            "FLOOR irq_to_handler_idle min=44 avg=44 max=44\n")  # fmt: skip
    assert targets.parse_floor(text) == {"parts_irq_to_handler_idle": 320, "parts_event": 400,
                                         "irq_to_handler_idle": 44}  # fmt: skip
    assert targets.parse_ordering("boot\nL idle=1345 preempt=2000\n") == 1345
    with pytest.raises(TernError, match="printed no FLOOR line"):
        targets.parse_floor("FLOOR nothing\n")
    with pytest.raises(TernError, match="no 'L idle=N preempt=N' line"):
        targets.parse_ordering("L idle=x\n")
    assert targets.parse_footprint_floor("FLOOR seed000 arrivals=759 jobs=726 sensing=3 dropped=33\n") == {
        "arrivals": 759, "jobs": 726, "sensing": 3, "dropped": 33}
    with pytest.raises(TernError, match="printed no 'FLOOR seed000' line"):
        targets.parse_footprint_floor("FLOOR seed000 arrivals=1\n")
