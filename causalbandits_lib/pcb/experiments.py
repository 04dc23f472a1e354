"""The online experiments of the chapter (notebook ``pcb/04``): Figure 4 and UCB-PCB.

- :func:`linucb_family`: the contextual algorithms compared in Figure 4 (LinUCB, LinUCB-PCB with
  and without our margin, the warm-started baselines), as factories;
- :func:`compare_policies`: run several policies on the same environment, seeds and runs through
  :func:`~causalbandits_lib.core.runner.simulate`;
- :func:`figure4`: Figure 4 on a contextual bandit with given arm means and priors; with
  :func:`table1_world` for the world the printed Table 1 describes;
- :func:`ucb_comparison`: UCB against UCB-PCB on the non-contextual bandit, with
  :func:`arm_bounds` (the per-context bounds averaged over ``P(c)``) and
  :func:`eliminated_arm_pulls` (Lemma 9's count);
- the studies of the paper's remarks (ours): :func:`alpha_lambda_study` (Figure 4 at other
  values of LinUCB's open α and λ), :func:`margin_study` (LinUCB-PCB with bounds of a given
  half-width around the truth: ``N_pcb^-`` and looseness varied, with :func:`symmetric_bounds`),
  :func:`bias_study` (LinUCB against LinUCB-PCB on models with other levels of selection and
  confounding); :func:`contexts_seen`, :func:`pulled_arms` and :func:`eliminated_pair_pulls`
  (Lemma 6's count: pulls of pairs whose upper bound is below the best mean);
- the checks behind the notebook's claims: :func:`check_lower` (a paired ordering of two
  algorithms' per-run final regrets; the algorithms share contexts and rewards run by run),
  :func:`all_lower` (one algorithm below several) and :func:`combine_parts` (one claim made of
  several checks); :func:`regret_bound_verdict` (a regret bound tested only at the horizons where
  it is below the trivial ``Δmax·t``) and :func:`interval_bound_verdict` (intervals on
  probabilities tested only in the cells where they are narrower than half of ``[0, 1]``);
- what the notebook records and shows of each study (result objects with ``record(nb)``, which
  calls only ``nb.metric``/``nb.curve``, and tables): :func:`learn_priors` (:class:`LearnedPriors`,
  each run's priors), :class:`RegretComparison` (final regrets, their table, metrics and curves),
  :class:`SettingComparison` (Figure 4 at other α and λ, the verdicts with their sensitivity),
  :func:`theorem5_norms` and :func:`theorem8_bounds` (the bounds' quantities), and the metric
  dictionaries and tables of Lemma 6, the margin study, the bias levels and the Table 1 world
  (:func:`lemma6_metrics`, :func:`margin_metrics`, :func:`margin_table`, :func:`bias_metrics`,
  :func:`bias_table`, :func:`warm_start_picks_best`); :func:`mean_se` (a claim's measurement).

Every run ``i`` uses the prior information of offline data set ``i`` (the priors carry a leading
axis over global run indices), so a run gets the same numbers alone or among others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..core import checks
from ..core.checks import Verdict
from ..core.environments import BernoulliBandit, ContextualBernoulliBandit
from ..core.protocols import Environment, Policy
from ..core.runner import SimulationResult, simulate
from ..core.scm import DiscreteSCM
from ..core.streams import RunStreams, run_indices
from .algorithms import ClippedUCB, LinUCB, LinUCBConfig, arm_context_features
from .estimators import coverage, marginal_bounds, n_eliminated, offline_priors
from .model import (
    N_ARMS,
    N_CONTEXTS,
    TABLE1_PRINTED,
    conditional_causal_effects,
    context_probabilities,
    selected_observed_distribution,
)
from .offline import offline_count_tables
from .theory import effective_feature_norm, linucb_pcb_regret_bound, ucb_pcb_regret_bound

__all__ = [
    "linucb_family",
    "compare_policies",
    "contextual_environment",
    "figure4",
    "table1_world",
    "arm_bounds",
    "ucb_comparison",
    "eliminated_arm_pulls",
    "all_lower",
    "regret_bound_verdict",
    "interval_bound_verdict",
    "contexts_seen",
    "pulled_arms",
    "eliminated_pair_pulls",
    "alpha_lambda_study",
    "symmetric_bounds",
    "margin_study",
    "bias_study",
    "mean_se",
    "LearnedPriors",
    "learn_priors",
    "RegretComparison",
    "SettingComparison",
    "warm_start_picks_best",
    "Theorem5Norms",
    "theorem5_norms",
    "Theorem8Bounds",
    "theorem8_bounds",
    "lemma6_pulls",
    "lemma6_metrics",
    "margin_metrics",
    "margin_table",
    "bias_metrics",
    "bias_table",
]


def linucb_family(
    features: np.ndarray, priors: Mapping, alpha: float, lam: float, clip: str = "both", one_weight: bool = True
) -> dict[str, Callable[[], LinUCB]]:
    """Factories of the contextual algorithms compared in Figure 4, keyed by name.

    ``LinUCB``; ``LinUCB-PCB`` (bounds ``lower``/``upper``); ``LinUCB-PCB_plugin`` (if the priors
    have plug-in bounds); ``LinUCB_Biased`` and ``LinUCB_CP`` warm-started with ``n₀`` = the logged
    cell count; with ``one_weight`` also ``LinUCB_Biased_n1`` and ``LinUCB_CP_n1`` with ``n₀ = 1``.
    Only the LinUCB-PCB variants are clipped (``clip``); the others use ``clip="none"``.

    Parameters
    ----------
    features : ndarray, shape (n_contexts, n_arms, d)
    priors : mapping
        ``[run, context, arm]`` arrays (or ``[context, arm]``, shared) as
        :func:`~causalbandits_lib.pcb.estimators.offline_priors` returns them: ``lower``, ``upper``,
        optionally ``lower_plugin``/``upper_plugin``, ``biased``, ``cp``, ``count``.
    alpha, lam, clip
        The knobs of :class:`~causalbandits_lib.pcb.algorithms.LinUCBConfig`.
    """
    plain = LinUCBConfig(alpha, lam)
    clipped = LinUCBConfig(alpha, lam, clip=clip)
    out = {
        "LinUCB": lambda: LinUCB(features, plain),
        "LinUCB-PCB": lambda: LinUCB(features, clipped, lower=priors["lower"], upper=priors["upper"]),
    }
    if "upper_plugin" in priors:
        out["LinUCB-PCB_plugin"] = lambda: LinUCB(
            features, clipped, lower=priors["lower_plugin"], upper=priors["upper_plugin"]
        )
    for name, key in (("Biased", "biased"), ("CP", "cp")):
        out[f"LinUCB_{name}"] = (
            lambda k: lambda: LinUCB(features, plain, warm_weight=priors["count"], warm_reward=priors[k])
        )(key)
    if one_weight:
        for name, key in (("Biased", "biased"), ("CP", "cp")):
            ones = np.ones(np.shape(priors[key])[-2:])
            out[f"LinUCB_{name}_n1"] = (
                lambda k: lambda: LinUCB(features, plain, warm_weight=ones, warm_reward=priors[k])
            )(key)
    return out


def compare_policies(
    make_env: Callable[[], Environment],
    policies: Mapping[str, Callable[[], Policy]],
    T: int,
    seed: int,
    n_runs: int,
    metrics: Sequence[str] = ("regret",),
) -> dict[str, SimulationResult]:
    """Simulate every policy of ``policies`` (name to factory) against a fresh environment with the
    same ``T``, ``seed`` and runs, so all face the same contexts and reward noise; in the order of
    ``policies``."""
    return {
        name: simulate(make_env(), make(), T, seed, n_runs=n_runs, metrics=metrics) for name, make in policies.items()
    }


def contextual_environment(p_context: np.ndarray, means: np.ndarray) -> ContextualBernoulliBandit:
    """The contextual Bernoulli bandit with context distribution ``p_context`` and arm means
    ``means`` indexed ``[arm, context]`` (the chapter's layout; the environment takes the
    transpose)."""
    return ContextualBernoulliBandit(p_context, np.asarray(means).T)


def figure4(
    p_context: np.ndarray,
    means: np.ndarray,
    features: np.ndarray,
    priors: Mapping,
    T: int,
    seed: int,
    n_runs: int,
    alpha: float,
    lam: float,
    clip: str = "both",
    one_weight: bool = True,
    metrics: Sequence[str] = ("regret",),
) -> dict[str, SimulationResult]:
    """Figure 4: the algorithms of :func:`linucb_family` on the contextual bandit whose arm means
    are ``means`` (``[arm, context]``), each for ``n_runs`` runs of ``T`` rounds.

    Returns
    -------
    dict of algorithm name to SimulationResult (``metrics`` kept per round).
    """
    family = linucb_family(features, priors, alpha, lam, clip, one_weight=one_weight)
    return compare_policies(lambda: contextual_environment(p_context, means), family, T, seed, n_runs, metrics)


def table1_world(model: DiscreteSCM, n_draws: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The world the printed Table 1 describes: its Truth column as the arm means, its
    ``[lb, ub]`` as prior bounds, its CP and Biased columns as warm starts, with ``n₀`` the expected
    logged count of each cell among ``n_draws`` units of ``model`` (ours).

    Returns
    -------
    means : ndarray, shape (4, 4)
        ``[arm, context]``.
    priors : dict
        ``lower``, ``upper``, ``cp``, ``biased``, ``count``, each ``[context, arm]`` (shared by
        every run), as :func:`linucb_family` takes them.
    """
    printed = {k: v.reshape(N_ARMS, N_CONTEXTS) for k, v in TABLE1_PRINTED.items()}  # (arm, context)
    expected_counts = (
        n_draws
        * selected_observed_distribution(model).sum(axis=(-2, -1)).reshape(N_ARMS, N_CONTEXTS)
        * float(model.query(["S"])[1])
    )
    world = {
        "lower": printed["lb"].T,
        "upper": printed["ub"].T,
        "cp": printed["cp"].T,
        "biased": printed["biased"].T,
        "count": expected_counts.T,
    }
    return printed["truth"], world


def arm_bounds(priors: Mapping, p_context: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the non-contextual arm means ``P(Y=1 | do(x_a))`` from the per-context prior
    bounds (``[run, context, arm]``): :func:`~causalbandits_lib.pcb.estimators.marginal_bounds`,
    shape ``(n_runs, 4)`` each."""
    return marginal_bounds(np.swapaxes(priors["lower"], -1, -2), np.swapaxes(priors["upper"], -1, -2), p_context)


def ucb_comparison(
    arm_means: np.ndarray, lower: np.ndarray, upper: np.ndarray, T: int, seed: int, n_runs: int
) -> dict[str, SimulationResult]:
    """UCB and UCB-PCB (Algorithm 6, prior bounds ``[lower, upper]`` per run) on the Bernoulli
    bandit with ``arm_means``, ``δ = 1/T²``; per-round regret kept."""
    policies = {
        "UCB": lambda: ClippedUCB(len(arm_means), T),
        "UCB-PCB": lambda: ClippedUCB(len(arm_means), T, lower=lower, upper=upper),
    }
    return compare_policies(lambda: BernoulliBandit(arm_means), policies, T, seed, n_runs, ("regret",))


def eliminated_arm_pulls(regret: np.ndarray, arm_means: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Pulls per run of the arms whose prior upper bound lies below the best mean (Lemma 9).

    A round's regret identifies the arm pulled when the gaps are distinct, so the pulls of arm
    ``a`` are the rounds whose regret equals its gap.

    Parameters
    ----------
    regret : ndarray, shape (n_runs, T)
        Per-round regret.
    arm_means : ndarray, shape (n_arms,)
    upper : ndarray, shape (n_runs, n_arms)
        Each run's prior upper bounds.
    """
    gaps = arm_means.max() - arm_means
    eliminated = upper < arm_means.max()  # (run, arm)
    return np.array(
        [sum(np.sum(regret[r] == gaps[a]) for a in np.flatnonzero(eliminated[r])) for r in range(len(regret))]
    )


# -- Lemma 6 and the studies of the paper's remarks ----------------------------------------------


def contexts_seen(p_context: np.ndarray, means: np.ndarray, T: int, seed: int, n_runs: int) -> np.ndarray:
    """The contexts of every run and round that :func:`figure4`'s environment shows for ``seed``
    (replayed from the environment's own named stream, as :func:`~causalbandits_lib.core.runner.simulate`
    resets it), shape ``(n_runs, T)``."""
    env = contextual_environment(p_context, means)
    env.reset(RunStreams(seed, run_indices(n_runs, None)).child("env/"))
    return np.stack([env.observe(t) for t in range(int(T))], axis=1)


def pulled_arms(regret: np.ndarray, contexts: np.ndarray, means: np.ndarray) -> np.ndarray:
    """The arm pulled in every run and round, read off the per-round regret: in context ``c`` the
    arm whose gap ``max_a μ_{a,c} - μ_{a,c}`` equals the round's regret.

    Raises
    ------
    ValueError
        If two arms share a gap in some context seen (the arm cannot be read off), or a round's
        regret matches no arm.
    """
    gaps = np.asarray(means).max(axis=0) - np.asarray(means)  # (arm, context)
    match = np.isclose(gaps[:, contexts], np.asarray(regret)[None], rtol=0.0, atol=1e-12)  # (arm, run, T)
    n_match = match.sum(axis=0)
    if np.any(n_match != 1):
        raise ValueError("the regret does not identify the arm pulled (gaps shared by two arms, or no arm matches)")
    return match.argmax(axis=0)


def eliminated_pair_pulls(arms: np.ndarray, contexts: np.ndarray, upper: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Pulls per run of (arm, context) pairs whose prior upper bound is below the context's best
    mean, ``U_{a,c} < μ*_c`` (Lemma 6 says they are never pulled).

    Parameters
    ----------
    arms, contexts : ndarray, shape (n_runs, T)
    upper : ndarray, shape (n_runs, n_contexts, n_arms) or (n_contexts, n_arms)
        Each run's prior upper bounds (``[run, context, arm]``, as the priors hold them).
    means : ndarray, shape (n_arms, n_contexts)
    """
    arms, contexts = np.asarray(arms), np.asarray(contexts)
    best = np.asarray(means).max(axis=0)  # (context,)
    up = np.broadcast_to(np.asarray(upper, dtype=float), (arms.shape[0], N_CONTEXTS, N_ARMS))
    eliminated = up < best[None, :, None]  # (run, context, arm)
    return eliminated[np.arange(arms.shape[0])[:, None], contexts, arms].sum(axis=1)


def alpha_lambda_study(
    p_context: np.ndarray,
    means: np.ndarray,
    features: np.ndarray,
    priors: Mapping,
    T: int,
    seed: int,
    n_runs: int,
    settings: Sequence[tuple[float, float]],
    clip: str = "both",
) -> dict[tuple[float, float], dict[str, np.ndarray]]:
    """Figure 4's final regrets at each ``(alpha, lam)`` of ``settings`` (the same runs, contexts
    and rewards as :func:`figure4`): ``{(alpha, lam): {algorithm: final regret per run}}``."""
    out = {}
    for alpha, lam in settings:
        res = figure4(p_context, means, features, priors, T, seed, n_runs, alpha, lam, clip)
        out[(float(alpha), float(lam))] = {k: r.final() for k, r in res.items()}
    return out


def symmetric_bounds(means: np.ndarray, half_width: float) -> dict[str, np.ndarray]:
    """Prior bounds ``[μ - w, μ + w]`` clipped to ``[0, 1]`` around the true means ``μ``
    (``[arm, context]``), in the ``[context, arm]`` layout of the priors: ``lower``, ``upper``.
    A pair is eliminated (``U < μ*``) exactly when its gap exceeds ``w``."""
    if not float(half_width) >= 0:
        raise ValueError(f"half_width={half_width!r} must be non-negative")
    mu = np.asarray(means, dtype=float).T
    return {"lower": np.clip(mu - half_width, 0.0, 1.0), "upper": np.clip(mu + half_width, 0.0, 1.0)}


def margin_study(
    p_context: np.ndarray,
    means: np.ndarray,
    features: np.ndarray,
    half_widths: Sequence[float],
    T: int,
    seed: int,
    n_runs: int,
    alpha: float,
    lam: float,
    clip: str = "both",
) -> tuple[dict[float, np.ndarray], dict[float, int]]:
    """LinUCB-PCB with the bounds of :func:`symmetric_bounds` at each half-width (the same runs,
    contexts and rewards as :func:`figure4`).

    Returns
    -------
    final : dict of half-width to the final regret per run
    n_minus : dict of half-width to ``N_pcb^-``, the pairs the bounds eliminate
    """
    config = LinUCBConfig(alpha, lam, clip=clip)
    final, n_minus = {}, {}
    for w in half_widths:
        b = symmetric_bounds(means, w)
        res = simulate(
            contextual_environment(p_context, means),
            LinUCB(features, config, lower=b["lower"], upper=b["upper"]),
            T,
            seed,
            n_runs=n_runs,
            metrics=("regret",),
        )
        final[float(w)] = res.final()
        n_minus[float(w)] = int(n_eliminated(b["upper"].T, means))
    return final, n_minus


def bias_study(
    models: Mapping[str, DiscreteSCM],
    features: np.ndarray,
    T: int,
    seed: int,
    n_runs: int,
    n_draws: int,
    alpha: float,
    lam: float,
    clip: str,
    level: float,
    simultaneous: bool,
) -> dict[str, dict]:
    """LinUCB against LinUCB-PCB on each model of ``models`` (e.g. :func:`~.model.compound_bias_model`
    at several levels of selection and confounding): every run learns its bounds (the sound bound
    with the Clopper-Pearson margin) from its own offline log of ``n_draws`` units of that model,
    and faces that model's conditional causal effects as arm means.

    Returns
    -------
    dict of model name to ``{"LinUCB": final regrets, "LinUCB-PCB": final regrets,
    "n_eliminated": pairs eliminated per run, "covered": whether each run's bounds contain all 16
    truths}``.
    """
    out = {}
    for name, model in models.items():
        truth = conditional_causal_effects(model)
        p_context = context_probabilities(model)
        data = offline_count_tables(model, n_draws, n_runs, seed)
        priors = offline_priors(data.selected, level, simultaneous)
        family = linucb_family(features, priors, alpha, lam, clip, one_weight=False)
        policies = {k: family[k] for k in ("LinUCB", "LinUCB-PCB")}
        res = compare_policies(lambda: contextual_environment(p_context, truth), policies, T, seed, n_runs)
        lo, hi = np.swapaxes(priors["lower"], -1, -2), np.swapaxes(priors["upper"], -1, -2)
        out[name] = {
            "LinUCB": res["LinUCB"].final(),
            "LinUCB-PCB": res["LinUCB-PCB"].final(),
            "n_eliminated": n_eliminated(hi, truth),
            "covered": ((lo <= truth) & (truth <= hi)).all(axis=(-2, -1)),
        }
    return out


# -- the checks behind the claims ----------------------------------------------------------------


def all_lower(best: str, others: Sequence[str], final: Mapping[str, np.ndarray]) -> Verdict:
    """``best``'s per-run final regret below each of ``others``', each pair by :func:`check_lower`."""
    return checks.check_parts(
        {f"{best} < {o}": checks.check_paired_lower(final[best], final[o], (best, o)) for o in others},
        f"{best} < each of {', '.join(others)} by more than 2 standard errors of the paired differences",
    )


def regret_bound_verdict(
    curves: np.ndarray,
    bound: Callable[[np.ndarray], np.ndarray],
    gap_max: float,
    what: str,
    n_horizons: int = 30,
) -> Verdict:
    """A cumulative-regret bound against the mean measured regret, tested only where it is below
    the trivial bound ``Δmax·t``: :func:`~causalbandits_lib.core.checks.check_bound_curve` at
    ``n_horizons`` log-spaced rounds, with the smallest horizon from which the bound would be
    informative (:func:`~causalbandits_lib.core.checks.informative_horizon`, None up to 10^12).

    ``curves`` are per-run cumulative regrets, shape ``(n_runs, T)``; ``bound`` maps horizons to
    the bound."""
    curves = np.asarray(curves, dtype=float)
    T = curves.shape[1]
    t = np.unique(np.geomspace(1, T, n_horizons).astype(int))
    mean = curves[:, t - 1].mean(axis=0)
    informative_from = checks.informative_horizon(
        lambda h: float(np.asarray(bound(np.array([h], dtype=float)))[0]), lambda h: gap_max * h
    )
    return checks.check_bound_curve(
        t, mean, np.asarray(bound(t.astype(float)), float), gap_max * t, what, informative_from=informative_from
    )


def interval_bound_verdict(lower, upper, effect, what: str) -> Verdict:
    """Intervals ``[lower, upper]`` on probabilities claimed to contain ``effect``, cell by cell,
    tested only where informative: ``[0, 1]`` contains every probability without any theorem, so a
    cell counts only when its interval is narrower than half of ``[0, 1]`` (the book's rule for
    bounds, :data:`~causalbandits_lib.core.checks.INFORMATIVE_BELOW`). Containment is written as a
    bound, ``|effect - midpoint| <= half-width`` against the trivial half-width 0.5, and judged by
    :func:`~causalbandits_lib.core.checks.check_bound_curve` over the cells (numbered from 1 in
    the order of the flattened arrays): not testable (vacuous) when no cell is informative, not
    reproduced when an informative interval misses its effect."""
    lo, hi, eff = (np.asarray(v, dtype=float).ravel() for v in (lower, upper, effect))
    if not (lo.shape == hi.shape == eff.shape) or lo.size == 0:
        raise ValueError("interval_bound_verdict: lower, upper and effect must have one size")
    cells = np.arange(1, lo.size + 1, dtype=float)
    return checks.check_bound_curve(
        cells, np.abs(eff - (lo + hi) / 2), (hi - lo) / 2, np.full(lo.size, 0.5), what, points="cells", x="cell"
    )


# -- result objects of notebook 4: what a study records and shows ------------------------------


def mean_se(samples) -> dict[str, float]:
    """The mean of ``samples`` and its standard error, as ``{"mean": ..., "se": ...}``
    (:func:`~causalbandits_lib.core.checks.mean_se`; the form a claim's ``measured`` keeps)."""
    m, se = checks.mean_se(samples)
    return {"mean": m, "se": se}


@dataclass(frozen=True)
class LearnedPriors:
    """Each run's prior bounds, learned from its own offline log, and how good they are.

    Attributes
    ----------
    priors : dict
        ``[run, context, arm]`` arrays as
        :func:`~causalbandits_lib.pcb.estimators.offline_priors` returns them.
    eliminated : ndarray, shape (n_runs,)
        Pairs ``(a, c)`` whose upper bound lies below the context's best mean, per run.
    all_covered : float
        Fraction of runs whose bounds contain the truth in all 16 cells.
    """

    priors: Mapping[str, np.ndarray]
    eliminated: np.ndarray
    all_covered: float

    def record(self, nb: Any) -> None:
        """Register ``priors.n_eliminated_mean`` and ``priors.all_cells_covered`` with
        ``nb.metric``. Returns nothing."""
        nb.metric("priors.n_eliminated_mean", self.eliminated.mean())
        nb.metric("priors.all_cells_covered", self.all_covered)


def learn_priors(
    model: DiscreteSCM, truth: np.ndarray, n_draws: int, n_runs: int, seed: int, level: float, simultaneous: bool
) -> LearnedPriors:
    """Run ``i``'s prior bounds from offline data set ``i`` of ``model`` (``n_draws`` units before
    selection): the sound bound with the Clopper-Pearson margin at ``level`` (over the 16 cells at
    once if ``simultaneous``), judged against ``truth`` (``[arm, context]``).

    Returns
    -------
    LearnedPriors
    """
    data = offline_count_tables(model, n_draws, n_runs, seed)
    priors = offline_priors(data.selected, level, simultaneous)
    eliminated = n_eliminated(np.swapaxes(priors["upper"], -1, -2), truth)
    covered = np.mean(
        [
            coverage(np.swapaxes(lo, -1, -2), np.swapaxes(up, -1, -2), truth) == 1
            for lo, up in zip(priors["lower"], priors["upper"])
        ]
    )
    return LearnedPriors(priors, eliminated, covered)


class RegretComparison:
    """Several algorithms run on the same rounds: their per-run final regrets, what a record keeps
    of them and their table.

    Parameters
    ----------
    results : mapping
        Algorithm name to :class:`~causalbandits_lib.core.runner.SimulationResult` (per-round
        ``"regret"`` kept), as :func:`figure4` or :func:`ucb_comparison` return them.

    Attributes
    ----------
    results : dict
    final : dict
        Algorithm name to its final (cumulative) regret per run.
    """

    def __init__(self, results: Mapping[str, SimulationResult]):
        self.results = dict(results)
        self.final = {k: r.final() for k, r in self.results.items()}

    def record(self, nb: Any, suffix: str = "", se: bool = True) -> None:
        """Register per algorithm ``k`` the metric ``final_regret{suffix}.k`` (the mean final
        regret), with ``se`` also ``final_regret_se{suffix}.k`` (its standard error over runs),
        and the curve ``regret{suffix}.k``, with ``nb.metric`` and ``nb.curve``. Returns nothing."""
        for k, r in self.results.items():
            nb.metric(f"final_regret{suffix}.{k}", self.final[k].mean())
            if se:
                nb.metric(f"final_regret_se{suffix}.{k}", self.final[k].std(ddof=1) / np.sqrt(len(self.final[k])))
            nb.curve(f"regret{suffix}.{k}", r["regret"])

    def table(self) -> pd.DataFrame:
        """Per algorithm the mean final regret, its standard error and the median over runs.

        Returns
        -------
        pandas.DataFrame
            Rows: algorithms; columns ``final regret``, ``se``, ``median``.
        """
        f = self.final
        return pd.DataFrame(
            {
                "final regret": {k: v.mean() for k, v in f.items()},
                "se": {k: v.std(ddof=1) / np.sqrt(len(v)) for k, v in f.items()},
                "median": {k: np.median(v) for k, v in f.items()},
            }
        )

    def dominated_pulls(self, name: str = "LinUCB-PCB") -> int:
        """Pulls by ``name``, over all runs and rounds, of an arm whose upper bound lies below
        another arm's lower bound (the per-round ``"dominated"`` metric, which must be kept)."""
        return int(self.results[name]["dominated"].sum())

    def share_of_regret(self, gap: float) -> dict[str, float]:
        """Per algorithm, the share of its total regret spent in rounds whose regret equals
        ``gap`` (the pulls of the arm with that gap, where the gap identifies the arm)."""
        return {
            k: float(np.isclose(r["regret"], gap, atol=1e-12).sum() * gap / r["regret"].sum())
            for k, r in self.results.items()
        }


class SettingComparison:
    """Figure 4's final regrets at several ``(α, λ)``, with the verdicts of checks at each and at
    ours with how they move over the others (one knob at a time).

    Parameters
    ----------
    by_setting : mapping
        ``(alpha, lam)`` to ``{algorithm: final regret per run}``, as :func:`alpha_lambda_study`
        returns it (with our setting among the keys).
    alpha, lam : float
        Our setting.
    """

    def __init__(self, by_setting: Mapping[tuple[float, float], Mapping[str, np.ndarray]], alpha: float, lam: float):
        self.by_setting = dict(by_setting)
        self.alpha, self.lam = float(alpha), float(lam)

    def record(self, nb: Any) -> None:
        """Register ``alpha_lambda.alpha=A,lam=L.final_regret.K``, the mean final regret of
        algorithm ``K`` at each setting, with ``nb.metric``. Returns nothing."""
        for (a, lm), f in self.by_setting.items():
            for k, v in f.items():
                nb.metric(f"alpha_lambda.alpha={a:g},lam={lm:g}.final_regret.{k}", v.mean())

    def judge(self, check: Callable[[Mapping[str, np.ndarray]], Verdict]) -> Verdict:
        """``check`` applied to the final regrets at our setting, with the verdicts at the other
        values of α (at our λ) and of λ (at our α) attached by
        :func:`~causalbandits_lib.core.checks.with_sensitivity` (α first)."""
        alpha, lam = self.alpha, self.lam
        main = check(self.by_setting[(alpha, lam)])
        alt_a = {a: check(f) for (a, lm), f in self.by_setting.items() if lm == lam and a != alpha}
        alt_l = {lm: check(f) for (a, lm), f in self.by_setting.items() if a == alpha and lm != lam}
        return checks.with_sensitivity(checks.with_sensitivity(main, "alpha", alpha, alt_a), "lam", lam, alt_l)

    def table(self, named_checks: Mapping[str, Callable[[Mapping[str, np.ndarray]], Verdict]]) -> pd.DataFrame:
        """One column per setting (ours marked "this run"): the mean final regrets of LinUCB,
        LinUCB-PCB, LinUCB_Biased and LinUCB_CP, then the verdict of each check (named by the
        first word of its key).

        Returns
        -------
        pandas.DataFrame
        """
        columns = {}
        for (a, lm), f in self.by_setting.items():
            label = f"α={a:g}, λ={lm:g}" + (" (this run)" if (a, lm) == (self.alpha, self.lam) else "")
            means = {k: f[k].mean() for k in ("LinUCB", "LinUCB-PCB", "LinUCB_Biased", "LinUCB_CP")}
            columns[label] = means | {k.split(" ")[0]: chk(f).verdict for k, chk in named_checks.items()}
        return pd.DataFrame(columns)


def warm_start_picks_best(world: Mapping[str, np.ndarray], means: np.ndarray) -> dict[str, int]:
    """Metrics of the printed Table 1 world: in how many contexts the printed Biased and CP
    columns (``world``, ``[context, arm]``) already pick the best arm of ``means``
    (``[arm, context]``), as ``table1_world.contexts_where_{biased,cp}_picks_best_arm``."""
    return {
        f"table1_world.contexts_where_{k}_picks_best_arm": int((world[k].argmax(axis=1) == means.argmax(axis=0)).sum())
        for k in ("biased", "cp")
    }


@dataclass(frozen=True)
class Theorem5Norms:
    """The quantities of Theorem 5's bound on the chapter's features.

    Attributes
    ----------
    M : float
        ``||θ||₂``.
    L_plain : float
        Largest feature norm over all pairs (no bounds).
    L_pcb : ndarray, shape (n_runs,)
        Largest feature norm over the pairs each run's bounds do not eliminate.
    L_plain_no_intercept, L_pcb_max_no_intercept : float
        The same without our intercept (the largest over runs for the second).
    bound : ndarray, shape (T,)
        The bound at rounds ``1..T`` with ``L = L_pcb.max()``.
    """

    M: float
    L_plain: float
    L_pcb: np.ndarray
    L_plain_no_intercept: float
    L_pcb_max_no_intercept: float
    bound: np.ndarray

    def record(self, nb: Any) -> None:
        """Register ``thm5.L_linucb``, ``thm5.L_pcb_max``, their ``_no_intercept`` versions and
        ``thm5.bound_at_T`` with ``nb.metric``. Returns nothing."""
        nb.metric("thm5.L_linucb", self.L_plain)
        nb.metric("thm5.L_pcb_max", self.L_pcb.max())
        nb.metric("thm5.L_linucb_no_intercept", self.L_plain_no_intercept)
        nb.metric("thm5.L_pcb_max_no_intercept", self.L_pcb_max_no_intercept)
        nb.metric("thm5.bound_at_T", self.bound[-1])


def theorem5_norms(
    features: np.ndarray, means: np.ndarray, upper: np.ndarray, theta: np.ndarray, T: int, lam: float, delta: float
) -> Theorem5Norms:
    """Theorem 5's ``M`` and ``L`` (with and without each run's bounds ``upper``,
    ``[run, context, arm]``; also without our intercept) on ``features`` with arm means ``means``
    (``[arm, context]``), and its bound at every round up to ``T``
    (:func:`~causalbandits_lib.pcb.theory.linucb_pcb_regret_bound`).

    Returns
    -------
    Theorem5Norms
    """
    M_norm = float(np.linalg.norm(theta))
    L_plain = effective_feature_norm(features, means.T)
    L_pcb = np.array([effective_feature_norm(features, means.T, u) for u in upper])
    bound = linucb_pcb_regret_bound(np.arange(1, T + 1), features.shape[-1], lam, M_norm, delta, L_pcb.max())
    plain = arm_context_features(intercept=False)  # x = [u1, u2, x1, x2]
    return Theorem5Norms(
        M_norm,
        L_plain,
        L_pcb,
        effective_feature_norm(plain, means.T),
        max(effective_feature_norm(plain, means.T, u) for u in upper),
        bound,
    )


@dataclass(frozen=True)
class Theorem8Bounds:
    """UCB-PCB's Theorem 8 on the non-contextual bandit.

    Attributes
    ----------
    plain : ndarray, shape (T,)
        The bound without prior bounds at rounds ``1..T``.
    pcb : ndarray, shape (T,)
        The bound with each run's prior bounds, averaged over runs.
    eliminated : ndarray, shape (n_runs, n_arms)
        Whether each run's upper bound of each arm lies below the best mean.
    pulls_eliminated : ndarray, shape (n_runs,)
        UCB-PCB's pulls of those arms per run (:func:`eliminated_arm_pulls`).
    """

    plain: np.ndarray
    pcb: np.ndarray
    eliminated: np.ndarray
    pulls_eliminated: np.ndarray

    def record(self, nb: Any) -> None:
        """Register ``thm8.bound_at_T.UCB``, ``thm8.bound_at_T.UCB-PCB`` and
        ``ucb_pcb.eliminated_arm_pulls_mean`` with ``nb.metric``. Returns nothing."""
        nb.metric("thm8.bound_at_T.UCB", self.plain[-1])
        nb.metric("thm8.bound_at_T.UCB-PCB", self.pcb[-1])
        nb.metric("ucb_pcb.eliminated_arm_pulls_mean", self.pulls_eliminated.mean())


def theorem8_bounds(arm_means: np.ndarray, upper: np.ndarray, pcb_regret: np.ndarray, T: int) -> Theorem8Bounds:
    """Theorem 8's bound for UCB and for UCB-PCB (with each run's ``upper``, shape
    ``(n_runs, n_arms)``, averaged over runs) at rounds ``1..T``, and Lemma 9's count from
    UCB-PCB's per-round regret ``pcb_regret``.

    Returns
    -------
    Theorem8Bounds
    """
    t = np.arange(1, T + 1)
    return Theorem8Bounds(
        ucb_pcb_regret_bound(arm_means, t),
        np.mean([ucb_pcb_regret_bound(arm_means, t, upper=u) for u in upper], axis=0),
        upper < arm_means.max(),
        eliminated_arm_pulls(pcb_regret, arm_means, upper),
    )


def lemma6_pulls(
    p_context: np.ndarray,
    means: np.ndarray,
    features: np.ndarray,
    priors: Mapping,
    T: int,
    seed: int,
    n_runs: int,
    alpha: float,
    lam: float,
    clip: str,
    pcb_regret: np.ndarray,
) -> dict[str, np.ndarray]:
    """Lemma 6's count, per run: pulls of pairs whose upper bound lies below the context's best
    mean, by LinUCB-PCB with Algorithm 4's clipping (``"upper"``, run here on :func:`figure4`'s
    rounds) and with ``clip`` (its per-round regret ``pcb_regret`` from :func:`figure4`).

    Returns
    -------
    dict
        ``{"upper": pulls per run, clip: pulls per run}`` (one entry when ``clip == "upper"``).
    """
    seen = contexts_seen(p_context, means, T, seed, n_runs)
    upper_only = simulate(
        contextual_environment(p_context, means),
        LinUCB(features, LinUCBConfig(alpha, lam, clip="upper"), lower=priors["lower"], upper=priors["upper"]),
        T,
        seed,
        n_runs=n_runs,
        metrics=("regret",),
    )
    return {
        "upper": eliminated_pair_pulls(pulled_arms(upper_only["regret"], seen, means), seen, priors["upper"], means),
        clip: eliminated_pair_pulls(pulled_arms(pcb_regret, seen, means), seen, priors["upper"], means),
    }


def lemma6_metrics(pulls: Mapping[str, np.ndarray]) -> dict[str, int]:
    """``lemma6.eliminated_pair_pulls.clip=K`` (all pulls) and ``lemma6.runs_with_such_pulls.clip=K``
    (runs with any) for each clipping ``K`` of :func:`lemma6_pulls`."""
    out = {}
    for k, v in pulls.items():
        out[f"lemma6.eliminated_pair_pulls.clip={k}"] = int(v.sum())
        out[f"lemma6.runs_with_such_pulls.clip={k}"] = int((v > 0).sum())
    return out


def margin_metrics(final: Mapping[float, np.ndarray], n_minus: Mapping[float, int]) -> dict[str, float]:
    """``margin.final_regret.w=W`` (mean final regret) and ``margin.n_minus.w=W`` for each
    half-width of :func:`margin_study`."""
    out = {}
    for w, v in final.items():
        out[f"margin.final_regret.w={w:g}"] = v.mean()
        out[f"margin.n_minus.w={w:g}"] = n_minus[w]
    return out


def margin_table(final: Mapping[float, np.ndarray], n_minus: Mapping[float, int], baseline: np.ndarray) -> pd.DataFrame:
    """Per half-width of :func:`margin_study`: ``N-``, the mean final regret and the mean paired
    difference to ``baseline`` (LinUCB's final regrets on the same runs).

    Returns
    -------
    pandas.DataFrame
        Rows: half-widths; columns ``N-``, ``final regret``, ``LinUCB - LinUCB-PCB``.
    """
    return pd.DataFrame(
        {
            "N-": n_minus,
            "final regret": {w: v.mean() for w, v in final.items()},
            "LinUCB - LinUCB-PCB": {w: (baseline - v).mean() for w, v in final.items()},
        }
    )


def bias_metrics(bias: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, float]:
    """``bias_levels.NAME.final_regret.{LinUCB,LinUCB-PCB}`` and ``bias_levels.NAME.n_eliminated_mean``
    for each level of :func:`bias_study`."""
    out = {}
    for name, r in bias.items():
        out[f"bias_levels.{name}.final_regret.LinUCB"] = r["LinUCB"].mean()
        out[f"bias_levels.{name}.final_regret.LinUCB-PCB"] = r["LinUCB-PCB"].mean()
        out[f"bias_levels.{name}.n_eliminated_mean"] = r["n_eliminated"].mean()
    return out


def bias_table(bias: Mapping[str, Mapping[str, np.ndarray]]) -> pd.DataFrame:
    """Per level of :func:`bias_study`: the mean final regrets, their mean paired difference and
    its standard error, the pairs eliminated per run and the fraction of runs whose bounds cover
    all 16 cells.

    Returns
    -------
    pandas.DataFrame
        Rows: levels.
    """
    rows = {}
    for name, r in bias.items():
        diff = r["LinUCB"] - r["LinUCB-PCB"]
        rows[name] = {
            "LinUCB": r["LinUCB"].mean(),
            "LinUCB-PCB": r["LinUCB-PCB"].mean(),
            "paired diff": diff.mean(),
            "se": checks.mean_se(diff)[1],
            "N- per run": r["n_eliminated"].mean(),
            "all 16 covered": r["covered"].mean(),
        }
    return pd.DataFrame(rows).T
