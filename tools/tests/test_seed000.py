"""The seed-000 driver: guest log parsing, the metrics of one run, the
consistency checks of a results document, the parameter block, and the
sweep with a fake emulator."""
from __future__ import annotations

import copy
import io
import math
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT, require_tool, run_checked

from terntools import seed000
from terntools.boards import Board
from terntools.errors import TernError, UsageError
from terntools.runner import RunResult
from terntools.seed000 import Config, Seed000Error, check_results, check_run, parse_guest_log, summarize

# A run of n = 1, l_s = 1 ms, 2 samples on mps2-an385 (25 MHz ticks, 5/8 instruction
# per tick, so one tick is 5/8 / 4 MHz = 0.15625 us of the scenario CPU).
#   jobs: e = 6400, 6720, 7040 ticks (= 1000, 1050, 1100 us); sum 20160,
#         sum of squares 40960000 + 45158400 + 49561600 = 135680000;
#         buckets (octave 12, 64 wide) 6400>>6 = 100 -> 7*64 + 36 = 484, 489, 494
#   idle: 2000000, 3000000, 3736000, 4000000 ticks; sum 12736000,
#         sum of squares 4e12 + 9e12 + 13.957696e12 + 16e12 = 42957696000000
#   T = 2 s of 4 MHz = 8e6 cycles = 8e6 * 8/5 = 12800000 ticks
#   seed 2 at n = 1: the generator's first gaps are 0.319, 0.183, 0.637, 1.068 s (cumulative
#         0.32, 0.50, 1.14, 2.21),
#         so 3 arrivals fall within 2 s
GOOD_LOG = """\
tern 0.1 on mps2-an385, model fifo
SEED000 BEGIN model=fifo n=1 ls_ms=1 samples=2 seed=2
SEED000 HIST sub_bits=6
H 484 1
H 489 1
H 494 1
SEED000 END T=12800000 arrivals=3 jobs=3 sensing=2 e_sum=20160 e_sumsq=135680000 e_min=6400 e_max=7040 \
idle_sum=12736000 idle_count=4 idle_sumsq=42957696000000 idle_max=4000000 ctx=6 preempt=0 dropped=0 \
max_queue=1 trace_cost=0
after the end: ignored
"""


def edited(old: str, new: str, text: str = GOOD_LOG) -> str:
    assert old in text, f"test bug: {old!r} is not in the log"
    return text.replace(old, new, 1)


# --------------------------------------------------------------------------- parsing


def test_parse_good_log() -> None:
    log = parse_guest_log(GOOD_LOG)
    assert (log.model, log.n, log.ls_ms, log.samples, log.seed) == ("fifo", 1, 1, 2, 2)
    assert log.hist_sub_bits == 6
    assert log.hist == {484: 1, 489: 1, 494: 1}
    assert (log.T, log.arrivals, log.jobs, log.sensing) == (12800000, 3, 3, 2)
    assert (log.e.count, log.e.total, log.e.total_sq, log.e.minimum, log.e.maximum) == (3, 20160, 135680000, 6400, 7040)
    assert (log.idle.count, log.idle.total, log.idle.minimum, log.idle.maximum) == (4, 12736000, None, 4000000)
    assert (log.ctx, log.preempt, log.dropped, log.max_queue, log.trace_cost) == (6, 0, 0, 1, 0)


def test_parse_accepts_crlf_and_unrelated_lines() -> None:
    text = edited("SEED000 HIST", "kernel: something else\nT 7856341204020201\nSEED000 HIST").replace("\n", "\r\n")
    assert parse_guest_log(text).hist == {484: 1, 489: 1, 494: 1}


def test_parse_a_run_without_jobs() -> None:
    text = GOOD_LOG.replace("H 484 1\nH 489 1\nH 494 1\n", "")
    text = edited("arrivals=3 jobs=3 sensing=2 e_sum=20160 e_sumsq=135680000 e_min=6400 e_max=7040",
                  "arrivals=0 jobs=0 sensing=2 e_sum=0 e_sumsq=0 e_min=0 e_max=0", text)  # fmt: skip
    log = parse_guest_log(text)
    assert log.jobs == 0 and log.hist == {}


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        (GOOD_LOG.replace("SEED000 BEGIN", "SEED000 BEGUN"), "unknown|no 'SEED000 BEGIN'"),
        (edited(" seed=2", ""), "line 2: missing field seed"),
        (edited("n=1 ", "n=x "), "line 2: field n='x' is not a non-negative decimal integer"),
        (edited("SEED000 HIST sub_bits=6\n", ""), "line 3: histogram line 'H 484 1' before the 'SEED000 HIST' line"),
        (edited("SEED000 HIST sub_bits=6\nH 484 1\nH 489 1\nH 494 1\n", ""), "no 'SEED000 HIST' line"),
        (edited("sub_bits=6", "sub_bits=0"), "line 3: field sub_bits=0 must be 1..24"),
        (edited("sub_bits=6", "bits=6"), "line 3: missing field sub_bits"),
        (edited("H 484 1", "H 484"), "line 4: malformed histogram line 'H 484'"),
        (edited("H 484 1", "H 484 one"), "line 4: malformed histogram line"),
        (edited("H 484 1", "H 1280 1"), "line 4: histogram bucket 1280 is out of range"),
        (edited("H 489 1", "H 484 1"), "line 5: histogram bucket 484 appears twice"),
        (edited("H 484 1", "H 484 0"), "line 4: histogram bucket 484 has count 0"),
        (edited("SEED000 END", "SEED000 EN"), "line 7: unknown seed-000 line"),
        (GOOD_LOG[: GOOD_LOG.index("SEED000 END")], "no 'SEED000 END' line .*stop early"),
        (edited(" e_sumsq=135680000", ""), "line 7: missing field e_sumsq"),
        (edited(" ctx=6 preempt=0", ""), "line 7: missing fields ctx, preempt"),
        (edited("jobs=3", "jobs=-3"), "line 7: field jobs='-3' is not a non-negative decimal integer"),
        (edited("e_max=7040", "e_max=7040.0"), "line 7: field e_max='7040.0'"),
        (edited("T=12800000", "T 12800000"), "line 7: expected key=value, got 'T'"),
        (edited("ctx=6", "ctx=6 ctx=7"), "line 7: field ctx appears twice"),
        (edited("e_sumsq=135680000", "e_sumsq=135000000"), r"line 7: the e aggregate \(jobs=3, e_sum=20160.*impossible"),
        (edited("idle_sumsq=42957696000000", "idle_sumsq=1"), "line 7: the idle aggregate .* impossible"),
        (edited("H 494 1\n", ""), "line 6: the histogram holds 2 jobs but field jobs=3"),
        (edited("H 494 1", "H 495 1"), "e_min=6400, e_max=7040 fall in buckets 484..494, but the histogram spans buckets 484..495"),
        (edited("e_max=7040", "e_max=4294967296"), "line 7: field e_max=4294967296 does not fit the guest's 32-bit"),
        (edited("T=12800000", "T=0"), "line 7: field T=0"),
        (edited("T=12800000", "T=12000000"), "line 7: field idle_sum=12736000 exceeds the window T=12000000"),
        (GOOD_LOG.replace("after the end: ignored\n", "") + "SEED000 BEGIN model=fifo n=1 ls_ms=1 samples=2 seed=1\n",
         "line 8: a second 'SEED000 BEGIN'"),
        ("", "no 'SEED000 BEGIN' line"),
    ],
)  # fmt: skip
def test_parse_refuses_malformed_logs(text: str, complaint: str) -> None:
    with pytest.raises(Seed000Error, match=complaint):
        parse_guest_log(text)


def test_parse_errors_are_tern_errors() -> None:
    # the CLI prints a TernError as one line and exits 1
    assert issubclass(Seed000Error, TernError) and Seed000Error("x").exit_status == 1


# --------------------------------------------------------------------------- metrics of a run


def test_summarize_on_mps2(mps2: Board) -> None:
    run = summarize(parse_guest_log(GOOD_LOG), mps2)
    # E_t = 6720 ticks * 0.15625 = 1050 us; sd = 320 sqrt(2/3) ticks = 50 sqrt(2/3) us
    assert run["E_t"] == pytest.approx(1050.0)
    assert run["E_t_sd"] == pytest.approx(50 * math.sqrt(2 / 3))
    assert run["E_t_min"] == pytest.approx(1000.0)
    assert run["E_t_max"] == pytest.approx(1100.0)
    # p50: bucket [6720, 6784) -> 6751.5 ticks = 1054.921875 us; p99: 7040 ticks = 1100 us
    assert run["E_t_p50"] == pytest.approx(1054.921875)
    assert run["E_t_p99"] == pytest.approx(1100.0)
    # I_t = 12736000 / 12800000 = 99.5 %; I_max (n=1, l_s=1 ms) = 99.8 %; I_o = 0.3 points
    assert run["I_t"] == pytest.approx(99.5)
    assert run["I_max"] == pytest.approx(99.8)
    assert run["I_o"] == pytest.approx(0.3)
    # the work done: 2 sensing jobs + 3 forwarding jobs of 4000 cycles in T = 8e6 cycles
    # (12.8e6 ticks * 5/8): I_max_run = 100 (1 - 20000 / 8e6) = 99.75 %, I_o_run = 0.25 points
    assert run["I_max_run"] == pytest.approx(99.75)
    assert run["I_o_run"] == pytest.approx(0.25)
    # I_p = 3184000 ticks = 497500 us; deviations (thousands of ticks) -1184, -184, 552, 816:
    # squares 1401856 + 33856 + 304704 + 665856 = 2406272, / 4 = 601568 -> sd 1000 sqrt(601568) ticks
    assert run["I_p"] == pytest.approx(497500.0)
    assert run["I_p_sd"] == pytest.approx(156.25 * math.sqrt(601568))
    assert run["I_p_max"] == pytest.approx(625000.0)
    assert run["idle_periods"] == 4
    assert run["T_s"] == pytest.approx(2.0)
    assert (run["jobs"], run["arrivals"], run["expected_arrivals"], run["hist_jobs"]) == (3, 3, 3, 3)
    assert (run["ctx_switches"], run["preemptions"], run["dropped"], run["max_queue"]) == (6, 0, 0, 1)
    assert (run["model"], run["n"], run["l_s_ms"], run["samples"], run["seed"]) == ("fifo", 1, 1, 2, 2)
    assert check_run(run) == []


def test_summarize_converts_with_the_board_clock(atmega: Board) -> None:
    # on the atmega128 a tick is a 4 MHz cycle: 6720 ticks = 1680 us, T = 12.8e6 ticks = 3.2 s
    run = summarize(parse_guest_log(GOOD_LOG), atmega)
    assert run["E_t"] == pytest.approx(1680.0)
    assert run["E_t_max"] == pytest.approx(1760.0)
    assert run["T_s"] == pytest.approx(3.2)
    assert run["I_t"] == pytest.approx(99.5)  # a ratio of ticks: no unit


def test_summarize_without_jobs_or_idle(mps2: Board) -> None:
    text = GOOD_LOG.replace("H 484 1\nH 489 1\nH 494 1\n", "")
    text = edited("arrivals=3 jobs=3 sensing=2 e_sum=20160 e_sumsq=135680000 e_min=6400 e_max=7040 "
                  "idle_sum=12736000 idle_count=4 idle_sumsq=42957696000000 idle_max=4000000",
                  "arrivals=0 jobs=0 sensing=2 e_sum=0 e_sumsq=0 e_min=0 e_max=0 "
                  "idle_sum=0 idle_count=0 idle_sumsq=0 idle_max=0", text)  # fmt: skip
    run = summarize(parse_guest_log(text), mps2)
    assert [run[k] for k in ("E_t", "E_t_sd", "E_t_p99", "I_p", "I_p_sd")] == [None] * 5
    assert run["I_t"] == 0.0 and run["I_o"] == pytest.approx(99.8)
    # the generator says seed 2 gives 3 arrivals in 2 s; this log claims none
    assert check_run(run) == [
        "fifo n=1 l_s=1ms: arrivals = 0, but the generator twin expects 3 "
        "(an image built before bench/seed000/arrivals.c changed?)"
    ]


def test_every_issue6_key_is_in_a_run_record(mps2: Board) -> None:
    issue6 = ["model", "n", "l_s_ms", "jobs", "E_t", "E_t_sd", "E_t_max", "E_t_p99", "I_t", "I_max", "I_o",
              "I_p", "I_p_sd", "ctx_switches", "preemptions", "dropped"]  # fmt: skip
    run = summarize(parse_guest_log(GOOD_LOG), mps2)
    assert [k for k in issue6 if k not in run] == []
    assert set(issue6) <= set(seed000.RUN_KEYS)


# --------------------------------------------------------------------------- checks


@pytest.fixture()
def good_run(mps2: Board) -> dict[str, Any]:
    return summarize(parse_guest_log(GOOD_LOG), mps2)


def doc_of(*runs: dict[str, Any], cpu_hz: int = 4_000_000) -> dict[str, Any]:
    return {"board": "mps2-an385", "unit": "instructions", "cpu_hz": cpu_hz, "runs": list(runs)}


W = "fifo n=1 l_s=1ms: "


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"I_o": None}, W + "I_o = None is not a number"),
        ({"jobs": "3"}, W + "jobs = '3' is not a non-negative integer"),
        ({"dropped": True}, W + "dropped = True is not a non-negative integer"),
        ({"jobs": 4, "hist_jobs": 4}, W + "jobs = 4 exceeds arrivals = 3"),
        ({"jobs": 2, "hist_jobs": 2}, W + "1 sensing or forwarding messages were never handled, but dropped = 0"),
        ({"sensing": 1}, W + "1 sensing or forwarding messages were never handled, but dropped = 0"),
        ({"sensing": 3}, W + "sensing ran 3 times in 2 samples"),
        ({"expected_arrivals": 4}, W + r"arrivals = 3, but the generator twin expects 4 \(an image built before .*"),
        ({"hist_jobs": 2}, W + "the histogram holds 2 jobs, jobs = 3"),
        ({"E_t": None}, W + "E_t is null although jobs = 3"),
        ({"I_p_sd": None}, W + "I_p_sd is null although idle_periods = 4"),
        ({"E_t_p99": 1200.0}, W + "E_t_p99 = 1200 exceeds E_t_max = 1100"),
        ({"E_t_p50": 990.0}, W + "E_t_min = 1000 exceeds E_t_p50 = 990"),
        ({"E_t": 1101.0}, W + r"E_t = 1101 is outside \[E_t_min, E_t_max\] = \[1000, 1100\]"),
        ({"E_t_min": 900.0, "E_t_p50": 950.0}, W + "a job took 900 us, less than its l_p = 1000 us of work"),
        ({"I_max": 99.0, "I_o": -0.5}, W + "I_max = 99 %, but eq. 4 gives 99.8 % at 4000000 Hz"),
        ({"I_o": 0.4}, W + "I_o = 0.4 is not I_max - I_t = 0.3"),
        ({"I_t": 99.95, "I_o": 99.8 - 99.95, "I_o_run": 99.75 - 99.95},
         W + "I_t = 99.950 % exceeds I_max_run = 99.750 %"),
        ({"I_o_run": 0.3}, W + "I_o_run = 0.3 is not I_max_run - I_t"),
    ],
)
def test_check_run_finds_each_inconsistency(good_run: dict[str, Any], changes: dict[str, Any], complaint: str) -> None:
    run = {**good_run, **changes}
    problems = check_run(run)
    assert any(re.fullmatch(complaint, p) for p in problems), problems


def test_check_run_lost_messages_may_be_drops(good_run: dict[str, Any]) -> None:
    # one arrival and one sensing message not handled, both counted as drops: consistent
    assert check_run({**good_run, "jobs": 2, "hist_jobs": 2, "sensing": 1, "dropped": 2}) == []
    assert check_run({**good_run, "jobs": 2, "hist_jobs": 2, "sensing": 1, "dropped": 1}) != []


def test_check_run_tolerates_i_t_just_above_i_max(good_run: dict[str, Any]) -> None:
    # 0.05 points above the bound of the work done (99.75 %) is inside the default
    # 0.1-point tolerance, not inside 0.01
    above = {"I_t": 99.8, "I_o": 0.0, "I_o_run": 99.75 - 99.8}
    assert check_run({**good_run, **above}) == []
    assert check_run({**good_run, **above}, tolerance=0.01) != []


def test_check_run_without_run_bound_uses_eq4(good_run: dict[str, Any]) -> None:
    old_record = {k: v for k, v in good_run.items() if k not in ("I_max_run", "I_o_run")}
    assert check_run({**old_record, "I_t": 99.85, "I_o": 99.8 - 99.85}) == []
    assert check_run({**old_record, "I_t": 99.95, "I_o": 99.8 - 99.95}) == [
        W + "I_t = 99.950 % exceeds I_max = 99.800 %"]


def test_check_run_names_missing_keys(good_run: dict[str, Any]) -> None:
    run = dict(good_run)
    del run["E_t_p99"], run["ctx_switches"]
    assert check_run(run) == [W + "key 'E_t_p99' is missing", W + "key 'ctx_switches' is missing"]


def test_check_results_accepts_a_consistent_document(good_run: dict[str, Any]) -> None:
    other = {**good_run, "model": "stack"}
    assert check_results(doc_of(good_run, other)) == []


@pytest.mark.parametrize(
    ("mutate", "complaint"),
    [
        (lambda d: d.pop("cpu_hz"), "key 'cpu_hz' is missing"),
        (lambda d: d.update(cpu_hz=0), "cpu_hz = 0 is not a positive integer"),
        (lambda d: d.update(unit="seconds"), "unit = 'seconds' is not one of instructions, cycles"),
        (lambda d: d.update(runs={}), "'runs' is not a list"),
        (lambda d: d["runs"].append(7), "runs[1] is not a JSON object"),
        (lambda d: d["runs"].append(dict(d["runs"][0])), "fifo n=1 l_s=1ms: appears twice in 'runs'"),
        # I_max was computed for 4 MHz; at 8 MHz l_s = 1 ms is 8000 cycles, l_p stays 4000:
        # 1 - 12000 / 8e6 = 99.85 %, so a document claiming 8 MHz contradicts its runs
        (lambda d: d.update(cpu_hz=8_000_000), W + "I_max = 99.8 %, but eq. 4 gives 99.85 % at 8000000 Hz"),
    ],
)
def test_check_results_rejects_inconsistent_documents(good_run: dict[str, Any], mutate: Any, complaint: str) -> None:
    doc = doc_of(copy.deepcopy(good_run))
    mutate(doc)
    assert complaint in check_results(doc)


def test_check_results_of_non_object() -> None:
    assert check_results([]) == ["the results document is not a JSON object"]  # type: ignore[arg-type]


# --------------------------------------------------------------------------- parameter block


def test_params_blob_layout() -> None:
    # 8 little-endian u32: "tern" magic 0x7465726e, n, l_s, samples, seed, then zeros
    blob = seed000.params_blob(Config("fifo", n=8, ls_ms=75, samples=50, seed=7))
    assert blob == bytes.fromhex("6e726574" "08000000" "4b000000" "32000000" "07000000") + bytes(12)
    assert struct.unpack("<8I", blob)[0] == 0x7465726E


def test_params_blob_refuses_values_beyond_u32() -> None:
    with pytest.raises(UsageError, match="parameter 4294967296 does not fit in a u32"):
        seed000.params_blob(Config("fifo", 1, 1, 1, seed=2**32))


def test_params_magic_and_layout_match_the_guest() -> None:
    src = (ROOT / "bench" / "seed000" / "seed000.c").read_text(encoding="utf-8")
    magic = re.search(r"#define PARAMS_MAGIC (0x[0-9a-fA-F]+)ul", src)
    assert magic is not None and int(magic.group(1), 16) == seed000.PARAMS_MAGIC
    # the guest reads n, l_s, samples and seed from words 1..4, as params_blob writes them
    # (into its state b, or into a local of main(): 15dc70a keeps n and seed there)
    for word, name in ((1, "n"), (2, "ls_ms"), (3, "samples"), (4, "seed")):
        assert re.search(rf"(b\.|uint32_t ){name} = tern_params\[{word}\];", src), f"tern_params[{word}] is no longer {name}"
    header = (ROOT / "arch" / "cortex-m" / "tern_params.h").read_text(encoding="utf-8")
    assert f"#define TERN_PARAMS_WORDS {seed000.PARAMS_WORDS}" in header


def _arm_object_with_params(tmp_path: Path, body: str) -> Path:
    gcc = require_tool("arm-none-eabi-gcc")
    src = tmp_path / "params.c"
    src.write_text('#include "tern_params.h"\n' + body, encoding="utf-8")
    obj = tmp_path / "params.o"
    run_checked([gcc, "-mcpu=cortex-m3", "-mthumb", "-c", "-I", str(ROOT / "arch" / "cortex-m"), "-o", str(obj), str(src)])
    return obj


def test_patch_image_replaces_the_section(tmp_path: Path, mps2: Board) -> None:
    obj = _arm_object_with_params(tmp_path, "TERN_PARAMS_DEFAULTS(0x7465726e, 1, 1, 3, 1, 0, 0, 0);\n")
    out = tmp_path / "patched.o"
    seed000.patch_image(mps2, obj, out, Config("stack", n=5, ls_ms=25, samples=9, seed=77))
    dump = tmp_path / "section.bin"
    run_checked(["arm-none-eabi-objcopy", "-O", "binary", "--only-section=.tern_params", str(out), str(dump)])
    assert struct.unpack("<8I", dump.read_bytes()) == (0x7465726E, 5, 25, 9, 77, 0, 0, 0)


def test_patch_image_without_the_section_is_an_error(tmp_path: Path, mps2: Board) -> None:
    obj = _arm_object_with_params(tmp_path, "int unrelated = 1;\n")
    with pytest.raises(TernError, match=r"patching \.tern_params of .*params\.o failed"):
        seed000.patch_image(mps2, obj, tmp_path / "patched.o", Config("stack", 5, 25, 9))


# --------------------------------------------------------------------------- the sweep, with a fake emulator


def _log_for(cfg: Config) -> str:
    return edited("model=fifo", f"model={cfg.model}")


def test_run_sweep_with_fake_build_and_emulator(tmp_path: Path, mps2: Board) -> None:
    elf = tmp_path / "seed000.elf"
    elf.write_bytes(b"\x7fELF")
    patched: list[Config] = []

    def builder(board: Board, model: str, root: Path) -> Path | None:
        return None if model == "threads" else elf  # threads: "not available on this board"

    def patcher(board: Board, src: Path, dst: Path, cfg: Config) -> None:
        patched.append(cfg)
        dst.write_bytes(src.read_bytes())

    def runner(board: Board, image: Path, timeout: float, max_cycles: int | None = None) -> RunResult:
        assert max_cycles is None  # QEMU boards take no cycle limit
        model = image.name.split("-")[0]
        if model == "priority":
            return RunResult(status=3, stdout=b"", stderr="guest fault at 0x0\n", wall_seconds=0.1)
        return RunResult(status=0, stdout=_log_for(Config(model, 1, 1, 2)).encode(), stderr="", wall_seconds=0.1)

    # jobs=1: serial, in this process, so the fakes can record into `patched`
    # (test_sweep_on_dask.py runs a real sweep on Dask workers)
    plan = seed000.SweepPlan(board=mps2, models=["stack", "fifo", "threads", "priority"], ns=[1], ls_ms=[1],
                             samples=2, seed=2, jobs=1, logs_dir=tmp_path / "logs")  # fmt: skip
    progress = io.StringIO()
    result = seed000.run_sweep(plan, progress_stream=progress, root=tmp_path, builder=builder, patcher=patcher,
                               runner=runner)  # fmt: skip
    assert [r["model"] for r in result.doc["runs"]] == ["stack", "fifo"]  # in the order asked for
    assert result.skipped == ["threads"]
    assert result.failures == ["priority n=1 l_s=1ms: guest exited with status 3 (guest fault at 0x0)"]
    assert sorted(c.model for c in patched) == ["fifo", "priority", "stack"]
    assert "model threads is not available on board mps2-an385" in progress.getvalue()
    assert (tmp_path / "logs" / "fifo-n1-ls1.log").read_text().startswith("tern 0.1")
    assert check_results(result.doc) == []


def test_run_config_refuses_a_log_of_another_configuration(tmp_path: Path, mps2: Board) -> None:
    elf = tmp_path / "seed000.elf"
    elf.write_bytes(b"")

    def runner(board: Board, image: Path, timeout: float, max_cycles: int | None = None) -> RunResult:
        return RunResult(status=0, stdout=GOOD_LOG.encode(), stderr="", wall_seconds=0.1)

    plan = seed000.SweepPlan(board=mps2, models=["fifo"], ns=[2], ls_ms=[1], samples=2, seed=2)
    with pytest.raises(Seed000Error, match=r"fifo n=2 l_s=1ms: guest reports .* \('fifo', 1, 1, 2, 2\), "
                                           r"expected \('fifo', 2, 1, 2, 2\)"):  # fmt: skip
        seed000.run_config(plan, elf, Config("fifo", 2, 1, 2, 2), tmp_path, lambda *a: None, runner)


def test_run_config_names_the_configuration_of_a_bad_log(tmp_path: Path, mps2: Board) -> None:
    def runner(board: Board, image: Path, timeout: float, max_cycles: int | None = None) -> RunResult:
        return RunResult(status=0, stdout=edited("jobs=3", "jobs=x").encode(), stderr="", wall_seconds=0.1)

    plan = seed000.SweepPlan(board=mps2, models=["fifo"], ns=[1], ls_ms=[1], samples=2, seed=2)
    with pytest.raises(Seed000Error, match="fifo n=1 l_s=1ms: line 7: field jobs='x'"):
        seed000.run_config(plan, tmp_path / "x.elf", Config("fifo", 1, 1, 2, 2), tmp_path, lambda *a: None, runner)


def test_simavr_runs_get_a_cycle_limit(atmega: Board, mps2: Board) -> None:
    # twice the experiment plus 10 s of the 4 MHz CPU: (2 * 5 + 10) * 4e6
    assert seed000.SweepPlan(board=atmega, models=["fifo"], ns=[1], ls_ms=[1], samples=5).max_cycles() == 80_000_000
    assert seed000.SweepPlan(board=mps2, models=["fifo"], ns=[1], ls_ms=[1], samples=5).max_cycles() is None


def test_command_line_lists() -> None:
    assert seed000.parse_int_list("1, 2,8", "--n", minimum=1) == [1, 2, 8]
    with pytest.raises(UsageError, match="--n: 0 is below 1"):
        seed000.parse_int_list("1,0", "--n", minimum=1)
    with pytest.raises(UsageError, match="--ls: 'x' is not an integer"):
        seed000.parse_int_list("x", "--ls")
    assert seed000.parse_models("fifo,threads,fifo") == ["fifo", "threads"]
    with pytest.raises(UsageError, match="unknown model 'tinyos'"):
        seed000.parse_models("tinyos")


def test_test_boards_are_the_ones_this_file_assumes() -> None:
    assert (DATA / "boards" / "mps2-an385" / "board.json").is_file()


def test_run_sweep_skips_models_the_board_does_not_list(tmp_path: Path, mps2: Board) -> None:
    import dataclasses

    board = dataclasses.replace(mps2, models=("fifo",))

    def builder(board: Board, model: str, root: Path) -> Path | None:
        raise AssertionError(f"asked to build {model}")

    plan = seed000.SweepPlan(board=board, models=["threads"], ns=[1], ls_ms=[1], samples=2)
    result = seed000.run_sweep(plan, progress_stream=io.StringIO(), root=tmp_path, builder=builder)
    assert result.skipped == ["threads"] and result.doc["runs"] == []


def _sweep(samples: int, commit: str, *points: tuple[str, int, int]) -> dict[str, Any]:
    runs = [{"model": m, "n": n, "l_s_ms": ls, "samples": samples, "commit": commit, "E_t": float(samples)}
            for m, n, ls in points]  # fmt: skip
    return {"board": "atmega128", "unit": "cycles", "cpu_hz": 4_000_000, "samples": samples, "runs": runs,
            "failures": [], "sizes": {m: {"ram": samples} for m, _, _ in points}}  # fmt: skip


def test_merge_puts_the_new_points_in_place_and_keeps_the_rest() -> None:
    base = _sweep(10, "aaa", ("threads", 1, 1), ("fifo", 1, 1), ("fifo", 8, 75))
    new = _sweep(50, "bbb", ("fifo", 8, 75), ("stack", 8, 75))
    doc = seed000.merge(base, new)
    # the models' order, then n, then l_s; one record per point, each with its own length and commit
    assert [(r["model"], r["n"], r["l_s_ms"], r["samples"], r["commit"]) for r in doc["runs"]] == [
        ("fifo", 1, 1, 10, "aaa"), ("fifo", 8, 75, 50, "bbb"), ("stack", 8, 75, 50, "bbb"), ("threads", 1, 1, 10, "aaa"),
    ]  # fmt: skip
    assert doc["samples"] == [10, 50]
    assert doc["sizes"] == {"threads": {"ram": 10}, "fifo": {"ram": 50}, "stack": {"ram": 50}}
    assert base["runs"][2]["samples"] == 10  # the inputs are left alone
    assert seed000.merge(base, _sweep(10, "ccc", ("fifo", 1, 1)))["samples"] == 10


def test_merge_refuses_another_board() -> None:
    other = {**_sweep(10, "x", ("fifo", 1, 1)), "board": "mps2-an385"}
    with pytest.raises(UsageError, match="cannot merge a sweep of mps2-an385 into one of atmega128"):
        seed000.merge(_sweep(10, "x", ("fifo", 1, 1)), other)
