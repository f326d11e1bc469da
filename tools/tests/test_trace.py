"""The trace wire format (include/tern/trace.h, kernel/trace.c) and what the
host derives from an event stream."""
from __future__ import annotations

import json

import pytest
from conftest import ROOT

from terntools.trace import (
    Event,
    EventType,
    StreamDecoder,
    TraceError,
    analyse,
    decode_console,
    decode_hex,
    encode_event,
    encode_events,
    events_from_jsonl,
    read_events,
)


def test_known_vector_from_the_c_unit_test() -> None:
    # tests/unit/test_trace_idle.c: time 0x12345678, HANDLER_START, a = 2, b = 0x0102
    # -> bytes 78 56 34 12 | 04 | 02 | 02 01 (little-endian u32, u8, u8, u16)
    (ev,) = StreamDecoder().decode_line("7856341204020201")
    assert ev == Event(0x12345678, EventType.HANDLER_START, 2, 0x0102)
    assert encode_event(ev) == "7856341204020201"


def test_overflow_vector_from_the_c_unit_test() -> None:
    # "T e80300000e090b0a": time 1000 (0x3e8), MARK (14), a = 9, b = 0x0a0b
    assert decode_console("T e80300000e090b0a\n") == [Event(1000, EventType.MARK, 9, 0x0A0B)]


def test_event_codes_match_the_c_header() -> None:
    header = (ROOT / "include" / "tern" / "trace.h").read_text(encoding="utf-8")
    for kind in EventType:
        assert f"TERN_EV_{kind.name} = {kind.value}," in header, kind


def test_round_trip_across_a_32_bit_wrap() -> None:
    # times cross 2^32: only the low 32 bits travel, the decoder re-extends them
    events = [
        Event(0xFFFF_FFF0, EventType.IRQ_ENTER, 3, 0),
        Event(0xFFFF_FFFF, EventType.POST, 2, 1),
        Event(2**32 + 5, EventType.IRQ_EXIT, 3, 0),
        Event(2**32 + 0x10, EventType.HANDLER_START, 2, 1),
        Event(2**33 + 1, EventType.HANDLER_END, 2, 1),  # a second wrap
        Event(2**33 + 1, EventType.ALLOC, 255, 65535),  # equal time: no wrap; extreme a/b
    ]
    text = encode_events(events, per_line=4)
    assert text.count("\n") == 2 and text.startswith("T f0ffffff01030000")
    assert decode_console(text) == events


def test_decoder_keeps_the_clock_across_lines() -> None:
    d = StreamDecoder()
    first = d.decode_line(encode_event(Event(0xFFFF_FF00, EventType.MARK, 0, 0)))
    second = d.decode_line(encode_event(Event(0x100, EventType.MARK, 1, 0)))
    assert first[0].time == 0xFFFF_FF00
    assert second[0].time == 2**32 + 0x100


@pytest.mark.parametrize(
    ("payload", "complaint"),
    [
        ("78563412040202", "expected a multiple of 16 hex digits, got 14 characters"),
        ("785634120402020g", "expected a multiple of 16 hex digits"),
        ("", "expected a multiple of 16 hex digits, got 0"),
    ],
)
def test_bad_hex_is_refused(payload: str, complaint: str) -> None:
    with pytest.raises(TraceError, match=complaint):
        decode_hex(payload)


def test_unknown_event_type_names_the_line() -> None:
    text = "hello\nT 7856341204020201\nT 7856341263020201\n"
    with pytest.raises(TraceError, match="line 3: unknown event type 99"):
        decode_console(text)


def test_console_decoding_skips_other_lines_and_crlf() -> None:
    text = "boot\r\nT 7856341204020201\r\nTx not trace\r\n"
    assert decode_console(text) == [Event(0x12345678, EventType.HANDLER_START, 2, 0x0102)]


def test_jsonl_round_trip_and_autodetect() -> None:
    events = [Event(10, EventType.IDLE_ENTER, 1, 0), Event(20, EventType.IDLE_EXIT, 1, 0)]
    jsonl = "".join(json.dumps(ev.to_json()) + "\n" for ev in events)
    assert events_from_jsonl(jsonl) == events
    assert read_events(jsonl) == events
    assert read_events(encode_events(events)) == events
    with pytest.raises(TraceError, match="line 3: not a trace JSON record .unknown event type 'NOPE'"):
        events_from_jsonl(jsonl + '{"time": 1, "type": "NOPE", "a": 0, "b": 0}\n')
    with pytest.raises(TraceError, match="line 1: not a trace JSON record .missing a, b"):
        events_from_jsonl('{"time": 1, "type": "MARK"}')
    with pytest.raises(TraceError, match="line 1: not a trace JSON record"):
        events_from_jsonl('{"time": 1,')


def test_analyse_nested_job_with_interrupt_and_idle() -> None:
    # task 1 starts at 0; task 2 preempts it from 10 to 30; an interrupt runs 40..45 on top
    # of task 1, which ends at 50. Task 1: 50 ticks long, 20 preempted, 5 in the interrupt,
    # so it ran 25 itself. Then the CPU idles 60..100 in state 2, and the ring lost 7 events.
    E = EventType
    evs = [
        Event(0, E.HANDLER_START, 1, 0),
        Event(10, E.HANDLER_START, 2, 4),
        Event(30, E.HANDLER_END, 2, 4),
        Event(40, E.IRQ_ENTER, 11, 0),
        Event(45, E.IRQ_EXIT, 11, 0),
        Event(50, E.HANDLER_END, 1, 0),
        Event(60, E.IDLE_ENTER, 2, 0),
        Event(100, E.IDLE_EXIT, 2, 0),
        Event(101, E.OVERFLOW, 0, 7),
        Event(102, E.HANDLER_END, 3, 0),  # no start: the trace began inside it
        Event(103, E.HANDLER_START, 4, 0),  # still running at the end
    ]
    result = analyse(evs)
    outer, inner = result.jobs
    assert (outer.task, outer.duration, outer.preempted, outer.irq, outer.own, outer.depth) == (1, 50, 20, 5, 25, 0)
    assert (inner.task, inner.port, inner.duration, inner.preempted, inner.depth) == (2, 4, 20, 0, 1)
    assert [(p.start, p.duration, p.state) for p in result.idle] == [(60, 40, 2)]
    assert result.lost_events == 7
    assert result.unmatched_ends == 1
    assert [j.task for j in result.open_jobs] == [4]


def test_analyse_counts_unmatched_idle_events() -> None:
    E = EventType
    result = analyse([Event(1, E.IDLE_EXIT, 0, 0), Event(2, E.IDLE_ENTER, 0, 0), Event(3, E.IDLE_ENTER, 0, 0)])
    # an exit without entry, an entry replaced by another, and one left open
    assert result.unmatched_idle == 3 and result.idle == []
