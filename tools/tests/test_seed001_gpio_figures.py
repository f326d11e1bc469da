"""terntools.seed001_gpio's arithmetic on the logic analyser's edges and
its verdicts, without a simulation (tests/sim/test_seed001_gpio.py runs
the guest)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from terntools import seed001_gpio as g
from terntools.boards import load_board
from terntools.errors import TernError, UsageError

ROOT = Path(__file__).resolve().parents[2]
MICAZ = load_board("micaz", ROOT)
CYCLE_PS = 1e12 / MICAZ.cpu_hz


def edges(*cycles: float) -> list[int]:
    return [round(c * CYCLE_PS) for c in cycles]


def trace(rises: dict[str, list[int]], falls: dict[str, list[int]]) -> g.Trace:
    labels = (*g.PINS, "input")
    return g.Trace({k: rises.get(k, []) for k in labels}, {k: falls.get(k, []) for k in labels},
                   node=None, console="", wall_s=0.0)  # type: ignore[arg-type]


def test_params_blob_layout() -> None:
    assert struct.unpack("<8I", g.params_blob(g.MODE_REACT, 200, 1000, 2949)) == \
        (g.PARAMS_MAGIC, 1, 200, 1000, 2949, 0, 0, 0)


def test_toggle_figures_from_edges_ignore_the_level_at_the_start() -> None:
    """A fall at 0 (the pin's level when recording starts) is not an edge;
    the on/off loop's on-time is rise to fall, off-time fall to rise."""
    t = trace({"xor": edges(100, 116), "onoff": edges(200, 209, 218), "msg": edges(1000, 3000)},
              {"xor": edges(0, 108, 124), "onoff": edges(0, 202, 211, 220), "msg": edges(2000)})
    f = g.toggle_figures(t, MICAZ)
    assert f["xor_half_period_cycles"]["median"] == 8
    assert (f["on_cycles"]["n"], f["on_cycles"]["min"], f["on_cycles"]["max"]) == (3, 2, 2)
    assert (f["off_cycles"]["n"], f["off_cycles"]["min"], f["off_cycles"]["max"]) == (2, 7, 7)
    assert f["toggle_khz"] == round(MICAZ.cpu_hz / 16 / 1000, 1)
    assert f["msg_half_period_cycles"]["median"] == 1000


def test_delays_pair_each_edge_with_its_answer_in_order() -> None:
    assert g.delays([10, 20, 30], [15, 32, 33]) == [5, 12, 3]  # answers queued behind the load
    with pytest.raises(TernError, match="3 input edges but 2 answers"):
        g.delays([10, 20, 30], [15, 25])
    with pytest.raises(TernError, match="before its input edge"):
        g.delays([10, 20], [5, 25])


def test_verdicts_take_the_direction_of_each_figure() -> None:
    assert g.best_of(g.THESIS_GPIO["toggle_khz"], lower=False) == ("RIOT", 379.0)
    assert g.best_of(g.THESIS_GPIO["io_delay_us"], lower=True) == ("Zephyr", 6.4)
    assert g.verdict(400.0, 379.0, lower=False) == "met" and g.verdict(7.0, 6.4, lower=True) == "missed"


def test_plan_refuses_other_boards_and_unknown_models() -> None:
    with pytest.raises(UsageError, match="need board micaz"):
        g.Plan(board=load_board("micaz-1284p", ROOT), models=("stack",)).check()
    with pytest.raises(UsageError, match="hybrid"):
        g.Plan(board=MICAZ, models=("hybrid",)).check()


@pytest.mark.parametrize("experiment", g.EXPERIMENTS)
def test_committed_results_render_with_every_model(experiment: str) -> None:
    doc = json.loads((ROOT / "docs" / "seed001" / f"{experiment}.json").read_text())
    text = g.markdown_tables(doc)
    for model in doc["models"]:
        assert f"tern {model}" in text or f"| {model} |" in text
    assert "**met**" in text or "**missed**" in text or experiment == "irq"
