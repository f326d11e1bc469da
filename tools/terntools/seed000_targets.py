"""Issue 17's targets for seed 000 on the ATmega128: each one measured,
marked met or missed, and a miss set against a measured floor.

Two sources. The seed-000 runs of the sweep (E_t at n = 1, I_o at n = 8,
l_s = 75 ms) and what `measure()` adds to the sweep's JSON as "issue17":
the interrupt-to-handler latency of apps/ordering (`L idle`, stack and
fifo), the flash and RAM of bench/seed000's seed000_bare.elf, and the
floors of bench/floor/avr_floor.c, the same interrupt path with no kernel
(44 cycles) and with each kernel part in its most minimal C
(-DFLOOR_PARTS=1: 320 to the handler, and the whole event until the idle
loop runs again, the least one job can cost besides its work). The floor
of E_t is l_p plus the floor's path from the post's clock stamp to the
handler (`tern profile --trace --from clock_read --to task_handler.isra.0`
of the FLOOR_PARTS build); the floor of I_o is the floor's whole event
times the run's jobs, over the run's cycles. The floor of seed000_bare's
flash and RAM is bench/floor/seed000_floor.c: the same node (parameter
block, the same Poisson draw, three deadlines on Timer1, jobs of the same
lengths, drops counted, sleep, exit) with no kernel, measured with
`avr-size` as `tern size` measures the image.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terntools import avrprofile, build, sizes
from terntools.boards import Board
from terntools.errors import TernError
from terntools.metrics import L_P_CYCLES
from terntools.paths import simavr_harness
from terntools.runner import run_image

MODELS = ("stack", "fifo")  # the models issue 17's latency and footprint targets name
FLOOR_SOURCE = "bench/floor/avr_floor.c"
FOOTPRINT_FLOOR_SOURCE = "bench/floor/seed000_floor.c"
FOOTPRINT_FLOOR_REPORT = re.compile(r"^FLOOR seed000 arrivals=(\d+) jobs=(\d+) sensing=(\d+) dropped=(\d+)$", re.M)
FLOOR_LINE = re.compile(r"^FLOOR (parts )?(irq_to_handler_idle|event) min=(\d+) avg=(\d+) max=(\d+)$", re.M)
ORDERING_LINE = re.compile(r"^L idle=(\d+) preempt=(\d+)$", re.M)
STAMP_FROM, STAMP_TO = "clock_read", "task_handler.isra.0"  # avr_floor.c's functions (avr-gcc's names)

# issue 17's target table (ATmega128; µs of the 4 MHz CPU, cycles, points, bytes)
E_T_MAX_US = 1050.0
E_T_SD_MAX_US = 20.0
FIFO_I_O_MAX = 3.0
STACK_OVER_FIFO = 0.5
THREADS_OVER_FIFO = 3.5
IRQ_MAX_CYCLES = 300
FLASH_MAX = 9000
RAM_MAX = 283


def _floor_build(root: Path, out: Path, parts: bool) -> Path:
    elf = out / ("avr_floor1.elf" if parts else "avr_floor.elf")
    build.avr_gcc(["-mmcu=atmega128", "-DF_CPU=4000000UL", "-Os", *(["-DFLOOR_PARTS=1"] if parts else []),
                   "-o", str(elf), f"-I{root / 'tools/simavr'}", f"-I{root / 'tests/harness/guests'}",
                   str(root / FLOOR_SOURCE)], FLOOR_SOURCE)  # fmt: skip
    return elf


def footprint_floor_build(root: Path, elf: Path, defines: tuple[str, ...] = ()) -> Path:
    """bench/floor/seed000_floor.c with arrivals.c as its header says; `defines` (e.g. FLOOR_REPORT=1) as -D."""
    build.avr_gcc(["-mmcu=atmega128", "-DF_CPU=4000000UL", "-Os", *(f"-D{d}" for d in defines), "-o", str(elf),
                   f"-I{root / 'tools/simavr'}", f"-I{root / 'bench/seed000'}", str(root / FOOTPRINT_FLOOR_SOURCE),
                   str(root / "bench/seed000/arrivals.c")], FOOTPRINT_FLOOR_SOURCE)  # fmt: skip
    return elf


def parse_footprint_floor(text: str) -> dict[str, int]:
    """seed000_floor's FLOOR_REPORT line as {"arrivals", "jobs", "sensing", "dropped"}."""
    m = FOOTPRINT_FLOOR_REPORT.search(text)
    if m is None:
        raise TernError(f"{FOOTPRINT_FLOOR_SOURCE} (FLOOR_REPORT=1) printed no 'FLOOR seed000' line")
    return dict(zip(("arrivals", "jobs", "sensing", "dropped"), (int(g) for g in m.groups())))


def measure_footprint_floor(board: Board, root: Path, timeout: float) -> dict[str, int]:
    """seed000_floor.elf's flash and static RAM (bytes), after a run that exits 0."""
    with tempfile.TemporaryDirectory(prefix="tern-floor-") as tmp:
        elf = footprint_floor_build(root, Path(tmp) / "seed000_floor.elf")
        result = run_image(board, elf, timeout)
        if result.status != 0:
            raise TernError(f"{elf.name} exited with status {result.status}")
        size = sizes.measure([elf], board)[0]
    return {"flash": size.flash, "ram": size.ram}


def parse_floor(text: str) -> dict[str, int]:
    """avr_floor's FLOOR lines as {"[parts_]irq_to_handler_idle" / "[parts_]event": min cycles}."""
    found = {f"{'parts_' if m[1] else ''}{m[2]}": int(m[3]) for m in FLOOR_LINE.finditer(text)}
    if not found:
        raise TernError(f"{FLOOR_SOURCE} printed no FLOOR line")
    return found


def parse_ordering(text: str) -> int:
    """apps/ordering's `L idle=` figure (ticks from the alarm's deadline to its handler)."""
    m = ORDERING_LINE.search(text)
    if m is None:
        raise TernError("apps/ordering printed no 'L idle=N preempt=N' line")
    return int(m[1])


def measure_floor(board: Board, root: Path, timeout: float) -> dict[str, int]:
    """The floors of avr_floor.c, both builds, and its stamp-to-handler path (cycles)."""
    out: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="tern-floor-") as tmp:
        for parts in (False, True):
            elf = _floor_build(root, Path(tmp), parts)
            result = run_image(board, elf, timeout)
            if result.status != 0:
                raise TernError(f"{elf.name} exited with status {result.status}")
            out.update(parse_floor(result.stdout.decode("utf-8", "replace")))
        trace = Path(tmp) / "floor1.trace"
        cmd = [str(simavr_harness(root)), "--trace", str(trace), str(Path(tmp) / "avr_floor1.elf")]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise TernError(f"tern-simavr --trace of avr_floor1.elf failed: {proc.stderr.strip()}")
        out["parts_stamp_to_handler"] = avrprofile.trace_window(Path(tmp) / "avr_floor1.elf", trace, STAMP_FROM,
                                                                STAMP_TO).cycles  # fmt: skip
    return out


def measure(board: Board, root: Path, commit: str, timeout: float = 120.0) -> dict[str, Any]:
    """The "issue17" block of the sweep's JSON: latency, footprint and floors, in cycles and bytes."""
    irq: dict[str, int] = {}
    bare: dict[str, dict[str, int]] = {}
    for model in MODELS:
        out = build.build(board.name, model, root, target="ordering.elf")
        elf = build.find_image(out, "ordering")
        if elf is None:
            raise TernError(f"the {board.name}/{model} build has no ordering.elf")
        result = run_image(board, elf, timeout)
        if result.status != 0:
            raise TernError(f"apps/ordering ({model}) exited with status {result.status}")
        irq[model] = int(board.ticks_to_cycles(parse_ordering(result.stdout.decode("utf-8", "replace"))))
        out = build.build(board.name, model, root, target="seed000_bare.elf")
        size = sizes.measure([out / "bench" / "seed000" / "seed000_bare.elf"], board)[0]
        bare[model] = {"flash": size.flash, "ram": size.ram}
    return {
        "commit": commit,
        "irq_to_handler_idle": irq,
        "seed000_bare": bare,
        "floor": measure_floor(board, root, timeout),
        "footprint_floor": measure_footprint_floor(board, root, timeout),
        "commands": [
            f"./tern run --board {board.name} --model M --app ordering (line 'L idle=')",
            f"./tern size --board {board.name} build/target/{board.name}/M/bench/seed000/seed000_bare.elf",
            f"avr-gcc [-DFLOOR_PARTS=1] {FLOOR_SOURCE} (its header), tools/simavr/build/tern-simavr ELF",
            f"tern-simavr --trace T avr_floor1.elf; ./tern profile avr_floor1.elf --trace T --from {STAMP_FROM} "
            f"--to {STAMP_TO}",
            f"avr-gcc {FOOTPRINT_FLOOR_SOURCE} bench/seed000/arrivals.c (its header); avr-size",
        ],
    }


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Row:
    what: str
    measured: str
    met: bool | None  # None: not measured here
    why: str  # the reason of a miss, with its floor; how a met target compares for a met one


def _run(doc: dict[str, Any], model: str, n: int, ls: int) -> dict[str, Any] | None:
    return next((r for r in doc["runs"] if (r["model"], r["n"], r["l_s_ms"]) == (model, n, ls)), None)


def _periods(run: dict[str, Any]) -> str:
    return f"{run['samples']} periods, {run.get('commit', 'commit not recorded')}"


def _cycles_per_job(run: dict[str, Any], cpu_hz: int) -> float:
    """The OS's time of a run over its jobs: I_o of the run's cycles, divided by the jobs."""
    return float(run["I_o"]) / 100 * float(run["T_s"]) * cpu_hz / int(run["jobs"])


def _i_o_floor(run: dict[str, Any], floor_event: int, cpu_hz: int) -> float:
    return 100 * floor_event * int(run["jobs"]) / (float(run["T_s"]) * cpu_hz)


def _job_cost(run: dict[str, Any], cpu_hz: int) -> str:
    return (f"I_o x T / jobs = {run['I_o']:.2f} % x {float(run['T_s']) * cpu_hz:,.0f} cycles / {run['jobs']:,} "
            f"= {_cycles_per_job(run, cpu_hz):,.0f} cycles a job")  # fmt: skip


def rows(doc: dict[str, Any]) -> list[Row]:
    """Every target of issue 17's ATmega128 table, against this document."""
    cpu_hz = int(doc["cpu_hz"])
    extra: dict[str, Any] = doc.get("issue17") or {}
    floor: dict[str, int] = extra.get("floor", {})
    event = floor.get("parts_event")
    out: list[Row] = []
    l_p_us = L_P_CYCLES * 1e6 / cpu_hz

    stack1 = _run(doc, "stack", 1, 75)
    if stack1 is None:
        out.append(Row(f"stack E_t, n = 1, l_s = 75 ms <= {E_T_MAX_US:,.0f} µs", "not run", None, ""))
    else:
        e_t, sd = float(stack1["E_t"]), float(stack1["E_t_sd"])
        above = (e_t - l_p_us) * cpu_hz / 1e6
        why = (f"{e_t * cpu_hz / 1e6:,.0f} cycles a job: {L_P_CYCLES:,} of work and {above:,.0f} of the kernel "
               "from the post's stamp through the dispatch to the handler's end")  # fmt: skip
        stamp = floor.get("parts_stamp_to_handler")
        if stamp is not None:
            floor_us = (L_P_CYCLES + stamp) * 1e6 / cpu_hz
            why += (f"; the floor's same path is {stamp} cycles, so E_t's floor is ({L_P_CYCLES:,} + {stamp}) / "
                    f"{cpu_hz / 1e6:g} = {floor_us:,.1f} µs: the target lies "
                    + ("above it, the miss is the kernel's " + f"{above - stamp:,.0f} cycles over the floor"
                       if floor_us <= E_T_MAX_US else "below it"))  # fmt: skip
        out.append(Row(f"stack E_t, n = 1, l_s = 75 ms <= {E_T_MAX_US:,.0f} µs ({_periods(stack1)})",
                       f"{e_t:,.1f} µs", e_t <= E_T_MAX_US, why))  # fmt: skip
        out.append(Row(f"stack σ(E_t), n = 1, l_s = 75 ms <= {E_T_SD_MAX_US:g} µs ({_periods(stack1)})", f"{sd:.1f} µs",
                       sd <= E_T_SD_MAX_US,
                       f"{stack1['jobs']} jobs from {stack1['E_t_min']:,.1f} to {stack1['E_t_max']:,.1f} µs"))

    fifo8 = _run(doc, "fifo", 8, 75)
    cases: list[tuple[str, str, Callable[[float], float]]] = [
        ("fifo", f"fifo I_o, n = 8, l_s = 75 ms <= {FIFO_I_O_MAX:g} points", lambda f: FIFO_I_O_MAX),
        ("stack", f"stack I_o, n = 8 <= fifo + {STACK_OVER_FIFO:g}", lambda f: f + STACK_OVER_FIFO),
        ("threads", f"threads I_o, n = 8, l_s = 75 ms <= fifo + {THREADS_OVER_FIFO:g}", lambda f: f + THREADS_OVER_FIFO),
    ]  # fmt: skip
    for model, what, bound_of in cases:
        run = _run(doc, model, 8, 75)
        if run is None or (model != "fifo" and fifo8 is None):
            out.append(Row(what, "not run", None, ""))
            continue
        bound = bound_of(float(fifo8["I_o"]) if fifo8 is not None else 0.0)
        i_o = float(run["I_o"])
        allowed = bound / 100 * float(run["T_s"]) * cpu_hz / run["jobs"]
        why = _job_cost(run, cpu_hz) + f"; the target allows {allowed:,.0f}"
        if event is not None:
            lowest = _i_o_floor(run, event, cpu_hz)
            why += (f"; floor: {event} cycles a job (the whole event, FLOOR_PARTS) x {run['jobs']:,} jobs / "
                    f"{float(run['T_s']) * cpu_hz:,.0f} cycles = {lowest:.2f} points"
                    + (", the target lies above it" if lowest <= bound else ", the target lies below it"))  # fmt: skip
        if model != "fifo" and fifo8 is not None:
            if fifo8["samples"] != run["samples"]:
                why += f"; fifo's run has {fifo8['samples']} periods, {model}'s {run['samples']}: not comparable"
            why += (f"; fifo ran {fifo8['jobs']:,} jobs and dropped {fifo8['dropped']}, {model} ran {run['jobs']:,} "
                    f"and dropped {run['dropped']}, with {run['ctx_switches']:,} context switches")  # fmt: skip
            more = int(run["jobs"]) - int(fifo8["jobs"])
            if more > 0:
                cost = _cycles_per_job(run, cpu_hz)
                cycles = float(run["T_s"]) * cpu_hz
                why += (f"; the {more:,} jobs fifo did not run cost {model} {more:,} x {cost:,.0f} / {cycles:,.0f} = "
                        f"{100 * more * cost / cycles:.2f} points")  # fmt: skip
        out.append(Row(f"{what} ({_periods(run)})", f"{i_o:.2f} points (bound {bound:.2f})", i_o <= bound, why))

    irq: dict[str, int] = extra.get("irq_to_handler_idle", {})
    for model in MODELS:
        what = f"interrupt to handler from idle (apps/ordering), {model} <= {IRQ_MAX_CYCLES} cycles"
        if model not in irq:
            out.append(Row(what, "not measured", None, ""))
            continue
        why = ""
        if "parts_irq_to_handler_idle" in floor:
            p = floor["parts_irq_to_handler_idle"]
            why = (f"floor: {floor.get('irq_to_handler_idle', '?')} cycles with no kernel, {p} with each kernel part "
                   f"in its most minimal C (FLOOR_PARTS): the target lies {'below' if p > IRQ_MAX_CYCLES else 'above'} "
                   f"it; the kernel is {irq[model] - p:,} over it")  # fmt: skip
        out.append(Row(what + f" ({extra.get('commit', '?')})", f"{irq[model]:,} cycles", irq[model] <= IRQ_MAX_CYCLES,
                       why))  # fmt: skip

    bare: dict[str, dict[str, int]] = extra.get("seed000_bare", {})
    least: dict[str, int] | None = extra.get("footprint_floor")
    for model in MODELS:
        what = f"seed000_bare flash <= {FLASH_MAX:,} B / RAM <= {RAM_MAX} B, {model}"
        if model not in bare:
            out.append(Row(what, "not measured", None, ""))
            continue
        flash, ram = bare[model]["flash"], bare[model]["ram"]
        parts = [f"flash {'met' if flash <= FLASH_MAX else f'over by {flash - FLASH_MAX:,} B'}",
                 f"RAM {'met' if ram <= RAM_MAX else f'over by {ram - RAM_MAX:,} B'}"]
        if least is None:
            parts.append("no floor measured")
        else:
            lf, lr = least["flash"], least["ram"]
            parts.append(f"floor: {lf:,} B / {lr:,} B, the same node with no kernel ({FOOTPRINT_FLOOR_SOURCE}): "
                         f"the flash target lies {'above' if lf <= FLASH_MAX else 'below'} it, the RAM target "
                         f"{'above' if lr <= RAM_MAX else 'below'} it; the kernel is {flash - lf:,} B / "
                         f"{ram - lr:,} B over it")  # fmt: skip
        parts.append("docs/seed000/footprint.md gives each part by object file and symbol")
        out.append(Row(what + f" ({extra.get('commit', '?')})", f"{flash:,} B / {ram:,} B",
                       flash <= FLASH_MAX and ram <= RAM_MAX, "; ".join(parts)))  # fmt: skip
    return out


def markdown(doc: dict[str, Any]) -> list[str]:
    """The "Targets (issue 17)" section of the report."""
    lines = ["## Targets (issue 17)", "",
             "Each target of issue 17's ATmega128 table; the seed-000 figures from the runs above, the rest from "
             "the JSON's `issue17` block (`tern bench seed000 --issue17`"
             + (f", commit {doc['issue17']['commit']}: " + "; ".join(f"`{c}`" for c in doc["issue17"]["commands"])
                if doc.get("issue17") else ", not run for this document")
             + "). A job's cost is the OS's whole time over the jobs (I_o of the run's cycles); its floor, "
               f"{FLOOR_SOURCE}'s event with every kernel part in minimal C, from the match until the idle loop "
               "runs again.",
             "", "| target | measured | | why |", "|---|---|---|---|"]  # fmt: skip
    verdict = {None: "n/a", True: "met", False: "**missed**"}
    lines += [f"| {r.what} | {r.measured} | {verdict[r.met]} | {r.why} |" for r in rows(doc)]
    return lines + [""]
