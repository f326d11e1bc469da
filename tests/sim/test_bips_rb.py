"""apps/bips_rb under tern-sim (docs/sim/bips_rb.toml, docs/bips.md): four
MicaZ nodes, beacon-synchronized, each sending into an RB region (TDMA,
exclusive slots by node id) and a CB region (CSMA/CA) of the same macro
slot. RB frames and CB frames differ in length on air. Read from the
simulator's outputs: events.jsonl (every transmission, reception and
collision, the region pin PC0) and the consoles (the app's lines)."""
from __future__ import annotations

import re
import shutil
from typing import Any

import pytest


from scenario_run import ROOT, run_scenario, stats

NODES = ["n0", "n1", "n2", "n3"]
RB_LEN = 9 + 8 + 2   # header, payload, FCS: tx_start's len
CB_LEN = 9 + 10 + 2
US = 1_000_000  # ps

pytestmark = pytest.mark.skipif(
    shutil.which("avr-gcc") is None or not (ROOT / "tools/simavr/build/tern-sim").is_file(),
    reason="needs avr-gcc and tools/simavr/build/tern-sim (make setup)",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_scenario("bips_rb.toml", tmp_path_factory.mktemp("bips_rb"))



def on_air(run: dict[str, Any], length: int) -> dict[str, tuple[str, int, int]]:
    """tx id -> (sender, start, end) of every frame of that length."""
    starts = {e["tx"]: (e["node"], e["t_ps"]) for e in run["events"] if e["event"] == "tx_start" and e.get("len") == length}
    return {e["tx"]: (*starts[e["tx"]], e["t_ps"]) for e in run["events"] if e["event"] == "tx_end" and e["tx"] in starts}


def rb_windows(run: dict[str, Any]) -> list[tuple[int, int]]:
    """The master's RB regions, t0..t2 from its region pin: the short ones
    (19 ms long; the CB region is 60 ms)."""
    edges = [(e["t_ps"], e["value"]) for e in run["events"]
             if e["node"] == "n0" and e["event"] == "pin" and e["label"] == "region"]  # fmt: skip
    rises = [t for t, v in edges if v == 1]
    falls = [t for t, v in edges if v == 0][1:]  # the first fall: the pin set up
    return [(a, b) for a, b in zip(rises, falls) if b - a < 30_000 * US]


def test_every_node_ran_to_its_end(run: dict[str, Any]) -> None:
    for n in run["summary"]["nodes"]:
        assert n["status"] == "exit" and n["exit_status"] == 0, n
        assert "bips_rb: " not in run["consoles"][n["name"]]  # no start-up refusal


def test_rb_frames_are_collision_free_and_reach_every_node(run: dict[str, Any]) -> None:
    rb = on_air(run, RB_LEN)
    assert len(rb) >= 4 * 4, "every node sends RB frames"
    for tx, (sender, start, end) in rb.items():
        got = {e["node"] for e in run["events"] if e["event"] == "rx_ok" and e["tx"] == tx}
        assert got == set(NODES) - {sender}, (tx, sender)  # every other node, no loss
    hurt = [e for e in run["events"] if e["event"] in ("collision", "rx_bad_fcs") and e["tx"] in rb]
    assert hurt == []
    # and nothing else was on air while an RB frame was
    every = [(s, e) for length in (RB_LEN, CB_LEN) for (_, s, e) in on_air(run, length).values()]
    for tx, (_, start, end) in rb.items():
        assert sum(1 for s, e in every if s < end and start < e) == 1, tx


def test_no_collision_event_in_rb_regions(run: dict[str, Any]) -> None:
    windows = rb_windows(run)
    assert len(windows) >= 5
    for e in run["events"]:
        if e["event"] in ("collision", "rx_bad_fcs"):
            assert not any(a - 100 * US <= e["t_ps"] <= b + 300 * US for a, b in windows), e


def test_rb_sends_each_frame_once_in_its_own_slots(run: dict[str, Any]) -> None:
    for node in NODES:
        text = run["consoles"][node]
        enq = re.findall(r"^enq to=1 tag=(\d+)$", text, re.M)
        conf = re.findall(r"^conf to=1 tag=(\d+) st=(\w+) tries=(\d+)$", text, re.M)
        assert sorted(t for t, _, _ in conf) == sorted(enq), node  # each confirmed once
        assert all(st == "MUX_OK" and tries == "1" for _, st, tries in conf), node
        mine = [tx for tx, (sender, _, _) in on_air(run, RB_LEN).items() if sender == node]
        assert len(mine) == len(enq), node
        rb = stats(text, "rb")
        assert rb["sent"] == len(enq) and rb["late"] == rb["overrun"] == rb["tx_failed"] == 0, node


def test_cb_region_in_the_same_macro_slot_still_works(run: dict[str, Any]) -> None:
    cb = on_air(run, CB_LEN)
    for node in NODES:
        text = run["consoles"][node]
        enq = re.findall(r"^enq to=2 tag=(\d+)$", text, re.M)
        conf = re.findall(r"^conf to=2 tag=(\d+) st=(\w+) tries=(\d+)$", text, re.M)
        assert enq and sorted(t for t, _, _ in conf) == sorted(enq), node
        ok = sum(1 for c in conf if c[1] == "MUX_OK")
        assert ok == sum(1 for s, _, _ in cb.values() if s == node), node
        # CB frames from every other node arrive
        senders = {int(f) for f, to in re.findall(r"^rx from=(\d+) to=(\d+) tag=\d+$", text, re.M) if to == "2"}
        assert senders == {i for i in range(4) if f"n{i}" != node}, node
