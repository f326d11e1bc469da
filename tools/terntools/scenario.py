"""tern-sim scenario files: TOML loaded, every field validated, a frozen Scenario.

A scenario names the nodes of one simulation (board, image or app, execution
model, position, clock error), the radio medium, the pins to record, and the
run's duration and seed (docs/tern-sim.md, "Scenario file"). Errors are one
line that names the file, the line and the field::

    ping.toml:12: field node[1].ppm: must be a number between -1000 and 1000, not 'x'

tomllib gives no positions for values, so `Locator` scans the raw text once
more (after tomllib accepted it) and maps every key path, e.g.
``("node", 1, "ppm")``, to the line where it is written. Node, link and pin
indices count from 0, as the node ids the guests read do.

Scenarios with many nodes are built from Python with `make_scenario`, which
goes through the same checks.
"""
from __future__ import annotations

import bisect
import ipaddress
import json
import math
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from terntools.boards import Board, available_boards, load_board
from terntools.errors import UsageError
from terntools.paths import repo_root

KeyPath = tuple[str | int, ...]

NAME = re.compile(r"[A-Za-z0-9_-]+")
PIN = re.compile(r"P([A-G])([0-7])")
MEDIUM_MODELS = ("udgm", "table")
PPM_LIMIT = 1000.0
MAX_DURATION_S = 1_000_000.0
SEED_LIMIT = 1 << 64
RSSI_RANGE = (-150.0, 20.0)
DEFAULT_BOARD = "micaz"
DEFAULT_MODEL = "stack"
DEFAULT_TX_RANGE = 50.0
MAX_METRES = 1e7  # positions and ranges tern-sim accepts
MAX_NAME = 63  # characters of a node name, 31 of a pin label (tern-sim's buffers)
MAX_LABEL = 31
MAX_NODES = 65535
MAX_PINS = 256
APP_DIRS = ("apps", "tests/target/apps", "bench")

SIM_KEYS = ("duration", "seed", "channel", "threads")
MEDIUM_KEYS = ("model", "tx_range", "interference_range", "success_tx", "success_rx", "capture_threshold_db")
UDGM_KEYS = ("tx_range", "interference_range", "success_tx", "success_rx")
NODE_KEYS = ("name", "board", "app", "image", "model", "position", "ppm", "bus", "bus_irq", "tun", "tun_host",
             "tun_route", "halt")
IFNAME = re.compile(r"[A-Za-z0-9_.-]{1,15}")  # a Linux interface name
DEFAULT_TUN_HOST = "2001:db8:1::1/64"
DEFAULT_TUN_ROUTE = "2001:db8::/64"
BUS_KEYS = ("name", "throughput", "slot_us", "latency_us", "rx_frames")
BUS_FRAME_MAX = 64  # payload bytes of a bus frame (tern_simavr_abi.h)
MAX_BUS_PROCESSORS = 254
LINK_KEYS = ("from", "to", "prr", "rssi_dbm", "symmetric")
PIN_KEYS = ("node", "pin", "label")
STIMULUS_KEYS = ("node", "pin", "kind", "start_us", "period_us", "rate_hz", "width_us", "count")
MAX_STIMULI = 256
ADC_KEYS = ("node", "channel", "file")
MAX_ADCS = 256
INJECT_KEYS = ("node", "at_us", "psdu", "fcs", "phr", "stop_after")
MAX_INJECTS = 256
HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+")
FRAME_MAX = 127  # PSDU bytes, FCS included
TABLES = ("sim", "medium", "bus", "node", "link", "pin", "stimulus", "adc", "inject")
ARRAYS = ("bus", "node", "link", "pin", "stimulus", "adc", "inject")  # written [[bus]], [[node]], ...


# --------------------------------------------------------------------------- the scenario


@dataclass(frozen=True)
class SimSettings:
    duration_s: float
    seed: int = 1
    channel: int = 26
    threads: int = 1

    @property
    def duration_us(self) -> int:
        return round(self.duration_s * 1_000_000)


@dataclass(frozen=True)
class Medium:
    """udgm: unit disk (ranges in metres, success ratios); table: only the links exist."""

    model: str = "udgm"
    tx_range_m: float = DEFAULT_TX_RANGE
    interference_range_m: float = 2 * DEFAULT_TX_RANGE
    success_tx: float = 1.0
    success_rx: float = 1.0
    capture_threshold_db: float = 3.0


@dataclass(frozen=True)
class Tun:
    """A node's USART0 bridged to a host TUN interface (docs/net.md, "Border router")."""

    name: str  # the interface, e.g. tern0
    host: str = DEFAULT_TUN_HOST  # the host's address on it, with the prefix length
    route: str = DEFAULT_TUN_ROUTE  # the simulated network's prefix, routed into it


@dataclass(frozen=True)
class Node:
    """One simulated core. Exactly one of app and image is set; image is absolute."""

    name: str
    board: Board
    model: str
    app: str | None
    image: Path | None
    position: tuple[float, float, float]
    ppm: float
    bus: str | None = None  # the processor bus it is attached to (a multi-processor node)
    bus_irq: str | None = None  # the pin the bus's receive interrupt drives, e.g. "E4"
    tun: Tun | None = None
    halt_s: float | None = None  # the core stops then, as a processor that dies (None: never)

    @property
    def has_radio(self) -> bool:
        return self.board.radio is not None


@dataclass(frozen=True)
class Bus:
    """The processor bus of one multi-processor node (docs/tern-sim.md, "Processor bus")."""

    name: str
    throughput_bps: int = 1_000_000
    slot_us: float = 600.0
    latency_us: float = 20.0
    rx_frames: int = 2


@dataclass(frozen=True)
class Link:
    """A directed link of the table model."""

    src: str
    dst: str
    prr: float
    rssi_dbm: float


@dataclass(frozen=True)
class Pin:
    """A pin whose edges tern-sim records: port letter A-G, bit 0-7."""

    node: str
    port: str
    bit: int
    label: str


@dataclass(frozen=True)
class Stimulus:
    """A signal generator on a node's input pin: periodic pulses, or pulses at
    Poisson-distributed times drawn from the scenario's seed."""

    node: str
    port: str
    bit: int
    kind: str  # "periodic" or "poisson"
    start_us: float
    width_us: float
    period_us: float = 0.0  # periodic
    rate_hz: float = 0.0  # poisson
    count: int = 0  # pulses in all; 0: until the end


@dataclass(frozen=True)
class AdcInput:
    """A signal file on one ADC channel of a node: each conversion on that
    channel reads the next sample (10-bit codes, one a line; the file loops)."""

    node: str
    channel: int
    file: Path  # absolute


@dataclass(frozen=True)
class Inject:
    """A raw frame put on the air at at_us from a node's position, not by its
    radio (docs/tern-sim.md, "Injected frames"): the PSDU bytes given, then
    the FCS (fcs "good", or "bad": one bit off; "raw": the bytes are the
    whole PSDU); phr, the length byte sent (None: the PSDU's length); the
    signal stops after stop_after PSDU bytes (None: at its end)."""

    node: str
    at_us: float
    psdu: bytes
    fcs: str = "good"
    phr: int | None = None
    stop_after: int | None = None


@dataclass(frozen=True)
class Scenario:
    origin: str  # the file name errors and reports use ("<python>" for make_scenario)
    sim: SimSettings
    medium: Medium
    nodes: tuple[Node, ...]
    links: tuple[Link, ...] = ()
    pins: tuple[Pin, ...] = ()
    buses: tuple[Bus, ...] = ()
    stimuli: tuple[Stimulus, ...] = ()
    adcs: tuple[AdcInput, ...] = ()
    injects: tuple[Inject, ...] = ()

    @property
    def stem(self) -> str:
        return Path(self.origin).stem

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def with_overrides(self, *, seed: int | None = None, threads: int | None = None,
                       duration_s: float | None = None) -> Scenario:
        """The command line's --seed, --threads and --duration over the file's [sim] values."""
        sim = self.sim
        if duration_s is not None:
            if not 1e-6 <= duration_s <= MAX_DURATION_S:
                raise UsageError(f"--duration must be from 1e-06 to {MAX_DURATION_S:g} seconds, not {duration_s:g}")
            sim = replace(sim, duration_s=duration_s)
        if seed is not None:
            if not 0 <= seed < SEED_LIMIT:
                raise UsageError(f"--seed must be an integer from 0 to 2^64-1, not {seed}")
            sim = replace(sim, seed=seed)
        if threads is not None:
            if threads < 1:
                raise UsageError(f"--threads must be at least 1, not {threads}")
            sim = replace(sim, threads=threads)
        return replace(self, sim=sim)


# --------------------------------------------------------------------------- locating keys in the text


class Locator:
    """Line of every key path in a TOML text that tomllib has accepted.

    Handles [table] and [[array-of-tables]] headers (each [[node]] gets the
    next index), dotted and quoted keys, and values spread over lines:
    elements of arrays and keys of inline tables get the line they start on.
    A path that was not written (a missing key) falls back to its longest
    written prefix, e.g. the [[node]] header of the node that lacks it.
    """

    def __init__(self, text: str) -> None:
        self._t = text
        self._i = 0
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        self._aot: dict[KeyPath, int] = {}
        self.lines: dict[KeyPath, int] = {}
        self._document()

    def line(self, path: KeyPath) -> int | None:
        for end in range(len(path), 0, -1):
            found = self.lines.get(path[:end])
            if found is not None:
                return found
        return None

    # the scanner: the text is valid TOML, so it only needs the structure

    def _line_at(self, pos: int) -> int:
        return bisect.bisect_left(self._newlines, pos) + 1

    def _peek(self, k: int = 0) -> str:
        j = self._i + k
        return self._t[j] if j < len(self._t) else ""

    def _skip(self, newlines: bool) -> None:
        while self._i < len(self._t):
            c = self._t[self._i]
            if c in " \t" or (newlines and c in "\r\n"):
                self._i += 1
            elif c == "#":
                end = self._t.find("\n", self._i)
                self._i = len(self._t) if end < 0 else end
            else:
                return

    def _record(self, path: KeyPath, pos: int) -> None:
        self.lines.setdefault(path, self._line_at(pos))

    def _string(self) -> str:
        """Skip a string at the cursor; return its raw text (quotes included)."""
        start = self._i
        t = self._t
        quote = t[start]
        if t.startswith(quote * 3, start):
            end = t.find(quote * 3, start + 3)
            while quote == '"' and end > 0 and _escaped(t, end):
                end = t.find(quote * 3, end + 1)
            end = len(t) if end < 0 else end + 3
            extra = 0
            while extra < 2 and end < len(t) and t[end] == quote:  # """a"""" ends in a quote of content
                end += 1
                extra += 1
        else:
            end = start + 1
            while end < len(t) and t[end] != quote and t[end] != "\n":
                end += 2 if quote == '"' and t[end] == "\\" else 1
            end += 1
        self._i = end
        return t[start:end]

    def _key(self) -> tuple[str, ...]:
        parts: list[str] = []
        while True:
            self._skip(False)
            c = self._peek()
            if c in "\"'":
                raw = self._string()
                parts.append(str(tomllib.loads(f"k = {raw}")["k"]))
            else:
                m = re.compile(r"[A-Za-z0-9_-]+").match(self._t, self._i)
                if m is None:  # cannot happen in valid TOML; stop scanning
                    raise _Stop
                parts.append(m.group())
                self._i = m.end()
            self._skip(False)
            if self._peek() != ".":
                return tuple(parts)
            self._i += 1

    def _keyval(self, table: KeyPath) -> None:
        pos = self._i
        key = self._key()
        for end in range(1, len(key) + 1):
            self._record(table + key[:end], pos)
        self._skip(False)
        if self._peek() != "=":
            raise _Stop
        self._i += 1
        self._value(table + key)

    def _value(self, path: KeyPath) -> None:
        self._skip(False)
        c = self._peek()
        if c in "\"'":
            self._string()
        elif c == "[":
            self._i += 1
            index = 0
            while True:
                self._skip(True)
                if self._peek() in ("]", ""):
                    self._i += 1
                    return
                self._record(path + (index,), self._i)
                self._value(path + (index,))
                self._skip(True)
                if self._peek() == ",":
                    self._i += 1
                    index += 1
        elif c == "{":
            self._i += 1
            while True:
                self._skip(False)
                if self._peek() in ("}", ""):
                    self._i += 1
                    return
                self._keyval(path)
                self._skip(False)
                if self._peek() == ",":
                    self._i += 1
        else:
            while self._i < len(self._t) and self._t[self._i] not in ",]}\r\n#":
                self._i += 1

    def _header(self, key: tuple[str, ...], array: bool) -> KeyPath:
        real: KeyPath = ()
        for n, part in enumerate(key):
            real += (part,)
            if n < len(key) - 1 and real in self._aot:
                real += (self._aot[real] - 1,)
        if array:
            index = self._aot.get(real, 0)
            self._aot[real] = index + 1
            real += (index,)
        return real

    def _document(self) -> None:
        table: KeyPath = ()
        try:
            while True:
                self._skip(True)
                if self._i >= len(self._t):
                    return
                pos = self._i
                if self._t.startswith("[[", pos):
                    self._i += 2
                    key = self._key()
                    self._i += 2  # ]]
                    table = self._header(key, True)
                    self._record(table[:-1], pos)
                    self._record(table, pos)
                elif self._t.startswith("[", pos):
                    self._i += 1
                    key = self._key()
                    self._i += 1  # ]
                    table = self._header(key, False)
                    self._record(table, pos)
                else:
                    self._keyval(table)
        except _Stop:
            return  # what was found so far still serves; the rest falls back to prefixes


class _Stop(Exception):
    pass


def _escaped(text: str, pos: int) -> bool:
    backslashes = 0
    while pos - 1 - backslashes >= 0 and text[pos - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


# --------------------------------------------------------------------------- validation helpers


def field_name(path: KeyPath) -> str:
    """("node", 2, "ppm") -> "node[2].ppm"."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + (part if NAME.fullmatch(part) else json.dumps(part))
    return out


def show(value: Any) -> str:
    """A value as the user wrote it, near enough: strings quoted, TOML booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


class _Checker:
    def __init__(self, origin: str, locator: Locator | None, base_dir: Path, root: Path) -> None:
        self.origin = origin
        self.locator = locator
        self.base_dir = base_dir
        self.root = root
        self._boards: dict[str, Board] = {}

    def where(self, path: KeyPath) -> str:
        line = self.locator.line(path) if self.locator is not None and path else None
        return f"{self.origin}:{line}" if line is not None else self.origin

    def fail(self, path: KeyPath, message: str) -> UsageError:
        return UsageError(f"{self.where(path)}: field {field_name(path)}: {message}")

    # typed fields

    def table(self, doc: Mapping[str, Any], key: str) -> dict[str, Any] | None:
        value = doc.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            kind = "an array of tables [[" + key + "]]" if isinstance(value, list) else show(value)
            raise self.fail((key,), f"must be a table [{key}], not {kind}")
        return value

    def array(self, doc: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
        value = doc.get(key)
        if value is None:
            return []
        if isinstance(value, dict):
            raise self.fail((key,), f"must be an array of tables [[{key}]], not a single table [{key}]")
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail((key,), f"must be an array of tables [[{key}]], not {show(value)}")
        return value

    def keys(self, table: Mapping[str, Any], path: KeyPath, allowed: Sequence[str]) -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(path + (key,), f"unknown key (known: {', '.join(allowed)})")

    def number(self, table: Mapping[str, Any], path: KeyPath, *, default: float | None = None,
               low: float = -math.inf, high: float = math.inf, low_open: bool = False,
               what: str | None = None) -> float:  # fmt: skip
        key = path[-1]
        assert isinstance(key, str)
        if what is None:
            if low_open and high == math.inf:
                what = f"a number greater than {low:g}"
            elif high == math.inf:
                what = f"a number of at least {low:g}"
            else:
                what = f"a number between {low:g} and {high:g}"
        if key not in table:
            if default is None:
                raise self.fail(path, f"is required: {what}")
            return default
        value = table[key]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok and (value < low or value > high or (low_open and value == low)):
            ok = False
        if not ok:
            raise self.fail(path, f"must be {what}, not {show(value)}")
        return float(value)

    def integer(self, table: Mapping[str, Any], path: KeyPath, *, default: int | None, low: int, high: int,
                what: str) -> int:  # fmt: skip
        key = path[-1]
        assert isinstance(key, str)
        if key not in table:
            if default is None:
                raise self.fail(path, f"is required: {what}")
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(path, f"must be {what}, not {show(value)}")
        return int(value)

    def string(self, table: Mapping[str, Any], path: KeyPath, *, default: str | None = None,
               pattern: re.Pattern[str] | None = None, what: str = "a string") -> str:  # fmt: skip
        key = path[-1]
        assert isinstance(key, str)
        if key not in table:
            if default is None:
                raise self.fail(path, f"is required: {what}")
            return default
        value = table[key]
        if not isinstance(value, str) or (pattern is not None and not pattern.fullmatch(value)):
            raise self.fail(path, f"must be {what}, not {show(value)}")
        return value

    def board(self, name: str, path: KeyPath) -> Board:
        if name not in self._boards:
            if not NAME.fullmatch(name) or not (self.root / "boards" / name / "board.json").is_file():
                known = [b for b in available_boards(self.root) if self._is_simavr(b)]
                raise self.fail(path, f"no board {show(name)} in boards/ (tern-sim boards: {', '.join(known) or 'none'})")
            try:
                board = load_board(name, self.root)
            except UsageError as exc:
                raise self.fail(path, f"board {name} cannot be loaded: {exc}") from None
            if board.emulator != "simavr":
                raise self.fail(path, f"board {name} runs under {board.emulator}; tern-sim runs simavr boards only")
            self._boards[name] = board
        return self._boards[name]

    def _is_simavr(self, name: str) -> bool:
        try:
            return load_board(name, self.root).emulator == "simavr"
        except UsageError:
            return False

    def app_exists(self, app: str) -> bool:
        return any((self.root / d / app).is_dir() for d in APP_DIRS)


# --------------------------------------------------------------------------- the sections


def _sim(c: _Checker, doc: Mapping[str, Any]) -> SimSettings:
    table = c.table(doc, "sim")
    if table is None:
        raise UsageError(f"{c.origin}: table [sim] is missing (it needs at least duration = SECONDS)")
    p: KeyPath = ("sim",)
    c.keys(table, p, SIM_KEYS)
    duration = c.number(table, p + ("duration",), low=0.0, high=MAX_DURATION_S, low_open=True,
                        what=f"a number of seconds greater than 0 and at most {MAX_DURATION_S:g}")
    if round(duration * 1_000_000) < 1:
        raise c.fail(p + ("duration",), f"must be at least 1 microsecond (1e-06), not {show(table['duration'])}")
    return SimSettings(
        duration_s=duration,
        seed=c.integer(table, p + ("seed",), default=1, low=0, high=SEED_LIMIT - 1,
                       what="an integer from 0 to 2^64-1"),
        channel=c.integer(table, p + ("channel",), default=26, low=11, high=26,
                          what="an 802.15.4 channel from 11 to 26"),
        threads=c.integer(table, p + ("threads",), default=1, low=1, high=1024,
                          what="a number of host threads from 1 to 1024"),
    )  # fmt: skip


def _medium(c: _Checker, doc: Mapping[str, Any]) -> Medium | None:
    table = c.table(doc, "medium")
    if table is None:
        return None
    p: KeyPath = ("medium",)
    c.keys(table, p, MEDIUM_KEYS)
    model = c.string(table, p + ("model",), what="\"udgm\" or \"table\"")
    if model not in MEDIUM_MODELS:
        raise c.fail(p + ("model",), f"must be \"udgm\" or \"table\", not {show(model)}")
    capture = c.number(table, p + ("capture_threshold_db",), default=3.0, low=0.0, high=100.0)
    if model == "table":
        for key in UDGM_KEYS:
            if key in table:
                raise c.fail(p + (key,), "applies to model \"udgm\" only (the table model takes [[link]] entries)")
        return Medium(model="table", capture_threshold_db=capture)
    tx = c.number(table, p + ("tx_range",), default=DEFAULT_TX_RANGE, low=0.0, high=MAX_METRES, low_open=True,
                  what=f"a range in metres greater than 0 and at most {MAX_METRES:g}")
    interference = c.number(table, p + ("interference_range",), default=min(2 * tx, MAX_METRES), low=tx,
                            high=MAX_METRES, what=f"a range in metres from tx_range ({tx:g}) to {MAX_METRES:g}")
    return Medium(
        model="udgm",
        tx_range_m=tx,
        interference_range_m=interference,
        success_tx=c.number(table, p + ("success_tx",), default=1.0, low=0.0, high=1.0),
        success_rx=c.number(table, p + ("success_rx",), default=1.0, low=0.0, high=1.0),
        capture_threshold_db=capture,
    )  # fmt: skip


def _position(c: _Checker, table: Mapping[str, Any], path: KeyPath, required: bool) -> tuple[float, float, float]:
    if "position" not in table:
        if required:
            raise c.fail(path, "is required with medium model \"udgm\": [x, y] or [x, y, z] in metres")
        return (0.0, 0.0, 0.0)
    value = table["position"]
    what = "[x, y] or [x, y, z] in metres"
    if not isinstance(value, list) or len(value) not in (2, 3):
        raise c.fail(path, f"must be {what}, not {show(value)}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not -MAX_METRES <= v <= MAX_METRES:
            raise c.fail(path + (i,), f"must be a number of metres between {-MAX_METRES:g} and {MAX_METRES:g} "
                         f"(position is {what}), not {show(v)}")  # fmt: skip
    xyz = [float(v) for v in value] + [0.0] * (3 - len(value))
    return (xyz[0], xyz[1], xyz[2])


def _buses(c: _Checker, doc: Mapping[str, Any]) -> tuple[Bus, ...]:
    buses: list[Bus] = []
    seen: dict[str, int] = {}
    for i, table in enumerate(c.array(doc, "bus")):
        p: KeyPath = ("bus", i)
        c.keys(table, p, BUS_KEYS)
        name = c.string(table, p + ("name",), pattern=NAME, what="a name of letters, digits, _ and -")
        if len(name) > MAX_NAME:
            raise c.fail(p + ("name",), f"longer than {MAX_NAME} characters")
        if name in seen:
            raise c.fail(p + ("name",), f"{show(name)} is already the name of bus[{seen[name]}]")
        seen[name] = i
        throughput = c.integer(table, p + ("throughput",), default=1_000_000, low=1000, high=1_000_000_000,
                               what="bits per second from 1000 to 10^9")
        slot_us = c.number(table, p + ("slot_us",), default=600.0, low=1.0, high=1e6)
        longest_us = (2 + BUS_FRAME_MAX) * 8 * 1e6 / throughput
        if slot_us < longest_us:
            raise c.fail(p + ("slot_us",), f"a slot must hold the longest frame ({2 + BUS_FRAME_MAX} bytes: "
                         f"{longest_us:.1f} us at {throughput} bit/s), not {show(table.get('slot_us', 600.0))}")
        buses.append(Bus(
            name=name, throughput_bps=throughput, slot_us=slot_us,
            latency_us=c.number(table, p + ("latency_us",), default=20.0, low=1.0, high=1e6),
            rx_frames=c.integer(table, p + ("rx_frames",), default=2, low=1, high=255,
                                what="frames a processor can hold, 1 to 255"),
        ))  # fmt: skip
    return tuple(buses)


def _node_bus(c: _Checker, table: Mapping[str, Any], p: KeyPath, board: Board,
              buses: Sequence[Bus]) -> tuple[str | None, str | None]:  # fmt: skip
    """A processor's bus and interrupt pin (the board's bus_irq unless the node names one)."""
    if "bus" not in table:
        if "bus_irq" in table:
            raise c.fail(p + ("bus_irq",), "applies to a node on a bus (bus = \"NAME\") only")
        return None, None
    bus = c.string(table, p + ("bus",), what="the name of a [[bus]]")
    if bus not in {b.name for b in buses}:
        raise c.fail(p + ("bus",), f"no [[bus]] named {show(bus)}")
    if "bus_irq" in table:
        spec = c.string(table, p + ("bus_irq",), pattern=PIN, what="a pin like \"PE4\" (port A-G, bit 0-7)")
    elif board.bus_irq is not None:
        spec = board.bus_irq
    else:
        raise c.fail(p + ("bus_irq",), f"is needed: board {board.name} names no bus interrupt pin "
                     "(bus_irq = \"PE4\", say)")  # fmt: skip
    m = PIN.fullmatch(spec)
    if m is None:
        raise c.fail(p + ("board",), f"board {board.name}'s bus_irq {show(spec)} is not a pin like \"PE4\"")
    return bus, m.group(1) + m.group(2)


def _nodes(c: _Checker, doc: Mapping[str, Any], medium_model: str | None,
           buses: Sequence[Bus] = ()) -> tuple[Node, ...]:  # fmt: skip
    tables = c.array(doc, "node")
    if not tables:
        raise UsageError(f"{c.origin}: no [[node]] table: a scenario needs at least one node")
    if len(tables) > MAX_NODES:
        raise c.fail(("node", MAX_NODES), f"more than {MAX_NODES} nodes")
    nodes: list[Node] = []
    seen: dict[str, int] = {}
    for i, table in enumerate(tables):
        p: KeyPath = ("node", i)
        c.keys(table, p, NODE_KEYS)
        name = c.string(table, p + ("name",), pattern=NAME, what="a name of letters, digits, _ and -")
        if len(name) > MAX_NAME:
            raise c.fail(p + ("name",), f"longer than {MAX_NAME} characters")
        if name in seen:
            raise c.fail(p + ("name",), f"{show(name)} is already the name of node[{seen[name]}]")
        seen[name] = i
        board_name = c.string(table, p + ("board",), default=DEFAULT_BOARD, what="a board name")
        board = c.board(board_name, p + ("board",))
        model = c.string(table, p + ("model",), default=DEFAULT_MODEL, what="an execution model name")
        if not board.supports(model):
            raise c.fail(p + ("model",), f"board {board.name} does not list model {show(model)} "
                         f"(it lists: {', '.join(board.models)})")  # fmt: skip
        app: str | None = None
        image: Path | None = None
        if "app" in table and "image" in table:
            raise c.fail(p + ("image",), "give either app = \"NAME\" (built for the node's board and model) "
                         "or image = \"PATH.elf\", not both")  # fmt: skip
        if "app" not in table and "image" not in table:
            raise c.fail(p, "needs app = \"NAME\" (built for the node's board and model) or image = \"PATH.elf\"")
        if "app" in table:
            app = c.string(table, p + ("app",), pattern=NAME, what="an app name")
            if not c.app_exists(app):
                raise c.fail(p + ("app",), f"no app named {show(app)} (looked in {', '.join(APP_DIRS)})")
        else:
            text = c.string(table, p + ("image",), what="a path to an ELF image")
            image = (c.base_dir / text).resolve() if not Path(text).is_absolute() else Path(text)
            if not image.is_file():
                raise c.fail(p + ("image",), f"{image} does not exist")
            if any(ch.isspace() for ch in str(image)):
                raise c.fail(p + ("image",), f"{image} holds a blank, which tern-sim's config cannot carry")
        position = _position(c, table, p + ("position",), required=medium_model == "udgm" and board.radio is not None)
        ppm = c.number(table, p + ("ppm",), default=0.0, low=-PPM_LIMIT, high=PPM_LIMIT)
        bus, bus_irq = _node_bus(c, table, p, board, buses)
        halt = (c.number(table, p + ("halt",), low=0.0, low_open=True, high=MAX_DURATION_S,
                         what="seconds after the start, when the core stops (a processor that dies)")
                if "halt" in table else None)  # fmt: skip
        nodes.append(Node(name=name, board=board, model=model, app=app, image=image, position=position, ppm=ppm,
                          bus=bus, bus_irq=bus_irq, tun=_node_tun(c, table, p), halt_s=halt))
    if sum(n.tun is not None for n in nodes) > MAX_TUNS:
        raise c.fail(("node",), f"more than {MAX_TUNS} nodes with a tun")
    tuns = [n.tun.name for n in nodes if n.tun is not None]
    if len(set(tuns)) != len(tuns):
        raise c.fail(("node",), "two nodes name the same tun interface")
    return tuple(nodes)


MAX_TUNS = 8  # tern-sim.c's TUNS_MAX


def _node_tun(c: _Checker, table: Mapping[str, Any], p: KeyPath) -> Tun | None:
    if "tun" not in table:
        for key in ("tun_host", "tun_route"):
            if key in table:
                raise c.fail(p + (key,), "only with tun = \"NAME\" (the host interface)")
        return None
    name = c.string(table, p + ("tun",), pattern=IFNAME, what="an interface name (1-15 letters, digits, _.-)")
    host = c.string(table, p + ("tun_host",), default=DEFAULT_TUN_HOST, what="an IPv6 address/prefix length")
    route = c.string(table, p + ("tun_route",), default=DEFAULT_TUN_ROUTE, what="an IPv6 prefix")
    try:
        if "/" not in host:
            raise ValueError("no prefix length")
        ipaddress.IPv6Interface(host)
    except ValueError as exc:
        raise c.fail(p + ("tun_host",), f"must be an IPv6 address with its prefix length, e.g. "
                     f"{show(DEFAULT_TUN_HOST)}, not {show(host)} ({exc})") from None  # fmt: skip
    try:
        ipaddress.IPv6Network(route)
    except ValueError as exc:
        raise c.fail(p + ("tun_route",), f"must be an IPv6 prefix, e.g. {show(DEFAULT_TUN_ROUTE)}, not "
                     f"{show(route)} ({exc})") from None  # fmt: skip
    return Tun(name=name, host=host, route=route)


def _links(c: _Checker, doc: Mapping[str, Any], medium: Medium, nodes: Sequence[Node]) -> tuple[Link, ...]:
    tables = c.array(doc, "link")
    if tables and medium.model != "table":
        raise c.fail(("link", 0), f"[[link]] entries need medium model \"table\" (the medium is {show(medium.model)})")
    by_name = {n.name: n for n in nodes}
    links: list[Link] = []
    seen: dict[tuple[str, str], int] = {}
    for i, table in enumerate(tables):
        p: KeyPath = ("link", i)
        c.keys(table, p, LINK_KEYS)
        ends: list[str] = []
        for key in ("from", "to"):
            name = c.string(table, p + (key,), what="a node name")
            if name not in by_name:
                raise c.fail(p + (key,), f"no node named {show(name)}")
            if not by_name[name].has_radio:
                raise c.fail(p + (key,), f"node {name} has no radio (board {by_name[name].board.name})")
            ends.append(name)
        src, dst = ends
        if src == dst:
            raise c.fail(p + ("to",), f"a link from node {src} to itself")
        prr = c.number(table, p + ("prr",), low=0.0, high=1.0)
        rssi = c.number(table, p + ("rssi_dbm",), low=RSSI_RANGE[0], high=RSSI_RANGE[1])
        symmetric = table.get("symmetric", False)
        if not isinstance(symmetric, bool):
            raise c.fail(p + ("symmetric",), f"must be true or false, not {show(symmetric)}")
        for a, b in [(src, dst), (dst, src)] if symmetric else [(src, dst)]:
            if (a, b) in seen:
                raise c.fail(p, f"the link {a} -> {b} is already given by link[{seen[(a, b)]}]")
            seen[(a, b)] = i
            links.append(Link(src=a, dst=b, prr=prr, rssi_dbm=rssi))
    return tuple(links)


def _node_tables(c: _Checker, doc: Mapping[str, Any], key: str, limit: int, plural: str,
                 allowed: Sequence[str], known: set[str], unknown: str = "no node named"
                 ) -> Iterator[tuple[int, KeyPath, dict[str, Any], str]]:
    """Each [[key]] table that belongs to a node: (index, path, table, node),
    its keys and its node (one of known) checked."""
    tables = c.array(doc, key)
    if len(tables) > limit:
        raise c.fail((key, limit), f"more than {limit} {plural}")
    for i, table in enumerate(tables):
        p: KeyPath = (key, i)
        c.keys(table, p, allowed)
        node = c.string(table, p + ("node",), what="a node name")
        if node not in known:
            raise c.fail(p + ("node",), f"{unknown} {show(node)}")
        yield i, p, table, node


def _pins(c: _Checker, doc: Mapping[str, Any], nodes: Sequence[Node]) -> tuple[Pin, ...]:
    pins: list[Pin] = []
    seen: dict[tuple[str, str, int], int] = {}
    for i, p, table, node in _node_tables(c, doc, "pin", MAX_PINS, "recorded pins", PIN_KEYS,
                                          {n.name for n in nodes}):  # fmt: skip
        spec = c.string(table, p + ("pin",), pattern=PIN, what="a pin like \"PB0\" (port A-G, bit 0-7)")
        m = PIN.fullmatch(spec)
        assert m is not None
        port, bit = m.group(1), int(m.group(2))
        if (node, port, bit) in seen:
            raise c.fail(p + ("pin",), f"node {node} pin {spec} is already recorded by pin[{seen[(node, port, bit)]}]")
        seen[(node, port, bit)] = i
        label = c.string(table, p + ("label",), default=spec, pattern=NAME,
                         what="a label of letters, digits, _ and -")  # fmt: skip
        if len(label) > MAX_LABEL:
            raise c.fail(p + ("label",), f"longer than {MAX_LABEL} characters")
        pins.append(Pin(node=node, port=port, bit=bit, label=label))
    return tuple(pins)


def _stimuli(c: _Checker, doc: Mapping[str, Any], nodes: Sequence[Node]) -> tuple[Stimulus, ...]:
    out: list[Stimulus] = []
    for _, p, table, node in _node_tables(c, doc, "stimulus", MAX_STIMULI, "stimuli", STIMULUS_KEYS,
                                          {n.name for n in nodes}):  # fmt: skip
        spec = c.string(table, p + ("pin",), pattern=PIN, what="a pin like \"PE5\" (port A-G, bit 0-7)")
        m = PIN.fullmatch(spec)
        assert m is not None
        kind = c.string(table, p + ("kind",), what="\"periodic\" or \"poisson\"")
        if kind not in ("periodic", "poisson"):
            raise c.fail(p + ("kind",), f"must be \"periodic\" or \"poisson\", not {show(kind)}")
        start = c.number(table, p + ("start_us",), default=0.0, low=0.0, high=1.8e13)
        width = c.number(table, p + ("width_us",), default=1.0, low=0.001, high=1e9)
        count = c.integer(table, p + ("count",), default=0, low=0, high=SEED_LIMIT - 1,
                          what="a number of pulses (0: until the end)")
        period = rate = 0.0
        if kind == "periodic":
            if "rate_hz" in table:
                raise c.fail(p + ("rate_hz",), "applies to kind \"poisson\" only")
            period = c.number(table, p + ("period_us",), low=width, high=1.8e13, low_open=True,
                              what=f"microseconds, longer than width_us ({width:g})")
        else:
            if "period_us" in table:
                raise c.fail(p + ("period_us",), "applies to kind \"periodic\" only")
            rate = c.number(table, p + ("rate_hz",), low=0.0, high=1e9, low_open=True,
                            what="pulses per second, greater than 0 and at most 1e+09")
        out.append(Stimulus(node=node, port=m.group(1), bit=int(m.group(2)), kind=kind, start_us=start,
                            width_us=width, period_us=period, rate_hz=rate, count=count))
    return tuple(out)


def _adcs(c: _Checker, doc: Mapping[str, Any], nodes: Sequence[Node]) -> tuple[AdcInput, ...]:
    out: list[AdcInput] = []
    seen: dict[tuple[str, int], int] = {}
    for i, p, table, node in _node_tables(c, doc, "adc", MAX_ADCS, "adc inputs", ADC_KEYS,
                                          {n.name for n in nodes}):  # fmt: skip
        channel = c.integer(table, p + ("channel",), default=None, low=0, high=7, what="an ADC channel 0-7")
        if (node, channel) in seen:
            raise c.fail(p + ("channel",), f"node {node} channel {channel} already has a file: adc[{seen[(node, channel)]}]")
        seen[(node, channel)] = i
        text = c.string(table, p + ("file",), what="a path to a sample file")
        path = (c.base_dir / text).resolve() if not Path(text).is_absolute() else Path(text)
        if not path.is_file():
            raise c.fail(p + ("file",), f"{path} does not exist")
        if any(ch.isspace() for ch in str(path)):
            raise c.fail(p + ("file",), f"{path} holds a blank, which tern-sim's config cannot carry")
        out.append(AdcInput(node=node, channel=channel, file=path))
    return tuple(out)


def _injects(c: _Checker, doc: Mapping[str, Any], nodes: Sequence[Node]) -> tuple[Inject, ...]:
    out: list[Inject] = []
    for _, p, table, node in _node_tables(c, doc, "inject", MAX_INJECTS, "injected frames", INJECT_KEYS,
                                          {n.name for n in nodes if n.has_radio},
                                          "no node with a radio named"):  # fmt: skip
        at = c.number(table, p + ("at_us",), low=192.0, high=1.8e13, what="microseconds, at least 192")
        fcs = c.string(table, p + ("fcs",), default="good", what="\"good\", \"bad\" or \"raw\"")
        if fcs not in ("good", "bad", "raw"):
            raise c.fail(p + ("fcs",), f"must be \"good\", \"bad\" or \"raw\", not {show(fcs)}")
        psdu = bytes.fromhex(c.string(table, p + ("psdu",), pattern=HEX, what="pairs of hex digits"))
        total = len(psdu) + (0 if fcs == "raw" else 2)
        if total > FRAME_MAX:
            raise c.fail(p + ("psdu",), f"{total} bytes with the FCS: at most {FRAME_MAX}")
        phr = c.integer(table, p + ("phr",), default=-1, low=0, high=127, what="a length byte, 0 ... 127")
        stop = c.integer(table, p + ("stop_after",), default=-1, low=0, high=total,
                         what=f"PSDU bytes on air, 0 ... {total}")
        out.append(Inject(node=node, at_us=at, psdu=psdu, fcs=fcs, phr=None if phr < 0 else phr,
                          stop_after=None if stop < 0 else stop))
    return tuple(out)


# --------------------------------------------------------------------------- entry points


def scenario_from_dict(
    doc: Mapping[str, Any],
    *,
    origin: str = "<python>",
    base_dir: Path | None = None,
    root: Path | None = None,
    locator: Locator | None = None,
) -> Scenario:
    """Validate a scenario document (a parsed TOML file, or built in Python).

    base_dir: where relative image paths start (the scenario file's directory);
    root: the tern checkout whose boards/ and apps/ are meant.
    """
    c = _Checker(origin, locator, base_dir or Path.cwd(), root or repo_root())
    for key in doc:
        if key not in TABLES:
            raise c.fail((key,), "unknown key (known tables: [sim], [medium], [[bus]], [[node]], [[link]], [[pin]], "
                         "[[stimulus]], [[adc]], [[inject]])")
    sim = _sim(c, doc)
    given = _medium(c, doc)
    buses = _buses(c, doc)
    nodes = _nodes(c, doc, given.model if given is not None else None, buses)
    for i, bus in enumerate(buses):
        members = [n for n in nodes if n.bus == bus.name]
        if not members:
            raise c.fail(("bus", i, "name"), f"no [[node]] is on bus {show(bus.name)} (bus = {show(bus.name)})")
        if len(members) > MAX_BUS_PROCESSORS:
            raise c.fail(("bus", i, "name"), f"more than {MAX_BUS_PROCESSORS} processors on one bus")
    if given is None and any(n.has_radio for n in nodes):
        raise UsageError(f"{c.origin}: table [medium] is missing (node {next(n.name for n in nodes if n.has_radio)} "
                         "has a radio): model = \"udgm\" or \"table\"")
    medium = given or Medium()
    links = _links(c, doc, medium, nodes)
    pins = _pins(c, doc, nodes)
    return Scenario(origin=origin, sim=sim, medium=medium, nodes=nodes, links=links, pins=pins, buses=buses,
                    stimuli=_stimuli(c, doc, nodes), adcs=_adcs(c, doc, nodes),
                    injects=_injects(c, doc, nodes))


def parse_scenario(text: str, origin: str, *, base_dir: Path | None = None, root: Path | None = None) -> Scenario:
    """Parse and validate scenario TOML text; origin names it in errors."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        if m:
            raise UsageError(f"{origin}:{m.group(1)}:{m.group(2)}: not valid TOML: {message[:m.start()]}") from None
        raise UsageError(f"{origin}: not valid TOML: {message}") from None
    return scenario_from_dict(doc, origin=origin, base_dir=base_dir, root=root, locator=Locator(text))


def load_scenario(path: Path, *, root: Path | None = None) -> Scenario:
    """Load and validate a scenario file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"scenario file {path} does not exist") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    return parse_scenario(text, str(path), base_dir=path.resolve().parent, root=root)


def make_scenario(
    *,
    duration_s: float,
    nodes: Iterable[Mapping[str, Any]],
    medium: Mapping[str, Any] | None = None,
    links: Iterable[Mapping[str, Any]] = (),
    pins: Iterable[Mapping[str, Any]] = (),
    buses: Iterable[Mapping[str, Any]] = (),
    stimuli: Iterable[Mapping[str, Any]] = (),
    seed: int = 1,
    channel: int = 26,
    threads: int = 1,
    origin: str = "<python>",
    base_dir: Path | None = None,
    root: Path | None = None,
) -> Scenario:
    """A scenario built in Python, e.g. hundreds of nodes on a grid, with the file's checks.

    Every mapping holds the keys of the matching TOML table::

        make_scenario(duration_s=10, medium={"model": "udgm", "tx_range": 50},
                      nodes=[{"name": f"n{i}", "app": "radio", "position": [x, y]}
                             for i, (x, y) in enumerate(grid_positions(100, 40.0))])
    """
    doc: dict[str, Any] = {
        "sim": {"duration": duration_s, "seed": seed, "channel": channel, "threads": threads},
        "node": [dict(n) for n in nodes],
    }
    if medium is not None:
        doc["medium"] = dict(medium)
    link_list = [dict(link) for link in links]
    if link_list:
        doc["link"] = link_list
    pin_list = [dict(pin) for pin in pins]
    if pin_list:
        doc["pin"] = pin_list
    bus_list = [dict(bus) for bus in buses]
    if bus_list:
        doc["bus"] = bus_list
    stimulus_list = [dict(st) for st in stimuli]
    if stimulus_list:
        doc["stimulus"] = stimulus_list
    return scenario_from_dict(doc, origin=origin, base_dir=base_dir, root=root)


def grid_positions(count: int, spacing_m: float, columns: int | None = None) -> list[tuple[float, float]]:
    """count positions on a square-ish grid (row by row), spacing_m apart; columns=count gives a line."""
    if count < 0 or spacing_m <= 0:
        raise ValueError("count must be >= 0 and spacing positive")
    cols = columns or max(1, math.ceil(math.sqrt(count)))
    return [(float(i % cols) * spacing_m, float(i // cols) * spacing_m) for i in range(count)]
