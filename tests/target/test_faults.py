"""The fault-injection rows of docs/reliability.md on every board and model:
a refused send names its reason, moves exactly that counter and leaves a heap
payload with its sender; an exhausted heap is one counted failure and comes
back whole; an exhausted message pool refuses with TERN_EFULL, counts it, and
delivers every message it accepted. The app is tests/target/apps/faults."""
from __future__ import annotations

import re

from conftest import run


def test_faults_are_named_counted_and_lose_nothing(board_model: tuple[str, str]) -> None:
    board, model = board_model
    r = run(board, model, "faults")
    assert r.status == 0, r.out
    assert "faults: missing task=TERN_ENOTASK+1 port=TERN_ENOPORT+1 route=TERN_ENOROUTE+1 payload=kept" in r.lines, r.out
    assert "faults: heap exhausted failures=+1 returned=whole" in r.lines, r.out
    pool = re.search(r"^faults: pool accepted=(\d+) refused=TERN_EFULL\+1$", r.out, re.M)
    assert pool, r.out
    accepted = int(pool.group(1))
    assert accepted > 0
    # Every accepted message reached the sink, and the pool took a new one.
    assert f"faults: pool delivered={accepted} after=TERN_OK" in r.lines, r.out
    assert r.lines.index("faults: done") > r.lines.index(f"faults: pool delivered={accepted} after=TERN_OK")
