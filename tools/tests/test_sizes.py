"""sizes: image footprints by object file, from a GNU ld map made by hand."""
from __future__ import annotations

from pathlib import Path

import pytest

from terntools import sizes
from terntools.errors import TernError, UsageError

MAP = """Discarded input sections
 .text.unused   0x00000000       0x40 app/CMakeFiles/a.elf.dir/__/__/kernel/heap.c.obj
Linker script and memory map
.text           0x00000000     0x100
 .text.a        0x00000000       0x10 app/CMakeFiles/a.elf.dir/__/__/kernel/sched.c.obj
 .text.long_function_name
                0x00000010       0x20 app/CMakeFiles/a.elf.dir/__/__/kernel/sched.c.obj
 .text          0x00000030       0xa2 /usr/lib/gcc/avr/5.4.0/avr51/libgcc.a(_udivmod64.o)
 .text.main     0x000000d2       0x08 app/CMakeFiles/a.elf.dir/main.c.obj
.data           0x20000000       0x6
 .data.x        0x20000000       0x4 app/CMakeFiles/a.elf.dir/__/__/kernel/clock.c.obj
 .rodata.s      0x20000004       0x2 app/CMakeFiles/a.elf.dir/main.c.obj
.bss            0x20000006       0x10
 .bss.y         0x20000006       0x10 app/CMakeFiles/a.elf.dir/__/__/kernel/sched.c.obj
 COMMON         0x20000016       0x0 app/CMakeFiles/a.elf.dir/main.c.obj
.debug_info     0x00000000     0x100
 .debug_info    0x00000000     0x100 app/CMakeFiles/a.elf.dir/__/__/kernel/sched.c.obj
"""


def test_object_names_are_the_sources() -> None:
    assert sizes.object_name("x/CMakeFiles/a.elf.dir/__/__/kernel/app.c.obj") == "kernel/app.c"
    assert sizes.object_name("x/CMakeFiles/a.elf.dir/main.c.obj") == "main.c"
    assert sizes.object_name("/usr/lib/gcc/avr/5.4.0/libgcc.a(_muldi3.o)") == "libgcc.a(_muldi3.o)"
    assert sizes.object_name("crt0.o") == "crt0.o"


def test_by_object_sums_linked_sections_per_object_largest_first() -> None:
    rows = [(r.path, r.text, r.data, r.bss) for r in sizes.by_object(MAP)]
    # discarded sections, debug info and empty COMMON do not count; .data
    # (rodata too: it is loaded into the data output section) is data
    assert rows == [
        ("libgcc.a(_udivmod64.o)", 0xA2, 0, 0),
        ("kernel/sched.c", 0x30, 0, 0x10),
        ("main.c", 0x08, 0x2, 0),
        ("kernel/clock.c", 0, 4, 0),
    ]


def test_a_map_that_is_not_one_is_refused() -> None:
    with pytest.raises(TernError, match="not a GNU ld map file"):
        sizes.by_object("hello")


def test_objects_of_needs_the_map_beside_the_image(tmp_path: Path) -> None:
    elf = tmp_path / "a.elf"
    elf.write_bytes(b"")
    with pytest.raises(UsageError, match=r"cannot read .*a\.map \(the link map of .*a\.elf\)"):
        sizes.objects_of(elf)
    (tmp_path / "a.map").write_text(MAP)
    assert [r.path for r in sizes.objects_of(elf)][:1] == ["libgcc.a(_udivmod64.o)"]


def test_by_part_names_each_function_and_variable_with_its_object() -> None:
    parts = [(p.symbol, p.path, p.kind, p.size) for p in sizes.by_part(MAP)]
    assert parts == [
        (".text", "libgcc.a(_udivmod64.o)", "text", 0xA2),  # an assembler file's whole .text
        ("long_function_name", "kernel/sched.c", "text", 0x20),
        ("a", "kernel/sched.c", "text", 0x10),
        ("y", "kernel/sched.c", "bss", 0x10),
        ("main", "main.c", "text", 0x08),
        ("x", "kernel/clock.c", "data", 4),
        ("s", "main.c", "data", 2),
    ]
    # their sum is what by_object adds up per file
    assert sum(p[3] for p in parts) == sum(r.flash + r.bss for r in sizes.by_object(MAP))


def test_symbol_of_strips_the_section_kind() -> None:
    assert sizes.symbol_of(".text.startup.main") == "main"
    assert sizes.symbol_of(".progmem.data.tern_rom_str_.12") == "tern_rom_str_.12"
    assert sizes.symbol_of(".vectors") == ".vectors"
    assert sizes.symbol_of(".text.") == ".text."


def test_the_parameter_block_counts_as_flash() -> None:
    assert sizes.classify(".tern_params") == "text"


def test_markdown_table_with_its_total() -> None:
    rows = [sizes.FileSize("a.c", 1000, 2, 3), sizes.FileSize("b.c", 10, 0, 5)]
    assert sizes.format_markdown(rows, "total").splitlines() == [
        "| file | text | data | bss | flash | RAM |",
        "|---|--:|--:|--:|--:|--:|",
        "| a.c | 1,000 | 2 | 3 | 1,002 | 5 |",
        "| b.c | 10 | 0 | 5 | 10 | 5 |",
        "| **total** | 1,010 | 2 | 8 | 1,012 | 10 |",
    ]
    parts = sizes.by_part(MAP)[:2]
    assert sizes.format_parts(parts, markdown=True).splitlines()[2] == \
        "| `.text` | libgcc.a(_udivmod64.o) | text | 162 |"
    assert sizes.format_parts(parts).splitlines()[1].split() == ["162", "text", ".text", "libgcc.a(_udivmod64.o)"]
