"""Where a sweep's independent runs execute: serially, on a local Dask cluster, or on an existing one.

Every sweep (`tern bench seed000`, `tern bench micro`, `tern bench seed003`)
hands its runs to map_jobs():

- workers = 1 and no scheduler: the runs execute one after the other in
  this process; Dask is not even imported;
- workers = N > 1: a local Dask cluster of N worker processes (one thread
  each) on the loopback interface, started for the sweep and stopped after
  it; this is what `--jobs N` means;
- scheduler = "tcp://HOST:PORT": the runs go to an existing Dask cluster
  (`dask scheduler` plus `dask worker tcp://HOST:PORT` on each machine;
  docs/benchmarks.md says what the workers need).

The function and its jobs must be picklable (module-level functions, plain
data), since on Dask they travel to other processes. Results come back in
the order of the jobs, never in the order they completed, so a sweep's
output does not depend on which executor ran it or how fast its workers were.
"""
from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from terntools.errors import TernError

J = TypeVar("J")
R = TypeVar("R")

# How long to wait for an existing scheduler to answer.
CONNECT_TIMEOUT_S = 10.0


class ExecutorError(TernError):
    """Dask could not be started or reached."""


def local_workers(workers: int, jobs: int) -> int:
    """The size of the local cluster map_jobs() starts for `jobs` jobs; 1 means none (serial)."""
    return max(1, min(workers, jobs))


def describe(workers: int, scheduler: str | None, jobs: int) -> str:
    """What map_jobs() runs `jobs` jobs on: 'serial', 'local Dask cluster, 4 workers' or
    'Dask cluster at tcp://HOST:PORT' (for progress messages and result documents)."""
    if scheduler:
        return f"Dask cluster at {scheduler}"
    n = local_workers(workers, jobs)
    return "serial" if n == 1 else f"local Dask cluster, {n} workers"


def map_jobs(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    *,
    workers: int = 1,
    scheduler: str | None = None,
    on_done: Callable[[int, R], None] | None = None,
) -> list[R]:
    """[fn(job) for job in jobs], computed serially or on Dask (see the module docstring).

    on_done(index, result) is called in this process as each job finishes
    (in completion order), for progress reports. An exception raised by fn
    propagates (on Dask: once that job has failed; the other jobs are
    cancelled). A local cluster is never larger than the number of jobs,
    and a sweep of at most one job runs serially.
    """
    if scheduler is None and local_workers(workers, len(jobs)) == 1:
        results: list[R] = []
        for index, job in enumerate(jobs):
            result = fn(job)
            if on_done is not None:
                on_done(index, result)
            results.append(result)
        return results
    dd = _distributed()
    if scheduler is not None:
        try:
            client = dd.Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            return _run(client, fn, jobs, on_done)
    try:
        cluster = dd.LocalCluster(
            n_workers=local_workers(workers, len(jobs)),
            threads_per_worker=1,  # one run per process: the emulator runs are the work
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # its HTTP server (health checks; no bokeh, no dashboard) on any free port
            memory_limit=0,  # emulator runs are small; no pausing or restarting workers for memory
            # a run's failure comes back through its future; what Dask logs itself at
            # ERROR is mostly a worker's heartbeat racing the cluster's shutdown
            silence_logs=logging.CRITICAL,
        )
    except (OSError, TimeoutError, RuntimeError) as exc:
        raise ExecutorError(f"cannot start a local Dask cluster of {workers} workers ({exc}); "
                            "use --jobs 1 to run serially") from None  # fmt: skip
    with cluster, dd.Client(cluster) as client:
        return _run(client, fn, jobs, on_done)


def _distributed() -> Any:
    """The distributed package, imported only when Dask is used (it takes half a second).

    Typed Any: much of distributed's API is unannotated, which mypy --strict
    would refuse to call.
    """
    try:
        return importlib.import_module("distributed")
    except ImportError as exc:  # pragma: no cover - tools/requirements.txt installs it
        raise ExecutorError(f"Dask is not installed ({exc}); run `make venv`, or use --jobs 1") from None


def _run(client: Any, fn: Callable[[J], R], jobs: Sequence[J], on_done: Callable[[int, R], None] | None) -> list[R]:
    as_completed = _distributed().as_completed
    # pure=False: two equal jobs are two runs, not one cached result
    futures = [client.submit(fn, job, pure=False) for job in jobs]
    index = {future.key: i for i, future in enumerate(futures)}
    results: dict[int, R] = {}
    try:
        for future in as_completed(futures):
            try:
                result: R = future.result()
            except (ModuleNotFoundError, RuntimeError) as exc:
                if isinstance(exc, RuntimeError) and "deserializ" not in str(exc):
                    raise
                raise ExecutorError(f"the Dask cluster could not load the job ({type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0]}): the scheduler and every worker need tern's "
                                    "tools/ on PYTHONPATH (README.md, 'Sweeps on a Dask cluster')") from None
            i = index[future.key]
            results[i] = result
            if on_done is not None:
                on_done(i, result)
    finally:
        client.cancel([f for f in futures if not f.done()])
    return [results[i] for i in range(len(jobs))]
