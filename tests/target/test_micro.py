"""`tern bench micro` on every board: each benchmark runs briefly (COUNT
samples) under every model the board lists, and the JSON document must be
complete and consistent."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BOARDS, MODELS, ROOT

sys.path.insert(0, str(ROOT / "tools"))
from terntools import micro  # noqa: E402

COUNT = 40
# Where micro.elf (8 tasks) cannot hold a thread stack per task: the
# ATmega128's 4 KB under the thread models. The run reports these models
# as not run, with the kernel's refusal, instead of failing. The MicaZ and
# module-m128 have the same ATmega128.
DOES_NOT_FIT = {"atmega128": {"threads", "adaptive"}, "micaz": {"threads", "adaptive"},
                "module-m128": {"threads", "adaptive"}}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """One `tern bench micro --json` run per board (module-wide)."""
    docs: dict[str, dict] = {}
    out = tmp_path_factory.mktemp("micro")
    for name in BOARDS:
        path = out / f"{name}.json"
        proc = subprocess.run(
            [str(ROOT / "tern"), "bench", "micro", "--board", name, "--count", str(COUNT), "--json", str(path),
             "--jobs", str(os.cpu_count() or 2), "--timeout", "120"],
            capture_output=True, text=True,
        )  # fmt: skip
        docs[name] = {"status": proc.returncode, "stderr": proc.stderr, "stdout": proc.stdout,
                      "doc": json.loads(path.read_text()) if path.is_file() else None}  # fmt: skip
    return docs


def _doc(results: dict[str, dict], board: str) -> dict:
    r = results[board]
    assert r["status"] == 0, f"tern bench micro failed on {board}:\n{r['stderr'][-2000:]}"
    assert r["doc"] is not None
    return r["doc"]


def test_every_benchmark_every_model(results: dict[str, dict], board: str) -> None:
    doc = _doc(results, board)
    assert doc["board"] == board
    assert doc["unit"] == BOARDS[board].unit
    assert micro.check(doc) == []
    got: dict[str, set[str]] = {}
    for r in doc["results"]:
        got.setdefault(r["model"], set()).add(r["name"])
    not_run = doc.get("not_run", {})
    assert set(not_run) == DOES_NOT_FIT.get(board, set())
    for reason in not_run.values():
        assert reason.startswith("no room for the "), reason
    assert sorted(got) == sorted(doc["models"]) == sorted(set(MODELS[board]) - set(not_run))
    for model, names in got.items():
        threads = model in micro.THREAD_MODELS
        expected = set(micro.ALL_NAMES) - (set() if threads else micro.THREAD_ONLY)
        assert names == expected, model


def test_counts_and_order(results: dict[str, dict], board: str) -> None:
    doc = _doc(results, board)
    for r in doc["results"]:
        assert r["min"] <= r["avg"] <= r["max"], r
        if r["name"] in micro.TIMING_NAMES:
            assert r["count"] == COUNT, r
            assert r["min"] > 0, r  # every path costs something after the overhead
            assert r["unit"] == BOARDS[board].unit
        else:
            assert r["unit"] == "bytes"


# The load task's run-to-completion chunk (bench/micro/micro.c): what a
# loaded timer waits for under fifo and must not wait for under stack.
LOAD_CHUNK = int(re.search(r"#define LOAD_CHUNK (\d+)u", (ROOT / "bench/micro/micro.c").read_text()).group(1))


def test_stack_model_preempts_at_once(results: dict[str, dict], board: str) -> None:
    """In stack the interrupt's message runs its handler before the raising
    handler continues; in fifo it waits for that handler to return, which
    here is right after the raise, so the two must differ by the return
    path only. Under load, fifo's timer waits for the load task's
    LOAD_CHUNK-cycle handler and stack's does not: what stack's loaded
    timer adds to its unloaded max (another alarm's interrupt, a masked
    section) stays at least half a chunk below what fifo's adds. Issue 6's
    target (loaded max <= 2 x unloaded max, met on mps2-an385) holds on the
    QEMU boards; on the AVR one alarm interrupt costs about as much as the
    whole timer path (atmega128, 2,000 samples on 60e696e with match_at:
    loaded max 3,257 against 2 x 1,506), so there the bound is the chunk's."""
    doc = _doc(results, board)
    idx = {(r["model"], r["name"]): r for r in doc["results"]}
    if ("stack", "timer_delay") not in idx or ("fifo", "timer_delay") not in idx:
        pytest.skip("board lacks stack or fifo")
    fifo_extra = idx[("fifo", "timer_delay_load")]["max"] - idx[("fifo", "timer_delay")]["max"]
    # fifo waits for a load chunk at worst: the benchmark really loads the CPU
    assert fifo_extra > LOAD_CHUNK // 2, (fifo_extra, LOAD_CHUNK)
    stack_max = idx[("stack", "timer_delay")]["max"]
    loaded_max = idx[("stack", "timer_delay_load")]["max"]
    assert loaded_max - stack_max + LOAD_CHUNK // 2 < fifo_extra, (loaded_max, stack_max, fifo_extra)
    if BOARDS[board].emulator == "qemu":
        assert loaded_max <= 2 * stack_max


def test_thread_round_trips_switch(results: dict[str, dict], board: str) -> None:
    """A semaphore or yield round trip is two context switches: it cannot
    cost less than an interrupt-to-handler latency (one switch from an
    interrupt) of the same model."""
    doc = _doc(results, board)
    idx = {(r["model"], r["name"]): r for r in doc["results"]}
    for model in doc["models"]:
        if model not in micro.THREAD_MODELS:
            continue
        one_switch = idx[(model, "irq_to_handler_preempt")]["min"]
        for name in ("sem_roundtrip", "yield_roundtrip"):
            assert idx[(model, name)]["min"] > one_switch / 2, (model, name, idx[(model, name)])


def test_footprint_parts(results: dict[str, dict], board: str) -> None:
    doc = _doc(results, board)
    idx = {(r["model"], r["name"]): r["avg"] for r in doc["results"]}
    for model in doc["models"]:
        assert 0 < idx[(model, "kernel_text")] < idx[(model, "min_app_text")]
        assert idx[(model, "kernel_bss")] <= idx[(model, "min_app_bss")]


def test_doc_generated_from_json(results: dict[str, dict], board: str, tmp_path) -> None:
    doc = _doc(results, board)
    src = tmp_path / "m.json"
    src.write_text(json.dumps(doc))
    md = tmp_path / "b.md"
    proc = subprocess.run([str(ROOT / "tern"), "bench", "micro", "--from-json", str(src), "--doc", str(md)],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = md.read_text()
    assert f"Board **{board}**, unit **{doc['unit']}**" in text
    for r in doc["results"]:
        if r["name"] == "msg_roundtrip":
            assert f"**{micro._num(r['avg'])}**" in text


def test_map_parser_counts_only_linked_kernel_sections() -> None:
    text = """Discarded input sections
 .text.unused   0x00000000       0x40 CMakeFiles/x.dir/kernel/heap.c.obj
Linker script and memory map
.text           0x00000000     0x100
 .text.a        0x00000000       0x10 CMakeFiles/x.dir/kernel/sched.c.obj
 .text.long_function_name
                0x00000010       0x20 CMakeFiles/x.dir/arch/cortex-m/port_cm.c.obj
 .text.b        0x00000030       0x30 CMakeFiles/x.dir/boards/mps2-an385/board.c.obj
 .text.main     0x00000060       0x08 CMakeFiles/x.dir/app.c.obj
.data           0x20000000       0x4
 .data.x        0x20000000       0x4 CMakeFiles/x.dir/kernel/clock.c.obj
.bss            0x20000004       0x10
 .bss.y         0x20000004       0x10 CMakeFiles/x.dir/kernel/slab.c.obj
 COMMON         0x20000014       0x8 CMakeFiles/x.dir/app.c.obj
.debug_info     0x00000000     0x100
 .debug_info    0x00000000     0x100 CMakeFiles/x.dir/kernel/sched.c.obj
"""
    assert micro.kernel_footprint(text) == {"text": 0x30, "data": 4, "bss": 0x10}


def test_bad_output_is_named() -> None:
    with pytest.raises(micro.MicroError, match="did not finish"):
        micro.parse_output("MICRO begin model=stack\nmicro: timer_delay stalled after 3 of 40 samples\n", "stack")
    with pytest.raises(micro.MicroError, match="malformed"):
        micro.parse_output("MICRO name=x model=stack count=1 min=a\nMICRO end model=stack\n", "stack")
