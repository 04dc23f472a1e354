"""A simulation's runs split into chunks, each a task on local processes or a Dask cluster.

The runs axis makes run ``i`` draw only from its own streams (see
:class:`~causalbandits_lib.core.streams.RunStreams`): simulating runs ``0..36`` here and ``37..73``
and ``74..99`` elsewhere gives, run for run, the numbers of one simulation of ``0..99``.
:func:`simulate_in_chunks` uses that: each chunk is ``simulate(..., runs=chunk)`` run by
:func:`~causalbandits_lib.core.parallel.map_tasks` (joblib processes, or the Dask scheduler it is
given), and :func:`join_results` puts the chunks back together in run order: per-round values and
running sums at checkpoints along the runs axis. The conformance test checks that the result is
bit-identical to one process for every registered (environment, policy) pair, on the numpy path
and on the compiled kernels.

Running sums are joined whether simulate kept them by default or a
:class:`~causalbandits_lib.core.recorders.RunningSums` recorder kept them (its result is a
:class:`~causalbandits_lib.core.recorders.CheckpointSums`); the results of other recorders are
whatever their chapter wants and cannot be joined generically, so a chunked simulation refuses them.
When simulate would choose on its own between per-round values and running sums (``metrics`` not
given), every chunk must choose as the whole simulation would; if a chunk is small enough to keep
per-round values where the whole would keep sums, say which with ``metrics``.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from .parallel import map_tasks
from .recorders import CheckpointSums
from .runner import DEFAULT_METRICS, PER_ROUND_BUDGET, SimulationResult, simulate

__all__ = ["chunk_runs", "join_results", "run_in_chunks", "simulate_in_chunks"]


def chunk_runs(n_runs: int, chunks: int | Sequence[int]) -> list[list[int]]:
    """The run indices ``0..n_runs-1`` cut into consecutive chunks: ``chunks`` of (nearly) equal
    size, or of the given sizes.

    Raises
    ------
    ValueError
        If the sizes are not positive or do not add up to ``n_runs``, or there are more chunks than
        runs.
    """
    if n_runs < 1:
        raise ValueError(f"n_runs={n_runs} must be at least 1")
    if isinstance(chunks, (int, np.integer)):
        if not 1 <= chunks <= n_runs:
            raise ValueError(f"chunks={chunks} must be between 1 and n_runs={n_runs}")
        sizes = [n_runs // chunks + (i < n_runs % chunks) for i in range(int(chunks))]
    else:
        sizes = [int(s) for s in chunks]
        if not sizes or min(sizes) < 1 or sum(sizes) != n_runs:
            raise ValueError(f"chunk sizes {sizes} must be positive and add up to n_runs={n_runs}")
    bounds = np.cumsum([0, *sizes])
    return [list(range(int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:])]


def join_results(parts: Sequence[SimulationResult]) -> SimulationResult:
    """The chunks of one simulation as one result, runs in the order of ``parts``: per-round
    values and running sums (same checkpoints) joined along the runs axis.

    Raises
    ------
    ValueError
        If the parts are not chunks of one simulation (other seed, horizon, values or checkpoints),
        or hold results of other recorders, which cannot be joined generically.
    """
    parts = list(parts)
    if not parts:
        raise ValueError("no chunk to join")
    first = parts[0]
    for p in parts:
        if p.seed != first.seed or p.T != first.T or list(p.metrics) != list(first.metrics):
            raise ValueError("the chunks are not of one simulation (seed, horizon or per-round values differ)")
        if list(p.recorded) != list(first.recorded):
            raise ValueError("the chunks kept results of other recorders")
        for name, value in p.recorded.items():
            if not isinstance(value, CheckpointSums) or not np.array_equal(value.t, first.recorded[name].t):
                raise ValueError(f"the results of recorder {name!r} cannot be joined across chunks")
        if (p.sums is None) != (first.sums is None) or (
            p.sums is not None
            and (not np.array_equal(p.sums.t, first.sums.t) or list(p.sums.sums) != list(first.sums.sums))
        ):
            raise ValueError("the chunks kept running sums at other checkpoints")

    def joined(pieces: Sequence[CheckpointSums]) -> CheckpointSums:
        return CheckpointSums(pieces[0].t, {k: np.concatenate([q.sums[k] for q in pieces]) for k in pieces[0].sums})

    return SimulationResult(
        metrics={k: np.concatenate([p.metrics[k] for p in parts]) for k in first.metrics},
        runs=np.concatenate([p.runs for p in parts]),
        seed=first.seed,
        T=first.T,
        seconds=sum(p.seconds for p in parts),
        info=dict(first.info, chunks=[len(p.runs) for p in parts]),
        recorded={name: joined([p.recorded[name] for p in parts]) for name in first.recorded},
        sums=joined([p.sums for p in parts]) if first.sums is not None else None,
    )


def _one_chunk(simulate_runs: Callable[..., SimulationResult], runs: list[int]) -> SimulationResult:
    # a copy per chunk: run in this process, chunks must not share an environment, policy or recorder
    return copy.deepcopy(simulate_runs)(runs=runs)


def run_in_chunks(
    simulate_runs: Callable[..., SimulationResult],
    n_runs: int,
    chunks: int | Sequence[int],
    jobs: int = 1,
    scheduler: str | None = None,
    retries: int = 2,
) -> SimulationResult:
    """``simulate_runs(runs=chunk)`` for every chunk of :func:`chunk_runs`, each a task of
    :func:`~causalbandits_lib.core.parallel.map_tasks` (serially, on ``jobs`` processes, or on the
    Dask ``scheduler``), joined in run order by :func:`join_results`. ``simulate_runs`` must be
    picklable (a module-level function or a :func:`functools.partial` of one).

    Raises
    ------
    RuntimeError
        If a chunk failed after its retries (naming the chunk and the error).
    """
    runs = chunk_runs(n_runs, chunks)
    tasks = [dict(simulate_runs=simulate_runs, runs=r) for r in runs]
    outcomes = map_tasks(_one_chunk, tasks, jobs=jobs, scheduler=scheduler, retries=retries)
    for o in outcomes:
        if not o.ok:
            r = runs[o.index]
            last = (o.error or "unknown error").strip().splitlines()[-1]
            raise RuntimeError(f"the chunk of runs {r[0]}..{r[-1]} failed after {o.attempts} attempt(s): {last}")
    return join_results([o.result for o in outcomes])


def simulate_in_chunks(
    env: Any,
    policy: Any,
    T: int,
    seed: int,
    n_runs: int,
    chunks: int | Sequence[int],
    jobs: int = 1,
    scheduler: str | None = None,
    retries: int = 2,
    **simulate_kw: Any,
) -> SimulationResult:
    """:func:`~causalbandits_lib.core.runner.simulate` of runs ``0..n_runs-1`` as chunks (see the
    module docstring); the result equals ``simulate(env, policy, T, seed, n_runs=n_runs, ...)``
    run for run. ``simulate_kw`` are simulate's other arguments.

    Raises
    ------
    ValueError
        If the chunks are not valid, or would keep other values than the whole simulation (see the
        module docstring); a recorder whose results cannot be joined is refused once the chunks ran.
    """
    if "metrics" not in simulate_kw:
        whole = 8 * len(DEFAULT_METRICS) * n_runs * T > PER_ROUND_BUDGET
        smallest = 8 * len(DEFAULT_METRICS) * min(map(len, chunk_runs(n_runs, chunks))) * T > PER_ROUND_BUDGET
        if whole != smallest:
            raise ValueError(
                f"simulate_in_chunks: {n_runs} runs x {T} rounds keep running sums, a chunk of them would keep "
                "per-round values; give metrics=() with a RunningSums recorder (or metrics=(...)) to choose"
            )
    whole_runs = partial(simulate, env, policy, T, seed, **simulate_kw)
    return run_in_chunks(whole_runs, n_runs, chunks, jobs, scheduler, retries)
