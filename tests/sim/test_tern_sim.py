"""Tests of tools/simavr/build/tern-sim, the many-node simulator, with
bare-metal radio guests from tests/sim/guests/ (independent of tern's own
CC2420 driver, so a driver bug cannot hide a model bug or the reverse).

Every assertion on time is on simulated time, exact to the picosecond where
the model defines it exactly.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIM_DIR = ROOT / "tools" / "simavr"
SIM = SIM_DIR / "build" / "tern-sim"
GUESTS = HERE / "guests"
BUILD = ROOT / "build" / "sim-guests"

F_CPU = 7_372_800
US = 1_000_000  # ps
BYTE = 32 * US
SHR = 5 * BYTE

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")


@pytest.fixture(scope="session", autouse=True)
def simulator() -> Path:
    subprocess.run(["make", "-s", "-C", str(SIM_DIR)], check=True)
    return SIM


_built: dict[tuple[str, tuple[str, ...]], Path] = {}


def guest(source: str, *defines: str, mcu: str = "atmega128", f_cpu: int = F_CPU) -> Path:
    """guests/<source>.c built with -D<defines>, once per session."""
    key = (source, (mcu, str(f_cpu), *defines))
    if key not in _built:
        BUILD.mkdir(parents=True, exist_ok=True)
        name = "-".join([source, mcu, *(d.replace("=", "_") for d in defines)])
        elf = BUILD / f"{name}.elf"
        subprocess.run(
            ["avr-gcc", f"-mmcu={mcu}", "-Os", f"-DF_CPU={f_cpu}UL", "-Wall", "-Wextra", "-Werror",
             f"-I{SIM_DIR}", *(f"-D{d}" for d in defines), "-o", str(elf), str(GUESTS / f"{source}.c")],
            check=True,
        )  # fmt: skip
        _built[key] = elf
    return _built[key]


@dataclass
class Node:
    name: str
    elf: Path
    x: float = 0.0
    ppm: float = 0.0
    radio: bool = True
    mcu: str = "atmega128"
    freq_hz: int = F_CPU
    bus: str = ""  # "NAME PIN", e.g. "n1 E4"


@dataclass
class Result:
    out: Path
    code: int
    stderr: str
    events: list[dict[str, Any]]
    summary: dict[str, Any]
    consoles: dict[str, str] = field(default_factory=dict)

    def of(self, node: str, event: str, **match: Any) -> list[dict[str, Any]]:
        return [e for e in self.events
                if e["node"] == node and e["event"] == event and all(e.get(k) == v for k, v in match.items())]  # fmt: skip

    def node(self, name: str) -> dict[str, Any]:
        return next(n for n in self.summary["nodes"] if n["name"] == name)


def simulate(
    tmp: Path,
    nodes: list[Node],
    *,
    duration_us: int = 60_000,
    medium: str = "model=udgm tx_range_m=50 int_range_m=100 success_tx=1 success_rx=1",
    links: list[str] = (),  # type: ignore[assignment]
    buses: list[str] = (),  # type: ignore[assignment]
    stimuli: list[str] = (),  # type: ignore[assignment]
    pins: list[tuple[str, str, int, str]] = (),  # type: ignore[assignment]
    threads: int = 1,
    seed: int = 1,
    flags: list[str] = (),  # type: ignore[assignment]
) -> Result:
    out = tmp / "out"
    lines = [f"sim seed={seed} duration_us={duration_us} out={out}",
             f"medium {medium} capture_db=3 channel=26"]  # fmt: skip
    lines += [f"bus {bus}" for bus in buses]
    for n in nodes:
        bus = f" bus={n.bus.split()[0]} bus_irq={n.bus.split()[1]}" if n.bus else ""
        lines.append(f"node name={n.name} elf={n.elf} mcu={n.mcu} freq_hz={n.freq_hz} ppm={n.ppm} "
                     f"x={n.x} y=0 z=0 radio={'cc2420' if n.radio else 'none'}{bus}")  # fmt: skip
    lines += [f"link {link}" for link in links]
    lines += [f"stimulus {st}" for st in stimuli]
    lines += [f"pin node={node} port={port} bit={bit} label={label}" for node, port, bit, label in pins]
    tmp.mkdir(parents=True, exist_ok=True)
    config = tmp / "config"
    config.write_text("\n".join(lines) + "\n")
    p = subprocess.run([str(SIM), "--threads", str(threads), *flags, str(config)], capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()] if p.returncode == 0 else []
    summary = json.loads((out / "summary.json").read_text()) if p.returncode == 0 else {}
    consoles = {n.name: (out / "console" / f"{n.name}.txt").read_text(errors="replace")
                for n in nodes if p.returncode == 0}  # fmt: skip
    return Result(out, p.returncode, p.stderr, events, summary, consoles)


def edges(r: Result, node: str, label: str, value: int) -> list[int]:
    return [e["t_ps"] for e in r.of(node, "pin", label=label, value=value)]


# ----------------------------------------------------------------------------- air time


@pytest.mark.parametrize("length", [5, 20, 127])
def test_frame_occupies_the_channel_for_its_exact_air_time(tmp_path: Path, length: int) -> None:
    r = simulate(tmp_path, [Node("a", guest("sender", f"LEN={length}")), Node("b", guest("receiver"), x=10)],
                 pins=[("a", "D", 4, "sfd"), ("b", "D", 4, "sfd")])  # fmt: skip
    assert r.code == 0, r.stderr
    starts = r.of("a", "tx_start")
    ends = r.of("a", "tx_end")
    assert len(starts) >= 5 and len(ends) >= len(starts) - 1
    for s, e in zip(starts, ends):
        assert e["tx"] == s["tx"] and not e["aborted"]
        assert e["t_ps"] - s["t_ps"] == (5 + 1 + length) * BYTE
    # SFD: up after the SFD byte, down at the frame's end, at both ends of
    # the link at the same instant (no propagation delay is modelled).
    for side in ("a", "b"):
        rises, falls = edges(r, side, "sfd", 1), edges(r, side, "sfd", 0)
        assert rises[: len(ends)] == [s["t_ps"] + SHR for s in starts[: len(ends)]], side
        assert falls[: len(ends)] == [e["t_ps"] for e in ends], side
    received = [line for line in r.consoles["b"].splitlines() if line.startswith("rx ")]
    assert received and all(f"len={length} " in line and "crc=1" in line for line in received)
    assert r.node("b")["frames_received"] == len(received)
    assert r.node("a")["frames_sent"] == len(ends)


def test_runs_are_identical_whatever_the_thread_count(tmp_path: Path) -> None:
    nodes = [Node("a", guest("sender")), Node("b", guest("receiver"), x=10),
             Node("c", guest("sender", "START_US=7000"), x=20), Node("d", guest("clock"), ppm=-20)]  # fmt: skip
    pins = [("b", "D", 6, "cca"), ("d", "A", 0, "tick")]
    runs = []
    for i, threads in enumerate((1, 1, 2)):
        r = simulate(tmp_path / str(i), nodes, pins=pins, threads=threads)
        assert r.code == 0, r.stderr
        runs.append({p.relative_to(r.out): p.read_bytes() for p in sorted(r.out.rglob("*")) if p.is_file()})
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][Path("events.jsonl")].count(b"rx_ok") > 0


# ----------------------------------------------------------------------------- collisions


def test_overlapping_frames_collide_at_a_receiver_in_range_of_both(tmp_path: Path) -> None:
    # a and c start their frames on the same cycle, both 20 m from b
    r = simulate(tmp_path, [Node("a", guest("sender")), Node("b", guest("receiver"), x=20),
                            Node("c", guest("sender"), x=40)])  # fmt: skip
    assert r.code == 0, r.stderr
    assert len(r.of("a", "tx_start")) >= 5
    assert r.of("b", "collision")
    assert not r.of("b", "rx_ok")
    assert "crc=1" not in r.consoles["b"]
    assert r.node("b")["frames_collided"] >= 5


def test_a_much_stronger_frame_captures_the_receiver(tmp_path: Path) -> None:
    # a is 2 m from b, c 98 m: a's signal is ~29 dB above c's (> 3 dB capture)
    r = simulate(tmp_path, [Node("a", guest("sender")), Node("b", guest("receiver"), x=2),
                            Node("c", guest("sender"), x=100)],
                 medium="model=udgm tx_range_m=100 int_range_m=100 success_tx=1 success_rx=1")  # fmt: skip
    assert r.code == 0, r.stderr
    oks = r.of("b", "rx_ok")
    assert oks and all(e["from"] == 0 for e in oks)
    assert not r.of("b", "collision")
    assert all(e["reason"] == "busy" for e in r.of("b", "rx_lost"))


def test_no_collision_beyond_the_interference_range(tmp_path: Path) -> None:
    # c is 120 m from b: beyond the 100 m interference range
    r = simulate(tmp_path, [Node("a", guest("sender")), Node("b", guest("receiver"), x=20),
                            Node("c", guest("sender"), x=140)])  # fmt: skip
    assert r.code == 0, r.stderr
    assert not r.of("b", "collision")
    assert len(r.of("b", "rx_ok")) == len(r.of("a", "tx_end"))


def test_hidden_terminal_pair_collides_at_the_middle_node(tmp_path: Path) -> None:
    # a - b - c in a line, 40 m apart; c starts 500 us after a and checks CCA
    line = [Node("a", guest("sender", "CCA")), Node("b", guest("receiver"), x=40),
            Node("c", guest("sender", "CCA", "START_US=2500"), x=80)]  # fmt: skip
    # c within a's interference range: its CCA sees a and it defers
    heard = simulate(tmp_path / "heard", line,
                     medium="model=udgm tx_range_m=50 int_range_m=100 success_tx=1 success_rx=1")  # fmt: skip
    assert heard.code == 0, heard.stderr
    assert "busy" in heard.consoles["c"] and not heard.of("c", "tx_start")
    assert not heard.of("b", "collision") and heard.of("b", "rx_ok")
    # hidden: a and c cannot hear each other (80 m > 50 m), both send, b loses both
    hidden = simulate(tmp_path / "hidden", line,
                      medium="model=udgm tx_range_m=50 int_range_m=50 success_tx=1 success_rx=1")  # fmt: skip
    assert hidden.code == 0, hidden.stderr
    assert "busy" not in hidden.consoles["c"] and hidden.of("c", "tx_start")
    collisions = hidden.of("b", "collision")
    assert len(collisions) >= 5
    assert not hidden.of("b", "rx_ok")


# ----------------------------------------------------------------------------- CCA


def test_cca_is_busy_during_a_frame_and_during_a_black_burst(tmp_path: Path) -> None:
    for kind, sender in (("frame", guest("sender", "LEN=60")), ("carrier", guest("sender", "CARRIER_US=1000"))):
        r = simulate(tmp_path / kind, [Node("a", sender), Node("b", guest("receiver"), x=30)],
                     pins=[("b", "D", 6, "cca")])  # fmt: skip
        assert r.code == 0, r.stderr
        starts = [e for e in r.of("a", "tx_start") if e["kind"] == kind]
        ends = r.of("a", "tx_end")
        assert len(starts) >= 4, kind
        busy, clear = edges(r, "b", "cca", 0), edges(r, "b", "cca", 1)
        for s, e in zip(starts, ends):
            assert s["t_ps"] in busy, kind  # CCA falls when the signal starts
            assert e["t_ps"] in clear, kind  # and rises when it ends
            assert not [t for t in clear if s["t_ps"] < t < e["t_ps"]], kind
        if kind == "carrier":
            # on air 12 symbols after STXON, off one symbol after SRFOFF,
            # which the guest strobes 1 ms (and a few SPI bytes) after STXON
            for s, e in zip(starts, ends):
                assert e["aborted"] and (1000 - 192 + 16) * US <= e["t_ps"] - s["t_ps"] <= (1000 - 192 + 40) * US


# ----------------------------------------------------------------------------- receiver limits


def test_rx_fifo_overflow_behaves_as_on_the_chip(tmp_path: Path) -> None:
    r = simulate(tmp_path, [Node("a", guest("sender", "LEN=50", "PERIOD_MS=3")),
                            Node("b", guest("receiver", "NO_READ"), x=10)],
                 pins=[("b", "E", 6, "fifop"), ("b", "B", 7, "fifo")])  # fmt: skip
    assert r.code == 0, r.stderr
    lost = r.of("b", "rx_lost", reason="overflow")
    assert lost
    # 128 bytes hold two 51-byte frames; the third overflows the FIFO
    assert len(r.of("b", "rx_ok")) == 2
    first = lost[0]["t_ps"]
    assert edges(r, "b", "fifo", 0)[-1] == first  # FIFO falls at the overflow
    assert [t for t in edges(r, "b", "fifop", 1) if t <= first]  # FIFOP is high
    assert r.node("b")["rx_overflows"] == 1


def test_loss_draws_follow_the_link_table_and_the_seed(tmp_path: Path) -> None:
    table = "model=table"
    links = ["from=a to=b prr=0.5 rssi_dbm=-60"]
    nodes = [Node("a", guest("sender", "PERIOD_MS=2")), Node("b", guest("receiver"), x=10)]
    one = simulate(tmp_path / "1", nodes, duration_us=400_000, medium=table, links=links, seed=7)
    two = simulate(tmp_path / "2", nodes, duration_us=400_000, medium=table, links=links, seed=8)
    for r in (one, two):
        assert r.code == 0, r.stderr
        sent = len(r.of("a", "tx_end"))
        ok, lost = len(r.of("b", "rx_ok")), len(r.of("b", "rx_lost", reason="prr"))
        assert ok + lost == sent and 0.3 * sent < ok < 0.7 * sent
    assert [e["tx"] for e in one.of("b", "rx_ok")] != [e["tx"] for e in two.of("b", "rx_ok")]


# ----------------------------------------------------------------------------- clocks and nodes


def test_a_node_at_plus_40_ppm_runs_40_us_a_second_ahead(tmp_path: Path) -> None:
    r = simulate(tmp_path, [Node("x", guest("clock"), radio=False), Node("y", guest("clock"), ppm=40, radio=False)],
                 duration_us=2_100_000, pins=[("x", "A", 0, "tick"), ("y", "A", 0, "tick")])  # fmt: skip
    assert r.code == 0, r.stderr
    x = [e["t_ps"] for e in r.of("x", "pin")]
    y = [e["t_ps"] for e in r.of("y", "pin")]
    assert len(x) == len(y) >= 14
    # edge k: k million cycles after the first at each node's own clock
    for tx, ty in zip(x[1:], y[1:]):
        lead = tx - ty
        assert lead == pytest.approx(tx * 40e-6 / (1 + 40e-6), abs=2)  # ps
    # per simulated second: 40 us
    assert (x[-1] - y[-1]) / (x[-1] / 1e12) == pytest.approx(40 * US, rel=1e-4)
    # sleeping nodes are asleep almost all the time
    for name in ("x", "y"):
        n = r.node(name)
        assert n["sleep_cycles"] > 0.99 * n["cycles"]


def profile_of(path: Path) -> dict[int, int]:
    return {int(a, 16): int(c) for a, c in (line.split() for line in path.read_text().splitlines())}


def test_the_profile_counts_every_cycle_and_a_window_only_its_own(tmp_path: Path) -> None:
    """--profile: every cycle of the run at some address, the sleeps at the
    SLEEP; --profile-windows: exactly the cycles inside the windows (the
    clock guest sleeps between its edges, so a window cuts sleeps apart)."""
    nodes = [Node("x", guest("clock"), radio=False), Node("y", guest("clock"), radio=False)]
    r = simulate(tmp_path / "all", nodes, duration_us=1_100_000, flags=["--profile"])
    assert r.code == 0, r.stderr
    whole = profile_of(r.out / "profile" / "x.txt")
    assert sum(whole.values()) == r.node("x")["cycles"]
    # one SLEEP does all the sleeping (and the interrupt entries that wake it)
    assert 0 <= max(whole.values()) - r.node("x")["sleep_cycles"] < 1_000
    windows = tmp_path / "windows.txt"
    # x: two windows, 1,000 and 73,728 cycles (cycle c begins at c * 10^12 / F_CPU ps); y: none
    spans = [(100_000, 101_000), (500_000, 573_728)]
    windows.write_text("".join(f"x {a * 10**12 // F_CPU} {b * 10**12 // F_CPU}\n" for a, b in spans))
    r = simulate(tmp_path / "win", nodes, duration_us=1_100_000, flags=["--profile-windows", str(windows)])
    assert r.code == 0, r.stderr
    assert sum(profile_of(r.out / "profile" / "x.txt").values()) == 1_000 + 73_728
    assert not (r.out / "profile" / "y.txt").exists()
    windows.write_text("x 500 100\n")
    r = simulate(tmp_path / "bad", nodes, flags=["--profile-windows", str(windows)])
    assert r.code == 100 and "line 1 (x): FROM_PS must be below TO_PS" in r.stderr


def test_a_crashing_node_is_named_and_the_others_go_on(tmp_path: Path) -> None:
    crash = BUILD / "crash.elf"
    BUILD.mkdir(parents=True, exist_ok=True)
    subprocess.run(["avr-gcc", "-mmcu=atmega128", "-Os", f"-I{SIM_DIR}", "-o", str(crash),
                    str(ROOT / "tests" / "harness" / "guests" / "crash.c")], check=True)  # fmt: skip
    r = simulate(tmp_path, [Node("bad", crash, radio=False), Node("good", guest("clock"), radio=False)],
                 duration_us=500_000, pins=[("good", "A", 0, "tick")])  # fmt: skip
    assert r.code == 0, r.stderr
    assert "node bad crashed" in r.stderr
    bad = r.node("bad")
    assert bad["status"] == "crash" and "crashed" in bad["crash"]
    assert r.node("good")["status"] == "running"
    # its initial level, then a toggle every 135.6 ms: all of them in 0.5 s
    assert [e["value"] for e in r.of("good", "pin")] == [0, 1, 0, 1]


def test_bad_config_lines_are_refused_with_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("sim seed=1 duration_us=1000 out=x\nmedium model=udgm tx_range_m=5 colour=red\n")
    p = subprocess.run([str(SIM), str(config)], capture_output=True, text=True)
    assert p.returncode == 100
    assert f"{config}:2:" in p.stderr and "int_range_m" in p.stderr
    config.write_text("sim seed=1 duration_us=1000 out=x\nmedium model=table capture_db=3 channel=26 x=1\n")
    p = subprocess.run([str(SIM), str(config)], capture_output=True, text=True)
    assert p.returncode == 100 and f"{config}:2: x: unknown key" in p.stderr


# ----------------------------------------------------------------------------- PCAP


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make setup installs it)")
def test_pcap_decodes_in_tshark_without_malformed_frames(tmp_path: Path) -> None:
    r = simulate(tmp_path, [Node("a", guest("sender", "LEN=40")), Node("b", guest("receiver"), x=10)])
    assert r.code == 0, r.stderr
    p = subprocess.run(["tshark", "-r", str(r.out / "air.pcap"), "-T", "fields", "-e", "frame.time_epoch",
                        "-e", "wpan.seq_no", "-e", "wpan.fcs_ok", "-e", "_ws.malformed"],
                       capture_output=True, text=True, check=True)  # fmt: skip
    rows = [line.split("\t") for line in p.stdout.splitlines()]
    starts = r.of("a", "tx_start")
    assert len(rows) == len(r.of("a", "tx_end")) >= 5
    for row, start, seq in zip(rows, starts, range(256)):
        assert float(row[0]) == pytest.approx(start["t_ps"] / 1e12, abs=1e-9)
        assert int(row[1]) == seq
        assert row[2] in ("1", "True")
        assert row[3] == ""


# ----------------------------------------------------------------------------- stimuli


def test_a_periodic_stimulus_gives_exact_edges_and_a_constant_interrupt_latency(tmp_path: Path) -> None:
    r = simulate(tmp_path, [Node("n", guest("irq"), radio=False)], duration_us=30_000,
                 stimuli=["node=n pin=E5 kind=periodic start_us=1000 period_us=1000 width_us=10 count=20"],
                 pins=[("n", "E", 5, "stim"), ("n", "A", 0, "isr")])  # fmt: skip
    assert r.code == 0, r.stderr
    rises = edges(r, "n", "stim", 1)
    assert rises == [(1000 + 1000 * k) * US for k in range(20)]
    assert edges(r, "n", "stim", 0) == [t + 10 * US for t in rises]
    answers = edges(r, "n", "isr", 1)
    assert len(answers) == 20
    # from a sleeping CPU every interrupt is answered after the same number
    # of cycles (wake-up, vector, handler prologue) counted from the first
    # clock edge after the pin's; in picoseconds it varies with where the
    # pin edge falls within a cycle (1 ms is 7,372.8 cycles)
    latencies = {round(a * F_CPU / 1e12) - -(-t * F_CPU // 10**12) for a, t in zip(answers, rises)}
    assert len(latencies) == 1
    assert 10 < latencies.pop() < 60


def test_poisson_stimulus_follows_its_rate_and_seed(tmp_path: Path) -> None:
    def arrivals(seed: int, where: str) -> list[int]:
        r = simulate(tmp_path / where, [Node("n", guest("irq"), radio=False)], duration_us=2_000_000, seed=seed,
                     stimuli=["node=n pin=E5 kind=poisson start_us=0 rate_hz=500 width_us=5"],
                     pins=[("n", "E", 5, "stim")])  # fmt: skip
        assert r.code == 0, r.stderr
        return edges(r, "n", "stim", 1)

    one, again, other = arrivals(1, "a"), arrivals(1, "b"), arrivals(2, "c")
    assert one == again and one != other
    for times in (one, other):
        assert abs(len(times) - 1000) < 5 * 1000**0.5  # 500 Hz for 2 s, within 5 sigma
        gaps = [b - a for a, b in zip(times, times[1:])]
        mean = sum(gaps) / len(gaps)
        assert abs(mean - 2000 * US) < 0.15 * 2000 * US  # exponential gaps, mean 1/rate


# ----------------------------------------------------------------------------- processor bus

BUS = "name=n1 throughput_bps=1000000 slot_us=600 latency_us=20 rx_frames=2"


def processors(*defines: str, reader: tuple[str, ...] = ()) -> list[Node]:
    """p0 sends (guests/bus.c), p1 (ATmega128, 7.3728 MHz) and p2 (ATmega1284P, 20 MHz) receive."""
    return [
        Node("p0", guest("bus", *defines), radio=False, bus="n1 E4"),
        Node("p1", guest("bus", *defines, *reader), radio=False, bus="n1 E4"),
        Node("p2", guest("bus", *defines, *reader, mcu="atmega1284p", f_cpu=20_000_000), radio=False,
             mcu="atmega1284p", freq_hz=20_000_000, bus="n1 D2"),
    ]  # fmt: skip


def received(r: Result, node: str) -> list[str]:
    return [line for line in r.consoles[node].splitlines() if line.startswith("rx ")]


def test_bus_keeps_order_and_makes_a_sender_wait_instead_of_dropping(tmp_path: Path) -> None:
    # p1 starts reading 20 ms late and holds two frames: the sender waits
    r = simulate(tmp_path, processors(reader=("READ_DELAY_MS=20",)), duration_us=60_000, buses=[BUS],
                 pins=[("p1", "E", 4, "irq")])  # fmt: skip
    assert r.code == 0, r.stderr
    assert received(r, "p1") == [f"rx src=0 len=20 n={n}" for n in range(10)]
    assert received(r, "p2") == []
    assert "errors 1" in r.consoles["p0"]  # a send while one is in flight: refused, counted
    transfers = [e for e in r.events if e["event"] == "bus"]
    assert len(transfers) == 10
    # two frames fill p1's queue; the third leaves only once p1 has read one
    first_read = edges(r, "p1", "irq", 0)[0]
    assert transfers[1]["t_ps"] < first_read < transfers[2]["t_ps"]
    assert r.node("p0")["bus"] == {**r.node("p0")["bus"], "frames_sent": 10, "refused": 1}
    assert r.node("p1")["bus"]["frames_received"] == 10


def test_bus_broadcast_reaches_every_processor_once(tmp_path: Path) -> None:
    r = simulate(tmp_path, processors("BROADCAST"), duration_us=40_000, buses=[BUS])
    assert r.code == 0, r.stderr
    for node in ("p1", "p2"):
        assert received(r, node) == [f"rx src=0 len=20 n={n}" for n in range(10)], node
    assert len([e for e in r.events if e["event"] == "bus"]) == 10  # once on the bus each


def test_bus_transfers_fill_the_senders_tdma_slots_at_the_configured_rate(tmp_path: Path) -> None:
    r = simulate(tmp_path, processors(), duration_us=40_000, buses=[BUS], pins=[("p1", "E", 4, "irq")])
    assert r.code == 0, r.stderr
    transfers = [e for e in r.events if e["event"] == "bus"]
    slot = 600 * US
    for t in transfers:
        assert t["t_ps"] % slot == 0 and (t["t_ps"] // slot) % 3 == 0  # p0 owns every third slot
        assert t["end_ps"] - t["t_ps"] == (2 + 20) * 8 * US  # 22 bytes at 1 Mbit/s
    # the receive interrupt rises when a frame has arrived at an empty queue
    assert edges(r, "p1", "irq", 1)[0] == transfers[0]["end_ps"]


def test_a_stamped_frame_is_captured_by_timer1_at_its_start_on_every_end(tmp_path: Path) -> None:
    # every other frame is stamped: ICP1 (PD4 on the ATmega128s, PD6 on the
    # ATmega1284P) is high while it is on the bus, on the sender and on the
    # receivers; each ICR1 latches the start on its own clock (p1 at +20 ppm)
    nodes = processors("BROADCAST", "STAMP")
    nodes[1].ppm = 20.0
    pins = [("p0", "D", 4, "edge"), ("p1", "D", 4, "edge"), ("p2", "D", 6, "edge")]
    r = simulate(tmp_path, nodes, duration_us=40_000, buses=[BUS], pins=pins)
    assert r.code == 0, r.stderr
    transfers = [e for e in r.events if e["event"] == "bus"]
    assert [t["stamp"] for t in transfers] == [True, False] * 5
    stamped = [t for t in transfers if t["stamp"]]
    clocks = {"p0": (F_CPU, 0), "p1": (F_CPU, 20), "p2": (20_000_000, 0)}
    for node, (hz, ppm) in clocks.items():
        assert edges(r, node, "edge", 1) == [t["t_ps"] for t in stamped], node
        assert edges(r, node, "edge", 0) == [t["end_ps"] for t in stamped], node
        icr = [int(line.split()[1]) for line in r.consoles[node].splitlines() if line.startswith("icr ")]
        # the node's first cycle at or after each start (docs/tern-sim.md, "Time")
        den = hz * (1_000_000_000 + ppm * 1000)
        cycles = [-(-t["t_ps"] * den // 10**21) for t in stamped]
        assert len(icr) == len(stamped), node
        assert [(b - a) % 65536 for a, b in zip(icr, icr[1:])] == \
            [(b - a) % 65536 for a, b in zip(cycles, cycles[1:])], node  # fmt: skip


# ----------------------------------------------------------------------------- ADC signal files


def test_an_adc_channel_plays_its_file_one_sample_per_conversion(tmp_path: Path) -> None:
    """[[adc]] (tools/simavr/adc.c): each conversion on channel 3 reads the
    file's next sample, exactly, and starts it again after the last; a
    channel without a file reads 0. Counters in summary.json."""
    samples = tmp_path / "ch3.txt"
    samples.write_text("# a comment\n0\n1023\n\n512  # end of line comment\n7\n")
    lines = [f"sim seed=1 duration_us=20000 out={tmp_path / 'out'}",
             f"node name=n elf={guest('adc')} mcu=atmega128 freq_hz={F_CPU} ppm=0 x=0 y=0 z=0 radio=none",
             f"adc node=n channel=3 file={samples}"]  # fmt: skip
    (tmp_path / "config").write_text("\n".join(lines) + "\n")
    p = subprocess.run([str(SIM), str(tmp_path / "config")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    console = (tmp_path / "out" / "console" / "n.txt").read_text()
    assert console.split() == ["0", "1023", "512", "7", "0", "1023", "512", "0"]
    node = json.loads((tmp_path / "out" / "summary.json").read_text())["nodes"][0]
    assert node["exit_status"] == 0 and node["adc"] == {"3": {"samples": 7, "wraps": 1}}


@pytest.mark.parametrize(("text", "complaint"), [
    ("12\nloud\n", "ch.txt:2: a sample is a 10-bit code 0..1023, not 'loud'"),
    ("1024\n", "ch.txt:1: a sample is a 10-bit code 0..1023, not '1024'"),
    ("# nothing\n", "ch.txt: no samples"),
])  # fmt: skip
def test_a_bad_adc_file_is_refused_by_name(tmp_path: Path, text: str, complaint: str) -> None:
    (tmp_path / "ch.txt").write_text(text)
    lines = [f"sim seed=1 duration_us=1000 out={tmp_path / 'out'}",
             f"node name=n elf={guest('adc')} mcu=atmega128 freq_hz={F_CPU} ppm=0 x=0 y=0 z=0 radio=none",
             f"adc node=n channel=3 file={tmp_path / 'ch.txt'}"]  # fmt: skip
    (tmp_path / "config").write_text("\n".join(lines) + "\n")
    p = subprocess.run([str(SIM), str(tmp_path / "config")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 100 and complaint in p.stderr, p.stderr  # EXIT_USAGE
