"""Seed 002's SSL + FBD application on a five-module node (apps/sslfbd,
docs/sim/sslfbd5.toml, docs/comos.md): four sensing ATmega128s sample their
microphone from a signal file through the simulated ADC, FFT and vote; the
computational ATmega1284P finds the direction; FBD watches the temperature."""
from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from scenario_run import ROOT, summary_counters, tern_sim
from terntools import comos_ssl

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")
SENSING = ("s1", "s2", "s3", "s4")
ROUNDS = comos_ssl.NOISE_ROUNDS + comos_ssl.VOICE_ROUNDS


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    r = tern_sim(ROOT / "docs" / "sim" / "sslfbd5.toml", tmp_path_factory.mktemp("sslfbd5"))
    return {**r, "counters": {n: summary_counters(c) for n, c in r["consoles"].items()}}


def total(run: dict[str, Any], key: str, nodes: tuple[str, ...] = SENSING) -> int:
    return sum(run["counters"][n][key] for n in nodes)


def test_every_module_finishes_clean(run: dict[str, Any]) -> None:
    for name, node in run["nodes"].items():
        assert node["status"] == "exit" and node["exit_status"] == 0, (name, run["consoles"][name])


def test_the_source_is_found_in_voice_rounds_only(run: dict[str, Any]) -> None:
    """The files hold noise rounds, then a source at 60 degrees: the vote says
    so round by round, and HT finds 60 degrees (its grid is 5 degrees)."""
    m0 = run["counters"]["m0"]
    assert (m0["noise_rounds"], m0["voice_rounds"]) == (comos_ssl.NOISE_ROUNDS, comos_ssl.VOICE_ROUNDS)
    dirs = [int(d) for d in re.findall(r"direction (\d+) deg", run["consoles"]["m0"])]
    assert dirs == [comos_ssl.SOURCE_DEG] * comos_ssl.VOICE_ROUNDS


def test_the_alert_fires_for_the_fire_and_not_for_the_spike(run: dict[str, Any]) -> None:
    """temp.txt: a one-sample spike (sample 4) that must not alert, then a
    fire that must, at the sample the detector's arithmetic predicts; the
    alert crosses the bus to Radio on s1."""
    samples = run["counters"]["s2"]["temps"]
    assert samples >= 10
    expected = comos_ssl.expected_alerts(samples)
    assert expected == [9]
    got = [int(s) for s in re.findall(r"alert at sample (\d+)", run["consoles"]["s1"])]
    assert got == expected
    assert run["counters"]["s2"]["alerts_sent"] == run["counters"]["s1"]["alerts_got"] == 1


def test_no_message_is_lost_or_duplicated(run: dict[str, Any]) -> None:
    c = run["counters"]
    for n in SENSING:
        assert c[n]["rounds"] == c[n]["blocks"] == c[n]["ffts"] == c[n]["votes_sent"] == ROUNDS, n
        assert c[n]["verdicts_got"] == ROUNDS, n
        assert c[n]["chunks_sent"] == comos_ssl.VOICE_ROUNDS * 2, n
    assert c["m0"]["votes_got"] == total(run, "votes_sent") == 4 * ROUNDS
    assert c["m0"]["verdicts_sent"] == ROUNDS and c["m0"]["tx_mcast"] == ROUNDS
    assert c["m0"]["chunks_got"] == total(run, "chunks_sent")
    for n, k in c.items():  # Vote, HT and SC saw every number once; nothing refused anywhere
        for key in ("dup", "lost", "wrong_round", "no_memory", "post_failed", "isr_send_failed", "too_long",
                    "queue_full", "bus_failed", "invalid", "bad_frame", "no_task", "no_port", "refused",
                    "kernel_no_port", "kernel_pool_full"):
            assert k[key] == 0, (n, key)
    # the kernels' frame counts and the simulated bus agree
    for n, node in run["nodes"].items():
        assert node["bus"]["frames_sent"] == c[n]["tx_frames"] + c[n]["tx_mcast"], n
        assert node["bus"]["refused"] == 0, n
    assert c["m0"]["rx_frames"] == total(run, "tx_frames") - c["s1"]["rx_frames"]


def test_the_adc_played_every_sample_once(run: dict[str, Any]) -> None:
    """One 512-sample block per round from each microphone file (4,096
    samples: exactly once through), one temperature sample per FBD period."""
    for ch, n in enumerate(SENSING):
        assert run["nodes"][n]["adc"][str(ch)] == {"samples": ROUNDS * 512, "wraps": 1}
    assert run["nodes"]["s2"]["adc"]["7"]["samples"] == run["counters"]["s2"]["temps"]
