"""The task migrator on tern-sim's processor bus (kernel/task_move.c over
kernel/migrate.c, apps/migrate, docs/sim/migrate.toml): a counter task moved
between an ATmega1284P and an ATmega128 while senders on both stream
numbered messages to it."""
from __future__ import annotations

import re
import shutil

import pytest

from scenario_run import ROOT, summary_counters as counters, tern_sim

STREAM_N = 260  # apps/migrate/migrate.c, per sender

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return tern_sim(ROOT / "docs" / "sim" / "migrate.toml", tmp_path_factory.mktemp("migrate"))


def arrivals(console: str) -> list[dict[str, int]]:
    return [{k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", x)} for x in console.splitlines() if "counter arrived" in x]


def test_both_modules_finish_their_checks(run: dict) -> None:
    for name, node in run["nodes"].items():
        assert node["status"] == "exit" and node["exit_status"] == 0, (name, run["consoles"][name])
        assert " bad " not in run["consoles"][name]


def test_nothing_lost_or_duplicated_and_each_senders_order_kept(run: dict) -> None:
    """Both senders' numbers reached the counter once each and in order (it
    checks every one, in its own state, and exits 4 otherwise), across eight
    moves and a failed one; no drop anywhere, no message lost by the migrator."""
    m1, m2 = run["consoles"]["m1"], run["consoles"]["m2"]
    assert f"counter a={STREAM_N} b={STREAM_N} in order, handled={2 * STREAM_N}, arrivals=9" in m1
    for console in (m1, m2):
        c = counters(console)
        assert c["lost_msgs"] == 0 and c["bad_messages"] == 0 and c["transport_errors"] == 0
        assert sum(v for k, v in c.items() if k.startswith("kernel_") or k in ("queue_full", "no_memory", "no_task", "no_port", "refused")) == 0, c  # fmt: skip
    moved = [x for x in (m1 + m2).splitlines() if "counter moved (TERN_OK)" in x and "latency" in x]
    assert len(moved) == 8  # each source times its own moves
    # messages did travel in images and were forwarded from the sources
    assert counters(m1)["carried_msgs"] + counters(m2)["carried_msgs"] > 0
    assert counters(m1)["forwarded_msgs"] + counters(m2)["forwarded_msgs"] > 0


def test_the_state_continues_on_the_destination(run: dict) -> None:
    """Each arrival restores the counts it left with (a + b = handled, growing
    from move to move) and the pad it was told to carry, checked byte by byte."""
    m1, m2 = arrivals(run["consoles"]["m1"]), arrivals(run["consoles"]["m2"])
    assert [a["pad"] for a in m2] == [0, 32, 64, 128]
    assert [a["pad"] for a in m1] == [0, 0, 32, 64, 128]  # the second is the resume after the refusal
    for seq in (m1, m2):
        assert all(a["a"] + a["b"] == a["handled"] for a in seq)
        assert all(x["handled"] < y["handled"] for x, y in zip(seq, seq[1:]))
    assert m2[0]["handled"] > 0  # it arrived with what it had counted on module 1


def test_a_timer_started_before_the_move_fires_once_on_the_destination(run: dict) -> None:
    m1, m2 = run["consoles"]["m1"], run["consoles"]["m2"]
    assert "counter timer started, 45 ms" in m1
    assert "timer fired" not in m1
    fired = re.findall(r"counter timer fired on module (\d)", m2)
    assert fired == ["1"]
    assert m2.index("counter arrived") < m2.index("timer fired")


def test_a_failed_deserialize_leaves_the_task_running_at_the_source(run: dict) -> None:
    m1, m2 = run["consoles"]["m1"], run["consoles"]["m2"]
    assert "counter refuses DESERIALIZE (as told)" in m2
    assert "counter stayed (TERN_EINVAL) now on module 0" in m1
    assert "counter stayed (TERN_EINVAL) now on module 0" in m2
    assert counters(m1)["stayed"] == 1 and counters(m2)["deserialize_refused"] == 1
    # it went on counting on module 1 before the next move
    stay = m1.index("counter stayed")
    resumed = [a for a in arrivals(m1[:stay])][-1]
    nxt = arrivals(m2)[1]
    assert nxt["handled"] > resumed["handled"]


def test_a_request_for_a_pinned_task_is_refused_by_name(run: dict) -> None:
    assert ("move 'pinned': TERN_EPINNED: migration of task 'pinned' refused: the task is not movable"
            in run["consoles"]["m1"])  # fmt: skip


def test_latency_is_measured_on_the_source_clock(run: dict) -> None:
    """Each source reports cycles and microseconds of its own clock; they
    agree with its frequency (20 MHz, 7.3728 MHz)."""
    for name, hz in (("m1", 20_000_000), ("m2", 7_372_800)):
        got = [tuple(map(int, x)) for x in re.findall(r"state (\d+) bytes latency (\d+) cycles (\d+) us", run["consoles"][name])]
        assert got, name
        for _, cycles, us in got:
            assert abs(cycles * 1_000_000 // hz - us) <= 1
            assert 1_000 < us < 40_000
