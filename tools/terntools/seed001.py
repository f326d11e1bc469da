"""Seed 001's network experiment (thesis chapter 5.2, tables 6.4-6.6) on
tern-sim: UDP over 6LoWPAN between radio nodes, measured the thesis's way
with the simulator's logic analyser.

The guest is bench/seed001/net.c; its run parameters go into the image's
.tern_params section (8 little-endian u32 words: magic "s001", mode,
payload bytes, datagrams, period/gap ms, signal bytes, datagrams per loss
block, 0). Node 0 sends, the last node receives, the others forward
(route-over). The link is tern-sim's table model: each hop a [[link]] with
a per-frame reception ratio 1 - p, p calibrated to the thesis's 50-byte
loss (p = 0.0065, the thesis's own value, section 6.3.3); nodes two hops
apart hear each other's energy (CCA) but never a frame.

- latency: the sender's PC1 rises just before udp_sendto, the receiver's
  PC2 as the datagram's message is taken; one datagram every period.
- throughput: the sender streams; the receiver's PC2 rises each time
  another 50 kB (50-byte datagrams) or 100 kB (1,000-byte) have arrived;
  the time between consecutive rises gives the throughput (equation 5.1).
- loss: the same stream, cut into 100 kB blocks by sequence number; the
  receiver's count per block gives the loss (equation 5.2).

The link (--link): "csma", the guest's plain CSMA on the CC2420 driver;
"cb" or "rb", BiPS's stack (net/ip_link_mux.c over the multiplexer, one
macro slot of 164 ms with a CB or an RB region: bench/seed001/net.c). The
BiPS links run one hop only; each node's "S001 LINK" line (frames queued,
confirmed ok/failed/late, still outstanding) goes into the JSON.

Figures in simulated time: ms, kB/s (kB = 1,000 bytes, as the thesis's
18.9495 kB/s = 151,596 bit/s), %.
"""
from __future__ import annotations

import json
import math
import re
import statistics
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from terntools import build, scenario, sim
from terntools.boards import Board
from terntools.errors import TernError, UsageError

PARAMS_MAGIC = 0x73303031  # "s001"
PARAMS_SECTION = ".tern_params"
APP = "seed001_net"
DEFAULT_BOARD = "micaz-1284p"
MODEL = "stack"
MODE_LATENCY, MODE_STREAM = 0, 1
SIZES = (50, 1000)
# The thesis's per-frame loss (section 6.3.3: p <- 0.0065, Zephyr's median
# 50-byte loss) and its frames per 1,000-byte datagram (n <- 11).
THESIS_P = 0.0065
THESIS_FRAMES_1000 = 11
RAW_MAX_KBPS = 18.9495  # [LDMM+05], 16-bit addresses, no ACK
SIGNAL_BYTES = {50: 50_000, 1000: 100_000}  # throughput totals (section 5.2.2)
LOSS_BYTES = 100_000  # loss totals (section 5.2.3)
LATENCY_PERIOD_MS = {50: 50, 1000: 200}
HOP_GAP_MS = {50: 8, 1000: 60}  # a datagram's time on one hop, with margin (stream over hops)
RSSI_HOP_DBM = -40.0  # 1 m at 0 dBm
RSSI_TWO_HOPS_DBM = -70.0  # energy a CCA hears (threshold -77 dBm), never a frame
LINKS = {"csma": 0, "cb": 1, "rb": 2}  # the guest's link (params word 7, bits 8-15)
BIPS_START_S = 0.6  # the sender waits for the receiver's beacon sync (net.c START_BIPS_MS)

# Thesis tables 6.4-6.6: (minimum, maximum, median) per system.
SYSTEMS = ("Zephyr", "RIOT", "Contiki")
THESIS: dict[str, dict[int, dict[str, tuple[float, float, float]]]] = {
    "latency_ms": {
        50: {"Zephyr": (5.16, 5.20, 5.16), "RIOT": (6.36, 6.52, 6.36), "Contiki": (6.92, 6.92, 6.92)},
        1000: {"Zephyr": (68.40, 68.80, 68.80), "RIOT": (55.20, 55.60, 55.20), "Contiki": (68.00, 68.00, 68.00)},
    },
    "throughput_kBps": {
        50: {"Zephyr": (8.20, 8.28, 8.30), "RIOT": (8.20, 9.26, 9.20), "Contiki": (7.90, 7.96, 7.90)},
        1000: {"Zephyr": (14.12, 15.24, 15.24), "RIOT": (15.53, 18.25, 17.54), "Contiki": (14.20, 14.79, 14.41)},
    },
    "loss_pct": {
        50: {"Zephyr": (0.60, 3.55, 0.65), "RIOT": (0.10, 1.25, 0.95), "Contiki": (1.20, 1.50, 1.25)},
        1000: {"Zephyr": (4.00, 37.00, 9.00), "RIOT": (6.00, 12.00, 8.00), "Contiki": (16.00, 28.00, 19.00)},
    },
}
# Which way is better, per metric.
LOWER_IS_BETTER = {"latency_ms": True, "throughput_kBps": False, "loss_pct": True}
UNITS = {"latency_ms": "ms", "throughput_kBps": "kB/s", "loss_pct": "%"}


@dataclass(frozen=True)
class Plan:
    board: Board
    p: float = THESIS_P
    latency_samples: int = 100
    throughput_samples: int = 20
    hops: tuple[int, ...] = (1, 2, 3, 4, 5)
    hop_latency_samples: int = 20
    hop_throughput_samples: int = 3
    seed: int = 1
    link: str = "csma"

    def check(self) -> None:
        if self.link not in LINKS:
            raise UsageError(f"--link: {self.link!r} is none of {', '.join(LINKS)}")
        if self.link != "csma" and self.hops:
            raise UsageError(f"--link {self.link}: one hop only (give --hops '')")
        if not 0 <= self.p < 1:
            raise UsageError(f"--loss: {self.p} is not in [0, 1)")
        if min(self.latency_samples, self.throughput_samples, self.hop_latency_samples,
               self.hop_throughput_samples) < 1:
            raise UsageError("sample counts must be at least 1")
        if any(not 1 <= h <= 5 for h in self.hops):
            raise UsageError("--hops: each in 1..5 (the guest's route table holds 6 nodes)")
        if self.board.radio != "cc2420":
            raise UsageError(f"board {self.board.name} has no CC2420")


@dataclass(frozen=True)
class Run:
    """One tern-sim run of the guest."""

    size: int
    mode: int
    hops: int
    datagrams: int
    period_ms: int
    signal_bytes: int
    block: int
    link_local: bool  # fe80:: addresses (elided by IPHC), else the thesis's fd0b::/64 inline
    link: str = "csma"


def params_blob(r: Run) -> bytes:
    return struct.pack("<8I", PARAMS_MAGIC, r.mode, r.size, r.datagrams, r.period_ms, r.signal_bytes, r.block,
                       int(r.link_local) | LINKS[r.link] << 8)


def patch_image(board: Board, src: Path, dst: Path, r: Run) -> None:
    patch_blob(board, src, dst, params_blob(r))


def patch_blob(board: Board, src: Path, dst: Path, params: bytes) -> None:
    """A copy of src at dst whose .tern_params section holds params."""
    blob = dst.with_suffix(".params")
    blob.write_bytes(params)
    objcopy = f"{board.toolchain_prefix}objcopy"
    try:
        proc = subprocess.run([objcopy, "--update-section", f"{PARAMS_SECTION}={blob}", str(src), str(dst)],
                              capture_output=True, text=True)
    except FileNotFoundError:
        raise TernError(f"{objcopy} is not installed or not on PATH") from None
    if proc.returncode != 0:
        raise TernError(f"patching {PARAMS_SECTION} of {src} failed: {proc.stderr.strip()}")


def line_scenario(board: Board, image: Path, hops: int, p: float, duration_s: float, seed: int) -> scenario.Scenario:
    """hops + 1 nodes in a line: neighbours linked with reception ratio 1 - p,
    nodes two apart hearing each other's energy only."""
    names = ["sender"] + [f"router{i}" for i in range(1, hops)] + ["receiver"]
    nodes = [{"name": n, "board": board.name, "image": str(image)} for n in names]
    links: list[dict[str, Any]] = []
    for i in range(hops):
        links.append({"from": names[i], "to": names[i + 1], "prr": 1 - p, "rssi_dbm": RSSI_HOP_DBM,
                      "symmetric": True})
    for i in range(hops - 1):
        links.append({"from": names[i], "to": names[i + 2], "prr": 0.0, "rssi_dbm": RSSI_TWO_HOPS_DBM,
                      "symmetric": True})
    pins = [{"node": "sender", "pin": "PC1", "label": "tx"}, {"node": "receiver", "pin": "PC2", "label": "rx"}]
    return scenario.make_scenario(duration_s=duration_s, seed=seed, medium={"model": "table"}, nodes=nodes,
                                  links=links, pins=pins)


# --------------------------------------------------------------------------- one run

FIELDS = re.compile(r"(\w+)=(\d+)")
SUMMARY = re.compile(r"^S001 (TX|RX|FW) (.*)$", re.M)
LINK_LINE = re.compile(r"^S001 LINK (.*)$", re.M)
BLOCK = re.compile(r"^B (\d+) (\d+)$", re.M)
DROPS = re.compile(r"^D (\d+) (\d+) (\d+)$", re.M)


@dataclass
class Outcome:
    tx_edges_ps: list[int]
    rx_edges_ps: list[int]
    sender: dict[str, int]
    receiver: dict[str, int]
    routers: list[dict[str, int]]
    blocks: list[int]
    drops: dict[str, dict[int, tuple[int, int]]]  # node -> net_status -> (ip, reassembly)
    frames_per_datagram: float
    wall_s: float
    nodes: tuple[sim.NodeResult, ...] = ()  # tern-sim's figures per node (energy, cycles)
    link_counters: tuple[dict[str, int], ...] = ()  # BiPS links: each node's "S001 LINK" figures


def _summary(text: str, where: str) -> tuple[str, dict[str, int]]:
    m = SUMMARY.search(text)
    if not m:
        raise TernError(f"{where}: no 'S001' summary line (did the node finish?)")
    return m[1], {k: int(v) for k, v in FIELDS.findall(m[2])}


def simulate(plan: Plan, r: Run, elf: Path, work: Path, log: TextIO | None = None) -> Outcome:
    work.mkdir(parents=True, exist_ok=True)
    image = work / "net.elf"
    patch_image(plan.board, elf, image, r)
    duration = estimate_duration_s(r, plan.p)
    scen = line_scenario(plan.board, image, r.hops, plan.p, duration, plan.seed)
    result = sim.run(scen, work / "out", do_build=False)
    for n in result.nodes:
        if n.status != "exit" or n.exit_status != 0:
            raise TernError(f"seed001 {r}: node {n.name} ended '{n.status}' status {n.exit_status} "
                            f"(outputs in {work / 'out'}; duration {duration:.0f} s)")
    tx: list[int] = []
    rx: list[int] = []
    with open(work / "out" / "events.jsonl") as f:
        for line in f:
            if '"pin"' not in line:
                continue
            e = json.loads(line)
            if e.get("event") == "pin" and e["value"] == 1:
                (tx if e["label"] == "tx" else rx).append(int(e["t_ps"]))
    consoles = {n.name: (work / "out" / "console" / f"{n.name}.txt").read_text() for n in result.nodes}
    names = [n.name for n in result.nodes]
    _, sender = _summary(consoles[names[0]], names[0])
    _, receiver = _summary(consoles[names[-1]], names[-1])
    routers = [_summary(consoles[n], n)[1] for n in names[1:-1]]
    blocks = [int(c) for _, c in sorted((int(k), c) for k, c in BLOCK.findall(consoles[names[-1]]))]
    drops = {n: {int(s): (int(a), int(b)) for s, a, b in DROPS.findall(consoles[n])} for n in names}
    per = sender["frames_out"] / sender["sent"] if sender["sent"] else 0.0
    link_counters = tuple({k: int(v) for k, v in FIELDS.findall(m[1])}
                          for n in names for m in LINK_LINE.finditer(consoles[n]))
    if log:
        log.write(f"  {r.size} B {'latency' if r.mode == MODE_LATENCY else 'stream'} {r.hops} hop(s): "
                  f"{sender['sent']} sent, {receiver['received']} received, {duration:.0f} s simulated "
                  f"in {result.wall_s:.1f} s\n")
        log.flush()
    return Outcome(tx, rx, sender, receiver, routers, blocks, drops, per, result.wall_s, result.nodes,
                   link_counters)


def estimate_duration_s(r: Run, p: float) -> float:
    """Simulated time the run needs, generously (the nodes exit when done,
    the receiver and routers idle_ms() after their last frame: net.c)."""
    idle_s = 1.5 + 4 * r.period_ms / 1000 + (BIPS_START_S if r.link != "csma" else 0.0)
    if r.mode == MODE_LATENCY:
        return 2.0 + r.datagrams * r.period_ms / 1000 + idle_s
    # stream: at least 4 kB/s end to end per hop's share
    return 5.0 + r.datagrams * r.size / (4000 / r.hops) + idle_s


# --------------------------------------------------------------------------- figures


def latencies_ms(o: Outcome) -> list[float]:
    """Each datagram's latency: from its PC1 rise to the first PC2 rise
    before the next datagram's PC1 rise (none: lost)."""
    out = []
    j = 0
    for k, t in enumerate(o.tx_edges_ps):
        end = o.tx_edges_ps[k + 1] if k + 1 < len(o.tx_edges_ps) else math.inf
        while j < len(o.rx_edges_ps) and o.rx_edges_ps[j] <= t:
            j += 1
        if j < len(o.rx_edges_ps) and o.rx_edges_ps[j] < end:
            out.append((o.rx_edges_ps[j] - t) / 1e9)
    return out


def throughputs_kBps(o: Outcome, signal_bytes: int) -> list[float]:
    """Equation 5.1 between consecutive receiver signals."""
    e = o.rx_edges_ps
    return [signal_bytes / ((e[i + 1] - e[i]) / 1e12) / 1000 for i in range(len(e) - 1)]


def losses_pct(o: Outcome, block: int) -> list[float]:
    """Equation 5.2 per complete block of `block` datagrams sent."""
    full = o.sender["sent"] // block
    return [100 * (1 - n / block) for n in o.blocks[:full]]


def stats(xs: list[float]) -> dict[str, Any]:
    if not xs:
        return {"n": 0, "min": None, "max": None, "median": None, "samples": []}
    return {"n": len(xs), "min": round(min(xs), 3), "max": round(max(xs), 3),
            "median": round(statistics.median(xs), 3), "samples": [round(x, 4) for x in xs]}


def best_of_thesis(metric: str, size: int) -> tuple[str, float]:
    rows = THESIS[metric][size]
    pick = min if LOWER_IS_BETTER[metric] else max
    name = pick(rows, key=lambda s: rows[s][2])
    return name, rows[name][2]


def verdict(metric: str, size: int, median: float | None) -> str:
    if median is None:
        return "missed (no samples)"
    _, best = best_of_thesis(metric, size)
    better = median < best if LOWER_IS_BETTER[metric] else median > best
    return "met" if better else "missed"


def stream_run(size: int, hops: int, samples: int, p: float, link_local: bool, link: str = "csma") -> Run:
    """Over several hops the sender waits HOP_GAP_MS per further hop after
    each datagram: a router forwards one datagram at a time (ip_node) and
    drops one that completes while it is still sending."""
    signal = SIGNAL_BYTES[size]
    block = LOSS_BYTES // size
    need = (samples + 1) * signal / size / max(0.5, (1 - p) ** 11) * 1.02
    datagrams = max(block, math.ceil(need / block) * block)
    return Run(size=size, mode=MODE_STREAM, hops=hops, datagrams=datagrams, period_ms=HOP_GAP_MS[size] * (hops - 1),
               signal_bytes=signal, block=block, link_local=link_local, link=link)


def latency_run(size: int, hops: int, samples: int, link_local: bool, link: str = "csma") -> Run:
    return Run(size=size, mode=MODE_LATENCY, hops=hops, datagrams=samples, period_ms=LATENCY_PERIOD_MS[size] * hops,
               signal_bytes=SIGNAL_BYTES[size], block=samples, link_local=link_local, link=link)


def link_balance(c: dict[str, int]) -> bool:
    """A node's BiPS link accounts for every frame it queued: confirmed ok,
    failed or late, or still outstanding."""
    return c["enqueued"] == c["ok"] + c["failed"] + c["late"] + c["outstanding"]


def _drops_total(o: Outcome) -> dict[str, dict[str, list[int]]]:
    return {n: {str(k): list(v) for k, v in d.items()} for n, d in o.drops.items() if d}


def run_bench(plan: Plan, work: Path, root: Path | None = None, log: TextIO | None = None) -> dict[str, Any]:
    plan.check()
    elf = build.app_image(plan.board.name, MODEL, APP, root)
    doc: dict[str, Any] = {
        "board": plan.board.name, "model": MODEL, "cpu_hz": plan.board.cpu_hz, "seed": plan.seed,
        "link": {"p_frame_loss": plan.p, "prr": 1 - plan.p, "rssi_dbm": RSSI_HOP_DBM,
                 "two_hop_rssi_dbm": RSSI_TWO_HOPS_DBM},
        "addresses": {"one_hop": "link-local fe80::ff:fe00:N (IPHC elides them)",
                      "hops": "fd0b:ad46:74e5:de4c::N+1, inline (tern's IPHC has no contexts)"},
        "units": UNITS, "thesis": {m: {str(s): v for s, v in t.items()} for m, t in THESIS.items()},
        "raw_max_kBps": RAW_MAX_KBPS, "one_hop": {}, "hops": [], "mac": plan.link,
        "samples": {"latency": plan.latency_samples, "throughput": plan.throughput_samples},
    }
    for size in SIZES:
        lat = simulate(plan, latency_run(size, 1, plan.latency_samples, True, plan.link), elf,
                       work / f"{plan.link}-lat{size}", log)
        r = stream_run(size, 1, plan.throughput_samples, plan.p, True, plan.link)
        st = simulate(plan, r, elf, work / f"{plan.link}-stream{size}", log)
        entry: dict[str, Any] = {
            "latency_ms": stats(latencies_ms(lat)),
            "throughput_kBps": stats(throughputs_kBps(st, r.signal_bytes)),
            "loss_pct": stats(losses_pct(st, r.block)),
            "frames_per_datagram": round(st.frames_per_datagram, 3),
            "latency_run": {"sent": lat.sender["sent"], "received": lat.receiver["received"]},
            "stream_run": {"sent": st.sender["sent"], "received": st.receiver["received"],
                           "corrupt": st.receiver["corrupt"], "drops": _drops_total(st)},
        }
        if plan.link != "csma":
            entry["link_counters"] = {"latency_run": list(lat.link_counters), "stream_run": list(st.link_counters)}
        if size == 1000:  # the model's prediction, with the thesis's 11 frames and with tern's
            n = st.frames_per_datagram
            entry["loss_model_pct"] = {"thesis_n11": round(100 * (1 - (1 - plan.p) ** THESIS_FRAMES_1000), 3),
                                       "tern_n": round(100 * (1 - (1 - plan.p) ** n), 3)}
        for metric in ("latency_ms", "throughput_kBps", "loss_pct"):
            best, value = best_of_thesis(metric, size)
            entry[metric]["best_thesis"] = {"system": best, "median": value}
            entry[metric]["verdict"] = verdict(metric, size, entry[metric]["median"])
        doc["one_hop"][str(size)] = entry
    for hops in plan.hops:
        row: dict[str, Any] = {"hops": hops}
        for size in SIZES:
            lat = simulate(plan, latency_run(size, hops, plan.hop_latency_samples, False), elf,
                           work / f"hops{hops}-lat{size}", log)
            r = stream_run(size, hops, plan.hop_throughput_samples, plan.p, False)
            st = simulate(plan, r, elf, work / f"hops{hops}-stream{size}", log)
            sent = st.sender["sent"]
            row[str(size)] = {
                "latency_ms": stats(latencies_ms(lat)),
                "latency_delivered": [lat.receiver["received"], lat.sender["sent"]],
                "throughput_kBps": stats(throughputs_kBps(st, r.signal_bytes)),
                "loss_pct": round(100 * (1 - st.receiver["received"] / sent), 3) if sent else None,
                "stream_drops": _drops_total(st),
            }
        doc["hops"].append(row)
    return doc


# --------------------------------------------------------------------------- report

METRIC_NAMES = {"latency_ms": "latency [ms]", "throughput_kBps": "throughput [kB/s]", "loss_pct": "loss [%]"}


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def markdown_tables(doc: dict[str, Any]) -> str:
    """Tables 6.4-6.6 with tern beside the thesis's systems, and experiment 6."""
    out = []
    table_no = {"latency_ms": "6.4", "throughput_kBps": "6.5", "loss_pct": "6.6"}
    for metric in ("latency_ms", "throughput_kBps", "loss_pct"):
        mac = {"csma": "plain CSMA", "cb": "BiPS CB", "rb": "BiPS RB"}[doc.get("mac", "csma")]
        out.append(f"**{METRIC_NAMES[metric]}** (thesis table {table_no[metric]}; tern: {doc['board']}, {mac}, "
                   "simulated time)\n")
        out.append("| | " + " | ".join(f"{s} {size} B" for size in SIZES for s in (*SYSTEMS, "tern")) + " |")
        out.append("|---|" + "---:|" * (4 * len(SIZES)))
        for i, (what, key) in enumerate((("minimum", "min"), ("maximum", "max"), ("median", "median"))):
            cells = []
            for size in SIZES:
                cells += [_fmt(THESIS[metric][size][s][i]) for s in SYSTEMS]
                cells.append(_fmt(doc["one_hop"][str(size)][metric][key]))
            out.append(f"| {what} | " + " | ".join(cells) + " |")
        verdicts = []
        for size in SIZES:
            e = doc["one_hop"][str(size)][metric]
            verdicts.append(f"{size} B: tern {_fmt(e['median'])} vs best {e['best_thesis']['system']} "
                            f"{_fmt(e['best_thesis']['median'])} {UNITS[metric]}: **{e['verdict']}** "
                            f"(n = {e['n']})")
        out.append("\n" + "; ".join(verdicts) + "\n")
    m = doc["one_hop"]
    out.append(f"Loss model: per-frame loss p = {doc['link']['p_frame_loss']}; the thesis's prediction for "
               f"1,000 B, 1 - (1 - p)^11 = {m['1000']['loss_model_pct']['thesis_n11']:.2f} %; tern sends "
               f"{m['1000']['frames_per_datagram']:.0f} frames a 1,000-byte datagram, so 1 - (1 - p)^"
               f"{m['1000']['frames_per_datagram']:.0f} = {m['1000']['loss_model_pct']['tern_n']:.2f} %; "
               f"measured median {_fmt(m['1000']['loss_pct']['median'])} % (50 B: measured median "
               f"{_fmt(m['50']['loss_pct']['median'])} % for p = {100 * doc['link']['p_frame_loss']:.2f} %).\n")
    if not doc["hops"]:
        return "\n".join(out) + "\n"
    out.append("**Experiment 6: over 1 to 5 hops** (route-over; the thesis's fd0b::/64 addresses, inline; "
               "the sender waits a datagram's time per further hop, since a router forwards one datagram at a "
               "time; medians)\n")
    out.append("| hops | latency 50 B [ms] | latency 1,000 B [ms] | throughput 50 B [kB/s] | "
               "throughput 1,000 B [kB/s] | loss 50 B [%] | loss 1,000 B [%] |")
    out.append("|--:|--:|--:|--:|--:|--:|--:|")
    for row in doc["hops"]:
        a, b = row["50"], row["1000"]
        out.append(f"| {row['hops']} | {_fmt(a['latency_ms']['median'])} | {_fmt(b['latency_ms']['median'])} | "
                   f"{_fmt(a['throughput_kBps']['median'])} | {_fmt(b['throughput_kBps']['median'])} | "
                   f"{_fmt(a['loss_pct'])} | {_fmt(b['loss_pct'])} |")
    return "\n".join(out) + "\n"


def text_table(doc: dict[str, Any]) -> str:
    rows = [f"{'figure':22} {'size':>5} {'tern min':>9} {'median':>9} {'max':>9} {'best thesis':>18} verdict"]
    for metric in ("latency_ms", "throughput_kBps", "loss_pct"):
        for size in SIZES:
            e = doc["one_hop"][str(size)][metric]
            best = f"{e['best_thesis']['system']} {e['best_thesis']['median']:.2f}"
            rows.append(f"{METRIC_NAMES[metric]:22} {size:>5} {_fmt(e['min']):>9} {_fmt(e['median']):>9} "
                        f"{_fmt(e['max']):>9} {best:>18} {e['verdict']}")
    for row in doc["hops"]:
        rows.append(f"hops {row['hops']}: latency {_fmt(row['50']['latency_ms']['median'])} / "
                    f"{_fmt(row['1000']['latency_ms']['median'])} ms, throughput "
                    f"{_fmt(row['50']['throughput_kBps']['median'])} / {_fmt(row['1000']['throughput_kBps']['median'])} "
                    f"kB/s, loss {_fmt(row['50']['loss_pct'])} / {_fmt(row['1000']['loss_pct'])} % (50 / 1,000 B)")
    return "\n".join(rows) + "\n"


def write_plots(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    """Like the thesis's figures 6.4-6.9: per metric and size, tern's samples
    as a box plot beside each system's min-median-max from the thesis; and
    the medians over hops."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for metric in ("latency_ms", "throughput_kBps", "loss_pct"):
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
        for ax, size in zip(axes, SIZES):
            e = doc["one_hop"][str(size)][metric]
            boxes = [{"label": f"{s}\n(thesis)", "med": THESIS[metric][size][s][2], "q1": THESIS[metric][size][s][0],
                      "q3": THESIS[metric][size][s][1], "whislo": THESIS[metric][size][s][0],
                      "whishi": THESIS[metric][size][s][1], "fliers": []} for s in SYSTEMS]
            xs = sorted(e["samples"])
            if xs:
                q1, q3 = statistics.quantiles(xs, n=4)[0::2] if len(xs) > 1 else (xs[0], xs[0])
                boxes.append({"label": "tern\n(sim)", "med": statistics.median(xs), "q1": q1, "q3": q3,
                              "whislo": xs[0], "whishi": xs[-1], "fliers": []})
            ax.bxp(boxes, showfliers=False)
            if metric == "throughput_kBps":
                ax.axhline(RAW_MAX_KBPS, color="grey", linestyle="--", linewidth=0.8)
            ax.set_title(f"{size}-byte datagrams")
            ax.set_ylabel(METRIC_NAMES[metric])
        fig.suptitle(f"{METRIC_NAMES[metric]}, 1 hop (thesis: min-max box with median; tern: quartiles)",
                     fontsize=9)
        fig.tight_layout()
        path = out_dir / f"seed001-{metric.split('_')[0]}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    if doc["hops"]:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
        hops = [r["hops"] for r in doc["hops"]]
        for size in SIZES:
            axes[0].plot(hops, [r[str(size)]["latency_ms"]["median"] for r in doc["hops"]], "o-", label=f"{size} B")
            axes[1].plot(hops, [r[str(size)]["throughput_kBps"]["median"] for r in doc["hops"]], "o-",
                         label=f"{size} B")
        axes[0].set_ylabel("latency [ms] (median)")
        axes[1].set_ylabel("throughput [kB/s] (median)")
        for ax in axes:
            ax.set_xlabel("hops")
            ax.set_xticks(hops)
            ax.legend()
        fig.tight_layout()
        path = out_dir / "seed001-hops.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths

