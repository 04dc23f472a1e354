"""The bookkeeping of notebook ``fucb/02`` (the regret bounds of D-UCB and F-UCB beside the measured
regret), kept out of the notebook so that it reads derivation, one call, figure, claims.

- :func:`theorem1_table`: Theorem 1's bound and both versions of its probability for several
  domain sizes and horizons (:class:`Theorem1Table`);
- :func:`run_long_horizon`: UCB, C-UCB, D-UCB, F-UCB as Algorithm 2 prints it, and F-UCB in
  Theorem 3's own configuration, on common random numbers (:class:`LongRuns`);
- :func:`bound_curves`: Theorems 1 and 3, Corollary 1 and Proposition 2 at the horizons where the
  notebook compares them with the measured regret, and the horizons from which each says
  something (:class:`BoundCurves`).

Every ``record(nb)`` registers the metrics and curves under the names the notebook's record has
always used; ``nb`` is any object with ``metric`` and ``curve`` methods (the notebook session).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..core import checks, curves
from ..core.runner import SimulationResult, simulate
from . import theory as rb
from .experiments import make_policy

__all__ = [
    "Theorem1Table",
    "theorem1_table",
    "LongRuns",
    "run_long_horizon",
    "BoundCurves",
    "bound_curves",
]


@dataclass(frozen=True)
class Theorem1Table:
    """Theorem 1 evaluated per (algorithm, horizon) with ``δ = 1/horizon²``.

    Attributes
    ----------
    rows : tuple of tuple
        ``(name, cells, horizon, bound, printed probability, probability from the proof)``, one per
        algorithm and horizon, in the order given.
    """

    rows: tuple[tuple[str, int, int, float, float, float], ...]

    def markdown(self) -> str:
        """The rows as a Markdown table (bound without decimals, probabilities with four)."""
        lines = [
            "| algorithm | cells | horizon | Thm 1 bound | printed probability | probability from the proof |",
            "|---|---|---|---|---|---|",
        ]
        lines += [f"| {n} | {k} | {h} | {b:,.0f} | {p:.4f} | {q:.4f} |" for n, k, h, b, p, q in self.rows]
        return "\n".join(lines)

    def record(self, nb: Any) -> None:
        """Register ``bounds.theorem1.cells_K.T_H`` (the bound) and
        ``bounds.theorem1_probability.cells_K.T_H`` (``{"printed", "corrected"}``) for every row."""
        for _, k, h, bound, p_printed, p_proof in self.rows:
            nb.metric(f"bounds.theorem1.cells_{k}.T_{h}", bound)
            nb.metric(f"bounds.theorem1_probability.cells_{k}.T_{h}", {"printed": p_printed, "corrected": p_proof})


def theorem1_table(domains: Mapping[str, int], horizons: Sequence[int]) -> Theorem1Table:
    """Theorem 1's bound (Eq. 15) and its probability, as printed and as the proof gives it, for
    every ``name: cells`` of ``domains`` and every horizon of ``horizons`` (sorted, duplicates
    dropped), each with ``δ = 1/horizon²``.

    Returns
    -------
    Theorem1Table
    """
    rows = []
    for name, k in domains.items():
        for horizon in sorted(set(horizons)):
            d = 1.0 / horizon**2
            p_printed = float(rb.theorem1_probability(k, horizon, d))
            p_proof = float(rb.theorem1_probability(k, horizon, d, "corrected"))
            rows.append((name, k, horizon, float(rb.theorem1_bound(k, horizon, d)), p_printed, p_proof))
    return Theorem1Table(tuple(rows))


@dataclass(frozen=True)
class LongRuns:
    """The long-horizon runs of notebook 2, all on the same seed (run ``i`` of each faces the same
    contexts and noise).

    Attributes
    ----------
    runs : dict of str to SimulationResult
        ``UCB``, ``C-UCB``, ``D-UCB`` and ``F-UCB`` (Algorithm 2 as the experiments run it).
    theorem3 : SimulationResult
        F-UCB with Theorem 3's ``α_r``, ``α_c = 1`` and the safe arm when nothing is certified.
    safe_arm : int
        The arm of smallest worst-case ``|Δ|`` (Theorem 3's safe policy ``π_0``).
    T : int
        The horizon.
    """

    runs: dict[str, SimulationResult]
    theorem3: SimulationResult
    safe_arm: int
    T: int

    def cumulative(self) -> dict[str, np.ndarray]:
        """Each run's cumulative regret, ``(n_runs, T)`` per algorithm of :attr:`runs`."""
        return {name: r.cumulative() for name, r in self.runs.items()}

    def final_runs(self) -> dict[str, np.ndarray]:
        """Each run's cumulative regret at ``T``, one value per run, per algorithm of :attr:`runs`."""
        return {name: c[:, -1] for name, c in self.cumulative().items()}

    def final(self) -> dict[str, float]:
        """The mean final regret over runs per algorithm of :attr:`runs`."""
        return {name: float(r.final().mean()) for name, r in self.runs.items()}

    def slopes(self, t_min: float, t_max: float | None = None) -> dict[str, float]:
        """The log-log slope of the mean cumulative regret over ``[t_min, t_max]`` per algorithm."""
        t = np.arange(1, self.T + 1)
        return {
            name: curves.loglog_slope(t, r.cumulative().mean(axis=0), t_min=t_min, t_max=t_max)[0]
            for name, r in self.runs.items()
        }

    def fallback_rounds(self) -> float:
        """F-UCB's mean number of rounds without a certified arm."""
        return float(self.runs["F-UCB"]["fallback"].sum(axis=1).mean())

    def record(self, nb: Any) -> None:
        """Register the ``long_run.*`` metrics and curves: per algorithm its regret curve, mean final
        regret and its standard error, log-log slopes over ``[T/2, T]`` and ``[T/4, T/2]``; Theorem
        3's run (``F-UCB_theorem3``); F-UCB's rounds without a certified arm."""
        nb.metric("long_run.final_regret.F-UCB_theorem3", float(self.theorem3.final().mean()))
        nb.curve("long_run.regret.F-UCB_theorem3", self.theorem3["regret"])
        final, slopes = self.final(), self.slopes(self.T / 2)
        earlier = self.slopes(self.T / 4, self.T / 2)
        for name, r in self.runs.items():
            nb.curve(f"long_run.regret.{name}", r["regret"])
            nb.metric(f"long_run.final_regret.{name}", final[name])
            nb.metric(f"long_run.loglog_slope.{name}", slopes[name])
            nb.metric(f"long_run.loglog_slope_previous_quarter.{name}", earlier[name])
        nb.metric("long_run.fucb_fallback_rounds", self.fallback_rounds())
        for name, v in self.final_runs().items():
            nb.metric(f"long_run.final_regret_se.{name}", checks.mean_se(v)[1])


def run_long_horizon(
    env,
    decompositions: Mapping[str, Any],
    estimator,
    T: int,
    seed: int,
    n_runs: int,
    tau: float,
    delta_power: float,
    alpha_r_theorem3: float,
) -> LongRuns:
    """Simulate, in this order and on ``seed``, UCB, C-UCB and D-UCB (each on its decomposition of
    ``decompositions``), F-UCB as Algorithm 2 prints it on D-UCB's decomposition (``α_r = α_c = 1``,
    our fallback), and F-UCB in Theorem 3's configuration (``α_r = alpha_r_theorem3``, ``α_c = 1``,
    the safe arm when nothing is certified). The two F-UCB runs keep ``regret`` and ``fallback``.

    Returns
    -------
    LongRuns
    """
    runs = {}
    for name in ("UCB", "C-UCB", "D-UCB"):
        policy = make_policy(name, decompositions[name], delta_power=delta_power)
        runs[name] = simulate(env, policy, T, seed, n_runs=n_runs)
    fucb = make_policy("F-UCB", decompositions["D-UCB"], estimator, tau, delta_power=delta_power)
    runs["F-UCB"] = simulate(env, fucb, T, seed, n_runs=n_runs, metrics=("regret", "fallback"))
    # every arm is safe on the Email model: π_0 is the arm of smallest worst-case |Δ|
    safe_arm = int(np.argmin(np.abs(env.discrepancy).max(axis=0)))
    thm3_policy = make_policy(
        "F-UCB",
        decompositions["D-UCB"],
        estimator,
        tau,
        delta_power=delta_power,
        alpha_r=alpha_r_theorem3,
        alpha_c=1.0,
        fallback="safe_arm",
        safe_arm=safe_arm,
        label="F-UCB (Theorem 3)",
    )
    thm3_run = simulate(env, thm3_policy, T, seed, n_runs=n_runs, metrics=("regret", "fallback"))
    return LongRuns(runs, thm3_run, safe_arm, T)


@dataclass(frozen=True)
class BoundCurves:
    """The bounds of notebook 2 at the horizons where they are compared with the measured regret.

    Attributes
    ----------
    k, T, tau, delta0, max_gap :
        Domain size of W, horizon, threshold, the safe policy's discrepancy and the largest gap
        (the trivial bound is ``max_gap · t``).
    horizons : ndarray
        30 log-spaced horizons in ``[2, T]`` (fewer once rounded).
    rate_t : ndarray
        40 log-spaced checkpoints in ``[T/40, T]`` for the rate test.
    theorem1, theorem3, corollary1 : ndarray
        Each bound at ``horizons`` (Theorem 1 with ``δ = 1/t²``; Theorem 3 as printed).
    prop2_horizons, proposition2 : ndarray
        The horizons ``t > 4|W|`` (where ``δ_E = 4|W|/t < 1``) and Proposition 2's bound there
        (``α_r = 1``, ``δ = 1/t²``).
    proposition2_at_T, proposition2_level : float
        Proposition 2's bound at ``T`` and its level ``1 − δ_E/2`` with ``δ = 1/T²``.
    corollary1_probability : dict
        Corollary 1's probability at ``T``, ``{"printed", "corrected"}``.
    theorem1_from, theorem3_from, corollary1_from, proposition2_from : int or None
        The horizon from which each bound is below half the trivial bound.
    """

    k: int
    T: int
    tau: float
    delta0: float
    max_gap: float
    horizons: np.ndarray
    rate_t: np.ndarray
    theorem1: np.ndarray
    theorem3: np.ndarray
    corollary1: np.ndarray
    prop2_horizons: np.ndarray
    proposition2: np.ndarray
    proposition2_at_T: float
    proposition2_level: float
    corollary1_probability: dict[str, float]
    theorem1_from: int | None
    theorem3_from: int | None
    corollary1_from: int | None
    proposition2_from: int | None

    def theorem1_at_T(self) -> float:
        """Theorem 1's bound at ``T`` with ``δ = 1/T²``."""
        return float(rb.theorem1_bound(self.k, self.T, 1.0 / self.T**2))

    def theorem3_at_T(self) -> float:
        """Theorem 3's printed bound at ``T``."""
        return float(rb.theorem3_bound(self.k, self.T, self.tau, self.delta0))

    def corollary1_at_T(self) -> float:
        """Corollary 1's bound at ``T``."""
        return float(rb.corollary1_bound(self.k, self.T))

    def trivial_at_T(self) -> float:
        """The trivial bound ``max_gap · T``."""
        return self.max_gap * self.T

    def record(self, nb: Any) -> None:
        """Register ``bounds.theorem{1,3}_ratio_to_trivial_at_T``, ``bounds.informative_from``,
        ``prop2.informative_from``, ``prop2.bound_at_T`` and ``cor1.{bound_at_T, probability_at_T,
        informative_from}``."""
        nb.metric(
            "bounds.theorem1_ratio_to_trivial_at_T",
            float(rb.theorem1_bound(self.k, self.T, 1.0 / self.T**2) / (self.max_gap * self.T)),
        )
        nb.metric(
            "bounds.theorem3_ratio_to_trivial_at_T",
            float(rb.theorem3_bound(self.k, self.T, self.tau, self.delta0) / (self.max_gap * self.T)),
        )
        nb.metric("bounds.informative_from", {"theorem1": self.theorem1_from, "theorem3": self.theorem3_from})
        nb.metric("prop2.informative_from", self.proposition2_from)
        nb.metric("prop2.bound_at_T", self.proposition2_at_T)
        nb.metric("cor1.bound_at_T", self.corollary1_at_T())
        nb.metric("cor1.probability_at_T", self.corollary1_probability)
        nb.metric("cor1.informative_from", self.corollary1_from)


def bound_curves(k: int, T: int, tau: float, delta0: float, max_gap: float) -> BoundCurves:
    """Theorems 1 and 3, Corollary 1 and Proposition 2 for a separator of ``k`` cells at the
    comparison horizons up to ``T``, with the horizon from which each is informative (below
    :data:`~causalbandits_lib.core.checks.INFORMATIVE_BELOW` times ``max_gap · t``, by
    :func:`~causalbandits_lib.core.checks.informative_horizon`).

    Returns
    -------
    BoundCurves
    """
    horizons = np.unique(np.geomspace(2, T, 30).astype(int))
    rate_t = np.unique(np.geomspace(max(1, T // 40), T, 40).astype(int))

    def trivial(n):
        return max_gap * n

    prop2_h = horizons[horizons > 4 * k]  # with δ = 1/t², δ_E = 4|W|/t < 1: the statement is not empty
    return BoundCurves(
        k=k,
        T=T,
        tau=tau,
        delta0=delta0,
        max_gap=max_gap,
        horizons=horizons,
        rate_t=rate_t,
        theorem1=rb.theorem1_bound(k, horizons, 1.0 / horizons.astype(float) ** 2),
        theorem3=rb.theorem3_bound(k, horizons, tau, delta0),
        corollary1=rb.corollary1_bound(k, horizons),
        prop2_horizons=prop2_h,
        proposition2=rb.proposition2_bound(k, prop2_h, 1.0 / prop2_h.astype(float) ** 2),
        proposition2_at_T=float(rb.proposition2_bound(k, T, 1.0 / T**2)),
        proposition2_level=1.0 - 4.0 * k * T / T**2 / 2.0,  # 1 − δ_E/2 with δ = 1/T²
        corollary1_probability={v: float(rb.corollary1_probability(k, T, v)) for v in rb.VERSIONS},
        theorem1_from=checks.informative_horizon(
            lambda n: float(rb.theorem1_bound(k, n, 1.0 / n**2)), trivial, t_start=2
        ),
        theorem3_from=checks.informative_horizon(
            lambda n: float(rb.theorem3_bound(k, n, tau, delta0)), trivial, t_start=2
        ),
        corollary1_from=checks.informative_horizon(lambda n: float(rb.corollary1_bound(k, n)), trivial, t_start=2),
        proposition2_from=checks.informative_horizon(
            lambda n: float(rb.proposition2_bound(k, n, 1.0 / n**2)), trivial, t_start=4 * k + 1
        ),
    )
