"""Seed 001's GPIO, interrupt, memory and power experiments (thesis
chapters 5.3-5.4, tables 6.1-6.3; issue 16's experiments 1, 2, 3 and 5) on
tern-sim, per execution model, beside the thesis's Zephyr, RIOT and Contiki.

The guest is bench/seed001/gpio.c on a MicaZ (ATmega128 at 7.3728 MHz); its
parameters go into .tern_params (magic "s01g", mode, count, load period in
µs, load cycles). tern-sim's logic analyser records its pins and its signal
generator drives PE4 (INT4), as the thesis's oscilloscope and function
generator did:

- gpio: the maximal toggle frequency of `PORTC ^= bit` in a loop (PC0), the
  minimal on- and off-times of `PORTC |= bit; PORTC &= ~bit` (PC3), and a
  toggle per kernel message (PC4: one dispatch each, the model's cost); the
  input-to-output delay from a PE4 edge to the first statement of the task
  that handles the interrupt's message (PC2).
- irq: from the PE4 edge to the interrupt handler's first statement (PC1),
  and its jitter, with the CPU asleep between edges and with a
  lower-priority task busy 40 % of the time (edges at Poisson times).
- memory: `avr-size` of the GPIO app and of the network app
  (bench/seed001/net.c), text / data / bss, as the thesis's table 6.2.
- power: tern-sim's energy of a node running the GPIO app (an edge every
  ms, answered) and of the network app's receiver (the throughput
  experiment, 50-byte datagrams), over its simulated lifetime, as mW.

Times are simulated: cycles of the MicaZ's 7.3728 MHz clock, and µs.
"""
from __future__ import annotations

import json
import statistics
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from terntools import build, scenario, seed001, sim, sizes
from terntools.boards import Board
from terntools.errors import TernError, UsageError

APP = "seed001_gpio"
BOARD = "micaz"
PARAMS_MAGIC = 0x73303167  # "s01g"
MODE_TOGGLE, MODE_REACT = 0, 1
INPUT_PIN = "PE4"
PINS = {"xor": "PC0", "isr": "PC1", "task": "PC2", "onoff": "PC3", "msg": "PC4"}
IDLE_PERIOD_US = 1000  # an edge every ms, the CPU asleep in between
LOAD_RATE_HZ = 400  # Poisson edges against the load
LOAD_PERIOD_US = 1000
LOAD_SHARE = 0.4  # the load task's share of the CPU
WIDTH_US = 20
# Under load the pulses last 500 µs, which is also the least gap between
# Poisson edges in tern-sim: longer than any window with interrupts masked
# seen (about 300 µs), so that two edges never fold into one handler run
# (INT4's flag is one bit) and every edge has its answer.
LOADED_WIDTH_US = 500
SYSTEMS = seed001.SYSTEMS

# Thesis table 6.1. Zephyr's toggle frequency is computed from its on/off
# times (it had no toggle call), so it is in parentheses there.
THESIS_GPIO: dict[str, dict[str, float]] = {
    "toggle_khz": {"Zephyr": 223.0, "RIOT": 379.0, "Contiki": 362.0},
    "on_us": {"Zephyr": 2.24, "RIOT": 1.88, "Contiki": 1.48},
    "off_us": {"Zephyr": 2.24, "RIOT": 1.36, "Contiki": 1.48},
    "io_delay_us": {"Zephyr": 6.4, "RIOT": 7.2, "Contiki": 92000.0},
}
GPIO_LOWER_IS_BETTER = {"toggle_khz": False, "on_us": True, "off_us": True, "io_delay_us": True}
# Thesis table 6.2: (.text, .data, .bss) in bytes.
THESIS_MEMORY: dict[str, dict[str, tuple[int, int, int]]] = {
    "gpio": {"Zephyr": (12002, 1712, 4720), "RIOT": (8600, 144, 2860), "Contiki": (43534, 481, 12591)},
    "net": {"Zephyr": (52362, 3360, 22880), "RIOT": (44568, 176, 17640), "Contiki": (39700, 440, 28980)},
}
# Thesis table 6.3, the shunt/amplifier/DSO row (mW); the USB meter's row
# (0.35-0.50 W) measured the whole board and is not compared.
THESIS_POWER_MW: dict[str, dict[str, float]] = {
    "gpio": {"Zephyr": 2.93, "RIOT": 2.60, "Contiki": 0.24},
    "net": {"Zephyr": 9.11, "RIOT": 9.76, "Contiki": 9.11},
}
APPS = {"gpio": "GPIO", "net": "networking"}
EXPERIMENTS = ("gpio", "irq", "memory", "power")


@dataclass(frozen=True)
class Plan:
    board: Board
    models: tuple[str, ...]
    toggles: int = 200
    edges: int = 200
    power_edges: int = 1000
    net_datagrams: int = 400
    seed: int = 1

    def check(self) -> None:
        if self.board.name != BOARD:
            raise UsageError(f"the GPIO experiments need board {BOARD} (PE4/INT4), not {self.board.name}")
        if min(self.toggles, self.edges, self.power_edges, self.net_datagrams) < 2:
            raise UsageError("sample counts must be at least 2")
        unknown = [m for m in self.models if m not in self.board.models]
        if unknown:
            raise UsageError(f"model(s) {', '.join(unknown)} not available on {self.board.name} "
                             f"(it lists {', '.join(self.board.models)})")


def params_blob(mode: int, count: int, load_period_us: int = 0, load_cycles: int = 0) -> bytes:
    return struct.pack("<8I", PARAMS_MAGIC, mode, count, load_period_us, load_cycles, 0, 0, 0)


@dataclass
class Trace:
    """Rising and falling edges (ps) per label, and the node's figures."""

    rises: dict[str, list[int]]
    falls: dict[str, list[int]]
    node: sim.NodeResult
    console: str
    wall_s: float


def simulate(board: Board, elf: Path, work: Path, blob: bytes, duration_s: float,
             stimulus: dict[str, Any] | None = None, seed: int = 1) -> Trace:
    """One node running the patched guest; every probe pin and the input recorded."""
    work.mkdir(parents=True, exist_ok=True)
    image = work / "gpio.elf"
    seed001.patch_blob(board, elf, image, blob)
    pins = [{"node": "n", "pin": p, "label": label} for label, p in PINS.items()]
    pins.append({"node": "n", "pin": INPUT_PIN, "label": "input"})
    stimuli = [{"node": "n", "pin": INPUT_PIN, **stimulus}] if stimulus else []
    scen = scenario.make_scenario(duration_s=duration_s, seed=seed, medium={"model": "table"},
                                  nodes=[{"name": "n", "board": board.name, "image": str(image)}],
                                  pins=pins, stimuli=stimuli)
    result = sim.run(scen, work / "out", do_build=False)
    node = result.nodes[0]
    console = (work / "out" / "console" / "n.txt").read_text()
    if node.status != "exit" or node.exit_status != 0:
        raise TernError(f"seed001 gpio: the node ended '{node.status}' status {node.exit_status} "
                        f"(outputs in {work / 'out'}): {console.strip()[-300:]}")
    rises: dict[str, list[int]] = {label: [] for label in (*PINS, "input")}
    falls: dict[str, list[int]] = {label: [] for label in (*PINS, "input")}
    with open(work / "out" / "events.jsonl") as f:
        for line in f:
            if '"pin"' not in line:
                continue
            e = json.loads(line)
            if e.get("event") == "pin":
                (rises if e["value"] == 1 else falls)[e["label"]].append(int(e["t_ps"]))
    return Trace(rises, falls, node, console, result.wall_s)


# --------------------------------------------------------------------------- figures


def to_cycles(ps: float, board: Board) -> float:
    return ps * board.cpu_hz / 1e12


def stats(xs: list[float], digits: int = 3) -> dict[str, Any]:
    if not xs:
        return {"n": 0, "min": None, "max": None, "median": None, "jitter": None, "samples": []}
    return {"n": len(xs), "min": round(min(xs), digits), "max": round(max(xs), digits),
            "median": round(statistics.median(xs), digits), "jitter": round(max(xs) - min(xs), digits),
            "samples": [round(x, digits) for x in xs]}


def delays(inputs: list[int], outputs: list[int]) -> list[int]:
    """The k-th output edge answers the k-th input edge (the guest answers
    every edge it saw once, in order, even when answers queue up behind the
    load); ps. TernError when the counts differ or an answer precedes its
    edge."""
    if len(inputs) != len(outputs):
        raise TernError(f"seed001 gpio: {len(inputs)} input edges but {len(outputs)} answers")
    out = [o - i for i, o in zip(inputs, outputs)]
    if any(d <= 0 for d in out):
        raise TernError("seed001 gpio: an answer before its input edge (pins out of order)")
    return out


def toggle_figures(t: Trace, board: Board) -> dict[str, Any]:
    """Cycles and µs of the three loops' edges (medians over the run)."""
    def cyc(xs: list[int]) -> list[float]:
        return [to_cycles(x, board) for x in xs]

    def edges(label: str) -> list[int]:
        first = t.rises[label][0] if t.rises[label] else 0  # not the level recorded at the start
        return sorted(x for x in t.rises[label] + t.falls[label] if x >= first)

    xor_edges = edges("xor")
    xor_half = cyc([b - a for a, b in zip(xor_edges, xor_edges[1:])])
    onoff = edges("onoff")  # rise, fall, rise, fall, ...
    on = cyc([onoff[i + 1] - onoff[i] for i in range(0, len(onoff) - 1, 2)])
    off = cyc([onoff[i + 1] - onoff[i] for i in range(1, len(onoff) - 1, 2)])
    msg_edges = edges("msg")
    msg_half = cyc([b - a for a, b in zip(msg_edges, msg_edges[1:])])
    us = 1e6 / board.cpu_hz
    doc: dict[str, Any] = {
        "xor_half_period_cycles": stats(xor_half),
        "on_cycles": stats(on), "off_cycles": stats(off),
        "msg_half_period_cycles": stats(msg_half),
    }
    for key in doc:
        if not doc[key]["n"]:
            raise TernError(f"seed001 gpio: no edges for {key} (console: {t.console.strip()[-200:]})")
        del doc[key]["samples"]  # hundreds of equal values: n, min, median and max say it all
    half = doc["xor_half_period_cycles"]["median"]
    doc["toggle_khz"] = round(board.cpu_hz / (2 * half) / 1000, 1)
    doc["on_us"] = round(doc["on_cycles"]["median"] * us, 3)
    doc["off_us"] = round(doc["off_cycles"]["median"] * us, 3)
    doc["onoff_khz"] = round(1e3 / (doc["on_us"] + doc["off_us"]), 1)  # equation 5.3
    doc["msg_toggle_khz"] = round(board.cpu_hz / (2 * doc["msg_half_period_cycles"]["median"]) / 1000, 2)
    return doc


def react_figures(t: Trace, board: Board, expected: int) -> dict[str, Any]:
    if len(t.rises["input"]) != expected:
        raise TernError(f"seed001 gpio: {expected} edges asked for, {len(t.rises['input'])} generated")
    ins = t.rises["input"]
    isr = [to_cycles(x, board) for x in delays(ins, t.rises["isr"])]
    task = [to_cycles(x, board) for x in delays(ins, t.rises["task"])]
    us = 1e6 / board.cpu_hz
    return {"edges": expected, "irq_cycles": stats(isr, 1), "io_cycles": stats(task, 1),
            "irq_us": stats([x * us for x in isr]), "io_us": stats([x * us for x in task])}


def power_mw(node: sim.NodeResult) -> dict[str, float]:
    s = node.end_ps / 1e12
    return {"total_mw": round(node.energy_total_mj / s, 3), "cpu_mw": round(node.energy_cpu_mj / s, 3),
            "radio_mw": round(node.energy_radio_mj / s, 3), "seconds": round(s, 4),
            "asleep_pct": round(100 * node.sleep_cycles / node.cycles, 2) if node.cycles else 0.0}


def best_of(table: Mapping[str, float], lower: bool) -> tuple[str, float]:
    name = (min if lower else max)(table, key=lambda s: table[s])
    return name, table[name]


def verdict(value: float, best: float, lower: bool) -> str:
    return "met" if (value < best if lower else value > best) else "missed"


# --------------------------------------------------------------------------- the runs


def image(board: Board, model: str, app: str, root: Path | None) -> Path:
    """Build only `app` of (board, model); its ELF."""
    elf = build.find_image(build.build(board.name, model, root, target=f"{app}.elf"), app)
    if elf is None:
        raise TernError(f"{app}.elf not found in the {board.name}/{model} build")
    return elf


def run_models(plan: Plan, work: Path, what: tuple[str, ...], root: Path | None,
               log: TextIO | None) -> dict[str, Any]:
    """Per model, the runs `what` needs: gpio (toggle loops, input to
    output asleep and loaded), irq (asleep and loaded), power (an edge a ms
    for power_edges ms)."""
    out: dict[str, Any] = {}
    board = plan.board
    load_cycles = int(LOAD_SHARE * board.cpu_hz * LOAD_PERIOD_US / 1e6)
    for model in plan.models:
        elf = image(board, model, APP, root)
        w = work / model
        e: dict[str, Any] = {}
        if "gpio" in what:
            tog = simulate(board, elf, w / "toggle", params_blob(MODE_TOGGLE, plan.toggles), 2.0, seed=plan.seed)
            e["toggle"] = toggle_figures(tog, board)
        if "gpio" in what or "irq" in what:
            idle = simulate(board, elf, w / "idle", params_blob(MODE_REACT, plan.edges),
                            0.05 + plan.edges * IDLE_PERIOD_US / 1e6,
                            {"kind": "periodic", "start_us": 10_000, "period_us": IDLE_PERIOD_US,
                             "width_us": WIDTH_US, "count": plan.edges}, plan.seed)
            loaded = simulate(board, elf, w / "loaded",
                              params_blob(MODE_REACT, plan.edges, LOAD_PERIOD_US, load_cycles),
                              0.05 + 3 * plan.edges / LOAD_RATE_HZ,
                              {"kind": "poisson", "start_us": 10_000, "rate_hz": LOAD_RATE_HZ,
                               "width_us": LOADED_WIDTH_US, "count": plan.edges}, plan.seed)
            e["idle"] = react_figures(idle, board, plan.edges)
            e["loaded"] = react_figures(loaded, board, plan.edges)
        if "power" in what:
            power = simulate(board, elf, w / "power", params_blob(MODE_REACT, plan.power_edges),
                             0.05 + plan.power_edges * IDLE_PERIOD_US / 1e6,
                             {"kind": "periodic", "start_us": 10_000, "period_us": IDLE_PERIOD_US,
                              "width_us": WIDTH_US, "count": plan.power_edges}, plan.seed)
            e["power_gpio"] = power_mw(power.node)
        out[model] = e
        if log:
            parts = []
            if "toggle" in e:
                parts.append(f"toggle {e['toggle']['toggle_khz']} kHz")
            if "idle" in e:
                parts.append(f"edge->handler {e['idle']['irq_cycles']['median']} cycles, edge->task "
                             f"{e['idle']['io_cycles']['median']} cycles (loaded max {e['loaded']['io_cycles']['max']})")
            if "power_gpio" in e:
                parts.append(f"GPIO app {e['power_gpio']['total_mw']} mW")
            log.write(f"  {model}: {', '.join(parts)}\n")
            log.flush()
    return out


def run_net_power(plan: Plan, work: Path, root: Path | None, log: TextIO | None) -> dict[str, Any]:
    """The network app's receiver (throughput experiment, 50-byte datagrams,
    lossless link) per model: its mean power over its lifetime."""
    out: dict[str, Any] = {}
    splan = seed001.Plan(board=plan.board, p=0.0, hops=(1,), seed=plan.seed)
    run = seed001.Run(size=50, mode=seed001.MODE_STREAM, hops=1, datagrams=plan.net_datagrams, period_ms=0,
                      signal_bytes=seed001.SIGNAL_BYTES[50], block=plan.net_datagrams, link_local=True)
    for model in plan.models:
        elf = image(plan.board, model, seed001.APP, root)
        try:
            o = seed001.simulate(splan, run, elf, work / model / "net")
        except TernError as e:  # recorded, not hidden: the thread models' stacks on a micaz
            out[model] = {"error": str(e).splitlines()[0][:300]}
            if log:
                log.write(f"  {model}: network app failed: {out[model]['error']}\n")
            continue
        nodes = {n.name: n for n in o.nodes}
        out[model] = {"receiver": power_mw(nodes["receiver"]), "sender": power_mw(nodes["sender"]),
                      "received": o.receiver["received"], "sent": o.sender["sent"]}
        if log:
            log.write(f"  {model}: network receiver {out[model]['receiver']['total_mw']} mW\n")
            log.flush()
    return out


def run_memory(plan: Plan, root: Path | None) -> dict[str, Any]:
    """text / data / bss of both apps per model on the MicaZ, and of the
    network app on micaz-1284p (1,000-byte datagrams)."""
    out: dict[str, Any] = {}
    for model in plan.models:
        row = {}
        for key, app in (("gpio", APP), ("net", seed001.APP)):
            fs = sizes.measure([image(plan.board, model, app, root)], plan.board)[0]
            row[key] = {"text": fs.text, "data": fs.data, "bss": fs.bss}
        out[model] = row
    return out


def run_bench(plan: Plan, work: Path, what: tuple[str, ...], root: Path | None = None,
              log: TextIO | None = None) -> dict[str, Any]:
    plan.check()
    doc: dict[str, Any] = {"board": plan.board.name, "cpu_hz": plan.board.cpu_hz, "models": list(plan.models),
                           "seed": plan.seed,
                           "setup": {"toggles": plan.toggles, "edges": plan.edges, "power_edges": plan.power_edges,
                                     "idle_period_us": IDLE_PERIOD_US, "load_rate_hz": LOAD_RATE_HZ,
                                     "load_period_us": LOAD_PERIOD_US, "load_share": LOAD_SHARE,
                                     "net_datagrams": plan.net_datagrams},
                           "thesis": {"gpio": THESIS_GPIO, "memory": THESIS_MEMORY, "power_mw": THESIS_POWER_MW}}
    unknown = [w for w in what if w not in EXPERIMENTS]
    if unknown:
        raise UsageError(f"unknown experiment(s) {', '.join(unknown)} (known: {', '.join(EXPERIMENTS)})")
    doc["experiments"] = list(what)
    if "gpio" in what or "irq" in what or "power" in what:
        doc["per_model"] = run_models(plan, work, what, root, log)
    if "memory" in what:
        doc["memory"] = run_memory(plan, root)
    if "power" in what:
        doc["net_power"] = run_net_power(plan, work, root, log)
    return doc


# --------------------------------------------------------------------------- report


def _f(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def gpio_table(doc: dict[str, Any]) -> list[str]:
    pm = doc["per_model"]
    models = list(pm)
    us = 1e6 / doc["cpu_hz"]
    out = [f"**GPIO** (thesis table 6.1; tern: {doc['board']} at {doc['cpu_hz'] / 1e6:g} MHz, simulated; "
           "cycles in brackets)\n",
           "| | " + " | ".join(SYSTEMS) + " | " + " | ".join(f"tern {m}" for m in models) + " | best of three | tern |",
           "|---|" + "---:|" * (len(SYSTEMS) + len(models)) + "---|---|"]

    def row(name: str, key: str, values: list[str], tern_best: float) -> str:
        lower = GPIO_LOWER_IS_BETTER[key]
        sysname, best = best_of(THESIS_GPIO[key], lower)
        unit = "kHz" if key == "toggle_khz" else "µs"
        th = [_f(THESIS_GPIO[key][s], 2) for s in SYSTEMS]
        return (f"| {name} | " + " | ".join(th) + " | " + " | ".join(values) +
                f" | {sysname} {_f(best)} {unit} | **{verdict(tern_best, best, lower)}** |")

    tog = [pm[m]["toggle"] for m in models]
    out.append(row("maximum toggle frequency [kHz] (`PORTC ^= bit`)", "toggle_khz",
                   [f"{t['toggle_khz']:,.1f} ({t['xor_half_period_cycles']['median']:g}/edge)" for t in tog],
                   min(t["toggle_khz"] for t in tog)))
    out.append(row("minimal on-time [µs]", "on_us",
                   [f"{t['on_us']:.3f} ({t['on_cycles']['median']:g})" for t in tog], max(t["on_us"] for t in tog)))
    out.append(row("minimal off-time [µs]", "off_us",
                   [f"{t['off_us']:.3f} ({t['off_cycles']['median']:g})" for t in tog], max(t["off_us"] for t in tog)))
    io = [pm[m]["idle"]["io_cycles"] for m in models]
    out.append(row("input to output delay [µs] (edge → task, CPU asleep; median)", "io_delay_us",
                   [f"{c['median'] * us:.2f} ({c['median']:g})" for c in io], max(c["median"] * us for c in io)))
    lio = [pm[m]["loaded"]["io_cycles"] for m in models]
    out.append(row("input to output delay [µs] (edge → task, 40 % load; median)", "io_delay_us",
                   [f"{c['median'] * us:.2f} ({c['median']:g})" for c in lio], max(c["median"] * us for c in lio)))
    out.append(row("input to output delay [µs] (edge → task, 40 % load; maximum)", "io_delay_us",
                   [f"{c['max'] * us:.2f} ({c['max']:g})" for c in lio], max(c["max"] * us for c in lio)))
    out.append("| toggle per kernel message [kHz] (one dispatch per edge; no thesis figure) | - | - | - | " +
               " | ".join(f"{t['msg_toggle_khz']:.2f} ({t['msg_half_period_cycles']['median']:g}/edge)" for t in tog)
               + " | | |")
    out.append("\nThe verdict column takes tern's worst model against the best of the three systems.\n")
    return out


def irq_table(doc: dict[str, Any]) -> list[str]:
    pm = doc["per_model"]
    us = 1e6 / doc["cpu_hz"]
    out = ["**Interrupt latency**: PE4's rising edge to the first statement of INT4's handler (PC1) and to the "
           "first statement of the task handling its message (PC2); cycles at "
           f"{doc['cpu_hz'] / 1e6:g} MHz (µs); jitter = maximum − minimum. The thesis has no such figure: "
           "its input-to-output delay (Zephyr 6.4 µs, RIOT 7.2 µs) includes it.\n",
           "| model | edge → handler, asleep: median | jitter | edge → handler, 40 % load: median | max | jitter | "
           "edge → task, asleep: median | jitter | edge → task, 40 % load: median | max | "
           "jitter |",
           "|---|" + "--:|" * 10]
    for m, e in pm.items():
        a, b, c, d = e["idle"]["irq_cycles"], e["loaded"]["irq_cycles"], e["idle"]["io_cycles"], e["loaded"]["io_cycles"]

        def cu(x: float) -> str:
            return f"{x:g} ({x * us:.2f} µs)"
        out.append(f"| {m} | {cu(a['median'])} | {a['jitter']:g} | {cu(b['median'])} | {cu(b['max'])} | "
                   f"{b['jitter']:g} | {cu(c['median'])} | {c['jitter']:g} | {cu(d['median'])} | "
                   f"{cu(d['max'])} | {d['jitter']:g} |")
    n = doc["setup"]["edges"]
    out.append(f"\nn = {n} edges per run: every ms with the CPU asleep; at Poisson times "
               f"({doc['setup']['load_rate_hz']} /s, at least {LOADED_WIDTH_US} µs apart: see below) while a "
               f"lower-priority task works {100 * doc['setup']['load_share']:.0f} % of every "
               f"{doc['setup']['load_period_us']} µs.\n")
    return out


def memory_table(doc: dict[str, Any]) -> list[str]:
    mem = doc["memory"]
    models = list(mem)
    out = [f"**Memory [bytes]** (thesis table 6.2; tern: `avr-size` of each ELF, {doc['board']})\n",
           "| app | section | " + " | ".join(SYSTEMS) + " | " + " | ".join(f"tern {m}" for m in models) + " |",
           "|---|---|" + "--:|" * (len(SYSTEMS) + len(models))]
    for app in ("gpio", "net"):
        for i, sec in enumerate(("text", "data", "bss")):
            label = {"text": ".text (ROM)", "data": ".data (RAM)", "bss": ".bss (RAM)"}[sec]
            out.append(f"| {APPS[app]} | {label} | " + " | ".join(f"{THESIS_MEMORY[app][s][i]:,}" for s in SYSTEMS) +
                       " | " + " | ".join(f"{mem[m][app][sec]:,}" for m in models) + " |")
        ram = [mem[m][app]["data"] + mem[m][app]["bss"] for m in models]
        rom = [mem[m][app]["text"] for m in models]
        th_ram = {s: THESIS_MEMORY[app][s][1] + THESIS_MEMORY[app][s][2] for s in SYSTEMS}
        th_rom = {s: THESIS_MEMORY[app][s][0] for s in SYSTEMS}
        rs, rb = best_of(th_rom, True)
        ms, mb = best_of(th_ram, True)
        out.append(f"\n{APPS[app]}: ROM tern {min(rom):,}–{max(rom):,} vs best {rs} {rb:,}: "
                   f"**{verdict(max(rom), rb, True)}**; RAM (data + bss) tern {min(ram):,}–{max(ram):,} vs best "
                   f"{ms} {mb:,}: **{verdict(max(ram), mb, True)}**\n")
    return out


def power_table(doc: dict[str, Any]) -> list[str]:
    pm, npw = doc["per_model"], doc["net_power"]
    models = list(pm)
    out = ["**Power [mW]** (thesis table 6.3, its shunt/amplifier/DSO row; tern: tern-sim's energy over the "
           "node's simulated lifetime at 3.0 V, ATmega128L and CC2420 datasheet currents)\n",
           "| app | " + " | ".join(SYSTEMS) + " | " + " | ".join(f"tern {m}" for m in models) + " | best of three | tern |",
           "|---|" + "--:|" * (len(SYSTEMS) + len(models)) + "---|---|"]
    gpio = [pm[m]["power_gpio"]["total_mw"] for m in models]
    net = [npw[m]["receiver"]["total_mw"] if "receiver" in npw[m] else None for m in models]
    for app, vals in (("gpio", gpio), ("net", net)):
        s, b = best_of(THESIS_POWER_MW[app], True)
        ran = [v for v in vals if v is not None]
        v = verdict(max(ran), b, True) if ran else "missed (no run)"
        out.append(f"| {APPS[app]} | " + " | ".join(f"{THESIS_POWER_MW[app][x]:.2f}" for x in SYSTEMS) + " | " +
                   " | ".join("does not run" if x is None else f"{x:.2f}" for x in vals) +
                   f" | {s} {b:.2f} | **{v}** |")

    def parts(e: dict[str, Any] | None) -> str:
        if e is None:
            return "-"
        return f"{e['cpu_mw']:.2f} / {e['radio_mw']:.3f} / {e['asleep_pct']:.1f}"
    out.append("\n| tern's parts: CPU mW / radio mW / CPU asleep % | " + " | ".join(models) + " |\n|---|" +
               "--:|" * len(models))
    out.append("| GPIO app | " + " | ".join(parts(pm[m]["power_gpio"]) for m in models) + " |")
    out.append("| networking receiver | " + " | ".join(parts(npw[m].get("receiver")) for m in models) + " |")
    for m in models:
        if "error" in npw[m]:
            out.append(f"\n{m}, networking: {npw[m]['error']}")
    return out + [""]


def markdown_tables(doc: dict[str, Any]) -> str:
    out: list[str] = []
    what = doc.get("experiments", [])
    if "gpio" in what:
        out += gpio_table(doc)
    if "irq" in what:
        out += irq_table(doc)
    if "memory" in what:
        out += memory_table(doc)
    if "power" in what:
        out += power_table(doc)
    return "\n".join(out) + "\n"


def write_plots(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    """Box plots per model: the interrupt latency and the input-to-output
    delay (asleep and loaded), the thesis's systems as lines where it has
    a figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    pm = doc.get("per_model")
    if not pm or not all("idle" in e for e in pm.values()):
        return []
    models = list(pm)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, title in ((axes[0], "irq_us", "edge → interrupt handler"),
                           (axes[1], "io_us", "edge → task (input to output)")):
        data, labels = [], []
        for m in models:
            for cond in ("idle", "loaded"):
                data.append(pm[m][cond][key]["samples"])
                labels.append(f"{m}\n{'asleep' if cond == 'idle' else 'load'}")
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=7)
        ax.set_ylabel("µs (simulated)")
        ax.set_title(title, fontsize=9)
        if key == "io_us":
            for s, style in (("Zephyr", "--"), ("RIOT", ":")):
                ax.axhline(THESIS_GPIO["io_delay_us"][s], color="grey", linestyle=style, linewidth=0.8,
                           label=f"{s} (thesis) {THESIS_GPIO['io_delay_us'][s]} µs")
            ax.legend(fontsize=7)
    fig.suptitle(f"seed 001 on tern ({doc['board']}): interrupt latency and input-to-output delay per model "
                 "(Contiki's 92 ms off the scale)", fontsize=9)
    fig.tight_layout()
    path = out_dir / "seed001-irq.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]
