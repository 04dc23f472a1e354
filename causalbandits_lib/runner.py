"""Simulate a policy against an environment for many independent runs at once.

State arrays of environments and policies carry a leading runs axis, so one call of ``select`` or
``pull`` steps every replication. Randomness is organised so that **run ``i``'s numbers depend only
on the root seed, on ``i`` and on the name of the stream**, never on how many runs are simulated
beside it, nor on the chunk size used to draw them:

- run ``i``'s stream ``name`` is ``Generator(PCG64(SeedSequence(seed, spawn_key=(i, key(name)))))``,
  where ``key`` is a stable 32-bit hash of the name;
- per-round noise of a fixed shape is drawn from each run's generator in chunks of rounds and
  stacked, so simulating runs ``[0..99]`` together gives, run for run, exactly what 100 separate
  one-run simulations give (:func:`simulate` with ``runs=[i]``). The benchmark and the tests check
  this equality bit for bit.

Distributions whose parameters change every round (a Beta posterior, say) are drawn by inversion
from per-round uniforms, e.g. ``scipy.special.betaincinv(a, b, u)``, which keeps them vectorised and
seeded the same way.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol, Sequence

import numpy as np

__all__ = [
    "stream_key",
    "run_indices",
    "run_seed_sequence",
    "RunStreams",
    "RoundNoise",
    "Environment",
    "Policy",
    "SimulationResult",
    "simulate",
    "simulate_loop",
]


def stream_key(name: str) -> int:
    """Stable 32-bit integer for a stream name (SHA-256 based, identical on every platform)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little")


def run_seed_sequence(seed: int, run: int, name: str) -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` of stream ``name`` of run ``run``."""
    if seed < 0 or run < 0:
        raise ValueError(f"seed and run must be non-negative, got seed={seed}, run={run}")
    return np.random.SeedSequence(seed, spawn_key=(run, stream_key(name)))


class RoundNoise:
    """Per-round random numbers of a fixed shape for every run, drawn in chunks.

    ``at(t)`` returns an array of shape ``(n_runs, *shape)`` for round ``t``. Rounds must be
    requested in increasing order (each at most once is not required; a round may be re-read).

    Parameters
    ----------
    generators : list of numpy.random.Generator
        One generator per run (already specific to this stream).
    shape : tuple of int
        Shape of one round's draw for one run.
    kind : {"uniform", "normal", "exponential"}
        Distribution: U[0, 1), N(0, 1) or Exp(1).
    chunk : int
        Rounds drawn per refill. Results do not depend on it.
    """

    _KINDS = ("uniform", "normal", "exponential")

    def __init__(self, generators: Sequence[np.random.Generator], shape: tuple[int, ...], kind: str, chunk: int = 1024):
        if kind not in self._KINDS:
            raise ValueError(f"kind={kind!r} is not allowed; use one of {self._KINDS}")
        if chunk < 1:
            raise ValueError(f"chunk={chunk} must be a positive integer")
        self._gens = list(generators)
        self.shape = tuple(int(s) for s in shape)
        self.kind = kind
        self.chunk = int(chunk)
        self._start = 0
        self._buf: np.ndarray | None = None

    def _draw(self, gen: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        if self.kind == "uniform":
            return gen.random(size)
        if self.kind == "normal":
            return gen.standard_normal(size)
        return gen.standard_exponential(size)

    def at(self, t: int) -> np.ndarray:
        """Noise of round ``t`` (0-based), shape ``(n_runs, *shape)``."""
        while self._buf is None or t >= self._start + self.chunk:
            # Chunks are drawn in order (skipped ones too), so round t always gets the same numbers.
            if self._buf is not None:
                self._start += self.chunk
            self._buf = np.stack([self._draw(g, (self.chunk, *self.shape)) for g in self._gens])
        if t < self._start:
            raise ValueError(f"round {t} was requested after round {self._start}; rounds must not go back")
        return self._buf[:, t - self._start]


class RunStreams:
    """Named random streams for a set of runs.

    Parameters
    ----------
    seed : int
        The root seed.
    runs : sequence of int
        Global indices of the runs simulated together (``range(n_runs)``, or ``[i]`` for one run).
    prefix : str
        Namespace prepended to every stream name (the runner gives the environment ``"env/"`` and
        the policy ``"policy/"``, so their draws never collide).
    """

    def __init__(self, seed: int, runs: Sequence[int], prefix: str = ""):
        self.seed = int(seed)
        self.runs = np.asarray(list(runs), dtype=np.int64)
        if self.runs.ndim != 1 or len(self.runs) == 0:
            raise ValueError("runs must be a non-empty sequence of run indices")
        if len(np.unique(self.runs)) != len(self.runs):
            raise ValueError("runs must not repeat a run index")
        self.prefix = prefix

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    def child(self, prefix: str) -> "RunStreams":
        """The same runs under a nested namespace."""
        return RunStreams(self.seed, self.runs, self.prefix + prefix)

    def generators(self, name: str) -> list[np.random.Generator]:
        """One independent :class:`numpy.random.Generator` per run for stream ``name``."""
        full = self.prefix + name
        return [np.random.Generator(np.random.PCG64(run_seed_sequence(self.seed, int(r), full))) for r in self.runs]

    def per_round(self, name: str, shape: tuple[int, ...] = (), kind: str = "uniform", chunk: int = 1024) -> RoundNoise:
        """Per-round noise of ``shape`` for every run (see :class:`RoundNoise`)."""
        return RoundNoise(self.generators(name), shape, kind, chunk)

    def once(self, name: str, shape: tuple[int, ...] = (), kind: str = "uniform") -> np.ndarray:
        """A single draw of ``shape`` per run, stacked to ``(n_runs, *shape)``."""
        return RoundNoise(self.generators(name), shape, kind, chunk=1).at(0)


class Environment(Protocol):
    """What :func:`simulate` needs from an environment (all arrays have a leading runs axis)."""

    def reset(self, streams: RunStreams) -> None:
        """Start every run afresh, drawing randomness only from ``streams``."""

    def observe(self, t: int) -> Any:
        """The context of round ``t`` for every run (``None`` for a context-free bandit)."""

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Play ``actions`` (one per run). Returns feedback, with at least ``"reward"`` of shape
        ``(n_runs,)``, and per-round metrics such as ``"regret"`` (the exact expected regret of the
        action for that round's context, computed from the model, not from the sample)."""


class Policy(Protocol):
    """What :func:`simulate` needs from a policy."""

    def reset(self, streams: RunStreams) -> None:
        """Clear all statistics for ``streams.n_runs`` runs."""

    def select(self, t: int, context: Any) -> np.ndarray:
        """One action per run."""

    def update(self, t: int, context: Any, actions: np.ndarray, feedback: dict[str, np.ndarray]) -> None:
        """Learn from the feedback of round ``t``."""


@dataclass
class SimulationResult:
    """Per-round metrics of a simulation, each of shape ``(n_runs, T)``."""

    metrics: dict[str, np.ndarray]
    runs: np.ndarray
    seed: int
    T: int
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.metrics[name]

    def cumulative(self, name: str = "regret") -> np.ndarray:
        """Cumulative sum over rounds, shape ``(n_runs, T)``."""
        return np.cumsum(self.metrics[name], axis=1)

    def final(self, name: str = "regret") -> np.ndarray:
        """Cumulative total at the horizon, one value per run."""
        return self.metrics[name].sum(axis=1)

    @staticmethod
    def concatenate(results: Iterable["SimulationResult"]) -> "SimulationResult":
        """Stack results of disjoint runs along the runs axis (used by :func:`simulate_loop`)."""
        results = list(results)
        names = list(results[0].metrics)
        return SimulationResult(
            metrics={k: np.concatenate([r.metrics[k] for r in results]) for k in names},
            runs=np.concatenate([r.runs for r in results]),
            seed=results[0].seed,
            T=results[0].T,
            seconds=sum(r.seconds for r in results),
        )


def run_indices(n_runs: int | None, runs: Sequence[int] | None) -> np.ndarray:
    """The global run indices named by ``n_runs`` (``0..n_runs-1``) or ``runs``, exactly one given."""
    if (n_runs is None) == (runs is None):
        raise ValueError("give exactly one of n_runs (runs 0..n_runs-1) or runs (explicit indices)")
    if runs is None:
        if int(n_runs) < 1:
            raise ValueError(f"n_runs={n_runs} must be at least 1")
        return np.arange(int(n_runs))
    return np.asarray(list(runs), dtype=np.int64)


def simulate(
    env: Environment,
    policy: Policy,
    T: int,
    seed: int,
    n_runs: int | None = None,
    runs: Sequence[int] | None = None,
    metrics: Sequence[str] | None = ("regret", "reward"),
) -> SimulationResult:
    """Step ``policy`` against ``env`` for ``T`` rounds, all runs at once.

    Parameters
    ----------
    env, policy
        Objects following :class:`Environment` and :class:`Policy`. They are reset here.
    T : int
        Horizon (number of rounds).
    seed : int
        Root seed of every random stream.
    n_runs, runs
        Either the number of runs (indices ``0..n_runs-1``) or explicit run indices.
    metrics : sequence of str or None
        Names of per-round values to keep. They are looked up in the environment's feedback and
        then in the policy's optional ``diagnostics()`` dict. ``None`` keeps all of them.

    Returns
    -------
    SimulationResult
        ``metrics[name]`` has shape ``(n_runs, T)``.
    """
    if int(T) < 1:
        raise ValueError(f"T={T} must be at least 1")
    T = int(T)
    run_idx = run_indices(n_runs, runs)
    streams = RunStreams(seed, run_idx)
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    store: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    diagnostics = getattr(policy, "diagnostics", None)
    for t in range(T):
        context = env.observe(t)
        actions = policy.select(t, context)
        feedback = env.pull(t, actions)
        policy.update(t, context, actions, feedback)
        values = dict(feedback)
        if diagnostics is not None:
            values.update(diagnostics())
        if t == 0:
            wanted = list(values) if metrics is None else list(metrics)
            missing = [m for m in wanted if m not in values]
            if missing:
                raise KeyError(f"metric(s) {missing} are not produced; available per-round values are {sorted(values)}")
            for name in wanted:
                first = np.asarray(values[name])
                if first.shape[:1] != (len(run_idx),):
                    raise ValueError(f"per-round value {name!r} has shape {first.shape}; expected a leading runs axis of {len(run_idx)}")
                store[name] = np.empty((len(run_idx), T) + first.shape[1:], dtype=first.dtype)
        for name in store:
            store[name][:, t] = values[name]
    return SimulationResult(metrics=store, runs=run_idx, seed=int(seed), T=T, seconds=time.perf_counter() - started)


def simulate_loop(make_env, make_policy, T: int, seed: int, n_runs: int, metrics=("regret", "reward")) -> SimulationResult:
    """Reference implementation: a plain loop that simulates one run at a time.

    ``make_env`` and ``make_policy`` are factories (fresh objects per run). The result is identical,
    run for run, to ``simulate(make_env(), make_policy(), T, seed, n_runs=n_runs)``; the benchmark
    and the tests assert this.
    """
    return SimulationResult.concatenate(
        simulate(make_env(), make_policy(), T, seed, runs=[i], metrics=metrics) for i in range(n_runs)
    )
