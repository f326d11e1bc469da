"""Tests of tools/simavr/tern-simavr, the libsimavr harness for the atmega128
board, with tiny guest programs from tests/harness/guests/.

The harness is built with `make -C tools/simavr`; the guests with avr-gcc into
tests/harness/build/. Run with `python3 -m pytest tests/harness` (add -s to see
the measured simulation speed).
"""

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HARNESS_DIR = ROOT / "tools" / "simavr"
HARNESS = HARNESS_DIR / "build" / "tern-simavr"
GUESTS = HERE / "guests"
BUILD = HERE / "build"

F_CPU = 4_000_000

# The harness's own exit codes (tools/simavr/tern-simavr.c, README.md).
EXIT_USAGE = 100
EXIT_LOAD = 101
EXIT_CRASH = 102
EXIT_SLEEP_FOREVER = 103
EXIT_CYCLE_LIMIT = 104
EXIT_WALL_LIMIT = 105

SUMMARY = re.compile(r"tern-simavr: exit=(\d+) cycles=(\d+)")


def _have_toolchain():
    if shutil.which("avr-gcc") is None or shutil.which("pkg-config") is None:
        return False
    return subprocess.run(["pkg-config", "--exists", "simavr"]).returncode == 0


pytestmark = pytest.mark.skipif(
    not _have_toolchain(), reason="needs avr-gcc, pkg-config and libsimavr-dev"
)


@dataclass
class Run:
    code: int
    stdout: bytes
    stderr: str
    cycles: int
    seconds: float


@pytest.fixture(scope="session")
def harness():
    subprocess.run(["make", "-s", "-C", str(HARNESS_DIR)], check=True)
    return HARNESS


@pytest.fixture(scope="session")
def guest():
    """Returns a function that builds guests/<name>.c once and gives its ELF."""
    built = {}

    def build(name):
        if name not in built:
            BUILD.mkdir(exist_ok=True)
            elf = BUILD / f"{name}.elf"
            tmp = BUILD / f"{name}.elf.tmp"
            subprocess.run(
                ["avr-gcc", "-mmcu=atmega128", "-Os", f"-DF_CPU={F_CPU}UL",
                 "-Wall", "-Wextra", "-Werror", f"-I{HARNESS_DIR}",
                 "-o", str(tmp), str(GUESTS / f"{name}.c")],
                check=True,
            )
            tmp.replace(elf)
            built[name] = elf
        return built[name]

    return build


def run(harness, image, *options, timeout=60):
    start = time.monotonic()
    p = subprocess.run([str(harness), *options, str(image)],
                       capture_output=True, timeout=timeout)
    seconds = time.monotonic() - start
    stderr = p.stderr.decode(errors="replace")
    last = stderr.rstrip("\n").split("\n")[-1]
    m = SUMMARY.fullmatch(last)
    assert m, f"no summary line at the end of stderr:\n{stderr}"
    assert int(m.group(1)) == p.returncode, stderr
    return Run(p.returncode, p.stdout, stderr, int(m.group(2)), seconds)


def test_hello_prints_exact_text_and_exits_0(harness, guest):
    r = run(harness, guest("hello"))
    assert r.code == 0, r.stderr
    # Exactly once: simavr's own line echo is off, and repeated bytes
    # ("ll", "\n\n") all arrive.
    assert r.stdout == b"Hello from tern on simavr!\n\nbye\n"
    assert "error" not in r.stderr


def test_exit_status_propagates(harness, guest):
    r = run(harness, guest("exit3"))
    assert r.code == 3, r.stderr
    assert r.stdout == b""


def test_runaway_loop_stops_at_cycle_limit(harness, guest):
    r = run(harness, guest("runaway"), "--max-cycles", "1000000")
    assert r.code == EXIT_CYCLE_LIMIT, r.stderr
    assert "cycle limit" in r.stderr
    assert 1_000_000 <= r.cycles < 1_000_010


def test_cycle_limit_accepts_exponent_notation(harness, guest):
    r = run(harness, guest("runaway"), "--max-cycles", "2e6")
    assert r.code == EXIT_CYCLE_LIMIT, r.stderr
    assert 2_000_000 <= r.cycles < 2_000_010


def test_wall_time_limit(harness, guest):
    r = run(harness, guest("runaway"),
            "--max-cycles", "1e18", "--max-wall-seconds", "0.3")
    assert r.code == EXIT_WALL_LIMIT, r.stderr
    assert "wall-time limit" in r.stderr
    assert r.seconds < 10


def test_store_outside_ram_is_a_crash(harness, guest):
    r = run(harness, guest("crash"))
    assert r.code == EXIT_CRASH, r.stderr
    assert "crashed" in r.stderr


def test_invalid_opcode_is_a_crash(harness, guest):
    r = run(harness, guest("bad_opcode"))
    assert r.code == EXIT_CRASH, r.stderr
    assert "invalid opcode" in r.stderr


def test_sleep_with_interrupts_disabled_is_reported(harness, guest):
    r = run(harness, guest("sleep_cli"))
    assert r.code == EXIT_SLEEP_FOREVER, r.stderr
    assert "sleeping forever" in r.stderr and "interrupts disabled" in r.stderr


def test_sleep_with_no_wakeup_source_is_reported(harness, guest):
    r = run(harness, guest("sleep_idle"))
    assert r.code == EXIT_SLEEP_FOREVER, r.stderr
    assert "sleeping forever" in r.stderr


def test_timer_sleep_is_fast_forwarded_and_cycle_exact(harness, guest):
    image = guest("timer_sleep")
    first = run(harness, image)
    second = run(harness, image)
    for r in (first, second):
        assert r.code == 0, r.stderr
        assert r.stdout == b"100 wakeups\n"
    # 100 compare periods of 64 * 6250 cycles (10 s at 4 MHz), plus setup
    # and the final line.
    assert 100 * 64 * 6250 <= first.cycles < 100 * 64 * 6250 + 10_000
    assert first.cycles == second.cycles
    simulated_seconds = first.cycles / F_CPU
    assert first.seconds < simulated_seconds / 10


def test_polling_the_uart_costs_no_wall_time(harness, guest):
    r = run(harness, guest("txc_poll"))
    assert r.code == 0, r.stderr
    assert r.stdout == b"0123456789\n" * 200
    # Stock simavr's usleep(1) per poll makes this take seconds.
    assert r.seconds < 2


@pytest.mark.parametrize("name", ["hello", "timer_sleep", "txc_poll", "runaway"])
def test_two_runs_are_identical(harness, guest, name):
    image = guest(name)
    options = ("--max-cycles", "3e6") if name == "runaway" else ()
    first = run(harness, image, *options)
    second = run(harness, image, *options)
    assert (first.code, first.stdout, first.cycles) == \
        (second.code, second.stdout, second.cycles)


def test_long_busy_loop_is_cycle_exact(harness, guest):
    """40,000,000 cycles of one delay loop end on that cycle. The speed is
    printed (-s), not asserted: it depends on the machine's load, and a
    speed goal belongs in a benchmark. The fast-forwarded sleep and the
    UART poll above keep their wall-time checks, whose margins are 100x
    and 3x what a regression would cost."""
    r = run(harness, guest("busy"))
    assert r.code == 0, r.stderr
    assert 40_000_000 <= r.cycles < 40_001_000
    rate = r.cycles / r.seconds
    print(f"\ntern-simavr: {r.cycles} cycles in {r.seconds:.3f} s = "
          f"{rate / 1e6:.1f} M cycles/s = {rate / F_CPU:.1f}x real time")


def test_missing_elf_is_a_load_failure(harness, tmp_path):
    r = run(harness, tmp_path / "missing.elf")
    assert r.code == EXIT_LOAD, r.stderr


def test_non_elf_file_is_a_load_failure(harness, tmp_path):
    junk = tmp_path / "junk.elf"
    junk.write_bytes(b"not an ELF image\n")
    r = run(harness, junk)
    assert r.code == EXIT_LOAD, r.stderr


def test_bad_command_line(harness, guest):
    r = run(harness, guest("hello"), "--max-cycles", "lots")
    assert r.code == EXIT_USAGE, r.stderr
    assert r.stdout == b""


def test_profile_accounts_every_cycle_to_an_address(harness, guest, tmp_path):
    """--profile: cycles per instruction address add up to the run's cycle
    count, and the slept cycles sit at the SLEEP instruction."""
    image = guest("timer_sleep")
    profile = tmp_path / "profile.txt"
    r = run(harness, image, "--profile", str(profile))
    assert r.code == 0, r.stderr
    counts = {}
    for line in profile.read_text().splitlines():
        address, cycles = line.split()
        counts[int(address, 16)] = int(cycles)
    assert all(a % 2 == 0 for a in counts)  # byte addresses of flash words
    # The exit store's own cycles are not stepped past the run's end.
    assert r.cycles - 4 <= sum(counts.values()) <= r.cycles
    # 100 compare periods of 400,000 cycles, nearly all of it asleep.
    hottest = max(counts, key=lambda a: counts[a])
    assert counts[hottest] > 0.99 * 100 * 64 * 6250
    disassembly = subprocess.run(["avr-objdump", "-d", str(image)],
                                 capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^\s*{hottest:x}:\s.*\bsleep\b", disassembly, re.M), hex(hottest)


def test_profile_to_an_unwritable_path_is_reported(harness, guest, tmp_path):
    r = run(harness, guest("exit3"), "--profile", str(tmp_path / "missing" / "p.txt"))
    assert r.code == 3
    assert "cannot write profile" in r.stderr


def test_trace_agrees_with_the_profile(harness, guest, tmp_path):
    """--trace: one line per step, cycles rising; the cycles it gives each
    address (to the next line's start) are the profile's, and it ends
    at the run's cycle count."""
    image = guest("timer_sleep")
    trace, profile = tmp_path / "trace.txt", tmp_path / "profile.txt"
    r = run(harness, image, "--trace", str(trace), "--profile", str(profile))
    assert r.code == 0, r.stderr
    steps = [(int(c), int(a, 16)) for c, a in (line.split() for line in
                                                 trace.read_text().splitlines())]
    assert steps[0][0] == 0 and all(b[0] >= a[0] for a, b in zip(steps, steps[1:]))
    spent: dict[int, int] = {}
    for (c, a), (nxt, _) in zip(steps, steps[1:] + [(r.cycles, 0)]):
        spent[a] = spent.get(a, 0) + nxt - c
    counts = {int(a, 16): int(c) for a, c in (line.split() for line in
                                              profile.read_text().splitlines())}
    last = steps[-1][1]  # the exit store: the profile stops at its start
    assert {a: c for a, c in spent.items() if a != last} == \
        {a: c for a, c in counts.items() if a != last}


def test_trace_to_an_unwritable_path_is_reported(harness, guest, tmp_path):
    r = run(harness, guest("exit3"), "--trace", str(tmp_path / "missing" / "t.txt"))
    assert r.code != 0 and "cannot write trace" in r.stderr
