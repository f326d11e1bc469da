"""What the tests of docs/sim scenarios share: run one through `tern sim`
(its Python side, or the command a user types) and read back its events,
summary and consoles."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from terntools import sim  # noqa: E402
from terntools.scenario import load_scenario  # noqa: E402


def run_scenario(toml: str, out: Path) -> dict[str, Any]:
    """Build and run docs/sim/<toml>; no node may crash."""
    result = sim.run(load_scenario(ROOT / "docs" / "sim" / toml, root=ROOT), out, root=ROOT)
    assert result.crashed == [], sim.format_summary(result)
    summary = json.loads((out / "summary.json").read_text())
    return {
        "events": [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()],
        "summary": summary,
        "consoles": {n["name"]: (out / "console" / f"{n['name']}.txt").read_text() for n in summary["nodes"]},
    }


def stats(console: str, what: str) -> dict[str, int]:
    """The key=value figures of the console line "stats WHAT ..."."""
    line = next(line for line in console.splitlines() if line.startswith(f"stats {what} "))
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def tern_sim(toml: Path, out: Path, *args: str) -> dict[str, Any]:
    """Run `tern sim TOML --out OUT ARGS` as a user would; it must succeed.
    Its nodes by name (summary.json) and the consoles of those that wrote one."""
    p = subprocess.run([str(ROOT / "tern"), "sim", str(toml), "--out", str(out), *args],
                       capture_output=True, text=True, timeout=900)  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    nodes = {n["name"]: n for n in json.loads((out / "summary.json").read_text())["nodes"]}
    consoles = {n: c.read_text() for n in nodes if (c := out / "console" / f"{n}.txt").is_file()}
    return {"nodes": nodes, "consoles": consoles}


def summary_counters(console: str) -> dict[str, int]:
    """The key=value figures of an app's " summary " console line."""
    line = next(x for x in console.splitlines() if " summary " in x)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", line)}
