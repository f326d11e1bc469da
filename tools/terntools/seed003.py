"""Seed 003's benchmark: a high-load tree node (a long sensing task and 4
neighbour streams of forwarding jobs, one priority level) under each model,
comparing voluntary and involuntary context switches and processing times.

The guest is bench/seed003/seed003.c; its run parameters are patched into
the image's .tern_params section (8 little-endian u32 words):
[magic "sed3", duration_s, l_s_ms, period_ms, gap_cycles, l_p_cycles,
neighbours, seed]. It prints per-neighbour lines, a log-linear histogram of
every job's processing time (post in the interrupt to handler end, in board
ticks) and one END line; this module turns them into the JSON document

    {"board", "unit", "cpu_hz", "params", "runs": [{"model", "ctx_invol",
     "ctx_vol", "ctx_per_neighbour", "busy", "jobs", "mean_processing_us",
     "p99_processing_us", ...}]}
"""
from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from terntools import build, executor
from terntools.boards import Board
from terntools.errors import TernError, UsageError
from terntools.runner import run_image

PARAMS_MAGIC = 0x73656433  # "sed3"
PARAMS_SECTION = ".tern_params"
DEFAULT_MODELS = ("fifo", "priority", "stack", "threads", "adaptive")
THREAD_MODELS = ("threads", "adaptive")


@dataclass(frozen=True)
class Params:
    """Seed 003 section 5.4: sensing of 1000 ms, packets every 300000 cycles
    on average from each of 4 neighbours; l_p as seed 000's forwarding job."""

    duration_s: int = 60
    ls_ms: int = 1000
    period_ms: int = 2000
    gap_cycles: int = 300000
    lp_cycles: int = 4000
    neighbours: int = 4
    seed: int = 1

    def words(self) -> list[int]:
        return [PARAMS_MAGIC, self.duration_s, self.ls_ms, self.period_ms, self.gap_cycles,
                self.lp_cycles, self.neighbours, self.seed]

    def check(self) -> None:
        if not 1 <= self.neighbours <= 4:
            raise UsageError(f"--neighbours: {self.neighbours} is not in 1..4")
        for name in ("duration_s", "period_ms", "gap_cycles"):
            if getattr(self, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')}: must be at least 1")
        for w in self.words():
            if not 0 <= w < 1 << 32:
                raise UsageError(f"parameter {w} does not fit in a u32")


def params_blob(p: Params) -> bytes:
    return struct.pack("<8I", *p.words())


def patch_image(board: Board, src: Path, dst: Path, p: Params) -> None:
    """A copy of src with p in its .tern_params section (same address and size)."""
    blob = dst.with_suffix(".params")
    blob.write_bytes(params_blob(p))
    objcopy = f"{board.toolchain_prefix}objcopy"
    cmd = [objcopy, "--update-section", f"{PARAMS_SECTION}={blob}", str(src), str(dst)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise TernError(f"{objcopy} is not installed or not on PATH") from None
    if proc.returncode != 0:
        raise TernError(f"patching {PARAMS_SECTION} of {src} failed: {proc.stderr.strip()}")


# --------------------------------------------------------------------------- guest output

END = re.compile(r"^SEED003 END (.*)$", re.M)
NEIGHBOUR = re.compile(r"^N (\d+) (.*)$", re.M)
HIST_HEAD = re.compile(r"^SEED003 HIST sub_bits=(\d+)$", re.M)
BUCKET = re.compile(r"^H (\d+) (\d+)$", re.M)


def _fields(text: str, where: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for kv in text.split():
        if "=" not in kv:
            raise TernError(f"{where}: '{kv}' is not key=value")
        k, v = kv.split("=", 1)
        out[k] = v
    return out


def _int(fields: dict[str, str], key: str, where: str) -> int:
    if key not in fields:
        raise TernError(f"{where}: field '{key}' is missing")
    try:
        return int(fields[key])
    except ValueError:
        raise TernError(f"{where}: field '{key}' is not an integer: {fields[key]!r}") from None


def bucket_bounds(bucket: int, sub_bits: int) -> tuple[int, int]:
    """Lowest and highest value of a log-linear bucket (bucket_of in seed003.c)."""
    if bucket < 1 << sub_bits:
        return bucket, bucket
    e = (bucket >> sub_bits) + sub_bits - 1
    mantissa = bucket & ((1 << sub_bits) - 1)
    low = ((1 << sub_bits) | mantissa) << (e - sub_bits)
    return low, low + (1 << (e - sub_bits)) - 1


def percentile_upper(hist: dict[int, int], sub_bits: int, q: float) -> int:
    """Upper bound of the bucket holding the q-quantile (a conservative p99)."""
    total = sum(hist.values())
    if total == 0:
        raise TernError("no processing times in the histogram")
    need = q * total
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= need:
            return bucket_bounds(b, sub_bits)[1]
    raise AssertionError("unreachable")


@dataclass
class Run:
    model: str
    ctx_invol: int
    ctx_vol: int
    sliced_long: int  # involuntary: a thread that held a full quantum (long, beta) used it up
    sliced_short: int  # ... one that held the rest of one (short, alpha)
    pf_entered: int  # adaptive's preemption-free periods
    invol_sensing: int  # involuntary switches out of the sensing thread
    invol_per_neighbour: list[int]  # ... out of each neighbour's forwarding thread
    ctx_per_neighbour: list[int]
    busy: float  # fraction of the window the CPU was not idle
    busy_cycles: int
    jobs: int
    arrivals: int
    mean_processing_us: float
    p99_processing_us: float
    max_processing_us: float
    sensing: int
    dropped: int


def parse_output(out: str, model: str, board: Board, p: Params) -> Run:
    """One guest run's console output -> its metrics."""
    where = f"seed003 {model}"
    m = END.search(out)
    if not m:
        raise TernError(f"{where}: no 'SEED003 END' line (did the run finish?)")
    end = _fields(m[1], where + " END")
    if end.get("model") != model:
        raise TernError(f"{where}: the image reports model {end.get('model')!r}")
    ticks = _int(end, "T", where)
    idle = _int(end, "idle_sum", where)
    if not 0 <= idle <= ticks or ticks == 0:
        raise TernError(f"{where}: idle_sum {idle} is not within the window T={ticks}")
    nbs = sorted((int(k), _fields(rest, f"{where} N {k}")) for k, rest in NEIGHBOUR.findall(out))
    if [k for k, _ in nbs] != list(range(p.neighbours)):
        raise TernError(f"{where}: expected neighbour lines 0..{p.neighbours - 1}, "
                        f"got {[k for k, _ in nbs]}")
    jobs = sum(_int(f, "jobs", where) for _, f in nbs)
    arrivals = sum(_int(f, "arrivals", where) for _, f in nbs)
    if jobs != arrivals:
        raise TernError(f"{where}: {arrivals} arrivals but {jobs} jobs done")
    e_sum = sum(_int(f, "e_sum", where) for _, f in nbs)
    e_max = max(_int(f, "e_max", where) for _, f in nbs)
    head = HIST_HEAD.search(out)
    if not head:
        raise TernError(f"{where}: no histogram header")
    hist = {int(b): int(c) for b, c in BUCKET.findall(out)}
    if sum(hist.values()) != jobs:
        raise TernError(f"{where}: histogram holds {sum(hist.values())} jobs, not {jobs}")
    invol = _int(end, "ctx_invol", where)
    control = _int(end, "invol_control", where)  # control (level 0) preempted by a woken thread
    per_thread = control + _int(end, "invol_sensing", where) + sum(_int(f, "invol", where) for _, f in nbs)
    if per_thread != invol:
        raise TernError(f"{where}: {per_thread} involuntary switches out of the threads, {invol} in all")
    # the measured threads share one level: besides control's preemptions an
    # involuntary switch is the end of a quantum or a period's eviction
    # (counted when asked for: the thread may block first)
    sliced = _int(end, "sliced_long", where) + _int(end, "sliced_short", where)
    evict = _int(end, "evict", where)
    if not sliced <= invol - control <= sliced + evict:
        raise TernError(f"{where}: {sliced} quanta ended and {evict} long threads were preempted, "
                        f"but {invol - control} involuntary switches at the measured level")
    cpt: Fraction = board.cycles_per_tick
    us_per_tick = cpt * 1_000_000 / board.cpu_hz
    return Run(
        model=model,
        ctx_invol=invol,
        ctx_vol=_int(end, "ctx_vol", where),
        sliced_long=_int(end, "sliced_long", where),
        sliced_short=_int(end, "sliced_short", where),
        pf_entered=_int(end, "pf", where),
        invol_sensing=_int(end, "invol_sensing", where),
        invol_per_neighbour=[_int(f, "invol", where) for _, f in nbs],
        ctx_per_neighbour=[_int(f, "ctx", where) for _, f in nbs],
        busy=round((ticks - idle) / ticks, 6),
        busy_cycles=int((ticks - idle) * cpt),
        jobs=jobs,
        arrivals=arrivals,
        mean_processing_us=round(float(Fraction(e_sum, jobs) * us_per_tick), 2) if jobs else 0.0,
        p99_processing_us=round(float(percentile_upper(hist, int(head[1]), 0.99) * us_per_tick), 2),
        max_processing_us=round(float(e_max * us_per_tick), 2),
        sensing=_int(end, "sensing", where),
        dropped=_int(end, "dropped", where),
    )


# --------------------------------------------------------------------------- running


def run_model(board: Board, model: str, p: Params, timeout: float, root: Path | None = None,
              log_dir: Path | None = None, elf: Path | None = None) -> Run:
    """Build (unless elf is given) and run one model's seed003.elf; its Run."""
    if elf is None:
        elf = build.app_image(board.name, model, "seed003", root)
    with tempfile.TemporaryDirectory() as tmp:
        image = Path(tmp) / f"seed003-{model}.elf"
        patch_image(board, elf, image, p)
        result = run_image(board, image, timeout)
    out = result.stdout.decode("utf-8", "replace")
    if log_dir:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"seed003-{board.name}-{model}.log").write_text(out)
    if result.status != 0:
        tail = "\n".join(out.strip().splitlines()[-5:])
        raise TernError(f"seed003 {model}: the guest exited with status {result.status}"
                        f"{' (' + result.note + ')' if result.note else ''}:\n{tail}")
    return parse_output(out, model, board, p)


@dataclass(frozen=True)
class ModelJob:
    """One model's run, as it travels to a Dask worker (picklable)."""

    board: Board
    model: str
    params: Params
    timeout: float
    log_dir: Path | None
    elf: Path


def run_job(job: ModelJob) -> Run:
    return run_model(job.board, job.model, job.params, job.timeout, log_dir=job.log_dir, elf=job.elf)


def run_bench(board: Board, models: list[str], p: Params, timeout: float,
              root: Path | None = None, log_dir: Path | None = None,
              jobs: int = 1, scheduler: str | None = None) -> dict[str, Any]:
    """Build every model here, one after the other, then run them on `jobs`
    local Dask workers or the cluster at `scheduler` (terntools.executor)."""
    p.check()
    unsupported = [m for m in models if not board.supports(m)]
    if unsupported:
        raise UsageError(f"board {board.name} does not run model(s) {', '.join(unsupported)}")
    elves = [build.app_image(board.name, m, "seed003", root) for m in models]
    runs = executor.map_jobs(run_job, [ModelJob(board, m, p, timeout, log_dir, elf) for m, elf in zip(models, elves)],
                             workers=jobs, scheduler=scheduler)  # fmt: skip
    return {"board": board.name, "unit": board.unit, "cpu_hz": board.cpu_hz,
            "params": asdict(p), "runs": [asdict(r) for r in runs]}


# --------------------------------------------------------------------------- report


def cuts(doc: dict[str, Any]) -> dict[str, float] | None:
    """adaptive against threads, in % (None without both runs): fewer
    involuntary switches in all ("invol"), out of the sensing thread
    ("sensing") and out of the neighbours' forwarding threads ("neighbours",
    seed 003 Fig. 8 and 6.1: "the total number of context switches due to
    processing packets coming from all neighbors"), and the change of the
    mean processing time ("slower", + is slower)."""
    base = {r["model"]: r for r in doc["runs"]}
    if "threads" not in base or "adaptive" not in base:
        return None
    t, a = base["threads"], base["adaptive"]

    def cut(key: str) -> float:
        before, after = (sum(r[key]) if isinstance(r[key], list) else r[key] for r in (t, a))
        return 100 * (1 - after / before) if before else 0.0

    return {"invol": cut("ctx_invol"), "sensing": cut("invol_sensing"),
            "neighbours": cut("invol_per_neighbour"),
            "slower": 100 * (a["mean_processing_us"] / t["mean_processing_us"] - 1)}


def text_table(doc: dict[str, Any]) -> str:
    head = (f"{'model':9} {'invol':>6} {'sensing':>7} {'nbrs':>5} {'long':>5} {'short':>5} "
            f"{'vol':>6} {'ctx/neighbour':>24} {'busy[%]':>8} {'jobs':>6} {'mean[us]':>10} "
            f"{'p99[us]':>10}")
    rows = [head]
    for r in doc["runs"]:
        per = ",".join(str(c) for c in r["ctx_per_neighbour"])
        rows.append(f"{r['model']:9} {r['ctx_invol']:>6} {r['invol_sensing']:>7} "
                    f"{sum(r['invol_per_neighbour']):>5} {r['sliced_long']:>5} "
                    f"{r['sliced_short']:>5} {r['ctx_vol']:>6} {per:>24} "
                    f"{100 * r['busy']:>8.3f} {r['jobs']:>6} {r['mean_processing_us']:>10.1f} "
                    f"{r['p99_processing_us']:>10.1f}")
    rows.append("invol: involuntary switches; sensing, nbrs: of them, out of the sensing thread and "
                "out of the neighbours' threads; long, short: of them, a quantum that ended on a "
                "thread that held a full one (long) or the rest of one (short)")
    c = cuts(doc)
    if c is not None:
        rows.append(f"adaptive vs threads: {c['invol']:.1f} % fewer involuntary switches "
                    f"({c['sensing']:.1f} % fewer out of the sensing thread, {c['neighbours']:.1f} % "
                    f"fewer out of the neighbours' threads), mean processing time {c['slower']:+.1f} %")
    return "\n".join(rows) + "\n"


def write_plots(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    """Seed 003 Figs. 7-9: busy cycles, switches per neighbour, processing time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    runs = doc["runs"]
    models = [r["model"] for r in runs]
    paths = []

    def save(fig: Any, name: str) -> None:
        path = out_dir / name
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(models, [r["busy_cycles"] for r in runs])
    ax.set_ylabel(f"busy {doc['unit']}")
    ax.set_title(f"CPU work in the window ({doc['board']})")
    save(fig, "seed003-busy.png")

    # Fig. 8: involuntary switches per neighbour (and of the sensing thread)
    threaded = [r for r in runs if r["model"] in THREAD_MODELS]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    n = len(threaded[0]["invol_per_neighbour"]) if threaded else 0
    width = 0.8 / max(1, len(threaded))
    for i, r in enumerate(threaded):
        ax.bar([k + i * width for k in range(n + 1)], [*r["invol_per_neighbour"], r["invol_sensing"]],
               width, label=r["model"])
    ax.set_xticks([k + 0.4 - width / 2 for k in range(n + 1)], [*(f"nbr {k}" for k in range(n)), "sensing"])
    ax.set_yscale("log")
    ax.set_ylabel("involuntary switches out of it")
    ax.legend()
    ax.set_title("Involuntary context switches per thread")
    save(fig, "seed003-ctx.png")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(models, [r["mean_processing_us"] for r in runs], label="mean")
    ax.plot(models, [r["p99_processing_us"] for r in runs], "o", color="black", label="p99")
    ax.set_ylabel("processing time [us]")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("Forwarding job processing time")
    save(fig, "seed003-processing.png")
    return paths
