"""The BCS preempts a long handler under every execution model of the MicaZ
(apps/bips_busy, docs/sim/bips_busy.toml, docs/bips.md): one node per
model, each its own BCS master; its one task works 50 ms at a stretch
(PC1 high) across region 0's t0..t2 and region 1's t0 of every other
100 ms macro slot. From the logic analyser: each region start (PC0 rising)
and stop (PC0 falling) against its place on the schedule's grid, in the
macro slots with the task working and in those with the CPU idle."""
from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from scenario_run import ROOT, run_scenario, stats

MODELS = ["fifo", "priority", "stack", "threads", "adaptive"]  # micaz's (hybrid: Cortex-M only)
PS_PER_US = 1_000_000
MACRO_PS = 100_000 * PS_PER_US
# region starts t0 and stops t2 = t3 - d_stop (192 us) into the macro slot, µs
STARTS_US = (10_000, 50_000)
STOPS_US = (30_000 - 192, 70_000 - 192)
N_WORK = 7  # 50 ms of work from 5 ms into macro slots 0, 2, ..., 12 of the 1.26 s run
N_REGIONS = 26  # 13 macro slots of two regions
# d_maxOffset of the schedule: the guard its t1 assumes. A region started
# later than that by its own node's clock breaks it.
MAX_OFFSET_US = 100
HZ = 7_372_800
MASKED_MAX_PS = 100 * 1_000_000 * PS_PER_US // HZ  # 100 cycles

pytestmark = pytest.mark.skipif(
    shutil.which("avr-gcc") is None or not (ROOT / "tools/simavr/build/tern-sim").is_file(),
    reason="needs avr-gcc and tools/simavr/build/tern-sim (make setup)",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_scenario("bips_busy.toml", tmp_path_factory.mktemp("bips_busy"))


def edges(run: dict[str, Any], node: str, label: str, value: int) -> list[int]:
    return [e["t_ps"] for e in run["events"]
            if e["node"] == node and e["event"] == "pin" and e["label"] == label and e["value"] == value]  # fmt: skip


def lateness(times: list[int], offsets_us: tuple[int, ...], base: int) -> list[int]:
    """Each edge minus its place on the grid base + k macro slots + offset (ps)."""
    out = []
    for t in times:
        k = (t - base) // MACRO_PS
        off = min(offsets_us, key=lambda o: abs(t - base - k * MACRO_PS - o * PS_PER_US))
        out.append(t - base - k * MACRO_PS - off * PS_PER_US)
    return out



@pytest.mark.parametrize("model", MODELS)
def test_a_long_handler_does_not_delay_the_bcs(run: dict[str, Any], model: str) -> None:
    console = run["consoles"][model]
    node = next(n for n in run["summary"]["nodes"] if n["name"] == model)
    assert node["status"] == "exit" and node["exit_status"] == 0, (node, console)
    m = re.search(r"^busy model=(\w+) n=(\d+) enq=(\d+) conf_ok=(\d+)$", console, re.M)
    assert m and m[1] == model, console
    assert [int(m[2]), int(m[3]), int(m[4])] == [N_WORK] * 3, console  # every frame confirmed sent

    busy = list(zip(edges(run, model, "busy", 1), edges(run, model, "busy", 0)[1:]))  # first fall: set-up
    assert len(busy) == N_WORK
    # 50 ms of work took longer: the BCS's handlers ran inside it (preempted it)
    assert all(50_500 * PS_PER_US < b - a < 60_000 * PS_PER_US for a, b in busy), busy

    def working(t: int) -> bool:
        return any(a < t < b for a, b in busy)

    # each work period's frame went on air while the task was still working
    tx = [e["t_ps"] for e in run["events"] if e["node"] == model and e["event"] == "tx_start"]
    assert len(tx) == N_WORK and all(working(t) for t in tx), tx

    rises, falls = edges(run, model, "region", 1), edges(run, model, "region", 0)[1:]
    assert len(rises) == N_REGIONS and len(falls) == N_REGIONS - 1  # none lost, none added (the last: after the end)
    base = rises[0] - STARTS_US[0] * PS_PER_US  # the grid, at the first start
    for what, times, offsets, n_working in (("start", rises, STARTS_US, 2 * N_WORK),
                                            ("stop", falls, STOPS_US, N_WORK)):  # fmt: skip
        late = lateness(times, offsets, base)
        during = [d for d, t in zip(late, times) if working(t)]
        idle = [d for d, t in zip(late, times) if not working(t)]
        assert len(during) == n_working, what  # region 0's t0 and t2, region 1's t0 of each work period
        print(f"{model} {what}: working {min(during) / 1e6:.2f}..{max(during) / 1e6:.2f} us, "
              f"idle {min(idle) / 1e6:.2f}..{max(idle) / 1e6:.2f} us (from the grid of the first start)")
        # the task's work adds to the BCS's delay no more than the kernel's
        # own masked sections (a thread switch: 54 cycles measured), never
        # the handler's 50 ms; with the idle wake-up cheaper than those
        # since the AVR interrupt path lost its extra clock reads, an idle
        # CPU's start is no longer the later one
        # (stop 23, bisected; not the work) The AVR port enables Timer1's
        # compare interrupt for a deadline any number of wraps ahead, so the
        # low 16 bits of the next work period's deadline match once per
        # wrap, an interrupt that only returns. When such a match falls on
        # a region start during work it holds it back 108 cycles under
        # stack, 204 under threads and adaptive: that failed this assertion
        # from e3dfc5c (a cheaper idle reference) until the 32-bit tick
        # (aa5c3a6) moved the timing. Enabling the compare only in the
        # deadline's last wrap removes it, but first the clock must count
        # wraps another way: it sees one only as TCNT1 going backwards
        # between two reads, and that match is the read at a second place
        # in each wrap (with it gone, test_bips, test_remote and
        # test_migrate_halt hung).
        assert max(during) <= max(idle) + MASKED_MAX_PS, (what, during, idle)
    # and absolutely, the BCS's own measure: a step's time to its handler's clock read
    delay = stats(console, "bcs_delay")
    for step in ("start", "stop"):
        assert delay[step] * 1_000_000 / HZ < MAX_OFFSET_US, (step, delay)
