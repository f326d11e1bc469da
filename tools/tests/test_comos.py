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


def test_profile_rows_follow_the_source_of_each_address() -> None:
    """Evaluation 2's breakdown: the standalone's polling main and tern's
    sleep share one row; the kernel's files have rows of their own."""
    g = comos_ssl.profile_group
    assert g("arch/avr/avr_board.c", "sleep_now") == comos_ssl.IDLE_ROW
    assert g("results/comos/standalone/one/standalone.c.o", "main") == comos_ssl.IDLE_ROW
    assert g("sslfbd/ssl_dsp.c", "ssl_fft") == g("libgcc.a(_umulhisi3.o)", "__umulhisi3")
    assert g("arch/avr/avr_board.c", "__vector_15") == "kernel: clock, timers, clock ISRs"
    assert g("arch/avr/startup.c", "?0x80") == "sampler ISRs (ssl_sampler.c, vector table)"
    assert g("kernel/sched.c", "sched_send") == "kernel: dispatch (sched.c, policy)"
    assert g("drivers/procbus/procbus.c", "rx_one") == "bus driver and remote (procbus, remote.c)"
    assert g("kernel/msg.c", "tern_post") in comos_ssl.KERNEL_ROWS
    assert comos_ssl.IDLE_ROW not in comos_ssl.KERNEL_ROWS
