"""tern profile: tern-simavr's --profile and --trace mapped to functions."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from terntools import avrprofile
from terntools.errors import UsageError

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")

SOURCE = """
__attribute__((noinline)) void leaf(void) { __asm__ volatile("nop\\n\\tnop"); }
__attribute__((noinline)) void middle(void) { leaf(); leaf(); }
int main(void) { for (;;) middle(); }
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("avr")
    (d / "p.c").write_text(SOURCE)
    out = d / "p.elf"
    subprocess.run(["avr-gcc", "-mmcu=atmega128", "-Os", "-o", str(out), str(d / "p.c")], check=True)
    return out


def addr(elf: Path, name: str) -> int:
    return next(s.address for s in avrprofile.functions(elf) if s.name == name)


def test_profile_sums_cycles_per_function(elf: Path, tmp_path: Path) -> None:
    leaf, middle = addr(elf, "leaf"), addr(elf, "middle")
    p = tmp_path / "p.txt"
    p.write_text(f"{leaf:#07x} 5\n{leaf + 2:#07x} 7\n{middle:#07x} 3\n")
    counts = avrprofile.profile_by_function(elf, p)
    assert counts == {"leaf": 12, "middle": 3}


def test_trace_window_splits_one_path_by_function(elf: Path, tmp_path: Path) -> None:
    leaf, middle, main = addr(elf, "leaf"), addr(elf, "middle"), addr(elf, "main")
    # main -> middle -> leaf -> middle -> leaf, twice; the second path is longer
    steps = [(0, main), (2, middle), (5, leaf), (9, middle), (10, leaf), (20, main),
             (21, middle), (30, leaf), (40, main)]
    t = tmp_path / "t.txt"
    t.write_text("".join(f"{c} {a:#07x}\n" for c, a in steps))
    last = avrprofile.trace_window(elf, t, "middle", "main")
    assert (last.start_cycle, last.end_cycle, last.cycles) == (21, 40, 19)
    assert last.functions == [("middle", 9), ("leaf", 10)]
    # the first path starts at middle's latest entry before main (cycle 9)
    first = avrprofile.trace_window(elf, t, "middle", "main", occurrence=0)
    assert first.functions == [("middle", 1), ("leaf", 10)]
    assert sum(c for _, c in first.functions) == first.cycles == 11


def test_bad_input_is_a_usage_error(elf: Path, tmp_path: Path) -> None:
    t = tmp_path / "t.txt"
    t.write_text("0 0x00000\n")
    with pytest.raises(UsageError, match="no function 'nosuch'"):
        avrprofile.trace_window(elf, t, "nosuch", "main")
    with pytest.raises(UsageError, match="no path from leaf to main"):
        avrprofile.trace_window(elf, t, "leaf", "main")
    t.write_text("garbage\n")
    with pytest.raises(UsageError, match="not a tern-simavr --trace line"):
        avrprofile.trace_window(elf, t, "leaf", "main")
