"""The verdict `make run` ends with (terntools.seed000_verdict), generated
from a sweep's JSON: a small fixture with a known text."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT

from terntools import seed000, seed000_verdict
from terntools.boards import load_board
from terntools.cli import main

FIXTURE = DATA / "seed000" / "verdict.json"

EXPECTED = """\
Verdict (mps2-an385, 50 sensing periods a run; lower wins; TinyOS = fifo, MANTIS = threads):
- E_t, unloaded (n = 1, l_s = 1 ms): stack wins with 1069.5 µs, 2.4 % below fifo (1095.0 µs). TinyOS vs MANTIS: \
threads 0.8 % longer than fifo here; MANTIS 17.15 % longer than TinyOS in the paper.
- E_t, unloaded (n = 1, l_s = 75 ms): stack wins with 1069.5 µs, 2.8 % below hybrid (1099.7 µs). TinyOS vs MANTIS: \
fifo 155.2 % longer than threads here; TinyOS 204 % longer than MANTIS in the paper.
- E_t, loaded (n = 8, l_s = 75 ms): stack wins with 1377.9 µs, 2.2 % below threads (1407.9 µs).
- σ(E_t), unloaded (n = 1, l_s = 75 ms): stack and hybrid tie with 1.6 µs, 1.3 µs below threads (2.9 µs). \
TinyOS vs MANTIS: fifo 11224.3 µs, threads 2.9 µs here; TinyOS 58 ms, MANTIS 34 µs in the paper.
- σ(E_t), loaded (n = 8, l_s = 75 ms): threads wins with 526.7 µs, 12.3 µs below stack (539.0 µs).
- I_o, unloaded (n = 1, l_s = 1 ms): fifo and stack tie with 0.03 points, 0.01 points below threads (0.04 points). \
TinyOS vs MANTIS: fifo idles 0.01 points more than threads here; TinyOS 0.09 points more than MANTIS in the paper.
- I_o, loaded (n = 8, l_s = 1 ms): fifo wins with 6.53 points, 0.17 points below stack (6.70 points). \
TinyOS vs MANTIS: fifo idles 1.07 points more than threads here; TinyOS 7.6 points more than MANTIS in the paper.
- I_o, loaded (n = 8, l_s = 75 ms): fifo wins with 6.41 points, 0.15 points below stack (6.56 points). \
TinyOS vs MANTIS: fifo idles 1.12 points more than threads here; TinyOS 7.05 points more than MANTIS in the paper.
- RAM (data + bss of seed000.elf, `tern size`; one image for every n): fifo and stack tie with 16224 B; \
hybrid +3444 B, threads +19536 B. TinyOS vs MANTIS: fifo 16224 B, threads 35760 B here, with the main stack, \
the message pool and any thread stacks; TinyOS 283 B, MANTIS 287 B in the paper (ATmega128, Table II).
"""


@pytest.fixture
def doc() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_verdict_of_the_fixture(doc: dict[str, Any]) -> None:
    assert seed000_verdict.verdict_text(doc) == EXPECTED


def test_without_sizes_ram_is_not_guessed(doc: dict[str, Any]) -> None:
    del doc["sizes"]
    last = seed000_verdict.verdict_lines(doc)[-1]
    assert last.endswith("n/a (the JSON has no 'sizes'; `tern bench seed000` writes them when it builds the images).")


def test_without_threads_stack_stands_in_for_mantis(doc: dict[str, Any]) -> None:
    doc["runs"] = [r for r in doc["runs"] if r["model"] != "threads"]
    lines = seed000_verdict.verdict_lines(doc)
    assert "MANTIS = stack (no threads run: stack stands in for MANTIS)" in lines[0]
    assert any("fifo 163.3 % longer than stack here; TinyOS 204 % longer than MANTIS" in line for line in lines)


def test_cases_without_runs_are_left_out(doc: dict[str, Any]) -> None:
    doc["runs"] = [r for r in doc["runs"] if r["n"] == 1]
    lines = seed000_verdict.verdict_lines(doc)
    assert not any("loaded (n = 8" in line and "unloaded" not in line for line in lines)
    assert len(lines) == 1 + 4 + 1  # header, E_t x2, sd, I_o at n = 1, RAM


def test_a_single_model_wins_without_a_margin(doc: dict[str, Any]) -> None:
    doc = copy.deepcopy(doc)
    doc["runs"] = [r for r in doc["runs"] if r["model"] == "stack"]
    doc["sizes"] = {"stack": doc["sizes"]["stack"]}
    lines = seed000_verdict.verdict_lines(doc)
    assert "- E_t, loaded (n = 8, l_s = 75 ms): stack wins with 1377.9 µs." in lines
    assert lines[-1].startswith("- RAM (") and "stack wins with 16224 B" in lines[-1]


def test_cli_prints_headline_rows_plots_and_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a real sweep document: docs/seed000 (every n and l_s, no hybrid, no sizes)
    results = ROOT / "docs" / "seed000" / "mps2-an385.json"
    plots = tmp_path / "plots"
    assert main(["bench", "seed000", "--from-json", str(results), "--plots", str(plots), "--verdict"]) == 0
    out = capsys.readouterr().out
    head, _, rest = out.partition("\n")
    assert head == "seed 000, n = 1, 8 and l_s = 1 ms, 75 ms (20 of 280 runs):"
    assert f"plots in {plots}/: seed000_E_t.png, seed000_E_t_sd.png" in out
    assert (plots / "seed000_E_t.png").is_file()
    verdict = out[out.index("Verdict (") :]
    assert verdict == seed000_verdict.verdict_text(json.loads(results.read_text(encoding="utf-8")))
    assert "- E_t, unloaded (n = 1, l_s = 75 ms): stack wins with 1069.5 µs" in verdict


def test_default_models_are_the_boards() -> None:
    assert seed000.board_models(load_board("mps2-an385", ROOT)) == list(seed000.KNOWN_MODELS)
    assert "hybrid" not in seed000.board_models(load_board("atmega128", ROOT))
