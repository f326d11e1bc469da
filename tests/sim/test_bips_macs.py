"""Issue 11's experiment 4 in small (`tern bench bips macs`, docs/bips.md):
ten MicaZ nodes send periodic and sporadic frames to a sink; n1 and n2 are
a hidden-terminal pair (each in the sink's range, not in each other's).
Four seconds of traffic per run, under CB, RB, ACTP, MB alone and the four
in one macro slot on every node. Collisions and losses are tern-sim's
(events.jsonl); deliveries the sink's lines; delays the senders' enqueue
times and the SFD times their confirmations carry (cycles of their clocks)."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from scenario_run import ROOT
from terntools import bipsbench as bb

pytestmark = pytest.mark.skipif(
    shutil.which("avr-gcc") is None or not (ROOT / "tools/simavr/build/tern-sim").is_file(),
    reason="needs avr-gcc and tools/simavr/build/tern-sim (make setup)",
)

SECONDS = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out: Path = tmp_path_factory.mktemp("macs")
    return {v: bb.run_macs_variant(out, v, SECONDS, "stack", ROOT) for v in bb.MACS_VARIANTS}


def test_every_run_carried_traffic_and_refused_nothing(runs: dict[str, dict[str, Any]]) -> None:
    for v, r in runs.items():
        assert r["refused"] == 0, v
        for mac, m in r["macs"].items():
            # nine senders, a periodic frame a second each, sporadic ones besides
            assert m["enqueued"] >= (9 * SECONDS if v != "mix" else 9 * SECONDS // 4), (v, mac)
            assert m["confirmed_ok"] == m["enqueued"] and m["duplicates"] == 0, (v, mac)


def test_rb_and_actp_are_collision_free_and_meet_their_bound(runs: dict[str, dict[str, Any]]) -> None:
    for v in ("rb", "actp", "mix"):
        for mac in ("RB", "ACTP"):
            m = runs[v]["macs"].get(mac)
            if m is None:
                continue
            assert m["collisions"] == 0 and m["lost_busy_at_sink"] == 0, (v, mac)
            assert m["delivered"] == m["enqueued"], (v, mac)  # the hidden pair's too
            assert m["sfd_unknown"] == 0 and m["latency_us"]["max"] <= m["bound_us"], (v, mac, m["latency_us"])


def test_cb_loses_frames_of_the_hidden_pair_at_the_sink(runs: dict[str, dict[str, Any]]) -> None:
    cb = runs["cb"]["macs"]["CB"]
    assert cb["hidden_pair_lost_at_sink"] > 0
    assert cb["delivered"] < cb["enqueued"]
    # the pair fares worse than the rest: neither hears the other's frames.
    # On average over the pair: in four seconds whether n1's and n2's own
    # frames overlap, and which of the two loses more, is the draw of one
    # seed (seeds 7, 8, 9 give 0 n1 x n2 collisions since the alarms fire
    # on time, 6 s of seed 7 gives 2); the pair's mean held in all of them.
    pair = cb["hidden_pair_delivery"].values()
    assert sum(pair) / len(pair) < cb["others_delivery"]


def test_mb_is_collision_free(runs: dict[str, dict[str, Any]]) -> None:
    for v in ("mb", "mix"):
        m = runs[v]["macs"]["MB"]
        assert m["collisions"] == 0 and m["delivered"] == m["enqueued"], v


def test_mixed_super_slot_delivers_under_each_mac(runs: dict[str, dict[str, Any]]) -> None:
    mix = runs["mix"]
    assert set(mix["macs"]) == {"RB", "CB", "ACTP", "MB"}
    for mac, m in mix["macs"].items():
        assert m["delivered"] > 0, mac
    assert mix["collisions_outside_regions"] == 0


def test_radio_is_off_outside_the_sync_phase_and_the_region(runs: dict[str, dict[str, Any]]) -> None:
    """Per 250 ms macro slot: the 3 ms sync phase, the region, 1.7 ms of
    wake-up before each (docs/bips.md); the senders listen until their
    first beacon (at most ~1.1 s) besides."""
    for v in ("cb", "rb", "actp", "mb"):
        r = runs[v]
        (_, _, _, length), = bb.MACS_REGIONS[v]
        share = (3_000 + length + 2 * 1_700) / bb.MACRO_US
        for n, on in r["radio_on_ms"].items():
            assert on <= r["run_ms"][n] * share + 1_150, (v, n, on)
