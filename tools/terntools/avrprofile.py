"""Cycles by function from tern-simavr's --profile and --trace outputs.

--profile FILE: "0x<byte address> <cycles>" per instruction address, summed
over a run. --trace FILE: "<cycle> 0x<byte address>" per instruction as it
starts. Both are mapped to the functions of the ELF (avr-nm -n -S): a whole
run by function (`profile_by_function`), or one event's path, from an entry
into one function to the next entry into another (`trace_window`), in the
order its functions first ran.
"""

from __future__ import annotations

import bisect
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

NM = "avr-nm"


@dataclass(frozen=True)
class Symbol:
    address: int
    size: int
    name: str


@dataclass(frozen=True)
class Window:
    start_cycle: int
    end_cycle: int
    functions: list[tuple[str, int]]  # (function, cycles), in first-run order

    @property
    def cycles(self) -> int:
        return self.end_cycle - self.start_cycle


def functions(elf: Path) -> list[Symbol]:
    """The code symbols of elf, by address."""
    out = subprocess.run([NM, "-n", "-S", str(elf)], capture_output=True, text=True)
    if out.returncode != 0:
        raise UsageError(f"{NM} {elf}: {out.stderr.strip()}")
    syms = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            syms.append(Symbol(int(parts[0], 16), int(parts[1], 16), parts[3]))
    return syms


class _Namer:
    def __init__(self, syms: list[Symbol]) -> None:
        self.syms = syms
        self.addresses = [s.address for s in syms]

    def __call__(self, address: int) -> str:
        i = bisect.bisect_right(self.addresses, address) - 1
        if i >= 0 and address < self.syms[i].address + max(self.syms[i].size, 2):
            return self.syms[i].name
        return f"?{address:#x}"


def _pairs(path: Path, what: str) -> list[tuple[str, str]]:
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split()
        if len(parts) != 2:
            raise UsageError(f"{path}:{n}: not a tern-simavr {what} line: {line!r}")
        rows.append((parts[0], parts[1]))
    return rows


def profile_by_function(elf: Path, profile: Path) -> Counter[str]:
    """Cycles per function of a --profile file."""
    name = _Namer(functions(elf))
    out: Counter[str] = Counter()
    for address, cycles in _pairs(profile, "--profile"):
        out[name(int(address, 16))] += int(cycles)
    return out


def profile_by_source(elf: Path, profile: Path) -> Counter[tuple[str, str]]:
    """Cycles per (source, function) of a --profile file; the source is the
    object file whose code the link map (<elf>.map) puts there, as
    sizes.object_name names it ("(none)" where no input section is)."""
    from .sizes import object_name, parse_map

    map_file = elf.with_suffix(".map")
    try:
        text = map_file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {map_file} (the link map of {elf}): {exc.strerror}") from None
    code = sorted((s.address, s.size, object_name(s.path)) for s in parse_map(text)
                  if s.size and s.output.startswith((".text", ".vectors", ".init", ".fini")))
    starts = [c[0] for c in code]
    name = _Namer(functions(elf))
    out: Counter[tuple[str, str]] = Counter()
    for address, cycles in _pairs(profile, "--profile"):
        a = int(address, 16)
        i = bisect.bisect_right(starts, a) - 1
        source = code[i][2] if i >= 0 and a < code[i][0] + code[i][1] else "(none)"
        out[(source, name(a))] += int(cycles)
    return out


def trace_window(elf: Path, trace: Path, start: str, end: str, occurrence: int = -1) -> Window:
    """The path from an entry into function `start` to the next entry into
    `end`, starting at `start`'s latest entry before it; `occurrence` picks
    one of them (Python indexing: -1 is the last)."""
    syms = functions(elf)
    by_name = {s.name: s.address for s in syms}
    for fn in (start, end):
        if fn not in by_name:
            raise UsageError(f"{elf} has no function {fn!r}")
    steps = [(int(c), int(a, 16)) for c, a in _pairs(trace, "--trace")]
    windows = []
    begin = None
    for i, (_, address) in enumerate(steps):
        if address == by_name[start]:
            begin = i
        elif address == by_name[end] and begin is not None:
            windows.append((begin, i))
            begin = None
    if not windows:
        raise UsageError(f"{trace}: no path from {start} to {end}")
    try:
        first, last = windows[occurrence]
    except IndexError:
        raise UsageError(f"{trace}: {len(windows)} paths from {start} to {end}, no occurrence {occurrence}") from None
    name = _Namer(syms)
    spent: dict[str, int] = {}
    for k in range(first, last):
        fn = name(steps[k][1])
        spent[fn] = spent.get(fn, 0) + steps[k + 1][0] - steps[k][0]
    return Window(steps[first][0], steps[last][0], list(spent.items()))


def format_counts(rows: list[tuple[str, int]], total: int | None = None) -> str:
    lines = [f"{cycles:10d}  {fn}" for fn, cycles in rows]
    if total is not None:
        lines.append(f"{total:10d}  total")
    return "\n".join(lines) + "\n"
