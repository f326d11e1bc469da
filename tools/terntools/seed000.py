"""The seed-000 benchmark: TinyOS-vs-MANTIS scenario swept over models, n and l_s.

Guest side (bench/seed000/seed000.c, one ELF per board and model): it reads
its run parameters from the .tern_params section, runs the scenario for
`samples` sensing periods of 1 s, keeps aggregates of the forwarding job
times e and the idle periods i_k in the guest (printing one line per job
would put the UART into what is measured) and prints them once at the end,
all times in board ticks:

    SEED000 BEGIN model=<m> n=<n> ls_ms=<l> samples=<K> seed=<s>
    SEED000 HIST sub_bits=<b>
    H <bucket> <count>        one line per used bucket of the e histogram
    SEED000 END T=<ticks> arrivals= jobs= sensing= e_sum= e_sumsq= e_min= e_max=
                idle_sum= idle_count= idle_sumsq= idle_max= ctx= preempt=
                dropped= max_queue= trace_cost= bench= bench_step_max= bench_inline=

bench is the time of the benchmark's own deferred work (arrival draws,
statistics) in ticks: it runs in slots right before an idle period would
begin, never while a job waits or in an idle period, and is added back to
the idle time (seed 000 subtracted its measurement overhead the same way);
bench_inline counts the steps that had to run in the measured path instead.

Host side (this module): build each model, patch the parameters of every
configuration into a copy of the ELF, run the copies in parallel, parse the
logs and turn ticks into the paper's metrics (terntools.metrics). Times are
reported in microseconds of the scenario's 4 MHz CPU: ticks -> cycles with the
board's exact cycles_per_tick, cycles -> us as cycles * 1e6 / cpu_hz.

trace_cost (ticks one trace event costs) is reported as measured; benchmark
builds compile the trace ring out, so nothing needs subtracting from e or i_k.
"""
from __future__ import annotations

import os
import re
import struct
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from terntools import arrivals, build, executor, metrics, sizes
from terntools.boards import UNITS, Board
from terntools.errors import TernError, UsageError
from terntools.progress import Progress
from terntools.runner import RunResult, run_image

PARAMS_MAGIC = 0x7465726E  # "tern"
PARAMS_SECTION = ".tern_params"
PARAMS_WORDS = 8
DEFAULT_MODELS = ("fifo", "priority", "stack", "threads", "adaptive")
KNOWN_MODELS = (*DEFAULT_MODELS, "hybrid")
DEFAULT_N = tuple(range(1, 9))  # seed 000, Table I
DEFAULT_LS_MS = (1, 5, 10, 25, 50, 75, 100)  # seed 000, Section IV-A
DEFAULT_SAMPLES = 50  # seed 000: "50 experiment samples were conducted"
DEFAULT_SEED = 1
DEFAULT_TIMEOUT = 600.0

# Keys every run record must have (the JSON schema of a sweep).
RUN_KEYS = (
    "model", "n", "l_s_ms", "jobs", "E_t", "E_t_sd", "E_t_max", "E_t_p99",
    "I_t", "I_max", "I_o", "I_p", "I_p_sd", "ctx_switches", "preemptions", "dropped",
    "arrivals", "E_t_p50", "idle_periods", "T_s",
)  # fmt: skip
TOP_KEYS = ("board", "unit", "cpu_hz", "runs")


class Seed000Error(TernError):
    """A guest log that does not follow the seed-000 output format."""


@dataclass(frozen=True)
class Config:
    """One point of the sweep."""

    model: str
    n: int
    ls_ms: int
    samples: int
    seed: int = DEFAULT_SEED

    @property
    def label(self) -> str:
        return f"{self.model} n={self.n} l_s={self.ls_ms}ms"


# --------------------------------------------------------------------------- parameters


def params_blob(cfg: Config) -> bytes:
    """The .tern_params contents: 8 little-endian u32 words.

    [magic "tern", n, l_s_ms, samples, seed, 0, 0, 0]
    """
    words = [PARAMS_MAGIC, cfg.n, cfg.ls_ms, cfg.samples, cfg.seed, 0, 0, 0]
    for w in words:
        if not 0 <= w < 1 << 32:
            raise UsageError(f"{cfg.label}: parameter {w} does not fit in a u32")
    return struct.pack(f"<{PARAMS_WORDS}I", *words)


def patch_image(board: Board, src: Path, dst: Path, cfg: Config) -> None:
    """Write a copy of src with cfg in its .tern_params section.

    objcopy --update-section keeps the section's address and size, so the
    guest finds its parameters where the linker put them.
    """
    objcopy = f"{board.toolchain_prefix}objcopy"
    params = dst.with_suffix(".params")
    params.write_bytes(params_blob(cfg))
    cmd = [objcopy, "--update-section", f"{PARAMS_SECTION}={params}", str(src), str(dst)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise TernError(f"{objcopy} is not installed or not on PATH") from None
    if proc.returncode != 0:
        why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
        raise TernError(f"patching {PARAMS_SECTION} of {src} failed: {why}")


# --------------------------------------------------------------------------- build


def elf_path(root: Path, board: Board, model: str) -> Path:
    """The seed-000 image of one model, in the shared build tree."""
    return build.build_dir(board.name, model, root) / "bench" / "seed000" / "seed000.elf"


def build_model(board: Board, model: str, root: Path) -> Path | None:
    """Build one model's seed000.elf (only it: every app of six models takes
    minutes on two cores); None if the board does not support it (a skip)."""
    try:
        build.build(board.name, model, root, target="seed000.elf")
    except build.ModelUnavailable:
        return None
    elf = elf_path(root, board, model)
    if not elf.is_file():
        raise TernError(f"building model {model} for {board.name} produced no {elf}")
    return elf


def image_sizes(board: Board, models: Iterable[str], root: Path) -> dict[str, dict[str, int]]:
    """`tern size` of each model's seed000.elf: {model: {text, data, bss, flash, ram}}.

    Models whose image is not there are left out (a sweep run on images
    built elsewhere)."""
    out: dict[str, dict[str, int]] = {}
    for model in models:
        elf = elf_path(root, board, model)
        if elf.is_file():
            size = sizes.measure([elf], board)[0]
            out[model] = {"text": size.text, "data": size.data, "bss": size.bss, "flash": size.flash,
                          "ram": size.ram}  # fmt: skip
    return out


def board_models(board: Board) -> list[str]:
    """Every model the board lists that the benchmark knows, in KNOWN_MODELS order
    (the default models when the board lists none)."""
    if not board.models:
        return list(DEFAULT_MODELS)
    return [m for m in KNOWN_MODELS if m in board.models]


# --------------------------------------------------------------------------- guest log


@dataclass
class GuestLog:
    """What one seed-000 guest printed, still in board ticks.

    e: the forwarding job times (count = jobs); idle: the idle periods inside
    the measurement window (the guest reports no minimum for them); hist: the
    job-time histogram {bucket: count} of bucket_of() in seed000.c.
    """

    model: str
    n: int
    ls_ms: int
    samples: int
    seed: int
    hist_sub_bits: int
    hist: dict[int, int]
    T: int
    arrivals: int
    jobs: int
    sensing: int
    e: metrics.Aggregate
    idle: metrics.Aggregate
    ctx: int
    preempt: int
    dropped: int
    max_queue: int
    trace_cost: int
    # bench slots (ticks of the benchmark's deferred work, which displaced
    # idle time) and bench steps that ran in the measured path instead;
    # 0 for a guest that does not report them
    bench: int = 0
    bench_inline: int = 0

    @property
    def hist_jobs(self) -> int:
        return sum(self.hist.values())


BEGIN = "SEED000 BEGIN"
HIST = "SEED000 HIST"
END = "SEED000 END"
BEGIN_KEYS = ("model", "n", "ls_ms", "samples", "seed")
HIST_KEYS = ("sub_bits",)
END_KEYS = (
    "T", "arrivals", "jobs", "sensing", "e_sum", "e_sumsq", "e_min", "e_max",
    "idle_sum", "idle_count", "idle_sumsq", "idle_max", "ctx", "preempt", "dropped", "max_queue", "trace_cost",
)  # fmt: skip
# printed from uint32_t in the guest (the sums and T are 64-bit)
U32_END_KEYS = ("arrivals", "jobs", "sensing", "e_min", "e_max", "idle_count", "idle_max", "ctx", "preempt", "dropped",
                "max_queue")  # fmt: skip
_DECIMAL = re.compile(r"[0-9]+")


def _fields(text: str, keys: Sequence[str], where: str) -> dict[str, str]:
    """key=value items of a header line; every key of keys must be there once.

    Keys the parser does not know are allowed (a newer guest may add some).
    """
    found: dict[str, str] = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise Seed000Error(f"{where}: expected key=value, got {item!r}")
        if key in found:
            raise Seed000Error(f"{where}: field {key} appears twice")
        found[key] = value
    missing = [k for k in keys if k not in found]
    if missing:
        raise Seed000Error(f"{where}: missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    return found


def _int(fields: dict[str, str], key: str, where: str) -> int:
    value = fields[key]
    if not _DECIMAL.fullmatch(value):
        raise Seed000Error(f"{where}: field {key}={value!r} is not a non-negative decimal integer")
    return int(value)


def _hist_line(line: str, log_sub_bits: int | None, hist: dict[int, int], where: str) -> None:
    """One 'H <bucket> <count>' line into hist."""
    if log_sub_bits is None:
        raise Seed000Error(f"{where}: histogram line {line!r} before the '{HIST}' line")
    parts = line.split()
    if len(parts) != 3 or not all(_DECIMAL.fullmatch(p) for p in parts[1:]):
        raise Seed000Error(f"{where}: malformed histogram line {line!r} (expected 'H <bucket> <count>')")
    bucket, count = int(parts[1]), int(parts[2])
    buckets = metrics.hist_bucket_count(log_sub_bits)
    if bucket >= buckets:
        raise Seed000Error(f"{where}: histogram bucket {bucket} is out of range (sub_bits={log_sub_bits} has {buckets})")
    if bucket in hist:
        raise Seed000Error(f"{where}: histogram bucket {bucket} appears twice")
    if count == 0:
        raise Seed000Error(f"{where}: histogram bucket {bucket} has count 0 (the guest prints only used buckets)")
    hist[bucket] = count


def _aggregate(f: dict[str, str], prefix: str, count_key: str, has_min: bool, where: str) -> metrics.Aggregate:
    keys = (count_key, f"{prefix}_sum", f"{prefix}_sumsq", f"{prefix}_max")
    count, total, total_sq, maximum = (_int(f, k, where) for k in keys)
    minimum = _int(f, f"{prefix}_min", where) if has_min else None
    try:
        return metrics.Aggregate(count, total, total_sq, minimum, maximum)
    except ValueError as exc:
        fields = ", ".join(f"{k}={f[k]}" for k in (*keys, *((f"{prefix}_min",) if has_min else ())))
        raise Seed000Error(f"{where}: the {prefix} aggregate ({fields}) is impossible: {exc}") from None


def parse_guest_log(text: str) -> GuestLog:
    """Parse the console of one seed-000 run (format: bench/seed000/seed000.c).

        SEED000 BEGIN model=<m> n=<n> ls_ms=<l> samples=<K> seed=<s>
        SEED000 HIST sub_bits=<b>
        H <bucket> <count>          one line per used bucket of the job-time histogram
        SEED000 END T=<ticks> arrivals= jobs= sensing= e_sum= e_sumsq= e_min= e_max=
                    idle_sum= idle_count= idle_sumsq= idle_max= ctx= preempt= dropped=
                    max_queue= trace_cost=

    Times are board ticks. Lines before BEGIN and after END, and other lines
    in between (kernel messages), are ignored. A missing or repeated header
    line, a malformed H line, a missing or non-numeric field, an aggregate no
    real data can produce, or a histogram that does not hold exactly `jobs`
    jobs is a Seed000Error naming the line and the field.
    """
    begin: dict[str, str] | None = None
    begin_where = ""
    sub_bits: int | None = None
    hist: dict[int, int] = {}
    end: dict[str, str] | None = None
    end_where = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        where = f"line {number}"
        if line.startswith(BEGIN):
            if begin is not None:
                raise Seed000Error(f"{where}: a second '{BEGIN}' line")
            begin = _fields(line[len(BEGIN) :], BEGIN_KEYS, where)
            begin_where = where
            for key in BEGIN_KEYS[1:]:
                _int(begin, key, where)
        elif begin is None or end is not None:
            continue
        elif line.startswith(HIST):
            if sub_bits is not None:
                raise Seed000Error(f"{where}: a second '{HIST}' line")
            sub_bits = _int(_fields(line[len(HIST) :], HIST_KEYS, where), "sub_bits", where)
            if not 1 <= sub_bits <= metrics.HIST_MAX_OCTAVE:
                raise Seed000Error(f"{where}: field sub_bits={sub_bits} must be 1..{metrics.HIST_MAX_OCTAVE}")
        elif line.startswith(END):
            end = _fields(line[len(END) :], END_KEYS, where)
            end_where = where
        elif line.startswith("SEED000"):
            raise Seed000Error(f"{where}: unknown seed-000 line {line!r}")
        elif line.startswith("H ") or line == "H":
            _hist_line(line, sub_bits, hist, where)
    if begin is None:
        raise Seed000Error(f"no '{BEGIN}' line in the guest output")
    if sub_bits is None:
        raise Seed000Error(f"no '{HIST}' line after '{BEGIN}' ({begin_where}) in the guest output")
    if end is None:
        raise Seed000Error(f"no '{END}' line in the guest output (did the run stop early?)")
    where = end_where
    for key in U32_END_KEYS:
        if _int(end, key, where) >= metrics.U32_LIMIT:
            raise Seed000Error(f"{where}: field {key}={end[key]} does not fit the guest's 32-bit counter")
    log = GuestLog(
        model=begin["model"],
        n=int(begin["n"]),
        ls_ms=int(begin["ls_ms"]),
        samples=int(begin["samples"]),
        seed=int(begin["seed"]),
        hist_sub_bits=sub_bits,
        hist=hist,
        T=_int(end, "T", where),
        arrivals=_int(end, "arrivals", where),
        jobs=_int(end, "jobs", where),
        sensing=_int(end, "sensing", where),
        e=_aggregate(end, "e", "jobs", True, where),
        idle=_aggregate(end, "idle", "idle_count", False, where),
        ctx=_int(end, "ctx", where),
        preempt=_int(end, "preempt", where),
        dropped=_int(end, "dropped", where),
        max_queue=_int(end, "max_queue", where),
        trace_cost=_int(end, "trace_cost", where),
        bench=_int(end, "bench", where) if "bench" in end else 0,
        bench_inline=_int(end, "bench_inline", where) if "bench_inline" in end else 0,
    )
    if log.T == 0:
        raise Seed000Error(f"{where}: field T=0: the measurement window must be positive")
    if log.idle.total > log.T:
        raise Seed000Error(f"{where}: field idle_sum={log.idle.total} exceeds the window T={log.T}")
    if log.hist_jobs != log.jobs:
        raise Seed000Error(f"{where}: the histogram holds {log.hist_jobs} jobs but field jobs={log.jobs}")
    if log.jobs:
        low = metrics.hist_bucket(log.e.minimum or 0, sub_bits)
        high = metrics.hist_bucket(log.e.maximum, sub_bits)
        if min(hist) != low or max(hist) != high:
            raise Seed000Error(
                f"{where}: fields e_min={log.e.minimum}, e_max={log.e.maximum} fall in buckets {low}..{high}, "
                f"but the histogram spans buckets {min(hist)}..{max(hist)}"
            )
    return log


# --------------------------------------------------------------------------- metrics


def summarize(log: GuestLog, board: Board) -> dict[str, Any]:
    """One run record of the JSON: the seed-000 metrics of a parsed log.

    Times are microseconds of the scenario's CPU (board.cpu_hz, 4 MHz): board
    ticks -> cycles (QEMU: instructions) with the board's exact cycles_per_tick,
    then cycles * 1e6 / cpu_hz. Idle figures in percent. E_t and I_p and their
    statistics are None when the run had no job / no idle period. E_t_p50 and
    E_t_p99 come from the histogram: exact rank, value to within one bucket.
    expected_arrivals is what the host twin of the guest's generator
    (terntools.arrivals) says the configuration must produce.
    """
    us_per_tick = board.ticks_to_us(1)
    et = metrics.aggregate_stats(log.e, log.hist, log.hist_sub_bits)
    ip = metrics.aggregate_stats(log.idle)
    et_us = et.scaled(us_per_tick) if et else None
    ip_us = ip.scaled(us_per_tick) if ip else None
    # The benchmark's deferred work (arrival draws, statistics) runs in bench
    # slots right before an idle period would begin, so its time is idle
    # time the node without the measurement would have had: added back, as
    # seed 000 subtracted its measurement overhead (bench/seed000/seed000.c).
    i_t = metrics.idle_percentage([log.idle.total + log.bench], log.T)
    l_s_cycles = log.ls_ms * board.cpu_hz / 1000
    i_max = metrics.max_idle_percentage(log.n, l_s_cycles, metrics.L_P_CYCLES, metrics.F_S_HZ, board.cpu_hz)
    # Eq. 4 assumes the expected number of arrivals; a run of a few samples
    # draws more or fewer. The bound of the work this run really did (its
    # sensing jobs and forwarding jobs) is what an OS's idle time can be
    # compared with: I_o_run is the overhead of the OS alone.
    t_cycles = float(board.ticks_to_cycles(log.T))
    work_cycles = log.sensing * l_s_cycles + log.jobs * metrics.L_P_CYCLES
    i_max_run = 100.0 * (1.0 - work_cycles / t_cycles)
    return {
        "model": log.model,
        "n": log.n,
        "l_s_ms": log.ls_ms,
        "samples": log.samples,
        "seed": log.seed,
        "arrivals": log.arrivals,
        "expected_arrivals": arrivals.arrival_count(log.seed, log.n, log.samples, board.cpu_hz),
        "jobs": log.jobs,
        "hist_jobs": log.hist_jobs,
        "E_t": et_us.mean if et_us else None,
        "E_t_sd": et_us.sd if et_us else None,
        "E_t_min": et_us.minimum if et_us else None,
        "E_t_max": et_us.maximum if et_us else None,
        "E_t_p50": et_us.p50 if et_us else None,
        "E_t_p99": et_us.p99 if et_us else None,
        "I_t": i_t,
        "I_max": i_max,
        "I_o": metrics.os_overhead(i_max, i_t),
        "I_max_run": i_max_run,
        "I_o_run": i_max_run - i_t,
        "I_p": ip_us.mean if ip_us else None,
        "I_p_sd": ip_us.sd if ip_us else None,
        "I_p_max": ip_us.maximum if ip_us else None,
        "idle_periods": log.idle.count,
        "T_s": float(board.ticks_to_cycles(log.T)) / board.cpu_hz,
        "T_ticks": log.T,
        "sensing": log.sensing,
        "ctx_switches": log.ctx,
        "preemptions": log.preempt,
        "dropped": log.dropped,
        "max_queue": log.max_queue,
        "trace_cost_us": log.trace_cost * us_per_tick,
        "bench_us": log.bench * us_per_tick,
        "bench_inline": log.bench_inline,
    }


# --------------------------------------------------------------------------- checks


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


COUNT_KEYS = ("n", "l_s_ms", "jobs", "ctx_switches", "preemptions", "dropped", "arrivals", "idle_periods")
PERCENT_KEYS = ("I_t", "I_max", "I_o")
JOB_TIME_KEYS = ("E_t", "E_t_sd", "E_t_max", "E_t_p99", "E_t_p50")
IDLE_TIME_KEYS = ("I_p", "I_p_sd")


def check_run(run: dict[str, Any], tolerance: float = 0.1, cpu_hz: int = metrics.S_CPU_HZ) -> list[str]:
    """Problems with one run record; empty when it is consistent.

    - every key of RUN_KEYS is present, counts are non-negative integers,
      percentages numbers, times numbers (or null exactly when there was no
      job / no idle period);
    - jobs <= arrivals, and arrivals equals the host twin's
      expected_arrivals when the record has it;
    - the histogram held every job (hist_jobs == jobs, when present);
    - the job times are ordered: min <= p50 <= p99 <= max, min <= E_t <= max,
      and no job was shorter than its own l_p of work (with 1 % slack);
    - I_max is eq. 4 for the record's n and l_s at cpu_hz; I_o = I_max - I_t;
      0 <= I_t <= I_max_run + tolerance (percentage points; I_max when the
      record has no I_max_run): no OS idles more than the ideal one doing
      the same work;
    - the sensing task ran at most once per sample, and every message that
      was sent but not handled (arrivals - jobs, samples - sensing) is
      counted in dropped.
    """
    where = f"{run.get('model', '?')} n={run.get('n', '?')} l_s={run.get('l_s_ms', '?')}ms"
    problems = [f"{where}: key {key!r} is missing" for key in RUN_KEYS if key not in run]
    if problems:
        return problems
    problems += [f"{where}: {k} = {run[k]!r} is not a non-negative integer" for k in COUNT_KEYS if not _is_count(run[k])]
    problems += [f"{where}: {k} = {run[k]!r} is not a number" for k in PERCENT_KEYS if not _is_number(run[k])]
    for keys, have in ((JOB_TIME_KEYS, "jobs"), (IDLE_TIME_KEYS, "idle_periods")):
        for k in keys:
            value = run[k]
            if value is None:
                if _is_count(run[have]) and run[have] > 0:
                    problems.append(f"{where}: {k} is null although {have} = {run[have]}")
            elif not _is_number(value):
                problems.append(f"{where}: {k} = {value!r} is not a number")
            elif run[have] == 0:
                problems.append(f"{where}: {k} = {value} although {have} = 0")
    if problems:
        return problems  # the relations below need well-typed values

    jobs, arrived, dropped = run["jobs"], run["arrivals"], run["dropped"]
    lost = 0  # messages that were sent but never handled: each must be a drop
    if jobs > arrived:
        problems.append(f"{where}: jobs = {jobs} exceeds arrivals = {arrived}")
    else:
        lost += arrived - jobs
    if _is_count(run.get("sensing")) and _is_count(run.get("samples")):
        if run["sensing"] > run["samples"]:
            problems.append(f"{where}: sensing ran {run['sensing']} times in {run['samples']} samples")
        else:
            lost += run["samples"] - run["sensing"]
    if lost > dropped:
        problems.append(f"{where}: {lost} sensing or forwarding messages were never handled, but dropped = {dropped}")
    expected = run.get("expected_arrivals")
    if expected is not None and expected != arrived:
        problems.append(
            f"{where}: arrivals = {arrived}, but the generator twin expects {expected} "
            "(an image built before bench/seed000/arrivals.c changed?)"
        )
    if "hist_jobs" in run and run["hist_jobs"] != jobs:
        problems.append(f"{where}: the histogram holds {run['hist_jobs']} jobs, jobs = {jobs}")

    if jobs:
        e_min: float | None = run["E_t_min"] if _is_number(run.get("E_t_min")) else None  # optional key
        order = [("E_t_min", e_min), ("E_t_p50", run["E_t_p50"]), ("E_t_p99", run["E_t_p99"]), ("E_t_max", run["E_t_max"])]
        known = [(k, v) for k, v in order if _is_number(v)]
        for (ka, a), (kb, b) in zip(known, known[1:]):
            if a > b * (1 + 1e-9):
                problems.append(f"{where}: {ka} = {a:g} exceeds {kb} = {b:g}")
        low = 0.0 if e_min is None else e_min
        if not low * (1 - 1e-9) <= run["E_t"] <= run["E_t_max"] * (1 + 1e-9):
            problems.append(f"{where}: E_t = {run['E_t']:g} is outside [E_t_min, E_t_max] = [{low:g}, {run['E_t_max']:g}]")
        if run["E_t_sd"] < 0:
            problems.append(f"{where}: E_t_sd = {run['E_t_sd']:g} is negative")
        l_p_us = metrics.L_P_CYCLES * 1e6 / cpu_hz
        shortest = run["E_t"] if e_min is None else e_min
        if shortest < 0.99 * l_p_us:
            problems.append(f"{where}: a job took {shortest:g} us, less than its l_p = {l_p_us:g} us of work")

    i_max = metrics.max_idle_percentage(run["n"], run["l_s_ms"] * cpu_hz / 1000, s_cpu=cpu_hz)
    if abs(run["I_max"] - i_max) > 1e-6:
        problems.append(f"{where}: I_max = {run['I_max']:g} %, but eq. 4 gives {i_max:g} % at {cpu_hz} Hz")
    if abs(run["I_o"] - (run["I_max"] - run["I_t"])) > 1e-6:
        problems.append(f"{where}: I_o = {run['I_o']:g} is not I_max - I_t = {run['I_max'] - run['I_t']:g}")
    if run["I_t"] < 0:
        problems.append(f"{where}: I_t = {run['I_t']:g} % is negative")
    # The bound of the work the run really did (I_max_run) when the record
    # has it; eq. 4's expected workload otherwise.
    bound_key = "I_max_run" if _is_number(run.get("I_max_run")) else "I_max"
    if run["I_t"] > run[bound_key] + tolerance:
        problems.append(f"{where}: I_t = {run['I_t']:.3f} % exceeds {bound_key} = {run[bound_key]:.3f} %")
    if _is_number(run.get("I_o_run")) and abs(run["I_o_run"] - (run["I_max_run"] - run["I_t"])) > 1e-6:
        problems.append(f"{where}: I_o_run = {run['I_o_run']:g} is not I_max_run - I_t")
    if run["idle_periods"] == 0 and run["I_t"] != 0:
        problems.append(f"{where}: I_t = {run['I_t']:g} % with no idle period")
    return problems


def check_results(doc: dict[str, Any], tolerance: float = 0.1) -> list[str]:
    """Problems with a whole sweep document (top-level keys, then every run)."""
    if not isinstance(doc, dict):
        return ["the results document is not a JSON object"]
    problems = [f"key {key!r} is missing" for key in TOP_KEYS if key not in doc]
    if problems:
        return problems
    if not _is_count(doc["cpu_hz"]) or doc["cpu_hz"] == 0:
        return [f"cpu_hz = {doc['cpu_hz']!r} is not a positive integer"]
    if doc["unit"] not in UNITS:
        problems.append(f"unit = {doc['unit']!r} is not one of {', '.join(UNITS)}")
    if not isinstance(doc["runs"], list):
        return problems + ["'runs' is not a list"]
    seen: set[tuple[Any, Any, Any]] = set()
    for number, run in enumerate(doc["runs"]):
        if not isinstance(run, dict):
            problems.append(f"runs[{number}] is not a JSON object")
            continue
        key = (run.get("model"), run.get("n"), run.get("l_s_ms"))
        if key in seen:
            problems.append(f"{key[0]} n={key[1]} l_s={key[2]}ms: appears twice in 'runs'")
        seen.add(key)
        problems.extend(check_run(run, tolerance, doc["cpu_hz"]))
    return problems


# --------------------------------------------------------------------------- sweep


Builder = Callable[[Board, str, Path], "Path | None"]
Patcher = Callable[[Board, Path, Path, Config], None]
Runner = Callable[..., RunResult]


@dataclass
class SweepPlan:
    """What to run: the cross product of models, n and l_s."""

    board: Board
    models: list[str]
    ns: list[int]
    ls_ms: list[int]
    samples: int = DEFAULT_SAMPLES
    seed: int = DEFAULT_SEED
    jobs: int = 1
    timeout: float = DEFAULT_TIMEOUT
    build: bool = True
    logs_dir: Path | None = None
    scheduler: str | None = None  # tcp://HOST:PORT of an existing Dask cluster; None: `jobs` local workers

    def configs(self, models: Iterable[str]) -> list[Config]:
        return [Config(m, n, ls, self.samples, self.seed) for m in models for n in self.ns for ls in self.ls_ms]

    def max_cycles(self) -> int | None:
        """A generous cycle guard on simavr: twice the experiment plus 10 s."""
        if self.board.emulator != "simavr":
            return None
        return (2 * self.samples + 10) * self.board.cpu_hz


@dataclass
class SweepResult:
    doc: dict[str, Any]
    failures: list[str]
    skipped: list[str]


def log_name(cfg: Config) -> str:
    """The file name of one configuration's console log in --logs DIR."""
    return f"{cfg.model}-n{cfg.n}-ls{cfg.ls_ms}.log"


def run_config(
    plan: SweepPlan, elf: Path, cfg: Config, workdir: Path, patcher: Patcher, runner: Runner,
    console: list[str] | None = None,
) -> dict[str, Any]:
    """Patch, run and summarize one configuration; raise TernError if it fails.

    The console (stdout, then the emulator's stderr) goes into plan.logs_dir
    and, when given, is appended to console.
    """
    image = workdir / f"{cfg.model}-n{cfg.n}-ls{cfg.ls_ms}.elf"
    patcher(plan.board, elf, image, cfg)
    result = runner(plan.board, image, plan.timeout, max_cycles=plan.max_cycles())
    text = result.stdout.decode("utf-8", "replace")
    if console is not None:
        console.append(text + result.stderr)
    if plan.logs_dir is not None:
        (plan.logs_dir / log_name(cfg)).write_text(text + result.stderr, encoding="utf-8")
    if result.status != 0:
        why = result.note or (result.stderr.strip().splitlines() or [""])[-1]
        raise TernError(f"{cfg.label}: guest exited with status {result.status}" + (f" ({why})" if why else ""))
    try:
        log = parse_guest_log(text)
    except Seed000Error as exc:
        raise Seed000Error(f"{cfg.label}: {exc}") from None
    asked = (cfg.model, cfg.n, cfg.ls_ms, cfg.samples, cfg.seed)
    got = (log.model, log.n, log.ls_ms, log.samples, log.seed)
    if asked != got:
        raise Seed000Error(f"{cfg.label}: guest reports model/n/ls/samples/seed {got}, expected {asked}")
    run = summarize(log, plan.board)
    run["wall_seconds"] = round(result.wall_seconds, 3)
    return run


@dataclass(frozen=True)
class SweepJob:
    """One configuration to run, as it travels to a Dask worker (picklable)."""

    plan: SweepPlan
    elf: Path
    cfg: Config
    patcher: Patcher
    runner: Runner


@dataclass(frozen=True)
class SweepOutcome:
    """What came back from one job: the run record, or the error of a failed run; and the console."""

    run: dict[str, Any] | None
    error: str
    log: str | None


def run_job(job: SweepJob) -> SweepOutcome:
    """run_config() in a temporary directory of its own (on whichever machine runs it).

    A failed configuration (TernError) is an outcome, not an exception, so
    the other runs go on; anything else is a bug and propagates.
    """
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tern-seed000-") as tmp:
        try:
            run = run_config(job.plan, job.elf, job.cfg, Path(tmp), job.patcher, job.runner, log)
        except TernError as exc:
            return SweepOutcome(None, str(exc), log[0] if log else None)
    return SweepOutcome(run, "", log[0] if log else None)


def _order(plan: SweepPlan, run: dict[str, Any]) -> tuple[int, int, int]:
    return (plan.models.index(run["model"]), run["n"], run["l_s_ms"])


def run_sweep(
    plan: SweepPlan,
    *,
    progress_stream: TextIO,
    root: Path,
    builder: Builder = build_model,
    patcher: Patcher = patch_image,
    runner: Runner = run_image,
) -> SweepResult:
    """Build the models, run every configuration in parallel, collect the runs.

    A model the board lacks is skipped with a notice; a configuration that
    fails is listed in failures and the others go on.
    """
    elves: dict[str, Path] = {}
    skipped: list[str] = []
    for model in plan.models:
        if not plan.board.supports(model):
            elf = None  # the board's models list says so; no need to ask CMake
        else:
            elf = builder(plan.board, model, root) if plan.build else elf_path(root, plan.board, model)
        if elf is None:
            skipped.append(model)
            progress_stream.write(f"seed000: model {model} is not available on board {plan.board.name}; skipped\n")
        elif not elf.is_file():
            raise UsageError(f"{elf} does not exist (build it, or drop --no-build)")
        else:
            elves[model] = elf
    configs = plan.configs(m for m in plan.models if m in elves)
    if plan.logs_dir is not None:
        plan.logs_dir.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    failures: list[str] = []
    where = executor.describe(plan.jobs, plan.scheduler, len(configs))
    progress = Progress(len(configs), progress_stream, prefix="seed000 ")
    if where != "serial":
        progress.note(f"seed000: {len(configs)} runs, {where}")
    # the jobs travel to the workers: no logs_dir there (the log text comes back)
    job_plan = replace(plan, logs_dir=None)
    jobs = [SweepJob(job_plan, elves[c.model], c, patcher, runner) for c in configs]

    def done(index: int, outcome: SweepOutcome) -> None:
        cfg = configs[index]
        if plan.logs_dir is not None and outcome.log is not None:
            (plan.logs_dir / log_name(cfg)).write_text(outcome.log, encoding="utf-8")
        if outcome.run is None:
            progress.note(f"seed000: {outcome.error}")
            progress.advance(f"{cfg.label}: FAILED")
        else:
            progress.advance(f"{cfg.label}: ok ({outcome.run['wall_seconds']:.1f} s)")

    outcomes = executor.map_jobs(run_job, jobs, workers=plan.jobs, scheduler=plan.scheduler, on_done=done)
    progress.close()
    for outcome in outcomes:  # in the plan's order, whichever finished first
        if outcome.run is None:
            failures.append(outcome.error)
        else:
            runs.append(outcome.run)
    runs.sort(key=lambda r: _order(plan, r))
    doc: dict[str, Any] = {
        "board": plan.board.name,
        "unit": plan.board.unit,
        "cpu_hz": plan.board.cpu_hz,
        "samples": plan.samples,
        "seed": plan.seed,
        "skipped_models": skipped,
        "failures": failures,
        "executor": where,
        "runs": runs,
    }
    return SweepResult(doc, failures, skipped)


def parse_int_list(text: str, what: str, minimum: int = 0) -> list[int]:
    """'1,2,5' -> [1, 2, 5]; a bad item is a usage error naming the flag."""
    values = []
    for item in text.split(","):
        item = item.strip()
        try:
            value = int(item)
        except ValueError:
            raise UsageError(f"{what}: {item!r} is not an integer") from None
        if value < minimum:
            raise UsageError(f"{what}: {value} is below {minimum}")
        values.append(value)
    if not values:
        raise UsageError(f"{what}: empty list")
    return values


def parse_models(text: str) -> list[str]:
    """'fifo,threads' -> ['fifo', 'threads'], checked against the known models."""
    models = [m.strip() for m in text.split(",") if m.strip()]
    for m in models:
        if m not in KNOWN_MODELS:
            raise UsageError(f"--models: unknown model {m!r} (known: {', '.join(KNOWN_MODELS)})")
    if not models:
        raise UsageError("--models: empty list")
    return list(dict.fromkeys(models))


def default_jobs() -> int:
    return os.cpu_count() or 1


def source_commit(root: Path) -> str:
    """The commit the images were built from: `git rev-parse --short HEAD`,
    with "+changes" when tracked files differ from it; "unknown" outside git."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--"], capture_output=True)
    except FileNotFoundError:
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+changes" if dirty.returncode == 1 else "")


def merge(base: dict[str, Any], new: dict[str, Any], models: Sequence[str] = KNOWN_MODELS) -> dict[str, Any]:
    """base's sweep with new's runs in place of the same (model, n, l_s), and
    any point base lacks added. Each run keeps its own samples and commit, so
    a document can hold runs of different lengths: its top-level samples is
    then the list of the lengths it holds. Failures and skipped models are
    new's (a failed point of new keeps base's run)."""
    if (base.get("board"), base.get("cpu_hz")) != (new.get("board"), new.get("cpu_hz")):
        raise UsageError(f"cannot merge a sweep of {new.get('board')} into one of {base.get('board')}")
    by_key = {(r["model"], r["n"], r["l_s_ms"]): r for r in base["runs"]}
    by_key.update({(r["model"], r["n"], r["l_s_ms"]): r for r in new["runs"]})
    order = {m: i for i, m in enumerate(models)}
    runs = sorted(by_key.values(), key=lambda r: (order.get(r["model"], len(order)), r["n"], r["l_s_ms"]))
    lengths = sorted({r["samples"] for r in runs if "samples" in r})
    doc = {**base, **{k: v for k, v in new.items() if k != "runs"}, "runs": runs}
    doc["samples"] = lengths[0] if len(lengths) == 1 else lengths
    if "sizes" in base or "sizes" in new:
        doc["sizes"] = {**base.get("sizes", {}), **new.get("sizes", {})}
    return doc
