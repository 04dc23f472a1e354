"""The known feature map ``f`` of the outcome model ``E[Y | Z] = g(f(Z)^T theta)`` (Eq. 1, reconstructed).

``Z = (a, w, m, d)`` for a candidate decision ``d``, and ``Z^{a'} = (1 - a, w, m, d)`` for its
counterfactual (Eq. 3). The notes' choice is ``f(Z) = Z / ||Z||`` (:func:`unit_norm_features`), so
``||f(Z)|| <= 1`` (Assumption 2); :data:`FEATURE_MAPS` names the maps by the generator's parameter
``feature_map``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.special import expit

__all__ = ["unit_norm_features", "half_scaled_features", "FEATURE_MAPS", "raw_features", "expected_rewards"]


def unit_norm_features(raw: np.ndarray) -> np.ndarray:
    """``f(Z) = Z / ||Z||_2`` (and ``f(0) = 0``), so ``||f(Z)|| <= 1`` (Assumption 2). Shape kept."""
    raw = np.asarray(raw, dtype=float)
    norm = np.sqrt(np.sum(raw * raw, axis=-1, keepdims=True))
    return np.divide(raw, norm, out=np.zeros_like(raw), where=norm > 0)


def half_scaled_features(raw: np.ndarray) -> np.ndarray:
    """``f(Z) = Z / 2``: a linear alternative (``||Z|| <= 2`` for binary ``A, W, M`` and ``|d| <= 1``)."""
    return np.asarray(raw, dtype=float) / 2.0


#: Feature maps by name (a parameter of the generator; the notes' choice is ``unit_norm``).
FEATURE_MAPS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "unit_norm": unit_norm_features,
    "half_scaled": half_scaled_features,
}


def raw_features(
    a: np.ndarray, w: np.ndarray, m: np.ndarray, d: np.ndarray, counterfactual: bool = False
) -> np.ndarray:
    """``Z = (a, w, m, d)`` for every candidate, or ``Z^{a'} = (1 - a, w, m, d)``.

    Derived in notebooks/cclb/01_model.md, section 'Identification' (equation
    ``cclb-eq2-3-rewards``).

    Parameters
    ----------
    a, w, m : arrays of shape (...)
        The round's context (codes 0/1).
    d : array of shape (..., K)
        Candidate decisions.

    Returns
    -------
    ndarray of shape (..., K, 4)
    """
    d = np.asarray(d, dtype=float)
    a = np.asarray(a, dtype=float)
    if counterfactual:
        a = 1.0 - a
    ctx = np.stack([a, np.asarray(w, dtype=float), np.asarray(m, dtype=float)], axis=-1)  # (..., 3)
    ctx = np.broadcast_to(ctx[..., None, :], d.shape + (3,))
    return np.concatenate([ctx, d[..., None]], axis=-1)


def expected_rewards(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``g(x^T theta)`` for features ``x`` of shape ``(..., n)`` and ``theta`` of shape ``(n,)``.

    Derived in notebooks/cclb/01_model.md, section 'Identification' (equation
    ``cclb-eq2-3-rewards``).
    """
    x = np.asarray(x, dtype=float)
    theta = np.asarray(theta, dtype=float)
    return expit(np.sum(x * theta, axis=-1))
