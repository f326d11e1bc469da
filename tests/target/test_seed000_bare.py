"""bench/seed000's bare build (SEED000_BARE: the tree node without its
measurement and reporting), the build compared with seed 000 Table II."""
from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import BOARDS, image, run

from terntools import arrivals, seed000_targets, sizes
from terntools.runner import run_image


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


def test_footprint_floor_is_the_same_node(tmp_path: Path) -> None:
    """bench/floor/seed000_floor.c, the floor issue 17's footprint rows set
    seed000_bare against, does the node's work: every arrival of the host's
    draw comes (the same arrivals.c), each is a job run or a drop counted,
    every sensing period runs; n = 8, l_s = 75 ms overloads its 8-job queue."""
    root = Path(__file__).resolve().parents[2]
    for n, ls, samples in ((1, 1, 3), (8, 75, 2)):
        defines = ("FLOOR_REPORT=1", f"FLOOR_N={n}", f"FLOOR_LS_MS={ls}", f"FLOOR_SAMPLES={samples}")
        elf = seed000_targets.footprint_floor_build(root, tmp_path / f"floor{n}.elf", defines)
        result = run_image(BOARDS["atmega128"], elf, 60.0)
        assert result.status == 0
        got = seed000_targets.parse_footprint_floor(result.stdout.decode())
        assert got["arrivals"] == arrivals.arrival_count(1, n, samples)
        assert got["jobs"] + got["dropped"] == got["arrivals"]
        assert got["sensing"] == samples
        assert (got["dropped"] > 0) == (n == 8)
