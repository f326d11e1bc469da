"""The verdict of a seed-000 sweep: which model wins each metric, by how
much, beside the paper's TinyOS and MANTIS figures.

Everything comes from the sweep's JSON (`tern bench seed000 --json`): the
runs, and for RAM the "sizes" object (`tern size` of each model's
seed000.elf, written by the same command). Lower wins for every metric:
E_t (mean forwarding time), sigma(E_t) (its standard deviation), I_o (OS
overhead: idle time the ideal OS would have and this one does not) and RAM
(data + bss of the image). A metric is judged at the unloaded node (n = 1)
and the loaded one (n = 8) of seed 000 Table I, at the sensing length for
which the paper gives a number.

TinyOS is `fifo`, MANTIS `threads` (seed000_report); without a `threads`
run the preemptive stand-in of seed000_report takes MANTIS' place.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from terntools.seed000_report import TINYOS, RunIndex

UNLOADED_N = 1
LOADED_N = 8


@dataclass(frozen=True)
class Metric:
    """A run key, how it is named and shown, and how a margin is said."""

    key: str
    name: str
    unit: str
    digits: int
    relative: bool  # margin in percent of the winner (else in the unit)


E_T = Metric("E_t", "E_t", "µs", 1, True)
E_T_SD = Metric("E_t_sd", "σ(E_t)", "µs", 1, False)
I_O = Metric("I_o", "I_o", "points", 2, False)


@dataclass(frozen=True)
class Case:
    """One line of the verdict: a metric at one (n, l_s), and what the paper says there."""

    metric: Metric
    n: int
    ls: int
    # (our comparison of TinyOS and MANTIS, the paper's); None: the paper has no number here
    paper: Callable[[RunIndex, str], str | None] | None


def _value(v: float, m: Metric) -> str:
    return f"{v:.{m.digits}f} {m.unit}"


def _longer(idx: RunIndex, a: str, b: str, n: int, ls: int) -> str | None:
    """'a is X % longer than b' for E_t at (n, l_s)."""
    va, vb = idx.get(a, n, ls, "E_t"), idx.get(b, n, ls, "E_t")
    if va is None or vb is None or vb == 0:
        return None
    change = (va / vb - 1) * 100
    return f"{a} {abs(change):.1f} % {'longer' if change >= 0 else 'shorter'} than {b}"


def _paper_et(slow: str, fast: str, figure: str, n: int, ls: int) -> Callable[[RunIndex, str], str | None]:
    def say(idx: RunIndex, mantis: str) -> str | None:
        names = {"TinyOS": TINYOS, "MANTIS": mantis}
        ours = _longer(idx, names[slow], names[fast], n, ls)
        return None if ours is None else f"{ours} here; {slow} {figure} longer than {fast} in the paper"

    return say


def _paper_sd(tinyos: str, mantis_figure: str, n: int, ls: int) -> Callable[[RunIndex, str], str | None]:
    def say(idx: RunIndex, mantis: str) -> str | None:
        a, b = idx.get(TINYOS, n, ls, "E_t_sd"), idx.get(mantis, n, ls, "E_t_sd")
        if a is None or b is None:
            return None
        return f"{TINYOS} {a:.1f} µs, {mantis} {b:.1f} µs here; TinyOS {tinyos}, MANTIS {mantis_figure} in the paper"

    return say


def _paper_idle(figure: str, n: int, ls: int) -> Callable[[RunIndex, str], str | None]:
    def say(idx: RunIndex, mantis: str) -> str | None:
        a, b = idx.get(TINYOS, n, ls, "I_t"), idx.get(mantis, n, ls, "I_t")
        if a is None or b is None:
            return None
        return (f"{TINYOS} idles {a - b:.2f} points more than {mantis} here; "
                f"TinyOS {figure} points more than MANTIS in the paper")  # fmt: skip

    return say


# The paper's numbers: seed000_report.REFERENCES (Sec. VII-VIII).
CASES: tuple[Case, ...] = (
    Case(E_T, UNLOADED_N, 1, _paper_et("MANTIS", "TinyOS", "17.15 %", 1, 1)),
    Case(E_T, UNLOADED_N, 75, _paper_et("TinyOS", "MANTIS", "204 %", 1, 75)),
    Case(E_T, LOADED_N, 75, None),
    Case(E_T_SD, UNLOADED_N, 75, _paper_sd("58 ms", "34 µs", 1, 75)),
    Case(E_T_SD, LOADED_N, 75, None),
    Case(I_O, UNLOADED_N, 1, _paper_idle("0.09", 1, 1)),
    Case(I_O, LOADED_N, 1, _paper_idle("7.6", 8, 1)),
    Case(I_O, LOADED_N, 75, _paper_idle("7.05", 8, 75)),
)
# seed 000 Table II (ATmega128 images)
PAPER_RAM = "TinyOS 283 B, MANTIS 287 B"


def _ranking(values: dict[str, float], digits: int) -> tuple[list[str], list[tuple[str, float]]]:
    """(the winners: every model equal to the best as shown, the others best first)."""
    order = sorted(values.items(), key=lambda kv: kv[1])
    best = round(order[0][1], digits)
    winners = [m for m, v in order if round(v, digits) == best]
    return winners, [(m, v) for m, v in order if m not in winners]


def _who(models: Sequence[str]) -> str:
    return models[0] if len(models) == 1 else ", ".join(models[:-1]) + " and " + models[-1]


def _case_line(idx: RunIndex, case: Case) -> str | None:
    m = case.metric
    values = {model: v for model in idx.models() if (v := idx.get(model, case.n, case.ls, m.key)) is not None}
    if not values:
        return None
    load = "unloaded" if case.n == UNLOADED_N else "loaded"
    head = f"- {m.name}, {load} (n = {case.n}, l_s = {case.ls} ms): "
    winners, rest = _ranking(values, m.digits)
    best = values[winners[0]]
    verb = "wins" if len(winners) == 1 else "tie"
    text = f"{_who(winners)} {verb} with {_value(best, m)}"
    if rest:
        other, v = rest[0]
        if m.relative and best > 0:
            margin = f"{(v / best - 1) * 100:.1f} %"
        else:
            margin = f"{v - best:.{m.digits}f} {m.unit}"
        text += f", {margin} below {other} ({_value(v, m)})"
    paper = case.paper(idx, idx.preemptive()) if case.paper else None
    if paper:
        text += f". TinyOS vs MANTIS: {paper}"
    return head + text + "."


def _ram_line(doc: dict[str, Any], idx: RunIndex) -> str:
    head = "- RAM (data + bss of seed000.elf, `tern size`; one image for every n): "
    sizes = doc.get("sizes")
    if not isinstance(sizes, dict):
        return head + "n/a (the JSON has no 'sizes'; `tern bench seed000` writes them when it builds the images)."
    ram = {m: int(s["ram"]) for m in idx.models() if isinstance(s := sizes.get(m), dict) and "ram" in s}
    if not ram:
        return head + "n/a (no size for any model of the runs)."
    winners, rest = _ranking({m: float(v) for m, v in ram.items()}, 0)
    best = ram[winners[0]]
    verb = "wins" if len(winners) == 1 else "tie"
    text = f"{_who(winners)} {verb} with {best} B"
    if rest:
        text += "; " + ", ".join(f"{m} +{ram[m] - best} B" for m, _ in rest)
    mantis = idx.preemptive()
    ours = [f"{m} {ram[m]} B" for m in (TINYOS, mantis) if m in ram]
    if ours:
        text += (f". TinyOS vs MANTIS: {', '.join(ours)} here, with the main stack, the message pool and any "
                 f"thread stacks; {PAPER_RAM} in the paper (ATmega128, Table II)")  # fmt: skip
    return head + text + "."


def verdict_lines(doc: dict[str, Any]) -> list[str]:
    """The verdict, one line per (metric, node): winner, margin to the next model, the paper."""
    idx = RunIndex(doc.get("runs", []))
    mantis = idx.preemptive()
    stand_in = "" if mantis == "threads" else f" (no threads run: {mantis} stands in for MANTIS)"
    samples = doc.get("samples")
    lines = [
        f"Verdict ({doc.get('board', '?')}, {samples if samples is not None else '?'} sensing periods a run; "
        f"lower wins; TinyOS = {TINYOS}, MANTIS = {mantis}{stand_in}):"
    ]
    for case in CASES:
        line = _case_line(idx, case)
        if line is not None:
            lines.append(line)
    lines.append(_ram_line(doc, idx))
    return lines


def verdict_text(doc: dict[str, Any]) -> str:
    return "\n".join(verdict_lines(doc)) + "\n"
