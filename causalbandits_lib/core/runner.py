"""The one simulation loop: a policy against an environment, many independent runs at once.

State arrays of environments and policies carry a leading runs axis, so one call of ``select`` or
``pull`` steps every replication; their randomness comes from named per-run streams
(:mod:`~causalbandits_lib.core.streams`), so run ``i`` gives the same numbers whether it is
simulated alone or beside a thousand others. :func:`simulate_loop` is the reference that simulates
one run at a time; the conformance test and the benchmark check that both agree bit for bit.

What a simulation keeps is decided by its recorders (:mod:`~causalbandits_lib.core.recorders`):
per-round arrays (``metrics=``), running sums at checkpoints, or a chapter's own recorder. Every
chapter simulates through :func:`simulate`; none runs a loop of its own.

Backends: where a policy offers a compiled kernel for the environment
(:class:`~causalbandits_lib.core.protocols.Kernel`) and every recorder can take whole blocks of
rounds, the loop steps blocks of :data:`BLOCK` rounds through the kernel instead of calling
``observe``/``select``/``pull``/``update`` once per round. Both paths read the same streams; the
conformance check of every registered pair compares them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from .protocols import Environment, Policy, Recorder
from .recorders import CheckpointSums, PerRound, RunningSums, available_memory
from .streams import RunStreams, run_indices

__all__ = [
    "BACKENDS",
    "BLOCK",
    "DEFAULT_METRICS",
    "PER_ROUND_BUDGET",
    "SimulationResult",
    "checkpoint_grid",
    "simulate",
    "simulate_loop",
    "note_work",
    "work_by_pair",
    "work_ledger",
]

#: ``auto``: the compiled kernel when there is one (and the recorders allow it), else numpy;
#: ``numpy``: always the readable per-round path; ``compiled``: the kernel, or an error.
BACKENDS = ("auto", "numpy", "compiled")
#: Rounds per kernel call (the random streams' chunk size, so blocks are views of their buffers).
BLOCK = 1024
#: What ``simulate`` keeps when ``metrics`` is not given: regret and reward, per round while the
#: arrays take at most :data:`PER_ROUND_BUDGET` bytes, else their running sums at checkpoints.
DEFAULT_METRICS = ("regret", "reward")
#: Bytes of per-round arrays the default keeps (256 MiB: 1,000 runs x 16,000 rounds of two values).
PER_ROUND_BUDGET = 256 * 2**20
#: Checkpoints of the default running sums (log-spaced, and the horizon).
CHECKPOINTS = 64
_UNSET: Any = object()

# What every simulation cost, for the records: (environment, policy, backend, runs, rounds, seconds)
# appended by ``simulate`` while a collector is open (:func:`work_ledger`).
_LEDGERS: list[list[dict]] = []


class work_ledger:
    """Collect, while open, one entry per :func:`simulate` call (and per chapter identification that
    reports itself with :func:`note_work`): ``{"environment", "policy", "backend", "runs", "rounds",
    "seconds"}``. The book's notebook session keeps them in each record, so ``make bench`` can list
    every (environment, policy) pair of the paper profile with its path and its share of the time.

    >>> with work_ledger() as entries:
    ...     pass
    """

    def __enter__(self) -> list[dict]:
        self.entries: list[dict] = []
        _LEDGERS.append(self.entries)
        return self.entries

    def __exit__(self, *exc) -> None:
        _LEDGERS.remove(self.entries)


def note_work(environment: str, policy: str, backend: str, runs: int, rounds: int, seconds: float) -> None:
    """Add one entry to every open :class:`work_ledger` (a no-op when none is open)."""
    entry = dict(
        environment=environment, policy=policy, backend=backend, runs=int(runs), rounds=int(rounds), seconds=seconds
    )
    for ledger in _LEDGERS:
        ledger.append(entry)


def work_by_pair(entries: Sequence[dict]) -> list[dict]:
    """Ledger entries summed per (environment, policy, backend): ``calls``, ``run_steps`` (runs x
    rounds) and ``seconds``, the most expensive first."""
    total: dict[tuple[str, str, str], dict] = {}
    for e in entries:
        key = (e["environment"], e["policy"], e["backend"])
        row = total.setdefault(
            key, dict(environment=key[0], policy=key[1], backend=key[2], calls=0, run_steps=0, seconds=0.0)
        )
        row["calls"] += 1
        row["run_steps"] += int(e["runs"]) * int(e["rounds"])
        row["seconds"] += float(e["seconds"])
    rows = sorted(total.values(), key=lambda r: (-r["seconds"], r["environment"], r["policy"], r["backend"]))
    for r in rows:
        r["seconds"] = round(r["seconds"], 3)
    return rows


def checkpoint_grid(T: int, n: int = CHECKPOINTS) -> np.ndarray:
    """``n`` log-spaced rounds (1-based) from 1 to ``T``, deduplicated; ``T`` always included."""
    return np.unique(np.concatenate([np.geomspace(1, T, n).astype(np.int64), [T]]))


def _default_sums(T: int, checkpoints) -> RunningSums:
    names = DEFAULT_METRICS

    def values(t, context, actions, feedback, policy):
        diagnostics = getattr(policy, "diagnostics", None)
        extra = diagnostics() if diagnostics is not None and not set(names) <= set(feedback) else {}
        return {k: feedback[k] if k in feedback else extra[k] for k in names}

    grid = checkpoint_grid(T) if checkpoints is None else checkpoints
    return RunningSums(values, grid, name="sums", block_values=lambda v: {k: v[k] for k in names}, block_inputs=names)


def _check_memory(names, n_runs: int, T: int) -> None:
    need = 8 * len(names) * n_runs * T
    free = available_memory()
    if free is not None and need > free:
        raise MemoryError(
            f"simulate: keeping the per-round values {list(names)} of {n_runs} runs x {T} rounds needs at least "
            f"{need / 2**30:.2f} GB, more than the {free / 2**30:.2f} GB available; keep running sums at "
            "checkpoints instead (metrics=() with a RunningSums recorder, or the default), or fewer runs or rounds"
        )


@dataclass
class SimulationResult:
    """What a simulation kept.

    Attributes
    ----------
    metrics : dict of name to ndarray (n_runs, T, ...)
        Per-round values (the :class:`~causalbandits_lib.core.recorders.PerRound` recorder).
    runs : ndarray (n_runs,)
        Global run indices.
    recorded : dict of name to object
        The results of the other recorders, by their ``name``.
    """

    metrics: dict[str, np.ndarray]
    runs: np.ndarray
    seed: int
    T: int
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    recorded: dict[str, Any] = field(default_factory=dict)
    sums: CheckpointSums | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.metrics:
            raise KeyError(self._not_kept(name))
        return self.metrics[name]

    def _not_kept(self, name: str) -> str:
        kept = f"per-round values {sorted(self.metrics)}" if self.metrics else "no per-round values"
        sums = f" and running sums of {sorted(self.sums.sums)} at {len(self.sums.t)} checkpoints" if self.sums else ""
        return f"{name!r} was not kept per round: this simulation kept {kept}{sums}; ask for it with metrics=(...)"

    def cumulative(self, name: str = "regret") -> np.ndarray:
        """Cumulative sum over rounds, shape ``(n_runs, T)``."""
        return np.cumsum(self[name], axis=1)

    def final(self, name: str = "regret") -> np.ndarray:
        """Cumulative total at the horizon, one value per run (the per-round values summed, or the
        running sum at ``T`` when only checkpoints were kept)."""
        if name not in self.metrics and self.sums is not None and name in self.sums.sums and self.sums.t[-1] == self.T:
            return self.sums[name][..., -1]
        return self[name].sum(axis=1)

    def curve(self, name: str = "regret") -> tuple[np.ndarray, np.ndarray]:
        """``(t, cumulative)``: the cumulative sum at the kept checkpoints ``t`` (1-based), shape
        ``(n_runs, len(t))``; every round when per-round values were kept."""
        if name in self.metrics:
            return np.arange(1, self.T + 1), self.cumulative(name)
        if self.sums is not None and name in self.sums.sums:
            return self.sums.t, self.sums[name]
        raise KeyError(self._not_kept(name))

    def select_runs(self, rows: slice | np.ndarray) -> "SimulationResult":
        """The per-round metrics of some runs only (e.g. one configuration of a replicated layout)."""
        return SimulationResult(
            {k: v[rows] for k, v in self.metrics.items()}, self.runs[rows], self.seed, self.T, self.seconds
        )

    @staticmethod
    def concatenate(results: Iterable["SimulationResult"]) -> "SimulationResult":
        """Stack the per-round metrics of disjoint runs along the runs axis (used by :func:`simulate_loop`)."""
        results = list(results)
        names = list(results[0].metrics)
        return SimulationResult(
            metrics={k: np.concatenate([r.metrics[k] for r in results]) for k in names},
            runs=np.concatenate([r.runs for r in results]),
            seed=results[0].seed,
            T=results[0].T,
            seconds=sum(r.seconds for r in results),
        )


def _overrides(recorder: Recorder, hook: str) -> bool:
    from .recorders import RecorderBase

    method = getattr(type(recorder), hook, None)
    return not (isinstance(recorder, RecorderBase) and method is getattr(RecorderBase, hook))


def _kernel(env, policy, recorders, backend: str):
    """The compiled kernel to use, or None for the numpy path (see :data:`BACKENDS`)."""
    if backend == "numpy":
        return None
    make = getattr(policy, "compiled", None)
    kernel = make(env) if make is not None else None
    why = None
    if kernel is None:
        why = f"{type(policy).__name__} has no compiled kernel for {type(env).__name__}"
    else:
        for r in recorders:
            inputs = getattr(r, "block_inputs", None)
            if _overrides(r, "before_decision") and getattr(r, "probe_rounds", None) is None:
                why = f"recorder {r.name!r} probes before each decision (it declares no probe_rounds)"
            elif inputs is None or not _overrides(r, "after_block"):
                why = f"recorder {r.name!r} cannot record blocks of rounds"
            elif not set(inputs) <= set(kernel.outputs):
                missing = sorted(set(inputs) - set(kernel.outputs))
                why = f"recorder {r.name!r} needs {missing}, which the kernel does not write"
            if why:
                break
    if why is not None:
        if backend == "compiled":
            raise ValueError(f"backend='compiled' is not available: {why}")
        return None
    return kernel


def _block_ends(T: int, probes: Sequence[int]) -> list[int]:
    """Where the kernel's blocks end: every multiple of :data:`BLOCK` (the streams' chunks), every
    probed round (a block ends before it, so the probe sees the state the numpy path would), and ``T``."""
    ends = set(range(BLOCK, T, BLOCK)) | {int(t) for t in probes if 0 < t < T} | {T}
    return sorted(ends)


def _run_blocks(kernel, recorders, T: int, n_runs: int, env, policy) -> None:
    needed = sorted({name for r in recorders for name in r.block_inputs})
    probing = [r for r in recorders if _overrides(r, "before_decision")]
    probes: dict[int, list] = {}
    for r in probing:
        for t in sorted({int(t) for t in r.probe_rounds if 0 <= t < T}):
            probes.setdefault(t, []).append(r)
    t0 = 0
    for t1 in _block_ends(T, list(probes)):
        if t0 in probes:  # the probes of round t0 see its context and the state after round t0 - 1
            context = env.observe(t0)
            for r in probes[t0]:
                r.before_decision(t0, context, policy)
        out = {}
        for name in needed:
            dtype, shape = kernel.outputs[name]
            out[name] = np.empty((n_runs, t1 - t0) + tuple(shape), dtype=dtype)
        kernel.run(t0, t1, out)
        for r in recorders:
            r.after_block(t0, t1, out)
        t0 = t1


def simulate(
    env: Environment,
    policy: Policy,
    T: int,
    seed: int,
    n_runs: int | None = None,
    runs: Sequence[int] | None = None,
    metrics: Sequence[str] | None = _UNSET,
    recorders: Sequence[Recorder] = (),
    replications: int | None = None,
    backend: str = "auto",
    checkpoints: Sequence[int] | None = None,
) -> SimulationResult:
    """Step ``policy`` against ``env`` for ``T`` rounds, all runs at once.

    Parameters
    ----------
    env, policy
        Objects following :class:`~causalbandits_lib.core.protocols.Environment` and
        :class:`~causalbandits_lib.core.protocols.Policy`. They are reset here: the environment
        draws from the streams ``env/...``, the policy from ``policy/...``.
    T : int
        Horizon (number of rounds).
    seed : int
        Root seed of every random stream.
    n_runs, runs
        Either the number of runs (indices ``0..n_runs-1``) or explicit run indices.
    metrics : sequence of str or None
        Names of per-round values to keep (a :class:`~causalbandits_lib.core.recorders.PerRound`
        recorder): looked up in the environment's feedback, then in the policy's optional
        ``diagnostics()``. ``None`` keeps all of them; ``()`` keeps none. Not given: regret and
        reward (:data:`DEFAULT_METRICS`), per round while they fit in :data:`PER_ROUND_BUDGET`
        bytes, else only their running sums at ``checkpoints`` (``result.sums``; ``final()`` and
        ``curve()`` read either), so memory does not grow with ``T`` by default. Per-round values
        asked for explicitly that cannot fit in the available memory are refused before anything
        is allocated (``MemoryError`` naming the sizes).
    recorders : sequence of Recorder
        Further recorders; their results are in ``result.recorded[recorder.name]``.
    replications : int, optional
        Lay the runs out as configurations x replications (see
        :class:`~causalbandits_lib.core.streams.RunStreams`).
    backend : {"auto", "numpy", "compiled"}
        See :data:`BACKENDS`; ``result.info["backend"]`` says which ran.
    checkpoints : sequence of int, optional
        1-based rounds of the default running sums (:func:`checkpoint_grid` when not given).

    Returns
    -------
    SimulationResult
        ``metrics[name]`` has shape ``(n_runs, T, ...)``.
    """
    if int(T) < 1:
        raise ValueError(f"T={T} must be at least 1")
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} is not one of {BACKENDS}")
    T = int(T)
    run_idx = run_indices(n_runs, runs)
    names = [r.name for r in recorders]
    if len(set(names)) != len(names) or "metrics" in names:
        raise ValueError(f"recorder names must be distinct and not 'metrics', got {names}")
    sums = None
    if metrics is _UNSET:
        metrics = DEFAULT_METRICS
        if 8 * len(DEFAULT_METRICS) * len(run_idx) * T > PER_ROUND_BUDGET:
            metrics, sums = (), _default_sums(T, checkpoints)
    elif metrics:
        _check_memory(metrics, len(run_idx), T)
    per_round = PerRound(metrics) if metrics is None or len(metrics) else None
    every = ([per_round] if per_round is not None else []) + ([sums] if sums is not None else []) + list(recorders)
    streams = RunStreams(seed, run_idx, replications=replications)
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    for r in every:
        r.start(T, run_idx)
    kernel = _kernel(env, policy, every, backend)
    started = time.perf_counter()
    if kernel is not None:
        _run_blocks(kernel, every, T, len(run_idx), env, policy)
    else:
        before = [r for r in every if _overrides(r, "before_decision")]
        after = [r for r in every if _overrides(r, "after_round")]
        for t in range(T):
            context = env.observe(t)
            for r in before:
                r.before_decision(t, context, policy)
            actions = policy.select(t, context)
            feedback = env.pull(t, actions)
            policy.update(t, context, actions, feedback)
            for r in after:
                r.after_round(t, context, actions, feedback, policy)
    seconds = time.perf_counter() - started
    name = getattr(policy, "name", None)
    note_work(
        type(env).__name__,
        type(policy).__name__ + (f" ({name})" if isinstance(name, str) and name != type(policy).__name__ else ""),
        "numpy" if kernel is None else "compiled",
        len(run_idx),
        T,
        seconds,
    )
    return SimulationResult(
        metrics=per_round.result() if per_round is not None else {},
        runs=run_idx,
        seed=int(seed),
        T=T,
        seconds=seconds,
        info={"backend": "numpy" if kernel is None else "compiled"},
        recorded={r.name: r.result() for r in recorders},
        sums=sums.result() if sums is not None else None,
    )


def simulate_loop(
    make_env,
    make_policy,
    T: int,
    seed: int,
    n_runs: int,
    metrics: Sequence[str] | None = DEFAULT_METRICS,
    replications: int | None = None,
    backend: str = "auto",
) -> SimulationResult:
    """Reference implementation: a plain loop that simulates one run at a time.

    ``make_env`` and ``make_policy`` are factories (fresh objects per run). The result is identical,
    run for run, to ``simulate(make_env(), make_policy(), T, seed, n_runs=n_runs)``; the
    conformance test and the benchmark assert this.
    """
    kw = dict(metrics=metrics, replications=replications, backend=backend)
    runs = (simulate(make_env(), make_policy(), T, seed, runs=[i], **kw) for i in range(n_runs))
    return SimulationResult.concatenate(runs)
