"""A processor that dies mid-migration (issue 13, docs/reliability.md):
tests/target/apps/migrate_halt on two ATmega1284P modules of one node,
tern-sim halting one of them (a node's `halt`) before the migration or
while the counter's 1 kB STATE is on the bus (61.8-72.6 ms, 19 fragments).
The living module gives up by the migrator's deadlines (TERN_ETIMEOUT,
counted) and goes on: the counter runs on exactly one processor, or it is
reported lost; every message its senders posted is handled or counted."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from scenario_run import summary_counters, tern_sim


pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")

SCENARIO = """
[sim]
duration = 0.6
seed = 1

[[bus]]
name = "node1"
throughput = 2000000
slot_us = 300
latency_us = 20
rx_frames = 2

[[node]]
name = "m1"
board = "module-m1284"
app = "migrate_halt"
model = "priority"
bus = "node1"
{halt_m1}
[[node]]
name = "m2"
board = "module-m1284"
app = "migrate_halt"
model = "priority"
bus = "node1"
ppm = 20
{halt_m2}
"""


def run(tmp: Path, node: str, at_s: float) -> dict[str, object]:
    halt = f"halt = {at_s}\n"
    toml = tmp / "halt.toml"
    toml.write_text(SCENARIO.format(halt_m1=halt if node == "m1" else "", halt_m2=halt if node == "m2" else ""))
    r = tern_sim(toml, tmp / "out")
    nodes = r["nodes"]
    assert nodes[node]["status"] == "halt"
    alive = "m2" if node == "m1" else "m1"
    assert nodes[alive]["status"] == "exit" and nodes[alive]["exit_status"] == 0, nodes[alive]
    console = r["consoles"][alive]
    counts = summary_counters(console)
    where = re.search(r"counter on module (\d+), its state here handled=(\d+) a=(\d+) b=(\d+)", console)
    assert where, console
    at, handled, a, b = map(int, where.groups())
    return {"console": console, "c": counts, "at": at, "handled": handled, "a": a, "b": b}


def test_destination_dies_while_the_state_is_on_the_bus(tmp_path: Path) -> None:
    """The source sent part of the STATE: it no longer holds the task, so
    after its timeout it kills it (never two holders); what its sender
    posted meanwhile is dropped and counted."""
    r = run(tmp_path, "m2", 0.067)
    c = r["c"]
    assert "counter lost (TERN_ETIMEOUT)" in r["console"]
    assert r["at"] == 255  # on no living processor
    assert c["timeouts"] == 1 and c["killed"] == 1 and c["moved"] == 0 and c["stayed"] == 0
    assert c["transport_errors"] > 0  # the bus stopped at the dead module (flow control)
    # every number its own sender got accepted was handled before the move
    # or dropped, counted, with the task: lost_msgs counts both, those held
    # here meanwhile (the kernel's finalized drops) and those in the image
    # (the migrator's lost_msgs, by timing 0 or 1 of them)
    assert c["sent"] - r["a"] <= c["lost_msgs"]
    assert c["lost_msgs"] == c["kernel_finalized"] + c["mig_lost_msgs"] and c["kernel_finalized"] > 0
    # refused posts: the pool filled while the task was away, then no task
    assert c["refused"] > 0 and c["kernel_no_task"] > 0
    assert c["refused"] <= c["kernel_no_task"] + c["kernel_pool_full"] + c["queue_full"]


def test_source_dies_while_the_state_is_on_the_bus(tmp_path: Path) -> None:
    """The destination holds half a STATE: after the longer timeout of a
    processor that is not the source, it drops it, and what its sender
    held for the task in the bus queue, counted; the task is lost (it was
    on the dead source, or in flight)."""
    r = run(tmp_path, "m1", 0.067)
    c = r["c"]
    assert "counter lost (TERN_ETIMEOUT)" in r["console"]
    assert "counter arrived" not in r["console"]
    assert r["at"] == 255
    assert c["timeouts"] == 1 and c["partial_dropped"] == 1 and c["killed"] == 0
    assert c["task_killed"] > 0  # frozen in the bus queue, dropped by name
    assert c["queue_depth"] == 0
    assert c["refused"] == c["kernel_no_task"] + c["queue_full"]


def test_destination_dead_before_the_request(tmp_path: Path) -> None:
    """No FROZEN reply ever comes: the source, which still holds the task,
    gives up and resumes it; it runs on exactly one processor and handles
    every number its living sender got accepted."""
    r = run(tmp_path, "m2", 0.030)
    c = r["c"]
    assert "counter stayed (TERN_ETIMEOUT)" in r["console"]
    assert r["at"] == 0
    assert c["timeouts"] == 1 and c["stayed"] == 1 and c["killed"] == 0 and c["moved"] == 0
    assert 0 <= c["sent"] - r["a"] <= 1  # the last one may still wait for its turn
    assert 0 < r["b"] < 15  # the dead module's sender, before it died at 30 ms
    assert r["handled"] == r["a"] + r["b"]
    assert c["refused"] == c["kernel_pool_full"]  # held while frozen, the pool filled: counted
    assert c["lost_msgs"] == 0 and c["kernel_no_task"] == 0
