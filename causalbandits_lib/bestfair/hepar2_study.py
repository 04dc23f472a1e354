"""The runs and bookkeeping of notebook ``bestfair/05`` (HEPAR-II, the paper's §6 and Figure 5).

- :func:`network_facts`: the counts the paper prints about the network (nodes, arcs, degrees,
  observed nodes);
- :func:`gap_metrics`: the exact fairness gaps and means the notebook records;
- :func:`run_draw`: one draw of arm tables run through :func:`~.experiments.budget_curves` with the
  paper's ALLOCATE and with our "split" allocation at the paper's tolerance, and at the binding
  tolerance (our variant); the result, a :class:`Hepar2Draw`, knows its metrics and tables;
- :func:`allocation_metrics`: what the max-min LP gives the natural pulls (why CSR starves).

Run ``i`` of every algorithm at every budget draws from the same stream, as in
:func:`~.experiments.budget_curves`; a draw's runs are made in a fixed order (the paper's
ALLOCATE, then "split", then the binding tolerance), so its numbers do not depend on who calls it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .algorithms import ALGORITHMS, AlgorithmConfig
from .allocation import AllocationLP
from .estimators import WeightedEstimator
from .experiments import budget_curves
from .model import FairArmsProblem

__all__ = ["PAPER", "SPLIT", "CONFIGS", "network_facts", "gap_metrics", "Hepar2Draw", "run_draw", "allocation_metrics"]

#: the two allocations of Figure 5's panels: the paper's ALLOCATE and our "split"
PAPER, SPLIT = "paper's ALLOCATE", "split (ours)"
CONFIGS = {PAPER: AlgorithmConfig(), SPLIT: AlgorithmConfig(allocation="split")}


def network_facts(model: Any, observed: Sequence[str], sensitive: str = "sex") -> tuple[dict[str, Any], list[str]]:
    """The network's counts as the paper prints them, and the observed nodes.

    Parameters
    ----------
    model : DiscreteSCM
        The network (``nodes``, ``graph``, ``parents``).
    observed : sequence of str
        The nodes a pull observes besides the sensitive attribute.
    sensitive : str
        The sensitive attribute, always observed.

    Returns
    -------
    facts : dict
        ``nodes``, ``arcs``, ``average_degree`` (2 arcs / nodes), ``max_in_degree`` and ``observed``
        (the number of observed nodes).
    observed_nodes : list of str
        The observed nodes, sorted, the sensitive attribute included.
    """
    n_nodes, n_arcs = len(model.nodes), model.graph.number_of_edges()
    observed_nodes = sorted(set(observed) | {sensitive})
    facts = {
        "nodes": n_nodes,
        "arcs": n_arcs,
        "average_degree": 2 * n_arcs / n_nodes,
        "max_in_degree": max(len(model.parents(n)) for n in model.nodes),
        "observed": len(observed_nodes),
    }
    return facts, observed_nodes


def gap_metrics(problem: FairArmsProblem, extremes: dict[str, float], own_mu: float) -> dict[str, Any]:
    """The exact fairness gaps and means the notebook records (``hepar2.fairness_gap.*``,
    ``hepar2.mean.*``).

    Parameters
    ----------
    problem : FairArmsProblem
        The drawn arms.
    extremes : dict
        :func:`~.instances.hepar2.fairness_gap_extremes`: ``min``, ``max``, ``original_cpt``.
    own_mu : float
        The mean outcome under the network's own table of the intervened node.

    Returns
    -------
    dict of metric name to value.
    """
    return {
        "hepar2.fairness_gap.original_cpt": extremes["original_cpt"],
        "hepar2.fairness_gap.range": [float(problem.zeta.min()), float(problem.zeta.max())],
        "hepar2.fairness_gap.all_possible_arms": [extremes["min"], extremes["max"]],
        "hepar2.mean.original_cpt": own_mu,
        "hepar2.mean.arms": problem.mu,
    }


def _errors(curves) -> dict[str, np.ndarray]:
    """Per-run errors, shape ``(budgets, runs)``, of every algorithm of :func:`budget_curves`."""
    return {alg: np.stack([r.error for r in results]) for alg, results in curves.items()}


@dataclass(frozen=True)
class Hepar2Draw:
    """One draw of arm tables and the errors of the four algorithms on it.

    Attributes
    ----------
    problem : FairArmsProblem
    tolerance, binding_tolerance : float
        The paper's 𝓔 and ours, where the constraint binds.
    budgets : tuple of int
    errors : dict
        Allocation label (:data:`PAPER`, :data:`SPLIT`) to algorithm to per-run errors, bool
        ndarray of shape ``(len(budgets), n_runs)``.
    lost : dict
        Two-stage algorithm to whether ``k*`` was no longer in ``R`` when its screening ended
        (paper's ALLOCATE), same shape.
    binding : dict
        Algorithm to per-run errors at ``binding_tolerance`` (empty when no arm is fair there).
    lp : AllocationLP or None
        The LP the runs shared (None when they ran on worker processes).
    """

    problem: FairArmsProblem
    tolerance: float
    binding_tolerance: float
    budgets: tuple[int, ...]
    errors: dict[str, dict[str, np.ndarray]]
    lost: dict[str, np.ndarray]
    binding: dict[str, np.ndarray]
    lp: AllocationLP | None = field(default=None, compare=False, repr=False)

    @property
    def k_star(self) -> int:
        """The best fair arm at the paper's tolerance."""
        return self.problem.best_fair_arm(self.tolerance)

    @property
    def fair_b(self) -> np.ndarray:
        """Which arms are fair at the binding tolerance."""
        return self.problem.fair(self.binding_tolerance)

    @property
    def k_star_b(self) -> int:
        """The best fair arm at the binding tolerance (-1: none)."""
        return self.problem.best_fair_arm(self.binding_tolerance)

    def mean_errors(self, label: str = PAPER) -> dict[str, np.ndarray]:
        """Each algorithm's probability of error by budget (mean over runs) with allocation ``label``."""
        return {alg: err.mean(axis=1) for alg, err in self.errors[label].items()}

    def lost_share_of_errors(self) -> dict[str, float]:
        """For each two-stage baseline, the share of its erroneous runs (paper's ALLOCATE, pooled over
        the budgets) in which the screening had removed ``k*``; NaN when it never erred."""
        out = {}
        for alg, lost in self.lost.items():
            err = self.errors[PAPER][alg]
            out[alg] = lost[err].mean() if err.any() else float("nan")
        return out

    def binding_facts(self) -> dict[str, Any]:
        """The binding variant's exact facts: number of fair arms, ``k*``, the arm with the largest
        mean overall and the instance's gaps (:meth:`FairArmsProblem.gaps`)."""
        return {
            "n_fair": int(self.fair_b.sum()),
            "k_star": self.k_star_b,
            "best_overall": int(np.argmax(self.problem.mu)),
            **self.problem.gaps(self.binding_tolerance),
        }

    def metrics(self, instance: int = 0) -> dict[str, Any]:
        """The metrics the notebook records of this draw: every figure of the first draw
        (``instance`` 0), only the errors with the paper's ALLOCATE of the others
        (``hepar2.error_instance{instance + 1}.{alg}``)."""
        if instance:
            return {f"hepar2.error_instance{instance + 1}.{a}": e for a, e in self.mean_errors(PAPER).items()}
        out: dict[str, Any] = {f"hepar2.error.{a}": e for a, e in self.mean_errors(PAPER).items()}
        out.update({f"hepar2.split_allocation.error.{a}": e for a, e in self.mean_errors(SPLIT).items()})
        out.update({f"hepar2.best_arm_lost_in_screening.{a}": lost.mean(axis=1) for a, lost in self.lost.items()})
        out.update({f"hepar2.best_arm_lost_share_of_errors.{a}": s for a, s in self.lost_share_of_errors().items()})
        out["hepar2.binding.n_fair"] = int(self.fair_b.sum())
        out["hepar2.binding.best_arm"] = self.k_star_b
        out["hepar2.binding.gaps"] = self.problem.gaps(self.binding_tolerance)
        out.update({f"hepar2.binding.error.{a}": err.mean(axis=1) for a, err in self.binding.items()})
        return out

    def record(self, nb: Any, instance: int = 0) -> None:
        """Record :meth:`metrics` with ``nb.metric`` (``nb``: the notebook's session)."""
        for name, value in self.metrics(instance).items():
            nb.metric(name, value)


def run_draw(
    problem: FairArmsProblem,
    budgets: Sequence[int],
    tolerance: float,
    binding_tolerance: float,
    seed: int,
    n_runs: int,
    jobs: int = 1,
    scheduler: str | None = None,
    algorithms: Sequence[str] = ALGORITHMS,
) -> Hepar2Draw:
    """The four algorithms on one draw of arm tables: with the paper's ALLOCATE and with "split"
    at ``tolerance``, then (when some arm is fair there) with the paper's ALLOCATE at
    ``binding_tolerance``; one LP and one estimator shared by every run in this process.

    Returns
    -------
    Hepar2Draw
    """
    lp, est = AllocationLP(problem.allocation_matrices, problem.costs), WeightedEstimator(problem)
    k_star = problem.best_fair_arm(tolerance)
    kw = dict(lp=lp, estimator=est, jobs=jobs, scheduler=scheduler or None)
    errors, lost = {}, {}
    for label, cfg in CONFIGS.items():
        curves = budget_curves(problem, algorithms, budgets, tolerance, seed, n_runs, config=cfg, **kw)
        errors[label] = _errors(curves)
        if label == PAPER:  # did k* survive the fairness screening of the two-stage baselines?
            lost = {
                alg: np.stack([~r.remaining[:, int((r.stage == 1).sum()), k_star] for r in results])
                for alg, results in curves.items()
                if alg.startswith("TS")
            }
    binding = {}
    if problem.best_fair_arm(binding_tolerance) >= 0:
        binding = _errors(budget_curves(problem, algorithms, budgets, binding_tolerance, seed, n_runs, **kw))
    return Hepar2Draw(problem, tolerance, binding_tolerance, tuple(int(T) for T in budgets), errors, lost, binding, lp)


def allocation_metrics(lp: AllocationLP, n_arms: int, budgets: Sequence[int]) -> dict[str, Any]:
    """What the max-min LP gives each kind of pull when every arm remains, at the average-cost
    budget ``1/√T``: the fractions (natural, S = s, S = s') at the largest budget
    (``hepar2.allocation_fraction_by_kind``) and the expected natural pulls per run at every budget
    (``hepar2.expected_natural_pulls``, fraction × T).

    Returns
    -------
    dict of metric name to value.
    """
    everyone = np.ones(n_arms, dtype=bool)
    fractions = {T: lp.solve(everyone, 1 / math.sqrt(T))[0].sum(axis=1) for T in budgets}
    return {
        "hepar2.allocation_fraction_by_kind": fractions[budgets[-1]],
        "hepar2.expected_natural_pulls": [float(fractions[T][0] * T) for T in budgets],
    }
