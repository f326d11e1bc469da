"""`tern trace export --format perfetto` (terntools.perfetto): Chrome
trace-event JSON checked against the format's rules, on made-up inputs, on
a real kernel trace of bench/seed000 (seed000_trace.elf under hybrid, so
context switches show) and on a real tern-sim run of docs/sim/ping.toml."""
from __future__ import annotations

import io
import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, require_tool, run_checked

from terntools import build, perfetto, sim
from terntools.boards import load_board
from terntools.cli import main
from terntools.runner import run_image
from terntools.scenario import load_scenario
from terntools.trace import Event, EventType, encode_events

# --------------------------------------------------------------------------- the format's rules

# Chrome trace-event format ("Trace Event Format", the document chrome://tracing and Perfetto follow):
# keys every event of a phase must carry, beyond "ph".
REQUIRED: dict[str, tuple[str, ...]] = {
    "X": ("name", "pid", "tid", "ts", "dur"),  # complete event
    "B": ("name", "pid", "tid", "ts"),  # duration begin
    "E": ("pid", "tid", "ts"),  # duration end
    "i": ("name", "pid", "tid", "ts"),  # instant
    "s": ("name", "cat", "pid", "tid", "ts", "id"),  # flow start
    "f": ("name", "cat", "pid", "tid", "ts", "id"),  # flow end
    "C": ("name", "pid", "ts", "args"),  # counter
    "M": ("name", "pid", "args"),  # metadata
}
METADATA_NAMES = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_trace_events(doc: Any) -> list[str]:
    """Every way `doc` breaks the trace-event format's rules; empty when it follows them."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["not an object with a traceEvents list"]
    problems: list[str] = []
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        problems.append(f"displayTimeUnit {doc['displayTimeUnit']!r} is not ms or ns")
    flows: dict[tuple[str, Any], list[tuple[str, float]]] = defaultdict(list)
    open_b: Counter[tuple[int, int]] = Counter()
    for n, ev in enumerate(doc["traceEvents"]):
        where = f"event {n} ({ev.get('ph') if isinstance(ev, dict) else type(ev).__name__})"
        if not isinstance(ev, dict):
            problems.append(f"{where}: not an object")
            continue
        ph = ev.get("ph")
        if ph not in REQUIRED:
            problems.append(f"{where}: phase {ph!r} is not one of {''.join(REQUIRED)}")
            continue
        problems += [f"{where}: missing {k!r}" for k in REQUIRED[ph] if k not in ev]
        if any(k not in ev for k in REQUIRED[ph]):
            continue
        if not _is_int(ev["pid"]) or ("tid" in ev and not _is_int(ev["tid"])):
            problems.append(f"{where}: pid and tid must be integers")
        if "ts" in ev and (not _is_num(ev["ts"]) or ev["ts"] < 0):
            problems.append(f"{where}: ts {ev['ts']!r} is not a non-negative number of µs")
        if "name" in ev and not isinstance(ev["name"], str):
            problems.append(f"{where}: name is not a string")
        if "args" in ev and not isinstance(ev["args"], dict):
            problems.append(f"{where}: args is not an object")
        if ph == "X" and (not _is_num(ev["dur"]) or ev["dur"] < 0):
            problems.append(f"{where}: dur {ev['dur']!r} is not a non-negative number")
        elif ph == "i" and ev.get("s", "t") not in ("g", "p", "t"):
            problems.append(f"{where}: instant scope {ev.get('s')!r} is not g, p or t")
        elif ph == "C" and not all(_is_num(v) for v in ev["args"].values()):
            problems.append(f"{where}: counter values must be numbers")
        elif ph == "M":
            if ev["name"] not in METADATA_NAMES:
                problems.append(f"{where}: metadata name {ev['name']!r} unknown")
            elif ev["name"].startswith("thread") and "tid" not in ev:
                problems.append(f"{where}: thread metadata without tid")
        elif ph in ("s", "f"):
            flows[(ev["cat"], ev["id"])].append((ph, ev["ts"]))
            if ph == "f" and ev.get("bp", "e") not in ("e", "n"):
                problems.append(f"{where}: flow binding point {ev.get('bp')!r}")
        elif ph == "B":
            open_b[(ev["pid"], ev["tid"])] += 1
        elif ph == "E":
            open_b[(ev["pid"], ev["tid"])] -= 1
            if open_b[(ev["pid"], ev["tid"])] < 0:
                problems.append(f"{where}: E without B on pid {ev['pid']} tid {ev['tid']}")
    for (cat, fid), ends in flows.items():
        kinds = sorted(k for k, _ in ends)
        if kinds != ["f", "s"]:
            problems.append(f"flow {cat}/{fid}: phases {kinds}, expected one s and one f")
        elif dict(ends)["f"] < dict(ends)["s"]:
            problems.append(f"flow {cat}/{fid}: ends before it starts")
    problems += [f"pid {p} tid {t}: {c} B without E" for (p, t), c in open_b.items() if c > 0]
    return problems


def _of(doc: dict[str, Any], ph: str, **match: Any) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e["ph"] == ph and all(e.get(k) == v for k, v in match.items())]


def _track_names(doc: dict[str, Any], pid: int = 1) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in _of(doc, "M", name="thread_name", pid=pid)}


def test_the_checker_catches_broken_documents() -> None:
    good = {"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]}
    assert check_trace_events(good) == []
    assert check_trace_events({"events": []}) == ["not an object with a traceEvents list"]
    bad = {"traceEvents": [
        {"ph": "X", "name": "a", "pid": "1", "tid": 1, "ts": 0, "dur": 1},
        {"ph": "i", "name": "b", "pid": 1, "tid": 1},
        {"ph": "s", "name": "m", "cat": "c", "pid": 1, "tid": 1, "ts": 5, "id": 1},
        {"ph": "f", "name": "m", "cat": "c", "pid": 1, "tid": 1, "ts": 4, "id": 1},
        {"ph": "s", "name": "m", "cat": "c", "pid": 1, "tid": 1, "ts": 5, "id": 2},
        {"ph": "Q", "pid": 1},
        {"ph": "C", "name": "c", "pid": 1, "ts": 1, "args": {"value": "high"}},
        {"ph": "B", "name": "b", "pid": 1, "tid": 2, "ts": 1},
    ]}  # fmt: skip
    assert check_trace_events(bad) == [
        "event 0 (X): pid and tid must be integers",
        "event 1 (i): missing 'ts'",
        "event 5 (Q): phase 'Q' is not one of XBEisfCM",
        "event 6 (C): counter values must be numbers",
        "flow c/1: ends before it starts",
        "flow c/2: phases ['s'], expected one s and one f",
        "pid 1 tid 2: 1 B without E",
    ]


# --------------------------------------------------------------------------- made-up inputs

H, E, P = EventType.HANDLER_START, EventType.HANDLER_END, EventType.POST
KERNEL = [
    Event(100, EventType.IDLE_ENTER, 1, 0),
    Event(200, EventType.IDLE_EXIT, 1, 0),
    Event(200, EventType.IRQ_ENTER, 0, 0),
    Event(210, P, 2, 8),  # the interrupt posts to task 2
    Event(220, EventType.IRQ_EXIT, 0, 0),
    Event(230, H, 2, 8),
    Event(240, P, 1, 9),  # task 2 posts to task 1 (lower: it waits)
    Event(250, EventType.ALLOC, 2, 16),
    Event(300, E, 2, 8),
    Event(300, EventType.CTX_SWITCH, 2, 1),
    Event(310, H, 1, 9),
    Event(320, EventType.PREEMPT, 2, 1),
    Event(330, EventType.FREE, 1, 16),
    Event(340, EventType.DROP, 3, 2),
    Event(350, E, 1, 9),
    Event(360, EventType.CTX_SWITCH, 1, 0xFF),
    Event(370, EventType.MARK, 7, 7),
    Event(380, EventType.IDLE_ENTER, 2, 0),
]  # fmt: skip


def test_kernel_trace_tracks_slices_and_flows(mps2: Any) -> None:
    doc = perfetto.kernel_trace(KERNEL, None, {1: "sensing", 2: "forwarding"})
    assert check_trace_events(doc) == []
    tracks = _track_names(doc)
    assert tracks[perfetto.TID_TASK + 2] == "forwarding (task 2)"
    assert tracks[perfetto.TID_TASK + 1] == "sensing (task 1)"
    assert tracks[perfetto.TID_IRQ] == "interrupt 0" and tracks[perfetto.TID_IDLE].startswith("idle")
    handlers = [(e["name"], e["ts"], e["dur"]) for e in _of(doc, "X", cat="handler")]
    assert handlers == [("forwarding", 230.0, 70.0), ("sensing", 310.0, 40.0)]
    assert [(e["ts"], e["dur"]) for e in _of(doc, "X", cat="interrupt")] == [(200.0, 20.0)]
    idle = _of(doc, "X", cat="idle")
    assert [(e["name"], e["ts"], e["dur"]) for e in idle] == [("idle, sleep state 1", 100.0, 100.0),
                                                              ("idle, sleep state 2", 380.0, 0.0)]  # fmt: skip
    # message arrows: from the interrupt to forwarding's start, from forwarding to sensing's start
    starts, ends = _of(doc, "s"), _of(doc, "f")
    assert [(s["tid"], s["ts"], f["tid"], f["ts"]) for s, f in zip(starts, ends)] == [
        (perfetto.TID_IRQ, 210.0, perfetto.TID_TASK + 2, 230.0),
        (perfetto.TID_TASK + 2, 240.0, perfetto.TID_TASK + 1, 310.0),
    ]
    assert [e["name"] for e in _of(doc, "i", tid=perfetto.TID_CPU)] == [
        "switch forwarding -> sensing", "switch sensing -> idle", "mark 7 7"]
    assert [(e["ts"], e["dur"], e["name"]) for e in _of(doc, "X", cat="thread")] == [(300.0, 60.0, "sensing"),
                                                                                     (360.0, 20.0, "idle")]  # fmt: skip
    assert [e["args"]["value"] for e in _of(doc, "C", name="heap bytes in use")] == [16, 0]
    assert [e["args"]["value"] for e in doc["traceEvents"] if e["ph"] == "C" and e["name"].startswith("sleep")] == [
        2, 0, 3]
    assert _of(doc, "i", name="preempted by forwarding")[0]["tid"] == perfetto.TID_TASK + 1


def test_ticks_become_microseconds_with_a_board(mps2: Any) -> None:
    doc = perfetto.kernel_trace(KERNEL, mps2)
    first = _of(doc, "X", cat="handler")[0]
    assert first["ts"] == pytest.approx(mps2.ticks_to_us(230)) and first["dur"] == pytest.approx(mps2.ticks_to_us(70))


SIM_EVENTS = [
    {"t_ps": 1_000_000, "node": "a", "event": "tx_start", "tx": 0, "len": 19, "channel": 26, "kind": "frame"},
    {"t_ps": 1_160_000, "node": "a", "event": "pin", "port": "D", "bit": 4, "label": "sfd", "value": 1},
    {"t_ps": 1_800_000, "node": "a", "event": "tx_end", "tx": 0, "aborted": False},
    {"t_ps": 1_800_000, "node": "b", "event": "rx_ok", "tx": 0, "from": "a", "len": 19, "rssi_dbm": -40},
    {"t_ps": 2_000_000, "node": "c", "event": "collision", "tx": 0, "with": 1},
    {"t_ps": 3_000_000, "node": "b", "event": "bus", "bus": "n1", "src": 1, "dst": 255, "len": 4, "end_ps": 3_048_000},
    {"t_ps": 4_000_000, "node": "c", "event": "tx_start", "tx": 1, "len": 0, "channel": 26, "kind": "carrier"},
    {"t_ps": 5_000_000, "node": "b", "event": "exit", "status": 0},
]  # fmt: skip
SIM_CONF = """\
sim seed=1 duration_us=10 out=x threads=1
bus name=n1 throughput_bps=1000000 slot_us=600 latency_us=20 rx_frames=2
node name=a elf=/r/build/target/micaz/stack/apps/radio/radio.elf mcu=atmega128 freq_hz=7372800 ppm=0 x=0 y=0 z=0 radio=cc2420 bus=n1 bus_irq=E4
node name=b elf=/r/build/target/micaz/stack/apps/radio/radio.elf mcu=atmega128 freq_hz=7372800 ppm=0 x=0 y=0 z=0 radio=cc2420 bus=n1 bus_irq=E4
node name=c elf=/r/x.elf mcu=atmega128 freq_hz=8000000 ppm=0 x=0 y=0 z=0 radio=cc2420 bus=n1 bus_irq=E4
"""  # noqa: E501


def _sim_dir(tmp_path: Path) -> Path:
    out = tmp_path / "sim"
    (out / "trace").mkdir(parents=True)
    (out / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SIM_EVENTS))
    (out / "tern-sim.conf").write_text(SIM_CONF)
    (out / "trace" / "c.jsonl").write_text("".join(json.dumps(e.to_json()) + "\n" for e in KERNEL[:6]))
    return out


def test_sim_directory(tmp_path: Path) -> None:
    doc = perfetto.sim_trace(_sim_dir(tmp_path), root=ROOT)
    assert check_trace_events(doc) == []
    procs = {e["pid"]: e["args"]["name"] for e in _of(doc, "M", name="process_name")}
    assert procs == {1: "a", 2: "b", 3: "c"}
    radio = _of(doc, "X", cat="radio")
    assert [(e["pid"], e["name"], e["ts"], e["dur"]) for e in radio] == [
        (1, "tx frame (19 B)", 1.0, pytest.approx(0.8)), (3, "tx carrier", 4.0, 1.0)]  # still on air at the end
    assert [(e["pid"], e["name"]) for e in _of(doc, "i", cat="radio")] == [(2, "rx"), (3, "collision")]
    assert [(e["pid"], e["name"], e["args"]["value"]) for e in _of(doc, "C") if e["name"].startswith("pin")] == [
        (1, "pin sfd", 1.0)]
    # a broadcast on the bus: a slice at the sender, one at each other processor, an arrow to each
    bus = _of(doc, "X", cat="bus")
    assert sorted((e["pid"], e["name"]) for e in bus) == [(1, "bus rx <- b"), (2, "bus tx -> 255"),
                                                          (3, "bus rx <- b")]  # fmt: skip
    assert [(s["pid"], f["pid"]) for s, f in zip(_of(doc, "s", cat="bus"), _of(doc, "f", cat="bus"))] == [(2, 1), (2, 3)]
    assert [e["name"] for e in _of(doc, "i", cat="exit")] == ["exit 0"]
    # node c's kernel trace: its clock is freq_hz from the config (its image is not in a build tree);
    # the trace ends inside a handler, which is drawn to the trace's end and marked open
    assert _of(doc, "s", cat="message")[0]["ts"] == pytest.approx(210 / 8.0)
    assert [(e["ts"], e["args"]) for e in _of(doc, "X", cat="handler", pid=3)] == [
        (pytest.approx(230 / 8.0), {"port": 8, "open": True})]


def test_cli_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "console.txt"
    log.write_text("hello\n" + encode_events(KERNEL) + "bye\n")
    out = tmp_path / "out" / "k.json"
    assert main(["trace", "export", "--format", "perfetto", "--tasks", "1=sensing,2=forwarding", str(log), str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}: ")
    assert check_trace_events(json.loads(out.read_text())) == []
    assert main(["trace", "export", str(tmp_path / "none"), str(out)]) == 2
    assert capsys.readouterr().err == f"tern trace export: {tmp_path / 'none'} does not exist\n"
    (tmp_path / "empty.txt").write_text("no trace\n")
    assert main(["trace", "export", str(tmp_path / "empty.txt"), str(out)]) == 1
    assert "holds no trace events" in capsys.readouterr().err
    assert main(["trace", "export", "--tasks", "x", str(log), str(out)]) == 2
    assert main(["trace", "export", str(tmp_path), str(out)]) == 2
    assert "has no events.jsonl" in capsys.readouterr().err


# --------------------------------------------------------------------------- real traces


def test_real_seed000_trace_under_hybrid(tmp_path: Path) -> None:
    for tool in ("cmake", "ninja", "arm-none-eabi-gcc", "qemu-system-arm"):
        require_tool(tool)
    board = load_board("mps2-an385", ROOT)
    build = tmp_path / "build"
    run_checked(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DTERN_BOARD=mps2-an385",
                 "-DTERN_MODEL=hybrid"])  # fmt: skip
    run_checked(["cmake", "--build", str(build), "--target", "seed000_trace.elf"])
    sink = io.StringIO()
    result = run_image(board, build / "bench" / "seed000" / "seed000_trace.elf", 120, trace_sink=sink)
    bad = [line for line in result.stdout.decode().splitlines() if line.startswith("T") and " " in line[2:]]
    assert result.status == 0 and result.malformed_trace_lines == 0, (result.stderr, bad[:3])
    path = tmp_path / "seed000.jsonl"
    path.write_text(sink.getvalue())
    doc = perfetto.export(path, board, {0: "control", 1: "sensing", 2: "forwarding"})
    assert check_trace_events(doc) == []
    tracks = set(_track_names(doc).values())
    assert {"control (task 0)", "sensing (task 1)", "forwarding (task 2)", "interrupt 0"} <= tracks
    text = result.stdout.decode()
    arrivals = int(text.split(" arrivals=")[1].split()[0])
    # every packet (and the task's INIT) is a flow to a forwarding handler, packets from the timer interrupt
    forwarded = [f for f in _of(doc, "f", cat="message") if f["tid"] == perfetto.TID_TASK + 2]
    assert len(forwarded) == arrivals + 1 and arrivals > 10
    assert len(_of(doc, "X", cat="handler", name="forwarding")) == arrivals + 1
    assert len([s for s in _of(doc, "s", cat="message") if s["tid"] == perfetto.TID_IRQ]) >= arrivals
    # the sensing task is the hybrid's one thread: context switches into it and back to idle
    assert {e["name"] for e in _of(doc, "i", cat="switch")} >= {"switch idle -> sensing", "switch sensing -> idle"}
    assert _of(doc, "X", cat="idle")


def test_real_tern_sim_ping(tmp_path: Path) -> None:
    binary = ROOT / "tools" / "simavr" / "build" / "tern-sim"
    if not binary.is_file():
        pytest.skip(f"{binary} is not built (make -C tools/simavr)")
    if shutil.which("avr-gcc") is None or shutil.which("cmake") is None:
        pytest.skip("avr-gcc or cmake is not installed (make apt installs them)")
    build.build("micaz", "stack", ROOT, target="radio.elf")  # only the image the scenario runs
    result = sim.run(load_scenario(ROOT / "docs" / "sim" / "ping.toml", root=ROOT), tmp_path / "ping",
                     do_build=False, root=ROOT)  # fmt: skip
    doc = perfetto.sim_trace(tmp_path / "ping", root=ROOT)
    assert check_trace_events(doc) == []
    for pid, node in enumerate(result.nodes, start=1):
        assert len(_of(doc, "X", cat="radio", pid=pid)) == node.frames_sent > 0
        assert len(_of(doc, "i", cat="radio", pid=pid, name="rx")) == node.frames_received
        assert {e["name"] for e in _of(doc, "C", pid=pid)} == {"pin sfd"}
