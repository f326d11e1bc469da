"""`tern bench comos ssl`: seed 002's SSL + FBD application (apps/sslfbd,
docs/comos.md), its input signals, and evaluations 1, 2 and 5 of issue 12."""
from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import math
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from terntools import avrprofile, build, comos, sim
from terntools.errors import TernError
from terntools.paths import repo_root
from terntools.scenario import Scenario, load_scenario

# --------------------------------------------------------------------------- signals
#
# apps/sslfbd's inputs, played into the simulated ADCs (docs/tern-sim.md,
# [[adc]]): one 10-bit code a conversion. A microphone converts only while a
# round's block fills, so each file is a sequence of 512-sample blocks, one
# per round; the temperature is converted once per FBD period. The files in
# docs/sim/signals/ are this generator's output (tools/tests/test_comos.py
# checks it); everything is derived from fixed seeds: no randomness at run time.

SSL_N = 512
SSL_FS = 8000.0
SOUND_M_S = 343.0
HALF_SIDE_M = 0.05
MICS = ((1, 1), (-1, 1), (-1, -1), (1, -1))  # x, y in half sides: apps/sslfbd/ssl_dsp.c
NOISE_ROUNDS = 4  # then VOICE_ROUNDS with a source at SOURCE_DEG
VOICE_ROUNDS = 4
SOURCE_DEG = 60
NOISE_CODES = 8.0  # white noise on every microphone, RMS
VOICE_CODES = 60.0  # the source, RMS at each microphone
VOICE_PARTIALS = 40  # sinusoids between 300 Hz and 2.5 kHz
# FBD: 25 degC = code 51 (10 mV/degC, 5 V reference); a one-sample spike
# (must not alert), then a fire (must), then back to normal (re-arms).
TEMPERATURE = [51, 52, 51, 50, 66, 51, 52, 61, 71, 81, 91, 101, 111, 121, 121, 121, 121] + [51] * 11
FBD_LEARN = 4
FBD_RISE = 10


def mic_signals() -> list[list[int]]:
    """Four channels: NOISE_ROUNDS blocks of noise, then VOICE_ROUNDS blocks of a
    source at SOURCE_DEG (far field, each microphone delayed exactly)."""
    rng = random.Random(2)
    partials = [(rng.uniform(300.0, 2500.0), rng.uniform(0.0, 2 * math.pi)) for _ in range(VOICE_PARTIALS)]
    amp = VOICE_CODES * math.sqrt(2.0 / VOICE_PARTIALS)
    th = math.radians(SOURCE_DEG)
    # arrival delay at microphone m, in samples: earlier where it faces the source
    tau = [-(x * HALF_SIDE_M * math.cos(th) + y * HALF_SIDE_M * math.sin(th)) / SOUND_M_S * SSL_FS for x, y in MICS]
    out: list[list[int]] = [[] for _ in MICS]
    for r in range(NOISE_ROUNDS + VOICE_ROUNDS):
        for m in range(len(MICS)):
            for n in range(SSL_N):
                v = 512.0 + rng.gauss(0.0, NOISE_CODES)
                if r >= NOISE_ROUNDS:
                    t = (r * SSL_N + n - tau[m]) / SSL_FS
                    v += sum(amp * math.cos(2 * math.pi * f * t + ph) for f, ph in partials)
                out[m].append(min(1023, max(0, round(v))))
    return out


def expected_alerts(samples: int) -> list[int]:
    """The temperature samples (0, 1, ...) at which apps/sslfbd's Alert fires
    over `samples` samples of the looping TEMPERATURE: its integer EWMA and
    detector, step for step (ssl_dsp.c: fbd_ewma, fbd_alert)."""
    ewma, base, fire, alerts = 0, 0, False, []
    for seq in range(samples):
        x = TEMPERATURE[seq % len(TEMPERATURE)] << 4
        ewma = x if seq == 0 else ewma + ((x - ewma) >> 2)
        if seq + 1 < FBD_LEARN:
            continue
        if seq + 1 == FBD_LEARN:
            base = ewma
            continue
        rise = ewma - base
        if not fire and rise > FBD_RISE * 16:
            fire = True
            alerts.append(seq)
        elif fire and rise < FBD_RISE * 8:
            fire = False
    return alerts


def signal_files() -> dict[str, str]:
    """File name -> text, as in docs/sim/signals/."""
    files = {}
    for m, codes in enumerate(mic_signals()):
        head = (f"# apps/sslfbd microphone {m}: {NOISE_ROUNDS} blocks of noise, then {VOICE_ROUNDS} of a "
                f"source at {SOURCE_DEG} deg; 512 samples a block (tools/terntools/comos_ssl.py)\n")
        files[f"mic{m}.txt"] = head + "\n".join(str(c) for c in codes) + "\n"
    files["temp.txt"] = ("# apps/sslfbd temperature at 4 Hz, codes (25 degC = 51): a spike, a fire, normal again "
                         "(tools/terntools/comos_ssl.py)\n" + "\n".join(str(c) for c in TEMPERATURE) + "\n")
    return files


def write_signals(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in signal_files().items():
        (directory / name).write_text(text)


# --------------------------------------------------------------------------- the bench

# Seed 002's figures (MSP430F1611 at 6 MHz; ms): Table II (one module, the
# highlighted subset of Fig. 4) and Table V (five modules).
SEED_TABLE_II = {"sound": (253.0, 250.6, 0.94), "noise": (287.0, 284.6, 0.84)}
SEED_TABLE_V = {"sound": (392.0, 389.6, 0.616), "noise": (287.0, 284.6, 0.836)}
# Fig. 6 (us, without event logging), as the text gives them.
SEED_FIG6 = {"fft": 80.96, "timer": 127.8, "sc2_mcast": 625.7, "context_switch": 65.32}
SEED_FBD_MS = 10.0  # "always less than 10 ms"

PS_PER_US = 1_000_000
# Fig. 6's message kinds: (send pin label, receive pin label, what it is)
KINDS = {
    "fft": ("fft_s", "fft_r", "Mic -> FFT: a local message (1 KB heap block, ownership travels); on one module it waits for the other channels' FFTs"),
    "vote": ("vote_s", "vote_r", "SC -> Vote: remote on five modules; on one, the cyclic path (SC is on the stack)"),
    "sc2": ("sc2_s", "sc2_r", "Vote -> SC (SC2): the multicast, latency to each member"),
    "ht": ("ht_s", "ht_r", "SC -> HT: a 52-byte chunk of bins"),
    "alert": ("alert_s", "alert_r", "Alert -> Radio: priority 7, remote on five modules"),
}
BUS_ADDRESS = {"m0": 0, "s1": 1, "s2": 2, "s3": 3, "s4": 4}
MATCH_PS = 400_000 * PS_PER_US  # no message waits longer than most of a round
GROUP_PS = 2 * PS_PER_US  # a receiver's pulses (sender's module + 1) come a few cycles apart


def build_standalone(root: Path, out: Path) -> dict[str, Path]:
    """apps/sslfbd/standalone.c for the module types: ATmega128 (sensing),
    ATmega1284P (computational; and the one-module build). -Os as tern's;
    each source its own object (KEY/<source>.o) and a link map beside the
    ELF, so the profile can name the source of every address."""
    out.mkdir(parents=True, exist_ok=True)
    src = root / "apps" / "sslfbd"
    elves = {}
    for key, mcu, f_cpu, modules in (("m128", "atmega128", 7372800, 5), ("m1284", "atmega1284p", 20000000, 5),
                                     ("one", "atmega1284p", 20000000, 1)):
        flags = [f"-mmcu={mcu}", f"-DF_CPU={f_cpu}UL", "-Os", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                 "-ffunction-sections", "-DSSL_STANDALONE", f"-DSSL_MODULES={modules}", f"-I{src}",
                 f"-I{root / 'arch' / 'avr'}", f"-I{root / 'tools' / 'simavr'}"]  # fmt: skip
        (out / key).mkdir(exist_ok=True)
        objects = []
        for c in ("standalone.c", "ssl_dsp.c", "ssl_sampler.c"):
            obj = out / key / f"{c}.o"
            build.avr_gcc([*flags, "-c", "-o", str(obj), str(src / c)], f"apps/sslfbd/{c} ({mcu})")
            objects.append(str(obj))
        elf = out / f"standalone_{key}.elf"
        build.avr_gcc([f"-mmcu={mcu}", "-Wl,--gc-sections", "-o", str(elf), f"-Wl,-Map={elf.with_suffix('.map')}",
                       *objects, "-lm"], f"apps/sslfbd/standalone.c ({mcu})")
        elves[key] = elf
    return elves


# The execution models the overhead is measured under, per module count. The
# thread models run one module only: 18 threads' stacks do not fit a sensing
# module's ATmega128 (its link overflows RAM by 506 bytes, 4 KB), so
# apps/sslfbd builds for the run-to-completion models alone.
SSL_MODELS = {1: ("stack", "fifo", "threads", "adaptive"), 5: ("stack", "fifo")}


def ssl_only_images(root: Path, model: str, modules: int) -> dict[str, Path]:
    """apps/sslfbd built without FBD (SSL_FBD=0: Temp never starts its
    timer), as seed 002 measured its overhead: "only the SSL portion"."""
    out = {}
    targets = ((("m128", "module-m128", "sslfbd", "sslfbd_ssl"), ("m1284", "module-m1284", "sslfbd", "sslfbd_ssl"))
               if modules > 1 else (("one", "module-m1284", "sslfbd1", "sslfbd1_ssl"),))
    for key, board, app, target in targets:
        d = build.build(board, model, root, target=f"{target}.elf")
        out[key] = d / "apps" / app / f"{target}.elf"
    return out


def run_name(model: str) -> str:
    """The run of SSL alone under a model: "ssl" (stack), "ssl_fifo", ..."""
    return "ssl" if model == "stack" else f"ssl_{model}"


def model_of(run: str) -> str:
    return "stack" if run == "ssl" else run.removeprefix("ssl_")


def scenario_of(root: Path, modules: int, seconds: float, images: dict[str, Path] | None) -> Scenario:
    """docs/sim/sslfbd{1,5}.toml for `seconds`, every node running images[its
    module type] instead of its app when images are given."""
    s = load_scenario(root / "docs" / "sim" / f"sslfbd{modules}.toml", root=root).with_overrides(duration_s=seconds)
    if images is None:
        return s
    nodes = []
    for n in s.nodes:
        key = "one" if modules == 1 else ("m1284" if n.board.mcu == "atmega1284p" else "m128")
        nodes.append(dataclasses.replace(n, app=None, image=images[key]))
    return dataclasses.replace(s, nodes=tuple(nodes))


def edges_of(events: Path) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """(node, label) -> [(t_ps, value)] in time order."""
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    with events.open() as f:
        for line in f:
            e = json.loads(line)
            if e.get("event") == "pin":
                out.setdefault((str(e["node"]), str(e["label"])), []).append((int(e["t_ps"]), int(e["value"])))
    return out


def rises(edges: dict[tuple[str, str], list[tuple[int, int]]], node: str, label: str) -> list[int]:
    return [t for t, v in edges.get((node, label), []) if v == 1]


def falls(edges: dict[tuple[str, str], list[tuple[int, int]]], node: str, label: str) -> list[int]:
    return [t for t, v in edges.get((node, label), []) if v == 0]


def intervals(edges: dict[tuple[str, str], list[tuple[int, int]]], node: str, label: str) -> list[tuple[int, int]]:
    """[rise, fall) of a pin."""
    out, start = [], None
    for t, v in edges.get((node, label), []):
        if v == 1 and start is None:
            start = t
        elif v == 0 and start is not None:
            out.append((start, t))
            start = None
    return out


def round_latencies(edges: dict[tuple[str, str], list[tuple[int, int]]], ch0: str, ht_node: str,
                    fbd_node: str | None) -> list[dict[str, Any]]:
    """Each round: from PA0's rise (the timer interrupt, channel 0's module) to
    HT's pulse (a sound round) or to PA0's fall (noise: SC 0 has updated its
    noise). Rounds during which FBD's chain ran are marked (seed 002 measured
    SSL alone)."""
    starts = rises(edges, ch0, "round")
    ends = falls(edges, ch0, "round")
    hts = rises(edges, ht_node, "ht")
    fbd = intervals(edges, fbd_node, "fbd") if fbd_node else []
    rounds = []
    for i, t0 in enumerate(starts):
        t_next = starts[i + 1] if i + 1 < len(starts) else None
        fall = next((t for t in ends if t > t0), None)
        ht = next((t for t in hts if t > t0 and (t_next is None or t < t_next)), None)
        if fall is None or (t_next is not None and fall > t_next):
            continue  # unfinished at the end of the run
        kind = "sound" if ht is not None else "noise"
        end = ht if ht is not None else fall
        rounds.append({"round": i, "kind": kind, "latency_ms": (end - t0) / 1e9, "t0_ps": t0, "end_ps": end,
                       "fbd_overlap": any(a < end and b > t0 for a, b in fbd)})
    return rounds


def message_latencies(edges: dict[tuple[str, str], list[tuple[int, int]]], nodes: Sequence[str],
                      modules: int) -> dict[str, list[float]]:
    """Fig. 6: each probed message from its send pin's rise to its receiver's
    pulse group; the group's size names the sender's module, and each
    (sender, receiver) pair is FIFO."""
    node_of = {0: "m0"} if modules == 1 else {a: n for n, a in BUS_ADDRESS.items()}
    out: dict[str, list[float]] = {}
    for kind, (s_label, r_label, _) in KINDS.items():
        sends = {n: rises(edges, n, s_label) for n in nodes}
        used: dict[tuple[str, str], int] = {}
        lat = []
        for rx in nodes:
            groups: list[tuple[int, int]] = []  # (first rise, pulses)
            last = -GROUP_PS - 1
            for t in rises(edges, rx, r_label):
                if groups and t - last <= GROUP_PS and kind != "alert":
                    groups[-1] = (groups[-1][0], groups[-1][1] + 1)
                else:
                    groups.append((t, 1))
                last = t
            for t, pulses in groups:
                if kind == "alert":  # one pulse: Alert runs on the temperature module
                    tx = "m0" if modules == 1 else "s2"
                else:
                    tx = node_of.get(pulses - 1, "?")
                k = used.get((tx, rx), 0)
                candidates = sends.get(tx, [])
                while k < len(candidates) and t - candidates[k] > MATCH_PS:
                    k += 1  # a send whose receive was not seen (the run's end, a pulse group misread)
                if k < len(candidates) and candidates[k] <= t:
                    lat.append((t - candidates[k]) / PS_PER_US)
                    used[(tx, rx)] = k + 1
        out[kind] = lat
    return out


def fbd_chain(edges: dict[tuple[str, str], list[tuple[int, int]]], node: str) -> list[dict[str, Any]]:
    """Evaluation 5: each temperature sample from PA3's rise (the sample is
    in) to its fall (Alert is done), and whether an FFT was running on that
    module meanwhile (PA2)."""
    ffts = intervals(edges, node, "fft")
    return [{"ms": (b - a) / 1e9, "during_fft": any(fa < b and fb > a for fa, fb in ffts)}
            for a, b in intervals(edges, node, "fbd")]


def summary_line(console: str) -> dict[str, int]:
    for line in console.splitlines():
        if " summary " in line:
            out = {}
            for item in line.split():
                k, eq, v = item.partition("=")
                if eq and v.isdigit():
                    out[k] = int(v)
            return out
    return {}


def stats_of(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    v = sorted(values)
    return {"n": len(v), "min": v[0], "median": statistics.median(v), "mean": statistics.fmean(v),
            "p99": v[min(len(v) - 1, math.ceil(0.99 * len(v)) - 1)], "max": v[-1]}


def run_one(root: Path, work: Path, name: str, modules: int, seconds: float, images: dict[str, Path] | None,
            log: Any) -> dict[str, Any]:
    """One run: "tern" (the app), "ssl[_model]" (tern, SSL only) or "standalone"."""
    out = work / f"{name}{modules}"
    print(f"tern bench comos ssl: {name}{modules}: {seconds:g} s simulated", file=log)
    result = sim.run(scenario_of(root, modules, seconds, images), out, root=root, log=log)
    if result.crashed:
        raise TernError(f"{name}{modules}: crashed: {', '.join(n.name for n in result.crashed)}")
    edges = edges_of(out / "events.jsonl")
    ch0, ht_node, fbd_node = ("m0", "m0", "m0") if modules == 1 else ("s1", "m0", "s2")
    doc: dict[str, Any] = {"run": f"{name}{modules}",
                           "rounds": round_latencies(edges, ch0, ht_node, fbd_node if name == "tern" else None)}
    if name != "standalone":
        nodes = ["m0"] if modules == 1 else list(BUS_ADDRESS)
        consoles = {n: (out / "console" / f"{n}.txt").read_text() for n in nodes}
        doc["counters"] = {n: summary_line(c) for n, c in consoles.items()}
        bad = [n for n, c in consoles.items() if any(line.endswith(": bad") for line in c.splitlines())]
        if bad:
            raise TernError(f"{name}{modules}: a module reported a failed check: {', '.join(bad)}")
    if name == "tern":
        doc["messages_us"] = message_latencies(edges, nodes, modules)
        doc["fbd"] = fbd_chain(edges, fbd_node)
    return doc


# --------------------------------------------------------------------------- where the overhead goes
#
# The measured rounds are profiled again (the runs are deterministic): tern-sim
# counts each node's cycles only inside the rounds' windows [timer interrupt,
# result) (--profile-windows), so a window's cycles are exactly its latency in
# that node's cycles; they are grouped by the source file the link map puts
# each address in. The standalone build has no sleep: its waiting is the
# polling in main, so its main loop row holds that idle time too (IDLE_ROW).

# The standalone waits by polling in main, which also runs its control flow:
# tern's idle loop and its task handlers (the same control) share the row.
IDLE_ROW = "idle and control: tern's sleep, idle loop and task handlers; the standalone's main loop, polling included"
PROFILE_GROUPS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    # (row, sources (fnmatch), functions (fnmatch; empty: any)); first match wins
    (IDLE_ROW, ("arch/avr/avr_board.c", "arch/avr/port_avr.c"), ("sleep_now", "board_sleep", "port_idle")),
    (IDLE_ROW, ("kernel/idle.c", "kernel/power.c", "*sslfbd.c", "*standalone.c*"), ()),
    ("DSP: FFT, SC, HT and their arithmetic", ("*ssl_dsp.c*", "libm.a(*", "libgcc.a(*"), ()),
    ("sampler ISRs (ssl_sampler.c, vector table)", ("*ssl_sampler.c*",), ()),
    ("sampler ISRs (ssl_sampler.c, vector table)", ("*",), ("?0x*",)),
    ("kernel: post (msg.c)", ("kernel/msg.c",), ()),
    ("kernel: dispatch (sched.c, policy)", ("kernel/sched*.c", "kernel/policy_*.c", "kernel/thread*.c"), ()),
    ("kernel: heap (heap.c, slab.c)", ("kernel/heap.c", "kernel/slab.c"), ()),
    ("kernel: clock, timers, clock ISRs", ("kernel/timer.c", "kernel/clock.c"), ()),
    ("kernel: clock, timers, clock ISRs", ("arch/avr/avr_board.c",), ("__vector_*", "port_counter_*", "port_timer_*")),
    ("bus driver and remote (procbus, remote.c)", ("*procbus*.c", "kernel/remote.c"), ()),
    ("time sync (gtime.c, procbus_sync.c)", ("kernel/gtime.c",), ()),
    ("kernel: trace (trace.c)", ("kernel/trace.c",), ()),
    ("port: interrupts, context (arch/avr)", ("arch/*",), ()),
    ("other kernel", ("kernel/*",), ()),
    ("other", ("*",), ()),
)
PROFILE_ROWS = tuple(dict.fromkeys(g[0] for g in PROFILE_GROUPS))
KERNEL_ROWS = tuple(r for r in PROFILE_ROWS if not r.startswith(("idle", "DSP", "sampler", "other")))


def profile_group(source: str, function: str) -> str:
    for row, sources, functions in PROFILE_GROUPS:
        if any(fnmatch.fnmatchcase(source, p) for p in sources) and (
                not functions or any(fnmatch.fnmatchcase(function, p) for p in functions)):
            return row
    return "other"


def profile_rounds(root: Path, work: Path, name: str, modules: int, seconds: float, images: dict[str, Path],
                   rounds: Sequence[dict[str, Any]], kind: str, log: Any) -> dict[str, Any]:
    """Run `name` again with tern-sim counting only the cycles inside its
    measured rounds of `kind` (after round 0) on every node: per node, the
    cycles a round spends in each PROFILE_ROWS row and in its top functions."""
    chosen = [r for r in rounds if r["kind"] == kind and r["round"] > 0]
    if not chosen:
        return {"rounds": 0, "nodes": {}}
    scen = scenario_of(root, modules, seconds, images)
    out = work / f"profile_{name}{modules}_{kind}"
    out.mkdir(parents=True, exist_ok=True)
    windows = out / "windows.txt"
    windows.write_text("".join(f"{n.name} {r['t0_ps']} {r['end_ps']}\n" for n in scen.nodes for r in chosen))
    print(f"tern bench comos ssl: {name}{modules}: profile of {len(chosen)} {kind} rounds", file=log)
    result = sim.run(scen, out, root=root, log=log, profile_windows=windows)
    if result.crashed:
        raise TernError(f"{name}{modules} (profile): crashed: {', '.join(n.name for n in result.crashed)}")
    nodes = {}
    for n in scen.nodes:
        assert n.image is not None
        by_fn = avrprofile.profile_by_source(n.image, out / "profile" / f"{n.name}.txt")
        rows: dict[str, float] = dict.fromkeys(PROFILE_ROWS, 0.0)
        for (source, function), cycles in by_fn.items():
            row = profile_group(source, function)
            rows[row] = rows.get(row, 0.0) + cycles / len(chosen)
        top = [{"source": src, "function": fn, "cycles": c / len(chosen), "row": profile_group(src, fn)}
               for (src, fn), c in by_fn.most_common(60)]
        nodes[n.name] = {"rows": rows, "total": sum(rows.values()), "top": top, "hz": n.board.cpu_hz}
    return {"rounds": len(chosen), "nodes": nodes}


def messages_per_round(counters: dict[str, int]) -> float | None:
    """Messages the node's kernel dispatched per round started (its summary)."""
    d, r = counters.get("kernel_dispatched"), counters.get("rounds")
    return d / r if d is not None and r else None


def overhead(tern: dict[str, Any], alone: dict[str, Any]) -> dict[str, Any]:
    """Per kind of round: mean latency with tern (SSL only) and without, and
    the overhead. Round 0 is left out of both: tern's start-up (HT computes
    its steering table at INIT) falls into it."""
    out: dict[str, dict[str, Any]] = {}
    for kind in ("sound", "noise"):
        t = [r["latency_ms"] for r in tern["rounds"] if r["kind"] == kind and r["round"] > 0]
        a = [r["latency_ms"] for r in alone["rounds"] if r["kind"] == kind and r["round"] > 0]
        if not t or not a:
            out[kind] = {"tern_ms": None, "standalone_ms": None, "overhead_pct": None}
            continue
        tm, am = statistics.fmean(t), statistics.fmean(a)
        out[kind] = {"tern_ms": tm, "standalone_ms": am, "overhead_pct": 100 * (tm - am) / am,
                     "tern_rounds": len(t), "standalone_rounds": len(a),
                     "tern_spread_ms": max(t) - min(t), "standalone_spread_ms": max(a) - min(a)}
    return out


def run_bench(seconds: float, work: Path, root: Path | None = None, log: Any = sys.stderr) -> dict[str, Any]:
    root = root or repo_root()
    alone = build_standalone(root, work / "standalone")
    images: dict[str, dict[str, Path] | None] = {f"standalone{m}": alone for m in (1, 5)}
    images |= {f"{run_name(model)}{m}": ssl_only_images(root, model, m) for m in (1, 5) for model in SSL_MODELS[m]}
    names = {m: ["tern", *(run_name(model) for model in SSL_MODELS[m]), "standalone"] for m in (1, 5)}
    runs = {f"{k}{m}": run_one(root, work, k, m, seconds, images.get(f"{k}{m}"), log) for m in (1, 5) for k in names[m]}
    profiles = {str(m): {kind: {k: profile_rounds(root, work, k, m, seconds, images[f"{k}{m}"] or {},
                                                  runs[f"{k}{m}"]["rounds"], kind, log)
                                for k in names[m] if k != "tern"}
                         for kind in ("sound", "noise")} for m in (1, 5)}
    doc: dict[str, Any] = {
        "experiment": "ssl", "seconds": seconds,
        "command": f"./tern bench comos ssl --seconds {seconds:g}",
        "units": "latencies in simulated ms (rounds, FBD) and us (messages) of tern-sim",
        "overhead": {"1": overhead(runs["ssl1"], runs["standalone1"]),
                     "5": overhead(runs["ssl5"], runs["standalone5"])},
        "overhead_by_model": {str(m): {model: overhead(runs[f"{run_name(model)}{m}"], runs[f"standalone{m}"])
                                       for model in SSL_MODELS[m]} for m in (1, 5)},
        "with_fbd": {m: {kind: stats_of([r["latency_ms"] for r in runs[f"tern{m}"]["rounds"] if r["kind"] == kind])
                         for kind in ("sound", "noise")} for m in ("1", "5")},
        "messages_us": {m: {k: stats_of(v) for k, v in runs[f"tern{m}"]["messages_us"].items()} for m in ("1", "5")},
        "fbd_ms": {m: {"all": stats_of([x["ms"] for x in runs[f"tern{m}"]["fbd"]]),
                       "during_fft": stats_of([x["ms"] for x in runs[f"tern{m}"]["fbd"] if x["during_fft"]])}
                   for m in ("1", "5")},
        "timer_us": {m: {k: v for k, v in c.items() if k.startswith("timer_")}
                     for m in ("1", "5") for c in [runs[f"tern{m}"]["counters"]["m0" if m == "1" else "s2"]]},
        "profile": profiles,
        "messages_per_round": {m: {n: messages_per_round(c) for n, c in runs[f"ssl{m}"]["counters"].items()}
                               for m in ("1", "5")},
        "runs": runs,
        "seed002": {"table_ii": SEED_TABLE_II, "table_v": SEED_TABLE_V, "fig6_us": SEED_FIG6, "fbd_ms": SEED_FBD_MS},
    }
    return doc


def _f(x: Any, fmt: str = ".3f") -> str:
    return "–" if x is None else format(x, fmt)


def markdown(doc: dict[str, Any]) -> str:
    lines = [f"```sh\n{doc['command']}\n```\n", f"Units: {doc['units']}.\n",
             "### Evaluation 2: SSL latency, tern against the standalone build (seed 002 Tables II and V)\n",
             "| modules | round | tern [ms] | standalone [ms] | overhead | rounds (tern / standalone) | seed 002 CoMOS / standalone [ms] | seed 002 overhead |",
             "|--:|---|--:|--:|--:|--:|--:|--:|"]
    for m, seed in (("1", SEED_TABLE_II), ("5", SEED_TABLE_V)):
        for kind in ("sound", "noise"):
            o = doc["overhead"][m][kind]
            sc, ss, so = seed[kind]
            lines.append(f"| {m} | {kind} | {_f(o['tern_ms'])} | {_f(o['standalone_ms'])} | {_f(o['overhead_pct'], '.3f')} % "
                         f"| {o.get('tern_rounds', 0)} / {o.get('standalone_rounds', 0)} | {sc} / {ss} | {so} % |")
    lines += ["", "By execution model (the same image source; stack above):\n",
              "| modules | model | sound: tern [ms] | overhead | noise: tern [ms] | overhead |", "|--:|---|--:|--:|--:|--:|"]
    for m, by_model in doc["overhead_by_model"].items():
        for model, o in by_model.items():
            lines.append(f"| {m} | {model} | {_f(o['sound']['tern_ms'])} | {_f(o['sound']['overhead_pct'])} % "
                         f"| {_f(o['noise']['tern_ms'])} | {_f(o['noise']['overhead_pct'])} % |")
    lines += ["", "### Where the overhead goes: cycles inside the measured rounds, by source (tern-sim "
              "--profile-windows)\n", profile_markdown(doc)]
    lines += ["", "### Fig. 6: latency of one message by destination (tern, simulated us)\n",
              "| message | modules | n | min | median | mean | max |", "|---|--:|--:|--:|--:|--:|--:|"]
    for kind, (_, _, what) in KINDS.items():
        for m in ("1", "5"):
            s = doc["messages_us"][m][kind]
            if s["n"]:
                lines.append(f"| {kind}: {what} | {m} | {s['n']} | {s['min']:.1f} | {s['median']:.1f} | {s['mean']:.1f} | {s['max']:.1f} |")
    for m in ("1", "5"):
        t = doc["timer_us"][m]
        if t:
            lines.append(f"| timer: the delta timer's TIMEOUT to Temp, deadline to handler | {m} | {t.get('timer_n')} "
                         f"| {t.get('timer_min_us')} | – | {t.get('timer_mean_us')} | {t.get('timer_max_us')} |")
    lines += ["", f"Seed 002 Fig. 6 (us, no logging): FFT {SEED_FIG6['fft']}, Timer {SEED_FIG6['timer']}, "
              f"SC2 (Mcast) {SEED_FIG6['sc2_mcast']}; a context switch {SEED_FIG6['context_switch']}.", "",
              "### Evaluation 5: FBD's chain (temperature sample in -> Alert done) (simulated ms)\n",
              "| modules | samples | n | min | median | p99 | max | under 10 ms |", "|--:|---|--:|--:|--:|--:|--:|---|"]
    for m in ("1", "5"):
        for which in ("all", "during_fft"):
            s = doc["fbd_ms"][m][which]
            if s["n"]:
                lines.append(f"| {m} | {which.replace('_', ' ')} | {s['n']} | {s['min']:.3f} | {s['median']:.3f} | "
                             f"{s['p99']:.3f} | {s['max']:.3f} | {'yes' if s['max'] < SEED_FBD_MS else 'NO'} |")
    return "\n".join(lines) + "\n"


PROFILE_NODES = {"1": ("m0",), "5": ("s1", "m0")}  # s2..s4 are s1's like (JSON: every node)


def profile_markdown(doc: dict[str, Any]) -> str:
    """Evaluation 2's breakdown: cycles per round by row, the standalone
    build against tern (SSL only) under each model, per node and kind of round."""
    lines = []
    for m, nodes in PROFILE_NODES.items():
        for kind in ("sound", "noise"):
            p = doc["profile"][m][kind]
            a = p["standalone"]
            runs = [k for k in p if k != "standalone" and p[k]["rounds"]]
            if not a["rounds"] or not runs:
                continue
            for n in nodes:
                lines += [f"\n{m} module{'s' if m != '1' else ''}, {kind} rounds, node {n} (cycles per round at "
                          f"{a['nodes'][n]['hz'] / 1e6:g} MHz; rounds: standalone {a['rounds']}, "
                          + ", ".join(f"{model_of(k)} {p[k]['rounds']}" for k in runs) + "; in brackets: minus the standalone)\n",
                          "| row | standalone |" + "".join(f" tern, {model_of(k)} |" for k in runs), "|---|--:|" + "--:|" * len(runs)]
                for row in PROFILE_ROWS + ("total (the round's latency)",):
                    def val(run: dict[str, Any]) -> float:
                        node = run["nodes"][n]
                        return float(node["total"] if row.startswith("total") else node["rows"].get(row, 0.0))
                    av = val(a)
                    cells = [(val(p[k]), val(p[k]) - av) for k in runs]
                    if av or any(c[0] for c in cells):
                        lines.append(f"| {row} | {av:,.0f} |" + "".join(f" {v:,.0f} ({d:+,.0f}) |" for v, d in cells))
                mpr = doc["messages_per_round"][m].get(n)
                if mpr:
                    per = [f"{model_of(k)}: {sum(p[k]['nodes'][n]['rows'].get(r, 0.0) for r in KERNEL_ROWS) / mpr:,.0f}"
                           for k in runs]
                    lines.append(f"\nKernel rows (from post to port) per message, {mpr:.1f} messages a round "
                                 "(the summary's kernel_dispatched / rounds, stack model, all rounds): "
                                 + "; ".join(per) + " cycles.")
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    kinds = list(KINDS)
    for i, m in enumerate(("1", "5")):
        means = [doc["messages_us"][m][k].get("mean", 0.0) for k in kinds]
        a.bar([x + 0.4 * i for x in range(len(kinds))], means, width=0.4, label=f"{m} module{'s' if m == '5' else ''}")
    a.set_xticks([x + 0.2 for x in range(len(kinds))], kinds)
    a.set_ylabel("mean latency [us, simulated]")
    a.set_yscale("log")
    a.set_title("one message, by destination (cf. seed 002 Fig. 6)", fontsize=10)
    a.legend()
    for m in ("1", "5"):
        v = sorted(x["ms"] for x in doc["runs"][f"tern{m}"]["fbd"])
        if v:
            b.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post", label=f"{m} module{'s' if m == '5' else ''}")
    b.axvline(SEED_FBD_MS, color="red", linestyle=":", label="seed 002: < 10 ms")
    b.set_xscale("log")
    b.set_xlabel("FBD chain: sample in -> Alert done [ms, simulated]")
    b.set_ylabel("fraction of samples")
    b.set_title("responsiveness while SSL runs (evaluation 5)", fontsize=10)
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ssl_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seconds", type=float, default=12.0,
                   help="simulated seconds per run, four runs (default %(default)s: 22 rounds, 47 FBD samples)")


@comos.experiment("ssl", help="evaluations 1, 2 and 5: the SSL + FBD application on one and five modules",
                  description="Run apps/sslfbd (seed 002 Fig. 4) on one module and on five (Fig. 8) and the "
                  "standalone build of the same processing (apps/sslfbd/standalone.c): the messaging overhead "
                  "(Tables II, V), one message's latency by destination (Fig. 6), FBD's alert chain while the FFT "
                  "runs (section VI-F). JSON, markdown and a PNG in --out.",
                  add_arguments=_ssl_arguments)
def run_ssl(args: argparse.Namespace) -> int:
    if args.seconds < 5:
        raise TernError("--seconds: at least 5 (8 rounds of 512 ms and the end)")
    doc = run_bench(args.seconds, args.work)
    text = markdown(doc)
    sys.stdout.write(text)
    comos.write_outputs(doc, args.out, text)
    plot(doc, args.out / "ssl.png")
    return 0
