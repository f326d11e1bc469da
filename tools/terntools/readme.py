"""The result tables of README.md, generated from the benchmark JSON kept in
docs/ (`tern docs readme`), so the README never carries a number by hand.

A generated table sits between two marker lines,

    <!-- generated: seed000 mps2-an385 -->
    ...
    <!-- end generated -->

whose first names the table kind and the board; everything between them
is replaced. Kinds: seed000 (docs/seed000/BOARD.json, headline runs),
seed000targets (the same JSON: issue 17's targets, met or missed),
seed003 (docs/seed003/BOARD.json), micro (docs/micro/BOARD.json).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from terntools import seed000_targets
from terntools.errors import UsageError
from terntools.seed000_report import headline_runs

MARKER = re.compile(r"^<!-- generated: (\w+) ([\w-]+) -->\n(.*?)^<!-- end generated -->$", re.M | re.S)

# The microbenchmarks the README summarises (every one is in docs/benchmarks.md).
MICRO_SUMMARY = (
    "timer_delay", "alarm_delay", "irq_to_handler_preempt", "irq_to_handler_idle", "msg_roundtrip",
    "sem_roundtrip", "yield_roundtrip", "kernel_text", "min_app_bss",
)  # fmt: skip


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def seed000_table(doc: dict[str, Any]) -> str:
    """The headline runs (n = 1, 8; l_s = 1, 75 ms) with the paper's metrics."""
    header = ["model", "n", "l_s", "E_t [µs]", "σ(E_t) [µs]", "I_t [%]", "I_max [%]", "I_o [points]",
              "context switches"]  # fmt: skip
    rows = [[r["model"], str(r["n"]), f"{r['l_s_ms']} ms", f"{r['E_t']:.1f}", f"{r['E_t_sd']:.1f}",
             f"{r['I_t']:.2f}", f"{r['I_max']:.2f}", f"{r['I_o']:.2f}", str(r["ctx_switches"])]
            for r in headline_runs(doc["runs"])]  # fmt: skip
    return _table(header, rows)


def seed000_targets_table(doc: dict[str, Any]) -> str:
    """Issue 17's targets, measured and marked; the reasons are in the report (docs/seed000/BOARD.md)."""
    verdict = {None: "n/a", True: "met", False: "**missed**"}
    lines = ["| target | measured | |", "|---|---|---|"]
    lines += [f"| {r.what} | {r.measured} | {verdict[r.met]} |" for r in seed000_targets.rows(doc)]
    return "\n".join(lines)


def seed003_table(doc: dict[str, Any]) -> str:
    header = ["model", "involuntary", "of the sensing thread", "of the neighbours' threads", "voluntary",
              "busy [%]", "jobs", "mean processing [µs]", "p99 [µs]"]  # fmt: skip
    rows = [[r["model"], str(r["ctx_invol"]), str(r["invol_sensing"]), str(sum(r["invol_per_neighbour"])),
             str(r["ctx_vol"]), f"{100 * r['busy']:.1f}", str(r["jobs"]), f"{r['mean_processing_us']:.1f}",
             f"{r['p99_processing_us']:.1f}"] for r in doc["runs"]]  # fmt: skip
    return _table(header, rows)


def micro_table(doc: dict[str, Any]) -> str:
    """Averages per model; footprints in bytes; "-" where a model has no such benchmark."""
    models: list[str] = list(doc["models"])
    idx = {(r["model"], r["name"]): r for r in doc["results"]}
    rows = []
    for name in MICRO_SUMMARY:
        cells = [name]
        for m in models:
            r = idx.get((m, name))
            cells.append("-" if r is None else f"{int(r['avg'])} B" if r.get("unit") == "bytes" else f"{r['avg']:.0f}")
        rows.append(cells)
    table = _table(["benchmark", *models], rows)
    for m, why in doc.get("not_run", {}).items():
        table += f"\n\n`{m}`: not run, {why}."
    return table


KINDS: dict[str, Callable[[dict[str, Any]], str]] = {
    "seed000": seed000_table,
    "seed000targets": seed000_targets_table,
    "seed003": seed003_table,
    "micro": micro_table,
}
# the docs/ directory of a kind's JSON, where it is not the kind's own name
SOURCE_DIR = {"seed000targets": "seed000"}


def fill(text: str, docs_dir: Path) -> tuple[str, list[str]]:
    """text with every generated block rewritten from docs_dir/KIND/BOARD.json;
    also the blocks rewritten, as "KIND BOARD"."""
    done: list[str] = []

    def block(m: re.Match[str]) -> str:
        kind, board = m[1], m[2]
        if kind not in KINDS:
            raise UsageError(f"README block '{kind} {board}': unknown kind (known: {', '.join(KINDS)})")
        path = docs_dir / SOURCE_DIR.get(kind, kind) / f"{board}.json"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"README block '{kind} {board}': cannot read {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise UsageError(f"README block '{kind} {board}': {path} is not valid JSON ({exc.msg})") from None
        done.append(f"{kind} {board}")
        return f"<!-- generated: {kind} {board} -->\n{KINDS[kind](doc)}\n<!-- end generated -->"

    return MARKER.sub(block, text), done
