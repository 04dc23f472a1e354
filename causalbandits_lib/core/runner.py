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
from .recorders import PerRound
from .streams import RunStreams, run_indices

__all__ = ["BACKENDS", "BLOCK", "SimulationResult", "simulate", "simulate_loop"]

#: ``auto``: the compiled kernel when there is one (and the recorders allow it), else numpy;
#: ``numpy``: always the readable per-round path; ``compiled``: the kernel, or an error.
BACKENDS = ("auto", "numpy", "compiled")
#: Rounds per kernel call (the random streams' chunk size, so blocks are views of their buffers).
BLOCK = 1024


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

    def __getitem__(self, name: str) -> np.ndarray:
        return self.metrics[name]

    def cumulative(self, name: str = "regret") -> np.ndarray:
        """Cumulative sum over rounds, shape ``(n_runs, T)``."""
        return np.cumsum(self.metrics[name], axis=1)

    def final(self, name: str = "regret") -> np.ndarray:
        """Cumulative total at the horizon, one value per run."""
        return self.metrics[name].sum(axis=1)

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
            if _overrides(r, "before_decision"):
                why = f"recorder {r.name!r} probes before each decision"
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


def _run_blocks(kernel, recorders, T: int, n_runs: int) -> None:
    needed = sorted({name for r in recorders for name in r.block_inputs})
    for t0 in range(0, T, BLOCK):
        t1 = min(T, t0 + BLOCK)
        out = {}
        for name in needed:
            dtype, shape = kernel.outputs[name]
            out[name] = np.empty((n_runs, t1 - t0) + tuple(shape), dtype=dtype)
        kernel.run(t0, t1, out)
        for r in recorders:
            r.after_block(t0, t1, out)


def simulate(
    env: Environment,
    policy: Policy,
    T: int,
    seed: int,
    n_runs: int | None = None,
    runs: Sequence[int] | None = None,
    metrics: Sequence[str] | None = ("regret", "reward"),
    recorders: Sequence[Recorder] = (),
    replications: int | None = None,
    backend: str = "auto",
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
        ``diagnostics()``. ``None`` keeps all of them; ``()`` keeps none.
    recorders : sequence of Recorder
        Further recorders; their results are in ``result.recorded[recorder.name]``.
    replications : int, optional
        Lay the runs out as configurations x replications (see
        :class:`~causalbandits_lib.core.streams.RunStreams`).
    backend : {"auto", "numpy", "compiled"}
        See :data:`BACKENDS`; ``result.info["backend"]`` says which ran.

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
    per_round = PerRound(metrics) if metrics is None or len(metrics) else None
    every = ([per_round] if per_round is not None else []) + list(recorders)
    streams = RunStreams(seed, run_idx, replications=replications)
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    for r in every:
        r.start(T, run_idx)
    kernel = _kernel(env, policy, every, backend)
    started = time.perf_counter()
    if kernel is not None:
        _run_blocks(kernel, every, T, len(run_idx))
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
    return SimulationResult(
        metrics=per_round.result() if per_round is not None else {},
        runs=run_idx,
        seed=int(seed),
        T=T,
        seconds=seconds,
        info={"backend": "numpy" if kernel is None else "compiled"},
        recorded={r.name: r.result() for r in recorders},
    )


def simulate_loop(
    make_env,
    make_policy,
    T: int,
    seed: int,
    n_runs: int,
    metrics: Sequence[str] | None = ("regret", "reward"),
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
