"""seed000_report: the tables, the reference comparison and the plots, from
a small results document made by hand."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from terntools import seed000_report as report


def run(model: str, n: int, ls: int, **values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": model, "n": n, "l_s_ms": ls, "jobs": 3, "E_t": 1050.0, "E_t_sd": 40.82, "E_t_p99": 1100.0,
        "I_t": 99.5, "I_max": 99.8, "I_o": 0.3, "I_p": 497500.0, "I_p_sd": 1000.0, "ctx_switches": 6,
        "preemptions": 0, "dropped": 0,
    }  # fmt: skip
    return {**base, **values}


RUNS = [
    run("fifo", 1, 1),
    # threads: 1200 us per job, no p99 known, no idle period
    run("threads", 1, 1, E_t=1200.0, E_t_sd=0.0, E_t_p99=None, I_t=99.4, I_o=0.4, I_p=None, I_p_sd=None,
        ctx_switches=12, preemptions=2, dropped=1),
]  # fmt: skip
DOC = {"board": "mps2-an385", "unit": "instructions", "cpu_hz": 4_000_000, "samples": 2, "seed": 1, "runs": RUNS,
       "failures": ["stack n=1 l_s=1ms: guest exited with status 3"], "skipped_models": ["adaptive"]}  # fmt: skip


def test_text_table() -> None:
    # I_p 497500 us is shown as 497.50 ms; a missing value is "-"; numbers right-aligned
    assert report.text_table(RUNS).splitlines() == [
        "model    n  l_s[ms]  jobs  E_t[us]  sd[us]  p99[us]  I_t[%]  I_max[%]  I_o[%]  I_p[ms]  ctx  preempt  dropped",
        "fifo     1        1     3   1050.0    40.8   1100.0  99.500    99.800   0.300   497.50    6        0        0",
        "threads  1        1     3   1200.0     0.0        -  99.400    99.800   0.400        -   12        2        1",
    ]


def test_markdown_table() -> None:
    lines = report.markdown_table(RUNS).splitlines()
    assert lines[1] == "|---|" + "---:|" * 13
    assert lines[3] == "| threads | 1 | 1 | 3 | 1200.0 | 0.0 | - | 99.400 | 99.800 | 0.400 | - | 12 | 2 | 1 |"


def reference_row(text: str, what: str) -> str:
    rows = [line for line in text.splitlines() if line.startswith(f"| {what} |")]
    assert len(rows) == 1, what
    return rows[0].rsplit("|", 2)[1].strip()


def test_markdown_report_compares_with_the_paper() -> None:
    text = report.markdown_report(DOC)
    assert text.startswith("# Seed 000 benchmark on mps2-an385\n")
    assert "Models not available on this board: adaptive." in text
    assert "- stack n=1 l_s=1ms: guest exited with status 3" in text
    # 1200 / 1050 - 1 = 14.29 %
    assert reference_row(text, "E_t, MANTIS vs TinyOS, n=1, l_s=1 ms") == "threads E_t is 14.3 % longer than fifo"
    # E_t * 4 MHz - 4000: 1050 us -> 200, 1200 us -> 800, in the board's unit
    assert reference_row(text, "MANTIS interrupt-to-task cost") == (
        "E_t - l_p at n=1, l_s=1 ms: fifo 200 instructions; threads 800 instructions"
    )
    # 99.5 - 99.4 = 0.10 points
    assert reference_row(text, "idle time difference, n=1, l_s=1 ms") == "fifo - threads = 0.10 points"
    assert reference_row(text, "idle period length I_p, n=1, l_s=1 ms") == "fifo 497.5 ms; threads n/a"
    assert reference_row(text, "idle time difference, n=8, l_s=1 ms") == "n/a (needs fifo and threads at n=8, l_s=1 ms)"


def test_sd_plot_takes_the_papers_l_s_or_the_extremes() -> None:
    assert report.sd_plot_ls([1, 5, 75, 100]) == [75, 1]
    assert report.sd_plot_ls([5, 10, 25]) == [25, 5]
    assert report.sd_plot_ls([]) == []


def test_plots_are_written(tmp_path: Path) -> None:
    runs = [run(m, n, ls, E_t=1000.0 + 10 * n + ls) for m in ("fifo", "threads") for n in (1, 2) for ls in (1, 75)]
    paths = report.write_plots(runs, tmp_path / "plots")
    assert [p.name for p in paths] == [
        "seed000_E_t.png", "seed000_E_t_sd.png", "seed000_I_t.png", "seed000_I_o.png", "seed000_I_p.png",
    ]  # fmt: skip
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = report.markdown_report({**DOC, "runs": runs}, paths, tmp_path)
    assert "![seed000_E_t](plots/seed000_E_t.png)" in text
    assert report.write_plots([], tmp_path / "none") == []


def test_stack_stands_in_for_threads_when_there_is_none() -> None:
    runs = [run("fifo", 1, 1), run("stack", 1, 1, E_t=1100.0, I_t=99.45, I_o=0.35), run("priority", 1, 1)]
    text = report.markdown_report({**DOC, "runs": runs})
    assert "There is no `threads` run here, so the comparisons set `stack` (preemptive)" in text
    # 1100 / 1050 - 1 = 4.76 %; 99.5 - 99.45 = 0.05 points
    assert reference_row(text, "E_t, MANTIS vs TinyOS, n=1, l_s=1 ms") == "stack E_t is 4.8 % longer than fifo"
    assert reference_row(text, "idle time difference, n=1, l_s=1 ms") == "fifo - stack = 0.05 points"
    # with threads present, threads is the one compared and nothing stands in
    assert "stands in" not in report.markdown_report(DOC) and "There is no" not in report.markdown_report(DOC)


def test_dispatch_cost_uses_the_fastest_job_when_known() -> None:
    # E_t_min 1100 us = 4400 cycles at 4 MHz: 400 beyond l_p; 1097.25 us -> 4389 -> 389
    runs = [run("fifo", 1, 1, E_t_min=1100.0), run("stack", 1, 1, E_t_min=1097.25, E_t=1000.0)]
    text = report.markdown_report({**DOC, "runs": runs})
    assert reference_row(text, "MANTIS interrupt-to-task cost") == (
        "min e - l_p at n=1, l_s=1 ms: fifo 400 instructions; stack 389 instructions"
    )
    # 1000 / 1050 - 1 = -4.8 %: said as "shorter"
    assert reference_row(text, "E_t, MANTIS vs TinyOS, n=1, l_s=1 ms") == "stack E_t is 4.8 % shorter than fifo"


def test_targets_are_checked_against_the_runs() -> None:
    runs = [
        run("stack", 1, 1, E_t=1040.0, I_o=0.40), run("stack", 1, 75, E_t=1049.9, E_t_sd=20.5, I_o=0.90),
        run("fifo", 1, 1, E_t=1100.0, I_o=0.35), run("fifo", 1, 75, E_t=1700.0, I_o=0.30),
        run("threads", 1, 1, E_t=1200.0), run("threads", 1, 75, E_t=1261.0),
    ]  # fmt: skip
    got = {t.what.split(":")[-1].strip() if t.what.startswith("`stack`") else t.what: (t.measured, t.met)
           for t in report.targets(report.RunIndex(runs), 4_000_000)}
    assert got["E_t <= 1.05 l_p (1050 us)"] == ("1049.9 us", True)
    assert got["sd(E_t) <= 20 us"] == ("20.5 us", False)
    # 0.90 - 0.30 at l_s = 75 ms is the largest excess
    assert got["I_o of `stack` <= I_o of `fifo` + 0.5 points, every n and l_s"] == (
        "largest excess +0.60 points (n = 1, l_s = 75 ms)", False)
    fifo = next(v for k, v in got.items() if k.startswith("`fifo`"))
    threads = next(v for k, v in got.items() if k.startswith("`threads`"))
    assert fifo == ("75 ms / 1 ms = 1.545", True)
    assert threads == ("75 ms / 1 ms = 1.051", False)


def test_targets_without_the_runs_are_not_judged() -> None:
    # RUNS has no stack run and a single l_s: nothing can be told
    assert [t.met for t in report.targets(report.RunIndex(RUNS), 4_000_000)] == [None] * 5


def test_report_links_plots_relative_to_itself(tmp_path: Path) -> None:
    plot = tmp_path / "out" / "plots" / "seed000_E_t.png"
    text = report.markdown_report(DOC, [plot], tmp_path / "out")
    assert "![seed000_E_t](plots/seed000_E_t.png)" in text
    assert "## Targets (issue 6; benchmarks, not tests)" in text


def test_headline_is_the_lightest_and_busiest_node_at_short_and_long_sensing() -> None:
    runs = [run(m, n, ls) for m in ("fifo", "stack") for n in (1, 4, 8) for ls in (1, 25, 75)]
    picked = [(r["model"], r["n"], r["l_s_ms"]) for r in report.headline_runs(runs)]
    assert picked == [(m, n, ls) for m in ("fifo", "stack") for n in (1, 8) for ls in (1, 75)]
    text = report.markdown_report({**DOC, "runs": runs})
    assert text.index("## Headline (n = 1, 8; l_s = 1, 75 ms)") < text.index("## Results")
    # a sweep that is its own headline gets no second copy
    assert "## Headline" not in report.markdown_report(DOC)


def test_a_merged_document_says_which_run_has_which_length_and_commit() -> None:
    headline = [run(m, n, ls, samples=50, commit="bbb") for m in ("fifo", "stack") for n in (1, 8) for ls in (1, 75)]
    rest = [run("fifo", 2, 1, samples=10, commit="aaa"), run("stack", 2, 75, samples=10, commit="aaa")]
    runs = headline[:4] + rest[:1] + headline[4:] + rest[1:]
    assert report.provenance(runs) == (
        "The runs differ in length and commit (the periods and commit columns say which is which): "
        "50 sensing periods of 1 s, commit bbb: the headline runs (n = 1, 8; l_s = 1, 75 ms); "
        "10 sensing periods of 1 s, commit aaa: the other 2 runs.")  # fmt: skip
    lines = report.markdown_table(runs).splitlines()
    assert lines[0].endswith("| dropped | periods | commit |") and lines[1] == "|---|" + "---:|" * 15
    assert lines[2].endswith("| 0 | 50 | bbb |")
    # one length and one commit: no extra columns, one phrase
    assert report.provenance(rest[:1]) == "Samples (1 s sensing periods) per run: 10, commit aaa."
    assert report.markdown_table(rest).splitlines()[0].endswith("| dropped |")


def test_targets_do_not_set_runs_of_different_length_against_each_other() -> None:
    runs = [run("threads", 1, 1, E_t=1000.0, samples=50, commit="b"), run("threads", 1, 5, E_t=1400.0, samples=10, commit="a"),
            run("threads", 1, 100, E_t=1410.0, samples=10, commit="a"),
            run("fifo", 8, 75, I_o=20.0, samples=50, commit="b"), run("stack", 8, 75, I_o=20.2, samples=50, commit="b"),
            run("fifo", 8, 100, I_o=20.0, samples=10, commit="a"), run("stack", 8, 100, I_o=25.0, samples=50, commit="b")]  # fmt: skip
    got = {t.what: (t.measured, t.met) for t in report.targets(report.RunIndex(runs), 4_000_000)}
    # 1 ms (50 periods) against 100 ms (10) would be 1.41: only the 5 and 100 ms runs of one sweep count
    assert got["`threads` E_t at n = 1 stays flat (within 5 % from the shortest to the longest l_s)"] == (
        "100 ms / 5 ms = 1.007", True)
    # stack's 25.0 at l_s = 100 ms is of another sweep than fifo's 20.0 there
    assert got["I_o of `stack` <= I_o of `fifo` + 0.5 points, every n and l_s"] == (
        "largest excess +0.20 points (n = 8, l_s = 75 ms)", True)
