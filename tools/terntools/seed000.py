"""The seed-000 benchmark: TinyOS-vs-MANTIS scenario swept over models, n and l_s.

Guest side (bench/seed000, one ELF per board and model): it reads its run
parameters from the .tern_params section, runs the scenario for `samples`
sensing periods of 1 s and prints

    SEED000 BEGIN model=<m> n=<n> ls_ms=<l> samples=<K> seed=<s>
    J <e>        one forwarding job, e = stop - start in board ticks
    I <i>        one idle period in board ticks
    SEED000 END T=<ticks> arrivals=<a> jobs=<j> sensing=<s> ctx=<c> preempt=<p> dropped=<d> trace_cost=<ticks>

Host side (this module): build each model, patch the parameters of every
configuration into a copy of the ELF, run the copies in parallel, parse the
logs and turn ticks into the paper's metrics (terntools.metrics). Times are
reported in microseconds of the scenario's 4 MHz CPU: ticks -> cycles with the
board's exact cycles_per_tick, cycles -> us as cycles * 1e6 / cpu_hz.

trace_cost (ticks one trace event costs) is reported as measured; the guest
is the one that subtracts it from its J/I records, as seed 000 subtracted its
measurement overhead.
"""
from __future__ import annotations

import os
import re
import struct
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from terntools import metrics
from terntools.boards import Board
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
UNAVAILABLE = re.compile(r"tern: model (\S+) is not available on board (\S+)")

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
    """Where the lead's CMake puts the seed-000 image of one model."""
    return root / "build" / board.name / model / "bench" / "seed000" / "seed000.elf"


def build_model(board: Board, model: str, root: Path) -> Path | None:
    """Configure and build one model; None if the board does not support it.

    The CMake of the kernel fails with "tern: model X is not available on
    board Y" for a model a board lacks; that is a skip, not an error.
    """
    build_dir = root / "build" / board.name / model
    steps = [
        ["cmake", "-S", str(root), "-B", str(build_dir), "-G", "Ninja",
         f"-DTERN_BOARD={board.name}", f"-DTERN_MODEL={model}"],
        ["cmake", "--build", str(build_dir)],
    ]  # fmt: skip
    for cmd in steps:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except FileNotFoundError:
            raise TernError("cmake is not installed or not on PATH") from None
        if proc.returncode != 0:
            output = proc.stdout + proc.stderr
            if UNAVAILABLE.search(output):
                return None
            tail = " | ".join(line.strip() for line in output.strip().splitlines()[-3:])
            raise TernError(f"building model {model} for {board.name} failed ({' '.join(cmd[:2])}): {tail}")
    elf = elf_path(root, board, model)
    if not elf.is_file():
        raise TernError(f"building model {model} for {board.name} produced no {elf}")
    return elf


# --------------------------------------------------------------------------- guest log


@dataclass
class GuestLog:
    """What one seed-000 guest printed, still in board ticks."""

    model: str
    n: int
    ls_ms: int
    samples: int
    seed: int
    job_ticks: list[int] = field(default_factory=list)
    idle_ticks: list[int] = field(default_factory=list)
    T: int = 0
    arrivals: int = 0
    jobs: int = 0
    sensing: int = 0
    ctx: int = 0
    preempt: int = 0
    dropped: int = 0
    trace_cost: int = 0


BEGIN_KEYS = ("model", "n", "ls_ms", "samples", "seed")
END_KEYS = ("T", "arrivals", "jobs", "sensing", "ctx", "preempt", "dropped", "trace_cost")
_RECORD = re.compile(r"([JI]) (\d+)")


def _fields(text: str, keys: Sequence[str], where: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            raise Seed000Error(f"{where}: expected key=value, got {item!r}")
        found[key] = value
    missing = [k for k in keys if k not in found]
    if missing:
        raise Seed000Error(f"{where}: missing {', '.join(missing)}")
    return found


def _int(fields: dict[str, str], key: str, where: str) -> int:
    try:
        value = int(fields[key])
    except ValueError:
        raise Seed000Error(f"{where}: {key}={fields[key]!r} is not a decimal integer") from None
    if value < 0:
        raise Seed000Error(f"{where}: {key}={value} is negative")
    return value


def parse_guest_log(text: str) -> GuestLog:
    """Parse the console of one seed-000 run.

    Lines outside BEGIN..END, and lines inside that are neither J nor I
    records (trace lines, kernel messages), are ignored. A malformed record,
    a missing BEGIN or END, or a second BEGIN is an error naming the line.
    """
    log: GuestLog | None = None
    ended = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        where = f"line {number}"
        if line.startswith("SEED000 BEGIN"):
            if log is not None:
                raise Seed000Error(f"{where}: a second SEED000 BEGIN")
            f = _fields(line[len("SEED000 BEGIN") :], BEGIN_KEYS, where)
            log = GuestLog(
                model=f["model"], n=_int(f, "n", where), ls_ms=_int(f, "ls_ms", where),
                samples=_int(f, "samples", where), seed=_int(f, "seed", where),
            )  # fmt: skip
        elif log is None or ended:
            continue
        elif line.startswith("SEED000 END"):
            f = _fields(line[len("SEED000 END") :], END_KEYS, where)
            log.T = _int(f, "T", where)
            log.arrivals = _int(f, "arrivals", where)
            log.jobs = _int(f, "jobs", where)
            log.sensing = _int(f, "sensing", where)
            log.ctx = _int(f, "ctx", where)
            log.preempt = _int(f, "preempt", where)
            log.dropped = _int(f, "dropped", where)
            log.trace_cost = _int(f, "trace_cost", where)
            ended = True
        elif line.startswith(("J ", "I ")):
            m = _RECORD.fullmatch(line.strip())
            if not m:
                raise Seed000Error(f"{where}: malformed record {line!r} (expected 'J <ticks>' or 'I <ticks>')")
            (log.job_ticks if m.group(1) == "J" else log.idle_ticks).append(int(m.group(2)))
    if log is None:
        raise Seed000Error("no 'SEED000 BEGIN' line in the guest output")
    if not ended:
        raise Seed000Error("no 'SEED000 END' line in the guest output (did the run stop early?)")
    if log.T <= 0:
        raise Seed000Error(f"experiment duration T={log.T} must be positive")
    return log


# --------------------------------------------------------------------------- metrics


def summarize(log: GuestLog, board: Board) -> dict[str, Any]:
    """One run record of the JSON: the seed-000 metrics of a parsed log.

    Times in us of the cpu_hz CPU, idle figures in percent. E_t/I_p and their
    statistics are None when the run had no job / no idle period.
    """
    us_per_tick = board.ticks_to_us(1)
    et = metrics.job_time_stats(log.job_ticks)
    ip = metrics.idle_period_stats(log.idle_ticks)
    et_us = et.scaled(us_per_tick) if et else None
    ip_us = ip.scaled(us_per_tick) if ip else None
    i_t = metrics.idle_percentage(log.idle_ticks, log.T)
    l_s_cycles = log.ls_ms * board.cpu_hz / 1000
    i_max = metrics.max_idle_percentage(log.n, l_s_cycles, metrics.L_P_CYCLES, metrics.F_S_HZ, board.cpu_hz)
    return {
        "model": log.model,
        "n": log.n,
        "l_s_ms": log.ls_ms,
        "samples": log.samples,
        "seed": log.seed,
        "arrivals": log.arrivals,
        "jobs": log.jobs,
        "job_records": len(log.job_ticks),
        "E_t": et_us.mean if et_us else None,
        "E_t_sd": et_us.sd if et_us else None,
        "E_t_max": et_us.maximum if et_us else None,
        "E_t_p50": et_us.p50 if et_us else None,
        "E_t_p99": et_us.p99 if et_us else None,
        "I_t": i_t,
        "I_max": i_max,
        "I_o": metrics.os_overhead(i_max, i_t),
        "I_p": ip_us.mean if ip_us else None,
        "I_p_sd": ip_us.sd if ip_us else None,
        "idle_periods": len(log.idle_ticks),
        "T_s": float(board.ticks_to_cycles(log.T)) / board.cpu_hz,
        "T_ticks": log.T,
        "sensing": log.sensing,
        "ctx_switches": log.ctx,
        "preemptions": log.preempt,
        "dropped": log.dropped,
        "trace_cost_us": log.trace_cost * us_per_tick,
    }


# --------------------------------------------------------------------------- checks


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_run(run: dict[str, Any], tolerance: float = 0.1) -> list[str]:
    """Problems with one run record; empty when it is consistent.

    - every key of RUN_KEYS is present;
    - I_t <= I_max + tolerance (percentage points): no OS can idle more than
      the ideal one of eq. 4;
    - jobs <= arrivals, and jobs == arrivals when nothing was dropped;
    - as many J records as the guest counted jobs (when job_records is there).
    """
    where = f"{run.get('model', '?')} n={run.get('n', '?')} l_s={run.get('l_s_ms', '?')}ms"
    problems = [f"{where}: key {key!r} is missing" for key in RUN_KEYS if key not in run]
    if problems:
        return problems
    if run["E_t"] is not None and not _is_number(run["E_t"]):
        problems.append(f"{where}: E_t is not a number")
    if _is_number(run["I_t"]) and _is_number(run["I_max"]) and run["I_t"] > run["I_max"] + tolerance:
        problems.append(f"{where}: I_t = {run['I_t']:.3f} % exceeds I_max = {run['I_max']:.3f} %")
    if run["jobs"] > run["arrivals"]:
        problems.append(f"{where}: jobs = {run['jobs']} exceeds arrivals = {run['arrivals']}")
    if run["dropped"] == 0 and run["jobs"] != run["arrivals"]:
        problems.append(f"{where}: nothing dropped but jobs = {run['jobs']} != arrivals = {run['arrivals']}")
    if "job_records" in run and run["job_records"] != run["jobs"]:
        problems.append(f"{where}: {run['job_records']} J records but the guest counted jobs = {run['jobs']}")
    records = run.get("job_records", run["jobs"])
    if (records > 0) != (run["E_t"] is not None):
        problems.append(f"{where}: E_t = {run['E_t']} does not fit {records} recorded jobs")
    return problems


def check_results(doc: dict[str, Any], tolerance: float = 0.1) -> list[str]:
    """Problems with a whole sweep document (top-level keys, then every run)."""
    problems = [f"key {key!r} is missing" for key in TOP_KEYS if key not in doc]
    if problems:
        return problems
    if not isinstance(doc["runs"], list):
        return ["'runs' is not a list"]
    for run in doc["runs"]:
        problems.extend(check_run(run, tolerance))
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


def run_config(
    plan: SweepPlan, elf: Path, cfg: Config, workdir: Path, patcher: Patcher, runner: Runner
) -> dict[str, Any]:
    """Patch, run and summarize one configuration; raise TernError if it fails."""
    image = workdir / f"{cfg.model}-n{cfg.n}-ls{cfg.ls_ms}.elf"
    patcher(plan.board, elf, image, cfg)
    result = runner(plan.board, image, plan.timeout, max_cycles=plan.max_cycles())
    text = result.stdout.decode("utf-8", "replace")
    if plan.logs_dir is not None:
        (plan.logs_dir / f"{image.stem}.log").write_text(text + result.stderr, encoding="utf-8")
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
    progress = Progress(len(configs), progress_stream, prefix="seed000 ")
    with tempfile.TemporaryDirectory(prefix="tern-seed000-") as tmp, ThreadPoolExecutor(max(1, plan.jobs)) as pool:
        futures = {
            pool.submit(run_config, plan, elves[c.model], c, Path(tmp), patcher, runner): c for c in configs
        }
        for future in as_completed(futures):
            cfg = futures[future]
            try:
                run = future.result()
            except TernError as exc:
                failures.append(str(exc))
                progress.note(f"seed000: {exc}")
                progress.advance(f"{cfg.label}: FAILED")
                continue
            runs.append(run)
            progress.advance(f"{cfg.label}: ok ({run['wall_seconds']:.1f} s)")
    progress.close()
    runs.sort(key=lambda r: _order(plan, r))
    doc: dict[str, Any] = {
        "board": plan.board.name,
        "unit": plan.board.unit,
        "cpu_hz": plan.board.cpu_hz,
        "samples": plan.samples,
        "seed": plan.seed,
        "skipped_models": skipped,
        "failures": failures,
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
