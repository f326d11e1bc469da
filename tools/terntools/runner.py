"""Run one guest image in the emulator of its board.

QEMU (Cortex-M boards) runs with -icount so virtual time is deterministic and
exits with the guest's status through semihosting SYS_EXIT_EXTENDED. simavr
boards run under tools/simavr/build/tern-simavr, which is cycle-exact and
exits with the status the guest writes to its exit port.

Limits: a wall-time limit applies to every board (the process is killed, the
status is 124 like timeout(1)). A CPU-cycle limit exists only on simavr
(--max-cycles of the harness). QEMU has no instruction-count limit, so on QEMU
boards a run is bounded by the wall-time limit and by the guest's own
watchdog; the runner refuses a cycle limit there instead of pretending.

The console is streamed while the guest runs, byte for byte. When a trace
sink is given, ``T <hex>`` lines are decoded into it and not echoed.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

from terntools.boards import Board
from terntools.errors import TernError, UsageError
from terntools.paths import simavr_harness
from terntools.trace import StreamDecoder, TraceError

TIMEOUT_STATUS = 124
QEMU_BINARY = "qemu-system-arm"

# tern-simavr's own exit codes (tools/simavr/tern-simavr.c)
SIMAVR_CODES: dict[int, str] = {
    100: "tern-simavr refused the command line or the MCU",
    101: "tern-simavr could not load the image",
    102: "the guest crashed the simulated CPU (or ran an invalid opcode)",
    103: "the guest slept with nothing that can wake it",
    104: "cycle limit reached",
    105: "wall-time limit reached",
}
SIMAVR_WALL_LIMIT = 105


@dataclass
class RunResult:
    """Outcome of one emulator run.

    stdout is the complete console output, trace lines included, whatever was
    echoed; note explains a status the emulator harness chose itself.
    """

    status: int
    stdout: bytes
    stderr: str
    wall_seconds: float
    timed_out: bool = False
    note: str | None = None
    command: list[str] = field(default_factory=list)
    trace_events: int = 0
    malformed_trace_lines: int = 0


def qemu_command(board: Board, image: Path) -> list[str]:
    """The deterministic QEMU command line for a Cortex-M board."""
    cmd = [QEMU_BINARY, "-M", str(board.qemu_machine)]
    if board.qemu_cpu:
        cmd += ["-cpu", board.qemu_cpu]
    cmd += [
        "-nographic",
        "-monitor", "none",
        "-serial", "stdio",
        "-semihosting-config", "enable=on,target=native",
        "-icount", f"shift={board.icount_shift},align=off,sleep=off",
        "-no-reboot",
        "-kernel", str(image),
    ]
    return cmd


def simavr_command(board: Board, image: Path, max_cycles: int | None, timeout: float, harness: Path) -> list[str]:
    """The tern-simavr command line; its own wall limit matches ours."""
    cmd = [str(harness), "--mcu", board.mcu or "atmega128", "--freq", str(board.cpu_hz)]
    if max_cycles is not None:
        cmd += ["--max-cycles", str(max_cycles)]
    cmd += ["--max-wall-seconds", f"{max(1, int(timeout + 0.999))}", str(image)]
    return cmd


def emulator_command(
    board: Board, image: Path, *, timeout: float, max_cycles: int | None = None, harness: Path | None = None
) -> list[str]:
    """Pick and check the emulator command for a board."""
    if board.emulator == "qemu":
        if max_cycles is not None:
            raise UsageError(
                f"--max-cycles applies to simavr boards only; board {board.name} runs under QEMU, "
                "which cannot stop after N instructions (bound it with --timeout and the guest's watchdog)"
            )
        return qemu_command(board, image)
    harness = harness or simavr_harness()
    if not harness.is_file():
        raise TernError(f"simavr harness {harness} is not built (run: make -C tools/simavr)")
    return simavr_command(board, image, max_cycles, timeout, harness)


class ConsoleFilter:
    """Passes console bytes through, optionally diverting trace lines.

    Without a trace sink every chunk is forwarded unchanged at once. With one,
    output is cut into lines: a line beginning ``T `` is decoded into the sink
    as JSON lines; everything else is forwarded unchanged. A partial line is
    held back only while it could still turn out to be a trace line, so an
    interactive prompt is not delayed.
    """

    def __init__(self, out: BinaryIO | None, trace_sink: TextIO | None) -> None:
        self.out = out
        self.trace_sink = trace_sink
        self.decoder = StreamDecoder()
        self.pending = b""
        self.mid_line = False  # a partial non-trace line was forwarded: its rest is not a new line
        self.events = 0
        self.malformed = 0
        self.lines = 0

    def _emit(self, data: bytes) -> None:
        if self.out is not None and data:
            self.out.write(data)

    def _could_be_trace(self, partial: bytes) -> bool:
        return b"T ".startswith(partial[:2]) if len(partial) < 2 else partial.startswith(b"T ")

    def _line(self, line: bytes) -> None:
        self.lines += 1
        if not line.startswith(b"T "):
            self._emit(line)
            return
        try:
            text = line.decode("ascii").rstrip("\r\n")
            events = self.decoder.decode_line(text[2:], where=f"console line {self.lines}")
        except (UnicodeDecodeError, TraceError):
            self.malformed += 1
            self._emit(line)  # keep what cannot be decoded visible
            return
        assert self.trace_sink is not None
        for ev in events:
            self.trace_sink.write(json.dumps(ev.to_json()) + "\n")
        self.events += len(events)

    def feed(self, chunk: bytes) -> None:
        if self.trace_sink is None:
            self._emit(chunk)
        else:
            data = self.pending + chunk
            start = 0
            if self.mid_line:
                # the rest of a line whose start was forwarded already: it
                # is no trace line even if this chunk begins with "T "
                nl = data.find(b"\n")
                self._emit(data if nl < 0 else data[: nl + 1])
                if nl < 0:
                    self.pending = b""
                    return self._flush()
                self.mid_line = False
                start = nl + 1
            while True:
                nl = data.find(b"\n", start)
                if nl < 0:
                    break
                self._line(data[start : nl + 1])
                start = nl + 1
            rest = data[start:]
            if rest and not self._could_be_trace(rest):
                self._emit(rest)
                self.lines += 1
                self.mid_line = True
                rest = b""
            self.pending = rest
        self._flush()

    def _flush(self) -> None:
        if self.out is not None:
            self.out.flush()

    def close(self) -> None:
        """Forward a final unterminated line unchanged."""
        if self.pending:
            self._emit(self.pending)
            self.pending = b""
        if self.out is not None:
            self.out.flush()
        if self.trace_sink is not None:
            self.trace_sink.flush()


def _pump(fd: int, sink: Callable[[bytes], None]) -> None:
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        sink(chunk)


def _explain(board: Board, status: int, max_cycles: int | None) -> str | None:
    if board.emulator != "simavr" or status not in SIMAVR_CODES:
        return None
    note = SIMAVR_CODES[status]
    if status == 104 and max_cycles is not None:
        note = f"cycle limit of {max_cycles} cycles reached"
    return note


def run_image(
    board: Board,
    image: Path,
    timeout: float,
    *,
    max_cycles: int | None = None,
    console: BinaryIO | None = None,
    stderr_echo: TextIO | None = None,
    trace_sink: TextIO | None = None,
    harness: Path | None = None,
) -> RunResult:
    """Run image on board, return its status, console and timing.

    console: where to stream the guest console as it arrives (None: only capture).
    stderr_echo: where to copy the emulator's stderr as it arrives.
    trace_sink: when given, trace lines are decoded into it as JSON lines and
    not written to console (RunResult.stdout still has them).
    Wall-time limit: the emulator is killed after timeout seconds and the
    status is 124.
    """
    if timeout <= 0:
        raise UsageError(f"the wall-time limit must be positive, not {timeout}")
    if not image.is_file():
        raise UsageError(f"image {image} does not exist")
    cmd = emulator_command(board, image, timeout=timeout, max_cycles=max_cycles, harness=harness)
    captured: list[bytes] = []
    errors: list[bytes] = []
    filt = ConsoleFilter(console, trace_sink)

    def on_stdout(chunk: bytes) -> None:
        captured.append(chunk)
        filt.feed(chunk)

    def on_stderr(chunk: bytes) -> None:
        errors.append(chunk)
        if stderr_echo is not None:
            stderr_echo.write(chunk.decode("utf-8", "replace"))
            stderr_echo.flush()

    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
    except FileNotFoundError:
        raise TernError(f"emulator {cmd[0]} is not installed or not on PATH") from None
    assert proc.stdout is not None and proc.stderr is not None
    pumps = [
        threading.Thread(target=_pump, args=(proc.stdout.fileno(), on_stdout), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr.fileno(), on_stderr), daemon=True),
    ]
    for t in pumps:
        t.start()
    timed_out = False
    # simavr stops itself at the same wall limit; give it a moment to say so.
    grace = 5.0 if board.emulator == "simavr" else 0.0
    try:
        status = proc.wait(timeout=timeout + grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        status = proc.wait()
        timed_out = True
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        for t in pumps:
            t.join()
        proc.stdout.close()
        proc.stderr.close()
    wall = time.monotonic() - started
    filt.close()
    if board.emulator == "simavr" and status == SIMAVR_WALL_LIMIT:
        timed_out = True
    note = None
    if timed_out:
        status = TIMEOUT_STATUS
        note = f"wall-time limit of {timeout:g} s reached"
    else:
        note = _explain(board, status, max_cycles)
    return RunResult(
        status=status,
        stdout=b"".join(captured),
        stderr=b"".join(errors).decode("utf-8", "replace"),
        wall_seconds=wall,
        timed_out=timed_out,
        note=note,
        command=cmd,
        trace_events=filt.events,
        malformed_trace_lines=filt.malformed,
    )
