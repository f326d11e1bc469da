"""`tern bench comos ...`: seed 002's (CoMOS) evaluation on tern's multi-processor node.

One subcommand per experiment of issue 12's evaluation. Each is an entry of
EXPERIMENTS: a help line, a function that adds its flags and one that runs
it; every experiment writes JSON, a markdown table (and a PNG where useful)
into --out (default docs/comos/) and prints the table. A new experiment is a
new entry: the CLI (cli.py) needs no change.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

P = TypeVar("P", bound=argparse.ArgumentParser)

DEFAULT_OUT = Path("docs/comos")
DEFAULT_WORK = Path("results/comos")


@dataclass(frozen=True)
class Experiment:
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


EXPERIMENTS: dict[str, Experiment] = {}


def experiment(name: str, help: str, description: str,
               add_arguments: Callable[[argparse.ArgumentParser], None]) -> Callable[
                   [Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register `tern bench comos NAME` (a decorator on its run function)."""

    def wrap(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        if name in EXPERIMENTS:
            raise ValueError(f"comos experiment {name!r} registered twice")
        EXPERIMENTS[name] = Experiment(help, description, add_arguments, run)
        return run

    return wrap


def common_arguments(p: argparse.ArgumentParser) -> None:
    """--out and --work, the same for every experiment."""
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory (default %(default)s)")
    p.add_argument("--work", type=Path, default=DEFAULT_WORK, help="tern-sim's outputs (default %(default)s)")


def write_outputs(doc: Mapping[str, Any], out_dir: Path, markdown: str) -> None:
    """OUT/<experiment>.json and OUT/<experiment>.md."""
    out_dir.mkdir(parents=True, exist_ok=True)
    name = doc["experiment"]
    (out_dir / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    (out_dir / f"{name}.md").write_text(markdown)


def register(bench_sub: Any, parser_class: type[P], missing: Callable[[P], int]) -> None:
    """Add `comos` and one subcommand per experiment to `tern bench`."""
    co = bench_sub.add_parser("comos", help="seed 002's (CoMOS) evaluation on the multi-processor node",
                              description="Issue 12's evaluation of seed 002 under tern-sim: JSON, a markdown table "
                              "and plots per experiment in --out (docs/comos.md).")
    co_sub = co.add_subparsers(title="experiments", metavar="EXPERIMENT", parser_class=parser_class)
    for name, e in EXPERIMENTS.items():
        p = co_sub.add_parser(name, help=e.help, description=e.description)
        e.add_arguments(p)
        common_arguments(p)
        p.set_defaults(func=e.run, prog_name=f"tern bench comos {name}")
    co.set_defaults(func=lambda a: missing(co), prog_name="tern bench comos")
