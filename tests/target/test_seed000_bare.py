"""bench/seed000's bare build (SEED000_BARE: the tree node without its
measurement and reporting), the build compared with seed 000 Table II."""
from __future__ import annotations

from conftest import BOARDS, image, run

from terntools import sizes


def test_bare_node_runs_silently_and_is_smaller(board_model: tuple[str, str]) -> None:
    board, model = board_model
    # Default parameter block: n = 1, l_s = 1 ms, 3 sensing periods.
    r = run(board, model, "seed000_bare")
    assert r.status == 0, r.out
    assert r.out == ""  # no report, no banner: nothing of the measurement is left
    full, bare = sizes.measure([image(board, model, "seed000"), image(board, model, "seed000_bare")],
                               BOARDS[board])
    assert bare.text < full.text
    assert bare.ram < full.ram
