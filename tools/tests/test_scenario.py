"""terntools.scenario: tern-sim scenario files. Every rule refuses a bad file
with an error naming the file, the line and the field; the locator finds the
line of any key path; make_scenario builds the same thing from Python.

The tests run against a small fake checkout (boards/micaz with a radio,
boards/atmega128 without, a QEMU board, apps/radio), so they need neither the
real micaz port nor the simulator. The line a refusal must name is marked
`# <-` in each TOML text."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import DATA, ROOT

from terntools.errors import UsageError
from terntools.scenario import Locator, field_name, grid_positions, load_scenario, make_scenario, parse_scenario

MICAZ = {
    "name": "micaz", "emulator": "simavr", "unit": "cycles", "cpu_hz": 7372800, "tick_hz": 7372800,
    "cycles_per_tick": [1, 1], "toolchain_prefix": "avr-", "mcu": "atmega128", "radio": "cc2420",
    "models": ["fifo", "priority", "stack", "threads", "adaptive"],
}  # fmt: skip

GOOD = """\
[sim]
duration = 2.0

[medium]
model = "udgm"
tx_range = 50

[[node]]
name = "a"
app = "radio"
position = [0, 0]

[[node]]
name = "b"
app = "radio"
position = [10, 0]
"""


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A checkout with boards micaz (radio), atmega128 (none), mps2-an385 (QEMU) and apps radio, hello."""
    r = tmp_path / "root"
    (r / "boards" / "micaz").mkdir(parents=True)
    (r / "boards" / "micaz" / "board.json").write_text(json.dumps(MICAZ))
    for board in ("atmega128", "mps2-an385"):
        shutil.copytree(DATA / "boards" / board, r / "boards" / board)
    for app in ("radio", "hello"):
        (r / "apps" / app).mkdir(parents=True)
    return r


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def marked_line(text: str) -> int:
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if "# <-" in line]
    assert len(lines) == 1, "mark exactly one line with # <-"
    return lines[0]


def refusal(tmp_path: Path, root: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as info:
        load_scenario(path, root=root)
    assert info.value.exit_status == 2
    return str(info.value)


# --------------------------------------------------------------------------- good files


def test_good_scenario_and_its_defaults(tmp_path: Path, root: Path) -> None:
    s = load_scenario(write(tmp_path, GOOD), root=root)
    assert (s.sim.duration_s, s.sim.duration_us, s.sim.seed, s.sim.channel, s.sim.threads) == (2.0, 2_000_000, 1, 26, 1)
    m = s.medium
    assert (m.model, m.tx_range_m, m.interference_range_m, m.success_tx, m.success_rx, m.capture_threshold_db) == (
        "udgm", 50.0, 100.0, 1.0, 1.0, 3.0)  # fmt: skip
    a, b = s.nodes
    assert (a.name, a.board.name, a.model, a.app, a.image, a.position, a.ppm) == (
        "a", "micaz", "stack", "radio", None, (0.0, 0.0, 0.0), 0.0)  # fmt: skip
    assert b.position == (10.0, 0.0, 0.0) and b.has_radio
    assert s.links == () and s.pins == ()
    assert s.stem == "s" and s.origin == str(tmp_path / "s.toml")


def test_every_field_given(tmp_path: Path, root: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "x.elf").write_bytes(b"\x7fELF")
    text = """\
[sim]
duration = 1
seed = 18446744073709551615
channel = 11
threads = 4

[medium]
model = "table"
capture_threshold_db = 2.5

[[node]]
name = "n-1"
board = "micaz"
image = "img/x.elf"
model = "threads"
ppm = -1000

[[node]]
name = "n_2"
app = "hello"
position = [1.5, 2, -3]
ppm = 12.5

[[link]]
from = "n-1"
to = "n_2"
prr = 0.5
rssi_dbm = -80
symmetric = true

[[pin]]
node = "n_2"
pin = "PG7"

[[pin]]
node = "n-1"
pin = "PA0"
label = "led"
"""
    s = load_scenario(write(tmp_path, text), root=root)
    assert (s.sim.seed, s.sim.channel, s.sim.threads, s.sim.duration_us) == (2**64 - 1, 11, 4, 1_000_000)
    assert (s.medium.model, s.medium.capture_threshold_db) == ("table", 2.5)
    n1, n2 = s.nodes
    assert n1.image == (tmp_path / "img" / "x.elf").resolve() and n1.app is None and n1.model == "threads"
    assert n1.position == (0.0, 0.0, 0.0) and n1.ppm == -1000.0
    assert n2.position == (1.5, 2.0, -3.0) and n2.ppm == 12.5
    assert [(link.src, link.dst, link.prr, link.rssi_dbm) for link in s.links] == [
        ("n-1", "n_2", 0.5, -80.0), ("n_2", "n-1", 0.5, -80.0)]  # fmt: skip
    assert [(p.node, p.port, p.bit, p.label) for p in s.pins] == [("n_2", "G", 7, "PG7"), ("n-1", "A", 0, "led")]


def test_nodes_without_radio_need_no_medium(tmp_path: Path, root: Path) -> None:
    s = load_scenario(write(tmp_path, '[sim]\nduration = 1\n[[node]]\nname = "x"\nboard = "atmega128"\napp = "hello"\n'),
                      root=root)  # fmt: skip
    assert not s.nodes[0].has_radio and s.medium.model == "udgm"


def test_the_example_scenarios_are_valid(root: Path) -> None:
    ping = load_scenario(ROOT / "docs" / "sim" / "ping.toml", root=root)
    assert [n.name for n in ping.nodes] == ["ping", "pong"] and ping.sim.duration_s == 2.0
    assert ping.nodes[1].position == (10.0, 0.0, 0.0)
    assert {(p.node, p.port, p.bit) for p in ping.pins} == {("ping", "D", 4), ("pong", "D", 4)}
    line = load_scenario(ROOT / "docs" / "sim" / "line5.toml", root=root)
    xs = [n.position[0] for n in line.nodes]
    assert len(xs) == 5 and all(b - a == 40 for a, b in zip(xs, xs[1:]))
    m = line.medium
    # neighbours hear each other; two hops apart neither hears nor senses the other: a hidden pair around n2
    assert 40 <= m.tx_range_m < 80 and m.interference_range_m < 80
    assert ("n2", "D", 4) in {(p.node, p.port, p.bit) for p in line.pins}


# --------------------------------------------------------------------------- refusals

BAD: list[tuple[str, str, str]] = [
    # (id, TOML text with the offending line marked, expected "field ...: message" part)
    ("toml-syntax", '[sim]\nduration = = 2  # <-\n', "not valid TOML: Invalid value"),
    ("unknown-table", '[simulation]  # <-\nduration = 2\n',
     "field simulation: unknown key (known tables: [sim], [medium], [[bus]], [[node]], [[link]], [[pin]], [[stimulus]], [[adc]], [[inject]])"),
    ("unknown-top-key", 'duration = 2  # <-\n', "field duration: unknown key"),
    ("sim-unknown-key", '[sim]\nduration = 2\nsed = 3  # <-\n',
     "field sim.sed: unknown key (known: duration, seed, channel, threads)"),
    ("sim-array", '[[sim]]  # <-\nduration = 2\n', "field sim: must be a table [sim], not an array of tables [[sim]]"),
    ("duration-missing", '[sim]  # <-\nseed = 3\n', "field sim.duration: is required: a number of seconds"),
    ("duration-zero", '[sim]\nduration = 0  # <-\n', "field sim.duration: must be a number of seconds greater than 0"),
    ("duration-string", '[sim]\nduration = "2s"  # <-\n', "field sim.duration: must be a number of seconds greater than 0 and at most 1e+06, not '2s'"),
    ("duration-tiny", '[sim]\nduration = 1e-9  # <-\n', "field sim.duration: must be at least 1 microsecond"),
    ("duration-nan", '[sim]\nduration = nan  # <-\n', "field sim.duration: must be a number"),
    ("seed-negative", '[sim]\nduration = 2\nseed = -1  # <-\n', "field sim.seed: must be an integer from 0 to 2^64-1, not -1"),
    ("seed-float", '[sim]\nduration = 2\nseed = 1.5  # <-\n', "field sim.seed: must be an integer from 0 to 2^64-1, not 1.5"),
    ("seed-bool", '[sim]\nduration = 2\nseed = true  # <-\n', "field sim.seed: must be an integer from 0 to 2^64-1, not true"),
    ("channel", '[sim]\nduration = 2\nchannel = 27  # <-\n', "field sim.channel: must be an 802.15.4 channel from 11 to 26, not 27"),
    ("threads", '[sim]\nduration = 2\nthreads = 0  # <-\n', "field sim.threads: must be a number of host threads from 1 to 1024, not 0"),
]
NODE = '\n[[node]]\nname = "a"\napp = "radio"\nposition = [0, 0]\n'
HEAD = '[sim]\nduration = 2\n[medium]\nmodel = "udgm"\n'
BAD += [
    ("medium-model", '[sim]\nduration = 2\n[medium]\nmodel = "free"  # <-\n' + NODE,
     'field medium.model: must be "udgm" or "table", not \'free\''),
    ("medium-model-missing", '[sim]\nduration = 2\n[medium]  # <-\ntx_range = 5\n' + NODE,
     'field medium.model: is required: "udgm" or "table"'),
    ("medium-unknown", HEAD + 'range = 5  # <-\n' + NODE, "field medium.range: unknown key (known: model, tx_range"),
    ("tx-range", HEAD + 'tx_range = 0  # <-\n' + NODE, "field medium.tx_range: must be a range in metres greater than 0 and at most 1e+07, not 0"),
    ("interference-range", HEAD + 'tx_range = 50\ninterference_range = 40  # <-\n' + NODE,
     "field medium.interference_range: must be a range in metres from tx_range (50) to 1e+07, not 40"),
    ("success-tx", HEAD + 'success_tx = 1.5  # <-\n' + NODE, "field medium.success_tx: must be a number between 0 and 1, not 1.5"),
    ("success-rx", HEAD + 'success_rx = -0.1  # <-\n' + NODE, "field medium.success_rx: must be a number between 0 and 1, not -0.1"),
    ("capture", HEAD + 'capture_threshold_db = -1  # <-\n' + NODE, "field medium.capture_threshold_db: must be a number between 0 and 100"),
    ("udgm-key-in-table", '[sim]\nduration = 2\n[medium]\nmodel = "table"\ntx_range = 5  # <-\n' + NODE,
     'field medium.tx_range: applies to model "udgm" only'),
    ("no-nodes", HEAD, "no [[node]] table"),
    ("node-as-table", HEAD + '[node]  # <-\nname = "a"\n', "field node: must be an array of tables [[node]], not a single table [node]"),
    ("node-unknown", HEAD + NODE + 'count = 3  # <-\n', "field node[0].count: unknown key (known: name, board, app, image, model, position, ppm, bus, bus_irq, tun, tun_host, tun_route, halt)"),
    ("node-halt", HEAD + NODE + 'halt = 0  # <-\n', "field node[0].halt: must be seconds after the start, when the core stops (a processor that dies), not 0"),
    ("tun-name", HEAD + NODE + 'tun = "a b"  # <-\n', "field node[0].tun: must be an interface name (1-15 letters, digits, _.-), not 'a b'"),
    ("tun-host", HEAD + NODE + 'tun = "tern0"\ntun_host = "2001:db8:1::1"  # <-\n', "field node[0].tun_host: must be an IPv6 address with its prefix length"),
    ("tun-route", HEAD + NODE + 'tun = "tern0"\ntun_route = "2001:db8::1/64"  # <-\n', "field node[0].tun_route: must be an IPv6 prefix"),
    ("tun-alone", HEAD + NODE + 'tun_route = "2001:db8::/64"  # <-\n', "field node[0].tun_route: only with tun = \"NAME\""),
    ("name-missing", HEAD + '[[node]]  # <-\napp = "radio"\n', "field node[0].name: is required"),
    ("name-chars", HEAD + '[[node]]\nname = "a b"  # <-\napp = "radio"\n', "field node[0].name: must be a name of letters, digits, _ and -, not 'a b'"),
    ("name-duplicate", HEAD + NODE + '[[node]]\nname = "a"  # <-\napp = "radio"\nposition = [1, 1]\n',
     "field node[1].name: 'a' is already the name of node[0]"),
    ("board-unknown", HEAD + NODE + 'board = "telosb"  # <-\n', "field node[0].board: no board 'telosb' in boards/ (tern-sim boards: atmega128, micaz)"),
    ("board-qemu", HEAD + NODE + 'board = "mps2-an385"  # <-\n', "field node[0].board: board mps2-an385 runs under qemu; tern-sim runs simavr boards only"),
    ("model", HEAD + NODE + 'model = "hybrid"  # <-\n', "field node[0].model: board micaz does not list model 'hybrid' (it lists: fifo, priority"),
    ("app-and-image", HEAD + NODE + 'image = "x.elf"\n'.replace("\n", "  # <-\n"),
     "give either app"),
    ("neither-app-nor-image", HEAD + '[[node]]  # <-\nname = "a"\nposition = [0, 0]\n', 'field node[0]: needs app = "NAME"'),
    ("app-unknown", HEAD + '[[node]]\nname = "a"\napp = "nope"  # <-\nposition = [0, 0]\n', "field node[0].app: no app named 'nope' (looked in apps, tests/target/apps, bench)"),
    ("image-missing", HEAD + '[[node]]\nname = "a"\nimage = "none.elf"  # <-\nposition = [0, 0]\n', "field node[0].image: "),
    ("position-missing", HEAD + '[[node]]  # <-\nname = "a"\napp = "radio"\n',
     'field node[0].position: is required with medium model "udgm"'),
    ("position-short", HEAD + '[[node]]\nname = "a"\napp = "radio"\nposition = [1]  # <-\n',
     "field node[0].position: must be [x, y] or [x, y, z] in metres, not [1]"),
    ("position-element", HEAD + '[[node]]\nname = "a"\napp = "radio"\nposition = [\n  1,\n  "x",  # <-\n]\n',
     "field node[0].position[1]: must be a number of metres between -1e+07 and 1e+07 (position is [x, y] or [x, y, z] in metres), not 'x'"),
    ("position-far", HEAD + '[[node]]\nname = "a"\napp = "radio"\nposition = [0, 2e7]  # <-\n',
     "field node[0].position[1]: must be a number of metres between -1e+07 and 1e+07"),
    ("name-long", HEAD + '[[node]]\nname = "%s"  # <-\napp = "radio"\n' % ("n" * 64), "field node[0].name: longer than 63 characters"),
    ("ppm", HEAD + NODE + '[[node]]\nname = "b"\napp = "radio"\nposition = [1, 0]\nppm = "x"  # <-\n',
     "field node[1].ppm: must be a number between -1000 and 1000, not 'x'"),
    ("ppm-range", HEAD + NODE + 'ppm = 1000.5  # <-\n', "field node[0].ppm: must be a number between -1000 and 1000, not 1000.5"),
]
TABLE = '[sim]\nduration = 2\n[medium]\nmodel = "table"\n' + NODE + '[[node]]\nname = "b"\napp = "radio"\n'
LINK = '[[link]]\nfrom = "a"\nto = "b"\nprr = 0.9\nrssi_dbm = -60\n'
BAD += [
    ("link-needs-table", HEAD + NODE + '[[link]]  # <-\nfrom = "a"\nto = "a"\n', '[[link]] entries need medium model "table"'),
    ("link-unknown-key", TABLE + LINK + 'loss = 1  # <-\n', "field link[0].loss: unknown key (known: from, to, prr, rssi_dbm, symmetric)"),
    ("link-from", TABLE + '[[link]]\nfrom = "c"  # <-\nto = "b"\nprr = 1\nrssi_dbm = -60\n', "field link[0].from: no node named 'c'"),
    ("link-to-missing", TABLE + '[[link]]  # <-\nfrom = "a"\nprr = 1\n', "field link[0].to: is required: a node name"),
    ("link-self", TABLE + '[[link]]\nfrom = "a"\nto = "a"  # <-\nprr = 1\nrssi_dbm = -60\n', "field link[0].to: a link from node a to itself"),
    ("link-prr", TABLE + '[[link]]\nfrom = "a"\nto = "b"\nprr = 2  # <-\nrssi_dbm = -60\n', "field link[0].prr: must be a number between 0 and 1, not 2"),
    ("link-rssi-missing", TABLE + '[[link]]  # <-\nfrom = "a"\nto = "b"\nprr = 1\n', "field link[0].rssi_dbm: is required: a number between -150 and 20"),
    ("link-rssi", TABLE + '[[link]]\nfrom = "a"\nto = "b"\nprr = 1\nrssi_dbm = 30  # <-\n', "field link[0].rssi_dbm: must be a number between -150 and 20, not 30"),
    ("link-symmetric", TABLE + LINK + 'symmetric = "yes"  # <-\n', "field link[0].symmetric: must be true or false, not 'yes'"),
    ("link-duplicate", TABLE + LINK + 'symmetric = true\n[[link]]  # <-\nfrom = "b"\nto = "a"\nprr = 1\nrssi_dbm = -50\n',
     "field link[1]: the link b -> a is already given by link[0]"),
    ("link-no-radio", TABLE + '[[node]]\nname = "c"\nboard = "atmega128"\napp = "hello"\n'
     '[[link]]\nfrom = "a"\nto = "c"  # <-\nprr = 1\nrssi_dbm = -60\n', "field link[0].to: node c has no radio (board atmega128)"),
    ("medium-missing", '[sim]\nduration = 2\n' + NODE, "table [medium] is missing (node a has a radio)"),
    ("pin-node", HEAD + NODE + '[[pin]]\nnode = "z"  # <-\npin = "PB0"\n', "field pin[0].node: no node named 'z'"),
    ("pin-name", HEAD + NODE + '[[pin]]\nnode = "a"\npin = "PH0"  # <-\n', "field pin[0].pin: must be a pin like \"PB0\" (port A-G, bit 0-7), not 'PH0'"),
    ("pin-bit", HEAD + NODE + '[[pin]]\nnode = "a"\npin = "PB8"  # <-\n', "field pin[0].pin: must be a pin like \"PB0\""),
    ("pin-label", HEAD + NODE + '[[pin]]\nnode = "a"\npin = "PB0"\nlabel = "chip select"  # <-\n',
     "field pin[0].label: must be a label of letters, digits, _ and -, not 'chip select'"),
    ("pin-duplicate", HEAD + NODE + '[[pin]]\nnode = "a"\npin = "PB0"\n[[pin]]\nnode = "a"\npin = "PB0"  # <-\n',
     "field pin[1].pin: node a pin PB0 is already recorded by pin[0]"),
    ("pin-label-long", HEAD + NODE + '[[pin]]\nnode = "a"\npin = "PB0"\nlabel = "%s"  # <-\n' % ("l" * 32),
     "field pin[0].label: longer than 31 characters"),
    ("pin-too-many", HEAD + NODE + '[[pin]]\nnode = "a"\npin = "PB0"\n' * 256 + '[[pin]]  # <-\nnode = "a"\npin = "PB0"\n',
     "field pin[256]: more than 256 recorded pins"),
    ("pin-unknown-key", HEAD + NODE + '[[pin]]\nnode = "a"\npin = "PB0"\nedge = "rise"  # <-\n', "field pin[0].edge: unknown key (known: node, pin, label)"),
    ("pin-as-table", HEAD + NODE + '[pin]  # <-\nnode = "a"\n', "field pin: must be an array of tables [[pin]]"),
]

BUS = '[[bus]]\nname = "m1"\n'
ON_BUS = '[[node]]\nname = "p"\nboard = "atmega128"\napp = "hello"\nbus = "m1"\nbus_irq = "PE4"\n'
BAD += [
    ("bus-unknown-key", HEAD + BUS + 'speed = 9  # <-\n' + NODE + ON_BUS,
     "field bus[0].speed: unknown key (known: name, throughput, slot_us, latency_us, rx_frames)"),
    ("bus-duplicate", HEAD + BUS + '[[bus]]\nname = "m1"  # <-\n' + NODE + ON_BUS, "field bus[1].name: 'm1' is already the name of bus[0]"),
    ("bus-slot-short", HEAD + BUS + 'throughput = 100000\nslot_us = 600  # <-\n' + NODE + ON_BUS,
     "field bus[0].slot_us: a slot must hold the longest frame (66 bytes: 5280.0 us at 100000 bit/s), not 600"),
    ("bus-rx-frames", HEAD + BUS + 'rx_frames = 0  # <-\n' + NODE + ON_BUS, "field bus[0].rx_frames: must be frames a processor can hold, 1 to 255, not 0"),
    ("bus-empty", HEAD + BUS.replace('"m1"', '"m1"  # <-') + NODE, "field bus[0].name: no [[node]] is on bus 'm1'"),
    ("node-bus-unknown", HEAD + NODE + '[[node]]\nname = "p"\nboard = "atmega128"\napp = "hello"\nbus = "m2"  # <-\n',
     "field node[1].bus: no [[bus]] named 'm2'"),
    ("node-bus-irq-missing", HEAD + BUS + NODE + '[[node]]  # <-\nname = "p"\nboard = "atmega128"\napp = "hello"\nbus = "m1"\n',
     "field node[1].bus_irq: is needed: board atmega128 names no bus interrupt pin"),
    ("node-bus-irq-bad", HEAD + BUS + NODE + ON_BUS.replace('"PE4"', '"E4"  # <-'),
     "field node[1].bus_irq: must be a pin like \"PE4\" (port A-G, bit 0-7), not 'E4'"),
    ("node-bus-irq-alone", HEAD + NODE + 'bus_irq = "PE4"  # <-\n', "field node[0].bus_irq: applies to a node on a bus"),
]

STIM = '[[stimulus]]\nnode = "a"\npin = "PE5"\n'
INJ = '[[inject]]\nnode = "a"\nat_us = 1000\n'
BAD += [
    ("stimulus-kind", HEAD + NODE + STIM + 'kind = "square"  # <-\n', "field stimulus[0].kind: must be \"periodic\" or \"poisson\", not 'square'"),
    ("stimulus-period", HEAD + NODE + STIM + 'kind = "periodic"\nwidth_us = 10\nperiod_us = 10  # <-\n',
     "field stimulus[0].period_us: must be microseconds, longer than width_us (10), not 10"),
    ("stimulus-rate-on-periodic", HEAD + NODE + STIM + 'kind = "periodic"\nperiod_us = 100\nrate_hz = 5  # <-\n',
     "field stimulus[0].rate_hz: applies to kind \"poisson\" only"),
    ("stimulus-rate", HEAD + NODE + STIM + 'kind = "poisson"\nrate_hz = 0  # <-\n', "field stimulus[0].rate_hz: must be pulses per second"),
    ("stimulus-node", HEAD + NODE + '[[stimulus]]\nnode = "z"  # <-\n', "field stimulus[0].node: no node named 'z'"),
    ("inject-node", HEAD + NODE + '[[inject]]\nnode = "z"  # <-\n', "field inject[0].node: no node with a radio named 'z'"),
    ("inject-psdu", HEAD + NODE + INJ + 'psdu = "41x8"  # <-\n', "field inject[0].psdu: must be pairs of hex digits"),
    ("inject-fcs", HEAD + NODE + INJ + 'psdu = "4188"\nfcs = "maybe"  # <-\n', "field inject[0].fcs: must be \"good\", \"bad\" or \"raw\""),
    ("inject-long", HEAD + NODE + INJ + 'psdu = "' + "00" * 126 + '"  # <-\n', "field inject[0].psdu: 128 bytes with the FCS: at most 127"),
    ("inject-stop", HEAD + NODE + INJ + 'psdu = "4188"\nstop_after = 5  # <-\n', "field inject[0].stop_after: must be PSDU bytes on air, 0 ... 4"),
]

ADC = '[[adc]]\nnode = "a"\n'
BAD += [
    ("adc-node", HEAD + NODE + '[[adc]]\nnode = "z"  # <-\n', "field adc[0].node: no node named 'z'"),
    ("adc-channel", HEAD + NODE + ADC + 'channel = 8  # <-\nfile = "s.toml"\n', "field adc[0].channel: must be an ADC channel 0-7"),
    ("adc-file", HEAD + NODE + ADC + 'channel = 1\nfile = "nowhere.txt"  # <-\n', "field adc[0].file: "),
    ("adc-twice", HEAD + NODE + ADC + 'channel = 1\nfile = "s.toml"\n' + ADC + 'channel = 1  # <-\nfile = "s.toml"\n',
     "field adc[1].channel: node a channel 1 already has a file: adc[0]"),
]


def test_an_adc_file_reaches_the_config(tmp_path: Path, root: Path) -> None:
    from terntools.sim import config_text

    (tmp_path / "mic.txt").write_text("512\n")
    s = load_scenario(write(tmp_path, HEAD + NODE + ADC + 'channel = 2\nfile = "mic.txt"\n'), root=root)
    config = config_text(s, tmp_path / "out", {"a": Path("/a.elf")})
    assert f"adc node=a channel=2 file={tmp_path / 'mic.txt'}" in config.splitlines()


def test_a_stimulus_reaches_the_config(tmp_path: Path, root: Path) -> None:
    from terntools.sim import config_text

    text = HEAD + NODE + STIM + 'kind = "poisson"\nrate_hz = 255\nwidth_us = 5\n'
    s = load_scenario(write(tmp_path, text), root=root)
    config = config_text(s, tmp_path / "out", {"a": Path("/a.elf")})
    assert "stimulus node=a pin=E5 kind=poisson start_us=0 rate_hz=255 width_us=5 count=0" in config.splitlines()


def test_an_injected_frame_reaches_the_config(tmp_path: Path, root: Path) -> None:
    from terntools.sim import config_text

    s = load_scenario(write(tmp_path, HEAD + NODE + INJ + 'psdu = "4188AB"\nfcs = "bad"\nphr = 3\nstop_after = 2\n'),
                      root=root)
    config = config_text(s, tmp_path / "out", {"a": Path("/a.elf")})
    assert "inject node=a at_us=1000 psdu=4188ab fcs=bad phr=3 stop_after=2" in config.splitlines()


def test_a_tun_reaches_the_config_after_its_node(tmp_path: Path, root: Path) -> None:
    from terntools.sim import config_text

    s = load_scenario(write(tmp_path, HEAD + NODE + 'tun = "tern0"\ntun_route = "2001:db8:5::/48"\n'), root=root)
    lines = config_text(s, tmp_path / "out", {"a": Path("/a.elf")}).splitlines()
    tun = lines.index("tun node=a name=tern0 host=2001:db8:1::1/64 route=2001:db8:5::/48")
    assert tun > next(i for i, line in enumerate(lines) if line.startswith("node name=a "))


def test_a_bus_and_its_processors_reach_the_config(tmp_path: Path, root: Path) -> None:
    from terntools.sim import config_text

    s = load_scenario(write(tmp_path, HEAD + BUS + 'throughput = 2000000\n' + NODE + ON_BUS), root=root)
    assert [(b.name, b.throughput_bps, b.slot_us, b.latency_us, b.rx_frames) for b in s.buses] == [
        ("m1", 2_000_000, 600.0, 20.0, 2)]
    assert (s.node("p").bus, s.node("p").bus_irq) == ("m1", "E4")
    text = config_text(s, tmp_path / "out", {"a": Path("/a.elf"), "p": Path("/p.elf")})
    lines = text.splitlines()
    bus_line = lines.index("bus name=m1 throughput_bps=2000000 slot_us=600 latency_us=20 rx_frames=2")
    node_line = next(i for i, line in enumerate(lines) if line.startswith("node name=p "))
    assert bus_line < node_line and lines[node_line].endswith(" radio=none bus=m1 bus_irq=E4")


@pytest.mark.parametrize(("text", "complaint"), [(t, c) for _, t, c in BAD], ids=[i for i, _, _ in BAD])
def test_bad_scenarios_are_refused_naming_file_line_and_field(tmp_path: Path, root: Path, text: str,
                                                              complaint: str) -> None:  # fmt: skip
    message = refusal(tmp_path, root, text)
    path = tmp_path / "s.toml"
    if "# <-" in text:
        line = marked_line(text)
        if complaint.startswith("not valid TOML"):
            assert message.startswith(f"{path}:{line}:"), message  # tomllib's line and column
        else:
            assert message.startswith(f"{path}:{line}: "), message
    else:
        assert message.startswith(f"{path}: "), message
    assert complaint in message
    assert "\n" not in message


def test_toml_syntax_error_names_line_and_column(tmp_path: Path, root: Path) -> None:
    message = refusal(tmp_path, root, '[sim]\nduration = 2\n[[node]\n')
    assert message == f"{tmp_path / 's.toml'}:3:7: not valid TOML: Expected ']]' at the end of an array declaration"


def test_missing_sim_table(tmp_path: Path, root: Path) -> None:
    assert refusal(tmp_path, root, NODE) == f"{tmp_path / 's.toml'}: table [sim] is missing (it needs at least duration = SECONDS)"


def test_missing_and_unreadable_files(tmp_path: Path, root: Path) -> None:
    with pytest.raises(UsageError, match="scenario file .*nope.toml does not exist"):
        load_scenario(tmp_path / "nope.toml", root=root)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"# \xe9\n")
    with pytest.raises(UsageError, match="latin1.toml: not UTF-8 text"):
        load_scenario(bad, root=root)


def test_image_with_a_blank_is_refused(tmp_path: Path, root: Path) -> None:
    (tmp_path / "my images").mkdir()
    (tmp_path / "my images" / "a.elf").write_bytes(b"")
    message = refusal(tmp_path, root, HEAD + '[[node]]\nname = "a"\nimage = "my images/a.elf"  # <-\nposition = [0, 0]\n')
    assert message.startswith(f"{tmp_path / 's.toml'}:7: field node[0].image:") and "holds a blank" in message


def test_overrides(tmp_path: Path, root: Path) -> None:
    s = load_scenario(write(tmp_path, GOOD), root=root)
    t = s.with_overrides(seed=7, threads=3)
    assert (t.sim.seed, t.sim.threads, s.sim.seed) == (7, 3, 1)
    assert s.with_overrides() == s
    with pytest.raises(UsageError, match="--seed must be an integer from 0 to 2\\^64-1, not -1"):
        s.with_overrides(seed=-1)


# --------------------------------------------------------------------------- the locator


def test_locator_maps_key_paths_to_lines() -> None:
    text = """\
# comment [[node]]
[sim]
duration = 2.0   # seconds
"quoted.key" = 1
a.b = 2

[[node]]
name = "x"
s = \"\"\"multi
[[node]]
name = "y"
\"\"\"
t = { a = 1, b = [1,
  2] }

[[node]]
position = [
  10,  # [not a table]
  "x, y",
]
lit = '[[node]]'
"""
    loc = Locator(text)
    assert loc.lines[("sim",)] == 2 and loc.lines[("sim", "duration")] == 3
    assert loc.lines[("sim", "quoted.key")] == 4
    assert loc.lines[("sim", "a")] == 5 and loc.lines[("sim", "a", "b")] == 5
    assert loc.lines[("node",)] == 7 and loc.lines[("node", 0)] == 7 and loc.lines[("node", 0, "name")] == 8
    assert loc.lines[("node", 0, "s")] == 9
    assert ("node", 2) not in loc.lines  # the [[node]] inside the string is not a table
    assert loc.lines[("node", 0, "t")] == 13 and loc.lines[("node", 0, "t", "b", 1)] == 14
    assert loc.lines[("node", 1)] == 16
    assert [loc.lines[("node", 1, "position", i)] for i in (0, 1)] == [18, 19]
    assert loc.lines[("node", 1, "lit")] == 21
    # a key that was never written falls back to its table
    assert loc.line(("node", 1, "ppm")) == 16 and loc.line(("medium", "model")) is None


def test_locator_subtables_of_an_array_of_tables() -> None:
    loc = Locator('[[a]]\nx = 1\n[[a]]\n[a.b]\ny = 2\n')
    assert loc.lines[("a", 1, "b")] == 4 and loc.lines[("a", 1, "b", "y")] == 5


def test_field_names() -> None:
    assert field_name(("node", 2, "ppm")) == "node[2].ppm"
    assert field_name(("node", 0, "position", 1)) == "node[0].position[1]"
    assert field_name(("sim", "a.b")) == 'sim."a.b"'


def test_parse_scenario_from_text(root: Path) -> None:
    with pytest.raises(UsageError, match=r"^mem:3: field sim.seed"):
        parse_scenario("[sim]\nduration = 1\nseed = -4\n", "mem", root=root)


# --------------------------------------------------------------------------- from Python


def test_make_scenario_builds_many_nodes(root: Path) -> None:
    spots = grid_positions(100, 30.0)
    s = make_scenario(duration_s=10, medium={"model": "udgm", "tx_range": 40},
                      nodes=[{"name": f"n{i}", "app": "radio", "position": list(p)} for i, p in enumerate(spots)],
                      pins=[{"node": "n0", "pin": "PD4"}], seed=9, root=root)  # fmt: skip
    assert len(s.nodes) == 100 and s.nodes[99].position == (270.0, 270.0, 0.0) and s.nodes[11].position == (30.0, 30.0, 0.0)
    assert s.sim.seed == 9 and s.origin == "<python>" and s.pins[0].label == "PD4"


def test_make_scenario_checks_like_a_file(root: Path) -> None:
    with pytest.raises(UsageError) as info:
        make_scenario(duration_s=1, medium={"model": "udgm"},
                      nodes=[{"name": "a", "app": "radio", "position": [0, 0]},
                             {"name": "a", "app": "radio", "position": [1, 0]}], root=root)  # fmt: skip
    assert str(info.value) == "<python>: field node[1].name: 'a' is already the name of node[0]"


def test_grid_positions() -> None:
    assert grid_positions(3, 10.0, columns=3) == [(0.0, 0.0), (10.0, 0.0), (20.0, 0.0)]
    assert grid_positions(4, 1.0) == [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
    with pytest.raises(ValueError):
        grid_positions(2, 0.0)
