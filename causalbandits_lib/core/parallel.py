"""Independent tasks in parallel: serially, on joblib's process pool, or on a Dask cluster.

:func:`map_tasks` runs ``fn(**task)`` for every task and returns the outcomes in task order,
retrying a task whose worker died or that raised a bounded number of times. Chapters use it for
their own grids (hyper-parameter searches, budget curves); the book's parameter sweeps
(:mod:`causalbandits_lib.book.sweep`) use it to execute notebooks. Since every task draws its
randomness from its own seeds, results do not depend on where or beside what a task ran.
"""

from __future__ import annotations

import logging
import os
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

__all__ = ["TaskOutcome", "map_tasks"]


@dataclass
class TaskOutcome:
    """What happened to one task: its result or its last error, and how many attempts it took."""

    index: int
    ok: bool
    result: Any = None
    error: str | None = None
    attempts: int = 0
    where: str = ""


def _call(fn: Callable, kwargs: Mapping[str, Any]) -> tuple[bool, Any, str]:
    """Run one task, turning an exception into an error text (so a pool never loses it)."""
    try:
        return True, fn(**kwargs), f"pid {os.getpid()}"
    except BaseException as exc:  # noqa: BLE001 - report everything, including SystemExit from a task
        return False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}", f"pid {os.getpid()}"


def map_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[Mapping[str, Any]],
    jobs: int = 1,
    scheduler: str | None = None,
    retries: int = 2,
    on_done: Callable[[TaskOutcome], None] | None = None,
) -> list[TaskOutcome]:
    """Run ``fn(**task)`` for every task; return one :class:`TaskOutcome` per task, in task order.

    Parameters
    ----------
    fn : callable
        A module-level (picklable) function.
    tasks : sequence of dict
        Keyword arguments of each task.
    jobs : int
        Worker processes (``1`` with no scheduler runs serially in this process).
    scheduler : str, optional
        Address of a running Dask ``distributed`` scheduler, or ``"local"`` for a
        ``LocalCluster`` with ``jobs`` single-threaded worker processes on loopback.
        Without it, joblib's process pool (loky) is used.
    retries : int
        Extra attempts for a task that raised or whose worker died.
    on_done : callable, optional
        Called with each final outcome as it arrives (for progress output).
    """
    if jobs < 1:
        raise ValueError(f"jobs={jobs} must be at least 1")
    if retries < 0:
        raise ValueError(f"retries={retries} must be >= 0")
    outcomes = [TaskOutcome(i, False) for i in range(len(tasks))]
    if not tasks:
        return outcomes
    if scheduler:
        _map_dask(fn, tasks, jobs, scheduler, retries, outcomes, on_done)
    elif jobs == 1:
        for i, kw in enumerate(tasks):
            for _ in range(retries + 1):
                outcomes[i].attempts += 1
                ok, value, where = _call(fn, kw)
                outcomes[i].ok, outcomes[i].where = ok, where
                if ok:
                    outcomes[i].result, outcomes[i].error = value, None
                    break
                outcomes[i].error = value
            if on_done:
                on_done(outcomes[i])
    else:
        _map_joblib(fn, tasks, jobs, retries, outcomes, on_done)
    return outcomes


def _map_joblib(fn, tasks, jobs, retries, outcomes, on_done) -> None:
    from joblib import Parallel, delayed
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    pending = list(range(len(tasks)))
    while pending:
        for i in pending:
            outcomes[i].attempts += 1
        finished: set[int] = set()
        try:
            gen = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered")(
                delayed(_indexed_call)(fn, i, tasks[i]) for i in pending
            )
            for i, ok, value, where in gen:
                finished.add(i)
                o = outcomes[i]
                o.ok, o.where = ok, where
                if ok:
                    o.result, o.error = value, None
                else:
                    o.error = value
        except TerminatedWorkerError as exc:
            # A worker process died (killed, out of memory): the tasks that did not finish are
            # charged one attempt and resubmitted to a fresh pool if they have attempts left.
            for i in pending:
                if i not in finished:
                    outcomes[i].error = f"worker died: {exc}"
        retry = [i for i in pending if not outcomes[i].ok and outcomes[i].attempts <= retries]
        for i in pending:
            if i not in retry and on_done:
                on_done(outcomes[i])
        pending = retry


def _indexed_call(fn, i, kwargs):
    ok, value, where = _call(fn, kwargs)
    return i, ok, value, where


def _map_dask(fn, tasks, jobs, scheduler, retries, outcomes, on_done) -> None:
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler == "local":
        cluster = LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # the scheduler's HTTP routes (/health, /metrics) otherwise try port 8787 first
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.WARNING,
        )
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = {}
        for i, kw in enumerate(tasks):
            outcomes[i].attempts += 1
            futures[client.submit(_call, fn, kw, key=f"task-{i}-{outcomes[i].attempts}", pure=False)] = i
        seq = as_completed(futures)
        for fut in seq:
            i = futures.pop(fut)
            o = outcomes[i]
            try:
                ok, value, where = fut.result()
            except Exception as exc:  # KilledWorker and friends: the worker died under the task
                ok, value, where = False, f"worker died: {type(exc).__name__}: {exc}", "dask"
            o.ok, o.where = ok, where
            if ok:
                o.result, o.error = value, None
            else:
                o.error = value
            if not ok and o.attempts <= retries:
                o.attempts += 1
                new = client.submit(_call, fn, tasks[i], key=f"task-{i}-{o.attempts}", pure=False)
                futures[new] = i
                seq.add(new)
            elif on_done:
                on_done(o)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
