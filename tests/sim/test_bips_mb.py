"""apps/bips_mb under tern-sim (docs/bips.md): four MicaZ nodes, three MB
regions per 1 s macro slot; each slot has a mode-0 sender (periodic frames,
19 bytes on air with the FCS) and a mode-1 sender (alarms, 21 bytes);
black-burst signaling at the slot's start decides the mode and every node
shows it on pin PC1. Two scenarios: docs/sim/bips_mb.toml (one hop, beacon
sync) and docs/sim/bips_mb3.toml (a line of four, BBS, mode bits relayed
over three hops). Read from the simulator's outputs: events.jsonl (every
transmission, burst, reception, collision and pin edge) and the consoles
(the app's lines)."""
from __future__ import annotations

import re
import shutil
from typing import Any

from dataclasses import dataclass

import pytest

from scenario_run import ROOT, run_scenario, stats

NODES = ["n0", "n1", "n2", "n3"]
PERIODIC_LEN = 9 + 8 + 2  # header, payload, FCS: tx_start's len
ALARM_LEN = 9 + 10 + 2
EMERG_LEN = 9 + 12 + 2
DATA_LENS = (PERIODIC_LEN, ALARM_LEN, EMERG_LEN)
CLASS = {PERIODIC_LEN: 0, ALARM_LEN: 1, EMERG_LEN: 2}  # a frame's class: its TX TO's priority
US = 1_000_000  # ps
REGION_STARTS_MS = (10, 340, 670)


@dataclass(frozen=True)
class Scenario:
    """apps/bips_mb's configuration in one build (MB_HOPS 1 or 3)."""
    toml: str
    senders: list[tuple[int | None, ...]]  # {mode 0, mode 1, ...} sender per slot
    slot_us: int
    d_us: int  # d_maxOffset
    lead_us: int  # mb timing (the app prints it: test_every_node_ran_to_its_end)
    window_us: int
    bits: int  # mode bits signaled
    region_us: int
    neighbours: dict[str, set[str]]

    @property
    def alarm_bound_us(self) -> int:
        """An alarm queued alone waits at most for its owner's next mode-1
        slot: the longest gap between two regions plus a whole region."""
        return (1000 + REGION_STARTS_MS[0] - REGION_STARTS_MS[-1]) * 1000 + self.region_us


ONE_HOP = Scenario(
    "bips_mb.toml",
    [(None, None, None), (0, 3, 1), (1, 2, None), (2, 3, 1), (3, 1, None), (0, 2, None), (1, 3, 1)],
    slot_us=4000, d_us=100, lead_us=436, window_us=629, bits=2, region_us=29000,
    neighbours={n: set(NODES) - {n} for n in NODES})
THREE_HOPS = Scenario(
    "bips_mb3.toml", [(None, None), (0, 2), (1, 3), (3, 1), (0, 3), (2, 1), (1, 2)],
    slot_us=5000, d_us=338, lead_us=820, window_us=1868, bits=1, region_us=36000,
    neighbours={n: {f"n{j}" for j in (i - 1, i + 1) if 0 <= j < 4} for i, n in enumerate(NODES)})

pytestmark = pytest.mark.skipif(
    shutil.which("avr-gcc") is None or not (ROOT / "tools/simavr/build/tern-sim").is_file(),
    reason="needs avr-gcc and tools/simavr/build/tern-sim (make setup)",
)


@pytest.fixture(scope="module", params=[ONE_HOP, THREE_HOPS], ids=["1hop", "3hops"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sc: Scenario = request.param
    result = run_scenario(sc.toml, tmp_path_factory.mktemp(sc.toml.removesuffix(".toml")))
    result["sc"] = sc
    return result


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
    assert t - t0 < run["sc"].region_us * US, (node, t)
    return t0


def slot_of(run: dict[str, Any], node: str, t: int) -> tuple[int, int]:
    """(slot index, slot start in ps) on `node`'s clock for a time t in its region."""
    sc = run["sc"]
    t1 = region_of(run, node, t) + sc.d_us * US
    k = (t - t1) // (sc.slot_us * US)
    return k, t1 + k * sc.slot_us * US


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
    frames = on_air(run, DATA_LENS)
    assert len(frames) >= 40
    spans = [(s, e) for _, s, e, _ in frames.values()]
    for tx, (_, s, e, _) in frames.items():
        assert sum(1 for a, b in spans if a < e and s < b) == 1, tx  # only itself
        assert not any(a < e and s < b for _, a, b in bursts(run)), tx
    for tx, (sender, _, _, _) in frames.items():
        got = {e["node"] for e in run["events"] if e["event"] == "rx_ok" and e["tx"] == tx}
        assert got == run["sc"].neighbours[sender], (tx, sender)  # every neighbour, no loss
    for node in NODES:
        assert stats(run["consoles"][node], "mb")["rx_unexpected"] == 0, node


def test_the_mode_is_known_network_wide_within_its_slot(run: dict[str, Any]) -> None:
    """Each data frame goes out in the mode its slot was signaled in, and at
    its start every node's PC1 and PC3 show that mode; every switch to a
    higher mode is made within the signaling after a burst. (Slot
    positions here come from the region pin, which the BCS raises in its t0
    handler, ~180 us after t0: tolerances below are wider than that.)"""
    sc = run["sc"]
    pins = {n: (edges(run, n, "mode"), edges(run, n, "mode2")) for n in NODES}
    modes = [0, 0, 0]
    for sender, start, _, length in on_air(run, DATA_LENS).values():
        k, _ = slot_of(run, sender, start)
        # a node requests the highest mode up to its frame's class in which
        # the slot is its own
        mode = max(m for m, who in enumerate(sc.senders[k]) if who == int(sender[1:]) and m <= CLASS[length])
        modes[mode] += 1
        for n in NODES:
            low, high = pins[n]
            assert level_at(low, start) + 2 * level_at(high, start) == mode, (n, sender, k, start)
    assert modes[0] >= 20 and modes[1] >= 10, modes
    assert (modes[2] >= 1) == (sc is ONE_HOP), modes
    # every switch to a higher mode follows a burst on air within the signaling
    starts = [s for _, s, _ in bursts(run)]
    for n in NODES:
        for pin in pins[n]:
            for at, v in pin[1:]:  # the first edge: the pin set up
                if v == 1:
                    assert any(0 < at - s < sc.bits * sc.window_us * US for s in starts), (n, at)


def sent_frames(run: dict[str, Any], node: str, length: int) -> list[int]:
    return sorted(s for sender, s, _, ln in on_air(run, (length,)).values() if sender == node)


def test_a_slot_owner_always_gets_its_slot(run: dict[str, Any]) -> None:
    """Deterministic guarantee: in each of its mode-m slots an owner with a
    frame of class m queued sends one, at its first try -- unless the slot
    ran in a higher mode (an emergency over an alarm); and a frame queued
    alone reaches every neighbour within the bound."""
    sc = run["sc"]
    frames = on_air(run, DATA_LENS)
    worst = {1: 0, 2: 0}
    used = {1: 0, 2: 0}
    preempted = 0
    for to, length, mode in ((2, ALARM_LEN, 1), (3, EMERG_LEN, 2)):
        for node in NODES:
            me = int(node[1:])
            text = run["consoles"][node]
            enq = {int(t): int(at) for t, at in re.findall(rf"^enq to={to} tag=(\d+) t=(\d+)$", text, re.M)}
            if not enq:
                continue
            conf = re.findall(rf"^conf to={to} tag=(\d+) st=(\w+) tries=(\d+) t=\d+$", text, re.M)
            assert sorted(int(t) for t, _, _ in conf) == sorted(enq), node
            assert all(st == "MUX_OK" and tries == "1" for _, st, tries in conf), node
            sent = sent_frames(run, node, length)
            assert len(sent) == len(enq), node
            # FIFO: the i-th enqueued is the i-th on air
            queued = sorted(at * US + local_to_ps(run, node) for at in enq.values())
            assert all(e < s for e, s in zip(queued, sent)), node
            rises = [a for a, v in edges(run, node, "region") if v == 1]
            own = [t0 + (sc.d_us + k * sc.slot_us + sc.lead_us) * US
                   for t0 in rises for k, ms in enumerate(sc.senders) if len(ms) > mode and ms[mode] == me]
            for sig in own:
                backlog = sum(1 for e in queued if e < sig - 500 * US) - sum(1 for s in sent if s < sig - 500 * US)
                if backlog == 0:
                    continue
                window = (sig - 500 * US, sig + sc.slot_us * US)
                mine = [s for s in sent if window[0] <= s < window[1]]
                higher = [s for _, s, _, ln in frames.values() if CLASS[ln] > mode and window[0] <= s < window[1]]
                assert len(mine) == 1 or len(higher) == 1, (node, sig)
                used[mode] += len(mine)
                preempted += len(higher)
            for i, (e, start) in enumerate(zip(queued, sent)):
                if i and sent[i - 1] > e:
                    continue  # queued behind another: the slot rule above covers it
                rx = [ev["t_ps"] for ev in run["events"] if ev["event"] == "rx_ok" and ev["node"] != node
                      and ev.get("len") == length and ev["from"] == me and start < ev["t_ps"] < start + 2000 * US]  # fmt: skip
                assert len(rx) == len(sc.neighbours[node]), (node, start)
                worst[mode] = max(worst[mode], max(rx) - e)
    print(f"own slots used with a frame queued: {used}, taken by a higher mode: {preempted}; largest delay, "
          f"enqueue to the last reception: alarms {worst[1] / US:.0f} us, emergencies {worst[2] / US:.0f} us "
          f"(bound {sc.alarm_bound_us} us)")
    assert used[1] >= 10 and (used[2] >= 1) == (sc is ONE_HOP)
    assert (preempted >= 1) == (sc is ONE_HOP)  # the countdown decided between two requests
    assert max(worst.values()) <= sc.alarm_bound_us * US


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


def in_bbs_phase(run: dict[str, Any], windows: list[tuple[int, int]], t: int) -> bool:
    """With BBS, a burst of its sync phase: the 6 ms opening the macro slot,
    which ends 4 ms before the region 10 ms into it."""
    return run["sc"] is THREE_HOPS and any(4_000 * US <= a - t <= 10_000 * US for a, _ in windows)


def test_radio_off_outside_the_regions(run: dict[str, Any]) -> None:
    """Every transmission (frames and MB's bursts) lies inside its sender's
    region (PC0: t0..t2); synchronized, the radio is powered down but for
    the regions, the sync phases and the wake-up margins. (Beacon slaves
    listen until the master's first beacon, 1 s after its start.)"""
    for node in NODES:
        pin = edges(run, node, "region")
        windows = list(zip([a for a, v in pin if v == 1], [a for a, v in pin if v == 0][1:]))
        txs = [(s, e) for sender, s, e, _ in on_air(run, DATA_LENS).values() if sender == node]
        txs += [(s, e) for sender, s, e in bursts(run) if sender == node and not in_bbs_phase(run, windows, s)]
        for s, e in txs:
            assert any(a <= s and e <= b for a, b in windows), (node, s)
    sc = run["sc"]
    # per second: three regions and the sync phase, each with the BCS's
    # 1.3 ms crystal start before it
    sync_us = 3000 if sc is ONE_HOP else 6000
    budget_us = 3 * (sc.region_us + 1300) + sync_us + 1300
    for n in run["summary"]["nodes"]:
        ps = n["radio_ps"]
        on = ps["rx"] + ps["tx"] + ps["idle"]
        text = run["consoles"][n["name"]]
        # BBS: a node listens until it acquired; beacons: until the first beacon
        acq = re.findall(r"^acquired hop=\d+ t=(\d+)$", text, re.M)
        listening = int(acq[0]) * US + local_to_ps(run, n["name"]) if acq else (0 if n["name"] == "n0" else 1_100_000 * US)
        # + 50 ms: from cc2420_init to the first macro slot (bcs_start's lead)
        allowed = listening + n["end_ps"] * budget_us // 1_000_000 + 50_000 * US
        print(f"{n['name']}: radio on {on / US / 1000:.0f} ms, at most {allowed / US / 1000:.0f} ms")
        assert on <= allowed, n["name"]
        assert stats(text, "bcs")["radio_offs"] >= 20, n["name"]
