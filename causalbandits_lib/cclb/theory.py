"""The bounds of Chen, Tian and Quinn (2025) as functions, evaluated numerically.

The supplied text lost the displayed statements; the forms below are **reconstructed** from the
prose, the proofs' fragments and the cited sources (notes §4-5). Three kinds of quantities:

- the problem constants of Definition 1 (:func:`kappa_feature_space`, reconstructed);
- explicit ones, exact and testable: Lemma 8 (the dual's telescoping bound), the bound on the
  optimal dual variable (Beck 2017, Thm 8.42), Proposition 3's gap, the radius ``beta_t`` (in
  :mod:`.confidence`);
- order-level ones (Theorems 1 and 2, Proposition 4), which hide universal constants
  ``C_1 ... C_4``. We evaluate them with every constant set to 1 (``constants``) and call the
  result a *shape*: it has the bound's growth in ``T`` but no certified level.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .features import FEATURE_MAPS, raw_features

__all__ = [
    "kappa_feature_space",
    "lp_dual_variable",
    "dual_variable_bound",
    "truncation_for_slater",
    "lemma8_lhs",
    "lemma8_rhs",
    "lemma8_bound",
    "theorem1_shape",
    "theorem2_shape",
    "proposition3_gap_bound",
    "proposition4_threshold",
]


def kappa_feature_space(theta: np.ndarray, feature_map: str = "unit_norm", n_grid: int = 20001) -> dict[str, float]:
    """Problem constants of Definition 1 on the generator's feature space (reconstructed).

    ``kappa_Z = max_{Z} 1/g'(f(Z)^T theta)`` over binary ``A, W, M`` and ``d`` on a grid of
    ``[-1, 1]`` (factual and counterfactual features are both in this set), and
    ``kappa = max over ||theta'|| <= ||theta||, ||x|| <= 1`` of ``1/g'(x^T theta') = 1/g'(S)``.

    Returns
    -------
    dict with ``kappa_Z``, ``kappa``, ``logit_min``, ``logit_max``.
    """
    theta = np.asarray(theta, dtype=float)
    d = np.linspace(-1.0, 1.0, int(n_grid))
    combos = np.array([(a, w, m) for a in (0, 1) for w in (0, 1) for m in (0, 1)], dtype=float)
    raw = raw_features(combos[:, 0], combos[:, 1], combos[:, 2], np.broadcast_to(d, (8, len(d))))
    z = np.sum(FEATURE_MAPS[feature_map](raw) * theta, axis=-1)
    gdot = lambda v: expit(v) * (1 - expit(v))  # noqa: E731
    s = float(np.linalg.norm(theta))
    return {
        "kappa_Z": float(1 / gdot(np.abs(z).max())),
        "kappa": float(1 / gdot(s)),
        "logit_min": float(z.min()),
        "logit_max": float(z.max()),
    }


def lp_dual_variable(reward: np.ndarray, effect: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """The optimal dual variable of each round's LP (Eq. 8) and the dual optimum.

    The dual function ``q(phi) = max_d [r(d) - phi (|Delta(d)| - tau)]`` is convex and piecewise
    linear in ``phi >= 0``; its minimum lies at 0 or where two pieces cross,
    ``phi = (r_i - r_j) / (|Delta_i| - |Delta_j|)``, so we evaluate it at every crossing.

    Parameters
    ----------
    reward, effect : (N, K)

    Returns
    -------
    phi_star : (N,); q_star : (N,) the dual optimum (equal to the LP value by strong duality)
    """
    r = np.asarray(reward, dtype=float)
    c = np.abs(np.asarray(effect, dtype=float)) - tau
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (r[:, :, None] - r[:, None, :]) / (c[:, :, None] - c[:, None, :])
    cand = np.concatenate(
        [np.zeros((len(r), 1)), np.where(np.isfinite(cross) & (cross > 0), cross, 0.0).reshape(len(r), -1)], axis=1
    )
    q = np.max(r[:, None, :] - cand[:, :, None] * c[:, None, :], axis=2)  # (N, candidates)
    best = np.argmin(q, axis=1)
    rows = np.arange(len(r))
    return cand[rows, best], q[rows, best]


def dual_variable_bound(delta: float) -> float:
    """``phi* <= (E_{pi*} r - E_{pi_0} r) / delta <= 1 / delta`` (Beck 2017, Thm 8.42; rewards in [0, 1])."""
    if not delta > 0:
        raise ValueError(f"delta={delta} must be positive (Slater's constant, Assumption 3)")
    return 1.0 / delta


def truncation_for_slater(delta: float) -> float:
    """``rho = 2 / delta``, the smallest truncation Theorems 1-2 allow (``rho >= 2 phi*``)."""
    return 2.0 * dual_variable_bound(delta)


def lemma8_lhs(phis: np.ndarray, gradients: np.ndarray, phi: float) -> np.ndarray:
    """``sum_t (phi - phi_t) g_t`` along each run, shape (R,), for ``phis, gradients`` of shape (R, T)."""
    return np.sum((phi - np.asarray(phis, dtype=float)) * np.asarray(gradients, dtype=float), axis=-1)


def lemma8_rhs(gradients: np.ndarray, phi: float, eta: float) -> np.ndarray:
    """``eta phi^2 / 2 + sum_t g_t^2 / (2 eta)``: the bound of Lemma 8 before using ``|g_t| <= 1 (+eps)``.

    For the projected dual step ``phi_{t+1} = Proj_[0,rho](phi_t + g_t / eta)`` with ``phi_1 = 0``
    and any ``phi in [0, rho]``, non-expansiveness of the projection gives
    ``sum_t (phi - phi_t) g_t <= eta phi^2 / 2 + sum_t g_t^2 / (2 eta)`` for every sequence ``g``.
    """
    g = np.asarray(gradients, dtype=float)
    if not eta > 0:
        raise ValueError(f"eta={eta} must be positive")
    return eta * phi * phi / 2.0 + np.sum(g * g, axis=-1) / (2.0 * eta)


def lemma8_bound(T, rho: float, eps: float = 0.0):
    """Lemma 8 with ``eta = sqrt(T)/rho``, ``phi <= rho`` and ``|g_t| <= 1 + eps``: ``rho sqrt(T) (1 + eps)^2``."""
    return rho * np.sqrt(np.asarray(T, dtype=float)) * (1.0 + eps) ** 2


def _logistic_terms(T, n: int, S: float, kappa_Z: float, constants=(1.0, 1.0, 1.0)):
    T = np.asarray(T, dtype=float)
    c1, c2, c3 = constants
    L = np.log(T)
    return {
        "leading": c1 * n * S * L * np.sqrt(T),
        "second_order": c2 * n * n * S * S * L**2,
        "kappa_term": c3 * kappa_Z * n * n * S * S * L**2,
    }


def theorem1_shape(
    T, n: int, S: float, kappa_Z: float, rho: float, constants=(1.0, 1.0, 1.0, 1.0)
) -> dict[str, np.ndarray]:
    """Shape of Theorem 1 (reconstructed): with probability at least ``1 - alpha``,

    ``R+(T) <= rho [C1 n S log(T) sqrt(T) + C2 n^2 S^2 log(T)^2 + C3 kappa_Z n^2 S^2 log(T)^2] + C4 rho sqrt(T)``,
    ``V(T)  <= C1 n S log(T) sqrt(T) + C2 n^2 S^2 log(T)^2 + C3 kappa_Z n^2 S^2 log(T)^2 + C4 sqrt(T)``.

    Returns
    -------
    dict with ``regret``, ``violation`` and the separate terms (arrays over ``T``).
    """
    terms = _logistic_terms(T, n, S, kappa_Z, constants[:3])
    root = constants[3] * np.sqrt(np.asarray(T, dtype=float))
    logistic = terms["leading"] + terms["second_order"] + terms["kappa_term"]
    return {**terms, "dual": rho * root, "regret": rho * logistic + rho * root, "violation": logistic + root}


def theorem2_shape(
    T, n: int, S: float, kappa_Z: float, rho: float, eps: float, constants=(1.0, 1.0, 1.0, 1.0)
) -> dict[str, np.ndarray]:
    """Shape of Theorem 2 (epsilon-CCLB, reconstructed): the regret against the tightened benchmark
    gains ``rho sqrt(T) ((1+eps)^2 - 1)`` over Theorem 1 and the violation bound loses ``eps T``
    (it may be negative: then the guarantee is zero violation)."""
    T_arr = np.asarray(T, dtype=float)
    base = theorem1_shape(T_arr, n, S, kappa_Z, rho, constants)
    root = constants[3] * np.sqrt(T_arr)
    logistic = base["leading"] + base["second_order"] + base["kappa_term"]
    return {
        **base,
        "regret": rho * logistic + rho * root * (1 + eps) ** 2,
        "violation": logistic + root * (1 + eps) ** 2 - eps * T_arr,
    }


def proposition3_gap_bound(eps: float, delta: float) -> float:
    """``0 <= E_{pi*_t} r - E_{pi*_{t,eps}} r <= eps / delta`` per round (Proposition 3)."""
    if not 0 <= eps < delta:
        raise ValueError(f"eps={eps} must lie in [0, delta={delta})")
    return eps / delta


def proposition4_threshold(T, n: int, S: float, kappa_Z: float, constants=(1.0, 1.0, 1.0, 1.0)) -> np.ndarray:
    """``eps'``, the smaller root of Theorem 2's violation bound as a quadratic in ``eps`` (Prop. 4, reconstructed).

    With ``Gamma = C1 n S log(T) sqrt(T) + C2 n^2 S^2 log(T)^2 + C3 kappa_Z n^2 S^2 log(T)^2 + C4 sqrt(T)``
    the bound is ``C4 sqrt(T) eps^2 + (2 C4 sqrt(T) - T) eps + Gamma``; for ``eps`` between its
    roots it is negative, i.e. zero violation. Returns ``nan`` where there is no real root (the
    bound is positive for every ``eps``).
    """
    T = np.asarray(T, dtype=float)
    base = theorem1_shape(T, n, S, kappa_Z, 1.0, constants)
    gamma = base["violation"]
    a = constants[3] * np.sqrt(T)
    b = 2.0 * constants[3] * np.sqrt(T) - T
    disc = b * b - 4.0 * a * gamma
    with np.errstate(invalid="ignore"):
        root = (-b - np.sqrt(disc)) / (2.0 * a)
    return np.where(disc >= 0, root, np.nan)
