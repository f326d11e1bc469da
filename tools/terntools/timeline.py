"""docs/execution-models.md: one event sequence drawn under every execution model.

The sequence is tests/unit/timeline_demo.c, built by the host build once per
model (build/host/tests/unit/timeline_demo_<model>). Each binary prints
"MODEL <name>" and the kernel's trace ("T <hex>" lines, decoded with
terntools.trace). From the trace this module derives, per handler run, when its
message was posted, when it started, the spans it actually ran (it is the top
of the stack and no interrupt is active) and when it ended; it draws that as a
text timeline for a markdown code block and as a PNG, and writes the whole
markdown file from TEMPLATE below, so the document is regenerated, never
edited: `./tern docs timeline`.
"""
from __future__ import annotations

import os
import shutil
import string
import subprocess
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from terntools import trace
from terntools.errors import TernError, UsageError
from terntools.trace import Event, EventType

# (model, the system it stands for), in the order the document shows them.
MODELS: tuple[tuple[str, str], ...] = (
    ("fifo", "TinyOS"),
    ("priority", "SOS"),
    ("stack", "CoMOS / Stack Resource Policy"),
)
MODEL_NAMES = tuple(name for name, _ in MODELS)


@dataclass(frozen=True)
class DemoTask:
    name: str
    priority: int


# The task table of tests/unit/timeline_demo.c, by task id (the trace carries
# only ids); tools/tests/test_timeline.py checks the two agree.
DEMO_TASKS: dict[int, DemoTask] = {0: DemoTask("low", 1), 1: DemoTask("mid", 4), 2: DemoTask("high", 6)}

RUNNING, PREEMPTED, WAITING, IDLE = "█", "░", "·", " "
IRQ_MARK = "↓"
MAX_COLUMNS = 80  # text timeline width in time columns, so it fits a code block


class TimelineError(TernError):
    """A demo run that cannot be drawn (missing model, broken or lossy trace)."""


# --------------------------------------------------------------------------- derivation


@dataclass
class Run:
    """One handler run (a job) and the spans in which it had the CPU."""

    task: int
    start: int
    posted: int | None = None  # None: posted before the trace began
    sender: int | None = None  # task that posted the message; None: an interrupt (or unknown)
    nth: int = 0  # 1 for the first message to this task in the trace, 2 for the next...
    end: int = -1
    depth: int = 0  # handlers below it on the stack when it started
    spans: list[tuple[int, int]] = field(default_factory=list)  # [from, to) it ran

    @property
    def waited(self) -> int | None:
        return None if self.posted is None else self.start - self.posted

    @property
    def response(self) -> int | None:
        return None if self.posted is None else self.end - self.posted

    @property
    def ran(self) -> int:
        return sum(b - a for a, b in self.spans)

    @property
    def preempted(self) -> int:
        """Ticks between start and end in which something else had the CPU."""
        return self.end - self.start - self.ran

    def preempted_spans(self) -> list[tuple[int, int]]:
        out, at = [], self.start
        for a, b in self.spans:
            if a > at:
                out.append((at, a))
            at = b
        if self.end > at:
            out.append((at, self.end))
        return out


@dataclass
class Timeline:
    """Everything one demo run shows: its handler runs and its interrupts."""

    model: str
    runs: list[Run]  # in start order
    irqs: list[tuple[int, int]]  # [enter, exit) of each outermost interrupt
    posts: list[tuple[int, int, bool]]  # (time, dst task, from an interrupt)
    preemptions: list[tuple[int, int, int]]  # (time, preempting task, preempted task)
    end: int  # time of the last event

    def tasks(self) -> list[int]:
        """Task ids, highest priority first (unknown tasks last, by id)."""
        ids = {r.task for r in self.runs} | {dst for _, dst, _ in self.posts}
        return sorted(ids, key=lambda t: (-DEMO_TASKS[t].priority if t in DEMO_TASKS else 1, t))

    def runs_of(self, task: int) -> list[Run]:
        return [r for r in self.runs if r.task == task]


def task_name(task: int) -> str:
    return DEMO_TASKS[task].name if task in DEMO_TASKS else f"task{task}"


class _Walker:
    """Replays the events, keeping the handler stack and who has the CPU."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.stack: list[Run] = []
        self.done: list[Run] = []
        self.pending: dict[int, deque[tuple[int, int | None, int]]] = {}  # (time, sender, nth)
        self.post_count: dict[int, int] = {}
        self.irq_depth = 0
        self.irq_from = 0
        self.irqs: list[tuple[int, int]] = []
        self.posts: list[tuple[int, int, bool]] = []
        self.preemptions: list[tuple[int, int, int]] = []
        self.cpu_since: int | None = None  # when the top of the stack got the CPU

    def _stop_top(self, now: int) -> None:
        if self.stack and self.cpu_since is not None:
            spans = self.stack[-1].spans
            if spans and spans[-1][1] == self.cpu_since:  # a zero-time interrupt: one span
                spans[-1] = (spans[-1][0], now)
            elif now > self.cpu_since:
                spans.append((self.cpu_since, now))
        self.cpu_since = None

    def _resume_top(self, now: int) -> None:
        if self.stack and self.irq_depth == 0:
            self.cpu_since = now

    def event(self, ev: Event) -> None:
        kind = ev.type
        if kind is EventType.POST:
            from_irq = self.irq_depth > 0
            sender = None if from_irq or not self.stack else self.stack[-1].task
            self.post_count[ev.a] = self.post_count.get(ev.a, 0) + 1
            self.pending.setdefault(ev.a, deque()).append((ev.time, sender, self.post_count[ev.a]))
            self.posts.append((ev.time, ev.a, from_irq))
        elif kind is EventType.HANDLER_START:
            self._stop_top(ev.time)
            waiting = self.pending.get(ev.a)
            # Messages to one task are equal in priority, so they run in posting order.
            posted, sender, nth = waiting.popleft() if waiting else (None, None, 0)
            self.stack.append(Run(ev.a, ev.time, posted, sender, nth, depth=len(self.stack)))
            self._resume_top(ev.time)
        elif kind is EventType.HANDLER_END:
            if not self.stack or self.stack[-1].task != ev.a:
                top = task_name(self.stack[-1].task) if self.stack else "nothing"
                raise TimelineError(
                    f"{self.model}: at tick {ev.time} the handler of {task_name(ev.a)} ended while {top} "
                    "was on top of the stack; the run-to-completion models end handlers in stack order"
                )
            self._stop_top(ev.time)
            run = self.stack.pop()
            run.end = ev.time
            self.done.append(run)
            self._resume_top(ev.time)
        elif kind is EventType.IRQ_ENTER:
            if self.irq_depth == 0:
                self._stop_top(ev.time)
                self.irq_from = ev.time
            self.irq_depth += 1
        elif kind is EventType.IRQ_EXIT:
            if self.irq_depth == 0:
                raise TimelineError(f"{self.model}: interrupt exit at tick {ev.time} without an entry")
            self.irq_depth -= 1
            if self.irq_depth == 0:
                self.irqs.append((self.irq_from, ev.time))
                self._resume_top(ev.time)
        elif kind is EventType.PREEMPT:
            self.preemptions.append((ev.time, ev.a, ev.b))
        elif kind is EventType.OVERFLOW:
            raise TimelineError(f"{self.model}: {ev.b} trace events were lost (ring full); the timeline would be wrong")
        elif kind is EventType.DROP:
            raise TimelineError(f"{self.model}: a message to {task_name(ev.a)} was dropped (reason {ev.b}) at tick {ev.time}")


def derive(model: str, events: Sequence[Event]) -> Timeline:
    """The timeline of one run; a trace the document cannot show truthfully is an error."""
    if not events:
        raise TimelineError(f"{model}: the run printed no trace events")
    walker = _Walker(model)
    for ev in events:
        walker.event(ev)
    if walker.stack:
        names = ", ".join(task_name(r.task) for r in walker.stack)
        raise TimelineError(f"{model}: the trace ended with handlers still running ({names}); the demo must run longer")
    left = {t: len(q) for t, q in walker.pending.items() if q}
    if left:
        names = ", ".join(f"{task_name(t)} ({n})" for t, n in sorted(left.items()))
        raise TimelineError(f"{model}: messages posted but never handled: {names}")
    runs = sorted(walker.done, key=lambda r: (r.start, r.depth))
    return Timeline(model, runs, walker.irqs, walker.posts, walker.preemptions, events[-1].time)


def parse_output(text: str, where: str = "demo output") -> tuple[str, list[Event]]:
    """The model named on the "MODEL <name>" line and the decoded trace events."""
    models = [line.split()[1] for line in text.splitlines() if line.startswith("MODEL ") and len(line.split()) == 2]
    if len(models) != 1:
        raise TimelineError(f"{where}: expected exactly one 'MODEL <name>' line, found {len(models)}")
    try:
        events = trace.decode_console(text)
    except trace.TraceError as exc:
        raise TimelineError(f"{where}: {exc}") from None
    return models[0], events


def timelines_from_outputs(outputs: Iterable[tuple[str, str]]) -> dict[str, Timeline]:
    """One timeline per model from (where, console text) pairs; all three models are required."""
    found: dict[str, Timeline] = {}
    for where, text in outputs:
        model, events = parse_output(text, where)
        if model not in MODEL_NAMES:
            raise TimelineError(f"{where}: unknown model {model!r} (expected one of {', '.join(MODEL_NAMES)})")
        if model in found:
            raise TimelineError(f"{where}: a second run of model {model}")
        found[model] = derive(model, events)
    missing = [m for m in MODEL_NAMES if m not in found]
    if missing:
        raise TimelineError(f"no demo output for model(s) {', '.join(missing)}")
    return {m: found[m] for m in MODEL_NAMES}


# --------------------------------------------------------------------------- running the demos


def demo_binary(build_dir: Path, model: str) -> Path:
    return build_dir / "tests" / "unit" / f"timeline_demo_{model}"


def build_demos(build_dir: Path, source_dir: Path) -> None:
    """Configure the host build if needed and (re)build the three demo binaries."""
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            raise TimelineError(f"{tool} is not installed (make apt installs it)")
    steps = []
    if not (build_dir / "CMakeCache.txt").is_file():
        steps.append(["cmake", "-S", str(source_dir), "-B", str(build_dir), "-G", "Ninja"])
    steps.append(["cmake", "--build", str(build_dir), "--target", *(demo_binary(build_dir, m).name for m in MODEL_NAMES)])
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
            raise TimelineError(f"{' '.join(cmd)} failed with status {proc.returncode}:\n{tail}")


def run_demos(build_dir: Path, timeout: float = 60.0) -> list[tuple[str, str]]:
    """(binary path, stdout) of every demo binary."""
    outputs = []
    for model in MODEL_NAMES:
        exe = demo_binary(build_dir, model)
        if not exe.is_file():
            raise UsageError(f"{exe} does not exist (build the host tree: cmake --build {build_dir})")
        try:
            proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TimelineError(f"{exe} did not finish within {timeout:g} s") from None
        if proc.returncode != 0:
            raise TimelineError(f"{exe} exited with status {proc.returncode}: {proc.stderr.strip()}")
        outputs.append((str(exe), proc.stdout))
    return outputs


# --------------------------------------------------------------------------- text


def _nice_step(span: int, columns: int) -> int:
    """Ticks per column: the smallest of 1, 2, 5, 10, 20, 50, ... that fits."""
    step, mults = 1, (1, 2, 5)
    while True:
        for m in mults:
            if span <= (step * m) * columns:
                return step * m
        step *= 10


def _inside(spans: Iterable[tuple[int, int]], t: float) -> bool:
    return any(a <= t < b for a, b in spans)


def text_timeline(tl: Timeline, columns: int = MAX_COLUMNS) -> str:
    """Rows: the interrupt row, then one per task (highest priority on top).

    Each column covers `step` ticks and shows the state at its middle, so a
    span shorter than a column can fall between two samples; the exact ticks
    are in the table under every timeline.
    """
    last = max((r.end for r in tl.runs), default=tl.end)
    step = _nice_step(last + 1, columns)
    n = (last + step) // step + 1  # one empty column after the last handler
    mids = [c * step + step / 2 for c in range(n)]
    label_width = max(len("ticks"), len("irq"), *(len(task_name(t)) for t in tl.tasks()))
    rows = []

    irq_cells = [" "] * n
    for a, _b in tl.irqs:
        irq_cells[min(a // step, n - 1)] = IRQ_MARK
    rows.append(f"{'irq':<{label_width}} {''.join(irq_cells).rstrip()}")
    for task in tl.tasks():
        runs = tl.runs_of(task)
        running = [s for r in runs for s in r.spans]
        preempted = [s for r in runs for s in r.preempted_spans()]
        waiting = [(r.posted, r.start) for r in runs if r.posted is not None]
        cells = []
        for t in mids:
            if _inside(running, t):
                cells.append(RUNNING)
            elif _inside(preempted, t):
                cells.append(PREEMPTED)
            elif _inside(waiting, t):
                cells.append(WAITING)
            else:
                cells.append(IDLE)
        rows.append(f"{task_name(task):<{label_width}} {''.join(cells).rstrip()}")

    label_every = 10  # columns between numbered ticks
    ruler = "".join("|" if c % label_every == 0 else ("+" if c % 5 == 0 else "-") for c in range(n))
    numbers = [" "] * (n + 8)
    for c in range(0, n, label_every):
        for i, ch in enumerate(str(c * step)):
            numbers[c + i] = ch
    rows.append(f"{'':<{label_width}} {ruler}")
    rows.append(f"{'ticks':<{label_width}} {''.join(numbers).rstrip()}")
    rows.append(
        f"{'':<{label_width}} one column = {step} ticks; {RUNNING} running  {PREEMPTED} preempted (on the stack)  "
        f"{WAITING} posted, waiting  {IRQ_MARK} interrupt"
    )
    return "\n".join(rows)


def _cell(value: int | None) -> str:
    return "-" if value is None else str(value)


def runs_table(tl: Timeline) -> str:
    """Markdown table of the handler runs of one model, in start order."""
    head = "| message | priority | posted | start | end | waited | preempted | response | stack depth |\n"
    head += "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n"
    lines = []
    for r in tl.runs:
        prio = DEMO_TASKS[r.task].priority if r.task in DEMO_TASKS else "?"
        lines.append(
            f"| {message_label(r)} | {prio} | {_cell(r.posted)} | {r.start} | {r.end} | {_cell(r.waited)} "
            f"| {r.preempted} | {_cell(r.response)} | {r.depth} |\n"
        )
    return head + "".join(lines)


def message_label(run: Run) -> str:
    """Names a message the same way in every model: its task, ordinal and sender."""
    source = "an interrupt" if run.sender is None else task_name(run.sender)
    return f"{task_name(run.task)} #{run.nth}, from {source}"


def response_table(timelines: Mapping[str, Timeline]) -> str:
    """Markdown table: response time (post to end of its handler) of every message, one column per model.

    A message is keyed by its task and ordinal (the 2nd message to mid is the
    same message in every model, though it is posted at a different tick).
    """
    models = list(timelines)
    head = "| message | " + " | ".join(models) + " |\n|---|" + "--:|" * len(models) + "\n"
    keyed = {m: {(r.task, r.nth): r for r in tl.runs if r.posted is not None} for m, tl in timelines.items()}
    first: dict[tuple[int, int], Run] = {}
    for m in reversed(models):  # label each message by its run in the first model
        first.update(keyed[m])
    keys = sorted(first, key=lambda k: (min(keyed[m][k].posted or 0 for m in models if k in keyed[m]), k))
    lines = []
    for key in keys:
        cells = [_cell(keyed[m][key].response) if key in keyed[m] else "-" for m in models]
        lines.append(f"| {message_label(first[key])} | " + " | ".join(cells) + " |\n")
    return head + "".join(lines)


# --------------------------------------------------------------------------- PNG

_COLOURS = {0: "#4c72b0", 1: "#dd8452", 2: "#c44e52"}


def write_png(tl: Timeline, path: Path, title: str) -> None:
    """Gantt-style picture of one run: solid = running, hatched = preempted, line = waiting."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    tasks = tl.tasks()
    rows = ["irq", *(task_name(t) for t in tasks)]
    y = {name: len(rows) - 1 - i for i, name in enumerate(rows)}
    last = max((r.end for r in tl.runs), default=tl.end)
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(rows) + 1.1), dpi=100)
    for task in tasks:
        row = y[task_name(task)]
        colour = _COLOURS.get(task, "#8172b3")
        for r in tl.runs_of(task):
            if r.posted is not None and r.start > r.posted:
                ax.plot([r.posted, r.start], [row - 0.38, row - 0.38], color="grey", linewidth=1.5, linestyle=":")
            ax.broken_barh([(a, b - a) for a, b in r.spans], (row - 0.3, 0.6), facecolors=colour,
                           edgecolors="black", linewidth=0.6)  # fmt: skip
            ax.broken_barh([(a, b - a) for a, b in r.preempted_spans()], (row - 0.3, 0.6),
                           facecolors="white", edgecolors=colour, hatch="///")  # fmt: skip
    for time, dst, from_irq in tl.posts:
        if from_irq:
            ax.annotate("", xy=(time, y["irq"] - 0.3), xytext=(time, y["irq"] + 0.35),
                        arrowprops={"arrowstyle": "-|>", "color": "black"})  # fmt: skip
            # upright, so interrupts a few ticks apart keep their labels apart
            ax.annotate(task_name(dst), xy=(time, y["irq"]), xytext=(2, 0), textcoords="offset points",
                        fontsize=7, ha="left", va="center", rotation=90)  # fmt: skip
        else:
            row = y[task_name(dst)]
            ax.plot([time], [row + 0.42], marker="v", color="black", markersize=6)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    legend = [
        Patch(facecolor="grey", edgecolor="black", label="running"),
        Patch(facecolor="white", edgecolor="grey", hatch="///", label="preempted (on the stack)"),
        Line2D([], [], color="grey", linestyle=":", label="posted, waiting"),
        Line2D([], [], color="black", marker="v", linestyle="", label="posted by a handler"),
    ]
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=4, fontsize=8, frameon=False)
    ax.set_yticks([y[name] for name in rows], rows)
    ax.set_xlim(0, last + max(5, last // 20))
    ax.set_ylim(-0.7, len(rows) - 0.4)
    ax.set_xlabel("time [ticks]")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Software": None})  # no version string: regenerating changes nothing
    plt.close(fig)


# --------------------------------------------------------------------------- the document

TEMPLATE = """\
# Execution models

<!-- Generated by `./tern docs timeline` from tools/terntools/timeline.py (prose: TEMPLATE there)
     and a real host run of tests/unit/timeline_demo.c; do not edit by hand.
     tools/tests/test_timeline.py fails when this file is stale. -->

A tern application is a set of tasks that exchange messages; a message to a
task runs that task's handler for the message's port. Handlers never block:
every model here runs each handler to completion on **one stack** shared by
all tasks, and what the model decides is *which* ready message runs next and
*whether* it may start before the running handler has returned. The model is
chosen when the kernel is built (`-DTERN_MODEL=fifo|priority|stack`, the
policy is one file `kernel/policy_<model>.c`); the application is the same.

| model | concept | behaviour |
|---|---|---|
| `fifo` | TinyOS | run to completion on one stack, in arrival order; only interrupts preempt |
| `priority` | SOS | as fifo, highest destination priority first |
| `stack` | CoMOS / Stack Resource Policy | a post to an equal or higher priority task runs it at once, nested on the one stack; from an interrupt only a strictly higher priority preempts |

## fifo (TinyOS)

TinyOS has two levels: interrupts, which may preempt anything, and tasks,
posted to a FIFO queue and each run to completion. In tern a posted message
joins the end of one queue whatever its destination's priority, and a handler
starts only when the one before it has returned. Interrupts preempt handlers,
but they only post messages; they never start one.

**Why the high-priority job waits.** Once a long handler has started, nothing
can stop it, and anything posted meanwhile is served in arrival order. A
message to the most urgent task therefore waits for the running handler *and*
for every message posted before it: its response time is bounded by the sum
of all the work queued ahead of it, not by its own work. Priorities are
ignored entirely. In the demo below, the interrupt at tick 21 posts to `mid`,
but `mid` starts only at 201, after both `low` messages (posted at 1 and 11)
have run; the message `mid` then posts to `high` (at 211) waits for the rest
of `mid`, so `high` responds in 70 ticks for 30 ticks of its own work.

## priority (SOS)

SOS keeps the non-preemptive run-to-completion semantics but sorts its
message queue by destination priority, then by posting order. A message to a
high-priority task still waits for the handler that is running (nothing
preempts it), but it overtakes every queued lower-priority message. In the
demo, `mid` (posted at 21) overtakes the second `low` message (posted earlier,
at 11), but only once the first `low` handler has returned at 101. The
message `mid` posts to `high` at 111 is queued until `mid` returns at 151;
`high` then also runs before the second `low`. Sorting helps only against
queued work: `high` still waits for the rest of its sender, 70 ticks in all.

## stack (CoMOS / Stack Resource Policy)

CoMOS (seed 002, section V-B) adds preemption without giving each task a
stack of its own: a handler that preempts another runs *on top of it on the
same stack*, like a function call, which is the single-stack sharing of
Baker's Stack Resource Policy. The rules, as `kernel/policy_stack.c` and
`kernel/sched.c` implement them:

1. **Every post is a preemption point.** The scheduler decides at the post
   whether the message's handler starts now or is queued.
2. **Posted by a handler:** if the destination task's priority is *equal to
   or higher than* the running handler's, its handler starts at once, nested
   above the sender on the same stack; the sender continues after the `send`
   when it returns.
3. **Posted by an interrupt:** the handler starts at once only if the
   priority is *strictly higher* than the running handler's, so that work
   already started because of an earlier interrupt keeps precedence and the
   order of events is preserved. It starts when the interrupt returns.
4. **Otherwise the message is queued,** sorted by destination priority, then
   by posting order.
5. **A task on the stack is not started again.** A message to a task whose
   handler is already running (or preempted) is queued until that handler
   has returned (CoMOS guards this with a flag per task).
6. **A preempted handler resumes only after everything above it has
   returned.** There is no swapping back: the stack unwinds in LIFO order.
   This is what lets one stack serve every task; with rule 5 at most one
   handler per task is on it, so its depth is bounded by the number of tasks.
7. **When a handler returns,** the first queued message runs if its priority
   is strictly higher than that of the handler now on top of the stack (and
   its task is not on the stack); otherwise the handler below resumes.

In the demo, the interrupt at tick 21 starts `mid` above the running `low`
the moment it returns (rule 3: 4 is above 1). At 31, 10 ticks into its work,
`mid` posts to `high`, and `high` runs at once, nested above `mid` (rule 2),
from 31 to 61: its response is its own 30 ticks of work. `mid` then continues
after its `send` and returns at 101, and only then does `low` resume (rule 6).
The second `low` message, posted by the interrupt at 11 (before `mid`'s),
waits behind the first `low` handler, which is on the stack: it does not
preempt it at 11 (rule 3: not strictly higher) and does not run when `mid`
returns at 101, although nothing else is queued (rule 7: not above `low`,
now on top; rule 5 would hold it as well). It runs when the first `low`
handler has returned, at 181.

## The demo sequence

`tests/unit/timeline_demo.c` on the host port (time is the host port's
virtual clock, in ticks; a handler's work advances it, nothing else does):

| task | priority | work per message |
|---|--:|--:|
| low | 1 | 100 ticks |
| mid | 4 | 50 ticks, and after its first 10 ticks it posts a message to `high` |
| high | 6 | 30 ticks |

Interrupts post to `low` at tick 1, to `low` again at tick 11 (a second
message, while the first may still be running) and to `mid` at tick 21.
Interrupt handlers here take no time. The three binaries differ only in
the policy file linked in; each prints its kernel trace, which
`./tern docs timeline` decodes (`tools/terntools/trace.py`) and draws.
Regenerate this file, and the pictures in `docs/img/`, with
`./tern docs timeline`.

Summary, response time (post to end of its handler) in ticks:

${responses}
${sections}"""

SECTION = """
## Timeline: ${model} (${concept})

```
${text}
```

![${model} timeline](${image})

${table}"""


def image_path(img_dir: Path, model: str) -> Path:
    return img_dir / f"timeline-{model}.png"


def render_markdown(timelines: Mapping[str, Timeline], out: Path, img_dir: Path) -> str:
    """The whole document; image links are relative to the document's folder."""
    concepts = dict(MODELS)
    sections = []
    for model, tl in timelines.items():
        image = Path(os.path.relpath(image_path(img_dir, model), out.resolve().parent)).as_posix()
        sections.append(
            string.Template(SECTION).substitute(
                model=model, concept=concepts[model], text=text_timeline(tl), image=image, table=runs_table(tl)
            )
        )
    return string.Template(TEMPLATE).substitute(responses=response_table(timelines), sections="".join(sections))


def generate(timelines: Mapping[str, Timeline], out: Path, img_dir: Path | None = None) -> list[Path]:
    """Write the document and one PNG per model; returns the files written."""
    img_dir = (img_dir or out.parent / "img").resolve()
    text = render_markdown(timelines, out, img_dir)
    written = []
    concepts = dict(MODELS)
    for model, tl in timelines.items():
        png = image_path(img_dir, model)
        write_png(tl, png, f"{model} ({concepts[model]}): timeline_demo on the host port")
        written.append(png)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror}") from None
    written.append(out)
    return written
