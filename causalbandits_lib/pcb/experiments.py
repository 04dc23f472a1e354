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
- the checks behind the notebook's claims: :func:`check_lower` (a paired ordering of two
  algorithms' per-run final regrets; the algorithms share contexts and rewards run by run),
  :func:`all_lower` (one algorithm below several) and :func:`combine_parts` (one claim made of
  several checks); :func:`regret_bound_verdict` (a regret bound tested only at the horizons where
  it is below the trivial ``Δmax·t``).

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
from .algorithms import ClippedUCB, LinUCB, LinUCBConfig
from .estimators import marginal_bounds
from .model import N_ARMS, N_CONTEXTS, TABLE1_PRINTED, selected_observed_distribution

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
