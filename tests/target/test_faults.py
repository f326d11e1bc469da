"""The fault-injection rows of docs/reliability.md on every board and model:
a refused send names its reason, moves exactly that counter and leaves a heap
payload with its sender; an exhausted heap is one counted failure and comes
back whole; an exhausted message pool refuses with TERN_EFULL, counts it, and
delivers every message it accepted. The app is tests/target/apps/faults."""
from __future__ import annotations

import re

import pytest

from conftest import ARCH, run


def test_faults_are_named_counted_and_lose_nothing(board_model: tuple[str, str]) -> None:
    board, model = board_model
    r = run(board, model, "faults")
    assert r.status == 0, r.out
    assert "faults: missing task=TERN_ENOTASK+1 port=TERN_ENOPORT+1 route=TERN_ENOROUTE+1 payload=kept" in r.lines, r.out
    assert "faults: heap exhausted failures=+1 returned=whole" in r.lines, r.out
    pool = re.search(r"^faults: pool accepted=(\d+) refused=TERN_EFULL\+1$", r.out, re.M)
    assert pool, r.out
    accepted = int(pool.group(1))
    assert accepted > 0
    # Every accepted message reached the sink, and the pool took a new one.
    assert f"faults: pool delivered={accepted} after=TERN_OK" in r.lines, r.out
    assert r.lines.index("faults: done") > r.lines.index(f"faults: pool delivered={accepted} after=TERN_OK")


def test_a_shared_stack_overflow_is_named(board_model: tuple[str, str]) -> None:
    """The AVR's one shared stack (fifo, priority, stack, hybrid) has no MPU:
    its guard above .bss, checked when the kernel goes idle, turns an
    overflow into a named stop instead of .bss silently rewritten."""
    board, model = board_model
    if ARCH[board] != "avr" or model in ("threads", "adaptive"):
        pytest.skip("the shared stack's guard is the AVR's (thread models: test_threads.py)")
    r = run(board, model, "shared_overflow")
    assert r.status == 4, r.out
    assert "shared_overflow: back from the deep" in r.lines, r.out
    assert re.search(r"^tern: stack overflow in the shared stack: its 8-byte guard above \.bss was written "
                     r"\((\d+) of (\d+) bytes used\)$", r.out, re.M), r.out
