"""Board descriptions: boards/<board>/board.json loaded into a dataclass.

The board files are written by the people who port the kernel; the tools only
read them. Everything the host side needs to know about a board (which
emulator, how its clock ticks map to CPU cycles, which toolchain) is there,
so no tool hard-codes a board.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from terntools.errors import UsageError
from terntools.paths import boards_dir

EMULATORS = ("qemu", "simavr")
UNITS = ("instructions", "cycles")


@dataclass(frozen=True)
class Board:
    """One emulated board.

    cycles_per_tick is exact (a Fraction) because tick counts of a long run
    multiplied by a rounded factor would drift by whole cycles.
    """

    name: str
    emulator: str
    unit: str
    cpu_hz: int
    tick_hz: int
    cycles_per_tick: Fraction
    toolchain_prefix: str
    qemu_machine: str | None = None
    qemu_cpu: str | None = None
    icount_shift: int | None = None
    models: tuple[str, ...] = ()  # execution models the port supports; () = not listed
    flash_bytes: int | None = None
    ram_bytes: int | None = None
    mcu: str | None = None  # simavr boards: the part libsimavr simulates (atmega128, atmega1284p)
    radio: str | None = None  # the radio chip on the board (cc2420), if any
    bus_irq: str | None = None  # module boards: the pin tern-sim's processor bus interrupts on ("PE4")
    path: Path | None = None

    def supports(self, model: str) -> bool:
        """True unless the board lists its models and this one is not among them."""
        return not self.models or model in self.models

    def ticks_to_cycles(self, ticks: int | float | Fraction) -> Fraction:
        """Board clock ticks -> emulated CPU cycles (QEMU: instructions)."""
        return Fraction(ticks) * self.cycles_per_tick

    def ticks_to_us(self, ticks: int | float | Fraction) -> float:
        """Board clock ticks -> microseconds of the scenario's CPU (cpu_hz)."""
        return float(self.ticks_to_cycles(ticks) * 1_000_000 / self.cpu_hz)


def _where(path: Path) -> str:
    return str(path)


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if key not in data:
        raise UsageError(f"{_where(path)}: key \"{key}\" is missing")
    value = data[key]
    # bool is an int in Python; a board value of true is never meant as a number.
    if isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise UsageError(f"{_where(path)}: key \"{key}\" must be {names}, not {value!r}")
    return value


def _optional(data: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, kind):
        raise UsageError(f"{_where(path)}: key \"{key}\" must be {kind.__name__} or null, not {value!r}")
    return value


def _ratio(data: dict[str, Any], path: Path) -> Fraction:
    value = _require(data, "cycles_per_tick", list, path)
    if len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise UsageError(f"{_where(path)}: key \"cycles_per_tick\" must be [num, den] of integers, not {value!r}")
    num, den = value
    if num <= 0 or den <= 0:
        raise UsageError(f"{_where(path)}: key \"cycles_per_tick\" must be positive, not {value!r}")
    return Fraction(num, den)


def _models(data: dict[str, Any], path: Path) -> tuple[str, ...]:
    value = data.get("models")
    if value is None:
        return ()
    if not isinstance(value, list) or not value or not all(isinstance(m, str) and m for m in value):
        raise UsageError(f"{_where(path)}: key \"models\" must be a non-empty list of model names, not {value!r}")
    return tuple(value)


def _size(data: dict[str, Any], key: str, path: Path) -> int | None:
    value: int | None = _optional(data, key, int, path)
    if value is not None and value <= 0:
        raise UsageError(f"{_where(path)}: key \"{key}\" must be positive, not {value}")
    return value


def board_from_dict(data: dict[str, Any], path: Path) -> Board:
    """Validate a parsed board.json; errors name the file and the key."""
    if not isinstance(data, dict):
        raise UsageError(f"{_where(path)}: must hold a JSON object")
    emulator = _require(data, "emulator", str, path)
    if emulator not in EMULATORS:
        raise UsageError(f"{_where(path)}: key \"emulator\" must be one of {', '.join(EMULATORS)}, not {emulator!r}")
    unit = _require(data, "unit", str, path)
    if unit not in UNITS:
        raise UsageError(f"{_where(path)}: key \"unit\" must be one of {', '.join(UNITS)}, not {unit!r}")
    cpu_hz = _require(data, "cpu_hz", int, path)
    tick_hz = _require(data, "tick_hz", int, path)
    for key, value in (("cpu_hz", cpu_hz), ("tick_hz", tick_hz)):
        if value <= 0:
            raise UsageError(f"{_where(path)}: key \"{key}\" must be positive, not {value}")
    qemu_machine = _optional(data, "qemu_machine", str, path)
    icount_shift = _optional(data, "icount_shift", int, path)
    if emulator == "qemu":
        qemu_machine = _require(data, "qemu_machine", str, path)
        icount_shift = _require(data, "icount_shift", int, path)
        if not 0 <= icount_shift <= 10:
            raise UsageError(f"{_where(path)}: key \"icount_shift\" must be 0..10, not {icount_shift}")
    return Board(
        name=_require(data, "name", str, path),
        emulator=emulator,
        unit=unit,
        cpu_hz=cpu_hz,
        tick_hz=tick_hz,
        cycles_per_tick=_ratio(data, path),
        toolchain_prefix=_require(data, "toolchain_prefix", str, path),
        qemu_machine=qemu_machine,
        qemu_cpu=_optional(data, "qemu_cpu", str, path),
        icount_shift=icount_shift,
        models=_models(data, path),
        flash_bytes=_size(data, "flash_bytes", path),
        ram_bytes=_size(data, "ram_bytes", path),
        mcu=_optional(data, "mcu", str, path),
        radio=_optional(data, "radio", str, path),
        bus_irq=_optional(data, "bus_irq", str, path),
        path=path,
    )


def load_board_file(path: Path) -> Board:
    """Load one board.json given by path."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"board file {path} does not exist") from None
    except OSError as exc:
        raise UsageError(f"board file {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return board_from_dict(data, path)


def available_boards(root: Path | None = None) -> list[str]:
    """Names of the boards that have a board.json."""
    directory = boards_dir(root)
    if not directory.is_dir():
        return []
    return sorted(p.parent.name for p in directory.glob("*/board.json"))


def load_board(spec: str, root: Path | None = None) -> Board:
    """Load a board by name (boards/<name>/board.json) or by a path to a .json file.

    Accepting a path lets tests and new ports try a description before it is
    placed under boards/.
    """
    if spec.endswith(".json") or "/" in spec:
        return load_board_file(Path(spec))
    path = boards_dir(root) / spec / "board.json"
    if not path.is_file():
        known = available_boards(root)
        hint = f" (known: {', '.join(known)})" if known else " (no boards/*/board.json exists yet)"
        raise UsageError(f"unknown board '{spec}': {path} does not exist{hint}")
    return load_board_file(path)
