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
  probabilities tested only in the cells where they are narrower than half of ``[0, 1]``).

Every run ``i`` uses the prior information of offline data set ``i`` (the priors carry a leading
axis over global run indices), so a run gets the same numbers alone or among others.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from ..core import checks
from ..core.checks import Verdict
from ..core.environments import BernoulliBandit, ContextualBernoulliBandit
from ..core.protocols import Environment, Policy
from ..core.runner import SimulationResult, simulate
from ..core.scm import DiscreteSCM
from ..core.streams import RunStreams, run_indices
from .algorithms import ClippedUCB, LinUCB, LinUCBConfig
from .estimators import marginal_bounds, n_eliminated, offline_priors
from .model import (
    N_ARMS,
    N_CONTEXTS,
    TABLE1_PRINTED,
    conditional_causal_effects,
    context_probabilities,
    selected_observed_distribution,
)
from .offline import offline_count_tables

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
