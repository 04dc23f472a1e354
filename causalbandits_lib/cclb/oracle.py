"""The evaluator's exact per-round benchmarks, computed from the true rewards and effects.

- :func:`best_feasible`: the best single decision with ``|Delta_t(d)| <= tau`` (``d*_t``, Eq. 6);
- :func:`mixture_lp_value`: the value of the LP over mixtures of decisions (Eq. 8), the benchmark
  of the "stronger" regret ``R+`` (Eq. 9);
- :func:`unconstrained_optimum`: the best decision without the constraint, ties toward the smaller
  ``|Delta|``, and how many decisions tie for it.

The learner never sees these; the environment (:mod:`.environment`) and the notebooks use them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["best_feasible", "mixture_lp_value", "unconstrained_optimum", "REWARD_TIE_ATOL"]

#: Exact rewards within this of the best are tied (decisions with identical features have
#: bit-identical rewards; the tolerance only guards against rounding elsewhere).
REWARD_TIE_ATOL = 1e-12


def best_feasible(reward: np.ndarray, effect: np.ndarray, tau: float) -> dict[str, np.ndarray]:
    """The best single decision with ``|Delta_t(d)| <= tau`` (the benchmark ``d*_t`` of Eq. 6).

    Parameters
    ----------
    reward, effect : (..., K)

    Returns
    -------
    dict with ``index`` (...,) and ``value`` (...,); ``value`` is ``-inf`` where nothing is feasible.
    """
    reward = np.asarray(reward, dtype=float)
    feasible = np.abs(np.asarray(effect, dtype=float)) <= tau
    masked = np.where(feasible, reward, -np.inf)
    index = np.argmax(masked, axis=-1)
    return {"index": index, "value": np.take_along_axis(masked, index[..., None], axis=-1)[..., 0]}


def mixture_lp_value(reward: np.ndarray, effect: np.ndarray, tau: float) -> np.ndarray:
    """Value of the LP over mixtures (Eq. 8): ``max_pi E_pi r`` s.t. ``E_pi |Delta| <= tau``.

    One linear constraint over the simplex: an optimal vertex mixes at most two decisions, a
    feasible ``i`` (``|Delta_i| <= tau``) and possibly an infeasible ``j`` with weight
    ``p = (tau - |Delta_i|) / (|Delta_j| - |Delta_i|)`` so that the constraint binds. We enumerate
    all pairs (``K^2`` per round).

    Parameters
    ----------
    reward, effect : (..., K)
    tau : float or array broadcasting against (..., K)

    Returns
    -------
    ndarray (...,): ``-inf`` where the LP is infeasible (no feasible decision).
    """
    r = np.asarray(reward, dtype=float)
    c = np.abs(np.asarray(effect, dtype=float))
    tau = np.asarray(tau, dtype=float)
    feasible = c <= tau
    single = np.where(feasible, r, -np.inf).max(axis=-1)
    tau = tau[..., None] if tau.ndim else tau  # broadcast over the candidate pairs
    ci, cj = c[..., :, None], c[..., None, :]
    ri, rj = r[..., :, None], r[..., None, :]
    pair_ok = feasible[..., :, None] & ~feasible[..., None, :] & (rj > ri)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pair_ok, (tau - ci) / (cj - ci), 0.0)
    mixed = np.where(pair_ok, ri + p * (rj - ri), -np.inf).max(axis=(-2, -1))
    return np.maximum(single, mixed)


def unconstrained_optimum(
    reward: np.ndarray, effect: np.ndarray, atol: float = REWARD_TIE_ATOL
) -> dict[str, np.ndarray]:
    """``argmax_d r_t(d)`` with ties (rewards within ``atol`` of the best) broken toward the smaller
    ``|Delta_t(d)|`` (the first index among equally small ones), and the number of tied decisions.

    With the ``unit_norm`` feature map every ``d > 0`` of the context ``a = w = m = 0`` has the
    feature ``(0, 0, 0, 1)`` and the same reward, so an oracle that takes the first index overstates
    how often the unconstrained optimum is unfair (issue 16).

    Parameters
    ----------
    reward, effect : (..., K)

    Returns
    -------
    dict with ``index`` (...,) (ties toward the smaller ``|Delta|``), ``first`` (...,) (ties to the
    first index, ``np.argmax``) and ``n_tied`` (...,) (decisions within ``atol`` of the best).
    """
    reward = np.asarray(reward, dtype=float)
    tied = reward >= reward.max(axis=-1, keepdims=True) - atol
    size = np.where(tied, np.abs(np.asarray(effect, dtype=float)), np.inf)
    return {"index": np.argmin(size, axis=-1), "first": np.argmax(reward, axis=-1), "n_tied": tied.sum(axis=-1)}
