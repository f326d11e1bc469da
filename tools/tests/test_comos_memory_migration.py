"""`tern bench comos memory` and `migration`: the grouping of objects into
seed 002's components and the reading and fitting of migration latencies
(tools/terntools/comos_memory.py, comos_migration.py)."""
from __future__ import annotations

import pytest

from terntools import comos_memory as cm
from terntools import comos_migration as mig
from terntools.errors import TernError
from terntools.scenario import load_scenario
from terntools.sizes import FileSize


def test_every_object_goes_to_one_component() -> None:
    assert cm.component_of("kernel/heap.c") == "Memory management"
    assert cm.component_of("kernel/timer.c") == "Virtual timer"
    assert cm.component_of("kernel/task_move.c") == "Migration protocol"
    assert cm.component_of("kernel/msg.c") == "Messaging kernel"
    assert cm.component_of("libgcc.a(_muldi3.o)") == "C runtime: 64-bit arithmetic (libgcc)"
    assert cm.component_of("libgcc.a(_udivmod64.o)") == "C runtime: 64-bit arithmetic (libgcc)"
    assert cm.component_of("libgcc.a(_udivmodhi4.o)") == cm.RUNTIME
    assert cm.component_of("drivers/procbus/procbus.c") == "Bus and remote delivery"
    assert cm.component_of("drivers/procbus/procbus_sync.c") == "Time sync"
    assert cm.component_of("kernel/power.c") == "Power"
    assert cm.component_of("kernel/app_check.c") == "Validation of the description"
    assert cm.component_of("arch/avr/startup.c") == "Hardware drivers"
    assert cm.component_of("migrate.c") == "Application"
    # every component that is not one of seed 002's rows says so
    assert cm.SEED_ROW["Time sync"] is None and cm.SEED_ROW["Virtual timer"] == "Virtual timer"


MAP_HEAD = """Archive member included to satisfy reference by file (symbol)

/usr/lib/gcc/avr/5.4.0/avr51/libgcc.a(_udivdi3.o)
                              apps/m/CMakeFiles/m.elf.dir/__/__/kernel/migrate.c.obj (__umoddi3)
/usr/lib/gcc/avr/5.4.0/avr51/libgcc.a(_udivmod64.o)
                              /usr/lib/gcc/avr/5.4.0/avr51/libgcc.a(_divdi3.o) (__udivmod64)

Allocating common symbols
"""


def test_archive_members_name_who_pulled_them_in() -> None:
    assert cm.pulled_in(MAP_HEAD) == {"libgcc.a(_udivdi3.o)": "kernel/migrate.c",
                                      "libgcc.a(_udivmod64.o)": "libgcc.a(_divdi3.o)"}


def test_group_sums_objects_and_gives_the_rest_to_the_runtime() -> None:
    objs = [FileSize("kernel/msg.c", 100, 2, 10), FileSize("kernel/heap.c", 50, 0, 300),
            FileSize("migrate.c", 30, 4, 5), FileSize("kernel/migrate.c", 70, 0, 0)]
    total = FileSize("x.elf", 260, 6, 325)  # 10 bytes of text (vectors) no object claims
    comps = {c.name: c for c in cm.group(objs, total, heap=256)}
    assert comps["Messaging kernel"].text == 100 and comps["Messaging kernel"].bss == 10
    assert comps[cm.RUNTIME].text == 10 and comps[cm.RUNTIME].bss == 10
    assert comps["Memory management"].bss == 44  # the heap arena is not counted
    assert comps["Application"].static_data == 9
    assert sum(c.text for c in comps.values()) == total.text
    with pytest.raises(TernError, match="heap arena"):
        cm.group(objs, total, heap=400)


CONSOLE = """migrate 0: board module-m1284, model priority, 20000000 Hz, 3 modules
migrate 0: counter moved (TERN_OK) now on module 1 state 10 bytes latency 90584 cycles 4529 us
migrate 0: counter stayed (TERN_EINVAL) now on module 0 state 10 bytes latency 116584 cycles 5829 us
migrate 0: counter moved (TERN_OK) now on module 1 state 1034 bytes latency 483601 cycles 24180 us
"""


def test_latency_lines_are_read_and_a_failed_check_fails_the_run() -> None:
    rows = mig.parse_console(CONSOLE, "m1")
    assert [(r["outcome"], r["state_bytes"], r["cycles"], r["us"]) for r in rows] == [
        ("moved", 10, 90584, 4529), ("stayed", 10, 116584, 5829), ("moved", 1034, 483601, 24180)]
    with pytest.raises(TernError, match="m2: apps/migrate failed a check"):
        mig.parse_console(CONSOLE + "migrate 1: bad stream 0 7\n", "m2")


def test_fit_is_least_squares() -> None:
    a, b = mig.fit([(0, 3.5), (100, 4.8), (1000, 16.5)])
    assert a == pytest.approx(3.5) and b == pytest.approx(0.013)
    with pytest.raises(TernError):
        mig.fit([(10, 1.0), (10, 2.0)])


@pytest.mark.parametrize("n", [2, 5])
def test_generated_scenarios_are_valid(n: int, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "s.toml"
    p.write_text(mig.scenario_text(n))
    s = load_scenario(p)
    assert len(s.nodes) == n


def test_psync_reads_a_run_and_fails_on_a_missed_pulse(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """`tern bench comos psync --run` (formerly `tern psync`): offsets from the
    reference's edges, JSON in --out; exit 1 when a processor has no edge."""
    import json

    from terntools.cli import main

    def edge(node: str, t_ps: int) -> str:
        return json.dumps({"t_ps": t_ps, "node": node, "event": "pin", "label": "pulse", "value": 1})

    run = tmp_path / "run"
    run.mkdir()
    s = 1_000_000_000_000
    (run / "events.jsonl").write_text("\n".join([edge("master", s), edge("m1", s + 2_000_000),
                                                 edge("master", 2 * s)]) + "\n")
    code = main(["bench", "comos", "psync", "--run", str(run), "--out", str(tmp_path / "out")])
    doc = json.loads((tmp_path / "out" / "psync.json").read_text())
    assert code == 1 and doc["missing"] == 1 and doc["max_abs_us"] == 2.0
    assert "+2.000" in capsys.readouterr().out


def test_the_whole_kernel_takes_each_component_where_it_is_largest() -> None:
    def img(elf: str, board: str, sync: int, mig: int) -> dict[str, object]:
        comps = [{"name": n, "code": {"Time sync": sync, "Migration protocol": mig}.get(n, 1), "static_data": 2}
                 for n in cm.COMPONENTS]
        return {"elf": elf, "board": board, "components": comps}

    w = cm.whole_kernel([img("a.elf", "m128", 900, 14000), img("b.elf", "m128", 5000, 0),
                         img("c.elf", "m1284", 9999, 99999)], "m128")
    rows = {c["name"]: c for c in w["components"]}
    assert rows["Time sync"]["image"] == "b.elf" and rows["Migration protocol"]["image"] == "a.elf"
    assert w["code"] == 5000 + 14000 + len(cm.KERNEL) - 2 and "Application" not in rows
