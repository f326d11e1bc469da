"""Decoder for the kernel's trace stream, and the job / idle records derived from it.

Wire format (include/tern/trace.h): the guest drains its event ring as console
lines ``T <hex>``; every 16 hex digits are one 8-byte event in guest memory
order, fields little-endian::

    u32 time   low 32 bits of the board clock, in ticks
    u8  type   EventType
    u8  a
    u16 b

Only the low 32 bits of the time travel, so the decoder extends them to a
64-bit monotonic clock: whenever a time is smaller than the one before, the
counter has wrapped once. The ring records events in order with interrupts
masked, so times never go backwards otherwise. Limitation: a silence of more
than 2**32 ticks between two events (171 s at 25 MHz) is a wrap nobody can
see; the kernel drains often enough that this does not happen in practice.
"""
from __future__ import annotations

import enum
import json
import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from terntools.errors import TernError

EVENT_BYTES = 8
HEX_PER_EVENT = 2 * EVENT_BYTES
EVENTS_PER_LINE = 8  # what kernel/trace.c prints; the decoder accepts any count
WRAP = 1 << 32
_STRUCT = struct.Struct("<IBBH")
_HEX = re.compile(r"[0-9a-fA-F]+")


class TraceError(TernError):
    """A trace line that cannot be decoded."""


class EventType(enum.IntEnum):
    """Event type codes, as in tern_event_type (include/tern/trace.h)."""

    IRQ_ENTER = 1  # a = irq number
    IRQ_EXIT = 2  # a = irq number
    POST = 3  # a = dst task, b = port
    HANDLER_START = 4  # a = task, b = port
    HANDLER_END = 5  # a = task, b = port
    CTX_SWITCH = 6  # a = from task, b = to task
    IDLE_ENTER = 7  # a = sleep state index
    IDLE_EXIT = 8  # a = sleep state index
    ALLOC = 9  # a = owner task, b = size
    FREE = 10  # a = owner task, b = size
    DROP = 11  # a = dst task, b = reason code
    PREEMPT = 12  # a = preempting task, b = preempted task
    OVERFLOW = 13  # b = events lost because the ring was full
    MARK = 14  # a, b free for applications


@dataclass(frozen=True)
class Event:
    """One decoded event; time is the 64-bit extended board clock in ticks."""

    time: int
    type: EventType
    a: int
    b: int

    def to_json(self) -> dict[str, int | str]:
        return {"time": self.time, "type": self.type.name, "a": self.a, "b": self.b}


# --------------------------------------------------------------------------- encoding


def encode_event(ev: Event) -> str:
    """16 hex digits for one event, exactly as tern_trace_encode() prints it."""
    return _STRUCT.pack(ev.time % WRAP, int(ev.type), ev.a, ev.b).hex()


def encode_events(events: Iterable[Event], per_line: int = EVENTS_PER_LINE) -> str:
    """Console text ("T <hex>" lines, newline-terminated) that decodes back to events.

    Used by tests and for golden files; the time is cut to 32 bits as on the wire.
    """
    if per_line < 1:
        raise ValueError("per_line must be at least 1")
    evs = list(events)
    lines = []
    for i in range(0, len(evs), per_line):
        lines.append("T " + "".join(encode_event(ev) for ev in evs[i : i + per_line]) + "\n")
    return "".join(lines)


# --------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class RawEvent:
    """An event as on the wire: 32-bit time, type code not yet checked."""

    time32: int
    type: int
    a: int
    b: int


def decode_hex(payload: str, where: str = "trace line") -> list[RawEvent]:
    """Split the hex part of one ``T`` line into raw events."""
    payload = payload.strip()
    if not payload or len(payload) % HEX_PER_EVENT or not _HEX.fullmatch(payload):
        raise TraceError(
            f"{where}: expected a multiple of {HEX_PER_EVENT} hex digits, got {len(payload)} characters {payload[:40]!r}"
        )
    data = bytes.fromhex(payload)
    return [RawEvent(*_STRUCT.unpack_from(data, off)) for off in range(0, len(data), EVENT_BYTES)]


class TimeExtender:
    """Turns the 32-bit wire times of one run into a 64-bit monotonic clock."""

    def __init__(self) -> None:
        self._high = 0
        self._last: int | None = None

    def extend(self, time32: int) -> int:
        if self._last is not None and time32 < self._last:
            self._high += WRAP
        self._last = time32
        return self._high + time32


class StreamDecoder:
    """Decodes trace lines one at a time, keeping the clock extension across lines.

    The runner feeds it console lines while the guest is still running; the
    offline decoder feeds it a whole log.
    """

    def __init__(self) -> None:
        self._clock = TimeExtender()

    def decode_line(self, payload: str, where: str = "trace line") -> list[Event]:
        """Decode the hex part of one ``T`` line (without the ``T ``)."""
        raws = decode_hex(payload, where)
        out = []
        for raw in raws:
            try:
                kind = EventType(raw.type)
            except ValueError:
                raise TraceError(f"{where}: unknown event type {raw.type}") from None
            out.append(Event(self._clock.extend(raw.time32), kind, raw.a, raw.b))
        return out


def is_trace_line(line: str) -> bool:
    """True for a console line that carries trace records."""
    return line.startswith("T ")


def decode_console(text: str) -> list[Event]:
    """All events in a console log; other lines are ignored.

    Lines may end in \\r\\n (a terminal log). A bad trace line is an error that
    names its line number, since silently skipping it would shift the clock.
    """
    decoder = StreamDecoder()
    events: list[Event] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.rstrip("\r")
        if is_trace_line(line):
            events.extend(decoder.decode_line(line[2:], where=f"line {number}"))
    return events


def events_from_jsonl(text: str) -> list[Event]:
    """Events written by ``tern run --trace-out`` (one JSON object a line)."""
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {number}: not a trace JSON record"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{where} ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise TraceError(f"{where} (not an object)")
        missing = [k for k in ("time", "type", "a", "b") if k not in obj]
        if missing:
            raise TraceError(f"{where} (missing {', '.join(missing)})")
        if not isinstance(obj["type"], str) or obj["type"] not in EventType.__members__:
            raise TraceError(f"{where} (unknown event type {obj['type']!r})")
        try:
            events.append(Event(int(obj["time"]), EventType[obj["type"]], int(obj["a"]), int(obj["b"])))
        except (TypeError, ValueError) as exc:
            raise TraceError(f"{where} ({exc})") from None
    return events


def read_events(text: str) -> list[Event]:
    """Events from either a console log or a --trace-out JSON-lines file."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    if first.lstrip().startswith("{"):
        return events_from_jsonl(text)
    return decode_console(text)


# --------------------------------------------------------------------------- derived records


@dataclass
class Job:
    """One handler run: HANDLER_START to the matching HANDLER_END of the same task.

    preempted: ticks during which another handler ran on top of this one
    (nested on the stack, or a higher-priority thread).
    irq: ticks spent in interrupt handlers while this job was the innermost one.
    """

    task: int
    port: int
    start: int
    end: int = -1
    preempted: int = 0
    irq: int = 0
    depth: int = 0

    @property
    def duration(self) -> int:
        """Wall (virtual) ticks from start to end."""
        return self.end - self.start

    @property
    def own(self) -> int:
        """Ticks the job itself ran: duration minus preemption and interrupts."""
        return self.duration - self.preempted - self.irq


@dataclass(frozen=True)
class IdlePeriod:
    """One IDLE_ENTER -> IDLE_EXIT span; state is the sleep state index."""

    start: int
    end: int
    state: int

    @property
    def duration(self) -> int:
        return self.end - self.start


@dataclass
class TraceAnalysis:
    """Everything derived from one event stream, plus what did not fit.

    unmatched_ends: HANDLER_END with no open job of that task (the trace began
    inside the job, or events were lost); open_jobs: jobs still running when
    the trace ended; lost_events: sum of OVERFLOW counts.
    """

    jobs: list[Job] = field(default_factory=list)
    idle: list[IdlePeriod] = field(default_factory=list)
    unmatched_ends: int = 0
    open_jobs: list[Job] = field(default_factory=list)
    lost_events: int = 0
    unmatched_idle: int = 0


class _JobTracker:
    """The stack of running handlers; the top is the innermost one."""

    def __init__(self, result: TraceAnalysis) -> None:
        self.result = result
        self.stack: list[Job] = []
        self.suspended_at: dict[int, int] = {}  # id(job) -> time it stopped being the top
        self.irq_depth = 0
        self.irq_since = 0

    def _suspend_top(self, now: int) -> None:
        if self.stack:
            self.suspended_at[id(self.stack[-1])] = now

    def _resume_top(self, now: int) -> None:
        if self.stack:
            top = self.stack[-1]
            since = self.suspended_at.pop(id(top), None)
            if since is not None:
                top.preempted += now - since

    def start(self, ev: Event) -> None:
        self._suspend_top(ev.time)
        self.stack.append(Job(task=ev.a, port=ev.b, start=ev.time, depth=len(self.stack)))

    def end(self, ev: Event) -> None:
        # Search from the top: with strict nesting the match is the top; a
        # round-robin switch between equal priorities can end a lower one first.
        for index in range(len(self.stack) - 1, -1, -1):
            job = self.stack[index]
            if job.task == ev.a:
                break
        else:
            self.result.unmatched_ends += 1
            return
        was_top = index == len(self.stack) - 1
        del self.stack[index]
        since = self.suspended_at.pop(id(job), None)
        if since is not None:  # ended while not on top: count until now
            job.preempted += ev.time - since
        job.end = ev.time
        self.result.jobs.append(job)
        if was_top:
            self._resume_top(ev.time)

    def irq_enter(self, ev: Event) -> None:
        if self.irq_depth == 0:
            self.irq_since = ev.time
        self.irq_depth += 1

    def irq_exit(self, ev: Event) -> None:
        if self.irq_depth == 0:
            return  # the trace began inside an interrupt
        self.irq_depth -= 1
        if self.irq_depth == 0 and self.stack:
            self.stack[-1].irq += ev.time - self.irq_since

    def finish(self) -> None:
        self.result.open_jobs = list(self.stack)


def analyse(events: Iterable[Event]) -> TraceAnalysis:
    """Derive job records and idle periods from an event stream (in time order)."""
    result = TraceAnalysis()
    jobs = _JobTracker(result)
    idle_open: Event | None = None
    for ev in events:
        if ev.type is EventType.HANDLER_START:
            jobs.start(ev)
        elif ev.type is EventType.HANDLER_END:
            jobs.end(ev)
        elif ev.type is EventType.IRQ_ENTER:
            jobs.irq_enter(ev)
        elif ev.type is EventType.IRQ_EXIT:
            jobs.irq_exit(ev)
        elif ev.type is EventType.IDLE_ENTER:
            if idle_open is not None:
                result.unmatched_idle += 1
            idle_open = ev
        elif ev.type is EventType.IDLE_EXIT:
            if idle_open is None:
                result.unmatched_idle += 1
            else:
                result.idle.append(IdlePeriod(idle_open.time, ev.time, idle_open.a))
                idle_open = None
        elif ev.type is EventType.OVERFLOW:
            result.lost_events += ev.b
    jobs.finish()
    if idle_open is not None:
        result.unmatched_idle += 1
    result.jobs.sort(key=lambda j: (j.start, j.depth))
    return result


# --------------------------------------------------------------------------- presentation


def format_events(events: Iterable[Event]) -> Iterator[str]:
    """A fixed-width table of events, one line each."""
    yield f"{'time':>14}  {'type':<13} {'a':>3} {'b':>5}"
    for ev in events:
        yield f"{ev.time:>14}  {ev.type.name:<13} {ev.a:>3} {ev.b:>5}"


def format_jobs(jobs: Iterable[Job]) -> Iterator[str]:
    yield f"{'start':>14} {'end':>14} {'task':>4} {'port':>4} {'ticks':>10} {'preempted':>10} {'irq':>8} {'depth':>5}"
    for j in jobs:
        yield f"{j.start:>14} {j.end:>14} {j.task:>4} {j.port:>4} {j.duration:>10} {j.preempted:>10} {j.irq:>8} {j.depth:>5}"


def format_idle(periods: Iterable[IdlePeriod]) -> Iterator[str]:
    yield f"{'start':>14} {'end':>14} {'ticks':>10} {'state':>5}"
    for p in periods:
        yield f"{p.start:>14} {p.end:>14} {p.duration:>10} {p.state:>5}"
