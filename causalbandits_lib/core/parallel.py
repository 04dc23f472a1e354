"""Independent tasks in parallel: serially, on joblib's process pool, or on a Dask cluster.

:func:`map_tasks` runs ``fn(**task)`` for every task and returns the outcomes in task order,
retrying a task whose worker died or that raised a bounded number of times. Chapters use it for
their own grids (hyper-parameter searches, budget curves); the book's parameter sweeps
(:mod:`causalbandits_lib.book.sweep`) use it to execute notebooks. Since every task draws its
randomness from its own seeds, results do not depend on where or beside what a task ran.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

__all__ = ["TaskOutcome", "map_tasks", "TaskCancelled", "Cancellation", "current_cancellation"]


class TaskCancelled(RuntimeError):
    """The task was cancelled (its sweep was interrupted) and stopped without a result."""


class Cancellation:
    """The cancellation of one task running on a Dask worker.

    A task's body (the thread that runs it) finds it with :func:`current_cancellation`: it calls
    :meth:`check` before anything it must not do once cancelled (moving a record into place), and
    registers with :meth:`on_cancel` what stops the work it started (killing a notebook's kernel).
    :meth:`cancel` is called from another thread when the client that submitted the task is
    interrupted."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`TaskCancelled` when the task has been cancelled."""
        if self._event.is_set():
            raise TaskCancelled("the task was cancelled: its sweep was interrupted")

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` when the task is cancelled (at once if it already is). Returns a
        function that unregisters it."""
        with self._lock:
            now = self._event.is_set()
            if not now:
                self._callbacks.append(callback)
        if now:
            with contextlib.suppress(Exception):
                callback()

        def remove() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

        return remove

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            with contextlib.suppress(Exception):
                callback()


_CANCELLATION: contextvars.ContextVar[Cancellation | None] = contextvars.ContextVar(
    "causalbandits_cancellation", default=None
)


def current_cancellation() -> Cancellation | None:
    """The :class:`Cancellation` of the task this thread runs on a Dask worker (None elsewhere:
    serially and on joblib's pool an interrupt stops the whole process instead)."""
    return _CANCELLATION.get()


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
    """Run one task, turning an exception into an error text (so a pool never loses it). An
    interrupt (Ctrl-C, or SIGTERM turned into one) is not a task's failure: it propagates."""
    try:
        return True, fn(**kwargs), f"pid {os.getpid()}"
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - report everything, including SystemExit from a task
        return False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}", f"pid {os.getpid()}"


def _worker_call(fn: Callable, kwargs: Mapping[str, Any]) -> tuple[bool, Any, str, list[dict]]:
    """:func:`_call` in a worker process, with the simulations it ran (the parent's work ledger,
    :class:`~causalbandits_lib.core.runner.work_ledger`, does not see the worker's)."""
    from .runner import work_ledger

    with work_ledger() as work:
        ok, value, where = _call(fn, kwargs)
    return ok, value, where, work


def _replay(work: list[dict]) -> None:
    from .runner import note_work

    for entry in work:
        note_work(**entry)


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
        Without it, joblib's process pool (loky) is used. When the caller is interrupted, every
        task is told (see :class:`Cancellation`: a running task kills what it registered, such as
        a notebook's kernel, and writes nothing) and waited for, up to :data:`CANCEL_WAIT` seconds.
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
    """joblib's process pool. When a worker dies, loky ends the whole pool, so the death cannot be
    told apart from its neighbours' by the error alone: tasks that had not started are resubmitted
    uncharged, and if several tasks were running, each is run again alone (uncharged) so that a
    death is charged to the task that died only. A death while one task runs is that task's."""
    import shutil
    import tempfile

    from joblib import Parallel, delayed
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    marks = tempfile.mkdtemp(prefix="causalbandits-tasks-")
    pending = list(range(len(tasks)))
    suspects: list[int] = []
    try:
        while pending or suspects:
            if suspects:
                batch, width = [suspects.pop(0)], 2  # one task (n_jobs=1 would run it in this process)
            else:
                batch, width, pending = pending, jobs, []
            for i in batch:
                outcomes[i].attempts += 1
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(marks, str(i)))
            finished: set[int] = set()
            uncharged: list[int] = []
            try:
                gen = Parallel(n_jobs=width, backend="loky", return_as="generator_unordered")(
                    delayed(_indexed_call)(fn, i, tasks[i], marks) for i in batch
                )
                for i, ok, value, where, work in gen:
                    _replay(work)
                    finished.add(i)
                    o = outcomes[i]
                    o.ok, o.where = ok, where
                    if ok:
                        o.result, o.error = value, None
                    else:
                        o.error = value
            except TerminatedWorkerError as exc:
                unfinished = [i for i in batch if i not in finished]
                started = [i for i in unfinished if os.path.exists(os.path.join(marks, str(i)))]
                for i in unfinished:
                    if len(started) == 1 and i in started:
                        outcomes[i].error = f"worker died: {exc}"
                    else:
                        outcomes[i].attempts -= 1
                        uncharged.append(i)
                        (suspects if i in started else pending).append(i)
            for i in batch:
                if i in uncharged:
                    continue
                if not outcomes[i].ok and outcomes[i].attempts <= retries:
                    pending.append(i)
                elif on_done:
                    on_done(outcomes[i])
    finally:
        shutil.rmtree(marks, ignore_errors=True)


def _indexed_call(fn, i, kwargs, marks=None):
    if marks is not None:
        with open(os.path.join(marks, str(i)), "w") as fh:  # this task has started, in this worker
            fh.write(str(os.getpid()))
    ok, value, where, work = _worker_call(fn, kwargs)
    return i, ok, value, where, work


#: Seconds an interrupted Dask map waits for its running tasks to stop (their kernels killed)
#: before it returns; a task still running then is cancelled (and its worker may go on with it).
CANCEL_WAIT = 30.0


def _dask_call(fn: Callable, kwargs: Mapping[str, Any], cancel: str) -> tuple[bool, Any, str, list[dict]]:
    """:func:`_worker_call` on a Dask worker, stopped when its client sets the ``distributed.Event``
    named ``cancel`` (the client was interrupted): the task's :class:`Cancellation` is cancelled
    then, which kills what the task registered (a notebook's kernel) and keeps it from writing its
    result (a record). Dask's own cancel only forgets a running task: its thread, and the kernel
    it started, went on and wrote a record after the command had said "workers stopped"."""
    from distributed import Event

    event = Event(cancel)
    if event.is_set():  # queued when the client was interrupted: nothing starts
        return False, "TaskCancelled: the sweep was interrupted before the task started", f"pid {os.getpid()}", []
    cancellation = Cancellation()
    finished = threading.Event()

    def watch() -> None:
        while not finished.is_set():
            try:
                if event.wait(timeout=0.5):
                    cancellation.cancel()
                    return
            except Exception:  # noqa: BLE001 - the scheduler is unreachable for a moment: ask again
                finished.wait(0.5)

    watcher = threading.Thread(target=watch, name="causalbandits-cancel", daemon=True)
    watcher.start()
    token = _CANCELLATION.set(cancellation)
    try:
        return _worker_call(fn, kwargs)
    finally:
        _CANCELLATION.reset(token)
        finished.set()


def _map_dask(fn, tasks, jobs, scheduler, retries, outcomes, on_done) -> None:
    import uuid

    from distributed import Client, Event, LocalCluster, as_completed, wait

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
    futures: dict = {}
    cancel = Event(f"causalbandits-cancel-{uuid.uuid4().hex}", client=client)
    try:
        for i, kw in enumerate(tasks):
            outcomes[i].attempts += 1
            key = f"task-{i}-{outcomes[i].attempts}-{cancel.name[-8:]}"
            futures[client.submit(_dask_call, fn, kw, cancel.name, key=key, pure=False)] = i
        seq = as_completed(futures)
        for fut in seq:
            i = futures.pop(fut)
            o = outcomes[i]
            try:
                ok, value, where, work = fut.result()
                _replay(work)
            except Exception as exc:  # KilledWorker and friends: the worker died under the task
                ok, value, where = False, f"worker died: {type(exc).__name__}: {exc}", "dask"
            o.ok, o.where = ok, where
            if ok:
                o.result, o.error = value, None
            else:
                o.error = value
            if not ok and o.attempts <= retries:
                o.attempts += 1
                key = f"task-{i}-{o.attempts}-{cancel.name[-8:]}"
                new = client.submit(_dask_call, fn, tasks[i], cancel.name, key=key, pure=False)
                futures[new] = i
                seq.add(new)
            elif on_done:
                on_done(o)
    except BaseException:
        # interrupted: nothing more may start, and what runs stops. The event tells every task
        # (running: its kernel is killed and it writes nothing; queued: it returns at once); the
        # tasks are waited for, so that nothing they started goes on after this returns, then
        # whatever is left is cancelled (a LocalCluster's workers are then closed with it).
        with contextlib.suppress(Exception):
            cancel.set()
        with contextlib.suppress(Exception):
            wait(list(futures), timeout=CANCEL_WAIT)
        with contextlib.suppress(Exception):
            client.cancel(list(futures), force=True)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
