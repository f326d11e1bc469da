"""Kernel microbenchmarks (issue 7): `tern bench micro`.

Builds bench/micro for every model a board lists, runs micro.elf (one
``MICRO name=... min= avg= max=`` line per benchmark, in CPU cycles:
instructions on QEMU boards, cycles on AVR, measurement overhead already
subtracted by the guest) and measures the footprint of the kernel and of a
minimal application (bench/micro/micro_min.c) from its link map and ELF.

The result document is

    {"board", "unit", "count", "command",
     "results": [{"name", "model", "min", "avg", "max", "count", "unit", ...}]}

and docs/benchmarks.md is generated from it (markdown()).
"""
from __future__ import annotations

import json
import re
import struct
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from terntools import build, executor, sizes
from terntools.boards import Board
from terntools.errors import TernError, UsageError
from terntools.runner import run_image

# Runtime benchmarks in the order the guest runs them (bench/micro/micro.c).
TIMING_NAMES = [
    "alarm_delay",
    "timer_delay",
    "alarm_delay_load",
    "timer_delay_load",
    "irq_to_handler_preempt",
    "irq_to_handler_idle",
    "msg_roundtrip",
    "sem_roundtrip",
    "yield_roundtrip",
]
THREAD_ONLY = {"sem_roundtrip", "yield_roundtrip"}
THREAD_MODELS = {"threads", "adaptive"}
FOOTPRINT_NAMES = ["kernel_text", "kernel_data", "kernel_bss", "min_app_text", "min_app_data", "min_app_bss"]
ALL_NAMES = TIMING_NAMES + FOOTPRINT_NAMES

DEFAULT_COUNT = 10000
DEFAULT_TIMEOUT = 300.0
PARAMS_SECTION = ".tern_params"

# Sources that make up "the kernel" in the footprint: the portable kernel
# and the CPU's port, as linked into the minimal app (board drivers, the
# app and the C/gcc libraries are counted in min_app_* only).
KERNEL_DIRS = ("kernel", "arch")

# The issue's targets (mps2-an385, stack model, instructions).
TARGET_BOARD = "mps2-an385"
TARGETS: list[tuple[str, str, str, str]] = [
    # (name, field, rule text, check expression on the value(s))
    ("msg_roundtrip", "avg", "<= 385", "le385"),
    ("irq_to_handler_preempt", "avg", "<= 50", "le50"),
    ("timer_delay", "avg", "<= 60", "le60"),
    ("timer_delay_load", "max", "<= 2 x timer_delay max", "le2x"),
    ("kernel_text", "avg", "<= 2048 bytes", "le2048"),
]
# Issue 17's targets (mps2-an385, instructions): (model, name, field, rule
# text, limit, divisor). The thread models' targets are FreeRTOS's figures on
# the same board (-Os, port-optimised task selection): 187 from a pended
# interrupt to a notified task's first statement, 57 per taskYIELD switch
# (yield_roundtrip is two switches, hence the divisor).
ISSUE17_TARGETS: list[tuple[str, str, str, str, float, int]] = [
    ("stack", "irq_to_handler_preempt", "avg", "<= 60", 60, 1),
    ("stack", "msg_roundtrip", "avg", "<= 300", 300, 1),
    ("stack", "timer_delay", "avg", "<= 100", 100, 1),
    ("threads", "irq_to_handler_preempt", "avg", "<= 187 (FreeRTOS)", 187, 1),
    ("threads", "yield_roundtrip", "avg / 2 (one switch)", "<= 57 (FreeRTOS)", 57, 2),
]
REFERENCES = [
    ("FreeRTOS", "task-notification round trip", "770"),
    ("FreeRTOS", "semaphore round trip", "1264"),
    ("FreeRTOS", "yield", "61"),
    ("Zephyr 2.7", "semaphore round trip", "564"),
    ("Zephyr 2.7", "yield", "103"),
]

LINE = re.compile(
    r"^MICRO name=(?P<name>\w+) model=(?P<model>\w+) count=(?P<count>\d+) "
    r"min=(?P<min>[\d.]+) avg=(?P<avg>[\d.]+) max=(?P<max>[\d.]+) overhead=(?P<overhead>[\d.]+)\s*$"
)
END = re.compile(r"^MICRO end model=(\w+)")


class MicroError(TernError):
    """A benchmark run failed or printed something inconsistent."""


# --------------------------------------------------------------------------- guest output


def parse_output(text: str, model: str) -> list[dict[str, Any]]:
    """The MICRO lines of one run; errors name what is missing or wrong."""
    rows: list[dict[str, Any]] = []
    ended = False
    for line in text.splitlines():
        if END.match(line):
            ended = True
            continue
        m = LINE.match(line)
        if not m:
            if line.startswith("MICRO name="):
                raise MicroError(f"model {model}: malformed benchmark line: {line!r}")
            continue
        if m["model"] != model:
            raise MicroError(f"model {model}: the image reports model {m['model']}")
        rows.append(
            {
                "name": m["name"],
                "model": model,
                "min": float(m["min"]),
                "avg": float(m["avg"]),
                "max": float(m["max"]),
                "count": int(m["count"]),
                "overhead": float(m["overhead"]),
            }
        )
    if not ended:
        last = text.strip().splitlines()[-1:] or ["(no output)"]
        raise MicroError(f"model {model}: the run did not finish its benchmarks; last line: {last[0]!r}")
    return rows


def expected_names(model: str) -> list[str]:
    return [n for n in TIMING_NAMES if model in THREAD_MODELS or n not in THREAD_ONLY]


# --------------------------------------------------------------------------- footprint


def kernel_footprint(map_text: str) -> dict[str, int]:
    """Bytes of text/data/bss linked from kernel/ and arch/ objects."""
    totals = {"text": 0, "data": 0, "bss": 0}
    for s in sizes.parse_map(map_text):
        kind = sizes.classify(s.output)
        parts = Path(s.path).parts
        if kind and any(d in parts for d in KERNEL_DIRS) and "boards" not in parts:
            totals[kind] += s.size
    if not totals["text"]:
        raise MicroError("the map lists no kernel objects (kernel/, arch/)")
    return totals


def _tool(board: Board, name: str, *args: str) -> str:
    cmd = [f"{board.toolchain_prefix}{name}", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise TernError(f"{cmd[0]} is not installed or not on PATH") from None
    if proc.returncode != 0:
        raise MicroError(f"{' '.join(cmd[:2])} failed: {proc.stderr.strip()[-300:]}")
    return proc.stdout


NM_KIND = {"t": "text", "r": "text", "d": "data", "b": "bss"}


def kernel_footprint_lto(board: Board, elf: Path, objects: Sequence[Path], sources: Sequence[Path]) -> dict[str, int]:
    """Link-time-optimised images (AVR) merge every object into ltrans
    sections, so the map cannot attribute them: sum the sizes of the ELF's
    symbols that the kernel defines instead. A symbol is the kernel's when
    gcc-nm lists it as defined in a kernel/arch object, or (statics renamed
    name.lto_priv.N) when a kernel/arch source declares it static. Anonymous
    data such as string literals is not counted."""
    names: set[str] = set()
    for obj in objects:
        for line in _tool(board, "gcc-nm", "--defined-only", str(obj)).splitlines():
            parts = line.split()
            if len(parts) == 3:
                names.add(parts[2])
    static_text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sources)
    totals = {"text": 0, "data": 0, "bss": 0}
    for line in _tool(board, "nm", "-S", str(elf)).splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[2].lower() not in NM_KIND:
            continue
        base = parts[3].split(".")[0]
        if base in names or re.search(rf"^static\b[^;{{]*\b{re.escape(base)}\b", static_text, re.M):
            totals[NM_KIND[parts[2].lower()]] += int(parts[1], 16)
    if not totals["text"]:
        raise MicroError(f"{elf}: no kernel symbols found")
    return totals


def _source_dir(build_root: Path) -> Path:
    cache = build_root / "CMakeCache.txt"
    for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            return Path(line.split("=", 1)[1])
    raise MicroError(f"{cache} names no source directory")


def footprint_rows(board: Board, model: str, min_elf: Path) -> list[dict[str, Any]]:
    map_file = min_elf.with_suffix(".map")
    try:
        map_text = map_file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MicroError(f"cannot read {map_file}: {exc.strerror}") from None
    if ".ltrans" in map_text:
        objdir = min_elf.parent / "CMakeFiles" / f"{min_elf.name}.dir"
        objects = [o for d in KERNEL_DIRS for o in sorted(objdir.glob(f"**/{d}/**/*.obj"))]
        root = min_elf.parents[2]  # the build tree of bench/micro/micro_min.elf
        src_root = _source_dir(root)
        sources = [src_root / o.relative_to(objdir).as_posix().replace("__/", "").removesuffix(".obj")
                   for o in objects]  # fmt: skip
        kernel = kernel_footprint_lto(board, min_elf, objects, [s for s in sources if s.is_file()])
    else:
        kernel = kernel_footprint(map_text)
    app = sizes.measure([min_elf], board)[0]
    values = {
        "kernel_text": kernel["text"],
        "kernel_data": kernel["data"],
        "kernel_bss": kernel["bss"],
        "min_app_text": app.text,
        "min_app_data": app.data,
        "min_app_bss": app.bss,
    }
    return [
        {"name": n, "model": model, "min": v, "avg": v, "max": v, "count": 1, "unit": "bytes"}
        for n, v in values.items()
    ]


# --------------------------------------------------------------------------- running


def params_blob(count: int) -> bytes:
    """.tern_params of micro.elf: [samples per benchmark, benchmark mask (0 = all)]."""
    if not 0 < count < 1 << 32:
        raise UsageError(f"--count {count} must be between 1 and 2^32-1")
    return struct.pack("<8I", count, 0, 0, 0, 0, 0, 0, 0)


def patch_image(board: Board, src: Path, dst: Path, count: int) -> None:
    objcopy = f"{board.toolchain_prefix}objcopy"
    params = dst.with_suffix(".params")
    params.write_bytes(params_blob(count))
    cmd = [objcopy, "--update-section", f"{PARAMS_SECTION}={params}", str(src), str(dst)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise TernError(f"{objcopy} is not installed or not on PATH") from None
    if proc.returncode != 0:
        why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
        raise MicroError(f"patching {PARAMS_SECTION} of {src} failed: {why}")


# How the kernel refuses an app whose thread stacks its RAM cannot hold
# (kernel/thread.c): the benchmark does not fit the board under that model.
NO_ROOM = "tern: no room for the "


class DoesNotFit(MicroError):
    """The kernel refused micro.elf for lack of memory under one model."""

    def __init__(self, model: str, reason: str) -> None:
        super().__init__(f"model {model}: {reason}")
        self.model = model
        self.reason = reason


def run_model(board: Board, model: str, count: int, timeout: float, root: Path | None, do_build: bool) -> list[dict[str, Any]]:
    """Build (optionally) and run one model; its result rows."""
    out = build.build(board.name, model, root) if do_build else build.build_dir(board.name, model, root)
    elf = out / "bench" / "micro" / "micro.elf"
    min_elf = out / "bench" / "micro" / "micro_min.elf"
    for f in (elf, min_elf):
        if not f.is_file():
            raise MicroError(f"{f} is not built (run without --no-build)")
    run_elf = elf.with_name(f"micro-{count}.elf")
    patch_image(board, elf, run_elf, count)
    result = run_image(board, run_elf, timeout)
    text = result.stdout.decode("utf-8", "replace")
    no_room = [ln for ln in text.splitlines() if ln.startswith(NO_ROOM)]
    if result.status != 0 and no_room:
        raise DoesNotFit(model, no_room[0].removeprefix("tern: "))
    if result.status != 0:
        tail = "\n".join(text.strip().splitlines()[-3:])
        why = result.note or f"exit status {result.status}"
        raise MicroError(f"model {model}: micro.elf failed ({why}):\n{tail}")
    rows = parse_output(text, model)
    for r in rows:
        r["unit"] = board.unit
    got = [r["name"] for r in rows]
    if got != expected_names(model):
        raise MicroError(f"model {model}: benchmarks {got}, expected {expected_names(model)}")
    short = [r["name"] for r in rows if r["count"] != count]
    if short:
        raise MicroError(f"model {model}: {', '.join(short)} took a sample count other than {count}")
    return rows + footprint_rows(board, model, min_elf)


@dataclass(frozen=True)
class ModelJob:
    """One model's run, as it travels to a Dask worker (picklable)."""

    board: Board
    model: str
    count: int
    timeout: float
    root: Path | None


def run_job(job: ModelJob) -> tuple[list[dict[str, Any]], str | None]:
    """run_model() of an already built model: (rows, None), or ([], why) when it does not fit.

    DoesNotFit is returned rather than raised: it would not survive the trip
    back from a Dask worker (its constructor takes two arguments).
    """
    try:
        return run_model(job.board, job.model, job.count, job.timeout, job.root, do_build=False), None
    except DoesNotFit as exc:
        return [], exc.reason


def run_board(
    board: Board,
    models: Sequence[str] | None = None,
    count: int = DEFAULT_COUNT,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    root: Path | None = None,
    do_build: bool = True,
    command: str = "",
    progress: Callable[[str], None] | None = None,
    scheduler: str | None = None,
) -> dict[str, Any]:
    """Every model (default: all the board lists); the result document.

    The models run on `jobs` local Dask workers or on the cluster at
    `scheduler` (terntools.executor); the builds run here, one at a time.
    """
    listed = list(board.models) if board.models else ["stack"]
    models = list(models) if models else listed
    unknown = [m for m in models if m not in listed]
    if unknown:
        raise UsageError(f"board {board.name} does not list model(s) {', '.join(unknown)} (it has {', '.join(listed)})")
    if do_build:  # one model at a time: cmake configures are cheap, parallel ninja is not
        for m in models:
            if progress:
                progress(f"building {board.name}/{m}")
            build.build(board.name, m, root)

    def done(index: int, outcome: tuple[list[dict[str, Any]], str | None]) -> None:
        if progress:
            why = outcome[1]
            progress(f"{board.name}/{models[index]} does not fit: {why}" if why is not None
                     else f"ran {board.name}/{models[index]}")  # fmt: skip

    outcomes = executor.map_jobs(run_job, [ModelJob(board, m, count, timeout, root) for m in models],
                                 workers=jobs, scheduler=scheduler, on_done=done)  # fmt: skip
    per_model = [rows for rows, _ in outcomes]
    not_run = {m: why for m, (_, why) in zip(models, outcomes) if why is not None}
    results = [r for rows in per_model for r in rows]
    doc = {
        "board": board.name,
        "unit": board.unit,
        "count": count,
        "command": command,
        "models": [m for m in models if m not in not_run],
        "not_run": {m: not_run[m] for m in models if m in not_run},
        "results": results,
    }
    problems = check(doc)
    if problems:
        raise MicroError("inconsistent results: " + "; ".join(problems))
    return doc


def check(doc: dict[str, Any]) -> list[str]:
    """What is wrong with a result document (empty when consistent)."""
    problems = []
    for key in ("board", "unit", "results"):
        if key not in doc:
            problems.append(f"missing key {key!r}")
    if problems:
        return problems
    by_model: dict[str, set[str]] = {}
    for r in doc["results"]:
        for key in ("name", "model", "min", "avg", "max"):
            if key not in r:
                problems.append(f"a result lacks {key!r}: {r}")
                break
        else:
            by_model.setdefault(r["model"], set()).add(r["name"])
            if not r["min"] <= r["avg"] <= r["max"]:
                problems.append(f"{r['model']} {r['name']}: not min <= avg <= max ({r['min']}, {r['avg']}, {r['max']})")
    for model, names in by_model.items():
        missing = [n for n in expected_names(model) + FOOTPRINT_NAMES if n not in names]
        if missing:
            problems.append(f"model {model}: no {', '.join(missing)}")
    return problems


def load(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    problems = check(doc) if isinstance(doc, dict) else ["not a JSON object"]
    if problems:
        raise UsageError(f"{path}: not a micro result ({'; '.join(problems)})")
    return cast(dict[str, Any], doc)


# --------------------------------------------------------------------------- reports


def _index(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["model"], r["name"]): r for r in doc["results"]}


def _models(doc: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    for r in doc["results"]:
        if r["model"] not in seen:
            seen.append(r["model"])
    return seen


def _num(v: float) -> str:
    return f"{v:.1f}" if v != int(v) else f"{int(v)}"


def text_table(doc: dict[str, Any]) -> str:
    """min / avg / max per benchmark and model, for the terminal."""
    idx, models = _index(doc), _models(doc)
    header = ["benchmark"] + models
    rows = [header]
    for name in ALL_NAMES:
        cells = [name]
        for m in models:
            r = idx.get((m, name))
            if r is None:
                cells.append("-")
            elif r.get("unit") == "bytes":
                cells.append(f"{int(r['avg'])} B")
            else:
                cells.append(f"{_num(r['min'])}/{_num(r['avg'])}/{_num(r['max'])}")
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"board {doc['board']}, {doc['unit']} (min/avg/max), footprint in bytes"]
    for row in rows:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    lines += [f"{m}: {why}" for m, why in _not_run(doc)]
    return "\n".join(lines) + "\n"


def _not_run(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(model, why) for every model whose micro.elf the board could not hold."""
    return [(m, f"not run, micro.elf does not fit this board ({why})") for m, why in doc.get("not_run", {}).items()]


def target_status(doc: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(benchmark, rule, measured, met) for the issue's stack-model targets."""
    idx = _index(doc)
    out = []
    for name, field, rule, kind in TARGETS:
        r = idx.get(("stack", name))
        if r is None:
            continue
        v = r[field]
        if kind == "le2x":
            base = idx.get(("stack", "timer_delay"))
            if base is None:
                continue
            out.append((f"{name} {field}", rule, f"{_num(v)} (2 x {_num(base['max'])} = {_num(2 * base['max'])})",
                        v <= 2 * base["max"]))  # fmt: skip
        else:
            limit = float(re.findall(r"\d+", rule)[0])
            out.append((f"{name} {field}", rule, _num(v), v <= limit))
    return out


def _targets_table(title: str, first: str, status: list[tuple[str, str, str, bool]],
                   note: str = "") -> list[str]:
    """A markdown section of (what, rule, measured, met) rows; none when empty."""
    if not status:
        return []
    L = [f"## {title}", ""] + ([note, ""] if note else [])
    L += [f"| {first} | target | measured | |", "|---|---|---|---|"]
    L += [f"| {what} | {rule} | {measured} | {'met' if met else '**missed**'} |"
          for what, rule, measured, met in status]  # fmt: skip
    return L + [""]


def issue17_status(doc: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(model benchmark field, rule, measured, met) for issue 17's targets."""
    idx = _index(doc)
    out = []
    for model, name, field, rule, limit, div in ISSUE17_TARGETS:
        r = idx.get((model, name))
        if r is not None:
            v = r["avg"] / div
            out.append((f"{model} {name} {field}", rule, _num(round(v, 1)), v <= limit))
    return out


def markdown(doc: dict[str, Any]) -> str:
    """docs/benchmarks.md: every table generated from one result document."""
    idx, models = _index(doc), _models(doc)
    unit = doc["unit"]
    threads = [m for m in models if m in THREAD_MODELS]
    L: list[str] = []
    L.append("# Kernel microbenchmarks")
    L.append("")
    L.append("<!-- generated by `tern bench micro --doc`; do not edit by hand -->")
    L.append("")
    cmd = doc.get("command") or f"./tern bench micro --board {doc['board']} --json FILE --doc docs/benchmarks.md"
    L.append(f"Board **{doc['board']}**, unit **{unit}** (on QEMU boards one instruction stands for one "
             f"cycle of the 4 MHz sensor CPU; footprint in bytes), {doc.get('count', '?')} samples per "
             f"benchmark, generated by")  # fmt: skip
    L.append("")
    L.append("```sh")
    L.append(cmd)
    L.append("```")
    L.append("")
    L.append("The guest is `bench/micro/micro.c` (what each benchmark measures is described at its top); "
             "the host side is `tools/terntools/micro.py`. Every sample is the difference of two reads "
             "of the board's free-running counter taken at the first statement of the measured "
             "handler or callback; the cost of the reads (a back-to-back pair for delays, one "
             "sampling call for round trips; column *overhead*) is measured at start-up and "
             "subtracted. The trace ring is compiled out of `micro.elf` (`TERN_TRACE_EVENTS=0`). "
             "Emulated time is deterministic: the same image gives the same numbers on every run.")  # fmt: skip
    L.append("")
    for m, why in _not_run(doc):
        L += [f"`{m}`: {why}.", ""]
    if not threads:
        L.append("`sem_roundtrip` and `yield_roundtrip` are omitted: this board has no thread model.")
        L.append("")

    def cell(m: str, name: str) -> list[str]:
        r = idx.get((m, name))
        return [_num(r[k]) for k in ("min", "avg", "max")] if r else ["-", "-", "-"]

    L.append("## Timer delays (seed 004 Table 1 layout)")
    L.append("")
    L.append("Deadline to the first statement of the alarm callback (interrupt context) or of the "
             "task's TIMEOUT0 handler. *With load*: the lowest-priority task busy-loops in "
             "`port_work(2000)` chunks, re-posting itself after each, and a second periodic task "
             "timer (19997 ticks) fires; deadlines are 3000..4020 ticks apart, pseudo-random, so "
             "they meet the load at every phase. Without load the interrupt wakes the idle loop "
             "(the idle period is closed and accounted first); with load it interrupts the load "
             "task, which is why the loaded minimum can be lower. fifo and priority run the "
             "TIMEOUT handler only after the load chunk under way, so their loaded maximum is "
             "about one chunk.")  # fmt: skip
    L.append("")
    L.append(f"| model | timer | w/o load min | avg | max | with load min | avg | max |")
    L.append("|---|---|--:|--:|--:|--:|--:|--:|")
    for m in models:
        for label, name in (("alarm (interrupt)", "alarm_delay"), ("task timer (TIMEOUT)", "timer_delay")):
            L.append("| " + " | ".join([m, label] + cell(m, name) + cell(m, name + "_load")) + " |")
    L.append("")
    L.append("## Interrupt to handler, message round trip")
    L.append("")
    L.append("*irq preempt*: `port_swirq_raise()` inside a running handler to the first statement of "
             "the higher-priority task's handler the interrupt posts to (fifo and priority cannot "
             "preempt: the raising handler returns right after the raise). *irq idle*: the same, "
             "raised from the idle loop's work hook with no handler running. *msg round trip*: A "
             "posts to B (higher priority), B posts back, from one start of A's handler to the next"
             + (". *sem* / *yield* (thread models): two threads of equal priority ping-pong through "
                "two semaphores / both call `tern_yield()`; one round trip is two switches." if threads else ".")
             )  # fmt: skip
    L.append("")
    names = ["irq_to_handler_preempt", "irq_to_handler_idle", "msg_roundtrip"] + (
        ["sem_roundtrip", "yield_roundtrip"] if threads else [])  # fmt: skip
    L.append("| benchmark | " + " | ".join(models) + " |")
    L.append("|---|" + "--:|" * len(models))
    for name in names:
        cells = []
        for m in models:
            r = idx.get((m, name))
            cells.append(f"{_num(r['min'])} / **{_num(r['avg'])}** / {_num(r['max'])}" if r else "-")
        L.append(f"| {name} (min / **avg** / max) | " + " | ".join(cells) + " |")
    over = {_num(r["overhead"]) for r in doc["results"] if "overhead" in r}
    if over:
        L.append("")
        L.append(f"Subtracted measurement overhead ({unit}): " + ", ".join(sorted(over, key=float)) +
                 " (delays: one pair of counter reads; round trips: one sampling call).")  # fmt: skip
    L.append("")
    L.append("## Footprint (bytes)")
    L.append("")
    L.append("*kernel*: the sections linked from `kernel/` and `arch/` objects into the minimal app "
             "(`bench/micro/micro_min.c`: one task, one periodic timer, the console; default kernel "
             "configuration, trace ring on), from its link map. *min app*: the whole image "
             "(`size -B`), board drivers and C library included; its bss includes the main stack "
             "reservation. Both bss numbers include the kernel's message pool, heap and trace "
             "ring; the thread models add the thread stacks. Link-time-optimised builds (AVR) "
             "merge the objects, so there the kernel part is the sum of the symbols the kernel "
             "defines (`nm -S`; string literals not counted).")  # fmt: skip
    L.append("")
    L.append("| | " + " | ".join(models) + " |")
    L.append("|---|" + "--:|" * len(models))
    for name in FOOTPRINT_NAMES:
        L.append(f"| {name} | " + " | ".join(str(int(idx[(m, name)]["avg"])) if (m, name) in idx else "-"
                                              for m in models) + " |")  # fmt: skip
    L.append("")
    if doc["board"] == TARGET_BOARD:
        L += _targets_table("Issue 7 targets (stack model)", "benchmark", target_status(doc))
        L += _targets_table("Issue 17 targets", "model, benchmark", issue17_status(doc),
                            "Where the remaining instructions go, by function: `./tern bench itrace`; each "
                            "miss against its measured floor (bench/floor/cm_floor.c): docs/dispatch-cost.md.")
    if doc["board"] != TARGET_BOARD:
        return "\n".join(L)
    L.append("## Reference numbers (from issue 7, same QEMU board, instructions)")
    L.append("")
    L.append("| kernel | benchmark | instructions |")
    L.append("|---|---|--:|")
    for k, b, v in REFERENCES:
        L.append(f"| {k} | {b} | {v} |")
    L.append("")
    L.append("Their yield is one yield; tern's `yield_roundtrip` is two (A -> B -> A).")
    L.append("")
    return "\n".join(L)


def markdown_many(docs: Sequence[dict[str, Any]]) -> str:
    """One document for several boards: each board's tables under its own
    heading, the first board first (the issue's targets are for mps2-an385)."""
    if len(docs) == 1:
        return markdown(docs[0])
    parts = ["# Kernel microbenchmarks", "",
             "<!-- generated by `tern bench micro --from-json ... --doc`; do not edit by hand -->", "",
             "Boards: " + ", ".join(d["board"] for d in docs) + ". Each board's numbers are in its own "
             "unit (instructions on QEMU boards, cycles on AVR), from its own `tern bench micro` run.", ""]  # fmt: skip
    for d in docs:
        body = markdown(d).splitlines()
        body = [ln for ln in body[1:] if not ln.startswith("<!-- generated")]
        parts.append(f"## {d['board']}")
        parts += [("#" + ln) if ln.startswith("## ") else ln for ln in body]
    return "\n".join(parts) + "\n"
