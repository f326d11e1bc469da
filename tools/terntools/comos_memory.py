"""Seed 002's evaluation 4 (Table IV): code and data of each kernel component.

Seed 002 splits CoMOS's image into hardware drivers, messaging kernel, memory
management, virtual timer, migration protocol and application (MSP430F1611:
15,616 bytes of code and 518 of static data for the first five; the 6 kB heap
is left out of memory management). This module does the same for a tern
image, from its link map (terntools.sizes.objects_of): every object file is
put in one component by its source path, and what the map attributes to no
object (interrupt vectors, fill; less the bytes the linker saved by merging
equal strings of several objects) goes to the messaging kernel,
where the seed put libc, the math library and the vectors too. The heap's
arena (kernel/heap.c's `heap`, TERN_HEAP_SIZE) is counted apart, as the
seed's heap was.
"""
from __future__ import annotations

import argparse
import fnmatch
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
from terntools.sizes import FileSize, measure, objects_of

# Seed 002 Table IV (bytes, MSP430F1611): component -> (code, data).
SEED002 = {
    "Hardware drivers": (2934, 292),
    "Messaging kernel": (7562, 64),
    "Memory management": (1840, 68),
    "Virtual timer": (732, 8),
    "Migration protocol": (2548, 86),
    "Application": (3808, 0),
}
COMPONENTS = tuple(SEED002)
# The four the issue names (messaging, memory management, timers, migration)
# plus the drivers: seed 002's 15,616 bytes of CoMOS.
KERNEL = COMPONENTS[:5]

# First match wins; patterns are fnmatch on the map's object names
# (sizes.object_name: kernel/heap.c, libgcc.a(_muldi3.o), ...).
RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Hardware drivers", ("arch/*", "boards/*", "drivers/*")),
    ("Memory management", ("kernel/heap.c", "kernel/slab.c")),
    ("Virtual timer", ("kernel/timer.c", "kernel/clock.c", "kernel/gtime.c")),
    ("Migration protocol", ("kernel/migrate.c", "kernel/task_move.c")),
    ("Messaging kernel", ("kernel/*", "lib*.a(*)")),
)


def component_of(obj: str) -> str:
    """The component an object file belongs to; the app's own sources (any
    path outside the kernel, drivers and libraries) are the application."""
    for name, patterns in RULES:
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
        code, data = SEED002[self.name]
        return {"name": self.name, "code": self.text, "data": self.data, "bss": self.bss,
                "static_data": self.static_data, "objects": list(self.objects),
                "seed002": {"code": code, "data": data}}


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
    the messaging kernel's; the heap arena comes out of memory management's bss."""
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
        members["Messaging kernel"].append(f"(not in any object: vectors, fill, merged strings: {rest})")
    for i in range(3):
        sums["Messaging kernel"][i] += rest[i]
    mm = sums["Memory management"]
    if heap > mm[2]:
        raise TernError(f"{total.path}: heap arena {heap} B larger than memory management's bss {mm[2]} B")
    mm[2] -= heap
    return [Component(n, s[0], s[1], s[2], tuple(members[n])) for n, s in sums.items()]


def measure_image(elf: Path, board: Board) -> dict[str, Any]:
    total = measure([elf], board)[0]
    heap = symbol_size(elf, "heap", board)
    comps = group(objects_of(elf), total, heap)
    kernel = [c for c in comps if c.name in KERNEL]
    return {
        "elf": str(elf), "board": board.name, "mcu": board.mcu,
        "text": total.text, "data": total.data, "bss": total.bss, "heap_arena": heap,
        "components": [c.to_json() for c in comps],
        "kernel": {"code": sum(c.text for c in kernel), "data": sum(c.data for c in kernel),
                   "bss": sum(c.bss for c in kernel), "static_data": sum(c.static_data for c in kernel)},
        "seed002_kernel": {"code": sum(SEED002[n][0] for n in KERNEL), "data": sum(SEED002[n][1] for n in KERNEL)},
    }


def markdown(doc: dict[str, Any]) -> str:
    out = []
    for img in doc["images"]:
        out.append(f"`{img['elf']}` ({img['board']}; heap arena of {img['heap_arena']:,} B not counted)\n\n")
        out.append("| component | code | data | bss | static data (data + bss) | seed 002 code | seed 002 data |\n")
        out.append("|---|--:|--:|--:|--:|--:|--:|\n")
        for c in img["components"]:
            out.append(f"| {c['name']} | {c['code']:,} | {c['data']:,} | {c['bss']:,} | {c['static_data']:,} "
                       f"| {c['seed002']['code']:,} | {c['seed002']['data']:,} |\n")
        k, s = img["kernel"], img["seed002_kernel"]
        out.append(f"| **CoMOS part (first five)** | **{k['code']:,}** | {k['data']:,} | {k['bss']:,} "
                   f"| **{k['static_data']:,}** | **{s['code']:,}** | **{s['data']:,}** |\n\n")
    return "".join(out)


# The images measured: apps/migrate on the ATmega128 module (the MSP430F1611's
# class: 128 kB flash, 4 kB RAM), and migrate_big, the 1 kB-state variant, on
# the ATmega1284P module; the priority model, as the migration scenarios run.
IMAGES = (("module-m128", "priority", "migrate"), ("module-m1284", "priority", "migrate_big"))


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
    return {"experiment": "memory", "command": "./tern bench comos memory", "unit": "bytes", "images": images}


def _arguments(p: argparse.ArgumentParser) -> None:
    pass  # --out only (comos.common_arguments); nothing runs in tern-sim


@comos.experiment("memory", help="evaluation 4: code and data per kernel component (seed 002 Table IV)",
                  description="Build apps/migrate (module-m128) and apps/migrate_big (module-m1284), group "
                  "their link maps' objects into seed 002's components (drivers, messaging kernel, memory "
                  "management, virtual timer, migration protocol, application) and compare with Table IV. "
                  "Writes OUT/memory.json and OUT/memory.md (bytes).",
                  add_arguments=_arguments)
def run(args: argparse.Namespace) -> int:
    root = repo_root()
    doc = run_bench(root)
    text = f"```sh\n{doc['command']}\n```\n\n(bytes, avr-gcc -Os)\n\n" + markdown(doc)
    comos.write_outputs(doc, args.out, text)
    sys.stdout.write(text)
    return 0
