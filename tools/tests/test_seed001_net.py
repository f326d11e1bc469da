"""terntools.seed001's arithmetic on the logic analyser's edges and the
guest's counts, without a simulation."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from terntools import seed001
from terntools.boards import Board, load_board


def outcome(tx: list[int], rx: list[int], sent: int = 0, blocks: list[int] | None = None) -> seed001.Outcome:
    return seed001.Outcome(tx_edges_ps=tx, rx_edges_ps=rx, sender={"sent": sent}, receiver={}, routers=[],
                           blocks=blocks or [], drops={}, frames_per_datagram=1.0, wall_s=0.0)


MS = 10**9  # ps


def test_latency_pairs_each_send_with_the_next_receive_before_the_following_send() -> None:
    # datagram 1 lost: its window [100, 200) ms holds no receive edge
    o = outcome(tx=[0, 100 * MS, 200 * MS], rx=[5 * MS, 205 * MS + MS // 2])
    assert seed001.latencies_ms(o) == [5.0, 5.5]
    # a receive edge before any send counts for nothing
    assert seed001.latencies_ms(outcome(tx=[10 * MS], rx=[1 * MS, 12 * MS])) == [2.0]


def test_throughput_between_consecutive_signals() -> None:
    # 50 kB every 5 s: 10 kB/s; then every 2.5 s: 20 kB/s
    o = outcome(tx=[], rx=[0, 5000 * MS, 7500 * MS])
    assert seed001.throughputs_kBps(o, 50_000) == [10.0, 20.0]


def test_loss_counts_complete_blocks_only() -> None:
    o = outcome(tx=[], rx=[], sent=250, blocks=[100, 93, 20])
    assert seed001.losses_pct(o, 100) == [0.0, pytest.approx(7.0)]


def test_verdict_compares_with_the_best_median_of_the_three() -> None:
    assert seed001.best_of_thesis("latency_ms", 1000) == ("RIOT", 55.2)
    assert seed001.best_of_thesis("throughput_kBps", 50) == ("RIOT", 9.2)
    assert seed001.best_of_thesis("loss_pct", 50) == ("Zephyr", 0.65)
    assert seed001.verdict("latency_ms", 50, 5.0) == "met"
    assert seed001.verdict("latency_ms", 50, 5.16) == "missed"
    assert seed001.verdict("throughput_kBps", 1000, 17.6) == "met"
    assert seed001.verdict("loss_pct", 1000, None) == "missed (no samples)"


def test_params_blob_is_the_guests_eight_words() -> None:
    r = seed001.stream_run(1000, 3, samples=2, p=0.0, link_local=False)
    words = struct.unpack("<8I", seed001.params_blob(r))
    assert words == (seed001.PARAMS_MAGIC, seed001.MODE_STREAM, 1000, r.datagrams, 2 * seed001.HOP_GAP_MS[1000],
                     100_000, 100, 0)
    # enough datagrams for 3 signals of 100 kB, in whole loss blocks of 100 kB
    assert r.datagrams >= 300 and r.datagrams % 100 == 0


def test_the_link_goes_into_word_7_above_the_addressing() -> None:
    for link, code in (("csma", 0), ("cb", 1), ("rb", 2)):
        r = seed001.latency_run(50, 1, 5, link_local=True, link=link)
        assert struct.unpack("<8I", seed001.params_blob(r))[7] == 1 | code << 8


def _board() -> Board:
    return load_board("micaz-1284p", Path(__file__).resolve().parents[2])


def test_bips_links_run_one_hop_only() -> None:
    with pytest.raises(seed001.UsageError, match="one hop only"):
        seed001.Plan(board=_board(), link="rb", hops=(1, 2)).check()
    with pytest.raises(seed001.UsageError, match="--link"):
        seed001.Plan(board=_board(), link="tdma", hops=()).check()
    seed001.Plan(board=_board(), link="cb", hops=()).check()


def test_link_balance_accounts_for_every_queued_frame() -> None:
    c = {"enqueued": 12, "ok": 9, "failed": 1, "late": 0, "outstanding": 2}
    assert seed001.link_balance(c)
    assert not seed001.link_balance({**c, "ok": 8})
