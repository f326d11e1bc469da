"""Board descriptions: loading, the tick arithmetic, and the errors for bad files."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA

from terntools.boards import Board, available_boards, board_from_dict, load_board, load_board_file
from terntools.errors import UsageError

MPS2 = json.loads((DATA / "boards" / "mps2-an385" / "board.json").read_text())


def test_mps2_ticks_are_five_eighths_of_an_instruction(mps2: Board) -> None:
    # icount shift 6: one instruction every 64 ns = 15.625 M/s against a 25 MHz timer: 5/8
    assert (mps2.emulator, mps2.unit, mps2.qemu_machine, mps2.icount_shift) == ("qemu", "instructions", "mps2-an385", 6)
    assert mps2.cycles_per_tick == Fraction(5, 8)
    assert mps2.ticks_to_cycles(8) == 5
    # 8 ticks = 5 instructions of the 4 MHz scenario CPU = 1.25 us
    assert mps2.ticks_to_us(8) == 1.25
    # a long run stays exact: 6.4e6 ticks are exactly 4e6 instructions = 1 s
    assert mps2.ticks_to_cycles(6_400_000) == 4_000_000


def test_atmega_ticks_are_cycles(atmega: Board) -> None:
    assert (atmega.emulator, atmega.unit, atmega.toolchain_prefix) == ("simavr", "cycles", "avr-")
    assert atmega.qemu_machine is None and atmega.icount_shift is None
    assert atmega.ticks_to_us(4) == 1.0


def _error_for(changes: dict[str, Any], drop: tuple[str, ...] = ()) -> str:
    data = {**MPS2, **changes}
    for key in drop:
        del data[key]
    with pytest.raises(UsageError) as info:
        board_from_dict(data, Path("boards/x/board.json"))
    return str(info.value)


@pytest.mark.parametrize(
    ("changes", "drop", "complaint"),
    [
        ({}, ("cpu_hz",), 'boards/x/board.json: key "cpu_hz" is missing'),
        ({}, ("toolchain_prefix",), 'key "toolchain_prefix" is missing'),
        ({}, ("qemu_machine",), 'key "qemu_machine" is missing'),  # a QEMU board needs its machine
        ({"emulator": "bochs"}, (), 'key "emulator" must be one of qemu, simavr, not \'bochs\''),
        ({"unit": "seconds"}, (), 'key "unit" must be one of instructions, cycles'),
        ({"cpu_hz": "4000000"}, (), 'key "cpu_hz" must be int, not \'4000000\''),
        ({"cpu_hz": True}, (), 'key "cpu_hz" must be int, not True'),
        ({"tick_hz": 0}, (), 'key "tick_hz" must be positive, not 0'),
        ({"cycles_per_tick": [5]}, (), 'key "cycles_per_tick" must be \\[num, den\\] of integers'),
        ({"cycles_per_tick": [5, 0]}, (), 'key "cycles_per_tick" must be positive'),
        ({"cycles_per_tick": "5/8"}, (), 'key "cycles_per_tick" must be list'),
        ({"icount_shift": 11}, (), 'key "icount_shift" must be 0..10, not 11'),
        ({"qemu_cpu": 3}, (), 'key "qemu_cpu" must be str or null, not 3'),
    ],
)
def test_bad_board_descriptions_name_the_key(changes: dict[str, Any], drop: tuple[str, ...], complaint: str) -> None:
    import re

    assert re.search(complaint, _error_for(changes, drop))


def test_simavr_board_needs_no_qemu_keys() -> None:
    data = {k: v for k, v in MPS2.items() if k not in ("qemu_machine", "qemu_cpu", "icount_shift")}
    board = board_from_dict({**data, "emulator": "simavr", "unit": "cycles"}, Path("b.json"))
    assert board.qemu_machine is None


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="board file .*nope.json does not exist"):
        load_board_file(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",,}')
    with pytest.raises(UsageError, match="bad.json: not valid JSON .* at line 1"):
        load_board_file(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(UsageError, match="must hold a JSON object"):
        load_board_file(bad)


def test_load_board_by_name_and_by_path(tmp_path: Path) -> None:
    (tmp_path / "boards" / "mps2-an385").mkdir(parents=True)
    (tmp_path / "boards" / "mps2-an385" / "board.json").write_text(json.dumps(MPS2))
    (tmp_path / "boards" / "empty").mkdir()
    assert available_boards(tmp_path) == ["mps2-an385"]
    assert load_board("mps2-an385", tmp_path).name == "mps2-an385"
    assert load_board(str(DATA / "boards" / "atmega128" / "board.json")).name == "atmega128"
    with pytest.raises(UsageError, match=r"unknown board 'cc2538': .* does not exist \(known: mps2-an385\)"):
        load_board("cc2538", tmp_path)
    with pytest.raises(UsageError, match=r"no boards/\*/board.json exists yet"):
        load_board("cc2538", tmp_path / "elsewhere")


def test_models_and_memory_sizes_are_optional() -> None:
    board = board_from_dict({**MPS2, "models": ["fifo", "stack"], "flash_bytes": 262144, "ram_bytes": 65536},
                            Path("b.json"))  # fmt: skip
    assert board.models == ("fifo", "stack") and (board.flash_bytes, board.ram_bytes) == (262144, 65536)
    assert board.supports("stack") and not board.supports("threads")
    # a board without a list does not restrict: CMake decides
    assert board_from_dict(MPS2, Path("b.json")).supports("threads")


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"models": []}, 'key "models" must be a non-empty list of model names'),
        ({"models": "fifo"}, 'key "models" must be a non-empty list of model names'),
        ({"models": ["fifo", 3]}, 'key "models" must be a non-empty list of model names'),
        ({"ram_bytes": 0}, 'key "ram_bytes" must be positive, not 0'),
        ({"flash_bytes": "256k"}, 'key "flash_bytes" must be int or null'),
    ],
)
def test_bad_models_or_sizes_name_the_key(changes: dict[str, Any], complaint: str) -> None:
    assert complaint in _error_for(changes)


@pytest.mark.parametrize("name", ["mps2-an385", "lm3s6965evb", "atmega128"])
def test_the_repository_board_files_load(name: str) -> None:
    from conftest import ROOT

    path = ROOT / "boards" / name / "board.json"
    if not path.is_file():
        pytest.skip(f"{path} is not written yet")
    board = load_board(name, ROOT)
    assert board.name == name and board.cpu_hz == 4_000_000  # every board emulates the 4 MHz scenario CPU
    assert board.models, f"{path} should list its models (CMake reads them)"
