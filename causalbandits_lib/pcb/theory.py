"""Regret bounds of Huang and Wu (2024) and the quantities they depend on.

- :func:`linucb_pcb_regret_bound`: Theorem 5 (LinUCB-PCB; the OFUL bound of Abbasi-Yadkori et al.
  2011 with the feature-norm bound ``L`` taken over the pairs the prior bounds do not eliminate);
- :func:`effective_feature_norm`: that ``L``;
- :func:`ucb_pcb_regret_bound`: Theorem 8 (UCB-PCB; the paper prints "=" where "≤" is meant);
- :func:`linear_parameter`: the ``θ`` that makes the arm means linear in the features, and its norm
  (the ``M`` of Theorem 5).
"""

from __future__ import annotations

import numpy as np

__all__ = ["linucb_pcb_regret_bound", "effective_feature_norm", "ucb_pcb_regret_bound", "linear_parameter"]


def _positive(name: str, value) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name}={value!r} must be positive")
    return arr


def linucb_pcb_regret_bound(T, d: int, lam: float, M: float, delta: float, L: float) -> np.ndarray:
    """Theorem 5: with probability at least ``1 - δ``,

    ``R_T <= sqrt(2 T d log(1 + T L²/(d λ))) · 2 (sqrt(λ) M + sqrt(2 log(1/δ) + d log(1 + T L²/(d λ))))``.

    Derived in notebooks/pcb/04_online_learning.md, section 'Theorem 5: the regret bound of LinUCB-PCB'
    (equation ``pcb-theorem5-bound``).

    The proof (Lemma 3) needs ``λ >= max(1, L²)``. The paper calls it a bound on the expected
    regret; its proof gives the high-probability statement above.

    Parameters
    ----------
    T : int or array_like
        Horizon(s).
    d : int
        Feature dimension.
    lam, M, delta, L : float
        Ridge penalty, bound on ``||θ||₂``, confidence, bound on the feature norms of the pairs
        that can be pulled (:func:`effective_feature_norm`).
    """
    T = _positive("T", T)
    d = int(d)
    if d < 1:
        raise ValueError(f"d={d} must be at least 1")
    lam = float(_positive("lam", lam))
    M = float(_positive("M", M))
    L = float(_positive("L", L))
    if not 0 < float(delta) < 1:
        raise ValueError(f"delta={delta} must be in (0, 1)")
    log_term = np.log1p(T * L**2 / (d * lam))
    radius = np.sqrt(lam) * M + np.sqrt(2 * np.log(1 / float(delta)) + d * log_term)
    return np.sqrt(2 * T * d * log_term) * 2 * radius


def effective_feature_norm(features: np.ndarray, means: np.ndarray, upper: np.ndarray | None = None) -> float:
    """``L = max ||x_{a,c}||₂`` over the pairs with ``U_{a,c} >= μ*_c`` (Theorem 5); all pairs
    when ``upper`` is None (plain LinUCB).

    Derived in notebooks/pcb/04_online_learning.md, section 'Theorem 5: the regret bound of LinUCB-PCB'
    (equation ``pcb-theorem5-bound``).

    Parameters
    ----------
    features : ndarray, shape (n_contexts, n_arms, d)
    means : ndarray, shape (n_contexts, n_arms)
        True means ``⟨θ, x_{a,c}⟩``.
    upper : ndarray, shape (n_contexts, n_arms), optional
    """
    features = np.asarray(features, dtype=float)
    means = np.asarray(means, dtype=float)
    if means.shape != features.shape[:2]:
        raise ValueError(f"means has shape {means.shape}; it must be {features.shape[:2]} (contexts, arms)")
    norms = np.linalg.norm(features, axis=-1)
    keep = np.ones(means.shape, dtype=bool) if upper is None else np.asarray(upper) >= means.max(axis=1, keepdims=True)
    return float(norms[keep].max())


def ucb_pcb_regret_bound(means: np.ndarray, T, upper: np.ndarray | None = None) -> np.ndarray:
    """Theorem 8 (δ = 1/T², 1-sub-Gaussian rewards):

    ``R(T) <= 3 Σ_a Δ_a + Σ_{a: Δ_a > 0, U_a >= μ*} 16 log(T) / Δ_a``.

    Derived in notebooks/pcb/04_online_learning.md, section 'UCB-PCB and Theorem 8'
    (equation ``pcb-theorem8-bound``).

    Arms whose prior upper bound is below ``μ*`` drop out of the second sum; without bounds it is
    the bound of plain UCB. The paper's sum runs over ``a: U_a >= μ*``, which includes the optimal
    arm with ``Δ = 0``; it contributes nothing (Lemma 9 bounds its pulls only for ``Δ_a > 0``).
    """
    means = np.asarray(means, dtype=float)
    T = _positive("T", T)
    gaps = means.max() - means
    keep = gaps > 0
    if upper is not None:
        keep &= np.asarray(upper, dtype=float) >= means.max()
    return 3 * gaps.sum() + np.sum(16.0 / gaps[keep]) * np.log(T)


def linear_parameter(features: np.ndarray, means: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares ``θ`` with ``⟨θ, x_{a,c}⟩ ≈ μ_{a,c}`` and the largest absolute residual.

    Returns
    -------
    theta : ndarray, shape (d,)
    max_residual : float
        0 (to rounding) when the means are exactly linear in the features.
    """
    x = np.asarray(features, dtype=float).reshape(-1, np.shape(features)[-1])
    y = np.asarray(means, dtype=float).reshape(-1)
    theta, *_ = np.linalg.lstsq(x, y, rcond=None)
    return theta, float(np.max(np.abs(x @ theta - y)))
