"""Shared fixtures for the terntools tests.

`python -m pytest tools/tests` runs from the repository root without
installing the package, so tools/ goes on sys.path here (./tern does the same
with PYTHONPATH).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TOOLS = TESTS.parent
ROOT = TOOLS.parent
DATA = TESTS / "data"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from terntools.boards import Board, load_board_file  # noqa: E402


@pytest.fixture(scope="session")
def mps2() -> Board:
    """The mps2-an385 description: 25 MHz ticks, 5/8 instruction per tick, 4 MHz scenario CPU."""
    return load_board_file(DATA / "boards" / "mps2-an385" / "board.json")


@pytest.fixture(scope="session")
def atmega() -> Board:
    """The atmega128 description: one tick per cycle at 4 MHz."""
    return load_board_file(DATA / "boards" / "atmega128" / "board.json")


def require_tool(name: str) -> str:
    """Path of a host tool, or skip the test saying which one is missing."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (make apt installs it)")
    return path


def run_checked(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a build step; a failure fails the test with the tool's own output."""
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed with status {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return proc


def pytest_configure(config: pytest.Config) -> None:
    # matplotlib 3.10 calls pyparsing names that pyparsing 3.2+ deprecates; not ours to fix
    # (pyparsing's own messages: "'oneOf' deprecated - use 'one_of'", "... argument is deprecated, use ...")
    config.addinivalue_line("filterwarnings", "ignore:.*deprecated - use:DeprecationWarning")
    config.addinivalue_line("filterwarnings", "ignore:.*is deprecated, use:DeprecationWarning")
