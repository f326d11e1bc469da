"""Seed 002's evaluation 4 (Table IV): code and data of each kernel component.

Seed 002 splits CoMOS's image into hardware drivers, messaging kernel, memory
management, virtual timer, migration protocol and application (MSP430F1611:
15,616 bytes of code and 518 of static data for the first five; the 6 kB heap
is left out of memory management). This module does the same for a tern
image, from its link map (terntools.sizes.objects_of), with the components
tern has beyond those five apart (bus and remote delivery, time sync, power,
the description's validation, the console, the C runtime's 64-bit helpers):
every object file goes to one component by its source path; what the map
attributes to no object (interrupt vectors, fill; less the bytes the linker
saved by merging equal strings of several objects) goes to the C runtime,
which the seed counted in its messaging kernel. The heap's arena
(kernel/heap.c's `heap`, TERN_HEAP_SIZE) is counted apart, as the seed's
heap was. Per component it also measures what makes it large: the bytes of
constant strings (in RAM: .rodata.str*; in flash: tern_rom_str*), its
largest functions, and the libgcc 64-bit helpers it first pulls in.
"""
from __future__ import annotations

import argparse
import fnmatch
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terntools import build, comos
from terntools.boards import Board, load_board
from terntools.errors import TernError
from terntools.paths import repo_root
from terntools.sizes import FileSize, Section, measure, object_name, objects_of, parse_map

# Seed 002 Table IV (bytes, MSP430F1611): component -> (code, data).
SEED002 = {
    "Hardware drivers": (2934, 292),
    "Messaging kernel": (7562, 64),
    "Memory management": (1840, 68),
    "Virtual timer": (732, 8),
    "Migration protocol": (2548, 86),
    "Application": (3808, 0),
}
SEED002_KERNEL = ("Hardware drivers", "Messaging kernel", "Memory management", "Virtual timer", "Migration protocol")

# tern's components, each with the seed 002 row it compares with (None: the
# seed has no row of its own for it) and its sources (fnmatch on the map's
# object names: kernel/heap.c, libgcc.a(_muldi3.o), ...); first match wins.
RUNTIME = "C runtime: libc, libgcc, vectors"
RULES: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("Bus and remote delivery", None, ("kernel/remote.c", "drivers/procbus/procbus.c", "drivers/procbus/procbus_remote.c")),
    ("Time sync", None, ("kernel/gtime.c", "drivers/procbus/procbus_sync.c")),
    ("Power", None, ("kernel/idle.c", "kernel/power.c", "drivers/procbus/procbus_power.c")),
    ("Hardware drivers", "Hardware drivers", ("arch/*", "boards/*", "drivers/*")),
    ("Memory management", "Memory management", ("kernel/heap.c", "kernel/slab.c")),
    ("Virtual timer", "Virtual timer", ("kernel/timer.c", "kernel/clock.c")),
    ("Migration protocol", "Migration protocol", ("kernel/migrate.c", "kernel/task_move.c")),
    ("Validation of the description", None, ("kernel/app_check.c",)),
    ("Console (tern_printf)", None, ("kernel/console.c",)),
    ("Messaging kernel", "Messaging kernel", ("kernel/*",)),
    ("C runtime: 64-bit arithmetic (libgcc)", None, ("libgcc.a(_*di[23].o)", "libgcc.a(_*di[23]_*.o)",
                                                     "libgcc.a(_udivmod64.o)")),
    (RUNTIME, None, ("lib*.a(*)",)),
)
COMPONENTS = tuple(r[0] for r in RULES) + ("Application",)
SEED_ROW = {r[0]: r[1] for r in RULES} | {"Application": "Application"}
KERNEL = COMPONENTS[:-1]  # everything but the application


def component_of(obj: str) -> str:
    """The component an object file belongs to; the app's own sources (any
    path outside the kernel, drivers and libraries) are the application."""
    for name, _, patterns in RULES:
        if any(fnmatch.fnmatchcase(obj, p) for p in patterns):
            return name
    return "Application"


@dataclass(frozen=True)
class Component:
    name: str
    text: int
    data: int
    bss: int
    objects: tuple[str, ...]

    @property
    def static_data(self) -> int:
        """RAM given at link time: initialised plus zeroed data."""
        return self.data + self.bss

    def to_json(self) -> dict[str, Any]:
        row = SEED_ROW[self.name]
        seed = {"row": row, "code": SEED002[row][0], "data": SEED002[row][1]} if row else None
        return {"name": self.name, "code": self.text, "data": self.data, "bss": self.bss,
                "static_data": self.static_data, "objects": list(self.objects), "seed002": seed}


def symbol_size(elf: Path, symbol: str, board: Board | None) -> int:
    """Size of a data symbol (local or global) from the ELF's symbol table."""
    tool = f"{board.toolchain_prefix}nm" if board else "nm"
    try:
        proc = subprocess.run([tool, "-S", str(elf)], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise TernError(f"{tool} is not installed or not on PATH") from None
    if proc.returncode != 0:
        raise TernError(f"{tool} failed on {elf}: {proc.stderr.strip()}")
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == symbol and parts[2] in "bBdD":
            return int(parts[1], 16)
    raise TernError(f"{elf}: no data symbol '{symbol}' (kernel/heap.c's arena)")


def group(objects: Sequence[FileSize], total: FileSize, heap: int) -> list[Component]:
    """Objects summed by component; the image's bytes no object claims are
    the C runtime's; the heap arena comes out of memory management's bss."""
    sums = {name: [0, 0, 0] for name in COMPONENTS}
    members: dict[str, list[str]] = {name: [] for name in COMPONENTS}
    for o in objects:
        c = component_of(o.path)
        sums[c][0] += o.text
        sums[c][1] += o.data
        sums[c][2] += o.bss
        members[c].append(o.path)
    rest = (total.text - sum(o.text for o in objects), total.data - sum(o.data for o in objects),
            total.bss - sum(o.bss for o in objects))
    if rest != (0, 0, 0):  # negative where the linker merged equal strings of several objects
        members[RUNTIME].append(f"(not in any object: vectors, fill, merged strings: {rest})")
    for i in range(3):
        sums[RUNTIME][i] += rest[i]
    mm = sums["Memory management"]
    if heap > mm[2]:
        raise TernError(f"{total.path}: heap arena {heap} B larger than memory management's bss {mm[2]} B")
    mm[2] -= heap
    return [Component(n, s[0], s[1], s[2], tuple(members[n])) for n, s in sums.items()]


def is_string(section: Section) -> bool:
    """Constant strings: in RAM (.rodata.str*, which the AVR copies into
    .data) or kept in flash (kernel/*'s TERN_ROM_STR)."""
    return section.name.startswith(".rodata.str") or "tern_rom_str" in section.name


def pulled_in(map_text: str) -> dict[str, str]:
    """libgcc/libc member -> the object that first referenced it (the map's
    "Archive member included to satisfy reference by file" list)."""
    head = map_text.split("Allocating common symbols", 1)[0].split("Discarded input sections", 1)[0]
    out = {}
    for m in re.finditer(r"^(\S+\.a\([^)]+\))\n\s+(\S+)", head, re.M):
        out[object_name(m[1])] = object_name(m[2])
    return out


def details(sections: Sequence[Section], map_text: str) -> dict[str, dict[str, Any]]:
    """Per component: its string bytes, its five largest functions, and the
    64-bit libgcc helpers (bytes) it was the first to need."""
    out: dict[str, dict[str, Any]] = {c: {"strings": 0, "functions": [], "helpers_64": {}} for c in COMPONENTS}
    funcs: dict[str, list[tuple[int, str, str]]] = {c: [] for c in COMPONENTS}
    helper_size: dict[str, int] = {}
    for sec in sections:
        obj = object_name(sec.path)
        comp = component_of(obj)
        if not sec.size or not sec.output.startswith((".text", ".data")):
            continue
        if is_string(sec):
            out[comp]["strings"] += sec.size
        elif sec.name.startswith(".text."):
            funcs[comp].append((sec.size, sec.name.removeprefix(".text.").removeprefix("unlikely."), obj))
        if component_of(obj) == "C runtime: 64-bit arithmetic (libgcc)":
            helper_size[obj] = helper_size.get(obj, 0) + sec.size
    for helper, by in pulled_in(map_text).items():
        if helper in helper_size:
            out[component_of(by)]["helpers_64"][helper] = helper_size[helper]
    for comp, rows in funcs.items():
        out[comp]["functions"] = [{"function": f, "source": o, "bytes": n} for n, f, o in sorted(rows, reverse=True)[:5]]
    return out


def measure_image(elf: Path, board: Board) -> dict[str, Any]:
    total = measure([elf], board)[0]
    heap = symbol_size(elf, "heap", board)
    comps = group(objects_of(elf), total, heap)
    map_text = elf.with_suffix(".map").read_text(encoding="utf-8", errors="replace")
    why = details(parse_map(map_text), map_text)
    kernel = [c for c in comps if c.name in KERNEL]
    seed_part = [c for c in comps if SEED_ROW[c.name] in SEED002_KERNEL]
    return {
        "elf": str(elf), "board": board.name, "mcu": board.mcu,
        "text": total.text, "data": total.data, "bss": total.bss, "heap_arena": heap,
        "components": [c.to_json() | why[c.name] for c in comps],
        "kernel": {"code": sum(c.text for c in kernel), "data": sum(c.data for c in kernel),
                   "bss": sum(c.bss for c in kernel), "static_data": sum(c.static_data for c in kernel)},
        "seed002_rows": {"code": sum(c.text for c in seed_part), "static_data": sum(c.static_data for c in seed_part)},
        "seed002_kernel": {"code": sum(SEED002[n][0] for n in SEED002_KERNEL),
                           "data": sum(SEED002[n][1] for n in SEED002_KERNEL)},
    }


def _seed_cells(c: dict[str, Any]) -> str:
    s = c["seed002"]
    return f"{s['code']:,} | {s['data']:,}" if s and s["row"] == c["name"] else "– | –"


def markdown(doc: dict[str, Any]) -> str:
    out = []
    for img in doc["images"]:
        out.append(f"`{img['elf']}` ({img['board']}, {img['model']}; heap arena of {img['heap_arena']:,} B not "
                   "counted)\n\n")
        out.append("| component | code | data | bss | static data (data + bss) | seed 002 code | seed 002 data "
                   "| strings | 64-bit helpers it pulls in | largest functions (bytes) |\n")
        out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
        for c in img["components"]:
            if not (c["code"] or c["static_data"]):
                continue
            helpers = sum(c["helpers_64"].values())
            fns = ", ".join(f"{f['function']} {f['bytes']:,}" for f in c["functions"][:3])
            out.append(f"| {c['name']} | {c['code']:,} | {c['data']:,} | {c['bss']:,} | {c['static_data']:,} "
                       f"| {_seed_cells(c)} | {c['strings']:,} | {helpers:,} | {fns} |\n")
        k, r, s = img["kernel"], img["seed002_rows"], img["seed002_kernel"]
        out.append(f"| **kernel (all but the application)** | **{k['code']:,}** | {k['data']:,} | {k['bss']:,} "
                   f"| **{k['static_data']:,}** | **{s['code']:,}** | **{s['data']:,}** | | | |\n")
        out.append(f"| of which seed 002's five rows (drivers, messaging, memory, timer, migration) | {r['code']:,} "
                   f"| | | {r['static_data']:,} | {s['code']:,} | {s['data']:,} | | | |\n\n")
    return "".join(out)


# The images measured: apps/migrate on the ATmega128 module (the MSP430F1611's
# class: 128 kB flash, 4 kB RAM), and migrate_big, the 1 kB-state variant, on
# the ATmega1284P module; the priority model, as the migration scenarios run.
# apps/migrate has no processor time sync driver and no power manager:
# apps/psync and apps/power (module-m128) show those components.
IMAGES = (("module-m128", "priority", "migrate"), ("module-m1284", "priority", "migrate_big"),
          ("module-m128", "priority", "psync"), ("module-m128", "priority", "power"))


def whole_kernel(images: Sequence[dict[str, Any]], board: str) -> dict[str, Any]:
    """The kernel of a board's images as one table: each component as linked
    in the image that holds most of its code (apps/migrate has no time sync
    driver, apps/psync no migration)."""
    rows = []
    for name in KERNEL:
        best = max((img for img in images if img["board"] == board),
                   key=lambda img: next(c["code"] for c in img["components"] if c["name"] == name))
        c = next(c for c in best["components"] if c["name"] == name)
        rows.append(c | {"image": best["elf"]})
    return {"board": board, "components": rows,
            "code": sum(c["code"] for c in rows), "static_data": sum(c["static_data"] for c in rows),
            "seed002_code": sum(SEED002[n][0] for n in SEED002_KERNEL),
            "seed002_data": sum(SEED002[n][1] for n in SEED002_KERNEL)}


def whole_markdown(w: dict[str, Any]) -> str:
    out = [f"The whole kernel on {w['board']}: each component from the image that links most of it\n\n",
           "| component | code | static data (data + bss) | seed 002 code | seed 002 data | strings | 64-bit helpers "
           "it pulls in | largest functions (bytes) | image |\n", "|---|--:|--:|--:|--:|--:|--:|---|---|\n"]
    for c in w["components"]:
        fns = ", ".join(f"{f['function']} {f['bytes']:,}" for f in c["functions"][:3])
        out.append(f"| {c['name']} | {c['code']:,} | {c['static_data']:,} | {_seed_cells(c)} | {c['strings']:,} "
                   f"| {sum(c['helpers_64'].values()):,} | {fns} | `{Path(c['image']).name}` |\n")
    out.append(f"| **kernel** | **{w['code']:,}** | **{w['static_data']:,}** | **{w['seed002_code']:,}** "
               f"| **{w['seed002_data']:,}** | | | | |\n\n")
    return "".join(out)


def run_bench(root: Path) -> dict[str, Any]:
    images = []
    for board_name, model, app in IMAGES:
        board = load_board(board_name, root)
        out = build.build(board_name, model, root, target=f"{app}.elf")
        elf = build.find_image(out, app)
        if elf is None:
            raise TernError(f"no {app}.elf in {out}")
        img = measure_image(elf, board)
        img["elf"] = str(elf.relative_to(root)) if elf.is_relative_to(root) else str(elf)
        img["model"] = model
        images.append(img)
    return {"experiment": "memory", "command": "./tern bench comos memory", "unit": "bytes",
            "whole_kernel": whole_kernel(images, "module-m128"), "images": images}


def _arguments(p: argparse.ArgumentParser) -> None:
    pass  # --out only (comos.common_arguments); nothing runs in tern-sim


@comos.experiment("memory", help="evaluation 4: code and data per kernel component (seed 002 Table IV)",
                  description="Build apps/migrate (module-m128), apps/migrate_big (module-m1284), apps/psync "
                  "and apps/power (module-m128), group their link maps' objects into components (seed 002's "
                  "drivers, messaging kernel, memory management, virtual timer, migration protocol and "
                  "application, and tern's bus and remote delivery, time sync, power, validation, console and "
                  "C runtime) and compare with Table IV; per component its strings, largest functions and "
                  "64-bit helpers. Writes OUT/memory.json and OUT/memory.md (bytes).",
                  add_arguments=_arguments)
def run(args: argparse.Namespace) -> int:
    root = repo_root()
    doc = run_bench(root)
    text = (f"```sh\n{doc['command']}\n```\n\n(bytes, avr-gcc -Os)\n\n" + whole_markdown(doc["whole_kernel"])
            + "Per image:\n\n" + markdown(doc))
    comos.write_outputs(doc, args.out, text)
    sys.stdout.write(text)
    return 0
