"""`tern bench comos psync`: processor time sync's precision (issue 12's time
sync; docs/multiprocessor.md, "Time sync"), formerly `tern psync`.

Runs docs/sim/psync.toml (five processors at +-20 ppm, 1 Hz sync) into
--work/psync, or reads an earlier run (--run), and reports each processor's
pulse edge against the reference's (terntools.psync): a table per second,
the distribution, OUT/psync.json and OUT/psync.md (simulated us). Exit 1 when
a processor missed a pulse.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from terntools import comos, psync
from terntools.paths import repo_root
from terntools.scenario import load_scenario
from terntools.sim import run as sim_run

SCENARIO = Path("docs/sim/psync.toml")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", type=Path, metavar="RUN", help="read this `tern sim docs/sim/psync.toml --out RUN` "
                   "run instead of running the scenario")
    p.add_argument("--duration", type=float, metavar="S", help="simulated seconds (default: the scenario's, 60)")
    p.add_argument("--reference", default="master", help="the node whose edges the others are measured "
                   "against (default: master)")
    p.add_argument("--label", default="pulse", help="the [[pin]] label (default: pulse)")


@comos.experiment("psync", help="time sync's precision: five processors at +-20 ppm, 1 Hz sync (seed 002: "
                  "+-9.5 us)", description=__doc__ or "", add_arguments=_arguments)
def run(args: argparse.Namespace) -> int:
    run_dir: Path = args.run
    if run_dir is None:
        scenario = load_scenario(repo_root() / SCENARIO)
        if args.duration is not None:
            scenario = scenario.with_overrides(duration_s=args.duration)
        run_dir = args.work / "psync"
        run_dir.mkdir(parents=True, exist_ok=True)
        sim_run(scenario, run_dir)
    result = psync.of_run(run_dir, args.reference, args.label)
    table = psync.text_table(result)
    doc = {"experiment": "psync", "command": "./tern bench comos psync", "run": str(run_dir), **psync.to_json(result)}
    comos.write_outputs(doc, args.out, f"```sh\n{doc['command']}\n```\n\n```\n{table}```\n")
    print(table, end="")
    print(f"tern bench comos psync: {args.out / 'psync.json'}", file=sys.stderr)
    return 0 if result.missing == 0 else 1
