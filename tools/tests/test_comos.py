"""`tern bench comos`: the experiments' CLI (tools/terntools/comos.py)."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from terntools import comos, comos_ssl
from terntools.cli import main


def test_every_experiment_is_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "comos", "--help"])
    out = capsys.readouterr().out
    assert comos.EXPERIMENTS, "no experiment registered"
    for name in comos.EXPERIMENTS:
        assert re.search(rf"^    {name}\s", out, re.M), name  # a long name's help goes on the next line


def test_comos_without_experiment_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "comos"]) == 2
    assert "tern bench comos: a command is required" in capsys.readouterr().err


def test_an_experiment_registers_once() -> None:
    def noop(args: argparse.Namespace) -> int:
        return 0

    with pytest.raises(ValueError, match="'ssl' registered twice"):
        comos.experiment("ssl", "", "", lambda p: None)(noop)


def test_the_signal_files_are_the_generators_output() -> None:
    """docs/sim/signals/ is what comos_ssl.write_signals makes: regenerate them
    with it after changing the signals (and the tests that expect them)."""
    root = Path(__file__).resolve().parents[2]
    for name, text in comos_ssl.signal_files().items():
        assert (root / "docs" / "sim" / "signals" / name).read_text() == text, name


def test_the_alerts_follow_the_detector() -> None:
    """The spike (sample 4) stays below the threshold, the fire crosses it at
    sample 9, the cool-down re-arms it, and the next loop alerts again."""
    loop = len(comos_ssl.TEMPERATURE)
    assert comos_ssl.expected_alerts(9) == []
    assert comos_ssl.expected_alerts(10) == [9]
    assert comos_ssl.expected_alerts(3 * loop) == [9, loop + 9, 2 * loop + 9]
