"""net/lowpan.c's frames judged by Wireshark's own 6LoWPAN, IPv6, UDP and
ICMPv6 dissectors (tshark): an independent check that the encoding is
RFC 4944/6282, not just something our decoder reads back."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None or shutil.which("cc") is None,
                                reason="needs tshark and cc (make setup installs them)")  # fmt: skip


def test_tshark_decodes_compressed_and_fragmented_datagrams(tmp_path: Path) -> None:
    exe = tmp_path / "lowpan_pcap"
    subprocess.run(["cc", "-std=gnu11", "-Wall", "-Werror", f"-I{ROOT / 'net'}", "-o", str(exe),
                    str(ROOT / "tests" / "sim" / "lowpan_pcap.c"), str(ROOT / "net" / "ipv6.c"),
                    str(ROOT / "net" / "lowpan.c")], check=True)  # fmt: skip
    pcap = tmp_path / "lowpan.pcap"
    subprocess.run([str(exe), str(pcap)], check=True)
    p = subprocess.run(["tshark", "-r", str(pcap), "-o", "udp.check_checksum:TRUE",
                        "-T", "fields", "-E", "separator=|", "-e", "udp.checksum.status",
                        "-e", "icmpv6.checksum.status", "-e", "udp.length", "-e", "icmpv6.type",
                        "-e", "_ws.malformed", "-e", "_ws.expert.message"],
                       capture_output=True, text=True, check=True)  # fmt: skip
    rows = [line.split("|") for line in p.stdout.splitlines()]
    assert not [r for r in rows if r[4] or "rror" in r[5]], p.stdout  # nothing malformed
    udp = [(r[0], int(r[2])) for r in rows if r[2]]
    icmp = [(r[1], r[3]) for r in rows if r[3]]
    # the 50-byte datagram and the 1,000-byte one, reassembled by Wireshark,
    # each with a checksum it verified (status 1 = good)
    assert udp == [("1", 58), ("1", 960)]
    assert icmp == [("1", "128")]
