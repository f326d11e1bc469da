"""Sweeps on Dask (terntools.executor): the same results whichever executor ran them.

The real seed-000 guest (mps2-an385, stack, built once in a private
directory) runs a small sweep three ways: serially in this process
(--jobs 1), on a local Dask cluster of two worker processes (--jobs 2), and
on an existing two-worker cluster given by address (--scheduler). The JSON
documents must be the same byte for byte once two fields are blanked: the
top-level "executor" (which names the executor) and every run's
"wall_seconds" (wall time of the emulator). Skipped when QEMU or the
toolchain is missing, or when a local Dask cluster cannot start (no loopback
networking, say).
"""
from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, require_tool, run_checked

from terntools import executor, seed000
from terntools.boards import Board, load_board

MODEL = "stack"


def _square(x: int) -> int:
    time.sleep(0.05 * (4 - x))  # later jobs finish first
    return x * x


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address of a two-worker local Dask cluster (the --scheduler case)."""
    distributed = pytest.importorskip("distributed", reason="dask is not installed (make venv installs it)")
    try:
        local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                         dashboard_address=":0", silence_logs=logging.ERROR)  # fmt: skip
    except Exception as exc:  # whatever stops it: no loopback, no sockets, no processes
        pytest.skip(f"a local Dask cluster cannot start here: {type(exc).__name__}: {exc}")
    with local:
        yield str(local.scheduler_address)


def test_serial_map_keeps_order_and_reports_each_job() -> None:
    seen: list[tuple[int, int]] = []
    assert executor.map_jobs(_square, [1, 2, 3], on_done=lambda i, r: seen.append((i, r))) == [1, 4, 9]
    assert seen == [(0, 1), (1, 4), (2, 9)]
    assert executor.describe(1, None, 3) == "serial"
    assert executor.describe(4, None, 1) == "serial"  # one job never starts a cluster
    assert executor.describe(4, None, 2) == "local Dask cluster, 2 workers"
    assert executor.describe(1, "tcp://h:8786", 5) == "Dask cluster at tcp://h:8786"


def test_dask_map_orders_results_by_job_not_by_completion(cluster: str) -> None:
    seen: list[int] = []
    results = executor.map_jobs(_square, [0, 1, 2, 3], scheduler=cluster, on_done=lambda i, r: seen.append(i))
    assert results == [0, 1, 4, 9]
    assert sorted(seen) == [0, 1, 2, 3]


@pytest.fixture(scope="module")
def board() -> Board:
    return load_board("mps2-an385", ROOT)


@pytest.fixture(scope="module")
def elf(board: Board, tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("cmake", "ninja", "arm-none-eabi-gcc", "qemu-system-arm"):
        require_tool(tool)
    build = tmp_path_factory.mktemp(f"seed000-{MODEL}")
    run_checked(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", f"-DTERN_BOARD={board.name}",
                 f"-DTERN_MODEL={MODEL}"])  # fmt: skip
    run_checked(["cmake", "--build", str(build), "--target", "seed000.elf"])
    return build / "bench" / "seed000" / "seed000.elf"


def _sweep(board: Board, elf: Path, jobs: int, scheduler: str | None, logs: Path) -> dict[str, Any]:
    # four runs of one sensing period each: n = 1, 8 at l_s = 1, 75 ms
    plan = seed000.SweepPlan(board=board, models=[MODEL], ns=[1, 8], ls_ms=[1, 75], samples=1, seed=1, jobs=jobs,
                             timeout=120, logs_dir=logs, scheduler=scheduler)  # fmt: skip
    result = seed000.run_sweep(plan, progress_stream=io.StringIO(), root=ROOT, builder=lambda b, m, r: elf)
    assert result.failures == []
    assert seed000.check_results(result.doc) == []
    return result.doc


def _comparable(doc: dict[str, Any]) -> str:
    """The JSON as `tern bench seed000 --json` writes it, without the executor's name and wall times."""
    doc = {**doc, "executor": "-", "runs": [{**run, "wall_seconds": 0} for run in doc["runs"]]}
    return json.dumps(doc, indent=2) + "\n"


def test_a_sweep_gives_the_same_json_serially_and_on_dask(board: Board, elf: Path, cluster: str,
                                                           tmp_path: Path) -> None:  # fmt: skip
    serial = _sweep(board, elf, 1, None, tmp_path / "serial")
    local = _sweep(board, elf, 2, None, tmp_path / "local")
    remote = _sweep(board, elf, 8, cluster, tmp_path / "remote")
    assert serial["executor"] == "serial"
    assert local["executor"] == "local Dask cluster, 2 workers"
    assert remote["executor"] == f"Dask cluster at {cluster}"
    assert [(r["n"], r["l_s_ms"]) for r in serial["runs"]] == [(1, 1), (1, 75), (8, 1), (8, 75)]
    assert _comparable(local) == _comparable(serial)
    assert _comparable(remote) == _comparable(serial)
    # the consoles come back from the workers into --logs
    for name in ("local", "remote"):
        logs = sorted(p.name for p in (tmp_path / name).iterdir())
        assert logs == sorted(p.name for p in (tmp_path / "serial").iterdir())
        assert len(logs) == 4
