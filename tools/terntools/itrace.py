"""Where the instructions of a microbenchmark go (issue 17): `tern bench itrace`.

Runs bench/micro's micro.elf for one benchmark under QEMU with one
instruction per translation block and the execution log on (``-singlestep
-d exec,nochain``), so every executed instruction is one log line with its
address. A sample's window runs from the entry of one handler of micro.c to
the entry of another (WINDOWS: the interrupt benchmark from the raising
handler `low` to the posted-to handler `high`, the round trip from one
entry of `task_a` to the next, the task timer from the deadline interrupt
to the TIMEOUT handler `timed`). Each instruction is charged to the
innermost function it was compiled from (addr2line -i: inlined steps such
as msg_make keep their own name), averaged over the samples after the
first WARMUP. Instructions on QEMU boards, as in `tern bench micro`; the
window starts at the handler's entry, not at the benchmark's counter read,
so micro.c's own share (its bucket) is a few instructions larger than what
the benchmark subtracts.
"""
from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from terntools import build, micro
from terntools.boards import Board
from terntools.errors import TernError, UsageError
from terntools.runner import qemu_command

# benchmark -> (symbol whose entry opens a window, symbol whose entry closes
# it, a symbol whose entry the window must pass, or None). The thread round
# trips sample with lap(), which micro.c's calibration also calls in a tight
# loop: only the laps around a yield or a semaphore take are the benchmark's.
WINDOWS: dict[str, tuple[str, str, str | None]] = {
    "irq_to_handler_preempt": ("low", "high", None),
    "msg_roundtrip": ("task_a", "task_a", None),
    "timer_delay": ("deadline_irq", "timed", None),
    "yield_roundtrip": ("lap", "lap", "tern_yield"),
    "sem_roundtrip": ("lap", "lap", "tern_sem_take"),
}
WARMUP = 3
TRACE_LINE = re.compile(rb"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/")


def _symbols(board: Board, elf: Path) -> dict[str, int]:
    """Function name (without an LTO suffix) -> address, Thumb bit cleared."""
    out = subprocess.run([f"{board.toolchain_prefix}nm", str(elf)], capture_output=True, text=True, check=True)
    syms: dict[str, int] = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].lower() == "t":
            syms.setdefault(parts[2].split(".")[0], int(parts[0], 16) & ~1)
    return syms


def _where(board: Board, elf: Path, pcs: list[int]) -> dict[int, str]:
    """pc -> 'function (file)' of the innermost function it was inlined from."""
    if not pcs:
        return {}
    proc = subprocess.run([f"{board.toolchain_prefix}addr2line", "-f", "-i", "-a", "-e", str(elf)],
                          input="\n".join(f"0x{pc:x}" for pc in pcs), capture_output=True, text=True, check=True)
    where: dict[int, str] = {}
    pc = -1
    lines = proc.stdout.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            pc = int(lines[i], 16)
            func, loc = lines[i + 1], lines[i + 2] if i + 2 < len(lines) else "?"
            where[pc] = f"{func.split('.')[0]} ({Path(loc.split(':')[0]).name})"
            i += 3
            while i < len(lines) and not lines[i].startswith("0x"):
                i += 1  # outer frames of an inlined function
        else:
            i += 1
    return where


def windows(pcs: list[int], start: int, end: int) -> list[list[int]]:
    """The address sequences from each entry of `start` to the next entry of `end`."""
    out: list[list[int]] = []
    cur: list[int] | None = None
    for pc in pcs:
        if cur is not None and pc == end:
            out.append(cur)
            cur = None
        if pc == start and cur is None:
            cur = []
        if cur is not None:
            cur.append(pc)
    return out


def trace(board: Board, model: str, bench: str, samples: int, root: Path | None = None) -> dict[str, Any]:
    """One model's breakdown of one benchmark: {"model", "benchmark", "samples", "total", "by": {where: avg}}."""
    if board.emulator != "qemu":
        raise UsageError(f"tern bench itrace runs QEMU boards only ({board.name} uses {board.emulator})")
    if bench not in WINDOWS:
        raise UsageError(f"no trace window for {bench} (have {', '.join(WINDOWS)})")
    if samples <= WARMUP:
        raise UsageError(f"--samples must be more than {WARMUP}")
    out = build.build(board.name, model, root, target="micro.elf")
    elf = out / "bench" / "micro" / "micro.elf"
    syms = _symbols(board, elf)
    start, end, via = WINDOWS[bench]
    needed = [start, end] + ([via] if via else [])
    if any(n not in syms for n in needed):
        raise TernError(f"{elf} lacks the window symbols {'/'.join(needed)}")
    with tempfile.TemporaryDirectory() as tmp:
        run_elf = Path(tmp) / "micro.elf"
        params = Path(tmp) / "params"
        params.write_bytes(struct.pack("<8I", samples, 1 << micro.TIMING_NAMES.index(bench), 0, 0, 0, 0, 0, 0))
        subprocess.run([f"{board.toolchain_prefix}objcopy", "--update-section",
                        f"{micro.PARAMS_SECTION}={params}", str(elf), str(run_elf)], check=True)
        log = Path(tmp) / "exec.log"
        cmd = qemu_command(board, run_elf) + ["-singlestep", "-d", "exec,nochain", "-D", str(log)]
        subprocess.run(cmd, capture_output=True, timeout=600, check=False)
        pcs = [int(m.group(1), 16) for line in log.read_bytes().splitlines() if (m := TRACE_LINE.match(line))]
    wins = windows(pcs, syms[start], syms[end])
    if via:
        wins = [w for w in wins if syms[via] in w]
    wins = wins[WARMUP:]
    if not wins:
        raise TernError(f"{model}/{bench}: no {start} -> {end} window in the trace")
    where = _where(board, elf, sorted({pc for w in wins for pc in w}))
    by: Counter[str] = Counter()
    for w in wins:
        by.update(where.get(pc, "?") for pc in w)
    n = len(wins)
    return {"model": model, "benchmark": bench, "samples": n, "total": sum(len(w) for w in wins) / n,
            "by": {k: v / n for k, v in by.most_common()}}


def markdown(board: Board, results: list[dict[str, Any]], command: str) -> str:
    lines = [
        "# Where the instructions go (issue 17)",
        "",
        "<!-- generated by `tern bench itrace`; do not edit by hand -->",
        "",
        f"Board **{board.name}**, unit **instructions** (QEMU -icount; one instruction per translation block, "
        "every executed instruction logged). Generated by",
        "",
        "```sh",
        command,
        "```",
        "",
        "Each window runs from the entry of one of bench/micro/micro.c's handlers to the entry of another "
        "(irq_to_handler_preempt: `low`, which raises the interrupt, to `high`; msg_roundtrip: `task_a` to "
        "`task_a`; timer_delay: the deadline interrupt to `timed`; yield_roundtrip and sem_roundtrip: one "
        "`lap` sample to the next, two switches). "
        "Instructions are charged to the innermost function they were compiled from, so steps inlined by "
        "link-time optimisation keep their names; micro.c's rows are the benchmark's own (its handler "
        "entry, counter reads, the interrupt's post call), the rest is the kernel and the port. "
        "Averages over the samples after the first few.",
        "",
    ]
    for r in results:
        lines += [f"## {r['benchmark']}, {r['model']}: {r['total']:.1f} instructions ({r['samples']} samples)",
                  "", "| where (function, file) | instructions |", "|---|--:|"]
        lines += [f"| {k} | {v:.1f} |" for k, v in r["by"].items() if v >= 0.05]
        lines.append("")
    return "\n".join(lines)
