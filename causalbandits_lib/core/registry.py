"""What a chapter registers, and the conformance checks every registered entry must pass.

Each chapter's ``registry.py`` exports ``ENTRIES``: a short list of :class:`BanditEntry` (an
environment factory and a policy factory for :func:`~causalbandits_lib.core.runner.simulate`) or
:class:`IdentifierEntry` (a factory of a fixed-budget
:class:`~causalbandits_lib.core.protocols.Identifier`). One parametrised test
(``tests/test_contracts.py``) runs :func:`conformance` on every entry of every chapter, and
``make bench`` times the entries that name a benchmark horizon, so a new algorithm is checked and
benchmarked by adding one line.

The checks, on identical seeds:

1. **protocols and shapes**: the objects satisfy the runtime-checkable protocols; every per-round
   value (feedback and diagnostics) has the leading runs axis; actions are integers with the runs
   axis;
2. **vectorised equals the loop**: all runs at once give, bit for bit, what one run at a time gives
   (:func:`~causalbandits_lib.core.runner.simulate_loop`);
3. **a run does not depend on its neighbours**: a subset of the runs, in another order, gives
   exactly those runs' rows of the full simulation;
4. **a compiled kernel equals its numpy reference** (when the policy has one for the environment):
   identical integer values (decisions, counts) and floating-point values within 1e-9 relative; an
   identifier with a compiled path (``with_backend("compiled")``) must give the numpy path's result
   bit for bit;
5. **a kernel leaves the policy as the numpy path does** at any round, not only at the end of a
   block: a recorder that probes a few rounds (:func:`probed_rounds`, so the kernel's blocks end there)
   asks a copy of the policy for its decision; the kernel's run and the numpy run must agree on
   those decisions too (the state a probing recorder, like cclb's, reads).

Checks 1-3 run on the readable numpy path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .protocols import Environment, Identifier, Policy
from .recorders import RecorderBase
from .runner import SimulationResult, simulate, simulate_loop
from .streams import RunStreams

__all__ = ["BanditEntry", "IdentifierEntry", "ConformanceError", "conformance", "same_arrays", "close_arrays"]


class ConformanceError(AssertionError):
    """A registered entry breaks the protocol contract (the message names the entry and the check)."""


@dataclass(frozen=True)
class BanditEntry:
    """An (environment, policy) pair of a chapter.

    Attributes
    ----------
    name : str
        ``<chapter>.<what>``, unique in the book.
    make_env, make_policy : callable
        Factories of fresh objects (called once per simulation).
    T : int
        Horizon of the conformance checks (short: they simulate every run alone too).
    n_runs : int
        Runs of the conformance checks.
    metrics : tuple of str or None
        Per-round values compared (``None``: all the environment and the policy produce).
    replications : int, optional
        The configurations x replications layout, when the policy steps several configurations.
    bench_T : int, optional
        Horizon of ``make bench`` (``None``: not benchmarked).
    bench_runs : tuple of int
        Numbers of runs timed by ``make bench``.
    target_ratio : float, optional
        Minimum speed-up (all runs at once against the loop) required at the largest ``bench_runs``.
    """

    name: str
    make_env: Callable[[], Environment]
    make_policy: Callable[[], Policy]
    T: int = 120
    n_runs: int = 4
    metrics: Sequence[str] | None = ("regret", "reward")
    replications: int | None = None
    bench_T: int | None = None
    bench_runs: tuple[int, ...] = (1, 10, 100)
    target_ratio: float | None = None
    seed: int = 11

    def simulate(
        self, T: int, n_runs: int | None = None, runs: Sequence[int] | None = None, recorders=(), backend: str = "auto"
    ) -> SimulationResult:
        return simulate(
            self.make_env(),
            self.make_policy(),
            T,
            self.seed,
            n_runs=n_runs,
            runs=runs,
            metrics=self.metrics,
            recorders=recorders,
            replications=self.replications,
            backend=backend,
        )

    def simulate_loop(self, T: int, n_runs: int, backend: str = "auto") -> SimulationResult:
        return simulate_loop(
            self.make_env,
            self.make_policy,
            T,
            self.seed,
            n_runs,
            metrics=self.metrics,
            replications=self.replications,
            backend=backend,
        )

    def has_kernel(self) -> bool:
        """Whether the policy offers a compiled kernel for the environment."""
        env, policy = self.make_env(), self.make_policy()
        if not hasattr(policy, "compiled"):
            return False
        streams = RunStreams(self.seed, [0], replications=self.replications)
        env.reset(streams.child("env/"))
        policy.reset(streams.child("policy/"))
        return policy.compiled(env) is not None


@dataclass(frozen=True)
class IdentifierEntry:
    """A fixed-budget identification algorithm of a chapter (see
    :class:`~causalbandits_lib.core.protocols.Identifier`).

    ``make_identifier(budget)`` builds a fresh identifier with that budget of pulls.

    An identifier may offer a compiled path beside its readable numpy one: it then has a method
    ``with_backend(backend)`` that returns the same identifier on ``"numpy"`` or ``"compiled"``
    (sharing whatever it caches), or ``None`` where that path is not available. An identifier
    without the method has the numpy path only. ``identify`` and ``identify_loop`` run the numpy
    path unless told otherwise (as the benchmark's identifier rows say they do).
    """

    name: str
    make_identifier: Callable[[int], Identifier]
    budget: int = 600
    n_runs: int = 4
    bench_T: int | None = None
    bench_runs: tuple[int, ...] = (1, 10, 100)
    target_ratio: float | None = None
    seed: int = 3

    def make(self, budget: int, backend: str = "numpy") -> Identifier:
        """A fresh identifier on ``backend`` (``"numpy"`` or ``"compiled"``).

        Raises
        ------
        ValueError
            If ``backend`` is neither, or the identifier has no such path here.
        """
        if backend not in ("numpy", "compiled"):
            raise ValueError(f"backend={backend!r}; allowed are 'numpy' and 'compiled'")
        ident = self.make_identifier(budget)
        switch = getattr(ident, "with_backend", None)
        if switch is None:
            if backend == "compiled":
                raise ValueError(f"{self.name}: {type(ident).__name__} has no compiled path")
            return ident
        out = switch(backend)
        if out is None:
            raise ValueError(f"{self.name}: the {backend} path of {type(ident).__name__} is not available here")
        return out

    def has_kernel(self) -> bool:
        """Whether the identifier offers a compiled path here."""
        switch = getattr(self.make_identifier(self.budget), "with_backend", None)
        return switch is not None and switch("compiled") is not None

    def identify(self, budget: int, runs: Sequence[int], backend: str = "numpy") -> Any:
        return self.make(budget, backend).identify(self.seed, runs)

    def identify_loop(self, budget: int, n_runs: int, backend: str = "numpy") -> Any:
        parts = [self.identify(budget, [i], backend) for i in range(n_runs)]
        return type(parts[0]).concatenate(parts)


#: Relative tolerance between a compiled kernel's floating-point values and the numpy reference.
KERNEL_RTOL = 1e-9


def close_arrays(reference: np.ndarray, compiled: np.ndarray, rtol: float = KERNEL_RTOL) -> bool:
    """Integer and boolean values identical; floating-point values within ``rtol`` relative
    (``|a - b| <= rtol * |a|``, NaN equal to NaN)."""
    a, b = np.asarray(reference), np.asarray(compiled)
    if a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    return bool(np.allclose(b, a, rtol=rtol, atol=0.0, equal_nan=True))


def same_arrays(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-for-bit equality of two arrays (NaN equal to NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


class _Decides(RecorderBase):
    """Before the decision of a few rounds, the decision a copy of the policy would take."""

    name = "decides"
    block_inputs: tuple[str, ...] = ()

    def __init__(self, rounds: Sequence[int]):
        self.probe_rounds = tuple(sorted(set(int(r) for r in rounds)))

    def start(self, T: int, runs: np.ndarray) -> None:
        super().start(T, runs)
        self.decisions: list[np.ndarray] = []

    def before_decision(self, t, context, policy) -> None:
        import copy

        if t in self.probe_rounds:
            self.decisions.append(np.asarray(copy.deepcopy(policy).select(t, copy.deepcopy(context))).copy())

    def after_block(self, t0, t1, values) -> None:
        pass

    def result(self) -> list[np.ndarray]:
        return self.decisions


def probed_rounds(T: int) -> tuple[int, ...]:
    """The rounds check 5 probes: the second, one in the middle (not a block boundary), the last."""
    return tuple(sorted({1, T // 2 + 1, T - 1} & set(range(T))))


class _Shapes(RecorderBase):
    """Checks the feedback contract in every round of a short simulation."""

    name = "shapes"

    def after_round(self, t, context, actions, feedback, policy) -> None:
        n = len(self.runs)
        actions = np.asarray(actions)
        if actions.shape[:1] != (n,) or actions.dtype.kind not in "iu":
            raise ConformanceError(
                f"round {t}: actions must be integers with a leading runs axis of {n}, got {actions.dtype} "
                f"{actions.shape}"
            )
        if "reward" not in feedback:
            raise ConformanceError(f"round {t}: the feedback has no 'reward' (keys {sorted(feedback)})")
        values = dict(feedback)
        diag = getattr(policy, "diagnostics", None)
        if diag is not None:
            values.update(diag())
        for k, v in values.items():
            if np.asarray(v).shape[:1] != (n,):
                raise ConformanceError(
                    f"round {t}: per-round value {k!r} has shape {np.shape(v)}, not a leading runs axis of {n}"
                )


def _bandit(entry: BanditEntry) -> list[str]:
    env, policy = entry.make_env(), entry.make_policy()
    if not isinstance(env, Environment):
        raise ConformanceError(f"{entry.name}: {type(env).__name__} does not follow the Environment protocol")
    if not isinstance(policy, Policy):
        raise ConformanceError(f"{entry.name}: {type(policy).__name__} does not follow the Policy protocol")
    n, T = entry.n_runs, entry.T
    try:
        full = entry.simulate(T, n_runs=n, recorders=[_Shapes()], backend="numpy")
    except (KeyError, ValueError) as exc:  # the loop's own shape and name checks
        raise ConformanceError(f"{entry.name}: {exc}") from exc
    if not full.metrics:
        raise ConformanceError(f"{entry.name}: the simulation kept no per-round value")
    for k, v in full.metrics.items():
        if v.shape[:2] != (n, T):
            raise ConformanceError(f"{entry.name}: metric {k!r} has shape {v.shape}, expected ({n}, {T}, ...)")
    loop = entry.simulate_loop(T, n, backend="numpy")
    for k in full.metrics:
        if not same_arrays(full[k], loop[k]):
            raise ConformanceError(f"{entry.name}: all runs at once and one run at a time differ in {k!r}")
    subset = [n - 1, 0] if n > 1 else [0]
    part = entry.simulate(T, runs=subset, backend="numpy")
    for k in full.metrics:
        if not same_arrays(part[k], full[k][subset]):
            raise ConformanceError(f"{entry.name}: runs {subset} simulated without their neighbours differ in {k!r}")
    if entry.has_kernel():
        fast = entry.simulate(T, n_runs=n, backend="compiled")
        for k in full.metrics:
            if k not in fast.metrics or not close_arrays(full[k], fast[k]):
                raise ConformanceError(f"{entry.name}: the compiled kernel and the numpy reference differ in {k!r}")
        rounds = probed_rounds(T)
        slow = entry.simulate(T, n_runs=n, recorders=[_Decides(rounds)], backend="numpy")
        probed = entry.simulate(T, n_runs=n, recorders=[_Decides(rounds)], backend="compiled")
        for k in full.metrics:
            if not close_arrays(slow[k], probed[k]):
                raise ConformanceError(
                    f"{entry.name}: with blocks ending at rounds {rounds} the kernel differs in {k!r}"
                )
        for t, a, b in zip(rounds, slow.recorded["decides"], probed.recorded["decides"]):
            if not close_arrays(a, b):
                raise ConformanceError(
                    f"{entry.name}: after the kernel's rounds 0..{t - 1} the policy decides round {t} otherwise than "
                    "after the numpy path's (the kernel leaves its state out of sync)"
                )
    return sorted(full.metrics)


def _identifier(entry: IdentifierEntry) -> list[str]:
    ident = entry.make(entry.budget, "numpy")
    if not isinstance(ident, Identifier):
        raise ConformanceError(f"{entry.name}: {type(ident).__name__} does not follow the Identifier protocol")
    n = entry.n_runs
    full = ident.identify(entry.seed, range(n))
    loop = entry.identify_loop(entry.budget, n)
    if not full.equals(loop):
        raise ConformanceError(f"{entry.name}: all runs at once and one run at a time differ")
    subset = [n - 1, 0] if n > 1 else [0]
    part = entry.identify(entry.budget, subset)
    if not part.equals(full.select_runs(subset)):
        raise ConformanceError(f"{entry.name}: runs {subset} identified without their neighbours differ")
    if not entry.has_kernel():
        return ["identified"]
    # an identifier's compiled path must give its numpy path's results bit for bit
    fast = entry.identify(entry.budget, range(n), backend="compiled")
    if not fast.equals(full):
        raise ConformanceError(f"{entry.name}: the compiled path and the numpy reference differ")
    part = entry.identify(entry.budget, subset, backend="compiled")
    if not part.equals(full.select_runs(subset)):
        raise ConformanceError(
            f"{entry.name}: runs {subset} identified on the compiled path without their neighbours differ"
        )
    return ["identified", "compiled"]


def conformance(entry: BanditEntry | IdentifierEntry) -> list[str]:
    """Run the three checks of the module docstring on ``entry``; returns the names of the values
    compared.

    Raises
    ------
    ConformanceError
        Naming the entry and the check that failed.
    """
    if isinstance(entry, BanditEntry):
        return _bandit(entry)
    if isinstance(entry, IdentifierEntry):
        return _identifier(entry)
    raise TypeError(f"not a registry entry: {entry!r}")
