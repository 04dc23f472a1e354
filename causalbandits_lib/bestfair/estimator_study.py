"""The measurements of notebook ``bestfair/01``: the estimators' identities, the divergences and
clipping evaluated exactly, and the Monte Carlo spread and coverage of the estimates.

- exact: :func:`counterfactual_gap_error` (the counterfactual gap against the difference of
  conditional means), :func:`importance_sampling_error` (Eq. 1 without clipping),
  :func:`divergence_facts` (the ranges of ``M`` and ``D`` and Eq. 20), :func:`clipped_bias`
  (Lemma 6 on exact expectations), :func:`dropped_probability` (how much a clip drops);
- sampled: :func:`spread_rank_correlation` (Spearman between ``M_k1`` and the spread of ``Ŷ_k``),
  :func:`theorem7_coverage` and :func:`informative_coverage` (Theorem 7's intervals), and
  :func:`sampled_facts`, both on one instance.

Nothing here draws random numbers: the cell counts come from :func:`~.experiments.draw_counts`.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .estimators import ESTIMATES, WeightedEstimator, clip_multiplier
from .model import FORCED_S, FORCED_S_PRIME, NATURAL, FairArmsProblem
from .theory import theorem7_interval

__all__ = [
    "truths",
    "counterfactual_gap_error",
    "importance_sampling_error",
    "divergence_facts",
    "clipped_bias",
    "dropped_probability",
    "spread_rank_correlation",
    "theorem7_coverage",
    "informative_coverage",
    "sampled_facts",
]


def truths(problem: FairArmsProblem) -> dict[str, np.ndarray]:
    """The exact value of each estimate of :data:`~.estimators.ESTIMATES`: ``μ``, ``ζ^{s,s'}``,
    ``ζ^{s',s}``, each of shape ``(K,)``."""
    return dict(zip(ESTIMATES, (problem.mu, problem.zeta, problem.zeta_reverse)))


def counterfactual_gap_error(instance: Any, n_arms: int = 3) -> float:
    """Largest ``|ζ_k (counterfactual query) − ζ_k (difference of conditional means)|`` over the
    first ``n_arms`` arms of a synthetic instance, the counterfactual answered by the core
    library's causal model of the same graph.

    Parameters
    ----------
    instance : SyntheticInstance
        ``p_x_s``, ``p_x_sp``, ``q`` and its ``problem``.
    n_arms : int
        How many arms to compare.

    Returns
    -------
    float
    """
    from .instances.synthetic import bernoulli_context_scm

    scm = bernoulli_context_scm(instance.p_x_s, instance.p_x_sp, instance.q[0])
    gaps = []
    for k in range(n_arms):
        arm = scm.intervene(soft={"V": (("X",), np.stack([1 - instance.q[k], instance.q[k]], axis=-1))})
        cf = arm.counterfactual(["Y"], do={"S": "s"}, evidence={"S": "s'"})[1]
        gaps.append(cf - arm.query(["Y"], evidence={"S": "s'"})[1])
    return float(np.max(np.abs(np.array(gaps) - instance.problem.zeta[:n_arms])))


def importance_sampling_error(estimator: WeightedEstimator, allocation: np.ndarray) -> float:
    """Largest ``|E[estimate] − truth|`` over the arms and the three estimates, without clipping,
    for pulls ``allocation`` (shape ``(3, K)``): zero up to rounding when Eq. 1 holds.

    Returns
    -------
    float
    """
    return max(
        float(np.max(np.abs(estimator.expected(allocation, None, which) - truth)))
        for which, truth in truths(estimator.problem).items()
    )


def divergence_facts(problem: FairArmsProblem) -> dict[str, float]:
    """The consequences of the divergences' definitions, measured: ``M_diag_max_abs_dev``
    (``max |M_kk − 1|``), ``M_min`` (smallest ``M_kj``, ``k ≠ j``), ``D_min`` (smallest ``D`` of
    both directions) and ``eq20_max_abs_dev``: ``max |1 + log(1 + D_f1(P_k‖P_j)) − M_kj|`` with
    ``D_f1 = E_j[f1(P_k/P_j)]``, ``f1(x) = x e^(x−1) − 1`` summed directly over the cells under arm
    ``j``'s natural pulls (``inf`` if that overflows).

    Returns
    -------
    dict of str to float
    """
    off = ~np.eye(problem.n_arms, dtype=bool)
    facts = {
        "M_diag_max_abs_dev": float(np.max(np.abs(np.diag(problem.M) - 1))),
        "M_min": float(problem.M[off].min()),
        "D_min": float(min(problem.D.min(), problem.D_reverse.min())),
    }
    r = problem.ratios  # (K, K, C): P_k / P_j
    with np.errstate(over="ignore"):
        d_f1 = np.einsum("jc,kjc->kj", problem.cell_probs[NATURAL], r * np.exp(r - 1.0) - 1.0)
        m_from_f1 = 1.0 + np.log1p(d_f1)
    finite = np.all(np.isfinite(m_from_f1))
    facts["eq20_max_abs_dev"] = float(np.nanmax(np.abs(m_from_f1 - problem.M))) if finite else float("inf")
    return facts


def clipped_bias(estimator: WeightedEstimator, allocation: np.ndarray, phases: Iterable[int]) -> dict[str, np.ndarray]:
    """Exact bias ``E[estimate] − truth`` of each clipped estimate at each phase for pulls
    ``allocation``.

    Returns
    -------
    dict of estimate to ndarray of shape ``(len(phases), K)``.
    """
    truth = truths(estimator.problem)
    bias: dict[str, list] = {w: [] for w in ESTIMATES}
    for phase in phases:
        for w in bias:
            bias[w].append(estimator.expected(allocation, int(phase), w) - truth[w])
    return {w: np.array(v) for w, v in bias.items()}


def dropped_probability(
    problem: FairArmsProblem, phases: Iterable[int], log_base: float = 2.0
) -> dict[str, np.ndarray]:
    """The largest probability, over the arms ``k``, that a pull of the cheap arm 1 is dropped from
    arm ``k``'s clipped estimate in each phase: ``Σ_c P_1(c) 1{size_k(c) > 2 log(2/ε) div_k1}`` with
    ``size = r_k1`` and ``div = M`` for the outcome (natural pulls), ``size = r_k1 |w − 1|`` and
    ``div = D`` for each fairness gap (its pool of forced pulls).

    Returns
    -------
    dict of estimate to ndarray of shape ``(len(phases),)``.
    """
    ratios = problem.ratios[:, 0, :]  # P_k / P_1 at each cell, (K, C)
    out = {}
    for name, pool, size, div in (
        ("outcome", NATURAL, ratios, problem.M[:, 0]),
        ("fairness", FORCED_S_PRIME, ratios * np.abs(problem.rho - 1), problem.D[:, 0]),
        ("fairness_reverse", FORCED_S, ratios * np.abs(problem.rho_reverse - 1), problem.D_reverse[:, 0]),
    ):
        p1 = problem.cell_probs[pool, 0]
        out[name] = np.array([np.max((size > clip_multiplier(int(ph), log_base) * div[:, None]) @ p1) for ph in phases])
    return out


def spread_rank_correlation(problem: FairArmsProblem, sd: np.ndarray) -> float:
    """Spearman's correlation (no ties assumed) between ``M_k1`` and the spread ``sd[k]`` of arm
    ``k``'s estimate, over the arms ``k ≠ 1``."""
    others = np.arange(1, problem.n_arms)
    ranks = [np.argsort(np.argsort(x)) for x in (problem.M[others, 0], np.asarray(sd)[others])]
    return float(np.corrcoef(ranks[0], ranks[1])[0, 1])


def theorem7_coverage(
    estimator: WeightedEstimator,
    counts: np.ndarray,
    n_pulls: int,
    alpha: float,
    log_base: float = 2.0,
    phases: Iterable[int] = range(1, 5),
) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]:
    """For each phase and estimate, the fraction of replicates (``counts``: shape ``(R, 3, K, C)``,
    pulls of the cheap arm 1 only, ``n_pulls`` of each kind) whose clipped estimate lies in Theorem 7's
    interval at probability ``1 − alpha`` (:func:`~.theory.theorem7_interval` with ``Z_k/τ = 1/M_k1``,
    ``1/D_k1``), and where that interval is informative.

    Returns
    -------
    dict of (phase, estimate) to (coverage, informative), each of shape ``(K,)``.
    """
    p = estimator.problem
    truth = truths(p)
    inv_div = dict(zip(ESTIMATES, (1 / p.M[:, 0], 1 / p.D[:, 0], 1 / p.D_reverse[:, 0])))
    coverage = {}
    for phase in phases:
        for w in ESTIMATES:
            values = estimator.estimate(counts, phase, w)  # (replicates, K)
            kind = "outcome" if w == "outcome" else "fairness"
            low, high, informative = theorem7_interval(truth[w], inv_div[w], n_pulls, phase, alpha, kind, log_base)
            coverage[(phase, w)] = (((values >= low) & (values <= high)).mean(axis=0), informative)
    return coverage


def informative_coverage(coverage: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The coverages of :func:`theorem7_coverage` where the interval is informative, in the order
    phase, estimate, arm."""
    return np.array([c for cov, inf in coverage.values() for c in cov[inf].tolist()])


def sampled_facts(
    problem: FairArmsProblem, counts: np.ndarray, n_pulls: int, alpha: float, log_base: float = 2.0
) -> tuple[float, np.ndarray]:
    """On one instance: :func:`spread_rank_correlation` of the unclipped ``Ŷ`` and the informative
    :func:`theorem7_coverage` cases, with a fresh estimator (clip levels in base 2).

    Returns
    -------
    rho : float
    coverage : ndarray
    """
    est = WeightedEstimator(problem)
    sd = est.estimate(counts, None, "outcome").std(axis=0, ddof=1)
    return spread_rank_correlation(problem, sd), informative_coverage(
        theorem7_coverage(est, counts, n_pulls, alpha, log_base)
    )
