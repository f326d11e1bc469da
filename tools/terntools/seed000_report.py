"""Presentation of a seed-000 sweep: text table, markdown report with the
paper's reference points, and plots in the style of seed 000 Figs. 6-11.

Mapping to the paper: TinyOS is the `fifo` model (run to completion, FIFO
dispatch), MANTIS is the `threads` model (preemptive priority threads). The
other models have no counterpart in seed 000 and are shown beside them; when
a sweep has no `threads` run, the paired comparisons take `stack` (which
preempts the sensing job for a packet, as MANTIS does) and say so.
"""
from __future__ import annotations

import os

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from terntools import seed000_targets  # noqa: E402
from terntools.metrics import L_P_CYCLES  # noqa: E402

Run = dict[str, Any]
TINYOS = "fifo"
MANTIS = "threads"
# A board without MANTIS' threads still has a preemptive model to set against
# run-to-completion: `stack` preempts sensing for a packet as threads would.
MANTIS_STAND_INS = ("stack",)

# (header, key, format, scale): scale converts the JSON unit to the shown one.
COLUMNS: tuple[tuple[str, str, str, float], ...] = (
    ("model", "model", "s", 1.0),
    ("n", "n", "d", 1.0),
    ("l_s[ms]", "l_s_ms", "d", 1.0),
    ("jobs", "jobs", "d", 1.0),
    ("E_t[us]", "E_t", ".1f", 1.0),
    ("sd[us]", "E_t_sd", ".1f", 1.0),
    ("p99[us]", "E_t_p99", ".1f", 1.0),
    ("I_t[%]", "I_t", ".3f", 1.0),
    ("I_max[%]", "I_max", ".3f", 1.0),
    ("I_o[%]", "I_o", ".3f", 1.0),
    ("I_p[ms]", "I_p", ".2f", 1e-3),
    ("ctx", "ctx_switches", "d", 1.0),
    ("preempt", "preemptions", "d", 1.0),
    ("dropped", "dropped", "d", 1.0),
)


def _cell(run: Run, key: str, fmt: str, scale: float) -> str:
    value = run.get(key)
    if value is None:
        return "-"
    if fmt == "s":
        return str(value)
    if fmt == "d":
        return f"{int(value):d}"
    return format(value * scale, fmt)


# Shown only when the runs differ in them (a document merged from sweeps of
# different lengths or commits: `tern bench seed000 --merge`).
PROVENANCE: tuple[tuple[str, str, str, float], ...] = (("periods", "samples", "d", 1.0), ("commit", "commit", "s", 1.0))


def _columns(runs: Sequence[Run]) -> tuple[tuple[str, str, str, float], ...]:
    varying = tuple(c for c in PROVENANCE if len({str(r.get(c[1])) for r in runs}) > 1)
    return COLUMNS + varying


def table_rows(runs: Sequence[Run]) -> list[list[str]]:
    """Header row then one row of cells per run."""
    columns = _columns(runs)
    rows = [[c[0] for c in columns]]
    rows += [[_cell(r, key, fmt, scale) for _, key, fmt, scale in columns] for r in runs]
    return rows


def provenance(runs: Sequence[Run]) -> str:
    """How long each run is and which commit it ran on, grouped: one phrase
    when every run agrees, else one per group naming its runs."""
    groups: dict[tuple[str, str], list[Run]] = {}
    for r in runs:
        groups.setdefault((str(r.get("samples", "n/a")), str(r.get("commit", "not recorded"))), []).append(r)
    if len(groups) == 1:
        (samples, commit), = groups
        return f"Samples (1 s sensing periods) per run: {samples}, commit {commit}."
    parts = []
    headline = {id(r) for r in headline_runs(runs)}
    named = [{id(r) for r in g} == headline for g in groups.values()]
    for ((samples, commit), group), is_headline in zip(groups.items(), named):
        if is_headline:
            which = "the headline runs (n = 1, 8; l_s = 1, 75 ms)"
        elif len(groups) == 2 and any(named):
            which = f"the other {len(group)} runs"
        else:
            which = f"{len(group)} runs"
        parts.append(f"{samples} sensing periods of 1 s, commit {commit}: {which}")
    return ("The runs differ in length and commit (the periods and commit columns say which is which): "
            + "; ".join(parts) + ".")


def text_table(runs: Sequence[Run]) -> str:
    """Fixed-width table for the terminal: model/n left, numbers right-aligned."""
    rows = table_rows(runs)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def markdown_table(runs: Sequence[Run]) -> str:
    rows = table_rows(runs)
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join(["---"] + ["---:"] * (len(rows[0]) - 1)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out) + "\n"


HEADLINE_N = (1, 8)  # the lightest and the busiest node of Table I
HEADLINE_LS_MS = (1, 75)  # the paper's short and long sensing job


def headline_runs(runs: Sequence[Run]) -> list[Run]:
    """The runs of the headline table (n = 1, 8; l_s = 1, 75 ms), in sweep order."""
    return [r for r in runs if r["n"] in HEADLINE_N and r["l_s_ms"] in HEADLINE_LS_MS]


# --------------------------------------------------------------------------- reference points


class RunIndex:
    """Look up runs by (model, n, l_s)."""

    def __init__(self, runs: Iterable[Run]) -> None:
        self.runs = list(runs)
        self._by = {(r["model"], r["n"], r["l_s_ms"]): r for r in self.runs}

    def get(self, model: str, n: int, ls: int, key: str) -> float | None:
        run = self._by.get((model, n, ls))
        return None if run is None else run.get(key)

    def models(self) -> list[str]:
        return list(dict.fromkeys(r["model"] for r in self.runs))

    def origin(self, model: str, n: int, ls: int) -> tuple[Any, Any]:
        """(periods, commit) of a run: runs that differ in them are not compared."""
        run = self._by.get((model, n, ls))
        return (None, None) if run is None else (run.get("samples"), run.get("commit"))

    def preemptive(self) -> str:
        """The model in MANTIS' place: threads, else a stand-in that was measured."""
        present = self.models()
        if MANTIS in present:
            return MANTIS
        return next((m for m in MANTIS_STAND_INS if m in present), MANTIS)

    def ls_values(self) -> list[int]:
        return sorted({r["l_s_ms"] for r in self.runs})

    def n_values(self) -> list[int]:
        return sorted({r["n"] for r in self.runs})


def _fmt(value: float | None, unit: str, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f} {unit}".rstrip()


def _per_model(idx: RunIndex, n: int, ls: int, key: str, unit: str, scale: float = 1.0, digits: int = 1) -> str:
    parts = []
    for m in idx.models():
        v = idx.get(m, n, ls, key)
        parts.append(f"{m} {_fmt(None if v is None else v * scale, unit, digits)}")
    return "; ".join(parts) or "n/a"


def _diff(idx: RunIndex, n: int, ls: int, key: str, unit: str, digits: int = 2) -> str:
    other = idx.preemptive()
    a, b = idx.get(TINYOS, n, ls, key), idx.get(other, n, ls, key)
    if a is None or b is None:
        return f"n/a (needs {TINYOS} and {other} at n={n}, l_s={ls} ms)"
    return f"{TINYOS} - {other} = {a - b:.{digits}f} {unit}"


def _ratio(idx: RunIndex, n: int, ls: int, num: str, den: str) -> str:
    a, b = idx.get(num, n, ls, "E_t"), idx.get(den, n, ls, "E_t")
    if a is None or b is None or b == 0:
        return f"n/a (needs {num} and {den} at n={n}, l_s={ls} ms)"
    change = (a / b - 1) * 100
    return f"{num} E_t is {abs(change):.1f} % {'longer' if change >= 0 else 'shorter'} than {den}"


def _et_growth(idx: RunIndex) -> str:
    parts = [f"{ls} ms: {_fmt(idx.get(TINYOS, 1, ls, 'E_t'), 'us')}" for ls in idx.ls_values()]
    return f"{TINYOS} E_t at n=1 by l_s: " + ", ".join(parts) if parts else "n/a"


def _dispatch(idx: RunIndex, doc: dict[str, Any]) -> str:
    """The fastest job minus its own work, in the board's unit (instructions on QEMU
    boards): the interrupt-to-handler path with nothing in the way. Falls back to the
    mean E_t for records without E_t_min."""
    cpu_hz, unit = doc["cpu_hz"], doc.get("unit", "cycles")
    parts = []
    key = "E_t_min" if all(idx.get(m, 1, 1, "E_t_min") is not None for m in idx.models()) else "E_t"
    for m in idx.models():
        v = idx.get(m, 1, 1, key)
        parts.append(f"{m} {'n/a' if v is None else f'{v * cpu_hz / 1e6 - L_P_CYCLES:.0f} {unit}'}")
    label = "min e" if key == "E_t_min" else "E_t"
    return f"{label} - l_p at n=1, l_s=1 ms: " + "; ".join(parts) if parts else "n/a"


@dataclass(frozen=True)
class Reference:
    """One number the paper reports, where it says it, and how we compute ours."""

    what: str
    paper: str
    source: str
    ours: Callable[[RunIndex, dict[str, Any]], str]  # (runs, the whole document)


REFERENCES: tuple[Reference, ...] = (
    Reference(
        "TinyOS E_t grows with l_s",
        '"the average processing time for the packet forwarding task E_t depends on the length of the sensing l_s"',
        "Sec. VI-D, Fig. 6 b)",
        lambda idx, doc: _et_growth(idx),
    ),
    Reference(
        "sigma(E_t), TinyOS, n=1, l_s=75 ms",
        '"Variation TinyOS 58ms"',
        "Sec. VIII-A (Fig. 7)",
        lambda idx, doc: _per_model(idx, 1, 75, "E_t_sd", "ms", 1e-3, 3),
    ),
    Reference(
        "sigma(E_t), MANTIS, n=1, l_s=75 ms",
        '"Variation MANTIS 34µs"',
        "Sec. VIII-A (Fig. 7)",
        lambda idx, doc: _per_model(idx, 1, 75, "E_t_sd", "us"),
    ),
    Reference(
        "MANTIS interrupt-to-task cost",
        '"approximately 1200 clock cycles from the time the interrupt occurs til the time the tasks starts executing"',
        "Sec. VI-B",
        _dispatch,
    ),
    Reference(
        "E_t, MANTIS vs TinyOS, n=1, l_s=1 ms",
        '"MANTIS has an 17.15% longer average packet forwarding task execution time than TinyOS"',
        "Sec. VIII-A",
        lambda idx, doc: _ratio(idx, 1, 1, idx.preemptive(), TINYOS),
    ),
    Reference(
        "E_t, TinyOS vs MANTIS, n=1, l_s=75 ms",
        '"TinyOS has an 204% longer average packet forwarding task execution time than MANTIS"',
        "Sec. VIII-A",
        lambda idx, doc: _ratio(idx, 1, 75, TINYOS, idx.preemptive()),
    ),
    Reference(
        "idle time difference, n=1, l_s=1 ms",
        '"TinyOS is only 0.09% more energy-efficient than MANTIS"',
        "Sec. VII-D (Fig. 9)",
        lambda idx, doc: _diff(idx, 1, 1, "I_t", "points"),
    ),
    Reference(
        "idle time difference, n=8, l_s=1 ms",
        '"TinyOS is 7.6% more energy-efficient"',
        "Sec. VII-D (Fig. 9)",
        lambda idx, doc: _diff(idx, 8, 1, "I_t", "points"),
    ),
    Reference(
        "idle time difference, n=8, l_s=75 ms",
        '"only a 7.05% difference in the idle time is encountered"',
        "Sec. VII-E (Fig. 10)",
        lambda idx, doc: _diff(idx, 8, 75, "I_t", "points"),
    ),
    Reference(
        "OS overhead I_o, n=8, l_s=75 ms",
        '"MANTIS has an increasing overhead with the increasing activity of the system" (~7 % at n=8)',
        "Sec. VII-D, Fig. 10 b)",
        lambda idx, doc: _per_model(idx, 8, 75, "I_o", "%", 1.0, 2),
    ),
    Reference(
        "idle period length I_p, n=1, l_s=1 ms",
        '"Idle Time Length for TinyOS is 499ms and Idle time for Mantis is 490ms"',
        "Sec. VIII-A (Fig. 11)",
        lambda idx, doc: _per_model(idx, 1, 1, "I_p", "ms", 1e-3, 1),
    ),
    Reference(
        "idle period length I_p, n=8, l_s=1 ms",
        '"Idle Time Length for TinyOS is 3.8ms and Idle Time for Mantis is 3.9ms"',
        "Sec. VIII-A (Fig. 11)",
        lambda idx, doc: _per_model(idx, 8, 1, "I_p", "ms", 1e-3, 2),
    ),
)


@dataclass(frozen=True)
class Target:
    """One of the benchmark's targets (issue 6), checked against a sweep."""

    what: str
    measured: str
    met: bool | None  # None: the sweep lacks the runs to tell


def targets(idx: RunIndex, cpu_hz: float) -> list[Target]:
    """The targets of the seed-000 benchmark: the stack model answers in
    l_p plus 5 % and steadily, idles no less than fifo, and the paper's two
    shapes (fifo's E_t coupled to l_s, the threaded one flat) show."""
    out: list[Target] = []
    l_p_us = L_P_CYCLES * 1e6 / cpu_hz
    et = idx.get("stack", 1, 75, "E_t")
    sd = idx.get("stack", 1, 75, "E_t_sd")
    out.append(Target(
        f"`stack`, n = 1, l_s = 75 ms: E_t <= 1.05 l_p ({1.05 * l_p_us:g} us)", _fmt(et, "us"),
        None if et is None else et <= 1.05 * l_p_us))
    out.append(Target(
        "`stack`, n = 1, l_s = 75 ms: sd(E_t) <= 20 us", _fmt(sd, "us"), None if sd is None else sd <= 20.0))
    worst: tuple[float, int, int] | None = None
    for n in idx.n_values():
        for ls in idx.ls_values():
            stack, fifo = idx.get("stack", n, ls, "I_o"), idx.get(TINYOS, n, ls, "I_o")
            comparable = idx.origin("stack", n, ls) == idx.origin(TINYOS, n, ls)
            if stack is not None and fifo is not None and comparable and (worst is None or stack - fifo > worst[0]):
                worst = (stack - fifo, n, ls)
    out.append(Target(
        "I_o of `stack` <= I_o of `fifo` + 0.5 points, every n and l_s",
        "n/a" if worst is None else f"largest excess {worst[0]:+.2f} points (n = {worst[1]}, l_s = {worst[2]} ms)",
        None if worst is None else worst[0] <= 0.5))
    sensing = idx.ls_values()
    shapes: tuple[tuple[str, str, Callable[[float], bool]], ...] = (
        (TINYOS, "grows with l_s (E_t at the longest l_s > 1.5 x at the shortest)", lambda r: r > 1.5),
        (MANTIS, "stays flat (within 5 % from the shortest to the longest l_s)", lambda r: abs(r - 1) <= 0.05),
    )
    for model, shape, test in shapes:
        # the widest span of l_s among runs of one length and commit: runs of a
        # merged document that differ in either are not set against each other
        spans: dict[tuple[Any, Any], list[int]] = {}
        for ls in sensing:
            if idx.get(model, 1, ls, "E_t") is not None:
                spans.setdefault(idx.origin(model, 1, ls), []).append(ls)
        span = max(spans.values(), key=lambda v: (v[-1] - v[0], len(v)), default=[])
        lo = idx.get(model, 1, span[0], "E_t") if span else None
        hi = idx.get(model, 1, span[-1], "E_t") if span else None
        ratio = None if lo is None or hi is None or len(span) < 2 else hi / lo
        out.append(Target(
            f"`{model}` E_t at n = 1 {shape}",
            "n/a" if ratio is None else f"{span[-1]} ms / {span[0]} ms = {ratio:.3f}",
            None if ratio is None else test(ratio)))
    return out


def _verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "**missed**")


def markdown_report(doc: dict[str, Any], plots: Sequence[Path] = (), report_dir: Path | None = None) -> str:
    """The whole report: setup, results table, the paper beside ours, plots."""
    runs = doc["runs"]
    idx = RunIndex(runs)
    lines = [
        f"# Seed 000 benchmark on {doc['board']}",
        "",
        f"Board `{doc['board']}`, time unit of the emulator: {doc['unit']}; scenario CPU {doc['cpu_hz'] / 1e6:g} MHz "
        f"(times in µs of that CPU). {provenance(runs)} Arrival seed {doc.get('seed', 'n/a')}. "
        f"Model mapping to the paper: TinyOS = `{TINYOS}`, MANTIS = `{MANTIS}`."
        + (
            f" There is no `{MANTIS}` run here, so the comparisons set `{idx.preemptive()}` (preemptive) "
            "against it in MANTIS' place."
            if idx.preemptive() != MANTIS
            else ""
        ),
        "",
        "E_t: mean forwarding job time (eq. 2); sd: population standard deviation; p99: nearest-rank 99th "
        "percentile; I_t (eq. 3), I_max (eq. 4), I_o = I_max - I_t (eq. 5) in percent; I_p: mean idle period (eq. 6).",
        "",
    ]
    if doc.get("skipped_models"):
        lines += [f"Models not available on this board: {', '.join(doc['skipped_models'])}.", ""]
    if doc.get("failures"):
        lines += ["Failed configurations:", ""] + [f"- {f}" for f in doc["failures"]] + [""]
    headline = headline_runs(runs)
    if headline and len(headline) < len(runs):
        lines += ["## Headline (n = 1, 8; l_s = 1, 75 ms)", "", markdown_table(headline)]
    lines += ["## Results", "", markdown_table(runs), "## Seed 000 reference points", ""]
    lines += ["| quantity | seed 000 says | where | ours |", "|---|---|---|---|"]
    for ref in REFERENCES:
        lines.append(f"| {ref.what} | {ref.paper} | {ref.source} | {ref.ours(idx, doc)} |")
    lines += ["", "## Targets (issue 6; benchmarks, not tests)", "", "| target | measured | |", "|---|---|---|"]
    for t in targets(idx, doc["cpu_hz"]):
        lines.append(f"| {t.what} | {t.measured} | {_verdict(t.met)} |")
    lines.append("")
    if doc.get("issue17") or doc["board"] == "atmega128":
        lines += seed000_targets.markdown(doc)
    if plots:
        lines += ["## Plots", ""]
        for p in plots:
            rel = Path(os.path.relpath(p.resolve(), report_dir)) if report_dir else p
            lines += [f"![{p.stem}]({rel.as_posix()})", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- plots


def _series(runs: Sequence[Run], model: str, ls: int, key: str) -> tuple[list[int], list[float]]:
    pts = sorted((r["n"], r[key]) for r in runs if r["model"] == model and r["l_s_ms"] == ls and r.get(key) is not None)
    return [p[0] for p in pts], [p[1] for p in pts]


def _panels(count: int) -> tuple[Any, list[Any]]:
    cols = min(count, 4)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _per_ls_plot(
    runs: Sequence[Run], ls_values: Sequence[int], key: str, ylabel: str, scale: float, title: str, path: Path,
    with_i_max: bool = False,
) -> Path:
    idx = RunIndex(runs)
    fig, axes = _panels(len(ls_values))
    for ax, ls in zip(axes, ls_values):
        for model in idx.models():
            xs, ys = _series(runs, model, ls, key)
            if xs:
                ax.plot(xs, np.asarray(ys) * scale, marker="o", label=model)
        if with_i_max:
            xs, ys = _series(runs, idx.models()[0], ls, "I_max") if idx.models() else ([], [])
            if xs:
                ax.plot(xs, ys, "k--", label="I_max")
        ax.set_title(f"l_s = {ls} ms")
        ax.set_xlabel("tree depth n")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    return _save(fig, path)


def _idle_period_plot(runs: Sequence[Run], ls_values: Sequence[int], path: Path) -> Path:
    idx = RunIndex(runs)
    fig, axes = _panels(len(ls_values))
    for ax, ls in zip(axes, ls_values):
        for model in idx.models():
            pts = sorted(
                (r["n"], r["I_p"], r["I_p_sd"])
                for r in runs
                if r["model"] == model and r["l_s_ms"] == ls and r.get("I_p") is not None
            )
            if pts:
                arr = np.asarray(pts, dtype=float)
                ax.errorbar(arr[:, 0], arr[:, 1] / 1e3, yerr=arr[:, 2] / 1e3, marker="o", capsize=3, label=model)
        ax.set_title(f"l_s = {ls} ms")
        ax.set_xlabel("tree depth n")
        ax.set_ylabel("idle period I_p ± sd [ms]")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Idle period length (cf. seed 000 Fig. 11)")
    return _save(fig, path)


def sd_plot_ls(available: Sequence[int]) -> list[int]:
    """The l_s values of the sigma(E_t) figure: 75 and 1 ms as in seed 000
    Figs. 7 and 8, or the largest and smallest measured when those are missing."""
    chosen = [ls for ls in (75, 1) if ls in available]
    if not chosen and available:
        chosen = sorted({max(available), min(available)}, reverse=True)
    return chosen


def write_plots(runs: Sequence[Run], out_dir: Path) -> list[Path]:
    """PNG figures of a sweep in the style of seed 000 Figs. 6-11; returns their paths."""
    if not runs:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    ls_all = RunIndex(runs).ls_values()
    return [
        _per_ls_plot(runs, ls_all, "E_t", "E_t [µs]", 1.0, "Mean forwarding job time (cf. seed 000 Fig. 6)",
                     out_dir / "seed000_E_t.png"),
        _per_ls_plot(runs, sd_plot_ls(ls_all), "E_t_sd", "sd(E_t) [µs]", 1.0,
                     "Standard deviation of the job time (cf. seed 000 Figs. 7, 8)", out_dir / "seed000_E_t_sd.png"),
        _per_ls_plot(runs, ls_all, "I_t", "idle time I_t [%]", 1.0, "Idle time and I_max (cf. seed 000 Figs. 9, 10 a)",
                     out_dir / "seed000_I_t.png", with_i_max=True),
        _per_ls_plot(runs, ls_all, "I_o", "OS overhead I_o [% points]", 1.0, "OS overhead (cf. seed 000 Fig. 10 b)",
                     out_dir / "seed000_I_o.png"),
        _idle_period_plot(runs, ls_all, out_dir / "seed000_I_p.png"),
    ]  # fmt: skip
