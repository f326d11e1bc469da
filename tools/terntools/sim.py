"""`tern sim`: build a scenario's images, write tern-sim's config, run it, read its summary.

The config and output formats are docs/tern-sim.md's. This module only
drives the simulator: every figure in the summary is tern-sim's own. Kernel
trace lines ("T <hex>") in a node's console are decoded with terntools.trace
into out/trace/<node>.jsonl, one event per line as `tern run --trace-out`
writes them.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

from terntools import build, executor, trace
from terntools.errors import TernError, UsageError
from terntools.paths import repo_root, sim_binary
from terntools.scenario import SEED_LIMIT, Node, Scenario

CONFIG_NAME = "tern-sim.conf"
STATUSES = ("running", "exit", "crash", "halt")

# tern-sim's exit codes besides 0 (docs/tern-sim.md)
SIM_CODES: dict[int, str] = {
    100: "tern-sim refused the config or its command line",
    101: "tern-sim could not load an image",
    105: "tern-sim reached its wall-time limit",
    106: "tern-sim could not create or set up a TUN interface",
}


# --------------------------------------------------------------------------- the config


def _num(value: float | int) -> str:
    """A number for the config: integral values without a fraction, never an exponent."""
    if isinstance(value, int) or (value == int(value) and abs(value) < 1e15):
        return str(int(value))
    return format(Decimal(repr(float(value))), "f")


def _value(value: str | Path) -> str:
    text = str(value)
    if not text or any(ch.isspace() for ch in text) or "#" in text:
        raise UsageError(f"{text!r} cannot go into tern-sim's config (values hold no blanks and no '#')")
    return text


def node_image(node: Node, images: Mapping[str, Path]) -> Path:
    """The ELF of a node: images[name] for an app node (built), its own image otherwise."""
    if node.name in images:
        return images[node.name]
    if node.image is not None:
        return node.image
    raise UsageError(f"node {node.name}: app {node.app} has no built image")


def config_text(scenario: Scenario, out_dir: Path, images: Mapping[str, Path], *,
                max_wall_s: float | None = None) -> str:  # fmt: skip
    """The text of tern-sim's config for scenario, writing its outputs into out_dir."""
    s, m = scenario.sim, scenario.medium
    lines = [f"# tern-sim config written by tern sim from {scenario.origin}"]
    sim = f"sim seed={s.seed} duration_us={s.duration_us} out={_value(out_dir)} threads={s.threads}"
    if max_wall_s is not None:
        sim += f" max_wall_s={_num(max_wall_s)}"
    lines.append(sim)
    if m.model == "udgm":
        lines.append(f"medium model=udgm tx_range_m={_num(m.tx_range_m)} int_range_m={_num(m.interference_range_m)} "
                     f"success_tx={_num(m.success_tx)} success_rx={_num(m.success_rx)} "
                     f"capture_db={_num(m.capture_threshold_db)} channel={s.channel}")  # fmt: skip
    else:
        lines.append(f"medium model=table capture_db={_num(m.capture_threshold_db)} channel={s.channel}")
    for bus in scenario.buses:
        lines.append(f"bus name={bus.name} throughput_bps={bus.throughput_bps} slot_us={_num(bus.slot_us)} "
                     f"latency_us={_num(bus.latency_us)} rx_frames={bus.rx_frames}")  # fmt: skip
    for node in scenario.nodes:
        x, y, z = node.position
        on_bus = f" bus={node.bus} bus_irq={node.bus_irq}" if node.bus else ""
        lines.append(f"node name={node.name} elf={_value(node_image(node, images))} "
                     f"mcu={node.board.mcu or 'atmega128'} freq_hz={node.board.cpu_hz} ppm={_num(node.ppm)} "
                     f"x={_num(x)} y={_num(y)} z={_num(z)} radio={node.board.radio or 'none'}{on_bus}"
                     + (f" halt_us={_num(node.halt_s * 1e6)}" if node.halt_s is not None else ""))  # fmt: skip
    for node in scenario.nodes:
        if node.tun is not None:
            lines.append(f"tun node={node.name} name={node.tun.name} host={node.tun.host} route={node.tun.route}")
    for link in scenario.links:
        lines.append(f"link from={link.src} to={link.dst} prr={_num(link.prr)} rssi_dbm={_num(link.rssi_dbm)}")
    for pin in scenario.pins:
        lines.append(f"pin node={pin.node} port={pin.port} bit={pin.bit} label={pin.label}")
    for st in scenario.stimuli:
        timing = f"period_us={_num(st.period_us)}" if st.kind == "periodic" else f"rate_hz={_num(st.rate_hz)}"
        lines.append(f"stimulus node={st.node} pin={st.port}{st.bit} kind={st.kind} start_us={_num(st.start_us)} "
                     f"{timing} width_us={_num(st.width_us)} count={st.count}")
    for adc in scenario.adcs:
        lines.append(f"adc node={adc.node} channel={adc.channel} file={_value(adc.file)}")
    for inj in scenario.injects:
        extra = "" if inj.phr is None else f" phr={inj.phr}"
        extra += "" if inj.stop_after is None else f" stop_after={inj.stop_after}"
        lines.append(f"inject node={inj.node} at_us={_num(inj.at_us)} psdu={inj.psdu.hex()} fcs={inj.fcs}{extra}")
    return "\n".join(lines) + "\n"


def write_config(scenario: Scenario, out_dir: Path, images: Mapping[str, Path], *,
                 max_wall_s: float | None = None) -> Path:  # fmt: skip
    """Write out_dir/tern-sim.conf (absolute paths inside); its path."""
    out_dir = out_dir.resolve()
    text = config_text(scenario, out_dir, {k: v.resolve() for k, v in images.items()}, max_wall_s=max_wall_s)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / CONFIG_NAME
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write into {out_dir}: {exc.strerror}") from None
    return path


# --------------------------------------------------------------------------- images


def _built_image(board: str, model: str, app: str, root: Path) -> Path:
    """The ELF of an earlier build (--no-build), where build.app_image would leave it."""
    out = build.build_dir(board, model, root)
    elf = build.find_image(out, app)
    if elf is not None:
        return elf
    raise UsageError(f"no built image of app {app} in {out} (run without --no-build)")


def build_images(scenario: Scenario, *, do_build: bool = True, root: Path | None = None) -> dict[str, Path]:
    """Node name -> ELF for every app node; each (board, model, app) built once."""
    root = root or repo_root()
    done: dict[tuple[str, str, str], Path] = {}
    images: dict[str, Path] = {}
    for node in scenario.nodes:
        if node.app is None:
            continue
        key = (node.board.name, node.model, node.app)
        if key not in done:
            done[key] = (build.app_image(*key, root=root) if do_build else _built_image(*key, root))
        images[node.name] = done[key]
    return images


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class NodeResult:
    """One node's figures from summary.json (times in ps, energy in mJ)."""

    name: str
    status: str  # running, exit, crash
    exit_status: int | None
    end_ps: int
    cycles: int
    sleep_cycles: int
    frames_sent: int
    frames_received: int
    frames_bad_fcs: int
    frames_collided: int
    frames_lost: int
    radio_off_ps: int
    radio_idle_ps: int
    radio_rx_ps: int
    radio_tx_ps: int
    energy_cpu_mj: float
    energy_radio_mj: float
    energy_total_mj: float
    crash: str | None = None  # reason and pc of the crash event, when there was one
    has_radio: bool = True
    bus_frames_sent: int | None = None  # None: not on a processor bus
    bus_frames_received: int | None = None

    @property
    def radio_on_ms(self) -> float:
        return (self.radio_idle_ps + self.radio_rx_ps + self.radio_tx_ps) / 1e9

    @property
    def asleep_percent(self) -> float:
        return 100.0 * self.sleep_cycles / self.cycles if self.cycles else 0.0

    @property
    def status_text(self) -> str:
        if self.status == "exit":
            return f"exit {self.exit_status}"
        return self.status


@dataclass(frozen=True)
class SimResult:
    out_dir: Path
    config: Path
    seed: int
    duration_ps: int
    threads: int
    nodes: tuple[NodeResult, ...]
    wall_s: float = 0.0
    traces: tuple[tuple[str, Path], ...] = ()  # (node, out/trace/<node>.jsonl) for nodes that traced
    notes: tuple[str, ...] = ()
    end_ps: int | None = None  # where the run ended: before duration_ps when stopped (a TUN run's Ctrl-C)

    @property
    def crashed(self) -> list[NodeResult]:
        return [n for n in self.nodes if n.status == "crash"]


def _get(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj:
        raise TernError(f"{where}: key {key!r} is missing")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, kind if kind is not float else (int, float)):
        raise TernError(f"{where}: key {key!r} must be {kind.__name__}, not {value!r}")
    return value


def _node_result(obj: Any, where: str) -> NodeResult:
    if not isinstance(obj, dict):
        raise TernError(f"{where}: not an object")
    status = _get(obj, "status", str, where)
    if status not in STATUSES:
        raise TernError(f"{where}: status must be one of {', '.join(STATUSES)}, not {status!r}")
    exit_status = obj.get("exit_status")
    if exit_status is not None and (isinstance(exit_status, bool) or not isinstance(exit_status, int)):
        raise TernError(f"{where}: key 'exit_status' must be int or null, not {exit_status!r}")
    # a node without a radio has no radio keys, one off a bus no "bus"
    has_radio = "radio_ps" in obj
    radio = _get(obj, "radio_ps", dict, where) if has_radio else {}

    def frames(key: str) -> int:
        return int(_get(obj, key, int, where)) if has_radio else 0

    def radio_time(key: str) -> int:
        return int(_get(radio, key, int, f"{where} radio_ps")) if has_radio else 0

    bus = _get(obj, "bus", dict, where) if "bus" in obj else None
    energy = _get(obj, "energy_mj", dict, where)
    return NodeResult(
        name=_get(obj, "name", str, where),
        status=status,
        exit_status=exit_status if status == "exit" else None,
        end_ps=_get(obj, "end_ps", int, where),
        cycles=_get(obj, "cycles", int, where),
        sleep_cycles=_get(obj, "sleep_cycles", int, where),
        frames_sent=frames("frames_sent"),
        frames_received=frames("frames_received"),
        frames_bad_fcs=frames("frames_bad_fcs"),
        frames_collided=frames("frames_collided"),
        frames_lost=frames("frames_lost"),
        radio_off_ps=radio_time("off"),
        radio_idle_ps=radio_time("idle"),
        radio_rx_ps=radio_time("rx"),
        radio_tx_ps=radio_time("tx"),
        energy_cpu_mj=float(_get(energy, "cpu", float, f"{where} energy_mj")),
        energy_radio_mj=float(_get(energy, "radio", float, f"{where} energy_mj")),
        energy_total_mj=float(_get(energy, "total", float, f"{where} energy_mj")),
        crash=_crash_text(obj["crash"], obj.get("crash_pc")) if status == "crash" and obj.get("crash") else None,
        has_radio=has_radio,
        bus_frames_sent=_get(bus, "frames_sent", int, f"{where} bus") if bus is not None else None,
        bus_frames_received=_get(bus, "frames_received", int, f"{where} bus") if bus is not None else None,
    )


def load_summary(path: Path, out_dir: Path | None = None, config: Path | None = None, threads: int = 1) -> SimResult:
    """summary.json of a tern-sim run, checked and typed.

    Keys beyond docs/tern-sim.md's are ignored; threads, when the file does
    not say, is the number the run was given.
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TernError(f"tern-sim wrote no {path}") from None
    except OSError as exc:
        raise TernError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise TernError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    where = str(path)
    if not isinstance(doc, dict):
        raise TernError(f"{where}: not a JSON object")
    nodes = _get(doc, "nodes", list, where)
    out_dir = out_dir or path.parent
    return SimResult(
        out_dir=out_dir,
        config=config or out_dir / CONFIG_NAME,
        seed=_get(doc, "seed", int, where),
        duration_ps=_get(doc, "duration_ps", int, where),
        end_ps=_get(doc, "end_ps", int, where) if "end_ps" in doc else None,
        threads=_get(doc, "threads", int, where) if "threads" in doc else threads,
        nodes=tuple(_node_result(n, f"{where}: nodes[{i}]") for i, n in enumerate(nodes)),
    )


def _crash_text(reason: Any, pc: Any) -> str:
    """"reason at pc 0x1f2", without the pc when the reason already names it."""
    text = str(reason) if reason else "crash"
    if isinstance(pc, int) and not isinstance(pc, bool) and not re.search(r"\bpc\b", text, re.IGNORECASE):
        text += f" at pc {pc:#x}"
    return text


def crash_reasons(events_path: Path) -> dict[str, str]:
    """node -> "reason at pc 0x..." of the first crash event in events.jsonl."""
    found: dict[str, str] = {}
    try:
        with events_path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"crash"' not in line:
                    continue
                try:
                    ev = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(ev, dict) and ev.get("event") == "crash" and str(ev.get("node")) not in found:
                    found[str(ev.get("node"))] = _crash_text(ev.get("reason"), ev.get("pc"))
    except OSError:
        pass
    return found


def decode_traces(out_dir: Path, names: list[str]) -> tuple[list[tuple[str, Path]], list[str]]:
    """Decode the trace lines of console/<node>.txt into trace/<node>.jsonl.

    Only nodes whose console holds trace lines get a file. A line that cannot
    be decoded is skipped and counted in a note.
    """
    written: list[tuple[str, Path]] = []
    notes: list[str] = []
    for name in names:
        console = out_dir / "console" / f"{name}.txt"
        try:
            text = console.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        decoder = trace.StreamDecoder()
        rows: list[str] = []
        bad = 0
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.rstrip("\r")
            if not trace.is_trace_line(line):
                continue
            try:
                events = decoder.decode_line(line[2:], where=f"{console}:{number}")
            except trace.TraceError:
                bad += 1
                continue
            rows.extend(json.dumps(ev.to_json()) for ev in events)
        if bad:
            notes.append(f"node {name}: {bad} trace lines of {console} could not be decoded")
        path = out_dir / "trace" / f"{name}.jsonl"
        path.unlink(missing_ok=True)  # from an earlier run into the same directory
        if rows:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(rows) + "\n", encoding="utf-8")
            written.append((name, path))
    return written, notes


# --------------------------------------------------------------------------- running


def run(
    scenario: Scenario,
    out_dir: Path,
    *,
    do_build: bool = True,
    root: Path | None = None,
    binary: Path | None = None,
    max_wall_s: float | None = None,
    log: TextIO | None = None,
    profile: bool = False,
    profile_windows: Path | None = None,
) -> SimResult:
    """Build the images, write the config, run tern-sim, decode traces, read the summary.

    tern-sim's stderr goes to ours as it comes; its stdout, if any, to log.
    With profile, tern-sim also writes out_dir/profile/<node>.txt (cycles by
    instruction address, for `tern profile ELF --profile FILE`); with
    profile_windows (lines "NODE FROM_PS TO_PS") only the cycles inside them.
    """
    root = root or repo_root()
    binary = binary or sim_binary(root)
    if not binary.is_file():
        raise TernError(f"{binary} is not built (run: make -C tools/simavr)")
    images = build_images(scenario, do_build=do_build, root=root)
    out_dir = out_dir.resolve()
    for stale in ("summary.json", "events.jsonl"):
        (out_dir / stale).unlink(missing_ok=True)
    config = write_config(scenario, out_dir, images, max_wall_s=max_wall_s)
    started = time.monotonic()
    # With a TUN the run ends at Ctrl-C: tern-sim gets it too and finishes
    # its outputs, so Python waits for it instead of killing it.
    tun = any(n.tun is not None for n in scenario.nodes)
    previous = signal.signal(signal.SIGINT, lambda _sig, _frame: None) if tun else None
    try:
        flags = ["--profile"] if profile else []
        flags += ["--profile-windows", str(profile_windows.resolve())] if profile_windows else []
        proc = subprocess.run([str(binary), *flags, str(config)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    except OSError as exc:
        raise TernError(f"cannot run {binary}: {exc.strerror}") from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    wall = time.monotonic() - started
    if proc.stdout and log is not None:
        log.write(proc.stdout.decode("utf-8", "replace"))
        log.flush()
    if proc.returncode < 0:
        raise TernError(f"tern-sim was killed by {signal.Signals(-proc.returncode).name} (config {config})")
    if proc.returncode != 0:
        what = SIM_CODES.get(proc.returncode, "tern-sim failed")
        raise TernError(f"{what} (status {proc.returncode}, config {config})")
    result = load_summary(out_dir / "summary.json", out_dir, config, threads=scenario.sim.threads)
    expected = [n.name for n in scenario.nodes]
    if [n.name for n in result.nodes] != expected:
        raise TernError(f"{out_dir / 'summary.json'}: nodes {[n.name for n in result.nodes]}, "
                        f"the scenario has {expected}")  # fmt: skip
    unexplained = [n for n in result.crashed if n.crash is None]
    reasons = crash_reasons(out_dir / "events.jsonl") if unexplained else {}
    nodes = tuple(replace(n, crash=reasons.get(n.name)) if n in unexplained else n for n in result.nodes)
    traces, notes = decode_traces(out_dir, expected)
    return SimResult(out_dir=out_dir, config=config, seed=result.seed, duration_ps=result.duration_ps,
                     end_ps=result.end_ps,
                     threads=result.threads, nodes=nodes, wall_s=wall, traces=tuple(traces),
                     notes=tuple(notes))  # fmt: skip


def format_summary(result: SimResult) -> str:
    """One row per node: frames, radio-on time, bus frames (if any node is on a bus), CPU asleep,
    energy, status; "-" where a node has no radio or no bus."""
    width = max([4] + [len(n.name) for n in result.nodes])
    buses = any(n.bus_frames_sent is not None for n in result.nodes)
    head = (f"{'node':{width}} {'sent':>6} {'recv':>6} {'badFCS':>6} {'collid':>6} {'lost':>6} "
            f"{'radio on[ms]':>12}" + (f" {'bus tx':>6} {'bus rx':>6}" if buses else "") +
            f" {'asleep[%]':>9} {'energy[mJ]':>10}  status")  # fmt: skip
    rows = [head]
    for n in result.nodes:
        status = n.status_text + (f" ({n.crash})" if n.crash else "")
        radio = [n.frames_sent, n.frames_received, n.frames_bad_fcs, n.frames_collided, n.frames_lost]
        cells = [f"{v:>6}" if n.has_radio else f"{'-':>6}" for v in radio]
        cells.append(f"{n.radio_on_ms:>12.3f}" if n.has_radio else f"{'-':>12}")
        if buses:
            cells += [f"{v:>6}" if v is not None else f"{'-':>6}" for v in (n.bus_frames_sent, n.bus_frames_received)]
        rows.append(f"{n.name:{width}} " + " ".join(cells) +
                    f" {n.asleep_percent:>9.2f} {n.energy_total_mj:>10.3f}  {status}")  # fmt: skip
    seconds = (result.end_ps if result.end_ps is not None else result.duration_ps) / 1e12
    rows.append(f"{len(result.nodes)} nodes, {seconds:g} s simulated in {result.wall_s:.2f} s, seed {result.seed}, "
                f"{result.threads} thread{'s' if result.threads != 1 else ''}; outputs in {result.out_dir}")  # fmt: skip
    return "\n".join(rows) + "\n"


# --------------------------------------------------------------------------- several seeds


def parse_seeds(text: str) -> list[int]:
    """"1-8", "3,7,11" or a mix ("1-3,10"): the seeds in the order written, each once."""
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        lo, dash, hi = part.partition("-")
        try:
            span = range(int(lo), int(hi) + 1) if dash else range(int(lo), int(lo) + 1)
        except ValueError:
            raise UsageError(f"--seeds: expected seeds like 1-8 or 3,7,11, not {text!r}") from None
        if not span or span.start < 0 or span.stop - 1 >= SEED_LIMIT:
            raise UsageError(f"--seeds: {part!r} is not a range of seeds from 0 to 2^64-1")
        seeds += [s for s in span if s not in seeds]
    if not seeds:
        raise UsageError("--seeds: no seed given")
    return seeds


def seed_row(result: SimResult) -> dict[str, Any]:
    """One run of a seed sweep as plain data: frames by fate over all nodes, who crashed, how each ended."""
    radio = [n for n in result.nodes if n.has_radio]
    return {
        "seed": result.seed,
        "frames_sent": sum(n.frames_sent for n in radio),
        "frames_received": sum(n.frames_received for n in radio),
        "frames_bad_fcs": sum(n.frames_bad_fcs for n in radio),
        "frames_collided": sum(n.frames_collided for n in radio),
        "frames_lost": sum(n.frames_lost for n in radio),
        "energy_mj": round(sum(n.energy_total_mj for n in result.nodes), 6),
        "status": {n.name: n.status_text for n in result.nodes},
        "crashed": [n.name for n in result.crashed],
    }


@dataclass(frozen=True)
class SeedJob:
    scenario: Scenario
    out_dir: Path
    root: Path


def run_seed_job(job: SeedJob) -> dict[str, Any]:
    """A sweep job (picklable, for Dask): one seed, images already built."""
    return seed_row(run(job.scenario, job.out_dir, do_build=False, root=job.root))


def run_seeds(scenario: Scenario, out_dir: Path, seeds: Sequence[int], *, workers: int = 1,
              scheduler: str | None = None, root: Path | None = None,
              on_done: Callable[[int, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The scenario once per seed, each in out_dir/seed-N, on executor.map_jobs; the rows in seed order."""
    root = root or repo_root()
    build_images(scenario, root=root)  # once, here: the runs only read the images
    jobs = [SeedJob(scenario.with_overrides(seed=s), (out_dir / f"seed-{s}").resolve(), root) for s in seeds]
    rows = executor.map_jobs(run_seed_job, jobs, workers=workers, scheduler=scheduler, on_done=on_done)
    return {"scenario": scenario.origin, "duration_s": scenario.sim.duration_s, "seeds": list(seeds), "runs": rows}


def seeds_table(doc: Mapping[str, Any]) -> str:
    rows = [f"{'seed':>6} {'sent':>7} {'recv':>7} {'badFCS':>7} {'collid':>7} {'lost':>7} {'energy[mJ]':>11}  crashed"]
    for r in doc["runs"]:
        rows.append(f"{r['seed']:>6} {r['frames_sent']:>7} {r['frames_received']:>7} {r['frames_bad_fcs']:>7} "
                    f"{r['frames_collided']:>7} {r['frames_lost']:>7} {r['energy_mj']:>11.3f}  "
                    f"{', '.join(r['crashed']) or '-'}")  # fmt: skip
    return "\n".join(rows) + "\n"
