"""Seed 002's evaluation 3: task migration latency against the size of the
task's state and the number of modules (processors on the node's bus).

Runs apps/migrate_big (apps/migrate with up to 1 kB of pad and five modules)
in tern-sim on n = 2..5 ATmega1284P modules at 20 MHz: the counter moves
between modules 1 and 2 with 0, 256, 512 and 1,024 bytes of pad while two
senders stream messages to it, and each module beyond the second takes part
in every move (its migrator freezes its senders and replies). Each source
prints the latency of its moves, from the request to the destination's result,
on its own clock; this module reads those lines, fits latency = a + b * bytes
per n and over all runs, and writes JSON, a table and a plot.

Seed 002: 3.5 ms + 0.013 ms/byte on 6 MHz MSP430s (two modules).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from terntools import comos
from terntools.errors import TernError
from terntools.scenario import load_scenario
from terntools.sim import run as sim_run

SEED002 = {"intercept_ms": 3.5, "slope_ms_per_byte": 0.013, "clock_hz": 6_000_000}
MODULES = (2, 3, 4, 5)
PPM = (0, 20, -20, 5, -10)  # module clocks' errors, as in docs/sim/migrate_bench.toml and beyond
CLOCK_HZ = 20_000_000  # module-m1284

LATENCY = re.compile(r"^migrate (\d+): counter (moved|stayed) \((\w+)\) now on module (\d+) "
                     r"state (\d+) bytes latency (\d+) cycles (\d+) us$")


def scenario_text(n: int) -> str:
    """docs/sim/migrate_bench.toml's node with n modules; the run is as long
    as the app's stretched steps need (n / 2 times two modules' 3 s)."""
    out = [f"# tern bench comos migration: {n} modules (generated)\n",
           f"[sim]\nduration = {1.5 * n + 1:.1f}\nseed = 1\n\n",
           "[[bus]]\nname = \"node1\"\nthroughput = 2000000\nslot_us = 300\nlatency_us = 20\nrx_frames = 2\n"]
    for i in range(n):
        out.append(f"\n[[node]]\nname = \"m{i + 1}\"\nboard = \"module-m1284\"\napp = \"migrate_big\"\n"
                   f"model = \"priority\"\nbus = \"node1\"\nppm = {PPM[i]}\n")
    return "".join(out)


def parse_console(text: str, node: str) -> list[dict[str, Any]]:
    """The timed moves a module printed; a module that printed a 'bad' check fails the run."""
    if " bad " in text or "unfinished" in text:
        raise TernError(f"{node}: apps/migrate failed a check: " + next(
            x for x in text.splitlines() if " bad " in x or "unfinished" in x))
    rows = []
    for line in text.splitlines():
        m = LATENCY.match(line.strip())
        if m:
            rows.append({"source": int(m[1]), "outcome": m[2], "status": m[3], "now_on": int(m[4]),
                         "state_bytes": int(m[5]), "cycles": int(m[6]), "us": int(m[7])})
    return rows


def fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Least squares y = a + b x."""
    n = len(points)
    if n < 2:
        raise TernError("a line needs two points")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        raise TernError("all points at one state size: no slope")
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - b * mx, b


def run_modules(n: int, work: Path, *, do_build: bool) -> dict[str, Any]:
    out = work / f"modules-{n}"
    out.mkdir(parents=True, exist_ok=True)
    toml = out / "scenario.toml"
    toml.write_text(scenario_text(n))
    result = sim_run(load_scenario(toml), out, do_build=do_build)
    summary = json.loads((out / "summary.json").read_text())
    moves: list[dict[str, Any]] = []
    for node in summary["nodes"]:
        if node["status"] != "exit" or node["exit_status"] != 0:
            raise TernError(f"{n} modules: {node['name']} ended {node['status']} {node['exit_status']} (see {out})")
        moves += parse_console((out / "console" / f"{node['name']}.txt").read_text(), node["name"])
    del result
    ok = [m for m in moves if m["outcome"] == "moved"]
    if len(ok) != 8:
        raise TernError(f"{n} modules: {len(ok)} timed moves, 8 expected (see {out})")
    a_us, b_us = fit([(m["state_bytes"], m["us"]) for m in ok])
    a_cy, b_cy = fit([(m["state_bytes"], m["cycles"]) for m in ok])
    return {"modules": n, "moves": moves, "intercept_ms": a_us / 1000, "slope_ms_per_byte": b_us / 1000,
            "intercept_cycles": a_cy, "slope_cycles_per_byte": b_cy}


def run_bench(work: Path, modules: Sequence[int] = MODULES) -> dict[str, Any]:
    runs = [run_modules(n, work, do_build=i == 0) for i, n in enumerate(modules)]
    every = [(m["state_bytes"], m["us"]) for r in runs for m in r["moves"] if m["outcome"] == "moved"]
    a, b = fit(every)
    return {"experiment": "migration", "command": "./tern bench comos migration", "unit": "latency: cycles and simulated us on the source "
            "module's clock (ATmega1284P, 20 MHz)", "clock_hz": CLOCK_HZ,
            "bus": {"throughput_bps": 2_000_000, "slot_us": 300, "latency_us": 20},
            "runs": runs, "fit_all": {"intercept_ms": a / 1000, "slope_ms_per_byte": b / 1000},
            "seed002": SEED002}


def markdown(doc: dict[str, Any]) -> str:
    out = [f"```sh\n{doc['command']}\n```\n\n{doc['unit']}; bus 2 Mbit/s, 300 us TDMA slots per module.\n\n",
           "| modules | state (bytes) | 1 → 2 (cycles / us) | 2 → 1 (cycles / us) |\n|--:|--:|--:|--:|\n"]
    for r in doc["runs"]:
        by: dict[int, dict[int, dict[str, Any]]] = {}
        for m in r["moves"]:
            if m["outcome"] == "moved":
                by.setdefault(m["state_bytes"], {})[m["source"]] = m
        for size in sorted(by):
            cells = [f"{by[size][s]['cycles']:,} / {by[size][s]['us']:,}" if s in by[size] else "-" for s in (0, 1)]
            out.append(f"| {r['modules']} | {size:,} | {cells[0]} | {cells[1]} |\n")
    out.append("\n| modules | fit: intercept (ms) | slope (ms/byte) | intercept (cycles) | slope (cycles/byte) |\n"
               "|--:|--:|--:|--:|--:|\n")
    for r in doc["runs"]:
        out.append(f"| {r['modules']} | {r['intercept_ms']:.2f} | {r['slope_ms_per_byte']:.4f} "
                   f"| {r['intercept_cycles']:,.0f} | {r['slope_cycles_per_byte']:.1f} |\n")
    f, s = doc["fit_all"], doc["seed002"]
    out.append(f"| all | {f['intercept_ms']:.2f} | {f['slope_ms_per_byte']:.4f} | | |\n"
               f"| seed 002 (2 MSP430s, 6 MHz) | {s['intercept_ms']} | {s['slope_ms_per_byte']} | "
               f"{s['intercept_ms'] * s['clock_hz'] / 1000:,.0f} | {s['slope_ms_per_byte'] * s['clock_hz'] / 1000:.0f} |\n")
    return "".join(out)


def plot(doc: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in doc["runs"]:
        pts = [(m["state_bytes"], m["us"] / 1000) for m in r["moves"] if m["outcome"] == "moved"]
        line = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", label=f"{r['modules']} modules: "
                       f"{r['intercept_ms']:.2f} ms + {r['slope_ms_per_byte']:.4f} ms/B")[0]
        ax.plot([0, 1100], [r["intercept_ms"], r["intercept_ms"] + 1100 * r["slope_ms_per_byte"]], "-",
                color=line.get_color(), lw=1)
    s = doc["seed002"]
    ax.plot([0, 1100], [s["intercept_ms"], s["intercept_ms"] + 1100 * s["slope_ms_per_byte"]], "k--", lw=1,
            label="seed 002: 3.5 ms + 0.013 ms/B (MSP430, 6 MHz)")
    ax.set_xlabel("task state serialized (bytes)")
    ax.set_ylabel("migration latency (ms, source clock)")
    ax.set_title("tern: migration latency, ATmega1284P modules on tern-sim's bus")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _modules(text: str) -> list[int]:
    try:
        ns = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not ns or any(n < 2 or n > 5 for n in ns):
        raise argparse.ArgumentTypeError(f"module counts are 2 to 5 (apps/migrate_big): {text!r}")
    return ns


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--modules", type=_modules, default=list(MODULES),
                   help="numbers of modules on the bus, comma-separated (default 2,3,4,5)")


@comos.experiment("migration", help="evaluation 3: migration latency against state size and number of modules",
                  description="Run apps/migrate_big in tern-sim on 2 to 5 ATmega1284P modules; each moves a "
                  "task with 10 to 1,034 bytes of state both ways under message traffic. Fits latency = a + "
                  "b * bytes per module count (cycles and simulated us on the source's 20 MHz clock); writes "
                  "OUT/migration.json, .md and .png.",
                  add_arguments=_arguments)
def run(args: argparse.Namespace) -> int:
    doc = run_bench(args.work / "migration", args.modules)
    text = markdown(doc)
    comos.write_outputs(doc, args.out, text)
    plot(doc, args.out / "migration.png")
    sys.stdout.write(text)
    return 0
