"""bench/seed000's bare build (SEED000_BARE: the tree node without its
measurement and reporting), the build compared with seed 000 Table II."""
from __future__ import annotations

import subprocess

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


def _avr_symbol_kinds(elf: object) -> dict[str, str]:
    out = subprocess.run(["avr-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return {p[2]: p[1] for p in (line.split() for line in out.splitlines()) if len(p) == 3}


def test_bare_description_stays_in_flash_on_the_avr() -> None:
    """seed000_bare's description is validated when it is built, so it is
    built with TERN_APP_FLASH: its task table and app record are read in
    place from flash (nm kind t), where seed000.elf's, checked at run time,
    are copied into RAM at reset (kind d). It also runs (the test above)."""
    bare = _avr_symbol_kinds(image("atmega128", "stack", "seed000_bare"))
    full = _avr_symbol_kinds(image("atmega128", "stack", "seed000"))
    assert (bare["tasks"], bare["app"]) == ("t", "t")
    assert (full["tasks"], full["app"]) == ("d", "d")
