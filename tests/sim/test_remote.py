"""Remote tasks over tern-sim's processor bus (kernel/remote.c, apps/modules,
docs/sim/modules.toml): one application on the two processors of a node."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from scenario_run import ROOT, summary_counters as counters, tern_sim


pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return tern_sim(ROOT / "docs" / "sim" / "modules.toml", tmp_path_factory.mktemp("modules"))


def test_both_modules_finish_their_checks(run: dict) -> None:
    for name, node in run["nodes"].items():
        assert node["status"] == "exit" and node["exit_status"] == 0, (name, run["consoles"][name])
        assert " bad " not in run["consoles"][name]


def test_remote_delivery_obeys_the_local_priority_rules(run: dict) -> None:
    """While `busy` (priority 7) runs on module 2, three local (L) and three
    remote (R) messages wait there: they run by priority, each remote one
    after the local one of equal priority posted before it, as if all were
    local. With module 2 idle, three sent in one go (Q) leave module 1's bus
    queue highest destination first, after the one that found the bus free."""
    ran = re.findall(r"ran (\w+) (\w)", run["consoles"]["m2"])
    assert ran == [("high", "L"), ("high", "R"), ("mid", "L"), ("mid", "R"), ("low", "L"), ("low", "R"),
                   ("low", "Q"), ("high", "Q"), ("mid", "Q")]  # fmt: skip
    m2 = run["consoles"]["m2"]
    assert m2.index("busy ends") < m2.index("ran high L")


def test_multicast_crosses_the_bus_once_and_reaches_each_member_once(run: dict) -> None:
    got = re.findall(r"(member_\w+) got multicast (\d) from 'driver'", run["consoles"]["m1"] + run["consoles"]["m2"])
    assert sorted(got) == sorted((m, str(k)) for m in ("member_a", "member_b1", "member_b2") for k in (1, 2, 3))
    m1, m2 = counters(run["consoles"]["m1"]), counters(run["consoles"]["m2"])
    assert m1["tx_mcast"] == 3 and m2["rx_mcast"] == 3


def test_a_missing_remote_port_is_refused_by_name_and_counted(run: dict) -> None:
    """Through the remote TCB the sender is refused at once, as for a local
    task; a raw frame to that port is refused by the receiver. Each counted."""
    assert "send to 'low' port 13: TERN_ENOPORT" in run["consoles"]["m1"]
    m1, m2 = counters(run["consoles"]["m1"]), counters(run["consoles"]["m2"])
    assert m1["kernel_no_port"] == 1 and m1["no_port"] == 0
    assert m2["no_port"] == 1 and m2["kernel_no_port"] == 1


def test_streams_both_ways_lose_and_duplicate_nothing(run: dict) -> None:
    """200 numbered messages each way, in bursts that queue at the bus: every
    counter saw each number once and in order (it exits 4 otherwise), and the
    frame counts on both ends and in the simulator agree."""
    assert "count_b: 200 in order" in run["consoles"]["m2"]
    assert "count_a: 200 in order" in run["consoles"]["m1"]
    m1, m2 = counters(run["consoles"]["m1"]), counters(run["consoles"]["m2"])
    nodes = run["nodes"]
    # module 1: 4 R + 3 Q + 1 raw + 10 pings + 200 stream unicasts and 3 multicasts
    assert m1["tx_frames"] == 218 and nodes["m1"]["bus"]["frames_sent"] == 221
    assert m2["rx_frames"] == 217 and m2["rx_mcast"] == 3  # the raw one was refused
    # module 2: 10 pongs and 200 stream messages
    assert m2["tx_frames"] == 210 == m1["rx_frames"] == nodes["m1"]["bus"]["frames_received"]
    assert m1["tx_queued"] > 0 and m2["tx_queued"] > 0  # the bus queue was used
    for c in (m1, m2):
        assert all(c[k] == 0 for k in ("too_long", "queue_full", "no_memory", "bus_failed", "invalid", "bad_frame",
                                       "no_task", "refused", "kernel_pool_full"))  # fmt: skip


def test_round_trip_to_a_remote_task_is_bounded(run: dict) -> None:
    """Ten pings to `echo` on module 2, one at a time, timed on module 1's
    clock: each way waits at most for its sender's next TDMA slot (2 x 300
    us per cycle on this bus) besides 20 us of latency and the frame's
    36 us, so a round trip stays under 2 ms of simulated time."""
    m = re.search(r"round trip to module 2, 10 pings: min (\d+) max (\d+) mean (\d+) us", run["consoles"]["m1"])
    assert m, run["consoles"]["m1"]
    lo, hi, mean = (int(x) for x in m.groups())
    assert 2 * (20 + 36) <= lo <= mean <= hi < 2000


def test_a_processor_refuses_a_module_hw_entry_its_board_lacks(tmp_path: Path) -> None:
    """apps/hwclaim's description claims a radio for module 2, whose board
    (module-m128, TERN_BOARD_HW: an ADC) has none: module 2 refuses to start
    by name and counts it; module 1, whose ADC claim holds, starts."""
    r = tern_sim(ROOT / "docs" / "sim" / "hwclaim.toml", tmp_path)
    nodes, (m1, m2) = r["nodes"], (r["consoles"][n] for n in ("m1", "m2"))
    assert nodes["m1"]["exit_status"] == 0 and "hwclaim 0: started 'sampler'" in m1
    assert nodes["m2"]["exit_status"] == 3 and "started" not in m2
    assert ("hwclaim 1: app 'hwclaim': module_hw: module 1 claims hardware 0x10, its board has 0x20 "
            "(TERN_ENOHW) hw_refused=1 board_hw=0x20") in m2  # fmt: skip
