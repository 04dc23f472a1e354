"""The runs and measurements of notebook ``cclb/03`` (the primal-dual algorithm) as result objects.

- :func:`dual_check`: the exact per-round LP quantities on generated rounds (the optimal dual
  variable, strong duality, the benchmark at ``tau`` and at the tightened ``tau - eps``);
- :func:`run_primal_dual`: CCLB over a sweep of truncations ``rho``, epsilon-CCLB and CCLB with
  ``tau = 1`` on common random numbers, and CCLB (``rho = 2/delta``) and epsilon-CCLB again under
  the other tie rule; the result (:class:`PrimalDualRuns`) knows the notebook's metrics and
  curves (``record(nb)``), Lemma 8's ratio and the mechanism of the dual variable;
- :meth:`PrimalDualRuns.per_horizon`: the violation ``V(T_k)`` of runs made for each horizon
  ``T_k`` under both tie rules (:class:`PerHorizon`);
- :func:`bound_curve`: a measured cumulative regret beside a bound shape and the trivial bound
  ``t dmax``, at the 25 log-spaced horizons the bound claims read.

``record(nb)`` takes the notebook session duck-typed: it only calls ``nb.metric`` and ``nb.curve``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..core import checks
from ..core.runner import SimulationResult
from .experiments import (
    OTHER_RULE,
    Config,
    final_values,
    positive_part_of_sum,
    run_configs,
    run_per_horizon,
    second_half_slope,
    values_per_horizon,
)
from .generator import RoundGenerator
from .oracle import mixture_lp_value
from .theory import lemma8_bound, lemma8_lhs, lp_dual_variable

__all__ = [
    "DualCheck",
    "dual_check",
    "PrimalDualRuns",
    "run_primal_dual",
    "PerHorizon",
    "BoundCurve",
    "bound_curve",
]

#: The record's short names of the two algorithms the claims follow, in this order.
NAMES = ("cclb", "eps_cclb")


@dataclass(frozen=True)
class DualCheck:
    """Exact per-round quantities of the LP over mixtures (Eq. 8) on generated rounds.

    Attributes
    ----------
    phi_star, q_star : (n,) the optimal dual variable and the dual value of each round
    lp, lp_tight : (n,) the LP value at ``tau`` and at the tightened ``tau - eps``
    reward_min : (n,) the smallest reward of each round
    """

    phi_star: np.ndarray
    q_star: np.ndarray
    lp: np.ndarray
    lp_tight: np.ndarray
    reward_min: np.ndarray

    @property
    def duality_gap(self) -> float:
        """The largest ``|q*_t - LP_t|`` over the rounds (zero under strong duality)."""
        return float(np.abs(self.q_star - self.lp).max())

    @property
    def dmax(self) -> float:
        """The largest per-round gap to the benchmark, so that ``R+(t) <= t dmax``."""
        return float(np.max(self.lp - self.reward_min))

    @property
    def dmax_tight(self) -> float:
        """The largest per-round gap to the tightened benchmark (``tau - eps``)."""
        return float(np.max(self.lp_tight - self.reward_min))

    @property
    def benchmark_gap(self) -> np.ndarray:
        """Per round, the LP value at ``tau`` minus the one at ``tau - eps`` (Proposition 3)."""
        return self.lp - self.lp_tight

    def record(self, nb: Any) -> None:
        """Register ``dual.max_optimal_dual_variable`` and ``dual.max_duality_gap`` with ``nb.metric``."""
        nb.metric("dual.max_optimal_dual_variable", self.phi_star.max())
        nb.metric("dual.max_duality_gap", self.duality_gap)


def dual_check(rounds: Any, tau: float, eps: float) -> DualCheck:
    """The exact LP quantities of generated ``rounds`` (``reward`` and ``effect`` of shape (n, K)).

    Parameters
    ----------
    rounds : rounds of :meth:`~.generator.RoundGenerator.draw`
    tau : the fairness threshold
    eps : the tightening of epsilon-CCLB

    Returns
    -------
    DualCheck
    """
    phi_star, q_star = lp_dual_variable(rounds.reward, rounds.effect, tau)
    lp = mixture_lp_value(rounds.reward, rounds.effect, tau)
    lp_tight = mixture_lp_value(rounds.reward, rounds.effect, tau - eps)
    return DualCheck(phi_star, q_star, lp, lp_tight, rounds.reward.min(axis=1))


@dataclass(frozen=True)
class PerHorizon:
    """The violation ``V(T_k)`` of runs made for each horizon ``T_k``, under both tie rules.

    Attributes
    ----------
    horizons : (H,) the horizons
    values : ``{(rule, name): (reps, H)}`` for ``name`` in ``("cclb", "eps_cclb")``
    rules : the tie rules, ours first
    """

    horizons: np.ndarray
    values: dict
    rules: tuple[str, str]

    def record(self, nb: Any) -> None:
        """Register ``per_horizon.tie_rule_RULE.NAME.V_mean.T<h>`` (the mean over runs) with ``nb.metric``."""
        for rule in self.rules:
            for name in NAMES:
                for h, v in zip(self.horizons, self.values[rule, name].T):
                    nb.metric(f"per_horizon.tie_rule_{rule}.{name}.V_mean.T{h}", float(v.mean()))

    def summary(self) -> str:
        """One line per tie rule and algorithm: the mean ``V(T_k)`` at each horizon."""
        lines = []
        for rule in self.rules:
            for name in NAMES:
                means = ", ".join(f"{h}: {v.mean():.1f}" for h, v in zip(self.horizons, self.values[rule, name].T))
                lines.append(f"tie_rule = {rule:6s} {name:8s} mean V(T_k), each from runs made for T_k: {means}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PrimalDualRuns:
    """The runs of notebook ``cclb/03`` (:func:`run_primal_dual`).

    Attributes
    ----------
    configs : the configurations: CCLB for each truncation of the sweep, then ``eps_cclb`` and ``cclb_tau1``
    n_rho : how many of ``configs`` are the sweep over ``rho``
    results : ``{config key: SimulationResult}`` under our tie rule
    other : ``{config key: SimulationResult}`` of CCLB (``main``) and ``eps_cclb`` under the other rule
    main : the key of the CCLB run whose ``rho`` is closest to ``2/delta``
    tie_rule, other_rule : our tie rule and its alternative
    seed, reps, policy_kw : what the runs were made with (for :meth:`per_horizon`)
    """

    configs: tuple[Config, ...]
    n_rho: int
    results: dict[str, SimulationResult]
    other: dict[str, SimulationResult]
    main: str
    tie_rule: str
    other_rule: str
    seed: int
    reps: int
    policy_kw: dict

    @property
    def keys(self) -> dict[str, str]:
        """The record's names ``cclb`` and ``eps_cclb`` to their config keys."""
        return {"cclb": self.main, "eps_cclb": "eps_cclb"}

    def violation(self, name: str, other_rule: bool = False) -> np.ndarray:
        """``V(t) = [sum_{s<=t} (|Delta_s| - tau)]_+`` of ``cclb`` or ``eps_cclb``, shape (reps, T)."""
        runs = self.other if other_rule else self.results
        return positive_part_of_sum(runs[self.keys[name]]["violation"])

    def regret_plus(self, name: str) -> np.ndarray:
        """Per-round strong regret of ``cclb`` or ``eps_cclb``, shape (reps, T)."""
        return self.results[self.keys[name]]["regret_plus"]

    def final_regret_plus(self, name: str) -> float:
        """Mean over runs of ``R+(T)``."""
        return self.regret_plus(name).sum(axis=1).mean()

    def final_violation(self, name: str) -> float:
        """Mean over runs of ``V(T)``."""
        return float(final_values(self.results[self.keys[name]])["violation_positive_part_of_sum"].mean())

    def violation_slope(self, name: str) -> float:
        """``log2(V(T) / V(T/2))`` of the mean violation curve (:func:`~.experiments.second_half_slope`)."""
        return second_half_slope(self.violation(name))

    def lemma8_ratio(self) -> float:
        """The largest ``sum_t (phi - phi_t) g_t / (rho sqrt(T) (1 + eps)^2)`` over runs, configurations
        with ``rho > 0`` and ``phi`` in ``{0, rho}``, with ``g_t = |Delta~_t(d_t)| - tau + eps``."""
        ratios = []
        for c in self.configs:
            r = self.results[c.key]
            g = r["estimated_violation"] + c.eps
            for target in (0.0, c.rho):
                if c.rho > 0:
                    ratios.append(float(np.max(lemma8_lhs(r["dual"], g, target) / lemma8_bound(r.T, c.rho, c.eps))))
        return max(ratios)

    def regret_plus_minus_regret(self) -> np.ndarray:
        """Every per-round ``R+`` increment minus the ``R`` increment, over configurations, runs and rounds."""
        return np.concatenate(
            [(self.results[c.key]["regret_plus"] - self.results[c.key]["regret"]).ravel() for c in self.configs]
        )

    def sweep_results(self) -> list[tuple[str, SimulationResult]]:
        """(label, result) of CCLB for each ``rho`` of the sweep, then epsilon-CCLB."""
        eps_cclb = next(c for c in self.configs if c.key == "eps_cclb")
        return [(c.label, self.results[c.key]) for c in [*self.configs[: self.n_rho], eps_cclb]]

    def mechanism(self, start: int) -> dict[str, tuple[float, float, float]]:
        """For CCLB (``main``) and ``eps_cclb``: the mean estimated violation ``|Delta~| - tau`` and the
        mean true violation ``|Delta| - tau`` from round ``start`` on, and the mean final dual variable."""
        out = {}
        for key in (self.main, "eps_cclb"):
            r = self.results[key]
            later = slice(start, None)
            out[key] = (
                float(r["estimated_violation"][:, later].mean()),
                float(r["violation"][:, later].mean()),
                float(r["dual"][:, -1].mean()),
            )
        return out

    def record(self, nb: Any) -> None:
        """Register the final strong regret and violation of CCLB and epsilon-CCLB, their second-half
        slopes, their curves, the violations under the other tie rule and the final values of the
        sweep over ``rho`` (``nb.metric``, ``nb.curve``)."""
        nb.metric("theorem1.cclb_violation_slope_second_half", self.violation_slope("cclb"))
        nb.metric("theorem2.eps_cclb_violation_slope_second_half", self.violation_slope("eps_cclb"))
        for name in NAMES:
            nb.metric(f"final_regret_plus.{name}", self.final_regret_plus(name))
            nb.metric(f"final_violation_positive_part_of_sum.{name}", self.final_violation(name))
            nb.curve(f"{name}.violation_positive_part_of_sum", self.violation(name), cumulative=False)
            nb.curve(f"{name}.regret_plus", self.regret_plus(name))
            final_other = float(self.violation(name, other_rule=True)[:, -1].mean())
            nb.metric(f"tie_rule_{self.other_rule}.final_violation_positive_part_of_sum.{name}", final_other)
        for c in self.configs:
            fv = final_values(self.results[c.key])
            nb.metric(f"rho_sweep.{c.key}.final_regret", fv["regret"].mean())
            nb.metric(
                f"rho_sweep.{c.key}.final_violation_sum_of_positive_parts", fv["violation_sum_of_positive_parts"].mean()
            )

    def per_horizon(
        self, generator: RoundGenerator, horizons: Sequence[int], timed: Callable = contextlib.nullcontext
    ) -> PerHorizon:
        """CCLB (``main``) and epsilon-CCLB at each horizon, each horizon its own runs
        (:func:`~.experiments.run_per_horizon`), under our tie rule and then the other; the runs of
        horizon ``T`` are these runs, not made again.

        Parameters
        ----------
        generator : the generator of :func:`run_primal_dual`
        horizons : the horizons, e.g. :func:`~.experiments.independent_horizons`
        timed : a context manager factory ``timed(label)`` (e.g. ``nb.timed``) around each rule's runs

        Returns
        -------
        PerHorizon
        """
        family = [c for c in self.configs if c.key in (self.main, "eps_cclb")]
        T = self.results[self.main].T
        values = {}
        for rule, done in ((self.tie_rule, self.results), (self.other_rule, self.other)):
            with timed(f"CCLB and eps-CCLB at each horizon, tie_rule = {rule}"):
                runs = run_per_horizon(
                    generator, family, horizons, self.seed, self.reps, done={T: done}, **self.policy_kw, tie_rule=rule
                )
            for name in NAMES:
                _, values[rule, name] = values_per_horizon(runs, self.keys[name])
        return PerHorizon(np.asarray(horizons), values, (self.tie_rule, self.other_rule))


def run_primal_dual(
    generator: RoundGenerator,
    rho_values: Sequence[float],
    rho_theory: float,
    eps: float,
    tau: float,
    T: int,
    seed: int,
    reps: int,
    tie_rule: str,
    timed: Callable = contextlib.nullcontext,
    **policy_kw,
) -> PrimalDualRuns:
    """CCLB with each truncation of ``rho_values``, epsilon-CCLB and CCLB with ``tau = 1`` (both with
    ``rho_theory``) in one batch on common random numbers; then CCLB with the ``rho`` of the sweep
    closest to ``rho_theory`` and epsilon-CCLB under the other tie rule, on the same seed.

    Parameters
    ----------
    generator : the round generator
    rho_values : the truncations of the sweep
    rho_theory : ``2/delta``, the truncation of epsilon-CCLB and of the ``tau = 1`` run
    eps, tau, T, seed, reps : epsilon-CCLB's tightening, the threshold, horizon, root seed and replications
    tie_rule : ``"random"`` or ``"fairer"``
    timed : a context manager factory ``timed(label)`` (e.g. ``nb.timed``) around each batch
    **policy_kw : passed to CCLB (e.g. ``alpha``)

    Returns
    -------
    PrimalDualRuns
    """
    configs = [Config(f"cclb_rho{r:g}", f"CCLB, ρ = {r:.3g}", float(r), 0.0, tau, T) for r in rho_values]
    configs += [
        Config("eps_cclb", f"ε-CCLB, ε = {eps:g}", rho_theory, eps, tau, T),
        Config("cclb_tau1", "CCLB, τ = 1", rho_theory, 0.0, 1.0, T),
    ]
    with timed("simulation"):
        res = run_configs(generator, configs, T, seed, reps, **policy_kw, tie_rule=tie_rule)
    main = min(configs[: len(rho_values)], key=lambda c: abs(c.rho - rho_theory)).key
    other_rule = OTHER_RULE[tie_rule]
    with timed(f"CCLB and eps-CCLB with tie_rule = {other_rule}"):
        family = [c for c in configs if c.key in (main, "eps_cclb")]
        res_other = run_configs(generator, family, T, seed, reps, **policy_kw, tie_rule=other_rule)
    return PrimalDualRuns(
        tuple(configs), len(rho_values), res, res_other, main, tie_rule, other_rule, seed, reps, dict(policy_kw)
    )


@dataclass(frozen=True)
class BoundCurve:
    """A measured cumulative regret beside a bound, at the horizons ``t``.

    Attributes
    ----------
    t : the horizons (25 log-spaced integers from 10 to ``T``)
    measured : (reps, len(t)) the cumulative measured regret at ``t``
    bound : (len(t),) the bound at ``t``
    trivial : (len(t),) ``t dmax``, what holds without the theorem
    informative_from : the first horizon where the bound is below half the trivial one (None up to 1e12)
    """

    t: np.ndarray
    measured: np.ndarray
    bound: np.ndarray
    trivial: np.ndarray
    informative_from: int | None


def bound_curve(per_round: np.ndarray, bound: Callable, dmax: float) -> BoundCurve:
    """The cumulative sum of ``per_round`` (reps, T) beside ``bound(t)`` and ``t dmax``.

    Parameters
    ----------
    per_round : (reps, T) per-round regret
    bound : the bound as a function of the horizon (arrays and scalars)
    dmax : the largest per-round regret

    Returns
    -------
    BoundCurve
    """
    T = per_round.shape[1]
    t = np.unique(np.geomspace(10, T, 25).astype(int))
    informative = checks.informative_horizon(lambda n: float(bound(n)), lambda n: n * dmax)
    return BoundCurve(t, np.cumsum(per_round, axis=1)[:, t - 1], bound(t), t * dmax, informative)
