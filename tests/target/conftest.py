"""Target tests: the apps in apps/ and tests/target/apps/, built for every
board in boards/*/board.json and every model the board lists, run in the
board's emulator through terntools.runner.

Builds go to build/target/<board>/<model> (the layout the README documents)
and are made once per session, on first use.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from terntools.boards import Board, load_board_file  # noqa: E402
from terntools.runner import run_image  # noqa: E402

BOARD_FILES = sorted((ROOT / "boards").glob("*/board.json"))
BOARDS: dict[str, Board] = {p.parent.name: load_board_file(p) for p in BOARD_FILES}
MODELS: dict[str, list[str]] = {
    p.parent.name: json.loads(p.read_text())["models"] for p in BOARD_FILES
}
ARCH: dict[str, str] = {
    name: ("avr" if board.emulator == "simavr" else "cortex-m") for name, board in BOARDS.items()
}
BOARD_MODELS = [(b, m) for b in BOARDS for m in MODELS[b]]

# Wall-time limit per run: generous, the guest's virtual-time limit and the
# apps' own exits end every normal run long before it.
WALL_LIMIT_S = 60.0

_built: dict[tuple[str, str], Path] = {}


def build(board: str, model: str) -> Path:
    """Configure and build every app for (board, model); the build directory."""
    key = (board, model)
    if key in _built:
        return _built[key]
    out = ROOT / "build" / "target" / board / model
    if not (out / "build.ninja").exists():
        subprocess.run(
            ["cmake", "-S", str(ROOT), "-B", str(out), "-G", "Ninja",
             f"-DTERN_BOARD={board}", f"-DTERN_MODEL={model}"],
            check=True, capture_output=True, text=True)
    done = subprocess.run(["cmake", "--build", str(out), "-j", str(os.cpu_count() or 2)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"build of {board}/{model} failed:\n{done.stdout[-4000:]}{done.stderr[-2000:]}")
    _built[key] = out
    return out


@dataclass
class Run:
    status: int
    out: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


def image(board: str, model: str, app: str) -> Path:
    base = build(board, model)
    for candidate in (base / "apps" / app / f"{app}.elf",
                      base / "tests" / "target" / "apps" / app / f"{app}.elf",
                      base / "tests" / "target" / "apps" / "runaway" / f"{app}.elf"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"no image for app {app} in {base}")


def run(board: str, model: str, app: str, timeout: float = WALL_LIMIT_S) -> Run:
    result = run_image(BOARDS[board], image(board, model, app), timeout)
    return Run(result.status, result.stdout.decode("utf-8", "replace"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`board_model` runs a test on every (board, model); `board` on every board."""
    if "board_model" in metafunc.fixturenames:
        metafunc.parametrize("board_model", BOARD_MODELS, ids=[f"{b}-{m}" for b, m in BOARD_MODELS])
    elif "board" in metafunc.fixturenames:
        metafunc.parametrize("board", list(BOARDS))
