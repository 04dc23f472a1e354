"""The runs of notebook ``cclb/04`` (the paper's Figures 2, 4 and 5) as result objects.

- :func:`run_paper_experiments`: every configuration of Figures 2, 4 and 5 at the horizon ``T``,
  GLM-UCB, CCLB and epsilon-CCLB at the shorter horizons, and Figure 2's four algorithms under the
  other tie rule; the result (:class:`PaperRuns`) registers the notebook's metrics and curves
  (``record(nb)``) and gives the sweeps of Figures 4 and 5 (:class:`Sweep`);
- :meth:`PaperRuns.tie_study`: where the gap between CCLB and OFULog+ comes from (the tied rounds,
  counted exactly from ``theta*``) and Figure 2's CCLB family on a tie-free feature map
  (:class:`TieStudy`).

``record(nb)`` takes the notebook session duck-typed: it only calls ``nb.metric`` and ``nb.curve``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..core.runner import SimulationResult
from .experiments import (
    LABELS,
    OTHER_RULE,
    Config,
    final_values,
    paper_configs,
    positive_part_of_sum,
    run_configs,
    run_glm_ucb,
    split_by_ties,
    tied_rounds,
)
from .generator import RoundGenerator

__all__ = [
    "ALGORITHMS",
    "Sweep",
    "TieStudy",
    "PaperRuns",
    "run_paper_experiments",
]

#: Figure 2's algorithms, in drawing order.
ALGORITHMS = ("glm_ucb", "ofulog_plus", "cclb", "eps_cclb")

#: The two per-round values whose paired gap OFULog+ minus CCLB is split by the tied rounds.
SPLIT_METRICS = ("violation_pos", "penalized_regret")


@dataclass(frozen=True)
class Sweep:
    """One configuration per value of a swept parameter (Figure 4: ``eps``, Figure 5: ``tau``).

    Attributes
    ----------
    prefix : the metrics' prefix (``"fig4"``, ``"fig5"``)
    symbol : the parameter (``"eps"`` or ``"tau"``)
    values : the parameter's values, ascending
    keys : the configuration key of each value
    results : ``{config key: SimulationResult}``
    """

    prefix: str
    symbol: str
    values: list[float]
    keys: list[str]
    results: dict[str, SimulationResult]

    def per_run(self, name: str) -> dict[str, np.ndarray]:
        """Each configuration's per-run final value ``name`` of :func:`~.experiments.final_values`."""
        return {k: final_values(self.results[k])[name] for k in self.keys}

    def means(self, name: str) -> list[float]:
        """The mean over runs of the final value ``name`` for each value of the sweep."""
        return [final_values(self.results[k])[name].mean() for k in self.keys]

    def record(self, nb: Any, names: Sequence[str]) -> None:
        """Register ``PREFIX.SYMBOL_<value>.final_NAME`` for each value and each of ``names``."""
        for name in names:
            for v, m in zip(self.values, self.means(name)):
                nb.metric(f"{self.prefix}.{self.symbol}_{v:g}.final_{name}", m)

    def panels(self) -> list[tuple[str, SimulationResult]]:
        """(label, result) of each value, for :func:`~.figures.three_panels`."""
        glyph = {"eps": "ε", "tau": "τ"}.get(self.symbol, self.symbol)
        return [(f"{glyph} = {v:g}", self.results[k]) for v, k in zip(self.values, self.keys)]


@dataclass(frozen=True)
class TieStudy:
    """The tied rounds and their share of the gap OFULog+ minus CCLB, and the tie-free runs.

    Attributes
    ----------
    n_tied : (reps, T) how many decisions tie for the best reward in each round
    split : ``{(rule, metric): {"total", "tied", "untied"}}`` of :func:`~.experiments.split_by_ties`
    same : ``{rule: (reps, T) bool}``: CCLB plays OFULog+'s decision
    free : ``{config key: SimulationResult}`` of OFULog+, CCLB and epsilon-CCLB on the tie-free map
    free_tied : (reps, T) bool, the tied rounds on the tie-free map
    free_check : the tie-free generator's :meth:`~.generator.RoundGenerator.check`
    tie_free_map : the tie-free feature map's name
    """

    n_tied: np.ndarray
    split: dict
    same: dict
    free: dict[str, SimulationResult]
    free_tied: np.ndarray
    free_check: dict
    tie_free_map: str

    @property
    def tied(self) -> np.ndarray:
        """(reps, T) bool: rounds where several decisions tie for the best reward."""
        return self.n_tied > 1

    def final_free(self) -> dict[str, dict[str, np.ndarray]]:
        """:func:`~.experiments.final_values` of each tie-free run."""
        return {a: final_values(r) for a, r in self.free.items()}

    def record(self, nb: Any) -> None:
        """Register the ``ties.*`` metrics with ``nb.metric``."""
        tied = self.tied
        nb.metric("ties.tied_round_fraction", float(tied.mean()))
        nb.metric("ties.decisions_tied_mean", float(self.n_tied[tied].mean()))
        for (rule, m), parts in self.split.items():
            for part, v in parts.items():
                nb.metric(f"ties.{rule}.{m}.ofulog_plus_minus_cclb.{part}", float(v.mean()))
        for rule, same in self.same.items():
            nb.metric(f"ties.{rule}.same_decision_fraction.untied_rounds", float(same[~tied].mean()))
            nb.metric(f"ties.{rule}.same_decision_fraction.tied_rounds", float(same[tied].mean()))
        nb.metric("ties.tie_free.tied_round_fraction", float(self.free_tied.mean()))
        infeasible = self.free_check["unconstrained_infeasible_fraction"]
        nb.metric("ties.tie_free.unconstrained_optimum_infeasible_fraction", infeasible)
        nb.metric("ties.tie_free.same_decision_fraction", self.same_free())
        for a, f in self.final_free().items():
            nb.metric(f"ties.tie_free.final_penalized_regret.{a}", f["penalized_regret"].mean())
            nb.metric(
                f"ties.tie_free.final_violation.{a}.sum_of_positive_parts", f["violation_sum_of_positive_parts"].mean()
            )
            nb.metric(f"ties.tie_free.final_regret.{a}", f["regret"].mean())

    def same_free(self) -> float:
        """The fraction of rounds in which CCLB plays OFULog+'s decision on the tie-free map."""
        return float(np.mean(self.free["cclb"]["action"] == self.free["ofulog_plus"]["action"]))

    def summary(self) -> str:
        """The tied rounds, the split of each gap under each rule and the tie-free end values, as text."""
        tied = self.tied
        lines = [f"tied rounds: {tied.mean():.3f} of rounds, {self.n_tied[tied].mean():.2f} decisions tied on average"]
        for rule, same in self.same.items():
            lines.append(
                f"tie_rule = {rule}: CCLB plays OFULog+'s decision in {same[~tied].mean():.4f} of untied and "
                f"{same[tied].mean():.4f} of tied rounds"
            )
            for m in SPLIT_METRICS:
                sp = self.split[rule, m]
                lines.append(
                    f"   OFULog+ - CCLB, {m:17s}: total {sp['total'].mean():8.1f} = tied rounds "
                    f"{sp['tied'].mean():8.1f} + untied {sp['untied'].mean():8.1f}"
                )
        lines.append(
            f"{self.tie_free_map}: tied rounds {self.free_tied.mean():.3f}, unconstrained optimum infeasible in "
            f"{self.free_check['unconstrained_infeasible_fraction']:.3f}; "
            f"CCLB plays OFULog+'s decision in {self.same_free():.4f} of rounds"
        )
        for a, f in self.final_free().items():
            lines.append(
                f"   {LABELS[a]:8s} regret {f['regret'].mean():8.1f}  penalised {f['penalized_regret'].mean():8.1f}  "
                f"per-round violations {f['violation_sum_of_positive_parts'].mean():8.1f}"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class PaperRuns:
    """The runs of notebook ``cclb/04`` (:func:`run_paper_experiments`).

    Attributes
    ----------
    configs : every CCLB-family configuration of Figures 2, 4 and 5 (:func:`~.experiments.paper_configs`)
    results : ``{key: SimulationResult}`` at horizon ``T``, GLM-UCB (``glm_ucb``) included
    short : ``{h: {"cclb", "eps_cclb": SimulationResult}}``, the runs of each shorter horizon ``h``
    other : Figure 2's four algorithms under the other tie rule
    tau, rho : the threshold and truncation of the main configurations
    tie_rule, other_rule : our tie rule and its alternative
    seed, reps, alpha : what the runs were made with
    """

    configs: tuple[Config, ...]
    results: dict[str, SimulationResult]
    short: dict[int, dict[str, SimulationResult]]
    other: dict[str, SimulationResult]
    tau: float
    rho: float
    tie_rule: str
    other_rule: str
    seed: int
    reps: int
    alpha: float

    @property
    def T(self) -> int:
        """The horizon of the main runs."""
        return self.results["cclb"].T

    def final(self, key: str) -> dict[str, np.ndarray]:
        """:func:`~.experiments.final_values` of the run ``key`` at ``T``."""
        return final_values(self.results[key])

    def per_run(self, key: str, name: str) -> np.ndarray:
        """The per-run final value ``name`` of the run ``key`` at ``T``."""
        return self.final(key)[name]

    def at_horizon(self) -> dict[str, dict[int, dict[str, np.ndarray]]]:
        """For CCLB and epsilon-CCLB, the final values of the run made for each horizon, ``T`` included."""
        return {
            a: {h: final_values(self.short[h][a]) for h in self.short} | {self.T: self.final(a)}
            for a in ("cclb", "eps_cclb")
        }

    def record(self, nb: Any) -> None:
        """Register the final values, the violating-round fraction and the curves of Figure 2's four
        algorithms and CCLB's and epsilon-CCLB's end values at each horizon (``nb.metric``, ``nb.curve``)."""
        for a in ALGORITHMS:
            f = self.final(a)
            r = self.results[a]
            nb.metric(f"final_regret.{a}", f["regret"].mean())
            nb.metric(f"final_regret_plus.{a}", f["regret_plus"].mean())
            nb.metric(f"final_penalized_regret.{a}", f["penalized_regret"].mean())
            nb.metric(f"final_violation.{a}.sum_of_positive_parts", f["violation_sum_of_positive_parts"].mean())
            nb.metric(f"final_violation.{a}.positive_part_of_sum", f["violation_positive_part_of_sum"].mean())
            nb.metric(f"violating_round_fraction.{a}", float(np.mean(r["violation"] > 0)))
            nb.curve(f"{a}.regret", r["regret"])
            nb.curve(f"{a}.penalized_regret", r["penalized_regret"])
            nb.curve(f"{a}.violation_pos", r["violation_pos"])
            nb.curve(f"{a}.violation_positive_part_of_sum", positive_part_of_sum(r["violation"]), cumulative=False)
        for a, by_h in self.at_horizon().items():
            for h, f in by_h.items():
                nb.metric(
                    f"horizon.{a}.{h}.violation_sum_of_positive_parts", f["violation_sum_of_positive_parts"].mean()
                )
                nb.metric(f"horizon.{a}.{h}.penalized_regret", f["penalized_regret"].mean())

    def summary(self) -> str:
        """The end values of Figure 2's four algorithms, one line each."""
        lines = []
        for a in ALGORITHMS:
            f = self.final(a)
            lines.append(
                f"{LABELS[a]:8s} regret {f['regret'].mean():8.1f}  penalised {f['penalized_regret'].mean():8.1f}  "
                f"violations: per-round parts {f['violation_sum_of_positive_parts'].mean():7.1f}, "
                f"part of sum {f['violation_positive_part_of_sum'].mean():7.1f}"
            )
        return "\n".join(lines)

    def eps_sweep(self, eps_values: Sequence[float], eps: float) -> Sweep:
        """Figure 4: CCLB (``eps = 0``) and epsilon-CCLB for ``eps`` and each of ``eps_values``
        (``rho`` and ``tau`` of the main configurations)."""
        values = sorted({0.0, eps, *eps_values})
        key_of = {c.eps: c.key for c in self.configs if c.rho == self.rho and c.tau == self.tau}
        return Sweep("fig4", "eps", values, [key_of[e] for e in values], self.results)

    def tau_sweep(self, tau_values: Sequence[float]) -> Sweep:
        """Figure 5: CCLB for our ``tau`` and each of ``tau_values`` (same contexts)."""
        values = sorted({self.tau, *tau_values})
        key_of = {c.tau: c.key for c in self.configs if c.rho == self.rho and c.eps == 0.0}
        return Sweep("fig5", "tau", values, [key_of[v] for v in values], self.results)

    def tie_study(
        self,
        generator: RoundGenerator,
        free_generator: RoundGenerator,
        free_check: dict,
        timed: Callable = contextlib.nullcontext,
    ) -> TieStudy:
        """The tied rounds of ``generator`` on the runs' contexts, the split of the paired gaps
        OFULog+ minus CCLB under each tie rule, and OFULog+, CCLB and epsilon-CCLB run on
        ``free_generator`` (a tie-free feature map) under our rule.

        Parameters
        ----------
        generator : the generator of the runs
        free_generator : the same generator with a tie-free feature map
        free_check : ``free_generator.check(...)`` (kept for the claims)
        timed : a context manager factory ``timed(label)`` (e.g. ``nb.timed``) around the tie-free runs

        Returns
        -------
        TieStudy
        """
        T = self.T
        n_tied = tied_rounds(generator, T, self.seed, self.reps)
        tied = n_tied > 1
        split, same = {}, {}
        for rule, rr in ((self.tie_rule, self.results), (self.other_rule, self.other)):
            for m in SPLIT_METRICS:
                split[rule, m] = split_by_ties(rr["cclb"][m], rr["ofulog_plus"][m], tied)
            same[rule] = rr["cclb"]["action"] == rr["ofulog_plus"]["action"]
        family = [c for c in self.configs if c.key in ("ofulog_plus", "cclb", "eps_cclb")]
        with timed(f"Figure 2's CCLB family on the {free_generator.feature_map} map"):
            free = run_configs(
                free_generator, family, T, self.seed, self.reps, alpha=self.alpha, tie_rule=self.tie_rule
            )
        free_tied = tied_rounds(free_generator, T, self.seed, self.reps) > 1
        return TieStudy(n_tied, split, same, free, free_tied, free_check, free_generator.feature_map)


def run_paper_experiments(
    generator: RoundGenerator,
    T: int,
    seed: int,
    reps: int,
    horizons: Sequence[int],
    tau: float,
    rho: float,
    eps: float,
    eps_values: Sequence[float],
    tau_values: Sequence[float],
    alpha: float,
    tie_rule: str,
    timed: Callable = contextlib.nullcontext,
) -> PaperRuns:
    """Every run of notebook ``cclb/04`` but the tie-free ones, on common random numbers: the
    configurations of :func:`~.experiments.paper_configs` and GLM-UCB at ``T``; CCLB and
    epsilon-CCLB at each of ``horizons`` below ``T``; OFULog+, CCLB, epsilon-CCLB and GLM-UCB at ``T``
    under the other tie rule.

    Parameters
    ----------
    generator : the round generator
    T, seed, reps : horizon, root seed and replications
    horizons : the shorter horizons of CCLB and epsilon-CCLB (those not below ``T`` are ignored)
    tau, rho, eps, eps_values, tau_values : as in :func:`~.experiments.paper_configs`
    alpha : the confidence level
    tie_rule : ``"random"`` or ``"fairer"``
    timed : a context manager factory ``timed(label)`` (e.g. ``nb.timed``) around each batch

    Returns
    -------
    PaperRuns
    """
    configs = paper_configs(T, tau, rho, eps, eps_values=eps_values, tau_values=tau_values)
    with timed("CCLB family, horizon T"):
        res = run_configs(generator, configs, T, seed, reps, alpha=alpha, tie_rule=tie_rule)
    with timed("GLM-UCB"):
        res["glm_ucb"] = run_glm_ucb(generator, T, seed, reps, tau, alpha=alpha, tie_rule=tie_rule)
    short = {}
    with timed("CCLB and eps-CCLB, shorter horizons"):
        for h in sorted(h for h in set(horizons) if h < T):
            family = [c for c in configs if c.key in ("cclb", "eps_cclb")]
            short[h] = run_configs(generator, family, h, seed, reps, alpha=alpha, tie_rule=tie_rule)
    other_rule = OTHER_RULE[tie_rule]
    fig2_configs = [c for c in configs if c.key in ("ofulog_plus", "cclb", "eps_cclb")]
    with timed(f"Figure 2 with tie_rule = {other_rule}"):
        other = run_configs(generator, fig2_configs, T, seed, reps, alpha=alpha, tie_rule=other_rule)
        other["glm_ucb"] = run_glm_ucb(generator, T, seed, reps, tau, alpha=alpha, tie_rule=other_rule)
    return PaperRuns(tuple(configs), res, short, other, tau, rho, tie_rule, other_rule, seed, reps, alpha)
