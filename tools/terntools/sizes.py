"""Memory footprint of images and objects (seed 000 Table II: flash and RAM).

Uses binutils `size` in Berkeley format (-B): text (code and read-only data),
data (initialised data) and bss (zeroed data) per file. Flash holds text and
the initial values of data; RAM holds data and bss:

    flash = text + data        ram = data + bss

Stack and heap are not in these numbers (as in seed 000, which notes that
both systems need more RAM at run time).
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from terntools.boards import Board
from terntools.errors import TernError, UsageError


@dataclass(frozen=True)
class FileSize:
    path: str
    text: int
    data: int
    bss: int

    @property
    def flash(self) -> int:
        return self.text + self.data

    @property
    def ram(self) -> int:
        return self.data + self.bss

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "flash": self.flash, "ram": self.ram}


def size_tool(board: Board | None) -> str:
    """The board's cross `size`, or the host's when no board is given."""
    return f"{board.toolchain_prefix}size" if board else "size"


def parse_berkeley(output: str) -> list[tuple[int, int, int, str]]:
    """Rows (text, data, bss, filename) of `size -B` output, header skipped."""
    rows = []
    for line in output.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[0].isdigit():
            continue  # header or blank
        rows.append((int(parts[0]), int(parts[1]), int(parts[2]), parts[5].strip()))
    return rows


def measure(files: Sequence[Path], board: Board | None = None) -> list[FileSize]:
    """Sizes of every file, in the order given; errors name the file."""
    for f in files:
        if not f.is_file():
            raise UsageError(f"{f} does not exist")
    tool = size_tool(board)
    results = []
    for f in files:  # one call per file: archives and odd names cannot confuse the mapping
        try:
            proc = subprocess.run([tool, "-B", str(f)], capture_output=True, text=True)
        except FileNotFoundError:
            raise TernError(f"{tool} is not installed or not on PATH") from None
        if proc.returncode != 0:
            why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
            raise TernError(f"{tool} failed on {f}: {why}")
        rows = parse_berkeley(proc.stdout)
        if not rows:
            raise TernError(f"{tool} printed no sizes for {f}")
        # An archive lists one row per member; its footprint is the sum.
        results.append(
            FileSize(str(f), sum(r[0] for r in rows), sum(r[1] for r in rows), sum(r[2] for r in rows))
        )
    return results


def format_table(sizes: Sequence[FileSize]) -> str:
    header = ("text", "data", "bss", "flash", "ram", "file")
    rows = [header] + [(str(s.text), str(s.data), str(s.bss), str(s.flash), str(s.ram), s.path) for s in sizes]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "".join("  ".join(c.rjust(w) for c, w in zip(r[:5], widths)) + "  " + r[5] + "\n" for r in rows)


@dataclass(frozen=True)
class Section:
    output: str
    name: str
    size: int
    path: str
    address: int = 0


def parse_map(text: str) -> list[Section]:
    """Input sections with their sizes and object files, from a GNU ld map
    (the part after "Linker script and memory map", so discarded sections
    are not counted)."""
    start = text.find("Linker script and memory map")
    if start < 0:
        raise TernError("not a GNU ld map file (no 'Linker script and memory map')")
    out: list[Section] = []
    output = ""
    pending: str | None = None
    entry = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
    for line in text[start:].splitlines():
        if re.match(r"^\.\S+", line):
            output = line.split()[0]
            pending = None
            continue
        m = re.match(r"^ (\.\S+|COMMON)(.*)$", line)
        if m:
            name, rest = m[1], m[2]
            e = entry.match(rest) if rest.strip() else None
            if e:
                out.append(Section(output, name, int(e[2], 16), e[3].strip(), int(e[1], 16)))
                pending = None
            else:
                pending = name
            continue
        if pending is not None:
            e = entry.match(line)
            if e:
                out.append(Section(output, pending, int(e[2], 16), e[3].strip(), int(e[1], 16)))
            pending = None
    return out


def classify(output: str) -> str | None:
    """text, data or bss for an output section; None for what is not loaded
    (debug info) or is the stack reservation."""
    # .tern_params: the run-parameter block, in flash and read in place on
    # every board (boards/atmega128/atmega128.ld, arch/cortex-m/sections.ld)
    if output.startswith((".text", ".rodata", ".vectors", ".ARM.exidx", ".ARM.extab", ".progmem", ".init", ".fini",
                          ".tern_params")):
        return "text"
    if output.startswith(".data"):
        return "data"
    if output.startswith((".bss", ".noinit")):
        return "bss"
    return None


def object_name(path: str) -> str:
    """A map's object path as a reader knows it: the source a CMake object
    was built from (kernel/app.c, not .../CMakeFiles/x.elf.dir/__/__/kernel/app.c.obj),
    an archive member as libgcc.a(_muldi3.o)."""
    if ".dir/" in path:
        src = path.split(".dir/", 1)[1]
        while src.startswith("__/"):
            src = src[3:]
        return src.removesuffix(".obj").removesuffix(".o")
    if "(" in path:
        return Path(path.split("(", 1)[0]).name + "(" + path.split("(", 1)[1]
    return path


def by_object(map_text: str) -> list[FileSize]:
    """text/data/bss of every object file (or archive member) linked into
    an image, from its GNU ld map, largest first. Link-time-optimised
    images merge their objects and show as the LTO partitions."""
    totals: dict[str, dict[str, int]] = {}
    for s in parse_map(map_text):
        kind = classify(s.output)
        if kind and s.size:
            totals.setdefault(object_name(s.path), {"text": 0, "data": 0, "bss": 0})[kind] += s.size
    rows = [FileSize(path, t["text"], t["data"], t["bss"]) for path, t in totals.items()]
    return sorted(rows, key=lambda r: (-(r.flash + r.bss), r.path))


@dataclass(frozen=True)
class Part:
    """One input section of an image: with -ffunction-sections and
    -fdata-sections, one function or variable (a string of TERN_ROM_STR
    is .progmem.data.tern_rom_str_.N)."""
    path: str
    symbol: str
    kind: str  # text, data or bss
    size: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


SECTION_PREFIXES = (".text.", ".rodata.", ".data.", ".bss.", ".progmem.data.", ".progmem.gcc_sw_table.", ".progmem.")


def symbol_of(section: str) -> str:
    """The function or variable an input section holds (.text.sched_send:
    sched_send, .text.startup.main: main); the section itself when it is
    not one of a symbol's (.vectors, .text of an assembler file)."""
    for prefix in SECTION_PREFIXES:
        if section.startswith(prefix) and len(section) > len(prefix):
            return section[len(prefix):].removeprefix("startup.")
    return section


def by_part(map_text: str) -> list[Part]:
    """Every loaded input section of an image with its object file, largest
    first (flash and RAM alike: sort by kind to split them)."""
    parts = []
    for s in parse_map(map_text):
        kind = classify(s.output)
        if kind and s.size:
            parts.append(Part(object_name(s.path), symbol_of(s.name), kind, s.size))
    return sorted(parts, key=lambda p: (-p.size, p.path, p.symbol))


def read_map(elf: Path) -> str:
    """The <name>.map the build writes beside an ELF."""
    map_file = elf.with_suffix(".map")
    try:
        return map_file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {map_file} (the link map of {elf}): {exc.strerror}") from None


def format_markdown(sizes: Sequence[FileSize], total: str | None = None) -> str:
    """A markdown table of text/data/bss/flash/RAM per file; `total` names a
    last row with the sums."""
    def row(name: str, s: Sequence[int]) -> str:
        return f"| {name} | " + " | ".join(f"{v:,}" for v in s) + " |\n"
    out = "| file | text | data | bss | flash | RAM |\n|---|--:|--:|--:|--:|--:|\n"
    out += "".join(row(s.path, (s.text, s.data, s.bss, s.flash, s.ram)) for s in sizes)
    if total is not None:
        sums = [sum(getattr(s, k) for s in sizes) for k in ("text", "data", "bss", "flash", "ram")]
        out += row(f"**{total}**", sums)
    return out


def format_parts(parts: Sequence[Part], markdown: bool = False) -> str:
    """Symbols with their size, section kind and object file."""
    if markdown:
        return "| symbol | file | kind | bytes |\n|---|---|---|--:|\n" + "".join(
            f"| `{p.symbol}` | {p.path} | {p.kind} | {p.size:,} |\n" for p in parts)
    rows = [("bytes", "kind", "symbol", "file")] + [(str(p.size), p.kind, p.symbol, p.path) for p in parts]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "".join(f"{r[0].rjust(widths[0])}  {r[1].ljust(widths[1])}  {r[2].ljust(widths[2])}  {r[3]}\n"
                   for r in rows)


def objects_of(elf: Path) -> list[FileSize]:
    """by_object() for an ELF, from the <name>.map the build writes beside it."""
    return by_object(read_map(elf))


def to_json(sizes: Sequence[FileSize], board: Board | None) -> dict[str, Any]:
    return {"board": board.name if board else None, "files": [s.to_json() for s in sizes]}
