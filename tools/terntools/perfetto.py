"""Traces for Perfetto's UI (https://ui.perfetto.dev) and chrome://tracing:
Chrome trace-event JSON, the object form {"traceEvents": [...]}.

Two inputs:

- a kernel trace (`tern run --trace-out FILE`, or a console log with its
  "T <hex>" lines; terntools.trace decodes both): one process for the node,
  one track per task (its handler runs as slices, "X"), one per interrupt
  level (interrupt handlers as slices), an "idle" track (idle periods as
  slices named by sleep state, and a "sleep state" counter: 0 awake, state
  index + 1 while idle), a "cpu" track (the running thread between context
  switches as slices, each switch an instant), messages as flow arrows
  ("s" at the post, inside the interrupt or handler that posted, "f" at the
  start of the handler that took it), preemptions, drops and marks as
  instants, heap bytes in use as a counter;
- a tern-sim output directory (docs/tern-sim.md, "Outputs"): one process
  per node (every processor of a multi-processor node is a node there), a
  "radio" track with every transmission as a slice from tx_start to tx_end
  and receptions, bad FCS, collisions and losses as instants, pin edges as
  counter tracks (one per pin label), processor-bus frames as slices on
  the sender's and every receiver's "bus" track joined by flow arrows,
  exit and crash as instants; a node's kernel trace (trace/<node>.jsonl)
  adds its task, interrupt, idle and cpu tracks to its process.

Times: "ts" and "dur" are microseconds. A kernel trace's ticks become µs
with the board's ticks_to_us (µs of the scenario CPU, as the benchmarks
report) or, without a board, one tick is shown as one µs. tern-sim's
picoseconds are divided by 10^6.
"""
from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terntools import trace
from terntools.boards import Board, load_board
from terntools.errors import TernError, UsageError
from terntools.trace import Event, EventType

# thread ids inside a node's process
TID_CPU = 1
TID_IDLE = 2
TID_RADIO = 3
TID_BUS = 4
TID_IRQ = 10  # + interrupt number
TID_TASK = 100  # + task id

NO_TASK = 0xFF
SPECIAL_TASKS = {0xFF: "idle", 0xFE: "kernel", 0xFD: "in transit"}

TraceEvent = dict[str, Any]


class ExportError(TernError):
    """An input that cannot be turned into a trace."""


@dataclass
class TraceBuilder:
    """Collects trace events; metadata first, the rest sorted by time on output."""

    meta: list[TraceEvent] = field(default_factory=list)
    events: list[TraceEvent] = field(default_factory=list)
    _named: set[tuple[int, int]] = field(default_factory=set)
    _flow_id: int = 0

    def process(self, pid: int, name: str) -> None:
        self.meta.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}})
        self.meta.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": pid}})

    def thread(self, pid: int, tid: int, name: str) -> None:
        if (pid, tid) in self._named:
            return
        self._named.add((pid, tid))
        self.meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}})
        self.meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}})

    def slice(self, pid: int, tid: int, name: str, ts: float, dur: float, cat: str,
              args: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        ev: TraceEvent = {"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat, "ts": ts, "dur": max(dur, 0.0)}
        if args:
            ev["args"] = dict(args)
        self.events.append(ev)

    def instant(self, pid: int, tid: int, name: str, ts: float, cat: str, args: Mapping[str, Any] | None = None,
                scope: str = "t") -> None:  # fmt: skip
        ev: TraceEvent = {"ph": "i", "pid": pid, "tid": tid, "name": name, "cat": cat, "ts": ts, "s": scope}
        if args:
            ev["args"] = dict(args)
        self.events.append(ev)

    def counter(self, pid: int, name: str, ts: float, value: float) -> None:
        self.events.append({"ph": "C", "pid": pid, "tid": 0, "name": name, "ts": ts, "args": {"value": value}})

    def flow(self, name: str, cat: str, start: tuple[int, int, float], end: tuple[int, int, float]) -> None:
        """An arrow from the slice enclosing `start` (pid, tid, ts) to the one enclosing `end`."""
        self._flow_id += 1
        (spid, stid, sts), (epid, etid, ets) = start, end
        self.events.append({"ph": "s", "pid": spid, "tid": stid, "name": name, "cat": cat, "ts": sts,
                            "id": self._flow_id})  # fmt: skip
        self.events.append({"ph": "f", "bp": "e", "pid": epid, "tid": etid, "name": name, "cat": cat,
                            "ts": max(ets, sts), "id": self._flow_id})  # fmt: skip

    def document(self, other: Mapping[str, Any] | None = None) -> dict[str, Any]:
        # Time order; at one time, longer slices first so that nested slices follow their parent.
        order = {"X": 0, "s": 1, "f": 2, "i": 3, "C": 4}
        body = sorted(self.events, key=lambda e: (e["ts"], order.get(e["ph"], 9), -e.get("dur", 0)))
        doc: dict[str, Any] = {"traceEvents": self.meta + body, "displayTimeUnit": "ns"}
        if other:
            doc["otherData"] = dict(other)
        return doc


# --------------------------------------------------------------------------- kernel trace


def parse_task_names(text: str | None) -> dict[int, str]:
    """'0=control,1=sensing' -> {0: 'control', 1: 'sensing'}."""
    names: dict[int, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        try:
            task = int(key.strip(), 0)
        except ValueError:
            raise UsageError(f"--tasks: {item.strip()!r} is not ID=NAME") from None
        if not sep or not value.strip() or not 0 <= task <= 255:
            raise UsageError(f"--tasks: {item.strip()!r} is not ID=NAME with ID 0..255")
        names[task] = value.strip()
    return names


def _task_name(task: int, names: Mapping[int, str]) -> str:
    if task in names:
        return names[task]
    return SPECIAL_TASKS.get(task, f"task {task}")


def add_kernel_trace(b: TraceBuilder, events: Sequence[Event], pid: int, to_us: Callable[[int], float],
                     names: Mapping[int, str]) -> None:  # fmt: skip
    """The tracks of one node's kernel trace into process `pid`."""
    if not events:
        return
    last = events[-1].time

    def task_track(task: int) -> int:
        tid = TID_TASK + task
        b.thread(pid, tid, f"{_task_name(task, names)} (task {task})" if task not in SPECIAL_TASKS else _task_name(task, names))
        return tid

    def irq_track(irq: int) -> int:
        tid = TID_IRQ + irq
        b.thread(pid, tid, f"interrupt {irq}")
        return tid

    b.thread(pid, TID_CPU, "cpu (running thread, context switches)")
    open_irqs: list[Event] = []
    open_idle: Event | None = None
    open_jobs: list[Event] = []  # HANDLER_STARTs not yet ended, oldest first
    running: int | None = None  # the task whose code runs (for the origin of a post)
    resume: list[int | None] = []
    posts: dict[tuple[int, int], deque[tuple[int, int, float]]] = defaultdict(deque)
    switch_at: tuple[int, int] | None = None  # (time, task) of the last context switch
    heap = 0

    def origin(ev: Event) -> tuple[int, int, float]:
        if open_irqs:
            return (pid, irq_track(open_irqs[-1].a), to_us(ev.time))
        if running is not None and running != NO_TASK:
            return (pid, task_track(running), to_us(ev.time))
        return (pid, TID_CPU, to_us(ev.time))

    for ev in events:
        ts = to_us(ev.time)
        kind = ev.type
        if kind is EventType.HANDLER_START:
            tid = task_track(ev.a)
            open_jobs.append(ev)
            resume.append(running)
            running = ev.a
            queue = posts.get((ev.a, ev.b))
            if queue:
                b.flow(f"message to {_task_name(ev.a, names)}", "message", queue.popleft(), (pid, tid, ts))
        elif kind is EventType.HANDLER_END:
            for index in range(len(open_jobs) - 1, -1, -1):
                if open_jobs[index].a == ev.a:
                    start = open_jobs.pop(index)
                    b.slice(pid, task_track(ev.a), _task_name(ev.a, names), to_us(start.time), ts - to_us(start.time),
                            "handler", {"port": start.b})  # fmt: skip
                    break
            running = resume.pop() if resume else None
        elif kind is EventType.POST:
            posts[(ev.a, ev.b)].append(origin(ev))
        elif kind is EventType.IRQ_ENTER:
            irq_track(ev.a)
            open_irqs.append(ev)
        elif kind is EventType.IRQ_EXIT:
            if open_irqs:
                enter = open_irqs.pop()
                b.slice(pid, irq_track(enter.a), f"interrupt {enter.a}", to_us(enter.time), ts - to_us(enter.time),
                        "interrupt")  # fmt: skip
        elif kind is EventType.IDLE_ENTER:
            b.thread(pid, TID_IDLE, "idle (sleep states)")
            open_idle = ev
            b.counter(pid, "sleep state (0 awake, else state + 1)", ts, ev.a + 1)
        elif kind is EventType.IDLE_EXIT:
            if open_idle is not None:
                b.slice(pid, TID_IDLE, f"idle, sleep state {open_idle.a}", to_us(open_idle.time),
                        ts - to_us(open_idle.time), "idle", {"state": open_idle.a})  # fmt: skip
                open_idle = None
            b.counter(pid, "sleep state (0 awake, else state + 1)", ts, 0)
        elif kind is EventType.CTX_SWITCH:
            if switch_at is not None:
                b.slice(pid, TID_CPU, _task_name(switch_at[1], names), to_us(switch_at[0]), ts - to_us(switch_at[0]),
                        "thread")  # fmt: skip
            b.instant(pid, TID_CPU, f"switch {_task_name(ev.a, names)} -> {_task_name(ev.b, names)}", ts, "switch",
                      {"from": ev.a, "to": ev.b})  # fmt: skip
            switch_at = (ev.time, ev.b)
            running = ev.b
        elif kind is EventType.PREEMPT:
            b.instant(pid, task_track(ev.b), f"preempted by {_task_name(ev.a, names)}", ts, "preempt",
                      {"by": ev.a})  # fmt: skip
        elif kind is EventType.DROP:
            b.instant(pid, task_track(ev.a), f"message dropped (reason {ev.b})", ts, "drop", {"reason": ev.b})
        elif kind is EventType.ALLOC:
            if ev.b == 0:
                b.instant(pid, TID_CPU, f"allocation failed ({_task_name(ev.a, names)})", ts, "heap")
            heap += ev.b
            b.counter(pid, "heap bytes in use", ts, heap)
        elif kind is EventType.FREE:
            heap = max(0, heap - ev.b)
            b.counter(pid, "heap bytes in use", ts, heap)
        elif kind is EventType.OVERFLOW:
            b.instant(pid, TID_CPU, f"{ev.b} events lost (trace ring full)", ts, "overflow", {"lost": ev.b}, scope="p")
        elif kind is EventType.MARK:
            b.instant(pid, TID_CPU, f"mark {ev.a} {ev.b}", ts, "mark", {"a": ev.a, "b": ev.b})
    # what was still open when the trace ended runs to its last event
    end = to_us(last)
    for start in open_jobs:
        b.slice(pid, task_track(start.a), _task_name(start.a, names), to_us(start.time), end - to_us(start.time),
                "handler", {"port": start.b, "open": True})  # fmt: skip
    for enter in open_irqs:
        b.slice(pid, irq_track(enter.a), f"interrupt {enter.a}", to_us(enter.time), end - to_us(enter.time),
                "interrupt", {"open": True})  # fmt: skip
    if open_idle is not None:
        b.slice(pid, TID_IDLE, f"idle, sleep state {open_idle.a}", to_us(open_idle.time), end - to_us(open_idle.time),
                "idle", {"state": open_idle.a, "open": True})  # fmt: skip
    if switch_at is not None:
        b.slice(pid, TID_CPU, _task_name(switch_at[1], names), to_us(switch_at[0]), end - to_us(switch_at[0]),
                "thread")  # fmt: skip


def tick_converter(board: Board | None) -> Callable[[int], float]:
    if board is None:
        return float
    return board.ticks_to_us


def kernel_trace(events: Sequence[Event], board: Board | None = None, names: Mapping[int, str] | None = None,
                 node: str = "node") -> dict[str, Any]:  # fmt: skip
    """The trace-event document of one kernel trace."""
    b = TraceBuilder()
    b.process(1, node + (f" ({board.name})" if board else ""))
    add_kernel_trace(b, events, 1, tick_converter(board), names or {})
    unit = "µs of the board's scenario CPU" if board else "ticks shown as µs (no --board)"
    return b.document({"source": "tern kernel trace", "time": unit})


# --------------------------------------------------------------------------- tern-sim


@dataclass(frozen=True)
class SimNode:
    name: str
    board: str | None  # from the image path build/target/BOARD/..., when it has one
    freq_hz: float | None
    bus: str | None


def read_sim_conf(path: Path) -> list[SimNode]:
    """The node lines of tern-sim.conf, in order (a bus address is the order among a bus's nodes)."""
    nodes: list[SimNode] = []
    if not path.is_file():
        return nodes
    for line in path.read_text(encoding="utf-8").splitlines():
        words = line.split("#", 1)[0].split()
        if not words or words[0] != "node":
            continue
        kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        elf = Path(kv.get("elf", ""))
        parts = elf.parts
        board = parts[parts.index("target") + 1] if "target" in parts[:-1] else None
        freq = float(kv["freq_hz"]) if "freq_hz" in kv else None
        nodes.append(SimNode(kv.get("name", "?"), board, freq, kv.get("bus")))
    return nodes


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ExportError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("t_ps"), int) or not isinstance(row.get("node"), str):
            raise ExportError(f"{path}:{number}: not a tern-sim event (needs integer t_ps and node)")
        rows.append(row)
    return rows


def _node_clock(node: SimNode | None, root: Path | None) -> Callable[[int], float]:
    if node is not None and node.board is not None:
        try:
            return load_board(node.board, root).ticks_to_us
        except TernError:
            pass
    if node is not None and node.freq_hz:
        hz = node.freq_hz
        return lambda ticks: ticks * 1e6 / hz
    return float


def sim_trace(out_dir: Path, names: Mapping[int, str] | None = None, root: Path | None = None) -> dict[str, Any]:
    """The trace-event document of a tern-sim output directory."""
    events_path = out_dir / "events.jsonl"
    if not events_path.is_file():
        raise UsageError(f"{out_dir} has no events.jsonl (not a tern-sim output directory)")
    rows = _read_jsonl(events_path)
    conf = read_sim_conf(out_dir / "tern-sim.conf")
    order = [n.name for n in conf]
    summary = out_dir / "summary.json"
    if summary.is_file():
        try:
            for n in json.loads(summary.read_text(encoding="utf-8")).get("nodes", []):
                if isinstance(n, dict) and isinstance(n.get("name"), str) and n["name"] not in order:
                    order.append(n["name"])
        except json.JSONDecodeError:
            pass
    for row in rows:
        if row["node"] not in order:
            order.append(row["node"])
    pid = {name: i + 1 for i, name in enumerate(order)}
    b = TraceBuilder()
    for name in order:
        b.process(pid[name], name)
    us = 1e-6  # µs per ps
    last_ps = max((r["t_ps"] for r in rows), default=0)
    by_bus: dict[str, list[str]] = defaultdict(list)
    for n in conf:
        if n.bus:
            by_bus[n.bus].append(n.name)
    tx_open: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        node, t, kind = row["node"], row["t_ps"] * us, row.get("event")
        p = pid[node]
        extra = {k: v for k, v in row.items() if k not in ("t_ps", "node", "event")}
        if kind == "tx_start":
            tx_open[(node, int(row.get("tx", -1)))] = row
        elif kind == "tx_end":
            start = tx_open.pop((node, int(row.get("tx", -1))), None)
            if start is not None:
                b.thread(p, TID_RADIO, "radio")
                what = start.get("kind", "frame")
                b.slice(p, TID_RADIO, f"tx {what} ({start.get('len', '?')} B)" if what == "frame" else f"tx {what}",
                        start["t_ps"] * us, t - start["t_ps"] * us, "radio",
                        {**{k: v for k, v in start.items() if k not in ("t_ps", "node", "event")},
                         "aborted": row.get("aborted", False)})  # fmt: skip
        elif kind in ("rx_ok", "rx_bad_fcs", "collision", "rx_lost"):
            b.thread(p, TID_RADIO, "radio")
            label = {"rx_ok": "rx", "rx_bad_fcs": "rx bad FCS", "collision": "collision", "rx_lost": "rx lost"}[kind]
            if kind == "rx_lost":
                label += f" ({row.get('reason', '?')})"
            b.instant(p, TID_RADIO, label, t, "radio", extra)
        elif kind == "pin":
            label = row.get("label") or f"P{row.get('port', '?')}{row.get('bit', '?')}"
            b.counter(p, f"pin {label}", t, float(row.get("value", 0)))
        elif kind in ("exit", "crash"):
            b.thread(p, TID_CPU, "cpu")
            b.instant(p, TID_CPU, f"{kind} {row.get('status', row.get('reason', ''))}".strip(), t, kind, extra)
        elif kind == "bus":
            end = float(row.get("end_ps", row["t_ps"])) * us
            b.thread(p, TID_BUS, f"bus {row.get('bus', '')}".strip())
            members = by_bus.get(str(row.get("bus")), [])
            dst = row.get("dst")
            b.slice(p, TID_BUS, f"bus tx -> {dst}", t, end - t, "bus", extra)
            if isinstance(dst, int) and members:
                targets = [m for i, m in enumerate(members) if (dst == 0xFF and m != node) or i == dst]
                for target in targets:
                    q = pid.get(target)
                    if q is None:
                        continue
                    b.thread(q, TID_BUS, f"bus {row.get('bus', '')}".strip())
                    b.slice(q, TID_BUS, f"bus rx <- {node}", t, end - t, "bus", extra)
                    b.flow(f"bus frame {node} -> {target}", "bus", (p, TID_BUS, t), (q, TID_BUS, t))
        elif kind == "bus_refused":
            b.thread(p, TID_BUS, "bus")
            b.instant(p, TID_BUS, f"bus send refused ({row.get('reason', '?')})", t, "bus", extra)
        else:
            b.thread(p, TID_CPU, "cpu")
            b.instant(p, TID_CPU, str(kind), t, "sim", extra)
    for (node, _tx), start in tx_open.items():  # still on air when the run ended
        b.thread(pid[node], TID_RADIO, "radio")
        b.slice(pid[node], TID_RADIO, f"tx {start.get('kind', 'frame')}", start["t_ps"] * us,
                (last_ps - start["t_ps"]) * us, "radio", {"open": True})  # fmt: skip
    conf_by_name = {n.name: n for n in conf}
    trace_dir = out_dir / "trace"
    for name in order:
        path = trace_dir / f"{name}.jsonl"
        if path.is_file():
            events = trace.events_from_jsonl(path.read_text(encoding="utf-8"))
            add_kernel_trace(b, events, pid[name], _node_clock(conf_by_name.get(name), root), names or {})
    return b.document({"source": f"tern-sim {out_dir}", "time": "µs of simulated time"})


# --------------------------------------------------------------------------- entry point


def export(source: Path, board: Board | None = None, names: Mapping[int, str] | None = None,
           root: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """A tern-sim directory or a kernel trace file (console log or --trace-out JSON lines)."""
    if source.is_dir():
        return sim_trace(source, names, root)
    try:
        text = source.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    events = trace.read_events(text)
    if not events:
        raise ExportError(f"{source} holds no trace events (was the image built with TERN_TRACE_EVENTS > 0, "
                          "and did it drain its ring?)")  # fmt: skip
    return kernel_trace(events, board, names, node=source.stem)


def write(doc: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


def summary(doc: Mapping[str, Any]) -> str:
    """'N events, P processes, T tracks, F flows' for the command's output."""
    evs: Iterable[TraceEvent] = doc["traceEvents"]
    evs = list(evs)
    procs = {e["pid"] for e in evs}
    tracks = {(e["pid"], e["tid"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    flows = sum(1 for e in evs if e["ph"] == "s")
    return f"{len(evs)} events, {len(procs)} process{'es' if len(procs) != 1 else ''}, {len(tracks)} tracks, {flows} flows"
