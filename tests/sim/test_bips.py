"""apps/bips under tern-sim (docs/sim/bips.toml, docs/bips.md): five MicaZ
nodes, beacon-synchronized, exchanging frames through the multiplexer's TX
and RX TOs in CB slot regions. Everything is read from the simulator's
outputs: consoles (the app's enq/conf/rx/stats lines), events.jsonl (frames
on air, the region pin PC0 of every node) and summary.json (radio states)."""
from __future__ import annotations

import collections
import json
import re
import shutil
from typing import Any

import pytest


from scenario_run import ROOT, run_scenario, stats

NODES = ["n0", "n1", "n2", "n3", "n4"]
DATA_LEN = 9 + 8 + 2  # header, payload, FCS: what tx_start/rx_ok call len
US = 1_000_000  # ps
# The configured d_maxOffset (bips.c): what the schedule's guard times assume.
MAX_OFFSET_US = 100
SYNCED_AFTER_PS = 2_000_000 * US  # the slaves take the master's second beacon (~1.02 s)

pytestmark = pytest.mark.skipif(
    shutil.which("avr-gcc") is None or not (ROOT / "tools/simavr/build/tern-sim").is_file(),
    reason="needs avr-gcc and tools/simavr/build/tern-sim (make setup)",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_scenario("bips.toml", tmp_path_factory.mktemp("bips"))



def test_every_node_ran_to_its_end(run: dict[str, Any]) -> None:
    for n in run["summary"]["nodes"]:
        assert n["status"] == "exit" and n["exit_status"] == 0, n
        assert "bips: " not in run["consoles"][n["name"]]  # no start-up refusal


def test_every_enqueued_frame_is_confirmed_once_and_ok_ones_went_on_air(run: dict[str, Any]) -> None:
    for node in NODES:
        text = run["consoles"][node]
        enq = re.findall(r"^enq to=(\d+) tag=(\d+)$", text, re.M)
        conf = re.findall(r"^conf to=(\d+) tag=(\d+) st=(\w+) tries=(\d+)$", text, re.M)
        assert enq and len(set(enq)) == len(enq)
        assert sorted((to, tag) for to, tag, _, _ in conf) == sorted(enq), node  # once each
        ok = sum(1 for c in conf if c[2] == "MUX_OK")
        on_air = [e for e in run["events"] if e["node"] == node and e["event"] == "tx_start" and e["len"] == DATA_LEN]
        assert ok == len(on_air), node  # no frame sent twice, none confirmed without being sent
        sent = sum(stats(text, f"tx_to id={to}")["sent"] for to in (1, 2))
        assert sent == ok


def test_received_frames_reach_both_tasks_or_are_counted(run: dict[str, Any]) -> None:
    for node in NODES:
        text = run["consoles"][node]
        frames = [e for e in run["events"] if e["node"] == node and e["event"] == "rx_ok" and e["len"] == DATA_LEN]
        lines = re.findall(r"^rx task=(\w+) from=(\d+) to=(\d+) tag=(\d+)$", text, re.M)
        by_task = collections.Counter(task for task, *_ in lines)
        for task in ("sensor", "alarm"):
            keys = [tuple(l[1:]) for l in lines if l[0] == task]
            assert len(keys) == len(set(keys)), f"{node}: {task} got a frame twice"
        rx = stats(text, "rx_to")
        bcs = stats(text, "bcs")
        radio = stats(text, "cc2420")
        injected = {e["tx"] for e in run["events"] if e["event"] == "inject"}
        short = sum(1 for e in run["events"]  # the injected 7-byte frame: malformed, not a DATA_LEN one
                    if e["node"] == node and e["event"] == "rx_ok" and e["tx"] in injected)
        dropped_whole = rx["no_to"] + rx["malformed"] - short + rx["foreign"] + bcs["rx_outside"]
        # two destinations: every frame is two deliveries, or counted: by the
        # multiplexer, or whole by the driver (no heap block for it, an RX FIFO
        # overflow; those counters also take frames of other lengths: a bound)
        missing = 2 * (len(frames) - dropped_whole) - (rx["delivered"] + rx["no_memory"] + rx["post_failed"])
        assert missing % 2 == 0 and 0 <= missing <= 2 * (radio["no_memory"] + radio["overflows"]), (node, missing)
        assert rx["delivered"] == by_task["sensor"] + by_task["alarm"], node
        assert rx["no_memory"] <= len(frames) // 10, f"{node}: heap too small for the load"


def region_edges(run: dict[str, Any], node: str, value: int) -> list[int]:
    return [e["t_ps"] for e in run["events"]
            if e["node"] == node and e["event"] == "pin" and e["label"] == "region" and e["value"] == value]  # fmt: skip


def test_region_starts_are_aligned_within_d_max_offset(run: dict[str, Any]) -> None:
    master = [t for t in region_edges(run, "n0", 1) if t > SYNCED_AFTER_PS]
    assert len(master) >= 8
    worst = 0
    for node in NODES[1:]:
        starts = [t for t in region_edges(run, node, 1) if t > SYNCED_AFTER_PS]
        assert len(starts) == len(master), node  # no region skipped, none added
        worst = max(worst, max(abs(a - b) for a, b in zip(master, starts)))
    print(f"largest region-start offset to the master: {worst / US:.2f} us")
    assert worst <= MAX_OFFSET_US * US


def test_no_transmission_outlasts_its_region(run: dict[str, Any]) -> None:
    """A data frame is on air only between its sender's t0 and t2 (the pin)."""
    for node in NODES:
        rises, falls = region_edges(run, node, 1), region_edges(run, node, 0)[1:]  # first fall: pin set up
        windows = list(zip(rises, falls))
        starts = {e["tx"]: e["t_ps"] for e in run["events"] if e["node"] == node and e["event"] == "tx_start" and e["len"] == DATA_LEN}
        for e in run["events"]:
            if e["node"] == node and e["event"] == "tx_end" and e["tx"] in starts:
                assert any(a <= starts[e["tx"]] and e["t_ps"] <= b for a, b in windows), (node, e)


def test_radio_is_off_in_idle_regions(run: dict[str, Any]) -> None:
    """Synchronized, a node's radio is on for 256 ms of every 2 s super slot
    (sync phases, three regions) plus a wake-up margin before each: the rest
    of the run is power-down (the slaves listen until their first sync)."""
    for n in run["summary"]["nodes"]:
        ps = n["radio_ps"]
        total = sum(ps.values())
        assert ps["power_down"] / total > 0.7, n["name"]
        assert stats(run["consoles"][n["name"]], "bcs")["radio_offs"] >= 20


def test_malformed_frames_are_dropped_and_counted_by_reason(run: dict[str, Any]) -> None:
    """docs/sim/bips.toml injects five frames no correct sender makes (from
    n0's position, in region A of macro slot 8, when traffic has stopped):
    a bad FCS, a transmission cut off after 10 of 31 bytes, a length byte
    of 60 for 17 bytes, one of 3 for 17 bytes, and a data frame of 7 bytes
    (a header cut short) with a good FCS. Every receiver drops each, and
    counts it by its reason: the driver (bad_crc, too_short) or the
    multiplexer (malformed); none reaches a task."""
    injected = [e for e in run["events"] if e["event"] == "inject"]
    assert len(injected) == 5
    ids = [e["tx"] for e in injected]
    for node in NODES[1:]:
        text = run["consoles"][node]
        mine = [e for e in run["events"] if e["node"] == node]
        bad_fcs = [e for e in mine if e["event"] == "rx_bad_fcs"]
        # the radio received each injected frame: four spoilt, the short header whole
        assert {e["tx"] for e in bad_fcs} >= set(ids[:4]), node
        assert [e["len"] for e in bad_fcs if e["tx"] == ids[3]] == [3]  # what the length byte said
        assert any(e["event"] == "rx_ok" and e["tx"] == ids[4] and e["len"] == 9 for e in mine), node
        radio, rx = stats(text, "cc2420"), stats(text, "rx_to")
        # each frame that came in spoilt is counted once by the driver, by reason
        # too_short: the length byte of 3 (and any a collision garbled below 5)
        assert radio["too_short"] >= 1, (node, radio)
        assert radio["bad_crc"] + radio["too_short"] == len(bad_fcs), (node, radio, len(bad_fcs))
        assert radio["len_invalid"] == radio["len_past_fifo"] == 0, (node, radio)
        assert rx["malformed"] == 1, (node, rx)  # the 7-byte frame, at the multiplexer
        assert not re.search(r"^rx task=\w+ from=7 ", text, re.M)  # src 7 is nobody: no task got it
