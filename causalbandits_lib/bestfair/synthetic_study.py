"""The runs and bookkeeping of notebook ``bestfair/04`` (the synthetic Figures 3 and 6).

- :data:`FIG3`, :data:`FIG6`: the settings of the two figures; :func:`instance_stream`, the named
  stream of instance ``j`` of a setting;
- :func:`instance_metrics` and :func:`instance_table`: the exact facts of the drawn instances;
- :func:`run_synthetic`: the four algorithms on every instance in one batch of
  :func:`~.experiments.many_instance_errors`; the result, a :class:`SyntheticStudy`, knows its
  metrics, its tables and the per-run measurements the claims compare;
- :func:`run_binomial`: CSR-V2 on the binomial variant of every ablation instance
  (:class:`BinomialStudy`), and :func:`gap_table`, the table that compares it with the budget grid.

Nothing here draws random numbers: the instances come from the notebook's named streams and the runs
from :func:`~.experiments.many_instance_errors` (run ``i`` of every algorithm at every budget on the
same stream).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..core.tables import markdown_table
from .algorithms import ALGORITHMS, AlgorithmConfig
from .experiments import Case, first_budget_below, many_instance_errors, mean_se

__all__ = [
    "FIG3",
    "FIG6",
    "instance_stream",
    "instance_metrics",
    "instance_table",
    "SyntheticStudy",
    "run_synthetic",
    "BinomialStudy",
    "run_binomial",
    "below_from",
    "gap_table",
]

#: the settings of Figure 3 (no, loose and tight constraint) and of Figure 6 (the ablation)
FIG3 = ("no_constraint", "loose", "tight")
FIG6 = ("ablation_high_m_high_d", "ablation_low_m_high_d", "ablation_high_m_low_d")
#: the instance facts recorded as metrics, in the order they are recorded
INSTANCE_FACTS = ("n_feasible", "outcome_gap", "fairness_gap", "M_to_cheap_range", "D_to_cheap_range", "best_fair_arm")


def instance_stream(name: str, j: int) -> str:
    """The named stream of instance ``j`` (from 0) of setting ``name``: ``instance/<name>`` for the
    first (the stream earlier versions of the notebook used), ``instance/<name>/<j>`` for the others."""
    return f"instance/{name}" if j == 0 else f"instance/{name}/{j}"


def instance_metrics(instances: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """``synthetic.<setting>.<fact>`` of the first instance of every setting and
    ``synthetic.<setting>.<fact>.instance<j>`` of the others, for the facts of :data:`INSTANCE_FACTS`.

    Parameters
    ----------
    instances : dict of setting to list of SyntheticInstance
        Each instance's ``facts`` (a dict).

    Returns
    -------
    dict of metric name to value.
    """
    return {
        f"synthetic.{name}.{key}" + (f".instance{j + 1}" if j else ""): inst.facts[key]
        for name, insts in instances.items()
        for j, inst in enumerate(insts)
        for key in INSTANCE_FACTS
    }


def instance_table(instances: Mapping[str, Sequence[Any]], n_arms: int = 30) -> str:
    """One Markdown row per instance: tolerance, feasible arms, ``k*`` (from 1), the gaps, the ranges
    of the divergences to the cheap arm and the paper's §5.1 ratio ``max(M_k1, D_k1)/√K``."""
    rows = []
    for name, insts in instances.items():
        for j, inst in enumerate(insts):
            f = inst.facts
            (m_lo, m_hi), (d_lo, d_hi) = f["M_to_cheap_range"], f["D_to_cheap_range"]
            rows.append([
                name, j + 1, f"{f['tolerance']:g}", f["n_feasible"], f"arm {f['best_fair_arm'] + 1}",
                f"{f['outcome_gap']:.3f}", f"{f['fairness_gap']:.3f}",
                f"{m_lo:.1f}–{m_hi:.1f}", f"{d_lo:.1f}–{d_hi:.1f}",
                f"{max(m_hi, d_hi) / math.sqrt(n_arms):.2f}",
            ])  # fmt: skip
    header = [
        "setting",
        "instance",
        "𝓔",
        "feasible",
        "k*",
        "outcome gap",
        "fairness gap",
        "M_k1",
        "D_k1",
        "max M_k1/√K",
    ]
    return markdown_table(header, rows, name="synthetic instances")


@dataclass(frozen=True)
class SyntheticStudy:
    """The per-run errors of every algorithm on every instance of every setting.

    Attributes
    ----------
    budgets : tuple of int
    errors : dict
        Setting to one dict per instance of algorithm to bool ndarray ``(len(budgets), runs)``
        (``chosen != k*``).
    lost : dict
        Setting to one dict per instance of two-stage algorithm to whether ``k*`` was no longer in
        ``R`` when the screening ended, same shape.
    algorithms : tuple of str
    """

    budgets: tuple[int, ...]
    errors: dict[str, list[dict[str, np.ndarray]]]
    lost: dict[str, list[dict[str, np.ndarray]]]
    algorithms: tuple[str, ...] = tuple(ALGORITHMS)

    @property
    def n_instances(self) -> int:
        """Instances per setting."""
        return len(next(iter(self.errors.values())))

    def grid_runs(self, name: str, j: int, alg: str) -> np.ndarray:
        """Each run's mean error over the budget grid on instance ``j`` of setting ``name``."""
        return self.errors[name][j][alg].mean(axis=0)

    def final_runs(self, name: str, j: int, alg: str) -> np.ndarray:
        """Each run's error (0 or 1, as floats) at the largest budget on instance ``j``."""
        return self.errors[name][j][alg][-1].astype(float)

    def pooled(self, name: str) -> dict[str, np.ndarray]:
        """Every instance's runs side by side, shape ``(budgets, n_instances · runs)``, for the figures."""
        return {alg: np.concatenate([e[alg] for e in self.errors[name]], axis=1) for alg in self.algorithms}

    def mean_curve(self, name: str, alg: str) -> np.ndarray:
        """The probability of error by budget, mean over the instances of each instance's mean."""
        return np.mean([e[alg].mean(axis=1) for e in self.errors[name]], axis=0)

    def lost_curve(self, name: str, alg: str) -> np.ndarray:
        """The fraction of runs whose screening removed ``k*``, by budget, mean over the instances."""
        return np.mean([lost[alg].mean(axis=1) for lost in self.lost[name]], axis=0)

    def grid_means(self, name: str) -> dict[str, list[dict[str, float]]]:
        """Per algorithm, each instance's mean and standard error of :meth:`grid_runs`."""
        return {
            alg: [mean_se(self.grid_runs(name, j, alg)) for j in range(self.n_instances)] for alg in self.algorithms
        }

    def final_means(self, name: str) -> dict[str, list[dict[str, float]]]:
        """Per algorithm, each instance's mean and standard error of :meth:`final_runs`."""
        return {
            alg: [mean_se(self.final_runs(name, j, alg)) for j in range(self.n_instances)] for alg in self.algorithms
        }

    def metrics(self) -> dict[str, Any]:
        """``synthetic.budgets``, ``synthetic.n_instances`` and per setting the pooled curve
        (``error``), each instance's (``error_by_instance``) and the screening losses of the
        two-stage baselines (``best_arm_lost_in_screening``)."""
        out: dict[str, Any] = {"synthetic.budgets": list(self.budgets), "synthetic.n_instances": self.n_instances}
        for name in self.errors:
            for alg in self.algorithms:
                out[f"synthetic.{name}.error.{alg}"] = self.mean_curve(name, alg)
                out[f"synthetic.{name}.error_by_instance.{alg}"] = [e[alg].mean(axis=1) for e in self.errors[name]]
            for alg in ("TS-V1", "TS-V2"):
                out[f"synthetic.{name}.best_arm_lost_in_screening.{alg}"] = self.lost_curve(name, alg)
        return out

    def record(self, nb: Any) -> None:
        """Record :meth:`metrics` with ``nb.metric`` (``nb``: the notebook's session)."""
        for name, value in self.metrics().items():
            nb.metric(name, value)

    def grid_table(self) -> str:
        """Markdown: per instance, each algorithm's mean error over the grid and CSR-V2's at the
        largest budget."""
        header = [
            "setting",
            "instance",
            *(f"{a} grid mean" for a in self.algorithms),
            f"CSR-V2 at T = {self.budgets[-1]}",
        ]
        rows = [
            [name, j + 1, *(f"{e[a].mean():.3f}" for a in self.algorithms), f"{e['CSR-V2'][-1].mean():.3f}"]
            for name in self.errors
            for j, e in enumerate(self.errors[name])
        ]
        return markdown_table(header, rows, name="grid means by instance")

    def screening_table(self) -> str:
        """Markdown: per setting, the fraction of runs whose screening removed ``k*`` (TS-V1, then
        TS-V2), by budget, mean over the instances."""
        header = ["setting", *(f"{alg}, T={T}" for alg in ("TS-V1", "TS-V2") for T in self.budgets)]
        rows = [
            [name, *(f"{v:.2f}" for alg in ("TS-V1", "TS-V2") for v in self.lost_curve(name, alg))]
            for name in self.lost
        ]
        return markdown_table(header, rows, name="k* lost in screening")


def run_synthetic(
    instances: Mapping[str, Sequence[Any]],
    budgets: Sequence[int],
    seed: int,
    n_runs: int,
    n_runs_tight: int,
    config: AlgorithmConfig | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
) -> SyntheticStudy:
    """The four algorithms on every instance (``n_runs_tight`` runs in the ``tight`` setting,
    ``n_runs`` elsewhere), every instance's tasks in one batch of
    :func:`~.experiments.many_instance_errors` (the worker processes stay busy to the end).

    Returns
    -------
    SyntheticStudy
    """
    cases = [
        Case(inst.problem, inst.setting.tolerance, n_runs_tight if name == "tight" else n_runs)
        for name, insts in instances.items()
        for inst in insts
    ]
    done = iter(
        many_instance_errors(cases, ALGORITHMS, budgets, seed, config=config, jobs=jobs, scheduler=scheduler or None)
    )
    errors: dict[str, list] = {}
    lost: dict[str, list] = {}
    for name, insts in instances.items():
        errors[name], lost[name] = [], []
        for _ in insts:
            err, lost_j = next(done)
            errors[name].append(err)
            lost[name].append(lost_j)
    return SyntheticStudy(tuple(int(T) for T in budgets), errors, lost)


@dataclass(frozen=True)
class BinomialStudy:
    """CSR-V2 on the binomial variant of every ablation instance.

    Attributes
    ----------
    errors : dict
        Setting to one bool ndarray ``(len(budgets), n_runs)`` per instance.
    ranges : dict
        Setting to one ``(M_to_cheap_range, D_to_cheap_range)`` per instance.
    """

    errors: dict[str, list[np.ndarray]]
    ranges: dict[str, list[tuple[Any, Any]]]

    def metrics(self) -> dict[str, Any]:
        """``synthetic.<setting>.binomial.error.CSR-V2`` (each instance's curve) and the binomial
        divergence ranges ``binomial.M_to_cheap_range``, ``binomial.D_to_cheap_range``."""
        out: dict[str, Any] = {}
        for name in self.errors:
            out[f"synthetic.{name}.binomial.error.CSR-V2"] = [e.mean(axis=1) for e in self.errors[name]]
            out[f"synthetic.{name}.binomial.M_to_cheap_range"] = [r[0] for r in self.ranges[name]]
            out[f"synthetic.{name}.binomial.D_to_cheap_range"] = [r[1] for r in self.ranges[name]]
        return out

    def record(self, nb: Any) -> None:
        """Record :meth:`metrics` with ``nb.metric``."""
        for name, value in self.metrics().items():
            nb.metric(name, value)


def run_binomial(
    instances: Mapping[str, Sequence[Any]],
    levels: int,
    budgets: Sequence[int],
    seed: int,
    n_runs: int,
    config: AlgorithmConfig | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    settings: Sequence[str] = FIG6,
) -> BinomialStudy:
    """CSR-V2 on :func:`~.instances.synthetic.binomial_variant` (``levels`` values of ``V``) of every
    instance of ``settings``, ``n_runs`` runs, in one batch.

    Returns
    -------
    BinomialStudy
    """
    from .instances.synthetic import binomial_variant

    variants = {name: [binomial_variant(inst, levels) for inst in instances[name]] for name in settings}
    cases = [
        Case(var.problem, inst.setting.tolerance, n_runs)
        for name in settings
        for var, inst in zip(variants[name], instances[name])
    ]
    done = iter(
        many_instance_errors(cases, ("CSR-V2",), budgets, seed, config=config, jobs=jobs, scheduler=scheduler or None)
    )
    errors: dict[str, list] = {}
    ranges: dict[str, list] = {}
    for name in settings:
        errors[name], ranges[name] = [], []
        for var in variants[name]:
            errors[name].append(next(done)[0]["CSR-V2"])
            ranges[name].append((var.facts["M_to_cheap_range"], var.facts["D_to_cheap_range"]))
    return BinomialStudy(errors, ranges)


def below_from(study: SyntheticStudy, level: float, settings: Sequence[str], alg: str = "CSR-V2") -> dict[str, list]:
    """Per setting and instance, the smallest budget of the grid from which ``alg``'s mean error stays
    below ``level`` (:func:`~.experiments.first_budget_below`; None if it never does)."""
    return {name: [first_budget_below(study.budgets, e[alg], level) for e in study.errors[name]] for name in settings}


def gap_table(study: SyntheticStudy, binomial: BinomialStudy, below: Mapping[str, list]) -> str:
    """Markdown: per ablation instance, CSR-V2's error by budget on our instance and on its binomial
    variant, the budget from which ours stays below the level of ``below``, and the binomial
    divergence ranges."""
    header = ["setting", "instance", "CSR-V2 by budget (ours)", "below 0.75 from T =", "CSR-V2 by budget (binomial)",
              "binomial M_k1", "binomial D_k1"]  # fmt: skip
    rows = []
    for name in binomial.errors:
        for j, e in enumerate(binomial.errors[name]):
            (m_lo, m_hi), (d_lo, d_hi) = binomial.ranges[name][j]
            rows.append([
                name, j + 1, np.round(study.errors[name][j]["CSR-V2"].mean(axis=1), 2).tolist(), below[name][j],
                np.round(e.mean(axis=1), 2).tolist(), f"{m_lo:.3g}–{m_hi:.3g}", f"{d_lo:.3g}–{d_hi:.3g}",
            ])  # fmt: skip
    return markdown_table(header, rows, name="Figure 6 gap")
