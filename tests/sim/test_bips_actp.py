"""apps/bips_actp and apps/bips_actp2 under tern-sim (docs/sim/bips_actp.toml,
docs/sim/bips_actp2.toml, docs/bips.md): ACTP, binary countdown with black
bursts, BBS-synchronized.

- bips_actp: four nodes in one broadcast domain, arbitration radius 1;
- bips_actp2: three nodes on a line 40 m apart (n0 and n2 hidden from each
  other, n1 hears both and only relays), arbitration radius 2;
- bips_actp_hidden: that line with radius 1, the counter-example: the
  hidden pair collides at n1.

Every sender queues one frame every 200 ms; node k's TX TO has priority
3 - k, so its arbitration value is 1 | (3 - k) | k and node k is outranked
by the senders of lower id. Read from the simulator's outputs: events.jsonl (every
black burst and frame on air, every reception and collision, the region pin
PC0 and the enqueue pin PC1) and the consoles."""
from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from scenario_run import ROOT, run_scenario
from scenario_run import stats as scenario_stats

US = 1_000_000  # ps
OFF_US = 100          # d_maxOffset of bips_actp.c's schedule
REGION_US = 40_000    # the ACTP region's length
SYNC_US = 4_000
D_STOP_US = 192       # max(d_maxOffset, 192 us)
MACRO_US = 200_000
REGION_START_US = 10_000  # into the macro slot
BBS_LEAD_US = 1_000       # bips_actp.c's bbs_config: the master's burst into the sync phase
FRAME_LEN = 9 + 8 + 2  # header, payload, FCS: tx_start's len
POLL_US = 16           # mac_actp.c: a clock poll's granularity
# The radio's on-time beyond the sync phase and the region, per macro
# slot: the BCS restarts the crystal 1.3 ms before an activity (bips.md).
WAKE_US = 1_300 + 400

SCENARIOS = {
    "bips_actp.toml": {
        "nodes": ["n0", "n1", "n2", "n3"],
        "senders": ["n0", "n1", "n2", "n3"],
        "radius": 1,
        "data_bits": 0,
        "hears": {n: {m for m in ["n0", "n1", "n2", "n3"] if m != n} for n in ["n0", "n1", "n2", "n3"]},
    },
    "bips_actp2.toml": {
        "nodes": ["n0", "n1", "n2"],
        "senders": ["n0", "n2"],  # n1 only relays
        "radius": 2,
        "data_bits": 8,  # the tag's low byte, after the id
        "hears": {"n0": {"n1"}, "n1": {"n0", "n2"}, "n2": {"n1"}},
    },
}

pytestmark = pytest.mark.skipif(
    shutil.which("avr-gcc") is None or not (ROOT / "tools/simavr/build/tern-sim").is_file(),
    reason="needs avr-gcc and tools/simavr/build/tern-sim (make setup)",
)


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    toml = request.param
    r = run_scenario(toml, tmp_path_factory.mktemp(toml.split(".")[0]))
    r.update(SCENARIOS[toml])
    r["name"] = toml
    line = next(x for x in r["consoles"]["n0"].splitlines() if x.startswith("actp timing "))
    r["timing"] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
    t = r["timing"]
    r["rounds_per_region"] = (REGION_US - OFF_US - D_STOP_US - t["first_us"]) // t["round_us"]
    # The master's macro slot starts: its BBS burst goes out, clock-polled,
    # BBS_LEAD_US into the sync phase (a 128-us burst, code 0; ACTP's are
    # 160 us). Its region pin is set inside the t0 interrupt, ~170 us late.
    starts = {e["tx"]: e["t_ps"] for e in r["events"]
              if e["node"] == "n0" and e["event"] == "tx_start" and e.get("kind") == "carrier"}  # fmt: skip
    sync = [s for tx, s in starts.items() for e in r["events"]
            if e["event"] == "tx_end" and e["tx"] == tx and (e["t_ps"] - s) < 145 * US]  # fmt: skip
    r["t0s"] = [s + (REGION_START_US - BBS_LEAD_US) * US for s in sorted(sync)]
    # the master's round starts: t1 + ACTP_FIRST_US + k x round
    r["rounds"] = [t0 + (OFF_US + t["first_us"] + k * t["round_us"]) * US
                   for t0 in r["t0s"] for k in range(r["rounds_per_region"])]  # fmt: skip
    return r


def stats(run: dict[str, Any], node: str, what: str) -> dict[str, int]:
    return scenario_stats(run["consoles"][node], what)


def prio(node: str) -> int:
    return 3 - int(node[1:])


def frames(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Every frame on air: tx id, sender, start."""
    return [e for e in run["events"] if e["event"] == "tx_start" and e.get("kind") == "frame"]


def enqueues(run: dict[str, Any], node: str) -> list[int]:
    """The enqueue times: PC1's toggles (its first edge is the pin set up)."""
    return [e["t_ps"] for e in run["events"]
            if e["node"] == node and e["event"] == "pin" and e["label"] == "enq"][1:]  # fmt: skip


def round_of(run: dict[str, Any], t: int) -> int:
    """Index of the master's round that holds time t (-1 before the first)."""
    idx = -1
    for i, r in enumerate(run["rounds"]):
        if r <= t:
            idx = i
    return idx


def test_every_node_runs_to_its_end_without_a_fault_counter(run: dict[str, Any]) -> None:
    for node in run["nodes"]:
        n = next(x for x in run["summary"]["nodes"] if x["name"] == node)
        assert n["status"] == "exit" and n["exit_status"] == 0, n
        assert not re.search(r"^bips_actp2?: ", run["consoles"][node], re.M)  # no start-up refusal
        a = stats(run, node, "actp")
        for k in ("late", "send_failed", "tx_failed", "overrun", "prio_clipped", "disagree", "value_lost"):
            assert a[k] == 0, (node, k, a)
        assert a["sent"] == a["won"] == (20 if node in run["senders"] else 0), (node, a)
        assert stats(run, node, "bbs")["missed"] == 0
    print(run["name"], "timing:", run["timing"], "rounds per region:", run["rounds_per_region"])


def test_no_collision_and_every_neighbour_receives_every_frame(run: dict[str, Any]) -> None:
    bad = [e for e in run["events"] if e["event"] in ("collision", "rx_bad_fcs", "rx_lost")]
    assert bad == []
    for n in run["summary"]["nodes"]:
        assert n["frames_collided"] == n["frames_bad_fcs"] == n["frames_lost"] == 0, n
    fs = frames(run)
    assert len(fs) == 20 * len(run["senders"])
    for f in fs:
        assert f["len"] == FRAME_LEN
        got = {e["node"] for e in run["events"] if e["event"] == "rx_ok" and e["tx"] == f["tx"]}
        assert got == run["hears"][f["node"]], f


def test_highest_priority_contender_wins_every_round(run: dict[str, Any]) -> None:
    """In every round exactly the contender of the highest value within the
    radius (here: of them all) sends; a round without contenders is silent."""
    enq = {n: enqueues(run, n) for n in run["senders"]}
    sent: dict[str, list[int]] = {n: [] for n in run["senders"]}
    for f in frames(run):
        sent[f["node"]].append(f["t_ps"])
    by_round: dict[int, list[str]] = {}
    for f in frames(run):
        by_round.setdefault(round_of(run, f["t_ps"]), []).append(f["node"])
    contended = skipped = 0
    for i, r in enumerate(run["rounds"]):
        # queued a d_maxOffset before the round (every node's clock has reached
        # it then) and not yet sent
        pending = [n for n in run["senders"]
                   if sum(q < r - OFF_US * US for q in enq[n]) > sum(s < r for s in sent[n])]  # fmt: skip
        late = [n for n in run["senders"] if any(r - OFF_US * US <= q < r + 200 * US for q in enq[n])]
        winners = by_round.get(i, [])
        if late:
            skipped += len(winners)
            continue  # queued as the round began: either way is right
        if not pending:
            assert winners == [], (i, winners)
            continue
        contended += 1
        assert winners == [max(pending, key=prio)], (i, pending, winners)
    assert contended + skipped == len(frames(run))  # one frame per contended round
    assert skipped <= 5
    top = max(run["senders"], key=prio)
    for n in run["senders"]:
        a = stats(run, n, "actp")
        # the losers defer: they lose rounds and win later ones
        assert (a["lost"] == 0) == (n == top), (n, a)
    if run["radius"] > 1:
        # n2 hears n0's bits only through n1's relays, and defers to it
        # once per frame; n1 learns each winner's id from the bits
        assert stats(run, "n2", "actp")["lost"] == 20
        n1 = stats(run, "n1", "actp")
        assert n1["relayed"] > 0 and n1["agree"] == 40


def test_every_frame_confirmed_once_and_delivered_through_the_mux(run: dict[str, Any]) -> None:
    for node in run["senders"]:
        c = run["consoles"][node]
        tags = [int(t) for t in re.findall(r"^enq tag=(\d+)$", c, re.M)]
        assert tags == list(range(20)) and "refused" not in c, node
        conf = re.findall(r"^conf tag=(\d+) st=(\w+) tries=(\d+)$", c, re.M)
        assert sorted(int(t) for t, _, _ in conf) == tags, node  # each exactly once
        assert all(st == "MUX_OK" and tries == "1" for _, st, tries in conf), node  # losing is not a try
        t = stats(run, node, "tx_to")
        assert t["enqueued"] == t["sent"] == 20 and t["failed"] == t["full"] == 0
        for other in run["hears"][node]:
            got = re.findall(rf"^rx from={node[1:]} tag=(\d+)$", run["consoles"][other], re.M)
            assert sorted(int(x) for x in got) == tags, (node, other)


def test_bit_sequences_reach_every_node_within_the_radius(run: dict[str, Any]) -> None:
    """Every round's bits -- the winner's priority, id and data bits -- reach
    every node within the radius (value messages; no data bits with
    radius 1 here); two hops on the line: n2 learns each of n0's tags,
    whose frames it never receives, and the other way round."""
    for node in run["nodes"]:
        vals = re.findall(r"^val from=(\d+) prio=(\d+) data=(\d+) round=(\d+)$", run["consoles"][node], re.M)
        got = sorted((f"n{w}", int(p), int(d)) for w, p, d, _ in vals)
        want = sorted((s, prio(s), tag & 0xFF if run["data_bits"] else 0) for s in run["senders"] for tag in range(20))
        assert got == want, node
    if run["data_bits"]:
        t = run["timing"]
        print(f"{run['name']}: {t['n_bits']} bits ({run['data_bits']} of data) in {t['arb_us']} us into each "
              f"round after its lead of {t['lead_us']} us")


def test_every_frame_on_air_within_the_delay_bound(run: dict[str, Any]) -> None:
    """A frame queued before round i, outranked by j nodes within the radius,
    is on air by round i + j, at a fixed offset into its round:
    lead + arbitration + the send path + 192 us (each +- d_maxOffset)."""
    t = run["timing"]
    lo = t["lead_us"] + t["arb_us"] + 192 - OFF_US
    hi = t["lead_us"] + t["arb_us"] + t["send_us"] + 192 + OFF_US
    offsets, delays, waited = [], {}, {}
    for node in run["senders"]:
        j = sum(prio(m) > prio(node) for m in run["senders"])
        qs = enqueues(run, node)
        ss = [f["t_ps"] for f in frames(run) if f["node"] == node]
        assert len(qs) == len(ss) == 20
        worst_rounds, worst = 0, 0.0
        for q, s in zip(qs, ss):
            first = next(i for i, r in enumerate(run["rounds"]) if r >= q + OFF_US * US)
            k = round_of(run, s)
            off = (s - run["rounds"][k]) / US
            offsets.append(off)
            assert lo <= off <= hi, (node, off)
            # rounds counted within the run's sequence of ACTP rounds
            assert k - first <= j, (node, q, s, k, first, j)
            worst_rounds = max(worst_rounds, k - first)
            worst = max(worst, (s - q) / US)
        delays[node], waited[node] = round(worst), worst_rounds
    print(f"{run['name']}: frame start into its round {min(offsets):.1f} .. {max(offsets):.1f} us "
          f"(bound {lo} .. {hi}); rounds waited, by node: {waited}; largest queue-to-air delay [us]: {delays}")


def test_bursts_on_the_slot_grid(run: dict[str, Any]) -> None:
    """Every black burst of a round starts within d_maxOffset + a poll of a
    slot boundary of the master's round grid and lasts burst_us; with
    radius 2 the relays fill the second slot of a bit."""
    t = run["timing"]
    starts = {e["tx"]: e for e in run["events"] if e["event"] == "tx_start" and e.get("kind") == "carrier"}
    ends = {e["tx"]: e["t_ps"] for e in run["events"] if e["event"] == "tx_end"}
    worst, in_slot, n = 0.0, [0] * run["radius"], 0
    for tx, e in starts.items():
        k = round_of(run, e["t_ps"])
        if k < 0 or e["t_ps"] > run["rounds"][k] + t["round_us"] * US:
            continue  # a BBS burst of the sync phase
        x = (e["t_ps"] - run["rounds"][k]) / US - t["lead_us"]
        m = round(x / t["slot_us"])
        assert 0 <= m < t["n_bits"] * run["radius"], (e, x)
        dev = x - m * t["slot_us"]
        worst = max(worst, abs(dev))
        assert abs(dev) <= OFF_US + POLL_US, (e, dev)
        assert abs((ends[tx] - e["t_ps"]) / US - t["burst_us"]) <= POLL_US, e
        in_slot[m % run["radius"]] += 1
        n += 1
    assert n > 0 and all(in_slot), in_slot
    print(f"{run['name']}: {n} bursts, largest offset from the master's slot grid {worst:.2f} us, by slot of a bit {in_slot}")


def test_radio_off_outside_the_sync_phase_and_the_region(run: dict[str, Any]) -> None:
    for node in run["nodes"]:
        n = next(x for x in run["summary"]["nodes"] if x["name"] == node)
        ps = n["radio_ps"]
        on_us = (ps["rx"] + ps["tx"] + ps["idle"]) / US
        b = stats(run, node, "bcs")
        acquire = re.search(r"^acquired hop=\d+ at_ms=(\d+)$", run["consoles"][node], re.M)
        listening_us = int(acquire.group(1)) * 1000 if acquire else 5_000
        bound = listening_us + b["slots"] * (SYNC_US + REGION_US + 2 * WAKE_US)
        assert on_us <= bound, (node, on_us, bound)
        assert b["radio_offs"] >= 2 * b["slots"] - 2, (node, b)
        assert b["wake_late"] == b["rx_outside"] == b["orphan"] == 0, (node, b)
        print(f"{run['name']} {node}: radio on {on_us / 1000:.1f} ms of {n['end_ps'] / 1e9:.1f} ms (bound {bound / 1000:.1f})")


def test_radius_1_lets_the_hidden_pair_collide(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The counter-example: on the line of bips_actp2 with radius 1, n0 and
    n2 never hear each other's bits, both win the same rounds, and their
    frames collide at n1 (which bips_actp2 with radius 2 prevents)."""
    r = run_scenario("bips_actp_hidden.toml", tmp_path_factory.mktemp("bips_actp_hidden"))
    fs = frames(r)
    starts = {n: [f["t_ps"] for f in fs if f["node"] == n] for n in ("n0", "n2")}
    together = sum(any(abs(a - b) < 50 * US for b in starts["n2"]) for a in starts["n0"])
    assert together == 20  # every frame of n0 on air with one of n2
    collisions = [e for e in r["events"] if e["event"] == "collision" and e["node"] == "n1"]
    assert len(collisions) == 20
    assert scenario_stats(r["consoles"]["n2"], "actp")["lost"] == 0  # it never saw n0's bits
