"""Target tests: the apps in apps/ and tests/target/apps/, built for every
board in boards/*/board.json and every model the board lists, run in the
board's emulator through terntools.runner.

Builds go to build/target/<board>/<model> (the layout the README documents)
and are made once per session, on first use.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from terntools import build  # noqa: E402
from terntools.boards import Board, load_board_file  # noqa: E402
from terntools.errors import TernError  # noqa: E402
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

_images: dict[tuple[str, str, str], Path] = {}


def image(board: str, model: str, app: str) -> Path:
    """The app's ELF, building (board, model) on first use in this session."""
    key = (board, model, app)
    if key not in _images:
        try:
            _images[key] = build.app_image(board, model, app)
        except TernError as exc:
            pytest.fail(str(exc))
    return _images[key]


@dataclass
class Run:
    status: int
    out: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


def run(board: str, model: str, app: str, timeout: float = WALL_LIMIT_S) -> Run:
    result = run_image(BOARDS[board], image(board, model, app), timeout)
    return Run(result.status, result.stdout.decode("utf-8", "replace"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`board_model` runs a test on every (board, model); `board` on every board."""
    if "board_model" in metafunc.fixturenames:
        metafunc.parametrize("board_model", BOARD_MODELS, ids=[f"{b}-{m}" for b, m in BOARD_MODELS])
    elif "board" in metafunc.fixturenames:
        metafunc.parametrize("board", list(BOARDS))
