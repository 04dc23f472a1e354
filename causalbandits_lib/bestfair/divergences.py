"""The divergences ``M_kj`` and ``D_kj`` of §4, which set the estimators' clip levels and weights.

``M_kj`` measures how well samples of arm ``j`` inform arm ``k``'s outcome estimate, ``D_kj`` how
well they inform its counterfactual fairness gap. Both are exact sums over a problem's cells
(:attr:`~.model.FairArmsProblem.M`, :attr:`~.model.FairArmsProblem.D`), computed as log-sum-exp so
that importance ratios of several hundred do not overflow.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = ["outcome_divergence", "fairness_divergence"]


def outcome_divergence(probs: np.ndarray, ratios: np.ndarray) -> np.ndarray:
    """``M = log E_{P_k}[exp(P_k / P_j)]`` computed as a log-sum-exp.

    Derived in notebooks/bestfair/01_the_problem.md, section 'The divergences M and D' (equation
    ``bestfair-eq20-divergences``).

    The paper defines ``M_kj = 1 + log(1 + D_{f1}(P_k || P_j))`` with ``f1(x) = x e^{x-1} - 1``
    (§4, Def. 2); since ``E_k[e^{P_k/P_j}] = e (1 + D_{f1})`` (Eq. 20) this is the expression above.

    Parameters
    ----------
    probs : ndarray, shape (..., C)
        Probability of each cell under arm ``k`` (natural pulls); only the marginal over
        ``(pa(V), V)`` matters.
    ratios : ndarray, shape (..., C)
        ``P_k(v_c | pa_c) / P_j(v_c | pa_c)`` at each cell (broadcast against ``probs``).

    Returns
    -------
    ndarray, shape (...)
        ``M_kj >= 1``, with equality iff ``P_k = P_j`` wherever ``probs > 0``.
    """
    probs, ratios = np.broadcast_arrays(np.asarray(probs, float), np.asarray(ratios, float))
    return logsumexp(ratios, b=probs, axis=-1)


def fairness_divergence(probs_s: np.ndarray, probs_sp: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``D = log(E_{k,s}[e^{|w|}] + E_{k,s'}[e^{|w|}])`` with ``w = (P_k/P_j)(P_s/P_{s'} - 1)`` (§4).

    Derived in notebooks/bestfair/01_the_problem.md, section 'The divergences M and D' (equation
    ``bestfair-eq20-divergences``).

    Parameters
    ----------
    probs_s, probs_sp : ndarray, shape (..., C)
        Cell probabilities of arm ``k`` with ``S`` set to ``s`` and to ``s'``.
    weights : ndarray, shape (..., C)
        The counterfactual importance weight ``w`` at each cell.

    Returns
    -------
    ndarray, shape (...)
        ``D >= log 2``; unlike ``M`` it can be below 1 (notes, ambiguity A6).
    """
    ps, psp, w = np.broadcast_arrays(
        np.asarray(probs_s, float), np.asarray(probs_sp, float), np.abs(np.asarray(weights, float))
    )
    return logsumexp(np.concatenate([w, w], axis=-1), b=np.concatenate([ps, psp], axis=-1), axis=-1)
