"""terntools.itrace: cutting an instruction trace into sample windows, and
reading QEMU's exec log lines."""
from __future__ import annotations

from terntools import itrace


def test_windows_run_from_start_entry_to_end_entry() -> None:
    start, end = 0x100, 0x200
    pcs = [1, start, 2, 3, end, 4, start, 5, end, start, 6]  # the last window never closes
    assert itrace.windows(pcs, start, end) == [[start, 2, 3], [start, 5]]


def test_windows_of_one_symbol_are_its_periods() -> None:
    a = 0x100
    pcs = [a, 1, 2, a, 3, a]
    assert itrace.windows(pcs, a, a) == [[a, 1, 2], [a, 3]]


def test_trace_line_gives_the_guest_pc() -> None:
    line = b"Trace 0: 0x7f3a1c000100 [00000000/00001138/00000000/ff200000] cm_level_irq3"
    m = itrace.TRACE_LINE.match(line)
    assert m is not None and int(m.group(1), 16) == 0x1138
