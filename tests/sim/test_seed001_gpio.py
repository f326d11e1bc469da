"""Seed 001's GPIO, interrupt and power experiments on a MicaZ in tern-sim
(bench/seed001/gpio.c, tools/terntools/seed001_gpio.py), short: the
toggle loops' edges, every input edge answered once and in order by the
interrupt handler and then by the task, preemption showing against a busy
lower-priority task, the node's power within the ATmega128L's bounds, and
the network app fitting a micaz under the thread models."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from terntools import seed001  # noqa: E402
from terntools import seed001_gpio as g  # noqa: E402
from terntools import sim  # noqa: E402
from terntools.boards import load_board  # noqa: E402

BOARD = load_board(g.BOARD, ROOT)
EDGES = 20
LOAD_CYCLES = int(g.LOAD_SHARE * BOARD.cpu_hz * g.LOAD_PERIOD_US / 1e6)
AVR_IRQ_RESPONSE = 4 + 3  # cycles: the interrupt's response, then the vector's jmp (ATmega128 datasheet)


@pytest.fixture(scope="module")
def elves() -> dict[str, Path]:
    return {m: g.image(BOARD, m, g.APP, ROOT) for m in ("fifo", "stack")}


def react(elf: Path, work: Path, loaded: bool) -> dict[str, object]:
    if loaded:
        t = g.simulate(BOARD, elf, work, g.params_blob(g.MODE_REACT, EDGES, g.LOAD_PERIOD_US, LOAD_CYCLES), 0.3,
                       {"kind": "poisson", "start_us": 10_000, "rate_hz": g.LOAD_RATE_HZ, "width_us": g.LOADED_WIDTH_US,
                        "count": EDGES})
    else:
        t = g.simulate(BOARD, elf, work, g.params_blob(g.MODE_REACT, EDGES), 0.05,
                       {"kind": "periodic", "start_us": 10_000, "period_us": g.IDLE_PERIOD_US,
                        "width_us": g.WIDTH_US, "count": EDGES})
    assert f"answered={EDGES} refused=0" in t.console
    return {**g.react_figures(t, BOARD, EDGES), "node": t.node}


def test_toggle_loops_edges(elves: dict[str, Path], tmp_path: Path) -> None:
    """Every toggle reaches the pin; `PORTC |= b` then `PORTC &= ~b` is an
    sbi then a cbi, so the pin is high exactly one cbi (2 cycles); a toggle
    per message costs a dispatch, far more than the loop's few cycles."""
    t = g.simulate(BOARD, elves["stack"], tmp_path, g.params_blob(g.MODE_TOGGLE, 30), 0.5)
    f = g.toggle_figures(t, BOARD)
    assert f["on_cycles"]["n"] == 30 and f["on_cycles"]["min"] == f["on_cycles"]["max"] == 2
    assert f["xor_half_period_cycles"]["n"] >= 29 and 3 <= f["xor_half_period_cycles"]["median"] <= 12
    assert f["msg_half_period_cycles"]["median"] > 20 * f["xor_half_period_cycles"]["median"]


def test_every_edge_answered_in_order_without_jitter_when_asleep(elves: dict[str, Path], tmp_path: Path) -> None:
    """Asleep between edges the wake-up is the same each time (within a
    cycle: the edges fall between clock edges), but for an edge that meets
    the kernel's own timer interrupt; the handler's first statement comes
    after the AVR's own response time, the task after the handler."""
    r = react(elves["stack"], tmp_path, loaded=False)
    irq, io = r["irq_cycles"], r["io_cycles"]
    assert isinstance(irq, dict) and isinstance(io, dict)
    assert irq["n"] == io["n"] == EDGES
    assert irq["min"] > AVR_IRQ_RESPONSE
    for d in (irq, io):
        assert sum(x - d["min"] < 1.0 for x in d["samples"]) >= EDGES - 2, d["samples"]
    assert all(t > i for i, t in zip(irq["samples"], io["samples"]))


def test_preemption_shortens_the_reaction_under_load(elves: dict[str, Path], tmp_path: Path) -> None:
    """Poisson edges against a lower-priority task busy 40 % of the time:
    under fifo the reaction waits for the load's handler, under stack it
    preempts it, so stack's median input-to-output delay is shorter."""
    fifo = react(elves["fifo"], tmp_path / "fifo", loaded=True)["io_cycles"]
    stack = react(elves["stack"], tmp_path / "stack", loaded=True)["io_cycles"]
    assert isinstance(fifo, dict) and isinstance(stack, dict)
    assert stack["median"] < fifo["median"] and fifo["max"] > LOAD_CYCLES / 2


def test_gpio_power_is_between_idle_sleep_and_active(elves: dict[str, Path], tmp_path: Path) -> None:
    """The radio stays off; the CPU's mean power lies between the
    ATmega128L's idle-sleep and active currents at 3 V (tern-sim's table)."""
    node = react(elves["stack"], tmp_path, loaded=False)["node"]
    assert isinstance(node, sim.NodeResult)
    p = g.power_mw(node)
    assert p["radio_mw"] < 0.001
    assert 3.2 * 3.0 < p["cpu_mw"] < 8.0 * 3.0 and 0 < p["asleep_pct"] < 100


@pytest.mark.parametrize("model", ["threads", "adaptive"])
def test_network_app_fits_a_micaz_under_the_thread_models(model: str, tmp_path: Path) -> None:
    """The power experiment's network app (bench/seed001/net.c with a
    micaz's buffers): its thread stack and main()'s cut stack hold the
    receive path; every 50-byte datagram arrives intact, nothing dropped."""
    elf = g.image(BOARD, model, seed001.APP, ROOT)
    run = seed001.Run(size=50, mode=seed001.MODE_STREAM, hops=1, datagrams=30, period_ms=0,
                      signal_bytes=seed001.SIGNAL_BYTES[50], block=30, link_local=True)
    o = seed001.simulate(seed001.Plan(board=BOARD, p=0.0, hops=(1,)), run, elf, tmp_path)
    assert o.sender["sent"] == o.receiver["received"] == 30
    assert o.receiver["corrupt"] == o.receiver["dropped"] == o.receiver["reasm_dropped"] == 0
