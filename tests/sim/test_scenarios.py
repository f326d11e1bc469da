"""The example scenarios of docs/sim/ run end to end through `./tern sim`:
scenario file, build of the apps for their boards, tern-sim, summary."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from scenario_run import ROOT, tern_sim
from terntools.scenario import load_scenario

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")


def run(scenario: str, out: Path) -> dict:
    return tern_sim(ROOT / "docs" / "sim" / scenario, out)


def test_busping_multi_processor_node(tmp_path: Path) -> None:
    """An ATmega1284P at 20 MHz and two ATmega128s on one processor bus:
    ten checked echoes between addresses 0 and 1, then a broadcast."""
    nodes = run("busping.toml", tmp_path)["nodes"]
    assert all(n["status"] == "exit" and n["exit_status"] == 0 for n in nodes.values()), nodes
    assert nodes["big"]["bus"]["frames_sent"] == 11  # 10 pings and the broadcast
    assert nodes["small1"]["bus"]["frames_received"] == 11
    assert nodes["small2"]["bus"]["frames_received"] == 1
    assert sum(n["bus"]["refused"] for n in nodes.values()) == 0
    big = (tmp_path / "console" / "big.txt").read_text()
    assert [line.split()[4] for line in big.splitlines() if " rx E " in line] == [str(k) for k in range(1, 11)]


def test_ping_pong_over_the_radio(tmp_path: Path) -> None:
    for n in run("ping.toml", tmp_path)["nodes"].values():
        assert n["status"] == "exit" and n["exit_status"] == 0, n
        assert n["frames_sent"] == n["frames_received"] == 10


def test_udp_over_6lowpan_between_two_nodes(tmp_path: Path) -> None:
    """Ten datagrams of 50 and 200 bytes (two fragments) echoed intact;
    Wireshark reads every one as 6LoWPAN/IPv6/UDP with a good checksum."""
    for n in run("udp.toml", tmp_path)["nodes"].values():
        assert n["status"] == "exit" and n["exit_status"] == 0, n
    client = (tmp_path / "console" / "client.txt").read_text()
    assert client.count(" ok\n") == 10 and " corrupt\n" not in client and "timeout n=" not in client
    assert "echoed=10 timeouts=0 corrupt=0 refused=0 sent=10 received=10" in client
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed (make setup installs it)")
    p = subprocess.run(["tshark", "-r", str(tmp_path / "air.pcap"), "-o", "udp.check_checksum:TRUE", "-T", "fields",
                        "-E", "separator=|", "-e", "udp.length", "-e", "udp.checksum.status", "-e", "_ws.malformed"],
                       capture_output=True, text=True, check=True)  # fmt: skip
    rows = [line.split("|") for line in p.stdout.splitlines()]
    datagrams = [r for r in rows if r[0]]
    assert not [r for r in rows if r[2]]
    assert sorted(int(r[0]) for r in datagrams) == [58] * 10 + [208] * 10
    assert all(r[1] == "1" for r in datagrams)


def test_udp_is_forwarded_across_two_hops(tmp_path: Path) -> None:
    """Client and server out of each other's range: the router in the middle
    forwards every datagram and every echo, one hop limit less."""
    for n in run("udp_line.toml", tmp_path)["nodes"].values():
        assert n["status"] == "exit" and n["exit_status"] == 0, n
    consoles = {n: (tmp_path / "console" / f"{n}.txt").read_text() for n in ("client", "router", "server")}
    assert "echoed=10 timeouts=0 corrupt=0" in consoles["client"]
    assert "forwarded=20 " in consoles["router"] and " dropped=0 " in consoles["router"]
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed (make setup installs it)")
    p = subprocess.run(["tshark", "-r", str(tmp_path / "air.pcap"), "-T", "fields", "-E", "separator=|",
                        "-e", "wpan.src16", "-e", "ipv6.hlim", "-e", "udp.checksum.status"],
                       capture_output=True, text=True, check=True)  # fmt: skip
    hops = [line.split("|") for line in p.stdout.splitlines() if line.split("|")[1]]
    # every datagram twice on air: from its origin with 64, from the router with 63
    assert sorted({(src, hlim) for src, hlim, _ in hops}) == [("0x0000", "64"), ("0x0001", "63"), ("0x0002", "64")]
    assert len(hops) == 40


def _with_tun(path: Path) -> bool:
    """A node bridged to a host TUN interface: paced to wall-clock time, not
    repeatable (tests/sim/test_border_router.py runs it)."""
    return any(n.tun is not None for n in load_scenario(path, root=ROOT).nodes)


SCENARIOS = sorted(p.name for p in (ROOT / "docs" / "sim").glob("*.toml") if not _with_tun(p))
# Scenarios too long to run whole here, and the simulated seconds they get:
# the soak's hour is `./tern soak`'s (test_soak.py runs 30 s of it).
# psync: five seconds hold three sync rounds and two pulses.
SHORTENED = {"soak.toml": "10", "psync.toml": "5"}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_example_scenario_is_the_same_on_one_and_two_host_threads(tmp_path: Path, scenario: str) -> None:
    """Bit-identical outputs whatever the thread count, for every scenario
    in docs/sim: consoles, PCAP, events, summary, decoded traces."""
    outputs = []
    for threads in ("1", "2"):
        out = tmp_path / threads
        duration = ["--duration", SHORTENED[scenario]] if scenario in SHORTENED else []
        p = subprocess.run([str(ROOT / "tern"), "sim", str(ROOT / "docs" / "sim" / scenario), "--out", str(out),
                            "--threads", threads, *duration], capture_output=True, text=True, timeout=900)  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
        outputs.append({f.relative_to(out): f.read_bytes() for f in sorted(out.rglob("*"))
                        if f.is_file() and f.name != "tern-sim.conf"})  # the config names the thread count
    assert outputs[0] == outputs[1]
    assert outputs[0][Path("events.jsonl")]


def test_a_seed_sweep_is_the_same_serially_and_on_two_dask_workers(tmp_path: Path) -> None:
    """tern sim --seeds: one run per seed, the same table whichever executor
    ran them (line5.toml with lossy links: each seed draws other losses)."""
    lossy = tmp_path / "line5_lossy.toml"
    lossy.write_text((ROOT / "docs" / "sim" / "line5.toml").read_text().replace("success_rx = 1.0", "success_rx = 0.7"))
    tables = []
    for jobs in ("1", "2"):
        p = subprocess.run([str(ROOT / "tern"), "sim", str(lossy), "--seeds", "1,2",
                            "--duration", "2", "--jobs", jobs, "--out", str(tmp_path / jobs)],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
        doc = json.loads((tmp_path / jobs / "seeds.json").read_text())
        assert doc["seeds"] == [1, 2] and [r["seed"] for r in doc["runs"]] == [1, 2]
        tables.append(doc["runs"])
    assert tables[0] == tables[1]
    assert len({r["frames_received"] for r in tables[0]}) > 1, "the seeds should draw different losses"
