"""`tern bench sim`: how fast tern-sim runs networks of sleeping MicaZ nodes.

Every node runs bench/sim/beacon.c (bare metal, so the figure is the
simulator's and not a kernel's): it sleeps, wakes once a second at a phase
its id picks, sends one 30-byte frame and powers the radio's oscillator down
again. Nodes stand on a 20 m grid under the unit-disk medium (50 m range,
100 m interference), so every transmission reaches tens of neighbours.

The figure is simulated node-seconds per wall-clock second (Avrora's unit:
25 nodes in real time, 2005); a run of N nodes for T simulated seconds in W
wall seconds scores N*T/W. Wall time depends on the machine and its load:
this is a benchmark, never a test.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from terntools import build, scenario, sim
from terntools.errors import TernError, UsageError
from terntools.paths import repo_root, sim_binary

SPACING_M = 20.0
DEFAULT_NODES = (1, 10, 100, 1000, 10000)
F_CPU = 7_372_800


def simulated_seconds(nodes: int) -> float:
    """Long enough to be measured, short enough for 10,000 nodes to finish."""
    return 10.0 if nodes <= 100 else 2.0 if nodes <= 1000 else 1.0


@dataclass(frozen=True)
class Run:
    nodes: int
    threads: int
    simulated_s: float
    wall_s: float
    frames: int
    peak_rss_kb: int

    @property
    def node_seconds_per_s(self) -> float:
        return self.nodes * self.simulated_s / self.wall_s if self.wall_s > 0 else math.inf

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall second for the whole network."""
        return self.simulated_s / self.wall_s if self.wall_s > 0 else math.inf


def build_guest(root: Path) -> Path:
    out = root / "build" / "bench-sim"
    out.mkdir(parents=True, exist_ok=True)
    elf = out / "beacon.elf"
    build.avr_gcc(["-mmcu=atmega128", "-Os", f"-DF_CPU={F_CPU}UL", "-Wall", "-Wextra", "-Werror",
                   f"-I{root / 'tools' / 'simavr'}", "-o", str(elf), str(root / "bench" / "sim" / "beacon.c")],
                  "bench/sim/beacon.c")  # fmt: skip
    return elf


def config_text(nodes: int, seconds: float, elf: Path, out: Path, root: Path) -> str:
    """tern-sim's config for the network: micaz nodes on the grid, through the
    scenario checks and the config writer `tern sim` uses."""
    scen = scenario.make_scenario(
        duration_s=seconds, root=root, medium={"model": "udgm", "tx_range": 50.0, "interference_range": 100.0},
        nodes=[{"name": f"n{i}", "image": str(elf), "position": [x, y]}
               for i, (x, y) in enumerate(scenario.grid_positions(nodes, SPACING_M))],
    )  # fmt: skip
    return sim.config_text(scen, out, {})


def _count_frames(summary: Path) -> int:
    doc = json.loads(summary.read_text())
    return sum(int(n.get("frames_sent", 0)) for n in doc["nodes"])


def run_one(nodes: int, threads: int, elf: Path, work: Path, binary: Path, root: Path) -> Run:
    seconds = simulated_seconds(nodes)
    out = work / f"n{nodes}-t{threads}"
    out.mkdir(parents=True, exist_ok=True)
    config = out / "tern-sim.conf"
    config.write_text(config_text(nodes, seconds, elf, out, root))
    start = time.monotonic()
    proc = subprocess.Popen([str(binary), "--threads", str(threads), str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)  # with the child's own peak RSS
    wall = time.monotonic() - start
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise TernError(f"tern-sim failed on {nodes} nodes (exit {code}): {stderr.strip()}")
    return Run(nodes, threads, seconds, wall, _count_frames(out / "summary.json"), int(usage.ru_maxrss))


def run_bench(node_counts: list[int], thread_counts: list[int], *, root: Path | None = None,
              progress: TextIO | None = sys.stderr) -> dict[str, Any]:  # fmt: skip
    root = root or repo_root()
    binary = sim_binary(root)
    if not binary.is_file():
        raise TernError(f"{binary} is not built (run: make -C tools/simavr)")
    elf = build_guest(root)
    work = root / "build" / "bench-sim"
    runs: list[Run] = []
    for threads in thread_counts:
        for nodes in node_counts:
            r = run_one(nodes, threads, elf, work, binary, root)
            if progress:
                progress.write(f"tern bench sim: {nodes} nodes, {threads} thread(s): "
                               f"{r.node_seconds_per_s:,.0f} node-s/s\n")  # fmt: skip
            runs.append(r)
    return {
        "benchmark": "tern-sim",
        "node_program": "bench/sim/beacon.c: sleep, wake once a second, send a 30-byte frame",
        "medium": "udgm, 20 m grid, tx range 50 m, interference range 100 m",
        "cpu": _cpu_name(),
        "host_cpus": os.cpu_count(),
        "runs": [{**asdict(r), "node_seconds_per_s": r.node_seconds_per_s,
                  "real_time_factor": r.real_time_factor} for r in runs],  # fmt: skip
    }


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def text_table(doc: dict[str, Any]) -> str:
    rows = ["| nodes | host threads | simulated [s] | wall [s] | node-s per wall s | x real time | frames | peak RSS [MB] |",
            "|--:|--:|--:|--:|--:|--:|--:|--:|"]  # fmt: skip
    for r in doc["runs"]:
        rows.append(f"| {r['nodes']:,} | {r['threads']} | {r['simulated_s']:g} | {r['wall_s']:.2f} | "
                    f"{r['node_seconds_per_s']:,.0f} | {r['real_time_factor']:.2f} | {r['frames']:,} | "
                    f"{r['peak_rss_kb'] / 1024:,.0f} |")  # fmt: skip
    return "\n".join(rows) + "\n"


def parse_counts(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{what}: expected comma-separated integers, not {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise UsageError(f"{what}: expected positive integers, not {text!r}")
    return values
