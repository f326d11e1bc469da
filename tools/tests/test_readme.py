"""readme: README.md's result tables rewritten from the JSON in docs/."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report import run
from test_seed000_targets import run as targets_run

from terntools import readme
from terntools.cli import main
from terntools.errors import UsageError

SEED003 = {"board": "mps2-an385", "unit": "instructions", "cpu_hz": 4_000_000, "runs": [
    {"model": "threads", "ctx_invol": 1791, "invol_sensing": 1580, "invol_per_neighbour": [50, 51, 52, 58],
     "ctx_vol": 4512, "ctx_per_neighbour": [1, 2, 3, 4], "busy": 0.57689,
     "jobs": 3233, "mean_processing_us": 3517.94, "p99_processing_us": 19519.8},
]}  # fmt: skip
MICRO = {"board": "atmega128", "unit": "cycles", "models": ["stack"], "not_run": {"threads": "no room for X"},
         "results": [{"name": "msg_roundtrip", "model": "stack", "min": 1, "avg": 614.44, "max": 700, "unit": "cycles"},
                     {"name": "kernel_text", "model": "stack", "min": 9171, "avg": 9171, "max": 9171, "unit": "bytes"}]}  # fmt: skip


@pytest.fixture()
def docs(tmp_path: Path) -> Path:
    runs = [run(m, n, ls) for m in ("fifo", "stack") for n in (1, 4, 8) for ls in (1, 75)]
    for kind, board, doc in (("seed000", "mps2-an385", {"runs": runs}), ("seed003", "mps2-an385", SEED003),
                             ("micro", "atmega128", MICRO)):  # fmt: skip
        (tmp_path / kind).mkdir(exist_ok=True)
        (tmp_path / kind / f"{board}.json").write_text(json.dumps(doc))
    return tmp_path


def test_blocks_are_rewritten_and_the_rest_kept(docs: Path) -> None:
    text = ("intro\n<!-- generated: seed003 mps2-an385 -->\nstale numbers\n<!-- end generated -->\nmiddle\n"
            "<!-- generated: micro atmega128 -->\n<!-- end generated -->\nend\n")  # fmt: skip
    filled, done = readme.fill(text, docs)
    assert done == ["seed003 mps2-an385", "micro atmega128"]
    assert "stale numbers" not in filled
    assert filled.startswith("intro\n<!-- generated: seed003 mps2-an385 -->\n| model |")
    assert "| threads | 1791 | 1580 | 211 | 4512 | 57.7 | 3233 | 3517.9 | 19519.8 |" in filled
    assert "| msg_roundtrip | 614 |" in filled and "| kernel_text | 9171 B |" in filled
    assert "`threads`: not run, no room for X." in filled
    assert "\nmiddle\n" in filled and filled.endswith("<!-- end generated -->\nend\n")
    # generating again changes nothing
    assert readme.fill(filled, docs)[0] == filled


def test_seed000_block_holds_the_headline_runs_only(docs: Path) -> None:
    filled, _ = readme.fill("<!-- generated: seed000 mps2-an385 -->\n<!-- end generated -->\n", docs)
    rows = [ln for ln in filled.splitlines() if ln.startswith("| fifo") or ln.startswith("| stack")]
    assert [ln.split(" | ")[1:3] for ln in rows] == [["1", "1 ms"], ["1", "75 ms"], ["8", "1 ms"], ["8", "75 ms"]] * 2


def test_seed000targets_block_reads_the_seed000_json(tmp_path: Path) -> None:
    (tmp_path / "seed000").mkdir()
    doc = {"board": "atmega128", "cpu_hz": 4_000_000, "runs": [targets_run("stack", 1, 75, E_t=1050.0)]}
    (tmp_path / "seed000" / "atmega128.json").write_text(json.dumps(doc))
    filled, done = readme.fill("<!-- generated: seed000targets atmega128 -->\n<!-- end generated -->\n", tmp_path)
    assert done == ["seed000targets atmega128"]
    rows = filled.splitlines()[3:-1]
    assert rows[0] == "| stack E_t, n = 1, l_s = 75 ms <= 1,050 µs (50 periods, abc) | 1,050.0 µs | met |"
    # no n = 8 run and no issue17 block: those targets are n/a, not met
    assert "| threads I_o, n = 8, l_s = 75 ms <= fifo + 3.5 | not run | n/a |" in rows
    assert "| seed000_bare flash <= 9,000 B / RAM <= 283 B, fifo | not measured | n/a |" in rows


def test_a_missing_result_or_kind_is_named(docs: Path) -> None:
    with pytest.raises(UsageError, match=r"'seed000 atmega128': cannot read .*seed000/atmega128\.json"):
        readme.fill("<!-- generated: seed000 atmega128 -->\n<!-- end generated -->\n", docs)
    with pytest.raises(UsageError, match="'plots mps2-an385': unknown kind"):
        readme.fill("<!-- generated: plots mps2-an385 -->\n<!-- end generated -->\n", docs)


def test_cli_rewrites_the_file_and_refuses_one_without_blocks(docs: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "README.md"
    target.write_text("<!-- generated: seed003 mps2-an385 -->\n<!-- end generated -->\n")
    assert main(["docs", "readme", "--readme", str(target), "--docs", str(docs)]) == 0
    assert "| threads | 1791" in target.read_text()
    assert capsys.readouterr().out == "tern docs readme: seed003 mps2-an385\n"
    target.write_text("no blocks\n")
    assert main(["docs", "readme", "--readme", str(target), "--docs", str(docs)]) == 2
    assert "has no '<!-- generated: KIND BOARD -->' block" in capsys.readouterr().err


def test_the_repository_readme_matches_the_results_in_docs() -> None:
    """Every generated table in README.md is what `tern docs readme` makes
    from the committed JSON: no number in it was typed by hand."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text(encoding="utf-8")
    filled, done = readme.fill(text, root / "docs")
    assert done, "README.md has no generated block"
    assert filled == text, "README.md is stale: run ./tern docs readme"
