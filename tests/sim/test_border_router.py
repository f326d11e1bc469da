"""The border router (apps/border_router, net/slip.c, tools/simavr/tun.c):
docs/sim/border.toml with tern-sim bridging the border router's SLIP line to
a TUN interface, and the host's own `ping -6` and a Python UDP socket
talking to the simulated nodes behind it. Skipped, with the reason, where
no TUN interface can be created (no /dev/net/tun, no CAP_NET_ADMIN) or the
host has IPv6 off."""
from __future__ import annotations

import dataclasses
import errno
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from terntools import sim  # noqa: E402
from terntools.paths import sim_binary  # noqa: E402
from terntools.scenario import Tun, load_scenario  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
NET = "2001:db8::"  # node i is NET + (i + 1), border.toml's tun_route
LOCK = Path("/tmp/tern-border-router-test.lock")  # one run at a time per machine: the prefix is fixed


def tun_unavailable() -> str | None:
    """Why this host cannot give the test a TUN interface with IPv6, or None."""
    if not socket.has_ipv6:
        return "Python has no IPv6"
    disabled = Path("/proc/sys/net/ipv6/conf/all/disable_ipv6")
    if disabled.is_file() and disabled.read_text().strip() == "1":
        return "IPv6 is disabled on this host (net.ipv6.conf.all.disable_ipv6 = 1)"
    try:
        fd = os.open("/dev/net/tun", os.O_RDWR)
    except OSError as exc:
        return f"cannot open /dev/net/tun: {exc.strerror}"
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"ternprobe%d" % (os.getpid() % 100000), IFF_TUN | IFF_NO_PI))
    except OSError as exc:
        why = "no CAP_NET_ADMIN" if exc.errno == errno.EPERM else exc.strerror
        return f"cannot create a TUN interface (TUNSETIFF): {why}"
    finally:
        os.close(fd)
    return None


def routed_elsewhere() -> str | None:
    """The interface that already routes 2001:db8::/64 (a user's border.toml run), if any."""
    table = Path("/proc/net/ipv6_route")
    if not table.is_file():
        return None
    for line in table.read_text().splitlines():
        f = line.split()
        if f[0] == "20010db8000000000000000000000000" and f[1] == "40":
            return f[-1]
    return None


def interface_has(name: str, address_hex: str) -> bool:
    table = Path("/proc/net/if_inet6")
    return table.is_file() and any(
        line.split()[0] == address_hex and line.split()[-1] == name for line in table.read_text().splitlines())


@pytest.fixture
def border(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """docs/sim/border.toml running under tern-sim with its own interface name;
    stopped by SIGINT at the end (tern-sim then writes its outputs)."""
    why = tun_unavailable()
    if why:
        pytest.skip(f"TUN unavailable: {why}")
    if shutil.which("ping") is None:
        pytest.skip("needs ping (iputils-ping: make setup installs it)")
    LOCK.touch()
    with LOCK.open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        other = routed_elsewhere()
        if other:
            pytest.skip(f"2001:db8::/64 is routed through {other} already (another border-router run?)")
        scenario = load_scenario(ROOT / "docs" / "sim" / "border.toml", root=ROOT)
        ifname = f"ternt{os.getpid() % 100000}"
        nodes = tuple(dataclasses.replace(n, tun=Tun(name=ifname, host=n.tun.host, route=n.tun.route))
                      if n.tun else n for n in scenario.nodes)  # fmt: skip
        scenario = dataclasses.replace(scenario, nodes=nodes)
        images = sim.build_images(scenario, root=ROOT)
        config = sim.write_config(scenario, tmp_path, images, max_wall_s=300)
        proc = subprocess.Popen([str(sim_binary(ROOT)), str(config)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        try:
            host_hex = "20010db8000100000000000000000001"
            deadline = time.monotonic() + 30
            while not interface_has(ifname, host_hex):
                if proc.poll() is not None:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    if proc.returncode == 106:  # EXIT_TUN: the host refused what the probe allowed
                        pytest.skip(f"TUN unavailable: {err.strip()}")
                    pytest.fail(f"tern-sim exited with {proc.returncode}: {err}")
                assert time.monotonic() < deadline, f"{ifname} never got 2001:db8:1::1"
                time.sleep(0.05)
            time.sleep(0.5)  # the nodes boot and start their radios (simulated ms, in wall-clock time)
            yield proc, tmp_path
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def udp_echo(sock: socket.socket, dst: str, data: bytes) -> tuple[bytes, tuple[str, int]]:
    sock.sendto(data, (dst, 7))
    got, src = sock.recvfrom(2048)
    return got, (src[0], src[1])


def test_host_pings_and_exchanges_udp_with_nodes_behind_the_border_router(
        border: tuple[subprocess.Popen[bytes], Path]) -> None:  # fmt: skip
    proc, out = border

    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
        sock.settimeout(10)
        # too long for the border router's SLIP buffer (256 bytes): dropped
        # there and counted SLIP_EOVERSIZE, not echoed
        sock.sendto(bytes(600), (NET + "3", 7))

        # ping -6 two hops away: three replies, each forwarded twice
        # (hop limit 64 at the node, 62 at the host)
        p = subprocess.run(["ping", "-6", "-n", "-c", "3", "-i", "0.3", "-w", "30", NET + "3"],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
        assert "3 packets transmitted, 3 received" in p.stdout, p.stdout
        replies = re.findall(r"from 2001:db8::3: icmp_seq=(\d+) ttl=(\d+)", p.stdout)
        assert replies == [("1", "62"), ("2", "62"), ("3", "62")], p.stdout
        p = subprocess.run(["ping", "-6", "-n", "-c", "1", "-w", "30", NET + "1"], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
        assert "ttl=64" in p.stdout, p.stdout  # the border router itself: no hop

        # UDP echo: one hop and two hops, one frame and fragments, every byte back
        for node, hops in (("2", 1), ("3", 2)):
            for n in (1, 50, 150):
                data = bytes((i * 7 + n + hops) & 0xFF for i in range(n))
                got, src = udp_echo(sock, NET + node, data)
                assert got == data, (node, n)
                assert src == (NET + node, 7)
        sock.settimeout(1)
        with pytest.raises(TimeoutError):
            sock.recvfrom(2048)  # nothing more: no duplicate, and no echo of the oversized one
        time.sleep(2.5)  # the border router's next stats line (every 2 s)

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0, proc.stderr.read().decode() if proc.stderr else ""
    summary = json.loads((out / "summary.json").read_text())
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert all(n["status"] == "running" for n in nodes.values()), nodes  # nobody crashed or exited
    tun = nodes["border"]["tun"]
    # to the host: 3 + 1 echo replies and 6 UDP echoes, nothing garbled on the line
    assert tun["to_host"] >= 10 and tun["write_errors"] == 0 and tun["not_ipv6"] == 0, tun
    assert all(tun[k] == 0 for k in ("SLIP_EOVERSIZE", "SLIP_EBADESCAPE", "SLIP_EUART")), tun
    assert tun["host_dropped"] == 0, tun
    console = (out / "console" / "border.txt").read_text()
    slip = re.findall(r"stats slip frames=(\d+) oversize=(\d+) bad_escape=(\d+) uart=(\d+) no_memory=(\d+) "
                      r"no_task=(\d+)", console)[-1]  # fmt: skip
    frames, oversize, *others = (int(v) for v in slip)
    assert oversize == 1 and others == [0, 0, 0, 0], slip
    assert frames >= 10, slip  # the pings and datagrams (and the host's own multicast, refused by the IP layer)
    for name in nodes:  # the 4 KB were enough: no heap block refused, the painted stack never used up
        text = (out / "console" / f"{name}.txt").read_text()
        used, size, failures = (int(v) for v in re.findall(
            r"stats memory node=\d+ stack_used=(\d+) of=(\d+) alloc_failures=(\d+)", text)[-1])
        assert failures == 0 and used < size, (name, used, size, failures)
