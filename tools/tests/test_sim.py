"""terntools.sim and `tern sim`: the config tern-sim gets (golden), the summary
read back, trace decoding, and the command's exit statuses, against a fake
tern-sim (a script that writes docs/tern-sim.md's outputs). The last test runs
the real tern-sim on docs/sim/ping.toml when it and the micaz port are built."""
from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from test_scenario import GOOD, MICAZ

from terntools import sim
from terntools.cli import main
from terntools.errors import TernError, UsageError
from terntools.scenario import load_scenario, make_scenario
from terntools.trace import Event, EventType, encode_events

GOLDEN = """\
# tern-sim config written by tern sim from {origin}
sim seed=42 duration_us=1500000 out={out} threads=2 max_wall_s=30
medium model=udgm tx_range_m=50 int_range_m=75.5 success_tx=0.9 success_rx=1 capture_db=3 channel=15
node name=a elf={elf} mcu=atmega128 freq_hz=7372800 ppm=0 x=0 y=0 z=0 radio=cc2420
node name=b elf={img} mcu=atmega128 freq_hz=7372800 ppm=-12.5 x=10 y=0.25 z=2 radio=cc2420
pin node=a port=D bit=4 label=sfd
pin node=b port=B bit=0 label=PB0
"""

# A stand-in for tern-sim: reads the config, writes console/<node>.txt, events.jsonl and
# summary.json; node names starting with "crash" crash, FAKE_SIM_STATUS sets the exit status.
FAKE_SIM = r'''#!PYTHON
import json, os, sys
status = int(os.environ.get("FAKE_SIM_STATUS", "0"))
if status:
    sys.stderr.write("tern-sim: fake failure\n")
    sys.exit(status)
conf = dict(sim={}, nodes=[])
for line in open(sys.argv[1]):
    words = line.split("#")[0].split()
    if not words:
        continue
    kv = dict(w.split("=", 1) for w in words[1:])
    if words[0] == "sim":
        conf["sim"] = kv
    elif words[0] == "node":
        conf["nodes"].append(kv)
out = conf["sim"]["out"]
os.makedirs(os.path.join(out, "console"), exist_ok=True)
nodes, events = [], []
for i, n in enumerate(conf["nodes"]):
    crash = n["name"].startswith("crash")
    with open(os.path.join(out, "console", n["name"] + ".txt"), "w") as f:
        f.write(os.environ.get("FAKE_SIM_CONSOLE", "hello from %s\n" % n["name"]))
    if crash:
        events.append({"t_ps": 5, "node": n["name"], "event": "crash", "reason": "invalid opcode", "pc": 0x1F2})
    nodes.append({"name": n["name"], "status": "crash" if crash else "running", "exit_status": None,
                  "end_ps": 5 if crash else int(conf["sim"]["duration_us"]) * 1000000,
                  "cycles": 1000, "sleep_cycles": 250 * (i + 1),
                  "frames_sent": i + 1, "frames_received": 2, "frames_bad_fcs": 0, "frames_collided": 1,
                  "frames_lost": 3, "radio_ps": {"off": 1, "idle": 2000000000, "rx": 500000000, "tx": 0},
                  "energy_mj": {"cpu": 1.5, "radio": 2, "total": 3.5}})
with open(os.path.join(out, "events.jsonl"), "w") as f:
    for ev in events:
        f.write(json.dumps(ev) + "\n")
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump({"seed": int(conf["sim"]["seed"]), "duration_ps": int(conf["sim"]["duration_us"]) * 1000000,
               "threads": int(conf["sim"]["threads"]), "nodes": nodes}, f)
print("fake tern-sim done")
'''


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A checkout with the micaz board, apps/radio, a built radio.elf and a fake tern-sim."""
    r = tmp_path / "root"
    (r / "boards" / "micaz").mkdir(parents=True)
    (r / "boards" / "micaz" / "board.json").write_text(json.dumps(MICAZ))
    (r / "apps" / "radio").mkdir(parents=True)
    elf = r / "build" / "target" / "micaz" / "stack" / "apps" / "radio" / "radio.elf"
    elf.parent.mkdir(parents=True)
    elf.write_bytes(b"\x7fELF")
    fake = r / "tools" / "simavr" / "build" / "tern-sim"
    fake.parent.mkdir(parents=True)
    fake.write_text(FAKE_SIM.replace("PYTHON", sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return r


def scenario_file(tmp_path: Path, text: str = GOOD) -> Path:
    path = tmp_path / "ping.toml"
    path.write_text(text)
    return path


def test_config_golden(tmp_path: Path, root: Path) -> None:
    img = tmp_path / "b.elf"
    img.write_bytes(b"")
    text = f"""\
[sim]
duration = 1.5
seed = 42
channel = 15
threads = 2

[medium]
model = "udgm"
tx_range = 50
interference_range = 75.5
success_tx = 0.9

[[node]]
name = "a"
app = "radio"
position = [0, 0]

[[node]]
name = "b"
image = "b.elf"
position = [10, 0.25, 2]
ppm = -12.5

[[pin]]
node = "a"
pin = "PD4"
label = "sfd"

[[pin]]
node = "b"
pin = "PB0"
"""
    s = load_scenario(scenario_file(tmp_path, text), root=root)
    elf = tmp_path / "radio.elf"
    out = tmp_path / "out"
    config = sim.write_config(s, out, {"a": elf}, max_wall_s=30)
    assert config == out / "tern-sim.conf"
    assert config.read_text() == GOLDEN.format(origin=tmp_path / "ping.toml", out=out, elf=elf, img=img)


def test_config_table_model_and_links(root: Path, tmp_path: Path) -> None:
    s = make_scenario(duration_s=0.001, medium={"model": "table", "capture_threshold_db": 0.5},
                      nodes=[{"name": "a", "app": "radio"}, {"name": "b", "app": "radio"}],
                      links=[{"from": "a", "to": "b", "prr": 0.75, "rssi_dbm": -91.25, "symmetric": True}],
                      root=root)  # fmt: skip
    text = sim.config_text(s, Path("/o"), {"a": Path("/x.elf"), "b": Path("/x.elf")})
    assert text.splitlines()[1:] == [
        "sim seed=1 duration_us=1000 out=/o threads=1",
        "medium model=table capture_db=0.5 channel=26",
        "node name=a elf=/x.elf mcu=atmega128 freq_hz=7372800 ppm=0 x=0 y=0 z=0 radio=cc2420",
        "node name=b elf=/x.elf mcu=atmega128 freq_hz=7372800 ppm=0 x=0 y=0 z=0 radio=cc2420",
        "link from=a to=b prr=0.75 rssi_dbm=-91.25",
        "link from=b to=a prr=0.75 rssi_dbm=-91.25",
    ]


def test_config_numbers_never_use_exponents() -> None:
    assert [sim._num(v) for v in (0.0, -0.0, 50.0, 1e-7, 12345678.25, 3)] == [
        "0", "0", "50", "0.0000001", "12345678.25", "3"]  # fmt: skip


def test_config_refuses_blanks_in_paths(root: Path) -> None:
    s = make_scenario(duration_s=1, medium={"model": "udgm"}, nodes=[{"name": "a", "app": "radio", "position": [0, 0]}],
                      root=root)  # fmt: skip
    with pytest.raises(UsageError, match="cannot go into tern-sim's config"):
        sim.config_text(s, Path("/my results"), {"a": Path("/x.elf")})
    with pytest.raises(UsageError, match="node a: app radio has no built image"):
        sim.config_text(s, Path("/o"), {})


def test_no_build_needs_a_built_image(root: Path, tmp_path: Path) -> None:
    s = load_scenario(scenario_file(tmp_path), root=root)
    assert sim.build_images(s, do_build=False, root=root) == {
        "a": root / "build/target/micaz/stack/apps/radio/radio.elf",
        "b": root / "build/target/micaz/stack/apps/radio/radio.elf",
    }
    shutil.rmtree(root / "build")
    with pytest.raises(UsageError, match="no built image of app radio in .*micaz/stack \\(run without --no-build\\)"):
        sim.build_images(s, do_build=False, root=root)


def _summary(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"seed": 3, "duration_ps": 2_000_000_000_000, "threads": 1, "nodes": nodes}


NODE_DOC: dict[str, Any] = {
    "name": "a", "status": "exit", "exit_status": 0, "end_ps": 1234, "cycles": 2000, "sleep_cycles": 1500,
    "frames_sent": 4, "frames_received": 3, "frames_bad_fcs": 1, "frames_collided": 2, "frames_lost": 5,
    "radio_ps": {"off": 7, "idle": 1_000_000_000, "rx": 250_000_000, "tx": 250_000_000},
    "energy_mj": {"cpu": 0.5, "radio": 1, "total": 1.5},
}  # fmt: skip


def test_summary_loaded_and_formatted(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(_summary([NODE_DOC, {**NODE_DOC, "name": "longer-name", "status": "running"}])))
    result = sim.load_summary(path)
    a, b = result.nodes
    assert (a.status_text, a.exit_status, a.radio_on_ms, a.asleep_percent, a.energy_total_mj) == ("exit 0", 0, 1.5, 75.0, 1.5)
    assert (b.status_text, b.exit_status) == ("running", None)
    lines = sim.format_summary(result).splitlines()
    assert lines[0].split() == ["node", "sent", "recv", "badFCS", "collid", "lost", "radio", "on[ms]", "asleep[%]",
                                "energy[mJ]", "status"]  # fmt: skip
    assert lines[1].split() == ["a", "4", "3", "1", "2", "5", "1.500", "75.00", "1.500", "exit", "0"]
    assert lines[2].split()[0] == "longer-name" and lines[2].endswith("  running")
    assert lines[3].startswith("2 nodes, 2 s simulated in 0.00 s, seed 3, 1 thread;")


def test_summary_extra_keys_ignored_threads_optional(tmp_path: Path) -> None:
    """tern-sim writes more than docs/tern-sim.md lists (frames_aborted, a power_down radio state)."""
    doc = _summary([{**NODE_DOC, "frames_aborted": 1, "radio_ps": {**NODE_DOC["radio_ps"], "power_down": 10**12}}])
    del doc["threads"]
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({**doc, "end_ps": 5}))
    result = sim.load_summary(path, threads=4)
    assert result.threads == 4 and result.nodes[0].radio_on_ms == 1.5  # power_down is not on
    doc["nodes"][0].update(status="crash", crash="invalid opcode", crash_pc=0x1F2)
    path.write_text(json.dumps(doc))
    assert sim.load_summary(path).nodes[0].crash == "invalid opcode at pc 0x1f2"
    doc["nodes"][0].update(crash="sleeping forever (PC 0x001f2)")
    path.write_text(json.dumps(doc))
    assert sim.load_summary(path).nodes[0].crash == "sleeping forever (PC 0x001f2)"


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"status": "zombie"}, "nodes[0]: status must be one of running, exit, crash, halt, not 'zombie'"),
        ({"cycles": "many"}, "nodes[0]: key 'cycles' must be int, not 'many'"),
        ({"radio_ps": {"off": 1}}, "nodes[0] radio_ps: key 'idle' is missing"),
        ({"exit_status": 1.5}, "nodes[0]: key 'exit_status' must be int or null"),
    ],
)
def test_bad_summary_is_an_error(tmp_path: Path, change: dict[str, Any], complaint: str) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(_summary([{**NODE_DOC, **change}])))
    with pytest.raises(TernError, match=complaint.replace("[", "\\[").replace("]", "\\]")):
        sim.load_summary(path)
    path.write_text("{")
    with pytest.raises(TernError, match="not valid JSON"):
        sim.load_summary(path)
    with pytest.raises(TernError, match="tern-sim wrote no"):
        sim.load_summary(tmp_path / "none.json")


EVENTS = [Event(10, EventType.POST, 1, 2), Event(20, EventType.HANDLER_START, 1, 2), Event(90, EventType.HANDLER_END, 1, 2)]


def test_traces_decoded_per_node(tmp_path: Path) -> None:
    (tmp_path / "console").mkdir()
    (tmp_path / "console" / "a.txt").write_text("boot\n" + encode_events(EVENTS, per_line=2) + "bye\n")
    (tmp_path / "console" / "b.txt").write_text("no trace here\n")
    (tmp_path / "console" / "c.txt").write_text("T zz\n" + encode_events(EVENTS[:1]))
    (tmp_path / "trace").mkdir()
    (tmp_path / "trace" / "b.jsonl").write_text("from an earlier run\n")
    written, notes = sim.decode_traces(tmp_path, ["a", "b", "c", "missing"])
    assert [name for name, _ in written] == ["a", "c"]
    rows = [json.loads(line) for line in (tmp_path / "trace" / "a.jsonl").read_text().splitlines()]
    assert rows == [ev.to_json() for ev in EVENTS]
    assert not (tmp_path / "trace" / "b.jsonl").exists()
    assert notes == [f"node c: 1 trace lines of {tmp_path / 'console' / 'c.txt'} could not be decoded"]


def test_run_with_a_fake_simulator(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = load_scenario(scenario_file(tmp_path), root=root)
    out = tmp_path / "out"
    (out / "summary.json").parent.mkdir()
    (out / "summary.json").write_text("stale")
    result = sim.run(s, out, do_build=False, root=root, log=sys.stderr)
    assert [n.name for n in result.nodes] == ["a", "b"] and result.crashed == []
    assert result.config == out / "tern-sim.conf" and result.seed == 1 and result.duration_ps == 2 * 10**12
    assert "fake tern-sim done" in capsys.readouterr().err


def test_run_reports_simulator_failures(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_scenario(scenario_file(tmp_path), root=root)
    monkeypatch.setenv("FAKE_SIM_STATUS", "100")
    with pytest.raises(TernError, match=r"tern-sim refused the config or its command line \(status 100, config "):
        sim.run(s, tmp_path / "out", do_build=False, root=root)
    monkeypatch.setenv("FAKE_SIM_STATUS", "7")
    with pytest.raises(TernError, match=r"tern-sim failed \(status 7"):
        sim.run(s, tmp_path / "out", do_build=False, root=root)
    with pytest.raises(TernError, match="is not built \\(run: make -C tools/simavr\\)"):
        sim.run(s, tmp_path / "out", do_build=False, root=root, binary=tmp_path / "none")


# --------------------------------------------------------------------------- the command


@pytest.fixture()
def in_root(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TERN_ROOT", str(root))
    monkeypatch.chdir(root)
    return root


def test_cli_prints_the_summary(in_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", str(scenario_file(tmp_path)), "--no-build", "--seed", "9", "--threads", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[1:3]] == ["a", "b"]
    assert out[1].split() == ["a", "1", "2", "0", "1", "3", "2.500", "25.00", "3.500", "running"]
    assert "seed 9, 3 threads" in out[3]
    # the default output directory: results/sim/<scenario stem>
    conf = (in_root / "results" / "sim" / "ping" / "tern-sim.conf").read_text()
    assert "sim seed=9 duration_us=2000000" in conf and "threads=3" in conf


def test_cli_names_crashed_nodes(in_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = GOOD.replace('name = "b"', 'name = "crashy"')
    assert main(["sim", str(scenario_file(tmp_path, text)), "--no-build", "--out", str(tmp_path / "o")]) == 1
    captured = capsys.readouterr()
    assert "crash (invalid opcode at pc 0x1f2)" in captured.out
    assert "tern sim: 1 node crashed: crashy (invalid opcode at pc 0x1f2)" in captured.err


def test_cli_decodes_traces(in_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SIM_CONSOLE", encode_events(EVENTS))
    assert main(["sim", str(scenario_file(tmp_path)), "--no-build", "--out", str(tmp_path / "o")]) == 0
    assert len((tmp_path / "o" / "trace" / "b.jsonl").read_text().splitlines()) == 3


def test_cli_bad_scenario_exits_2(in_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario_file(tmp_path, GOOD.replace("duration = 2.0", "duration = -2"))
    assert main(["sim", str(path), "--no-build"]) == 2
    assert capsys.readouterr().err == (f"tern sim: {path}:2: field sim.duration: must be a number of seconds greater "
                                       "than 0 and at most 1e+06, not -2\n")  # fmt: skip
    assert main(["sim", str(tmp_path / "none.toml")]) == 2
    assert "tern sim: scenario file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["sim", str(path), "--threads", "0"])
    assert info.value.code == 2
    assert "argument --threads: '0' must be positive" in capsys.readouterr().err
    assert main(["sim", str(scenario_file(tmp_path)), "--no-build", "--seed", "-1"]) == 2
    assert "tern sim: --seed must be an integer from 0 to 2^64-1, not -1" in capsys.readouterr().err


def test_cli_simulator_failure_exits_1(in_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_SIM_STATUS", "101")
    assert main(["sim", str(scenario_file(tmp_path)), "--no-build"]) == 1
    assert "tern sim: tern-sim could not load an image (status 101" in capsys.readouterr().err


# --------------------------------------------------------------------------- the real simulator


def test_ping_scenario_end_to_end(tmp_path: Path) -> None:
    """docs/sim/ping.toml under the real tern-sim: built, run on one and on two host threads, identical outputs."""
    binary = ROOT / "tools" / "simavr" / "build" / "tern-sim"
    if not binary.is_file():
        pytest.skip(f"{binary} is not built yet (make -C tools/simavr)")
    for needed in (ROOT / "boards" / "micaz" / "board.json", ROOT / "apps" / "radio"):
        if not needed.exists():
            pytest.skip(f"{needed.relative_to(ROOT)} does not exist yet")
    if shutil.which("avr-gcc") is None or shutil.which("cmake") is None:
        pytest.skip("avr-gcc or cmake is not installed (make apt installs them)")
    s = load_scenario(ROOT / "docs" / "sim" / "ping.toml", root=ROOT)
    first = sim.run(s, tmp_path / "one", root=ROOT)
    second = sim.run(s.with_overrides(threads=2), tmp_path / "two", do_build=False, root=ROOT)
    assert [n.name for n in first.nodes] == ["ping", "pong"] and second.threads == 2
    assert first.crashed == [], sim.format_summary(first)
    assert all(n.frames_sent > 0 and n.frames_received > 0 for n in first.nodes), sim.format_summary(first)
    assert [replace(n, crash=None) for n in first.nodes] == [replace(n, crash=None) for n in second.nodes]
    for name in ("events.jsonl", "air.pcap", "console/ping.txt", "console/pong.txt"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    assert os.path.getsize(tmp_path / "one" / "air.pcap") > 24
