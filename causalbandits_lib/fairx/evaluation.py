"""Measuring fairness and reward regret: a long-horizon fast path, the protocol path it must agree
with, log-log slopes and the validation-split grid search.

Two ways to run a FairX algorithm, with identical numbers:

- the protocol path: :func:`causalbandits_lib.core.runner.simulate` with
  ``metrics=("policy", "arm_means")`` stores the deployed policy and the exact arm means of every
  round (arrays of shape ``(R, T, G, K)``), and :func:`regrets_from_simulation` turns them into
  per-round regrets. Memory grows with ``T·K``, so it serves short horizons and the tests;
- :func:`run_fairness`, the fast path for long horizons (2,000,000 rounds in Figure 1): the same
  environment and policy objects, the same random streams and the same per-round arithmetic
  (:class:`RegretMeter`), but only running sums are kept and copied at checkpoints. A test checks
  that its checkpoints equal the cumulative sums of the protocol path bit for bit.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core.curves import curve_points, loglog_slope
from ..core.runner import SimulationResult
from ..core.streams import RunStreams, run_indices
from .merit import fairness_regret_per_round, optimal_fair_policy

__all__ = [
    "RegretMeter",
    "FairnessRun",
    "checkpoints_for",
    "run_fairness",
    "regrets_from_simulation",
    "curve_summary",
    "second_half_slope",
    "GridResult",
    "grid_search",
]


class RegretMeter:
    """Per-round fairness and reward regret of a deployed policy against the optimal fair policy.

    ``fr_t = ‖π_t − π*_t‖₁`` (Eq. 9) and ``rr_t = π*_t·m_t − π_t·m_t`` (summand of Eq. 1/5),
    where ``m_t`` are the exact arm means of the round and ``π*_t = f(m_t)/Σ f(m_t)``
    (Theorem 3.1.1). The optimal policy is recomputed only when the means array changes (the
    multi-armed environments return the same array every round).

    Parameters
    ----------
    merit : merit function with one ``c`` per configuration (or one for all)
    """

    def __init__(self, merit):
        self.merit = merit
        self._means = None

    def step(self, policy: np.ndarray, arm_means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``policy`` (R, G, K), ``arm_means`` (R, K) → ``fr``, ``rr`` each (R, G)."""
        means = arm_means[:, None, :]
        if arm_means is not self._means:
            self._means = arm_means
            self._optimal = optimal_fair_policy(self.merit, means)
            self._optimal_value = (self._optimal * means).sum(axis=-1)
        fr = fairness_regret_per_round(policy, self._optimal)
        rr = self._optimal_value - (policy * means).sum(axis=-1)
        return fr, rr


@dataclass
class FairnessRun:
    """Cumulative regrets at checkpoints, one row per run and configuration.

    Attributes
    ----------
    t : ndarray, shape (P,)
        Checkpoint rounds (1-based).
    fairness, reward : ndarray, shape (R, G, P)
        Cumulative fairness regret ``FR_t`` and reward regret ``RR_t`` at those rounds.
    exposure : dict of int to ndarray (R, G, K)
        Average exposure ``(1/t) Σ_{s<=t} π_s`` at the requested rounds.
    rounds : ndarray (R, G, P) or None
        For replay evaluation: accepted events (the rounds that count) up to each checkpoint; the
        checkpoints ``t`` then count logged events.
    """

    t: np.ndarray
    fairness: np.ndarray
    reward: np.ndarray
    exposure: dict[int, np.ndarray]
    runs: np.ndarray
    seed: int
    T: int
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    rounds: np.ndarray | None = None

    def final(self, which: str = "fairness") -> np.ndarray:
        """Regret at the horizon, shape (R, G)."""
        return getattr(self, which)[..., -1]

    def config(self, g: int) -> "FairnessRun":
        """The runs of configuration ``g`` only (G = 1)."""
        sl = slice(g, g + 1)
        rounds = None if self.rounds is None else self.rounds[:, sl]
        return FairnessRun(
            self.t,
            self.fairness[:, sl],
            self.reward[:, sl],
            {k: v[:, sl] for k, v in self.exposure.items()},
            self.runs,
            self.seed,
            self.T,
            self.seconds,
            dict(self.info),
            rounds,
        )

    def slope(self, g: int = 0, which: str = "fairness") -> float:
        """Log-log slope of the mean (over runs) cumulative regret over the second half."""
        return second_half_slope(self.t, getattr(self, which)[:, g].mean(axis=0))


def checkpoints_for(T: int, n_points: int = 200, second_half: int = 25) -> np.ndarray:
    """Log-spaced rounds (``curve_points``) plus ``second_half`` evenly spaced rounds in
    ``[T/2, T]`` (where the slopes are fitted)."""
    pts = np.union1d(curve_points(T, n_points), np.linspace(T / 2, T, second_half).round().astype(np.int64))
    return pts[(pts >= 1) & (pts <= T)]


def run_fairness(
    env,
    policy,
    merit,
    T: int,
    seed: int,
    n_runs: int | None = None,
    runs: Sequence[int] | None = None,
    checkpoints: Sequence[int] | None = None,
    exposure_at: Sequence[int] = (),
) -> FairnessRun:
    """Step ``policy`` against ``env`` for ``T`` rounds and keep only running regret sums.

    The streams, the order of calls and the arithmetic are those of
    :func:`causalbandits_lib.core.runner.simulate` followed by :func:`regrets_from_simulation`, so the
    numbers equal theirs bit for bit (tested); memory does not grow with ``T``.

    Parameters
    ----------
    env, policy
        Protocol objects (reset here). The environment's feedback must contain ``arm_means``
        (R, K); the policy must expose ``policy`` (R, G, K) after ``select``.
    merit : merit function defining π* (one ``c`` per configuration).
    T, seed, n_runs, runs
        As in :func:`~causalbandits_lib.core.runner.simulate`.
    checkpoints : sequence of int, optional
        1-based rounds at which cumulative regrets are kept (default :func:`checkpoints_for`).
    exposure_at : sequence of int
        Rounds at which the average exposure per arm is kept (Figure 1).
    """
    T = int(T)
    if T < 1:
        raise ValueError(f"T={T} must be at least 1")
    run_idx = run_indices(n_runs, runs)
    pts = checkpoints_for(T) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    if pts.size == 0 or pts[0] < 1 or pts[-1] > T:
        raise ValueError(f"checkpoints must lie in 1..T={T}")
    expo_pts = sorted({int(e) for e in exposure_at})
    if expo_pts and (expo_pts[0] < 1 or expo_pts[-1] > T):
        raise ValueError(f"exposure_at={list(exposure_at)} must lie in 1..T={T}")
    streams = RunStreams(seed, run_idx)
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    meter = RegretMeter(merit)
    fr_sum = rr_sum = expo_sum = n_sum = None
    fr_out = rr_out = n_out = None
    exposure: dict[int, np.ndarray] = {}
    marks = set(int(p) for p in pts)
    expo_marks = set(expo_pts)
    j = 0
    started = time.perf_counter()
    for t in range(T):
        context = env.observe(t)
        actions = policy.select(t, context)
        feedback = env.pull(t, actions)
        policy.update(t, context, actions, feedback)
        pi = policy.policy
        fr, rr = meter.step(pi, feedback["arm_means"])
        accepted = feedback.get("accepted")
        if accepted is not None:  # replay: rejected events are not rounds
            fr = fr * accepted
            rr = rr * accepted
        if t == 0:
            fr_sum, rr_sum = fr.copy(), rr.copy()
            fr_out = np.empty(fr.shape + (len(pts),))
            rr_out = np.empty(fr.shape + (len(pts),))
            if accepted is not None:
                n_sum = np.asarray(accepted, dtype=float).copy()
                n_out = np.empty(fr.shape + (len(pts),))
            if expo_pts:
                expo_sum = pi.copy()
        else:
            fr_sum += fr
            rr_sum += rr
            if n_sum is not None:
                n_sum += accepted
            if expo_pts:
                expo_sum += pi
        if t + 1 in marks:
            fr_out[..., j] = fr_sum
            rr_out[..., j] = rr_sum
            if n_out is not None:
                n_out[..., j] = n_sum
            j += 1
        if t + 1 in expo_marks:
            exposure[t + 1] = expo_sum / (t + 1)
    return FairnessRun(
        pts, fr_out, rr_out, exposure, run_idx, int(seed), T, time.perf_counter() - started, rounds=n_out
    )


def regrets_from_simulation(result: SimulationResult, merit) -> tuple[np.ndarray, np.ndarray]:
    """Per-round fairness and reward regret from a protocol-path simulation.

    Parameters
    ----------
    result : SimulationResult
        From ``simulate(env, policy, T, seed, ..., metrics=("policy", "arm_means"))``.
    merit : merit function

    Returns
    -------
    fr, rr : ndarray, shape (R, G, T)
    """
    for name in ("policy", "arm_means"):
        if name not in result.metrics:
            raise KeyError(f"the simulation did not keep {name!r}; pass metrics=('policy', 'arm_means') to simulate")
    pol, means = result["policy"], result["arm_means"]
    meter = RegretMeter(merit)
    R, T, G = pol.shape[:3]
    fr = np.empty((R, G, T))
    rr = np.empty((R, G, T))
    accepted = result.metrics.get("accepted")
    for t in range(T):
        f, r = meter.step(np.ascontiguousarray(pol[:, t]), np.ascontiguousarray(means[:, t]))
        if accepted is not None:
            f, r = f * accepted[:, t], r * accepted[:, t]
        fr[:, :, t], rr[:, :, t] = f, r
    return fr, rr


def curve_summary(t: np.ndarray, cumulative: np.ndarray) -> dict[str, Any]:
    """A record curve (the format of :func:`causalbandits_lib.core.curves.summarise_curve`) from
    cumulative values already taken at rounds ``t``.

    Parameters
    ----------
    t : ndarray, shape (P,)
    cumulative : ndarray, shape (n_runs, P)
    """
    cumulative = np.asarray(cumulative, dtype=float)
    if cumulative.ndim != 2 or cumulative.shape[1] != len(t):
        raise ValueError(f"cumulative must have shape (n_runs, {len(t)}), got {cumulative.shape}")
    n = cumulative.shape[0]
    return {
        "t": np.asarray(t).tolist(),
        "mean": cumulative.mean(axis=0).tolist(),
        "sd": (cumulative.std(axis=0, ddof=1) if n > 1 else np.zeros(len(t))).tolist(),
        "q05": np.quantile(cumulative, 0.05, axis=0).tolist(),
        "q95": np.quantile(cumulative, 0.95, axis=0).tolist(),
        "n_runs": int(n),
        "cumulative": True,
    }


def second_half_slope(t: np.ndarray, cumulative_mean: np.ndarray) -> float:
    """Least-squares slope of ``log FR_t`` against ``log t`` over ``t ∈ [T/2, T]`` (0.5 for a
    ``√T`` rate, 1 for linear regret)."""
    t = np.asarray(t, dtype=float)
    return loglog_slope(t, cumulative_mean, t_min=t[-1] / 2)[0]


@dataclass
class GridResult:
    """Outcome of a grid search: validation fairness regret of every grid point for every ``c``.

    Attributes
    ----------
    names : tuple of str
        Hyper-parameter names.
    points : list of tuple
        Grid points (values in the order of ``names``).
    c : ndarray, shape (C,)
    fairness : ndarray, shape (C, P)
        Mean (over runs) validation fairness regret at the tuning horizon.
    best : list of dict
        For each ``c``, the grid point with the smallest validation fairness regret.
    """

    names: tuple[str, ...]
    points: list[tuple]
    c: np.ndarray
    fairness: np.ndarray
    best: list[dict[str, float]]
    seconds: float = 0.0

    def best_arrays(self) -> dict[str, np.ndarray]:
        """The chosen values as per-``c`` arrays, ready to build the test-split policy."""
        return {n: np.array([b[n] for b in self.best]) for n in self.names}


def grid_search(
    make_policy: Callable[..., Any],
    grid: Mapping[str, Sequence[float]],
    c_values: Sequence[float],
    make_merit: Callable[[np.ndarray], Any],
    env,
    T: int,
    n_runs: int,
    seed: int,
) -> GridResult:
    """Tune hyper-parameters by the validation fairness regret (§5.1: "grid search to minimise
    fairness regret on the validation set"), all grid points and all ``c`` in one simulation.

    Parameters
    ----------
    make_policy : callable
        ``make_policy(merit, **{name: array (G,)})`` builds a policy with one configuration per
        (``c``, grid point).
    grid : mapping of name to list of values
        The paper's grid (App. B.1); every combination is tried.
    c_values : sequence of float
        Merit steepnesses to tune for.
    make_merit : callable
        ``make_merit(c_array)`` → merit function.
    env
        The validation-split environment.
    T, n_runs, seed
        Tuning horizon, runs and seed (the paper states none of them; the notebooks state ours).
    """
    names = tuple(grid)
    if not names:
        raise ValueError("grid must name at least one hyper-parameter")
    points = list(itertools.product(*(list(grid[n]) for n in names)))
    c_values = np.asarray(c_values, dtype=float)
    cc = np.repeat(c_values, len(points))
    arrays = {n: np.tile(np.array([p[i] for p in points], dtype=float), len(c_values)) for i, n in enumerate(names)}
    merit = make_merit(cc)
    run = run_fairness(env, make_policy(merit, **arrays), merit, T, seed, n_runs=n_runs, checkpoints=[T])
    fairness = run.final("fairness").mean(axis=0).reshape(len(c_values), len(points))
    best = [dict(zip(names, points[int(np.argmin(row))])) for row in fairness]
    return GridResult(names, points, c_values, fairness, best, run.seconds)
