"""The board's clock against the CPU's work (bench/timebase): the tick rate
and tick/cycle ratio that board.c declares, that board.json tells the host
tools, and that the emulator actually runs must be one and the same."""
from __future__ import annotations

import re
from fractions import Fraction

import pytest

from conftest import ARCH, BOARDS, run

# arch/cortex-m/cortex_m.h: CM_WORK_OVERHEAD (4) plus the caller's
# argument set-up and bl (2).
CM_WORK_CALL = 6


def measure(board: str) -> tuple[re.Match[str], dict[int, int], tuple[int, int]]:
    r = run(board, "stack", "timebase")
    assert r.status == 0, r.out
    head = re.search(r"^TIMEBASE board=(\S+) clock_hz=(\d+) counter_bits=(\d+) "
                     r"cycles_per_tick=(\d+)/(\d+)$", r.out, re.M)
    assert head, r.out
    work = {int(n): int(t) for n, t in re.findall(r"^work (\d+): (\d+) ticks$", r.out, re.M)}
    calls = re.search(r"^calls (\d+) port_work\(0\): (\d+) ticks$", r.out, re.M)
    assert calls, r.out
    return head, work, (int(calls[1]), int(calls[2]))


def test_board_c_agrees_with_board_json(board: str) -> None:
    head, _, _ = measure(board)
    info = BOARDS[board]
    assert head[1] == board
    assert int(head[2]) == info.tick_hz
    assert 16 <= int(head[3]) <= 32
    assert Fraction(int(head[4]), int(head[5])) == info.cycles_per_tick


def test_work_takes_the_declared_number_of_ticks(board: str) -> None:
    _, work, _ = measure(board)
    cpt = BOARDS[board].cycles_per_tick
    assert sorted(work) == [1000, 10000, 40000]
    for n, ticks in work.items():
        # one tick of quantisation at each end of the measurement
        assert abs(ticks - n / cpt) <= 1, (n, ticks, float(n / cpt))


def test_qemu_clock_resolves_single_instructions(board: str) -> None:
    info = BOARDS[board]
    if info.emulator != "qemu":
        pytest.skip("only QEMU boards count instructions with a separate clock")
    assert info.cycles_per_tick <= 1


def test_port_work_call_costs_the_documented_overhead(board: str) -> None:
    _, _, (k, ticks) = measure(board)
    if ARCH[board] != "cortex-m":
        assert ticks > 0
        return
    instructions = ticks * BOARDS[board].cycles_per_tick
    assert abs(instructions - k * CM_WORK_CALL) <= 1, float(instructions)
