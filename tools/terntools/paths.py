"""Where the repository is.

The tools live in <root>/tools/terntools, so the root is two levels up unless
TERN_ROOT says otherwise (tests and out-of-tree use set it).
"""
from __future__ import annotations

import os
from pathlib import Path


def repo_root() -> Path:
    """The tern checkout the tools operate on."""
    env = os.environ.get("TERN_ROOT")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parents[2]


def boards_dir(root: Path | None = None) -> Path:
    """Directory holding one folder per board, each with a board.json."""
    return (root or repo_root()) / "boards"


def simavr_harness(root: Path | None = None) -> Path:
    """The libsimavr harness built by tools/simavr/Makefile."""
    return (root or repo_root()) / "tools" / "simavr" / "build" / "tern-simavr"


def sim_binary(root: Path | None = None) -> Path:
    """The many-node simulator tern-sim (docs/tern-sim.md), built by tools/simavr/Makefile."""
    return (root or repo_root()) / "tools" / "simavr" / "build" / "tern-sim"
