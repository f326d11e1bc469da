"""`tern bench comos ssl`: seed 002's SSL + FBD application (apps/sslfbd,
docs/comos.md), its input signals, and evaluations 1, 2 and 5 of issue 12."""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from terntools import build, comos, sim
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
    ATmega1284P (computational; and the one-module build). -Os as tern's."""
    out.mkdir(parents=True, exist_ok=True)
    src = root / "apps" / "sslfbd"
    elves = {}
    for key, mcu, f_cpu, modules in (("m128", "atmega128", 7372800, 5), ("m1284", "atmega1284p", 20000000, 5),
                                     ("one", "atmega1284p", 20000000, 1)):
        elf = out / f"standalone_{key}.elf"
        build.avr_gcc([f"-mmcu={mcu}", f"-DF_CPU={f_cpu}UL", "-Os", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                       "-DSSL_STANDALONE", f"-DSSL_MODULES={modules}", f"-I{src}", f"-I{root / 'arch' / 'avr'}",
                       f"-I{root / 'tools' / 'simavr'}", "-o", str(elf),
                       str(src / "standalone.c"), str(src / "ssl_dsp.c"), str(src / "ssl_sampler.c"), "-lm"],
                      f"apps/sslfbd/standalone.c ({mcu})")  # fmt: skip
        elves[key] = elf
    return elves


def ssl_only_images(root: Path) -> dict[str, Path]:
    """apps/sslfbd built without FBD (SSL_FBD=0: Temp never starts its
    timer), as seed 002 measured its overhead: "only the SSL portion"."""
    out = {}
    for key, board, app, target in (("m128", "module-m128", "sslfbd", "sslfbd_ssl"),
                                    ("m1284", "module-m1284", "sslfbd", "sslfbd_ssl"),
                                    ("one", "module-m1284", "sslfbd1", "sslfbd1_ssl")):
        d = build.build(board, "stack", root, target=f"{target}.elf")
        out[key] = d / "apps" / app / f"{target}.elf"
    return out


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
        rounds.append({"round": i, "kind": kind, "latency_ms": (end - t0) / 1e9,
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
    """One run: "tern" (the app), "ssl" (tern, SSL only) or "standalone"."""
    out = work / f"{name}{modules}"
    print(f"tern bench comos ssl: {name}{modules}: {seconds:g} s simulated", file=log)
    result = sim.run(scenario_of(root, modules, seconds, images), out, root=root, log=log)
    if result.crashed:
        raise TernError(f"{name}{modules}: crashed: {', '.join(n.name for n in result.crashed)}")
    edges = edges_of(out / "events.jsonl")
    ch0, ht_node, fbd_node = ("m0", "m0", "m0") if modules == 1 else ("s1", "m0", "s2")
    doc: dict[str, Any] = {"run": f"{name}{modules}",
                           "rounds": round_latencies(edges, ch0, ht_node, fbd_node if name == "tern" else None)}
    if name == "tern":
        nodes = ["m0"] if modules == 1 else list(BUS_ADDRESS)
        consoles = {n: (out / "console" / f"{n}.txt").read_text() for n in nodes}
        doc["messages_us"] = message_latencies(edges, nodes, modules)
        doc["fbd"] = fbd_chain(edges, fbd_node)
        doc["counters"] = {n: summary_line(c) for n, c in consoles.items()}
        bad = [n for n, c in consoles.items() if any(line.endswith(": bad") for line in c.splitlines())]
        if bad:
            raise TernError(f"{name}{modules}: a module reported a failed check: {', '.join(bad)}")
    return doc


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
    images = {"standalone": build_standalone(root, work / "standalone"), "ssl": ssl_only_images(root)}
    runs = {f"{k}{m}": run_one(root, work, k, m, seconds, images.get(k), log)
            for m in (1, 5) for k in ("tern", "ssl", "standalone")}
    doc: dict[str, Any] = {
        "experiment": "ssl", "seconds": seconds,
        "command": f"./tern bench comos ssl --seconds {seconds:g}",
        "units": "latencies in simulated ms (rounds, FBD) and us (messages) of tern-sim",
        "overhead": {"1": overhead(runs["ssl1"], runs["standalone1"]),
                     "5": overhead(runs["ssl5"], runs["standalone5"])},
        "with_fbd": {m: {kind: stats_of([r["latency_ms"] for r in runs[f"tern{m}"]["rounds"] if r["kind"] == kind])
                         for kind in ("sound", "noise")} for m in ("1", "5")},
        "messages_us": {m: {k: stats_of(v) for k, v in runs[f"tern{m}"]["messages_us"].items()} for m in ("1", "5")},
        "fbd_ms": {m: {"all": stats_of([x["ms"] for x in runs[f"tern{m}"]["fbd"]]),
                       "during_fft": stats_of([x["ms"] for x in runs[f"tern{m}"]["fbd"] if x["during_fft"]])}
                   for m in ("1", "5")},
        "timer_us": {m: {k: v for k, v in c.items() if k.startswith("timer_")}
                     for m in ("1", "5") for c in [runs[f"tern{m}"]["counters"]["m0" if m == "1" else "s2"]]},
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
