"""A processor that dies while another keeps sending to it (kernel/remote.c's
tern_remote_nack, drivers/procbus, tools/simavr/bus.c's TX_NACK;
tests/target/apps/peer_down): three ATmega1284P modules of one node,
tern-sim halting module 2 at 41 ms. The sender's messages to it are dropped
by name (peer_down) and counted, its later posts refused with TERN_ETIMEOUT;
nothing hangs, and module 3 -- powered down between messages, woken by each
frame -- gets every message, in order."""
from __future__ import annotations

import re
import shutil

import pytest

from scenario_run import summary_counters as counters, tern_sim

N_TICKS = 45  # tests/target/apps/peer_down/peer_down.c
RX_FRAMES = 2  # the scenario's receive queue: frames a processor holds when it dies
POWER_DOWN = 2  # SM2..0, summary.json's wakes_by_mode

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")

SCENARIO = f"""
[sim]
duration = 0.5
seed = 1

[[bus]]
name = "node1"
throughput = 2000000
slot_us = 300
latency_us = 20
rx_frames = {RX_FRAMES}
"""
NODE = """
[[node]]
name = "{name}"
board = "module-m1284"
app = "peer_down"
model = "priority"
bus = "node1"
{extra}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("peer_down")
    toml = tmp / "peer_down.toml"
    toml.write_text(SCENARIO + NODE.format(name="m1", extra="") + NODE.format(name="m2", extra="halt = 0.041")
                    + NODE.format(name="m3", extra="ppm = 20"))  # fmt: skip
    return tern_sim(toml, tmp / "out")


def test_nothing_hangs(run: dict) -> None:
    """Both living modules finish their checks and exit, long before the run's end."""
    nodes, consoles = run["nodes"], run["consoles"]
    assert nodes["m2"]["status"] == "halt"
    for name in ("m1", "m3"):
        assert nodes[name]["status"] == "exit" and nodes[name]["exit_status"] == 0, (name, consoles[name])
        assert " bad " not in consoles[name]


def test_messages_to_the_dead_processor_are_dropped_by_name_and_counted(run: dict) -> None:
    m1 = counters(run["consoles"]["m1"])
    got = [int(x) for x in re.findall(r"peer 1: got (\d+)", run["consoles"]["m2"])]
    assert got == list(range(len(got))) and 10 <= len(got) <= 16  # before it died at 41 ms
    # the bus NACKed a frame: the processor is down, later posts refused by name
    assert m1["nacked"] >= 1 and m1["down1"] == 1 and m1["down2"] == 0
    assert m1["refused_b"] > 0 and "last_b=TERN_ETIMEOUT" in run["consoles"]["m1"]
    assert m1["sent_b"] + m1["refused_b"] == N_TICKS
    # every message posted to sink_b is accounted for: handled, dropped by
    # name (peer_down: NACKed on the bus, taken from the queue, or refused),
    # or lost in the dead processor's receive queue with it
    lost_on_bus = m1["peer_down"] - m1["refused_b"]
    assert lost_on_bus >= 1
    assert 0 <= m1["sent_b"] - len(got) - lost_on_bus <= RX_FRAMES
    assert run["nodes"]["m1"]["bus"]["nacked"] == m1["nacked"]


def test_other_destinations_are_unaffected(run: dict) -> None:
    """Module 3 got every message, in order (it checks), powered down between
    them and woken by each; the bus queue never waited behind the dead one."""
    m1, m3 = counters(run["consoles"]["m1"]), counters(run["consoles"]["m3"])
    assert m1["sent_c"] == N_TICKS and m1["refused_c"] == 0
    assert m3["next"] == N_TICKS and m3["rx_frames"] == N_TICKS + 1  # and the bye
    assert m1["queue_depth"] == 0 and m1["max_queue"] <= 2
    assert m1["down2"] == 0  # never taken for dead while powered down
    assert m3["downs"] >= N_TICKS - 5
    assert run["nodes"]["m3"]["wakes_by_mode"][POWER_DOWN] >= N_TICKS - 5
