"""terntools.runner: the emulator command lines, the console filter that
diverts trace lines, and real runs of tiny guests (tests/data/guests) under
QEMU (mps2-an385) and tern-simavr (atmega128)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import DATA, ROOT, require_tool, run_checked

from terntools import runner
from terntools.boards import Board
from terntools.errors import TernError, UsageError
from terntools.runner import ConsoleFilter, emulator_command, qemu_command, run_image, simavr_command

GUESTS = DATA / "guests"


def test_qemu_command_is_deterministic(mps2: Board) -> None:
    cmd = qemu_command(mps2, Path("/x/app.elf"))
    assert cmd[0] == "qemu-system-arm"
    pairs = {cmd[i]: cmd[i + 1] for i in range(1, len(cmd) - 1) if cmd[i].startswith("-")}
    assert pairs["-M"] == "mps2-an385" and pairs["-cpu"] == "cortex-m3"
    # one instruction = 2^6 ns of virtual time, no wall-clock alignment, no sleeping on WFI
    assert pairs["-icount"] == "shift=6,align=off,sleep=off"
    assert pairs["-semihosting-config"] == "enable=on,target=native"  # SYS_EXIT_EXTENDED gives the status
    assert pairs["-serial"] == "stdio"
    assert "-no-reboot" in cmd
    assert cmd[-2:] == ["-kernel", "/x/app.elf"]


def test_qemu_refuses_a_cycle_limit(mps2: Board) -> None:
    with pytest.raises(UsageError, match="--max-cycles applies to simavr boards only; board mps2-an385 runs under QEMU"):
        emulator_command(mps2, Path("a.elf"), timeout=5, max_cycles=1000)


def test_simavr_command(atmega: Board, tmp_path: Path) -> None:
    harness = tmp_path / "tern-simavr"
    # the harness's wall limit is whole seconds, rounded up
    assert simavr_command(atmega, Path("a.elf"), 8_000_000, 2.5, harness) == [
        str(harness), "--mcu", "atmega128", "--freq", "4000000",
        "--max-cycles", "8000000", "--max-wall-seconds", "3", "a.elf",
    ]  # fmt: skip
    assert simavr_command(atmega, Path("a.elf"), None, 0.2, harness)[5:] == ["--max-wall-seconds", "1", "a.elf"]
    with pytest.raises(TernError, match=r"simavr harness .* is not built \(run: make -C tools/simavr\)"):
        emulator_command(atmega, Path("a.elf"), timeout=5, harness=harness)


def test_run_image_checks_its_arguments(mps2: Board, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="image .*missing.elf does not exist"):
        run_image(mps2, tmp_path / "missing.elf", 5)
    image = tmp_path / "a.elf"
    image.write_bytes(b"")
    with pytest.raises(UsageError, match="wall-time limit must be positive, not 0"):
        run_image(mps2, image, 0)


def test_missing_emulator_is_named(mps2: Board, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    image = tmp_path / "a.elf"
    image.write_bytes(b"")
    monkeypatch.setattr(runner, "QEMU_BINARY", "qemu-system-nonexistent")
    with pytest.raises(TernError, match="emulator qemu-system-nonexistent is not installed or not on PATH"):
        run_image(mps2, image, 5)


# --------------------------------------------------------------------------- console filter


def test_console_filter_without_sink_passes_everything() -> None:
    out = io.BytesIO()
    f = ConsoleFilter(out, None)
    for chunk in (b"hel", b"lo\nT 78563412", b"04020201\n"):
        f.feed(chunk)
    f.close()
    assert out.getvalue() == b"hello\nT 7856341204020201\n"


def test_console_filter_diverts_trace_lines_split_across_chunks() -> None:
    out, sink = io.BytesIO(), io.StringIO()
    f = ConsoleFilter(out, sink)
    # a trace line cut in three chunks, a line starting with "T" that is not trace,
    # a malformed trace line (kept visible) and a final unterminated line
    for chunk in (b"boot\nT 7856", b"341204020201e803", b"00000e090b0a\nTx\nT zz\nbye"):
        f.feed(chunk)
    f.close()
    assert out.getvalue() == b"boot\nTx\nT zz\nbye"
    events = [json.loads(line) for line in sink.getvalue().splitlines()]
    assert events == [
        {"time": 0x12345678, "type": "HANDLER_START", "a": 2, "b": 0x0102},
        {"time": 1000 + 2**32, "type": "MARK", "a": 9, "b": 0x0A0B},  # 1000 < 0x12345678: the clock wrapped
    ]
    assert (f.events, f.malformed) == (2, 1)


def test_console_filter_does_not_hold_a_prompt_back() -> None:
    out = io.BytesIO()
    f = ConsoleFilter(out, io.StringIO())
    f.feed(b"login: ")
    assert out.getvalue() == b"login: "  # cannot become a trace line: written at once
    f.feed(b"T 1")
    assert out.getvalue() == b"login: T 1"  # the same line goes on: no trace line starts mid-line
    f.feed(b"\nT")
    assert out.getvalue() == b"login: T 1\n"  # a new line that could still be "T <hex>": held


def test_console_filter_never_takes_the_rest_of_a_split_line_for_a_trace_line() -> None:
    """"SEED000 HIST sub_bits=6" cut after "HIS": the rest begins "T " (seen
    on a loaded machine: a malformed trace line that was none)."""
    out, sink = io.BytesIO(), io.StringIO()
    f = ConsoleFilter(out, sink)
    for chunk in (b"SEED000 HIS", b"T sub_bits=6\nT 7856341204020201\n"):
        f.feed(chunk)
    f.close()
    assert out.getvalue() == b"SEED000 HIST sub_bits=6\n"
    assert (f.events, f.malformed) == (1, 0)


# --------------------------------------------------------------------------- a real guest under QEMU


def build_guest(tmp_path: Path, *defines: str) -> Path:
    gcc = require_tool("arm-none-eabi-gcc")
    require_tool(runner.QEMU_BINARY)
    elf = tmp_path / "guest.elf"
    run_checked([gcc, "-mcpu=cortex-m3", "-mthumb", "-O1", "-nostdlib", "-Wall", "-Wextra", "-Werror",
                 *(f"-D{d}" for d in defines), "-T", str(GUESTS / "arm_console_exit.ld"), "-o", str(elf),
                 str(GUESTS / "arm_console_exit.c")])  # fmt: skip
    return elf


def test_guest_console_and_exit_status(mps2: Board, tmp_path: Path) -> None:
    elf = build_guest(tmp_path, "STATUS=3")
    console = io.BytesIO()
    result = run_image(mps2, elf, 30, console=console)
    assert result.status == 3 and not result.timed_out and result.note is None
    assert result.stdout == b"hello\nT 7856341204020301\nbye"
    assert console.getvalue() == result.stdout
    assert result.command == qemu_command(mps2, elf)


def test_guest_trace_goes_to_the_sink(mps2: Board, tmp_path: Path) -> None:
    elf = build_guest(tmp_path, "STATUS=0")
    console, sink = io.BytesIO(), io.StringIO()
    result = run_image(mps2, elf, 30, console=console, trace_sink=sink)
    assert result.status == 0
    assert console.getvalue() == b"hello\nbye"
    # 78563412 04 02 0301: time 0x12345678, HANDLER_START, task 2, port 0x0103
    assert json.loads(sink.getvalue()) == {"time": 0x12345678, "type": "HANDLER_START", "a": 2, "b": 0x0103}
    assert result.stdout == b"hello\nT 7856341204020301\nbye"  # the capture keeps everything
    assert result.trace_events == 1


def test_guest_that_never_exits_hits_the_wall_limit(mps2: Board, tmp_path: Path) -> None:
    elf = build_guest(tmp_path, "SPIN")
    result = run_image(mps2, elf, 1.0)
    assert result.timed_out and result.status == runner.TIMEOUT_STATUS == 124
    assert result.note == "wall-time limit of 1 s reached"
    assert result.stdout == b""


# --------------------------------------------------------------------------- a real guest under tern-simavr


@pytest.fixture(scope="module")
def simavr_harness() -> Path:
    """tools/simavr/build/tern-simavr, built the documented way when missing."""
    require_tool("avr-gcc")
    harness = ROOT / "tools" / "simavr" / "build" / "tern-simavr"
    if not harness.is_file():
        run_checked(["make", "-C", str(ROOT / "tools" / "simavr")])
    return harness


def build_avr_guest(tmp_path: Path, *defines: str) -> Path:
    elf = tmp_path / "avr_guest.elf"
    run_checked(["avr-gcc", "-mmcu=atmega128", "-Os", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'tools' / 'simavr'}",
                 *(f"-D{d}" for d in defines), "-o", str(elf), str(GUESTS / "avr_console_exit.c")])  # fmt: skip
    return elf


def test_avr_guest_console_and_exit_status(atmega: Board, simavr_harness: Path, tmp_path: Path) -> None:
    elf = build_avr_guest(tmp_path, "STATUS=5")
    sink = io.StringIO()
    result = run_image(atmega, elf, 30, max_cycles=10_000_000, console=io.BytesIO(), trace_sink=sink,
                       harness=simavr_harness)  # fmt: skip
    assert result.status == 5 and result.note is None
    assert result.stdout == b"avr hello\nT 7856341204020201\n"
    assert json.loads(sink.getvalue())["type"] == "HANDLER_START"


def test_avr_guest_that_never_exits_hits_the_cycle_limit(atmega: Board, simavr_harness: Path, tmp_path: Path) -> None:
    elf = build_avr_guest(tmp_path, "SPIN")
    result = run_image(atmega, elf, 30, max_cycles=100_000, harness=simavr_harness)
    assert result.status == 104 and not result.timed_out
    assert result.note == "cycle limit of 100000 cycles reached"
