"""The soak of issue 13 (docs/reliability.md): docs/sim/soak.toml, 20 micaz
nodes that are each a UDP client and echo server (apps/soak), for a simulated
hour (or a day with --long); then the balance of every node and of the
network.

A node's final lines (apps/soak prints them when its traffic has stopped
everywhere) must show: every request ended one way (sent = echoed + corrupt
+ timed out), the heap at its baseline in one piece, every posted message
dispatched and none queued, and a report line every minute until then (a
node that stalls stops printing them). Across the network nothing may be
lost without a name: requests that never reached their server and echoes
that never came back are at most the frames that tern-sim, the radio driver,
the IP layer or the kernel counted as lost.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from terntools import scenario as scen
from terntools import sim
from terntools.errors import TernError
from terntools.paths import repo_root

SCENARIO = Path("docs") / "sim" / "soak.toml"
HOUR_S = 3600.0
DAY_S = 86400.0
REPORT_S = 60  # apps/soak's SOAK_REPORT_S

_LINE = re.compile(r"^(final|report) node=(\d+) (.*)$")
_PAIR = re.compile(r"(\w+)=(\d+)(?:/(\d+))?")
_DROPPED = re.compile(r"\bdropped=(\d+(?:,\d+)+)")


@dataclass(frozen=True)
class NodeBalance:
    name: str
    status: str
    reports: int
    final: dict[str, int]  # every key=value of the final lines (x/y: x, and y under x_baseline)
    kernel_dropped: tuple[int, ...]
    frames_lost_sim: int  # what tern-sim's medium counted as lost at this receiver
    problems: tuple[str, ...]

    @property
    def counted_losses(self) -> int:
        """Frames or datagrams this node counted as lost, by any reason."""
        f = self.final
        radio = sum(f.get(k, 0) for k in ("bad_crc", "len_invalid", "past_fifo", "too_short", "no_memory",
                                            "post_failed", "overflows", "cca_busy", "tx_failed"))
        ip = f.get("ip_dropped", 0) + f.get("reasm_dropped", 0) + f.get("link_failures", 0)
        return radio + ip + sum(self.kernel_dropped) + self.frames_lost_sim


@dataclass(frozen=True)
class SoakResult:
    duration_s: float
    seed: int
    wall_s: float
    nodes: tuple[NodeBalance, ...]
    problems: tuple[str, ...]  # of the network as a whole
    totals: dict[str, int]

    @property
    def ok(self) -> bool:
        return not self.problems and all(not n.problems for n in self.nodes)


def parse_console(text: str) -> tuple[int, dict[str, int], tuple[int, ...]]:
    """(report lines, the final lines' figures, the kernel's drops by reason)."""
    reports = 0
    final: dict[str, int] = {}
    dropped: tuple[int, ...] = ()
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        if m.group(1) == "report":
            reports += line.count(" t=")
            continue
        rest = m.group(3)
        d = _DROPPED.search(rest)
        if d and "posted=" in rest:
            dropped = tuple(int(v) for v in d.group(1).split(","))
            rest = rest[:d.start()] + rest[d.end():]
        if rest.startswith("radio "):  # the IP layer's figures follow "ip"
            radio, _, ip = rest.partition(" ip ")
            rest = radio + " " + " ".join("ip_" + kv if kv.startswith("dropped=") else kv for kv in ip.split())
        for key, value, baseline in _PAIR.findall(rest):
            final[key] = int(value)
            if baseline:
                final[key + "_baseline"] = int(baseline)
    return reports, final, dropped


def balance_node(name: str, status: str, console: str, frames_lost_sim: int, check_s: float) -> NodeBalance:
    reports, f, dropped = parse_console(console)
    problems: list[str] = []
    if not f:
        problems.append("no final lines: the node stalled, crashed or never reached its end")
    else:
        if f["sent"] != f["echoed"] + f["corrupt"] + f["timeouts"]:
            problems.append(f"requests unaccounted: sent {f['sent']} != echoed {f['echoed']} + corrupt "
                            f"{f['corrupt']} + timeouts {f['timeouts']}")  # fmt: skip
        if f["heap"] != f["heap_baseline"] or f["largest"] != f["largest_baseline"]:
            problems.append(f"heap not back: {f['heap']}/{f['heap_baseline']} free, largest block "
                            f"{f['largest']}/{f['largest_baseline']}")  # fmt: skip
        if f["posted"] != f["dispatched"] or f["queued"]:
            problems.append(f"messages in flight at the end: posted {f['posted']}, dispatched "
                            f"{f['dispatched']}, queued {f['queued']}")  # fmt: skip
    # one report a minute, up to the check (the last may fall either side of it)
    expected = int(check_s // REPORT_S)
    if f and not expected - 1 <= reports <= expected:
        problems.append(f"{reports} report lines, {expected} expected: the node stalled")
    if status != "exit 0":  # apps/soak exits 1 when its own balance fails
        problems.append(f"status {status}, not exit 0")
    return NodeBalance(name, status, reports, f, dropped, frames_lost_sim, tuple(problems))


def balance(result: sim.SimResult, consoles: dict[str, str], duration_s: float) -> tuple[tuple[NodeBalance, ...],
                                                                                         dict[str, int], list[str]]:
    check_s = duration_s - 1.0 - duration_s / 20000.0  # apps/soak's check time, on a node's own clock
    nodes = tuple(balance_node(n.name, n.status_text, consoles.get(n.name, ""), n.frames_lost, check_s)
                  for n in result.nodes)
    keys = ("sent", "echoed", "corrupt", "timeouts", "stale", "served", "serve_refused", "refused", "forwarded")
    totals = {k: sum(n.final.get(k, 0) for n in nodes) for k in keys}
    totals["counted_losses"] = sum(n.counted_losses for n in nodes)
    problems: list[str] = []
    if totals["served"] > totals["sent"]:
        problems.append(f"servers echoed {totals['served']} requests, clients sent {totals['sent']}: duplicates")
    answered = totals["echoed"] + totals["corrupt"] + totals["stale"]
    if answered > totals["served"] + totals["serve_refused"]:
        problems.append(f"clients got {answered} echoes, servers sent {totals['served']}: duplicates")
    lost = (totals["sent"] - totals["served"] - totals["serve_refused"]) + (totals["served"] - answered)
    totals["datagrams_lost"] = lost
    if lost > totals["counted_losses"]:
        problems.append(f"{lost} datagrams lost but only {totals['counted_losses']} losses counted anywhere")
    if totals["sent"] == 0:
        problems.append("no traffic")
    return nodes, totals, problems


def run(duration_s: float = HOUR_S, *, seed: int | None = None, out: Path | None = None, root: Path | None = None,
        log: TextIO | None = None) -> SoakResult:
    root = root or repo_root()
    s = scen.load_scenario(root / SCENARIO, root=root).with_overrides(seed=seed, duration_s=duration_s)
    out = out or root / "results" / "soak"
    result = sim.run(s, out, root=root, log=log)
    consoles = {}
    for n in result.nodes:
        path = out / "console" / f"{n.name}.txt"
        consoles[n.name] = path.read_text(errors="replace") if path.is_file() else ""
    nodes, totals, problems = balance(result, consoles, duration_s)
    if result.crashed:
        problems.append("crashed: " + ", ".join(f"{n.name} ({n.crash})" for n in result.crashed))
    return SoakResult(duration_s, s.sim.seed, result.wall_s, nodes, tuple(problems), totals)


def to_json(r: SoakResult) -> dict[str, Any]:
    return {"duration_s": r.duration_s, "seed": r.seed, "wall_s": round(r.wall_s, 1), "ok": r.ok,
            "problems": list(r.problems), "totals": r.totals,
            "nodes": [asdict(n) | {"counted_losses": n.counted_losses} for n in r.nodes]}


def text_table(r: SoakResult) -> str:
    rows = ["| node | status | reports | sent | echoed | timeouts | served | forwarded | heap free/baseline "
            "| posted = dispatched | losses counted | balanced |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|"]
    for n in r.nodes:
        f = n.final
        heap = f"{f.get('heap', '-')}/{f.get('heap_baseline', '-')}"
        msgs = f"{f.get('posted', '-')} = {f.get('dispatched', '-')}"
        rows.append(f"| {n.name} | {n.status} | {n.reports} | {f.get('sent', '-')} | {f.get('echoed', '-')} "
                    f"| {f.get('timeouts', '-')} | {f.get('served', '-')} | {f.get('forwarded', '-')} | {heap} "
                    f"| {msgs} | {n.counted_losses} | {'yes' if not n.problems else '; '.join(n.problems)} |")
    t = r.totals
    rows.append("")
    rows.append(f"{len(r.nodes)} nodes, {r.duration_s:g} s simulated (seed {r.seed}) in {r.wall_s:.0f} s: "
                f"{t['sent']} requests, {t['echoed']} echoed, {t['timeouts']} timed out, {t['stale']} late echoes, "
                f"{t['forwarded']} datagrams forwarded; {t['datagrams_lost']} datagrams lost, "
                f"{t['counted_losses']} losses counted by tern-sim, the driver, the IP layer and the kernel.")
    rows.append("Balanced: " + ("every node and the network." if r.ok else "NO: " + "; ".join(
        list(r.problems) + [f"{n.name}: {p}" for n in r.nodes for p in n.problems])))
    return "\n".join(rows) + "\n"


def check(r: SoakResult) -> None:
    if not r.ok:
        raise TernError("the soak did not balance:\n" + text_table(r))
