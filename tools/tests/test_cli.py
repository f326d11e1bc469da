"""The `tern` command end to end, on files made by the other tests' helpers:
exit statuses, one-line errors, and what reaches stdout."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DATA
from test_seed000 import GOOD_LOG, doc_of

from terntools.boards import load_board_file
from terntools.cli import main
from terntools.seed000 import parse_guest_log, summarize

MPS2_JSON = str(DATA / "boards" / "mps2-an385" / "board.json")


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    run = summarize(parse_guest_log(GOOD_LOG), load_board_file(Path(MPS2_JSON)))
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc_of(run)))
    return path


def test_report_from_json(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.md"
    assert main(["bench", "seed000", "--from-json", str(results), "--report", str(report)]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[1].split() == [
        "fifo", "1", "1", "3", "1050.0", "40.8", "1100.0", "99.500", "99.800", "0.300", "497.50", "6", "0", "0",
    ]  # fmt: skip
    assert out.err == ""
    assert report.read_text().startswith("# Seed 000 benchmark on mps2-an385")


def test_outputs_go_into_new_directories(results: Path, tmp_path: Path) -> None:
    """`make run` writes results/...json on a fresh clone, where results/ does not exist."""
    out = tmp_path / "results" / "deeper"
    assert main(["bench", "seed000", "--from-json", str(results), "--json", str(out / "s.json"),
                 "--report", str(out / "s.md")]) == 0
    assert json.loads((out / "s.json").read_text())["runs"] == json.loads(results.read_text())["runs"]
    assert (out / "s.md").read_text().startswith("# Seed 000 benchmark")


def test_unwritable_output_is_a_usage_error(results: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["bench", "seed000", "--from-json", str(results), "--json", str(blocker / "s.json")]) == 2
    assert f"cannot write {blocker / 's.json'}" in capsys.readouterr().err


def test_inconsistent_results_exit_1(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(results.read_text())
    doc["runs"][0]["jobs"] = 2
    results.write_text(json.dumps(doc))
    assert main(["bench", "seed000", "--from-json", str(results)]) == 1
    err = capsys.readouterr().err
    assert "tern bench seed000: inconsistent: fifo n=1 l_s=1ms: the histogram holds 3 jobs, jobs = 2" in err


def test_unreadable_results_are_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["bench", "seed000", "--from-json", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"tern bench seed000: {bad}: not valid JSON")
    bad.write_text("{}")
    assert main(["bench", "seed000", "--from-json", str(bad)]) == 2
    assert "not a seed000 result (missing board, unit, cpu_hz, runs)" in capsys.readouterr().err


def test_bad_flag_values_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "seed000", "--board", MPS2_JSON, "--models", "tinyos"]) == 2
    assert "unknown model 'tinyos'" in capsys.readouterr().err
    assert main(["bench", "seed000", "--board", "no-such-board", "--n", "1"]) == 2
    assert "unknown board 'no-such-board'" in capsys.readouterr().err


def test_trace_decode_of_a_console_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "console.log"
    log.write_text("boot\nT 7856341204020201e80300000e090b0a\n")
    assert main(["trace", "decode", "--json", str(log)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(e["time"], e["type"]) for e in lines] == [(0x12345678, "HANDLER_START"), (2**32 + 1000, "MARK")]
    log.write_text("T 78563412630202\n")
    assert main(["trace", "decode", str(log)]) == 1
    assert "line 1: expected a multiple of 16 hex digits" in capsys.readouterr().err


def test_run_exits_with_the_guest_status(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    from test_runner import build_guest

    elf = build_guest(tmp_path, "STATUS=7")
    trace_out = tmp_path / "trace.jsonl"
    assert main(["run", "--board", MPS2_JSON, "--trace-out", str(trace_out), str(elf)]) == 7
    assert capsysbinary.readouterr().out == b"hello\nbye"
    assert json.loads(trace_out.read_text())["b"] == 0x0103
    assert main(["run", "--board", MPS2_JSON, "--max-cycles", "10", str(elf)]) == 2
    assert b"--max-cycles applies to simavr boards only" in capsysbinary.readouterr().err
