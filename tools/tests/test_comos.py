"""`tern bench comos`: the experiments' CLI (tools/terntools/comos.py)."""
from __future__ import annotations

import argparse
import re

import pytest

from terntools import comos
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
