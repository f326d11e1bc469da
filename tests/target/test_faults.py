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


def test_a_main_stack_overflow_hits_the_mpu_guard(board_model: tuple[str, str]) -> None:
    """Cortex-M's main stack (shared by every handler under fifo, priority,
    stack, hybrid) sits at the bottom of RAM with an MPU guard below it
    (arch/cortex-m/startup.c). A handler recursing through all of it is
    stopped at its first write into the guard, named with the stack's size
    and the depth; without the guard it ran on below RAM and the fault
    report read a garbage frame (a UsageFault at PC 0)."""
    board, model = board_model
    if ARCH[board] != "cortex-m" or model in ("threads", "adaptive"):
        pytest.skip("the main stack's MPU guard is Cortex-M's (thread models: test_threads.py)")
    r = run(board, model, "main_overflow")
    assert r.status == 4, r.out
    assert "main_overflow: digging, 4096 bytes of stack" in r.lines, r.out
    m = re.search(r"^tern: stack overflow in the shared stack: its 32-byte MPU guard at ([0-9a-f]{8}) was "
                  r"written at ([0-9a-f]{8}) \((\d+) of 4096 bytes used\)$", r.out, re.M)
    assert m, r.out
    guard, at, used = int(m[1], 16), int(m[2], 16), int(m[3])
    # the first write into the guard, or just below it where a frame larger
    # than the guard jumped it and the board traps there (lm3s6965evb)
    assert guard - 256 <= at < guard + 32 and used == guard + 4096 - at, r.out
    assert "survived" not in r.out and "FAULT" not in r.out
