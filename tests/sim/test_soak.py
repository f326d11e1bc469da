"""The soak of docs/reliability.md in short: docs/sim/soak.toml (20 micaz
nodes, every one a UDP client and echo server, up to four hops, hidden
terminals) for 30 simulated seconds instead of an hour. Every node must end
with its requests accounted for, its heap at its baseline and every message
dispatched; across the network every lost datagram must be matched by a
counted loss. `./tern soak` runs the hour, `./tern soak --long` a day."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from terntools import soak  # noqa: E402


def test_thirty_seconds_of_mixed_traffic_balance_on_every_node(tmp_path: Path) -> None:
    r = soak.run(30.0, out=tmp_path, root=ROOT)
    assert r.ok, soak.text_table(r)
    assert len(r.nodes) == 20
    t = r.totals
    # real traffic, over several hops, with real losses that were all counted
    assert t["sent"] > 150 and t["echoed"] > 100, t
    assert t["forwarded"] > 100, t
    assert 0 < t["datagrams_lost"] <= t["counted_losses"], t
    for n in r.nodes:
        assert n.final["heap"] == n.final["heap_baseline"], n
        assert n.final["sent"] == n.final["echoed"] + n.final["corrupt"] + n.final["timeouts"], n
