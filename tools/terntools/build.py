"""Cross builds of the kernel and its apps for one (board, model).

Every tool builds into the same place, build/target/<board>/<model>, so a
benchmark, a target test and `tern run --app` share one build.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from terntools.errors import TernError, UsageError
from terntools.paths import repo_root

UNAVAILABLE = re.compile(r"tern: model (\S+) is not available on board (\S+)")


class ModelUnavailable(UsageError):
    """The board's board.json does not list the model."""


def build_dir(board: str, model: str, root: Path | None = None) -> Path:
    return (root or repo_root()) / "build" / "target" / board / model


def build(board: str, model: str, root: Path | None = None, target: str | None = None) -> Path:
    """Configure (once) and build every app of (board, model), or only `target`
    (e.g. "seed000.elf"); the build directory."""
    root = root or repo_root()
    out = build_dir(board, model, root)
    steps = []
    if not (out / "build.ninja").exists():
        steps.append(["cmake", "-S", str(root), "-B", str(out), "-G", "Ninja",
                      f"-DTERN_BOARD={board}", f"-DTERN_MODEL={model}"])
    steps.append(["cmake", "--build", str(out), "-j", str(os.cpu_count() or 2), *(["--target", target] if target else [])])
    for cmd in steps:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except FileNotFoundError:
            raise TernError("cmake is not installed or not on PATH (run 'make setup')") from None
        if proc.returncode != 0:
            output = proc.stdout + proc.stderr
            if UNAVAILABLE.search(output):
                raise ModelUnavailable(f"model {model} is not available on board {board}")
            tail = "\n".join(output.strip().splitlines()[-15:])
            raise TernError(f"building {board}/{model} failed ({' '.join(cmd[:2])}):\n{tail}")
    return out


def find_image(out: Path, app: str) -> Path | None:
    """The ELF of app in a build directory: apps/<app> first, then anywhere (tests/target/apps, bench)."""
    for elf in [out / "apps" / app / f"{app}.elf", *sorted(out.glob(f"**/{app}.elf"))]:
        if elf.is_file():
            return elf
    return None


def app_image(board: str, model: str, app: str, root: Path | None = None) -> Path:
    """Build (board, model) and return the ELF of apps/<app> or tests/target/apps/<app>."""
    elf = find_image(build(board, model, root), app)
    if elf is None:
        raise UsageError(f"no app named {app} in the {board}/{model} build (apps/ has the examples)")
    return elf


def avr_gcc(args: list[str], what: str) -> None:
    """Build a bare AVR program (no kernel build, no CMake) with avr-gcc;
    `what` names it in the error."""
    try:
        proc = subprocess.run(["avr-gcc", *args], capture_output=True, text=True)
    except FileNotFoundError:
        raise TernError("avr-gcc is not installed (run 'make setup')") from None
    if proc.returncode != 0:
        raise TernError(f"building {what} failed:\n{proc.stderr.strip()}")
