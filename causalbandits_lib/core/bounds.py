"""Confidence radii, divergences and classical regret bounds shared by the chapters.

Chapter-specific theorems live in the chapter modules; the classics every chapter compares with
live here:

- the sub-Gaussian (Hoeffding) confidence radius;
- the Bernoulli Kullback-Leibler divergence;
- the Lai-Robbins asymptotic lower bound (Lai and Robbins, 1985, Thm 2);
- the finite-time upper bound of UCB1 (Auer, Cesa-Bianchi and Fischer, 2002, Thm 1).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "subgaussian_radius",
    "kl_bernoulli",
    "lai_robbins_constant",
    "lai_robbins_lower_bound",
    "ucb1_regret_bound",
]


def subgaussian_radius(n: np.ndarray | float, log_inv_delta: np.ndarray | float, sigma: float = 1.0) -> np.ndarray:
    """``sqrt(2 σ² log(1/δ) / max(n, 1))``: with probability at least ``1-δ`` the mean of ``n``
    σ-sub-Gaussian samples is within this distance of its expectation (one side).

    Parameters
    ----------
    n : array_like
        Sample counts (0 is treated as 1, the convention of the book's algorithms).
    log_inv_delta : array_like
        ``log(1/δ)``; passing the logarithm avoids underflow when δ is tiny.
    sigma : float
        Sub-Gaussian scale.
    """
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    return np.sqrt(2.0 * sigma**2 * np.asarray(log_inv_delta, dtype=float) / n)


def kl_bernoulli(p: np.ndarray | float, q: np.ndarray | float) -> np.ndarray:
    """``KL(Ber(p) || Ber(q)) = p log(p/q) + (1-p) log((1-p)/(1-q))``, with ``0 log 0 = 0``.

    Infinite where ``q`` is 0 or 1 and ``p`` differs from it.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log(np.where(p < 1, 1 - p, 1.0) / (1 - q)), 0.0)
    return a + b


def lai_robbins_constant(means: np.ndarray) -> float:
    """``Σ_{a: Δ_a > 0} Δ_a / KL(μ_a, μ*)`` for Bernoulli arms.

    Lai and Robbins (1985): every uniformly good policy has
    ``liminf_{T→∞} E[R_T] / log T >= this constant``.
    """
    means = np.asarray(means, dtype=float)
    best = means.max()
    gaps = best - means
    sub = gaps > 0
    return float(np.sum(gaps[sub] / kl_bernoulli(means[sub], best)))


def lai_robbins_lower_bound(means: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The asymptotic lower bound ``c · log t`` (only a limit statement; it is not a bound at any
    fixed ``t``)."""
    return lai_robbins_constant(means) * np.log(np.asarray(t, dtype=float))


def ucb1_regret_bound(means: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Auer, Cesa-Bianchi and Fischer (2002), Theorem 1, for rewards in [0, 1]:

    ``E[R_t] <= Σ_{a: Δ_a > 0} 8 ln t / Δ_a + (1 + π²/3) Σ_a Δ_a``.
    """
    means = np.asarray(means, dtype=float)
    gaps = means.max() - means
    sub = gaps > 0
    t = np.asarray(t, dtype=float)
    return np.sum(8.0 / gaps[sub]) * np.log(t) + (1.0 + np.pi**2 / 3.0) * gaps.sum()
