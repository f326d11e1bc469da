"""`tern bench bips`: seed 004's experiments on tern-sim's MicaZ (issue 11, docs/bips.md).

    timers  Table 1: the BCS's hardware timer, a kernel alarm and a task timer,
            without and with a background timer load (bench/bips/bips_timers.c)
    sfd     §5.3, Figs. 5 and 6: one sender, two receivers; each receiver raises
            a pin at its SFD and another at the slot start 10 ms after it; the
            differences between the receivers' pins, from the logic analyser
            (bench/bips/bips_sfd.c)
    sync    the region-start offset to the master over 100 macro slots, beacons
            (1 hop) and BBS (1-3 hops), and the guard time d_stop and minimum
            region length that follow (bench/bips/bips_sync.c)
    macs    ten nodes, periodic and sporadic traffic to a sink, a hidden-terminal
            pair: delivery, queue-to-air delay, collisions, radio-on time under
            CB, RB, ACTP, MB and the four in one macro slot (bench/bips/bips_macs.c)

Each writes JSON (every figure and how it was made), a markdown table and PNG
plots. Every figure comes from the simulator (cycle counts read by the guest at
exactly known instructions, pin edges in picoseconds of simulated time): the
same image and seed give the same numbers on every run.
"""
from __future__ import annotations

import json
import math
import re
import statistics
import struct
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terntools import build, sim
from terntools.errors import TernError
from terntools.paths import repo_root
from terntools.scenario import make_scenario

BOARD = "micaz"
F_CPU = 7_372_800
PARAMS_SECTION = ".tern_params"
PS_PER_US = 1_000_000

# seed 004 Table 1 (Imote 2, 104 MHz; times in us, instructions), w/o load and with load
TABLE1: tuple[tuple[str, str, tuple[float, float, float], tuple[float, float, float]], ...] = (
    ("TinyOS", "Timer", (18.1, 18.3, 18.6), (19.3, 46.2, 1316)),
    ("TinyOS", "Alarm", (13.5, 13.6, 13.7), (13.5, 16.8, 18.4)),
    ("RIOT", "virtual timer", (22, 22, 22), (26.7, 49.9, 63.4)),
    ("RIOT", "hw timer", (2.3, 2.4, 2.4), (2.3, 3.5, 7.6)),
    ("BiPS", "event timer", (2.3, 3.3, 7.9), (5.3, 8.8, 594.2)),
    ("BiPS", "hw timer", (1.5, 1.6, 1.6), (1.5, 1.7, 2.5)),
)
BCS_TARGET_CYCLES = 40
TIMER_NAMES = {"bcs": "BCS hardware timer (Timer3)", "alarm": "alarm (interrupt context)",
               "timer": "task timer (message)"}  # fmt: skip


class BipsBenchError(TernError):
    """A guest's output that does not follow its format, or a run that failed."""


# --------------------------------------------------------------------------- images and runs


def build_image(app: str, model: str, root: Path) -> Path:
    """Build bench/bips/<app>.elf for micaz and one model (only that target)."""
    out = build.build(BOARD, model, root, target=f"{app}.elf")
    elf = build.find_image(out, app)
    if elf is None:
        raise BipsBenchError(f"building {app} for {BOARD}/{model} produced no ELF in {out}")
    return elf


def patch_params(src: Path, dst: Path, words: Sequence[int]) -> Path:
    """A copy of src whose .tern_params holds words (8 little-endian u32, zero-padded)."""
    blob = struct.pack("<8I", *(list(words) + [0] * (8 - len(words))))
    params = dst.with_suffix(".params")
    dst.parent.mkdir(parents=True, exist_ok=True)
    params.write_bytes(blob)
    proc = subprocess.run(["avr-objcopy", "--update-section", f"{PARAMS_SECTION}={params}", str(src), str(dst)],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise BipsBenchError(f"patching {PARAMS_SECTION} of {src} failed: {proc.stderr.strip()}")
    return dst


@dataclass(frozen=True)
class Run:
    events: list[dict[str, Any]]
    consoles: dict[str, str]
    summary: dict[str, Any]


def run_nodes(nodes: Sequence[Mapping[str, Any]], out: Path, duration_s: float, *,
              pins: Sequence[Mapping[str, Any]] = (), medium: Mapping[str, Any] | None = None,
              seed: int = 1, root: Path) -> Run:  # fmt: skip
    """Run nodes (image nodes) under tern-sim; every node must exit with status 0."""
    scen = make_scenario(duration_s=duration_s, seed=seed, nodes=nodes, pins=pins,
                         medium=medium or {"model": "udgm", "tx_range": 50}, root=root)  # fmt: skip
    result = sim.run(scen, out, root=root)
    bad = [n for n in result.nodes if n.status != "exit" or n.exit_status != 0]
    if bad:
        raise BipsBenchError(f"{out}: " + ", ".join(f"{n.name} {n.status_text}" for n in bad) +
                             "\n" + sim.format_summary(result))  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    consoles = {n.name: (out / "console" / f"{n.name}.txt").read_text() for n in result.nodes}
    return Run(events, consoles, summary)


def cycles_to_us(c: float) -> float:
    return c * 1e6 / F_CPU


def first_instructions(elf: Path, symbols: Sequence[str]) -> dict[str, str]:
    """The first instruction of each function (avr-objdump), e.g. 'lds r24, 0x0088'."""
    text = subprocess.run(["avr-objdump", "-d", str(elf)], capture_output=True, text=True, check=True).stdout
    found: dict[str, str] = {}
    for sym in symbols:
        m = re.search(rf"^[0-9a-f]+ <{re.escape(sym)}>:\n\s*[0-9a-f]+:\s+(?:[0-9a-f]{{2}} )+\s*(.+?)(?:\s*;.*)?$",
                      text, re.M)  # fmt: skip
        if m:
            found[sym] = " ".join(m.group(1).split())
    return found


# --------------------------------------------------------------------------- timers (Table 1)

TIMERS_APP = "bips_timers"
TIMER_BINS = 256  # bips_timers.c N_BINS
# what each measured function must start with: the counter its event is defined on
TIMER_ENTRY = {"bcs_fired": "lds r24, 0x004C", "alarm_fired": "lds r22, 0x004C", "timed": "lds r24, 0x004C"}
_BIPST = re.compile(r"^BIPST name=(\w+) load=([01]) count=(\d+) min=(\d+) max=(\d+) sum=(\d+) shift=(\d+)$")


def parse_timers(text: str) -> list[dict[str, Any]]:
    """The BIPST blocks of bips_timers's console: one record per (timer, load)."""
    runs: list[dict[str, Any]] = []
    ended = False
    for line in text.splitlines():
        if m := _BIPST.match(line):
            name, load, count, lo, hi, total, shift = m.groups()
            runs.append({"timer": name, "load": load == "1", "count": int(count), "min": int(lo), "max": int(hi),
                         "sum": int(total), "shift": int(shift), "bins": []})  # fmt: skip
        elif line.startswith("H ") and runs:
            _, b, c = line.split()
            runs[-1]["bins"].append([int(b), int(c)])  # [bin, count], bins ascending
        elif line.startswith("BIPST END"):
            ended = True
    if not ended:
        raise BipsBenchError("bips_timers: no 'BIPST END' line (the run did not finish)")
    for r in runs:
        held = sum(c for _, c in r["bins"])
        if held != r["count"]:
            raise BipsBenchError(f"bips_timers {r['timer']} load={r['load']}: histogram holds "
                                 f"{held} of {r['count']} samples")  # fmt: skip
        r["avg"] = r["sum"] / r["count"] if r["count"] else 0.0
        for k in ("min", "avg", "max"):
            r[f"{k}_us"] = round(cycles_to_us(r[k]), 3)
        r["avg"] = round(r["avg"], 2)
    return runs


TIMER_LEADS = (0, 1500, 3500)  # bench/bips/CMakeLists.txt: one image per BCS take-over lead


def run_timers_lead(out: Path, lead: int, count: int, model: str, root: Path) -> list[dict[str, Any]]:
    app = f"{TIMERS_APP}_lead{lead}"
    elf = build_image(app, model, root)
    entry = first_instructions(elf, list(TIMER_ENTRY))
    wrong = {s: entry.get(s) for s, want in TIMER_ENTRY.items() if entry.get(s) != want}
    if wrong:
        raise BipsBenchError(f"{elf}: the measured functions do not start with their counter read: {wrong}")
    image = patch_params(elf, out / f"{app}.elf", [count, 0])
    # ~3.5k cycles per expiration, 6 runs, the load, the reports; the guest exits when done
    duration = 3 * 6 * count * 4100 / F_CPU + 5.0
    run = run_nodes([{"name": "n0", "image": str(image), "position": [0, 0]}], out / f"sim{lead}", duration, root=root)
    runs = parse_timers(run.consoles["n0"])
    if len(runs) != 6 or any(r["count"] != count for r in runs):
        raise BipsBenchError(f"{app}: expected 6 runs of {count}, got "
                             f"{[(r['timer'], r['load'], r['count']) for r in runs]}")  # fmt: skip
    for r in runs:
        r["lead"] = lead
    return runs


def run_timers(out: Path, *, count: int = 10_000, model: str = "stack", root: Path | None = None) -> dict[str, Any]:
    root = root or repo_root()
    runs = [r for lead in TIMER_LEADS for r in run_timers_lead(out, lead, count, model, root)]
    by = {(r["lead"], r["timer"], r["load"]): r for r in runs}
    targets = []
    for lead in TIMER_LEADS:
        free, load = by[(lead, "bcs", False)], by[(lead, "bcs", True)]
        targets += [
            {"what": f"BCS timer (lead {lead} cycles): armed time to the protocol's first instruction, max w/o load",
             "target": f"<= {BCS_TARGET_CYCLES} cycles", "measured": f"{free['max']} cycles",
             "met": free["max"] <= BCS_TARGET_CYCLES},
            {"what": f"BCS timer (lead {lead} cycles): max under load equal to max w/o load",
             "target": f"{free['max']} cycles", "measured": f"{load['max']} cycles",
             "met": load["max"] == free["max"]},
        ]  # fmt: skip
    return {"experiment": "timers", "board": BOARD, "model": model, "cpu_hz": F_CPU, "unit": "cycles",
            "count": count, "leads": list(TIMER_LEADS),
            "command": f"./tern bench bips timers --count {count} --model {model}",
            "entry_instructions": TIMER_ENTRY, "runs": runs, "targets": targets,
            "table1": [{"os": o, "timer": t, "free_us": list(a), "load_us": list(b)} for o, t, a, b in TABLE1]}  # fmt: skip


def _n(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"


def timers_markdown(doc: Mapping[str, Any]) -> str:
    lines = ["| system | timer | w/o load min | avg | max | with load min | avg | max |",
             "|---|---|--:|--:|--:|--:|--:|--:|"]  # fmt: skip
    by = {(r["lead"], r["timer"], r["load"]): r for r in doc["runs"]}
    for lead in doc["leads"]:
        for name, label in TIMER_NAMES.items():
            if name != "bcs" and lead != doc["leads"][0]:
                continue  # the alarm and task timer do not depend on the BCS's lead
            a, b = by[(lead, name, False)], by[(lead, name, True)]
            cells = [f"{_n(r[k])} ({r[k + '_us']:.2f} µs)" for r in (a, b) for k in ("min", "avg", "max")]
            what = f"{label}, lead {lead}" if name == "bcs" else label
            lines.append(f"| tern, micaz, {doc['model']} | {what} | " + " | ".join(cells) + " |")
    for row in doc["table1"]:
        cells = [f"{v} µs" for v in (*row["free_us"], *row["load_us"])]
        lines.append(f"| {row['os']}, Imote 2 (seed 004) | {row['timer']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- shared output


def targets_markdown(targets: Sequence[Mapping[str, Any]]) -> str:
    lines = ["| target | wanted | measured | |", "|---|---|---|---|"]
    for t in targets:
        verdict = "reported" if t["met"] is None else "met" if t["met"] else "**missed**"
        lines.append(f"| {t['what']} | {t['target']} | {t['measured']} | {verdict} |")
    return "\n".join(lines) + "\n"


def write_outputs(doc: Mapping[str, Any], out_dir: Path, markdown: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    name = doc["experiment"]
    (out_dir / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    (out_dir / f"{name}.md").write_text(markdown)


def plot_timers(doc: Mapping[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(lead, "bcs", f"BCS timer, lead {lead}") for lead in doc["leads"]]
    panels += [(doc["leads"][0], name, TIMER_NAMES[name]) for name in ("alarm", "timer")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.6))
    by = {(r["lead"], r["timer"], r["load"]): r for r in doc["runs"]}
    for ax, (lead, name, label) in zip(axes, panels):
        for load, colour in ((False, "tab:blue"), (True, "tab:red")):
            r = by[(lead, name, load)]
            width = 1 << r["shift"]
            xs, ys, seen = [cycles_to_us(r["min"])], [0.0], 0
            for b, c in r["bins"]:
                seen += c
                last = b == TIMER_BINS - 1  # it holds every longer delay too
                xs.append(cycles_to_us(r["max"] if last else min((b + 1) * width - 1, r["max"])))
                ys.append(seen / r["count"])
            ax.step(xs, ys, where="post", color=colour, label="with load" if load else "without load")
        ax.set_xscale("log")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("delay [µs] (1 cycle = 0.136 µs)")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel(f"fraction of {doc['count']} expirations")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Timer delays on micaz ({doc['model']}), tern-sim: cumulative distribution", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def percentile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    if not s:
        return math.nan
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def describe(xs: Sequence[float]) -> dict[str, float]:
    """min, max, mean, standard deviation (population), median, of values in µs."""
    return {"n": len(xs), "min": min(xs), "max": max(xs), "mean": statistics.fmean(xs),
            "sd": statistics.pstdev(xs), "median": percentile(xs, 0.5)}  # fmt: skip


# --------------------------------------------------------------------------- SFD (§5.3, Figs. 5 and 6)

SFD_APP = "bips_sfd"
SFD_PERIOD_S = 0.020
# seed 004 §5.3: standard deviation of the SFD difference, spread of the slot-start difference (µs)
SFD_ANCHORS: dict[str, Any] = {"bips_sfd_sd_us": 0.06, "tinyos_sfd_sd_us": 1.5, "tinyos_slot_spread_us": (-36.23, 30.58)}
_SFD_LINE = re.compile(r"^SFD node=(\d+) frames=(\d+) rx=(\d+) sfd_unknown=(\d+) missed_edges=(\d+) slot_late=(\d+)$", re.M)


def rises(events: Sequence[Mapping[str, Any]], node: str, label: str, value: int = 1) -> list[int]:
    return [e["t_ps"] for e in events
            if e["event"] == "pin" and e["node"] == node and e["label"] == label and e["value"] == value]  # fmt: skip


def frame_edges(events: Sequence[Mapping[str, Any]], node: str, frames: int) -> list[dict[str, int | None]]:
    """Per frame at a receiver: the chip's SFD rise and fall (PD4), and the first rise of
    sfd_r and slot_r after that SFD rise and before the next frame's (None if absent)."""
    chip_up, chip_down = rises(events, node, "sfd_chip"), rises(events, node, "sfd_chip", 0)
    if len(chip_up) != frames or len(chip_down) != frames:
        raise BipsBenchError(f"{node}: {len(chip_up)} SFD rises, {len(chip_down)} falls, {frames} frames sent")
    pins = {label: rises(events, node, label) for label in ("sfd_r", "slot_r")}
    out: list[dict[str, int | None]] = []
    for k, (up, down) in enumerate(zip(chip_up, chip_down)):
        end = chip_up[k + 1] if k + 1 < frames else math.inf
        row: dict[str, int | None] = {"chip": up, "chip_end": down}
        for label, ts in pins.items():
            row[label] = next((t for t in ts if up <= t < end), None)
        out.append(row)
    return out


def run_sfd_case(out: Path, frames: int, ppm: tuple[float, float], lead: int, model: str,
                 root: Path, awake: bool = False) -> dict[str, Any]:  # fmt: skip
    app = f"{SFD_APP}_lead{lead}"
    elf = build_image(app, model, root)
    image = patch_params(elf, out / f"{app}.elf", [frames, int(awake)])
    nodes: list[dict[str, Any]] = [{"name": "s", "image": str(image), "position": [0, 0]},
             {"name": "r1", "image": str(image), "position": [10, 0], "ppm": ppm[0]},
             {"name": "r2", "image": str(image), "position": [0, 10], "ppm": ppm[1]}]  # fmt: skip
    pins = [{"node": r, "pin": p, "label": label}
            for r in ("r1", "r2") for p, label in (("PD4", "sfd_chip"), ("PC1", "sfd_r"), ("PC2", "slot_r"))]  # fmt: skip
    run = run_nodes(nodes, out / "sim", 0.05 + frames * SFD_PERIOD_S + 0.3, pins=pins, root=root)
    counters = {}
    for name in ("r1", "r2"):
        m = _SFD_LINE.search(run.consoles[name])
        if not m:
            raise BipsBenchError(f"{app} {name}: no SFD line")
        _, sent, rx, unknown, missed, late = map(int, m.groups())
        counters[name] = {"frames": sent, "rx": rx, "sfd_unknown": unknown, "missed_edges": missed, "slot_late": late}
    r1, r2 = frame_edges(run.events, "r1", frames), frame_edges(run.events, "r2", frames)
    # A frame counts when both receivers raised both pins, sfd_r while the frame was on air
    # (after its end the interrupt saw a stale capture: the driver counts a missed edge).
    def ok(f: Mapping[str, int | None]) -> bool:
        return f["sfd_r"] is not None and f["slot_r"] is not None and f["sfd_r"] < (f["chip_end"] or 0)

    def both(f: Mapping[str, int | None]) -> bool:
        return f["sfd_r"] is not None and f["slot_r"] is not None

    # every frame both receivers answered, late or not: what the equal-clocks target is on
    every = [(a, b) for a, b in zip(r1, r2) if both(a) and both(b)]
    worst_all = max((abs((a[k] or 0) - (b[k] or 0)) / PS_PER_US for a, b in every for k in ("sfd_r", "slot_r")),
                    default=math.inf)  # fmt: skip
    good = [(a, b) for a, b in zip(r1, r2) if ok(a) and ok(b)]
    sfd = [((a["sfd_r"] or 0) - (b["sfd_r"] or 0)) / PS_PER_US for a, b in good]
    slot = [((a["slot_r"] or 0) - (b["slot_r"] or 0)) / PS_PER_US for a, b in good]
    chip = [((a["chip"] or 0) - (b["chip"] or 0)) / PS_PER_US for a, b in zip(r1, r2)]
    latency = [((a["sfd_r"] or 0) - (a["chip"] or 0)) / PS_PER_US for a in r1 if ok(a)]
    if not good:
        raise BipsBenchError(f"{app}: no frame with both receivers' pins")
    return {"ppm": list(ppm), "lead": lead, "awake": awake, "frames": frames, "counters": counters,
            "excluded": frames - len(good),
            "answered_by_both": len(every), "max_abs_diff_all_us": worst_all,
            "sfd_diff_us": describe(sfd), "slot_diff_us": describe(slot), "chip_sfd_diff_us": describe(chip),
            "r1_detect_latency_us": describe(latency), "sfd_diffs": sfd, "slot_diffs": slot}  # fmt: skip


def case_label(c: Mapping[str, Any]) -> str:
    return (f"lead {c['lead']}, {c['ppm'][0]:+g}, {c['ppm'][1]:+g} ppm"
            + (", receivers never asleep" if c.get("awake") else ""))  # fmt: skip


def run_sfd(out: Path, *, frames: int = 1500, model: str = "stack", root: Path | None = None) -> dict[str, Any]:
    root = root or repo_root()
    cases = [run_sfd_case(out / f"lead{lead}_{name}", frames, ppm, lead, model, root)
             for lead in (0, 3500) for name, ppm in (("equal", (0.0, 0.0)), ("ppm40", (40.0, -40.0)))]  # fmt: skip
    # what sleeping adds: the receivers' CPUs kept awake (the late SFD interrupts are not seen then)
    cases.append(run_sfd_case(out / "lead0_ppm40_awake", frames, (40.0, -40.0), 0, model, root, awake=True))
    one_cycle_us = cycles_to_us(1)
    targets = []
    for c in cases:
        if c["ppm"] != [0.0, 0.0]:
            continue
        worst = c["max_abs_diff_all_us"]
        targets.append({"what": f"SFD and slot-start differences between the receivers, equal clocks, lead {c['lead']} "
                                f"(largest absolute difference over the {c['answered_by_both']} frames both answered)",
                        "target": f"<= 1 cycle ({one_cycle_us:.3f} µs)", "measured": f"{worst:.3f} µs",
                        "met": worst <= one_cycle_us + 1e-9 and c["answered_by_both"] == frames})  # fmt: skip
    for c in cases:
        late = {r: v["missed_edges"] for r, v in c["counters"].items()}
        targets.append({"what": f"SFD interrupts after the frame's end (driver's sfd_missed_edges), {case_label(c)}",
                        "target": "none wanted (reported, not an issue target)",
                        "measured": f"r1 {late['r1']}, r2 {late['r2']}", "met": None})  # fmt: skip
    return {"experiment": "sfd", "board": BOARD, "model": model, "cpu_hz": F_CPU, "unit": "µs (simulated)",
            "frames": frames, "command": f"./tern bench bips sfd --frames {frames} --model {model}",
            "anchors": SFD_ANCHORS, "cases": cases, "targets": targets}  # fmt: skip


def sfd_markdown(doc: Mapping[str, Any]) -> str:
    lines = ["| BCS lead, clocks (r1, r2) | what (r1 − r2, or a latency at r1) | frames | min [µs] | max [µs] | mean [µs] | σ [µs] |",
             "|---|---|--:|--:|--:|--:|--:|"]  # fmt: skip
    for c in doc["cases"]:
        clocks = case_label(c)
        for key, label in (("chip_sfd_diff_us", "CC2420 SFD pins (PD4)"), ("sfd_diff_us", "sfd_r: pin raised in the SFD interrupt (Fig. 5)"),
                           ("slot_diff_us", "slot_r: slot start 10 ms after the SFD timestamp (Fig. 6)"),
                           ("r1_detect_latency_us", "latency at r1: chip SFD pin to sfd_r")):  # fmt: skip
            d = c[key]
            n = f"{d['n']}" + (f" ({c['excluded']} left out)" if c["excluded"] and key != "chip_sfd_diff_us" else "")
            lines.append(f"| {clocks} | {label} | {n} | {d['min']:.3f} | {d['max']:.3f} | {d['mean']:.3f} | {d['sd']:.3f} |")
    a = doc["anchors"]
    lines.append(f"| Imote 2 (seed 004) | BiPS, SFD | 1500 | | | ≈ 0 | {a['bips_sfd_sd_us']} |")
    lines.append(f"| Imote 2 (seed 004) | TinyOS, SFD | 1500 | | | ≈ 0 | {a['tinyos_sfd_sd_us']} |")
    lo, hi = a["tinyos_slot_spread_us"]
    lines.append(f"| Imote 2 (seed 004) | TinyOS, slot start | 1500 | {lo} | {hi} | | |")
    return "\n".join(lines) + "\n"


def plot_sfd(doc: Mapping[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
    for ax, key, title in ((axes[0], "sfd_diffs", "SFD detected in software (Fig. 5)"),
                           (axes[1], "slot_diffs", "slot start 10 ms after the SFD (Fig. 6)")):  # fmt: skip
        cycle = cycles_to_us(1)
        for c, colour in zip(doc["cases"], ("tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange")):
            xs = c[key]
            label = case_label(c)
            lo, hi = math.floor(min(xs) / cycle), math.ceil(max(xs) / cycle) + 1
            edges = [(k - 0.5) * cycle for k in range(lo, hi + 1)]  # one bin per cycle
            ax.hist(xs, bins=edges, histtype="step", color=colour, label=label, lw=1.2)
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("r1 − r2 [µs] (bins of one cycle, 0.136 µs)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"frames (of {doc['frames']})")
    axes[0].legend(fontsize=8)
    fig.suptitle("Difference between two receivers of one frame, micaz under tern-sim", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --------------------------------------------------------------------------- sync (§4.1's d_maxOffset)

SYNC_APP = "bips_sync"
SYNC_START_S = 3.0  # bips_sync.c START_MS: every node synchronized by then
D_TX_RX_US = 192.0
# seed 004 §4.1: d_maxOffset, d_stop and the minimum region length (MB) for each protocol
SYNC_ANCHORS: dict[str, dict[str, float]] = {"beacon": {"max_offset_us": 100, "d_stop_us": 192, "min_region_ms": 5.5},
                "bbs": {"max_offset_us": 338, "d_stop_us": 338, "min_region_ms": 6.8}}  # fmt: skip
SYNC_CASES = {
    # name: protocol, nodes (name, x, ppm): beacons within one hop; BBS on a line 40 m apart (udgm 50 m)
    "beacon": ("beacon", [("n0", 0, 0.0), ("n1", 10, 40.0), ("n2", 20, -40.0)]),
    "bbs": ("bbs", [("n0", 0, 0.0), ("n1", 40, 40.0), ("n2", 80, -40.0), ("n3", 120, 30.0)]),
}


def region_offsets(events: Sequence[Mapping[str, Any]], node: str, after_ps: int) -> list[float]:
    """Each region start (PC0 rise) of node minus the master's nearest one, in µs."""
    master = rises(events, "n0", "region")
    offs = []
    for t in rises(events, node, "region"):
        if t < after_ps:
            continue
        nearest = min(master, key=lambda m: abs(m - t))
        if abs(nearest - t) > 5_000 * PS_PER_US:
            raise BipsBenchError(f"{node}: region start at {t} ps has no master region within 5 ms")
        offs.append((t - nearest) / PS_PER_US)
    return offs


def run_sync_case(out: Path, name: str, slots: int, model: str, root: Path) -> dict[str, Any]:
    proto, layout = SYNC_CASES[name]
    elf = build_image(SYNC_APP, model, root)
    image = patch_params(elf, out / f"{SYNC_APP}.elf", [slots, 1 if proto == "bbs" else 0])
    nodes = [{"name": n, "image": str(image), "position": [x, 0], "ppm": ppm} for n, x, ppm in layout]
    pins = [{"node": n, "pin": "PC0", "label": "region"} for n, _, _ in layout]
    run = run_nodes(nodes, out / name, SYNC_START_S + slots + 1.0, pins=pins, seed=4,
                    medium={"model": "udgm", "tx_range": 50, "interference_range": 50}, root=root)  # fmt: skip
    after = int(SYNC_START_S * 1e12)
    per_node: dict[str, dict[str, Any]] = {}
    for hop, (n, _, ppm) in enumerate(layout[1:], start=1):
        offs = region_offsets(run.events, n, after)[: 2 * slots]  # the macro slots from 3 s on
        if len(offs) < 2 * slots:
            raise BipsBenchError(f"sync {name}: {n} started {len(offs)} regions, expected {2 * slots}")
        per_node[n] = {"hop": hop if proto == "bbs" else 1, "ppm": ppm, "offsets_us": offs,
                       "early_us": describe(offs[0::2]), "late_us": describe(offs[1::2]),
                       "max_abs_us": max(abs(o) for o in offs)}  # fmt: skip
    worst: float = max(v["max_abs_us"] for v in per_node.values())
    anchor: dict[str, float] = SYNC_ANCHORS[proto]
    d_stop = max(worst, D_TX_RX_US)
    # seed 004's region minus its guards (t0..t1 and t2..t3) plus ours: the MB content unchanged
    content_ms = anchor["min_region_ms"] - (anchor["max_offset_us"] + anchor["d_stop_us"]) / 1000
    return {"case": name, "protocol": proto, "slots": slots, "nodes": per_node, "max_offset_us": worst,
            "d_stop_us": d_stop, "min_region_ms": content_ms + (worst + d_stop) / 1000, "anchor": anchor}  # fmt: skip


def run_sync(out: Path, *, slots: int = 100, model: str = "stack", root: Path | None = None) -> dict[str, Any]:
    root = root or repo_root()
    cases = [run_sync_case(out, name, slots, model, root) for name in SYNC_CASES]
    targets = [{"what": f"{c['protocol']}: largest region-start offset over {slots} macro slots",
                "target": f"<= {c['anchor']['max_offset_us']} µs (seed 004's d_maxOffset)",
                "measured": f"{c['max_offset_us']:.2f} µs", "met": c["max_offset_us"] <= c["anchor"]["max_offset_us"]}
               for c in cases]  # fmt: skip
    return {"experiment": "sync", "board": BOARD, "model": model, "unit": "µs (simulated)", "slots": slots,
            "command": f"./tern bench bips sync --slots {slots} --model {model}", "cases": cases, "targets": targets}  # fmt: skip


def sync_markdown(doc: Mapping[str, Any]) -> str:
    lines = ["| protocol | node | hop | clock | offset 20 ms into the slot [µs] min … max (σ) | 900 ms into it [µs] min … max (σ) |",
             "|---|---|--:|--:|---|---|"]  # fmt: skip
    for c in doc["cases"]:
        for n, v in c["nodes"].items():
            e, late = v["early_us"], v["late_us"]
            lines.append(f"| {c['protocol']} | {n} | {v['hop']} | {v['ppm']:+g} ppm | {e['min']:.2f} … {e['max']:.2f} ({e['sd']:.2f}) "
                         f"| {late['min']:.2f} … {late['max']:.2f} ({late['sd']:.2f}) |")  # fmt: skip
    lines += ["", "| protocol | d_maxOffset measured | d_stop = max(d_maxOffset, 192 µs) | minimum region (MB) | seed 004 |",
              "|---|--:|--:|--:|---|"]  # fmt: skip
    for c in doc["cases"]:
        a = c["anchor"]
        lines.append(f"| {c['protocol']} | {c['max_offset_us']:.1f} µs | {c['d_stop_us']:.1f} µs | {c['min_region_ms']:.2f} ms "
                     f"| {a['max_offset_us']} µs, {a['d_stop_us']} µs, {a['min_region_ms']} ms |")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot_sync(doc: Mapping[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(doc["cases"]), figsize=(11, 3.6), sharey=True)
    for ax, c in zip(axes, doc["cases"]):
        for n, v in c["nodes"].items():
            offs = v["offsets_us"]
            ax.plot([i / 2 for i in range(len(offs))], offs, ".", ms=3, label=f"{n} (hop {v['hop']}, {v['ppm']:+g} ppm)")
        ax.axhline(c["anchor"]["max_offset_us"], color="grey", ls="--", lw=0.8)
        ax.axhline(-c["anchor"]["max_offset_us"], color="grey", ls="--", lw=0.8)
        ax.set_title(f"{c['protocol']}: region start − master's", fontsize=10)
        ax.set_xlabel("macro slot")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("offset [µs] (dashed: seed 004's d_maxOffset)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --------------------------------------------------------------------------- MAC comparison (experiment 4)

MACS_APP = "bips_macs"
MACS_VARIANTS = ("cb", "rb", "actp", "mb", "mix")
MACS_START_S = 2.5  # bips_macs.c START_MS
MACS_DRAIN_S = 1.5  # DRAIN_MS
MACRO_US = 250_000
SPORADIC_TAG = 0x8000
SENDERS_MAX_OUT = 2  # unconfirmed frames per sender: one periodic (1 s period), one sporadic
# (name, x, y, ppm): n0 the sink and beacon master; n1 and n2 80 m apart on either side of it,
# each in its range (50 m), not in each other's: the hidden pair. n3..n9 hear everyone.
MACS_LAYOUT: tuple[tuple[str, float, float, float], ...] = (
    ("n0", 0, 0, 0), ("n1", -40, 0, 30), ("n2", 40, 0, -20), ("n3", 0, 8, 25), ("n4", 0, -8, -10),
    ("n5", 0, 16, 15), ("n6", 0, -16, -30), ("n7", 0, 24, 5), ("n8", 0, -24, -25), ("n9", 5, 0, 40),
)  # fmt: skip
HIDDEN = ("n1", "n2")
# bips_macs.c's regions per variant: (MAC, TX TO ids, start into the macro slot, length), in µs
MACS_REGIONS: dict[str, tuple[tuple[str, tuple[int, ...], int, int], ...]] = {
    "cb": (("CB", (1, 2), 10_000, 40_000),),
    "rb": (("RB", (1, 2), 10_000, 40_000),),
    "actp": (("ACTP", (1, 2), 10_000, 100_000),),
    "mb": (("MB", (1, 2), 10_000, 41_000),),
    "mix": (("RB", (1,), 10_000, 40_000), ("CB", (4,), 55_000, 40_000), ("ACTP", (3,), 100_000, 95_000),
            ("MB", (2,), 200_000, 41_000)),
}  # fmt: skip
D_GUARDS_US = 100 + 192 + 1000  # d_maxOffset + d_stop + ACTP_FIRST_US: ACTP's rounds run from t1 + 1 ms to t2
_ENQ = re.compile(r"^enq tag=(\d+) to=(\d+) t=(\d+)$", re.M)
_REFUSED = re.compile(r"^enq tag=(\d+) to=(\d+) refused (-?\d+)$", re.M)
_CONF = re.compile(r"^conf tag=(\d+) st=(\d+) tries=(\d+) sfd=(\d+)$", re.M)
_RX = re.compile(r"^rx from=(\d+) tag=(\d+)$", re.M)
_ROUND = re.compile(r"^actp timing round_us=(\d+)$", re.M)


def macs_bounds(variant: str, round_us: int | None) -> dict[str, float]:
    """The queue-to-air bounds (µs) that RB and ACTP guarantee in this scenario.

    RB: two own slots per region and at most two unconfirmed frames per node,
    so each frame goes in the first region after its enqueue: at most a macro
    slot and the region's length. ACTP: a frame with j frames of higher
    arbitration value queued is on air j rounds later (docs/bips.md); with at
    most SENDERS_MAX_OUT unconfirmed frames per sender in the region's TOs
    (one in MIX, where ACTP carries every other sporadic frame) at most
    ceil(9 x that / rounds per region) regions after the next one's start.
    Assumed, not enforced: a sender's later frames do not overtake within
    the wait (its periodic period, 1 s, exceeds both bounds; a sporadic frame
    follows only its predecessor's confirmation)."""
    out: dict[str, float] = {}
    for mac, _, _, length in MACS_REGIONS[variant]:
        if mac == "RB":
            out[mac] = MACRO_US + length
        elif mac == "ACTP" and round_us:
            rounds = (length - D_GUARDS_US) // round_us
            frames = 9 * (1 if variant == "mix" else SENDERS_MAX_OUT)
            out[mac] = math.ceil(frames / rounds) * MACRO_US + length
    return out


def _region_of(variant: str, t_ps: int, first_rise_ps: int) -> str | None:
    """The region (MAC name) of n0's macro slot that time falls into (t0..t3), from n0's first region start."""
    regions = MACS_REGIONS[variant]
    phase_us = ((t_ps - first_rise_ps) / PS_PER_US) % MACRO_US + regions[0][2]
    for mac, _, start, length in regions:
        if start <= phase_us < start + length:
            return mac
    return None


def analyse_macs(variant: str, run: Run) -> dict[str, Any]:
    """Delivery, queue-to-air latency, collisions and radio-on time of one run."""
    regions = MACS_REGIONS[variant]
    mac_of_to = {to: mac for mac, tos, _, _ in regions for to in tos}
    sink = run.consoles["n0"]
    received: dict[tuple[int, int], int] = {}
    for src, tag in _RX.findall(sink):
        received[(int(src), int(tag))] = received.get((int(src), int(tag)), 0) + 1
    m = _ROUND.search(sink)
    round_us = int(m.group(1)) if m else None
    frames: list[dict[str, Any]] = []
    refused = 0
    for node_id, (name, *_rest) in enumerate(MACS_LAYOUT[1:], start=1):
        text = run.consoles[name]
        refused += len(_REFUSED.findall(text))
        confs = {int(t): (st, int(tries), int(sfd)) for t, st, tries, sfd in _CONF.findall(text)}
        for tag_s, to_s, t_s in _ENQ.findall(text):
            tag, t = int(tag_s), int(t_s)
            st, tries, sfd = confs.get(tag, ("none", 0, 0))
            # the frame's SFD on the sender's clock (0: the driver could not tell it, cc2420.h)
            lat = ((sfd - t) % (1 << 32)) * 1e6 / F_CPU if st == "0" and sfd else None
            frames.append({"node": name, "tag": tag, "mac": mac_of_to[int(to_s)],
                           "class": "sporadic" if tag & SPORADIC_TAG else "periodic", "confirm": st, "tries": tries,
                           "latency_us": lat, "delivered": received.get((node_id, tag), 0)})  # fmt: skip
    # the medium: collisions of frames (not black bursts), where, with whom, in which region
    tx_info = {e["tx"]: (e["node"], e.get("kind", "frame")) for e in run.events if e["event"] == "tx_start"}
    first_rise = rises(run.events, "n0", "region")[0]
    collisions: list[dict[str, Any]] = []
    for e in run.events:
        if e["event"] != "collision" or tx_info.get(e["tx"], ("", ""))[1] != "frame":
            continue
        collisions.append({"at": e["node"], "from": tx_info[e["tx"]][0], "with": tx_info.get(e["with"], ("?", "?"))[0],
                           "with_kind": tx_info.get(e["with"], ("?", "?"))[1], "t_ps": e["t_ps"],
                           "region": _region_of(variant, e["t_ps"], first_rise)})  # fmt: skip
    # frames the sink lost while receiving another one (udgm's capture: the first stays)
    busy_at_sink = [(tx_info[e["tx"]][0], e["t_ps"]) for e in run.events
                    if e["event"] == "rx_lost" and e["node"] == "n0" and e.get("reason") == "busy"
                    and tx_info.get(e["tx"], ("", ""))[1] == "frame"]  # fmt: skip
    end_ps = {n["name"]: n["end_ps"] for n in run.summary["nodes"]}
    radio = {n["name"]: (n["radio_ps"]["rx"] + n["radio_ps"]["tx"] + n["radio_ps"]["idle"]) / 1e9 for n in run.summary["nodes"]}
    per_mac: dict[str, Any] = {}
    bounds = macs_bounds(variant, round_us)
    for mac, *_ in regions:
        fs = [f for f in frames if f["mac"] == mac]
        lats = [f["latency_us"] for f in fs if f["latency_us"] is not None]
        cs = [c for c in collisions if c["region"] == mac]
        at_sink_hidden = [c for c in cs if c["at"] == "n0" and {c["from"], c["with"]} == set(HIDDEN)]
        by_class = {}
        for cls in ("periodic", "sporadic"):
            cl = [f["latency_us"] for f in fs if f["class"] == cls and f["latency_us"] is not None]
            by_class[cls] = describe(cl) if cl else None
        per_mac[mac] = {
            "enqueued": len(fs), "confirmed_ok": sum(1 for f in fs if f["confirm"] == "0"),
            "delivered": sum(1 for f in fs if f["delivered"]), "duplicates": sum(max(0, f["delivered"] - 1) for f in fs),
            "delivery_ratio": (sum(1 for f in fs if f["delivered"]) / len(fs)) if fs else math.nan,
            "hidden_pair_delivery": {n: _ratio([f for f in fs if f["node"] == n]) for n in HIDDEN},
            "others_delivery": _ratio([f for f in fs if f["node"] not in HIDDEN]),
            "latency_us": describe(lats) if lats else None, "latency_by_class_us": by_class,
            "sfd_unknown": sum(1 for f in fs if f["confirm"] == "0" and f["latency_us"] is None),
            "collisions": len(cs), "collisions_at_sink": sum(1 for c in cs if c["at"] == "n0"),
            "lost_busy_at_sink": sum(1 for _, t in busy_at_sink if _region_of(variant, t, first_rise) == mac),
            "hidden_pair_lost_at_sink": sum(1 for c in cs if c["at"] == "n0" and c["from"] in HIDDEN) +
            sum(1 for n, t in busy_at_sink if n in HIDDEN and _region_of(variant, t, first_rise) == mac),
            "hidden_pair_collisions_at_sink": len(at_sink_hidden),
            "bound_us": bounds.get(mac), "max_tries": max((f["tries"] for f in fs), default=0),
            "slowest": max((f for f in fs if f["latency_us"] is not None), key=lambda f: float(f["latency_us"]), default=None),
        }  # fmt: skip
    return {"variant": variant, "round_us": round_us, "refused": refused, "macs": per_mac,
            "collisions_total": len(collisions), "collisions_outside_regions": sum(1 for c in collisions if c["region"] is None),
            "radio_on_ms": radio, "run_ms": {k: v / 1e9 for k, v in end_ps.items()},
            "stats": {n: [ln for ln in run.consoles[n].splitlines() if ln.startswith("stats ")] for n in run.consoles}}  # fmt: skip


def _ratio(fs: Sequence[Mapping[str, Any]]) -> float:
    return sum(1 for f in fs if f["delivered"]) / len(fs) if fs else math.nan


def run_macs_variant(out: Path, variant: str, seconds: int, model: str, root: Path, seed: int = 7) -> dict[str, Any]:
    app = f"{MACS_APP}_{variant}"
    image = patch_params(build_image(app, model, root), out / f"{app}.elf", [seconds])
    nodes = [{"name": n, "image": str(image), "position": [x, y], "ppm": ppm} for n, x, y, ppm in MACS_LAYOUT]
    run = run_nodes(nodes, out / variant, MACS_START_S + seconds + MACS_DRAIN_S + 0.7, seed=seed,
                    pins=[{"node": "n0", "pin": "PC0", "label": "region"}],
                    medium={"model": "udgm", "tx_range": 50, "interference_range": 50}, root=root)  # fmt: skip
    return analyse_macs(variant, run)


def macs_targets(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    t: list[dict[str, Any]] = []
    for c in cases:
        for mac, m in c["macs"].items():
            where = f"{mac}" + (" in the mixed super slot" if c["variant"] == "mix" else "")
            if mac in ("RB", "ACTP"):
                t.append({"what": f"{where}: collisions (frames, any node)", "target": "0",
                          "measured": str(m["collisions"]), "met": m["collisions"] == 0})  # fmt: skip
                lat = m["latency_us"]
                if m["bound_us"] is not None and lat:
                    t.append({"what": f"{where}: largest queue-to-air delay within its bound", "target": f"<= {m['bound_us']:,.0f} µs",
                              "measured": f"{lat['max']:,.0f} µs", "met": lat["max"] <= m["bound_us"]})  # fmt: skip
            if mac == "CB" and c["variant"] == "cb":
                t.append({"what": "CB: hidden-pair (n1, n2) collisions at the sink", "target": "> 0 (the losses shown)",
                          "measured": str(m["hidden_pair_collisions_at_sink"]), "met": m["hidden_pair_collisions_at_sink"] > 0})  # fmt: skip
            if c["variant"] == "mix":
                t.append({"what": f"{where}: frames delivered", "target": "> 0",
                          "measured": f"{m['delivered']} of {m['enqueued']}", "met": m["delivered"] > 0})  # fmt: skip
    return t


def run_macs(out: Path, *, seconds: int = 20, model: str = "stack", root: Path | None = None,
             variants: Sequence[str] = MACS_VARIANTS) -> dict[str, Any]:  # fmt: skip
    root = root or repo_root()
    cases = [run_macs_variant(out, v, seconds, model, root) for v in variants]
    return {"experiment": "macs", "board": BOARD, "model": model, "unit": "µs and ms (simulated)", "seconds": seconds,
            "command": f"./tern bench bips macs --seconds {seconds} --model {model}",
            "layout": [list(x) for x in MACS_LAYOUT], "cases": cases, "targets": macs_targets(cases)}  # fmt: skip


def _f(v: float | None, fmt: str = ",.0f") -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def macs_markdown(doc: Mapping[str, Any]) -> str:
    lines = ["| run | MAC | frames | delivered | ratio | n1 / n2 delivered | others | queue-to-air mean [µs] | max [µs] "
             "| bound [µs] | collisions, all nodes | at the sink (n1×n2) | lost at the sink, busy |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]  # fmt: skip
    for c in doc["cases"]:
        for mac, m in c["macs"].items():
            lat = m["latency_us"] or {}
            h = m["hidden_pair_delivery"]
            lines.append(f"| {c['variant']} | {mac} | {m['enqueued']} | {m['delivered']} | {_f(m['delivery_ratio'], '.3f')} "
                         f"| {_f(h['n1'], '.2f')} / {_f(h['n2'], '.2f')} | {_f(m['others_delivery'], '.2f')} "
                         f"| {_f(lat.get('mean'))} | {_f(lat.get('max'))} | {_f(m['bound_us'])} | {m['collisions']} "
                         f"| {m['collisions_at_sink']} ({m['hidden_pair_collisions_at_sink']}) | {m['lost_busy_at_sink']} |")  # fmt: skip
    names = [n for n, *_ in MACS_LAYOUT]
    lines += ["", "Radio on (rx + tx + idle listening) [ms], and each run's length:", "",
              "| run | " + " | ".join(names) + " | run [ms] |", "|---|" + "--:|" * (len(names) + 1)]  # fmt: skip
    for c in doc["cases"]:
        lines.append(f"| {c['variant']} | " + " | ".join(f"{c['radio_on_ms'][n]:,.0f}" for n in names) +
                     f" | {c['run_ms']['n0']:,.0f} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot_macs(doc: Mapping[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(f"{c['variant']}:{mac}" if c["variant"] == "mix" else mac, m, c) for c in doc["cases"] for mac, m in c["macs"].items()]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    labels = [r[0] for r in rows]
    axes[0].bar(labels, [r[1]["delivery_ratio"] for r in rows])
    axes[0].set_title("delivery ratio at the sink", fontsize=10)
    axes[0].set_ylim(0, 1.05)
    axes[1].bar(labels, [(r[1]["latency_us"] or {}).get("max", 0) / 1000 for r in rows], label="max")
    axes[1].bar(labels, [(r[1]["latency_us"] or {}).get("mean", 0) / 1000 for r in rows], label="mean")
    for i, r in enumerate(rows):
        if r[1]["bound_us"]:
            axes[1].plot([i - 0.4, i + 0.4], [r[1]["bound_us"] / 1000] * 2, "k--", lw=1)
    axes[1].set_title("queue-to-air delay [ms] (dashed: bound)", fontsize=10)
    axes[1].legend(fontsize=7)
    axes[2].bar(labels, [r[1]["collisions"] for r in rows], label="all")
    axes[2].bar(labels, [r[1]["hidden_pair_collisions_at_sink"] for r in rows], label="n1×n2 at the sink")
    axes[2].set_title("collisions (frames)", fontsize=10)
    axes[2].legend(fontsize=7)
    for ax in axes:
        ax.tick_params(axis="x", labelrotation=45, labelsize=8)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
