"""The example apps on every board and model: output, exit status, timer
deadlines, ownership of payloads, and the errors a user must see."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import ARCH, BOARDS, image, run

from terntools import build

# A periodic task timer's handler starts at most this many cycles
# (instructions on QEMU boards) after its ideal deadline, measured from
# the start time, so drift would show as growth. Measured on mps2-an385:
# 1043 (stack) to 1118 (fifo) instructions; threads 1306; atmega128 (cycles)
# 4054 (stack) to 4521 (priority), threads 5262, adaptive 5135: the path
# from the compare interrupt to the handler reads the 64-bit clock four
# times at ~250 cycles each (`tern-simavr --profile`, docs/boards.md).
TIMER_LATENESS_BOUND = {"cortex-m": 1500, "avr": 5000}
THREAD_TIMER_LATENESS_BOUND = {"cortex-m": 1500, "avr": 5600}

# The fault app loads from 0xF0000000, which has nothing behind it: a
# BusFault naming the address in BFAR. QEMU's lm3s6965evb ignores bus
# errors (a legacy machine), so that board traps the access with its MPU:
# a MemManage fault naming the address in MMFAR (boards/lm3s6965evb/board.c).
WILD_ACCESS_FAULT = {"lm3s6965evb": ("MemManage", "MMFAR")}


def test_hello(board_model: tuple[str, str]) -> None:
    board, model = board_model
    r = run(board, model, "hello")
    assert r.status == 0, r.out
    assert r.lines == [f"hello from tern on {board}, model {model}"]


def test_periodic_timer_meets_deadlines_without_drift(board_model: tuple[str, str]) -> None:
    board, model = board_model
    r = run(board, model, "periodic")
    assert r.status == 0, r.out
    ticks = [(int(k), int(late)) for k, late in re.findall(r"^tick (\d+) late=(\d+)$", r.out, re.M)]
    assert [k for k, _ in ticks] == list(range(1, 21))
    lateness = [late for _, late in ticks]
    bounds = THREAD_TIMER_LATENESS_BOUND if model in ("threads", "adaptive") else TIMER_LATENESS_BOUND
    assert max(lateness) <= bounds[ARCH[board]], lateness
    # Re-armed from the previous deadline: the last tick is no later than
    # the second (the first pays for the timer's first arming).
    assert lateness[-1] <= lateness[1] + 50, lateness


def test_prodcons_order_shows_stack_preemption(board_model: tuple[str, str]) -> None:
    board, model = board_model
    r = run(board, model, "prodcons")
    assert r.status == 0, r.out
    events = [line for line in r.lines
              if re.match(r"^(produce|consume) \d+$", line) or line == "producer done"]
    expected: list[str] = []
    for first in (1, 4, 7):
        items = range(first, first + 3)
        if model in ("stack", "threads", "adaptive", "hybrid"):  # the consumer preempts at each post
            for i in items:
                expected += [f"produce {i}", f"consume {i}"]
            expected.append("producer done")
        else:
            expected += [f"produce {i}" for i in items] + ["producer done"]
            expected += [f"consume {i}" for i in items]
    assert events == expected
    assert r.lines[-1] == "produced 9 consumed 9 heap in use 0 lost 0"


def test_refused_description_names_task_and_field(board_model: tuple[str, str]) -> None:
    board, model = board_model
    r = run(board, model, "bad-description")
    assert r.status == 1, r.out
    assert "TERN_ENOTASK" in r.out
    assert "task 'sensor'" in r.out
    assert "routes[].task" in r.out
    assert "goes to task 7" in r.out
    assert "handler ran" not in r.out


# One board of each CPU: the check runs on the build machine, what differs
# is the board's limits and definitions it is compiled with.
@pytest.mark.parametrize("checked_board", ["atmega128", "mps2-an385"])
def test_description_checked_at_build_time_is_refused_with_the_same_error(checked_board: str) -> None:
    """bad-description-checked.elf: the same description with
    TERN_APP_BUILD_CHECK (tools/appcheck). Its build fails, before there is
    an image, with the error the run-time check prints."""
    board = checked_board
    r = run(board, "stack", "bad-description")
    refused = [line for line in r.lines if line.startswith("refused: ")]
    assert len(refused) == 1, r.out
    out = build.build_dir(board, "stack")
    image(board, "stack", "bad-description")  # configured and built
    elf = next(out.glob("apps/bad-description/bad-description-checked.elf"), None)
    if elf:
        elf.unlink()
    proc = subprocess.run(["cmake", "--build", str(out), "--target", "bad-description-checked.elf"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "bad-description-checked.elf: refused at build time: " + refused[0].removeprefix(
        "refused: ") in proc.stdout + proc.stderr
    assert not (out / "apps/bad-description/bad-description-checked.elf").exists()


def test_fault_is_reported_with_task_and_nonzero_status(board: str) -> None:
    if ARCH[board] != "cortex-m":
        pytest.skip("the fault app raises a Cortex-M BusFault")
    r = run(board, "stack", "fault")
    assert r.status == 3, r.out
    kind, address = WILD_ACCESS_FAULT.get(board, ("BusFault", "BFAR"))
    assert f"tern: FAULT {kind}" in r.out
    assert f"{address}=f0000000" in r.out
    assert re.search(r"PC=[0-9a-f]{8}", r.out)
    assert "task=crasher (id 0)" in r.out
    assert "survived" not in r.out


def test_runaway_handler_hits_the_virtual_time_limit(board: str) -> None:
    r = run(board, "stack", "runaway")
    assert r.status == 125, r.out
    assert "virtual-time limit of 1 s reached (task spinner running)" in r.out


def test_runaway_with_interrupts_masked_hits_the_wall_time_limit(board: str) -> None:
    r = run(board, "stack", "runaway-masked", timeout=3.0)
    assert r.status in (124, 105), r.out  # 105: the simavr harness's own wall limit
    assert "runaway: spinning" in r.out


@pytest.mark.parametrize("app", ["ordering", "periodic", "prodcons"])
def test_same_image_same_output(board: str, app: str) -> None:
    first = run(board, "stack", app)
    second = run(board, "stack", app)
    assert first.status == second.status == 0
    assert first.out == second.out
