"""terntools.timeline and docs/execution-models.md, from the real demo binaries
(tests/unit/timeline_demo_<model>, built with the host build when missing or
stale): the order facts each model must show, the drawings, the errors on a
trace that cannot be drawn, and that the committed document is what the
generator produces now."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from terntools import timeline, trace
from terntools.cli import main
from terntools.timeline import Run, Timeline, TimelineError
from terntools.trace import Event, EventType

HOST_BUILD = ROOT / "build" / "host"
DOC = ROOT / "docs" / "execution-models.md"
IMG = ROOT / "docs" / "img"
LOW, MID, HIGH = 0, 1, 2
WORK = {LOW: 100, MID: 50, HIGH: 30}  # host_work() per message in timeline_demo.c (mid posts high after 10)


@pytest.fixture(scope="module")
def outputs() -> list[tuple[str, str]]:
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake or ninja is not installed, so the demo cannot be built (make apt)")
    timeline.build_demos(HOST_BUILD, ROOT)  # ninja rebuilds whatever is stale
    return timeline.run_demos(HOST_BUILD)


@pytest.fixture(scope="module")
def tls(outputs: list[tuple[str, str]]) -> dict[str, Timeline]:
    return timeline.timelines_from_outputs(outputs)


def order(tl: Timeline) -> list[tuple[int, int]]:
    """(task, nth message to it) in the order the handlers started."""
    return [(r.task, r.nth) for r in tl.runs]


def run(tl: Timeline, task: int, nth: int = 1) -> Run:
    (found,) = [r for r in tl.runs if r.task == task and r.nth == nth]
    return found


def assert_run_to_completion(tl: Timeline) -> None:
    """No handler starts before the previous one has returned; nothing nests."""
    for before, after in zip(tl.runs, tl.runs[1:]):
        assert after.start >= before.end, (before, after)
    assert all(r.depth == 0 and r.preempted == 0 and len(r.spans) == 1 for r in tl.runs)
    assert tl.preemptions == []


# --------------------------------------------------------------------------- the scenario


def test_task_table_matches_the_demo_source() -> None:
    source = (ROOT / "tests" / "unit" / "timeline_demo.c").read_text()
    found = {
        int(m["id"]): timeline.DemoTask(m["name"], int(m["prio"]))
        for m in re.finditer(r'\.name = "(?P<name>\w+)", \.id = (?P<id>\d+), \.priority = (?P<prio>\d+)', source)
    }
    assert found == timeline.DEMO_TASKS


def spans_of(tl: Timeline) -> list[tuple[int, int, int, list[tuple[int, int]]]]:
    """(task, nth, stack depth, spans it ran) of every run, in start order."""
    return [(r.task, r.nth, r.depth, r.spans) for r in tl.runs]


def test_every_model_handles_the_same_four_messages_and_does_all_the_work(tls: dict[str, Timeline]) -> None:
    assert list(tls) == ["fifo", "priority", "stack"]
    for model, tl in tls.items():
        assert sorted(order(tl)) == [(LOW, 1), (LOW, 2), (MID, 1), (HIGH, 1)], model
        for r in tl.runs:
            assert r.ran == WORK[r.task], (model, r)  # preemption delays work, never loses or adds any
            assert r.posted is not None and r.posted <= r.start
        # the three interrupts post low, low, mid at ticks 1, 11, 21; mid posts high itself
        assert [(t, dst) for t, dst, from_irq in tl.posts if from_irq] == [(1, LOW), (11, LOW), (21, MID)]
        assert [run(tl, LOW).sender, run(tl, LOW, 2).sender, run(tl, MID).sender, run(tl, HIGH).sender] == [
            None, None, None, MID,
        ]  # fmt: skip
        assert run(tl, HIGH).posted == run(tl, MID).start + 10


def test_fifo_runs_handlers_one_after_another_in_arrival_order(tls: dict[str, Timeline]) -> None:
    tl = tls["fifo"]
    assert_run_to_completion(tl)
    # arrival order, priorities ignored: the second low (posted at 11) runs before mid (posted at 21)
    assert [r.posted for r in tl.runs] == [1, 11, 21, 211]
    assert spans_of(tl) == [
        (LOW, 1, 0, [(1, 101)]),
        (LOW, 2, 0, [(101, 201)]),
        (MID, 1, 0, [(201, 251)]),
        (HIGH, 1, 0, [(251, 281)]),
    ]
    # high is queued behind the rest of its sender: it starts when mid returns
    high = run(tl, HIGH)
    assert high.start == run(tl, MID).end and high.waited == WORK[MID] - 10


def test_priority_runs_the_highest_queued_message_once_the_running_one_returns(tls: dict[str, Timeline]) -> None:
    tl = tls["priority"]
    assert_run_to_completion(tl)
    low2, mid, high = run(tl, LOW, 2), run(tl, MID), run(tl, HIGH)
    # mid overtakes the earlier second low, but not the running first low; high overtakes low #2 too
    assert low2.posted < mid.posted  # type: ignore[operator]
    assert spans_of(tl) == [
        (LOW, 1, 0, [(1, 101)]),
        (MID, 1, 0, [(101, 151)]),
        (HIGH, 1, 0, [(151, 181)]),
        (LOW, 2, 0, [(181, 281)]),
    ]
    # mid's post to high is queued, not run: high starts when mid returns
    assert high.posted == 111 and high.start == mid.end == 151


def test_stack_runs_a_post_to_a_higher_task_at_once_nested_and_unwinds_in_lifo_order(
    tls: dict[str, Timeline],
) -> None:
    tl = tls["stack"]
    low, low2, mid, high = run(tl, LOW), run(tl, LOW, 2), run(tl, MID), run(tl, HIGH)
    # the interrupt post to mid (strictly above low) preempts low when the interrupt returns;
    # mid's post to high (above mid) starts high at once, inside mid's send; nothing else preempts
    assert tl.preemptions == [(21, MID, LOW), (31, HIGH, MID)]
    assert spans_of(tl) == [
        (LOW, 1, 0, [(1, 21), (101, 181)]),
        (MID, 1, 1, [(21, 31), (61, 101)]),
        (HIGH, 1, 2, [(31, 61)]),
        (LOW, 2, 0, [(181, 281)]),
    ]
    assert (mid.posted, mid.start) == (21, 21)
    assert (high.posted, high.start, high.waited) == (31, 31, 0)
    # low is on the stack, so its second message (posted at 11, before mid's) waits until the
    # first low handler has returned, though nothing else is queued from 101 on: equal priority
    # neither preempts from an interrupt nor runs above the handler on top when mid returns
    assert low2.posted == 11 and low2.start == low.end == 181
    # nested runs: whatever starts inside another run ends inside it (no swapping back)
    for outer in tl.runs:
        for inner in tl.runs:
            if outer.start < inner.start < outer.end:
                assert inner.end <= outer.end, (outer, inner)


def test_response_times_per_model(tls: dict[str, Timeline]) -> None:
    """high: stack 30 (its own work), priority and fifo 70 (queued behind the rest of mid)."""
    assert [run(tls[m], HIGH).response for m in ("stack", "priority", "fifo")] == [30, 70, 70]
    responses = {m: {(r.task, r.nth): r.response for r in tl.runs} for m, tl in tls.items()}
    assert responses == {
        "fifo": {(LOW, 1): 100, (LOW, 2): 190, (MID, 1): 230, (HIGH, 1): 70},
        "priority": {(LOW, 1): 100, (MID, 1): 130, (HIGH, 1): 70, (LOW, 2): 270},
        "stack": {(LOW, 1): 180, (MID, 1): 80, (HIGH, 1): 30, (LOW, 2): 270},
    }


def test_preemption_agrees_with_the_trace_decoders_job_records(outputs: list[tuple[str, str]]) -> None:
    for where, text in outputs:
        model, events = timeline.parse_output(text, where)
        jobs = trace.analyse(events).jobs
        runs = timeline.derive(model, events).runs
        assert [(j.task, j.start, j.end, j.preempted, j.depth) for j in jobs] == [
            (r.task, r.start, r.end, r.preempted, r.depth) for r in runs
        ], model


# --------------------------------------------------------------------------- drawings


def rows_of(text: str) -> dict[str, str]:
    """Label -> cells (label column stripped) of a text timeline."""
    lines = text.splitlines()
    width = lines[-1].index("one column")
    return {line[:width].strip(): line[width:] for line in lines if line[:width].strip()}


def columns(row: str, mark: str) -> list[int]:
    return [i for i, ch in enumerate(row) if ch == mark]


def covering(a: int, b: int, step: int = 5) -> list[int]:
    """Columns whose middle tick lies in [a, b): each column shows the state at its middle."""
    return [c for c in range(400 // step) if a <= c * step + step / 2 < b]


def test_text_timeline_rows(tls: dict[str, Timeline]) -> None:
    text = timeline.text_timeline(tls["stack"])
    assert "one column = 5 ticks" in text  # a 282-tick run at most 80 columns wide
    stack = rows_of(text)
    assert list(stack)[:4] == ["irq", "high", "mid", "low"]  # highest priority on top
    assert columns(stack["irq"], timeline.IRQ_MARK) == [0, 2, 4]  # ticks 1, 11, 21
    assert columns(stack["high"], timeline.RUNNING) == covering(31, 61)
    assert columns(stack["mid"], timeline.PREEMPTED) == covering(31, 61)
    assert columns(stack["mid"], timeline.RUNNING) == covering(21, 31) + covering(61, 101)
    assert columns(stack["low"], timeline.PREEMPTED) == covering(21, 101)
    assert columns(stack["low"], timeline.RUNNING) == covering(1, 21) + covering(101, 281)
    fifo = rows_of(timeline.text_timeline(tls["fifo"]))
    assert columns(fifo["mid"], timeline.WAITING) == covering(21, 201)
    assert columns(fifo["high"], timeline.WAITING) == covering(211, 251)
    assert columns(fifo["high"], timeline.RUNNING) == covering(251, 281)
    assert timeline.PREEMPTED not in "".join(fifo.values())


def test_pngs_are_written(tls: dict[str, Timeline], tmp_path: Path) -> None:
    written = timeline.generate(tls, tmp_path / "doc.md", tmp_path / "pics")
    for model in timeline.MODEL_NAMES:
        png = tmp_path / "pics" / f"timeline-{model}.png"
        assert png in written and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
        assert f"](pics/timeline-{model}.png)" in (tmp_path / "doc.md").read_text()


def test_committed_document_is_what_the_generator_produces(tls: dict[str, Timeline]) -> None:
    expected = timeline.render_markdown(tls, DOC, IMG)
    assert DOC.is_file(), "docs/execution-models.md is missing: run ./tern docs timeline"
    assert DOC.read_text(encoding="utf-8") == expected, "docs/execution-models.md is stale: run ./tern docs timeline"
    for model in timeline.MODEL_NAMES:
        assert (IMG / f"timeline-{model}.png").is_file(), f"docs/img/timeline-{model}.png is missing"


def test_cli_from_saved_outputs(outputs: list[tuple[str, str]], tls: dict[str, Timeline], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    args = ["docs", "timeline", "--out", str(tmp_path / "em.md")]
    for i, (_, text) in enumerate(outputs):
        (tmp_path / f"run{i}.txt").write_text(text)
        args += ["--input", str(tmp_path / f"run{i}.txt")]
    assert main(args) == 0
    assert (tmp_path / "em.md").read_text() == timeline.render_markdown(tls, tmp_path / "em.md", tmp_path / "img")
    assert (tmp_path / "img" / "timeline-stack.png").is_file()
    assert main(args[:-2]) == 1  # only two models given
    assert capsys.readouterr().err.strip().endswith("no demo output for model(s) stack")


# --------------------------------------------------------------------------- bad input


def ev(time: int, kind: EventType, a: int = 0, b: int = 0) -> Event:
    return Event(time, kind, a, b)


def console(model: str, events: list[Event]) -> str:
    return f"MODEL {model}\n" + trace.encode_events(events)


GOOD = [ev(1, EventType.POST, LOW, 8), ev(1, EventType.HANDLER_START, LOW, 8), ev(9, EventType.HANDLER_END, LOW, 8)]


def test_a_small_hand_made_trace_derives() -> None:
    (r,) = timeline.derive("fifo", GOOD).runs
    assert (r.posted, r.start, r.end, r.spans, r.waited) == (1, 1, 9, [(1, 9)], 0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("T " + timeline.trace.encode_event(GOOD[0]) + "\n", "expected exactly one 'MODEL <name>' line, found 0"),
        (console("fifo", GOOD) + "MODEL stack\n", "found 2"),
        (console("fifo", GOOD) + "T 0102\n", "line 3: expected a multiple of 16 hex digits"),
    ],
)
def test_unreadable_output_is_an_error(text: str, message: str) -> None:
    with pytest.raises(TimelineError, match=re.escape(message)):
        timeline.parse_output(text, "run.txt")


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([], "printed no trace events"),
        (GOOD[:2], "handlers still running (low)"),
        (GOOD + [ev(10, EventType.POST, MID, 8)], "posted but never handled: mid (1)"),
        ([*GOOD, ev(10, EventType.OVERFLOW, 0, 7)], "7 trace events were lost"),
        ([*GOOD, ev(10, EventType.DROP, MID, 1)], "a message to mid was dropped"),
        ([ev(1, EventType.HANDLER_START, LOW), ev(2, EventType.HANDLER_START, MID), ev(3, EventType.HANDLER_END, LOW)],
         "handler of low ended while mid was on top"),  # fmt: skip
        ([ev(1, EventType.IRQ_EXIT)], "interrupt exit at tick 1 without an entry"),
    ],
)
def test_traces_that_cannot_be_drawn_are_errors(events: list[Event], message: str) -> None:
    with pytest.raises(TimelineError, match=re.escape(message)):
        timeline.derive("fifo", events)


def test_unknown_and_duplicate_models_are_errors() -> None:
    with pytest.raises(TimelineError, match="unknown model 'threads'"):
        timeline.timelines_from_outputs([("a", console("threads", GOOD))])
    with pytest.raises(TimelineError, match="a second run of model fifo"):
        timeline.timelines_from_outputs([("a", console("fifo", GOOD)), ("b", console("fifo", GOOD))])


def test_missing_binary_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(timeline.UsageError, match="timeline_demo_fifo does not exist"):
        timeline.run_demos(tmp_path)
