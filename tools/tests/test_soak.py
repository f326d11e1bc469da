"""terntools.soak's balance: a console that does not balance is caught."""
from __future__ import annotations

from terntools import soak

GOOD = """soak node=3 of 20 model=stack duration=300 s
report node=3 t=60 sent=10 echoed=9 corrupt=0 timeouts=1 refused=0 stale=0 served=8 serve_refused=0
final node=3 t=298 sent=40 echoed=37 corrupt=1 timeouts=2 refused=1 stale=1 served=33 serve_refused=0
final node=3 heap=316/316 largest=316/316 posted=400 dispatched=400 queued=0 dropped=0,0,0,2,0,0 alloc_failures=0
final node=3 radio bad_crc=1 len_invalid=0 past_fifo=0 too_short=0 no_memory=0 post_failed=0 overflows=0 tx_busy=0 cca_busy=2 tx_failed=0 ip forwarded=12 dropped=3 reasm_dropped=4 link_failures=1
"""


def reports(n: int) -> str:
    return "".join(f"report node=3 t={60 * i} sent=1\n" for i in range(2, n + 1))


def test_a_balanced_console_is_read_whole() -> None:
    b = soak.balance_node("n03", "exit 0", GOOD + reports(4), 5, 298.0)
    assert b.problems == (), b.problems
    assert b.reports == 4
    assert b.final["heap_baseline"] == 316 and b.final["forwarded"] == 12 and b.final["ip_dropped"] == 3
    assert b.kernel_dropped == (0, 0, 0, 2, 0, 0)
    # radio 1 + 2, IP 3 + 4 + 1, kernel 2, tern-sim 5
    assert b.counted_losses == 18


def test_each_imbalance_is_named() -> None:
    cases = {
        "sent=40 echoed=37": ("sent=41 echoed=37", "requests unaccounted"),
        "heap=316/316": ("heap=300/316", "heap not back"),
        "dispatched=400": ("dispatched=399", "messages in flight"),
    }
    for old, (new, why) in cases.items():
        b = soak.balance_node("n03", "exit 0", GOOD.replace(old, new) + reports(4), 0, 298.0)
        assert any(why in p for p in b.problems), (new, b.problems)
    stalled = soak.balance_node("n03", "exit 0", GOOD, 0, 298.0)  # one report of four
    assert any("stalled" in p for p in stalled.problems)
    silent = soak.balance_node("n03", "running", "soak node=3 of 20\n", 0, 298.0)
    assert any("no final lines" in p for p in silent.problems)
    assert any("not exit 0" in p for p in silent.problems)
