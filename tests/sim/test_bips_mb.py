"""apps/bips_mb under tern-sim (docs/sim/bips_mb.toml, docs/bips.md): four
MicaZ nodes, beacon-synchronized, three MB regions per 1 s macro slot; each
slot has a mode-0 sender (periodic frames, 19 bytes on air with the FCS)
and a mode-1 sender (alarms, 21 bytes); black-burst signaling at the slot's
start decides the mode and every node shows it on pin PC1. Read from the
simulator's outputs: events.jsonl (every transmission, burst, reception,
collision and pin edge) and the consoles (the app's lines)."""
from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from scenario_run import ROOT, run_scenario, stats

NODES = ["n0", "n1", "n2", "n3"]
PERIODIC_LEN = 9 + 8 + 2  # header, payload, FCS: tx_start's len
ALARM_LEN = 9 + 10 + 2
US = 1_000_000  # ps
# apps/bips_mb's schedule: {mode 0, mode 1} sender per slot, None: nobody
SENDERS = [(None, None), (0, 3), (1, 2), (2, 3), (3, 1), (0, 2), (1, 3)]
SLOT_US, D_US = 3000, 100
LEAD_US, WINDOW_US = 436, 596  # mb timing d=100 hops=1 modes=2 (the app prints it)
REGION_STARTS_MS = (10, 340, 670)
REGION_LEN_US = 22000
# An alarm waits at most for its owner's next mode-1 slot: the longest
# gap between two regions (1010 - 670 ms) plus a whole region.
ALARM_BOUND_US = (1000 + REGION_STARTS_MS[0] - REGION_STARTS_MS[-1]) * 1000 + REGION_LEN_US

pytestmark = pytest.mark.skipif(
    shutil.which("avr-gcc") is None or not (ROOT / "tools/simavr/build/tern-sim").is_file(),
    reason="needs avr-gcc and tools/simavr/build/tern-sim (make setup)",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_scenario("bips_mb.toml", tmp_path_factory.mktemp("bips_mb"))


def on_air(run: dict[str, Any], lengths: tuple[int, ...]) -> dict[int, tuple[str, int, int, int]]:
    """tx id -> (sender, start, end, len) of every frame of those lengths."""
    starts = {e["tx"]: (e["node"], e["t_ps"], e["len"]) for e in run["events"]
              if e["event"] == "tx_start" and e.get("kind") == "frame" and e.get("len") in lengths}  # fmt: skip
    return {e["tx"]: (starts[e["tx"]][0], starts[e["tx"]][1], e["t_ps"], starts[e["tx"]][2])
            for e in run["events"] if e["event"] == "tx_end" and e["tx"] in starts}  # fmt: skip


def bursts(run: dict[str, Any]) -> list[tuple[str, int, int]]:
    starts = {e["tx"]: (e["node"], e["t_ps"]) for e in run["events"]
              if e["event"] == "tx_start" and e.get("kind") != "frame"}  # fmt: skip
    return [(*starts[e["tx"]], e["t_ps"]) for e in run["events"] if e["event"] == "tx_end" and e["tx"] in starts]


def edges(run: dict[str, Any], node: str, label: str) -> list[tuple[int, int]]:
    return [(e["t_ps"], e["value"]) for e in run["events"]
            if e["node"] == node and e["event"] == "pin" and e["label"] == label]  # fmt: skip


def level_at(pin: list[tuple[int, int]], t: int) -> int:
    v = 0
    for at, value in pin:
        if at > t:
            break
        v = value
    return v


def region_of(run: dict[str, Any], node: str, t: int) -> int:
    """The start (t0, ps) of `node`'s region holding time t."""
    pin = edges(run, node, "region")
    rises = [a for a, v in pin if v == 1]
    t0 = max(a for a in rises if a <= t)
    assert t - t0 < REGION_LEN_US * US, (node, t)
    return t0


def slot_of(run: dict[str, Any], node: str, t: int) -> tuple[int, int]:
    """(slot index, slot start in ps) on `node`'s clock for a time t in its region."""
    t1 = region_of(run, node, t) + D_US * US
    k = (t - t1) // (SLOT_US * US)
    return k, t1 + k * SLOT_US * US


def local_to_ps(run: dict[str, Any], node: str) -> int:
    """What to add to a local time (us, as the app prints them) x US to get
    the simulator's time: PC2 rose at the local time of the line "clock"
    (the kernel clock starts after reset; ppm drift adds < 250 us here)."""
    (local,) = re.findall(r"^clock t=(\d+)$", run["consoles"][node], re.M)
    rise = next(a for a, v in edges(run, node, "clock") if v == 1)
    return rise - int(local) * US


def test_every_node_ran_to_its_end(run: dict[str, Any]) -> None:
    for n in run["summary"]["nodes"]:
        assert n["status"] == "exit" and n["exit_status"] == 0, n
        assert "bips_mb: " not in run["consoles"][n["name"]]  # no start-up refusal
        mb = stats(run["consoles"][n["name"]], "mb")
        assert mb["late"] == mb["overrun"] == mb["tx_failed"] == mb["too_long"] == 0, n["name"]
    print(re.findall(r"^mb timing .*$", run["consoles"]["n0"], re.M))


def test_no_collision_on_air(run: dict[str, Any]) -> None:
    assert not [e for e in run["events"] if e["event"] in ("collision", "rx_bad_fcs")]
    frames = on_air(run, (PERIODIC_LEN, ALARM_LEN))
    assert len(frames) >= 40
    spans = [(s, e) for _, s, e, _ in frames.values()]
    for tx, (_, s, e, _) in frames.items():
        assert sum(1 for a, b in spans if a < e and s < b) == 1, tx  # only itself
        assert not any(a < e and s < b for _, a, b in bursts(run)), tx
    for tx, (sender, _, _, _) in frames.items():
        got = {e["node"] for e in run["events"] if e["event"] == "rx_ok" and e["tx"] == tx}
        assert got == set(NODES) - {sender}, (tx, sender)  # every other node, no loss
    for node in NODES:
        assert stats(run["consoles"][node], "mb")["rx_unexpected"] == 0, node


def test_the_mode_is_known_network_wide_within_its_slot(run: dict[str, Any]) -> None:
    """Each data frame goes out in the mode its slot was signaled in, and at
    its start every node's PC1 shows that mode; every switch to mode 1 is
    made within one signaling window of the burst that signaled it. (Slot
    positions here come from the region pin, which the BCS raises in its t0
    handler, ~180 us after t0: tolerances below are wider than that.)"""
    pins = {n: edges(run, n, "mode") for n in NODES}
    modes = {0: 0, 1: 0}
    for sender, start, _, _ in on_air(run, (PERIODIC_LEN, ALARM_LEN)).values():
        k, _ = slot_of(run, sender, start)
        me = int(sender[1:])
        mode = 1 if SENDERS[k][1] == me else 0
        assert SENDERS[k][mode] == me, (sender, k)
        modes[mode] += 1
        for n in NODES:
            assert level_at(pins[n], start) == mode, (n, sender, k, start)
    assert modes[0] >= 20 and modes[1] >= 10, modes
    # every switch to mode 1 follows a burst on air within one window
    starts = [s for _, s, _ in bursts(run)]
    for n in NODES:
        for at, v in pins[n][1:]:  # the first edge: the pin set up
            if v == 1:
                assert any(0 < at - s < WINDOW_US * US for s in starts), (n, at)


def sent_frames(run: dict[str, Any], node: str, length: int) -> list[int]:
    return sorted(s for sender, s, _, ln in on_air(run, (length,)).values() if sender == node)


def test_an_alarm_owner_always_gets_its_slot(run: dict[str, Any]) -> None:
    """Deterministic guarantee: in each of its mode-1 slots an owner with an
    alarm queued sends one, at its first try (nobody else can take the
    slot), and an alarm queued alone reaches every node within ALARM_BOUND_US."""
    worst = 0
    for node in NODES[1:]:
        me = int(node[1:])
        text = run["consoles"][node]
        enq = {int(t): int(at) for t, at in re.findall(r"^enq to=2 tag=(\d+) t=(\d+)$", text, re.M)}
        conf = re.findall(r"^conf to=2 tag=(\d+) st=(\w+) tries=(\d+) t=\d+$", text, re.M)
        assert enq and sorted(int(t) for t, _, _ in conf) == sorted(enq), node
        assert all(st == "MUX_OK" and tries == "1" for _, st, tries in conf), node
        sent = sent_frames(run, node, ALARM_LEN)
        assert len(sent) == len(enq), node
        # In every own mode-1 slot that comes while an alarm is queued, the
        # owner sends one (FIFO: the i-th enqueued is the i-th on air).
        queued = sorted(at * US + local_to_ps(run, node) for at in enq.values())
        assert all(e < s for e, s in zip(queued, sent)), node
        rises = [a for a, v in edges(run, node, "region") if v == 1]
        own = [t0 + (D_US + k * SLOT_US + LEAD_US) * US for t0 in rises for k, (_, m1) in enumerate(SENDERS) if m1 == me]
        used = 0
        for sig in own:
            backlog = sum(1 for e in queued if e < sig - 500 * US) - sum(1 for s in sent if s < sig - 500 * US)
            in_slot = [s for s in sent if sig - 500 * US <= s < sig + SLOT_US * US]
            if backlog > 0:
                assert len(in_slot) == 1, (node, sig)
                used += 1
        assert used >= 3, node
        for i, (e, start) in enumerate(zip(queued, sent)):
            if i and sent[i - 1] > e:
                continue  # queued behind another alarm: the slot rule above covers it
            rx = [ev["t_ps"] for ev in run["events"] if ev["event"] == "rx_ok" and ev["node"] != node
                  and ev.get("len") == ALARM_LEN and ev["from"] == me and start < ev["t_ps"] < start + 2000 * US]  # fmt: skip
            assert len(rx) == 3, (node, start)
            worst = max(worst, max(rx) - e)
    print(f"largest alarm delay, enqueue to the last reception: {worst / US:.0f} us (bound {ALARM_BOUND_US} us)")
    assert worst <= ALARM_BOUND_US * US


def test_lower_modes_use_slots_the_owner_leaves(run: dict[str, Any]) -> None:
    """Periodic frames go out in slots that belong to an alarm owner in mode
    1 (every slot here has one) whenever the owner is silent; a mode-0
    sender that lost a slot to an alarm sends later, nothing is lost."""
    lost = 0
    for node in NODES:
        text = run["consoles"][node]
        enq = re.findall(r"^enq to=1 tag=(\d+) t=\d+$", text, re.M)
        conf = re.findall(r"^conf to=1 tag=(\d+) st=(\w+) tries=(\d+) t=\d+$", text, re.M)
        assert enq and sorted(t for t, _, _ in conf) == sorted(enq), node
        assert all(st == "MUX_OK" for _, st, _ in conf), node
        assert len(sent_frames(run, node, PERIODIC_LEN)) == len(enq), node
        assert "refused" not in text, node
        mb = stats(text, "mb")
        assert mb["won"] == mb["sent"] and mb["requested"] == mb["won"] + mb["lost"], node
        lost += mb["lost"]
    assert lost > 0  # alarms did take slots from periodic senders


def test_radio_off_outside_the_regions(run: dict[str, Any]) -> None:
    """Every transmission (frames and bursts) lies inside its sender's
    region (PC0: t0..t2); synchronized, the radio is powered down but for
    the regions, the sync phases and the wake-up margins."""
    for node in NODES:
        pin = edges(run, node, "region")
        windows = list(zip([a for a, v in pin if v == 1], [a for a, v in pin if v == 0][1:]))
        txs = [(s, e) for sender, s, e, _ in on_air(run, (PERIODIC_LEN, ALARM_LEN)).values() if sender == node]
        txs += [(s, e) for sender, s, e in bursts(run) if sender == node]
        for s, e in txs:
            assert any(a <= s and e <= b for a, b in windows), (node, s)
    for n in run["summary"]["nodes"]:
        ps = n["radio_ps"]
        assert ps["power_down"] / sum(ps.values()) > 0.75, n["name"]
        assert stats(run["consoles"][n["name"]], "bcs")["radio_offs"] >= 20, n["name"]
