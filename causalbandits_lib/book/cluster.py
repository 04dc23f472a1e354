"""The Dask cluster a command runs on (``--scheduler ADDRESS|local``), reached before anything runs.

``run``, ``verify``, ``sweep`` and ``sensitivity`` take ``--scheduler``. Before the first task is
sent, :func:`describe_scheduler` reaches the scheduler (a short timeout, not Dask's 30 s default),
counts its workers and their threads and returns the line the command prints; a scheduler that
cannot be reached, or has no worker, is one :class:`SchedulerError` (a
:class:`~causalbandits_lib.book.params.ParameterError`: one line on stderr, exit code 2) and
nothing runs. ``local`` starts a ``LocalCluster`` of ``--jobs`` single-threaded worker processes on
loopback when the work starts (:func:`causalbandits_lib.core.parallel.map_tasks`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .params import ParameterError

#: Seconds to reach a scheduler before saying it cannot be reached.
CONNECT_TIMEOUT = 10.0


class SchedulerError(ParameterError):
    """A ``--scheduler`` that cannot be used: unreachable, malformed or without workers."""


@dataclass(frozen=True)
class ClusterInfo:
    """What a command found at its ``--scheduler`` before it started."""

    address: str
    workers: int
    threads: int

    def line(self) -> str:
        if self.address == "local":
            return f"a local Dask cluster of {self.workers} single-thread worker process(es) (127.0.0.1)"
        return f"Dask scheduler {self.address}: {self.workers} worker(s), {self.threads} thread(s)"


def describe_scheduler(address: str, jobs: int = 1, timeout: float | None = None) -> ClusterInfo:
    """Reach the scheduler at ``address`` and count its workers and threads (``local``: the
    ``jobs`` workers the command will start).

    Raises
    ------
    SchedulerError
        If the address is empty, the scheduler does not answer within ``timeout`` seconds (default
        :data:`CONNECT_TIMEOUT`), or it has no worker (naming the address and what is allowed).
    """
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    address = (address or "").strip()
    if not address:
        raise SchedulerError("--scheduler: give a Dask scheduler address (tcp://HOST:PORT) or 'local'")
    if address == "local":
        return ClusterInfo("local", jobs, jobs)
    from distributed import Client

    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SchedulerError(
            f"--scheduler {address}: no Dask scheduler answered within {timeout:g} s ({why}); start one "
            "(dask scheduler; dask worker ADDRESS) or give --scheduler local"
        ) from None
    try:
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
    finally:
        client.close()
    if not workers:
        raise SchedulerError(
            f"--scheduler {address}: the scheduler has no worker; start at least one (dask worker {address})"
        )
    threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
    return ClusterInfo(address, len(workers), threads)
