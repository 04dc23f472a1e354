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

import math
from fractions import Fraction

import numpy as np
from numba import njit
from scipy.special import expit

from ..core.kernels import block_sum
from .confidence import analysis_ridge, beta_squared
from .features import FEATURE_MAPS, raw_features
from .kernels import fast_exp, fast_log

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
    "proposition4_first_horizon",
    "proposition2_shape",
    "radius_orders",
    "radius_ratio_squared",
    "leading_coefficients",
    "leading_term_exponents_at_log_delta",
    "remark3_regret_difference",
    "remark3_checks",
    "analysis_gram",
    "lemma7_radius",
    "confidence_boundary_points",
    "elliptical_potential",
    "lemma1_bound",
    "lemma2_bound",
    "lemma3_sides",
    "lemma4_sides",
    "bernoulli_kl_forms",
    "freedman_excess",
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
    """``sum_t (phi - phi_t) g_t`` along each run, shape (R,), for ``phis, gradients`` of shape (R, T).

    Derived in notebooks/cclb/03_primal_dual.md, section 'Lemma 8, the telescoping bound of the dual
    step' (equation ``cclb-lemma8-dual-bound``).
    """
    return np.sum((phi - np.asarray(phis, dtype=float)) * np.asarray(gradients, dtype=float), axis=-1)


def lemma8_rhs(gradients: np.ndarray, phi: float, eta: float) -> np.ndarray:
    """``eta phi^2 / 2 + sum_t g_t^2 / (2 eta)``: the bound of Lemma 8 before using ``|g_t| <= 1 (+eps)``.

    Derived in notebooks/cclb/03_primal_dual.md, section 'Lemma 8, the telescoping bound of the dual
    step' (equation ``cclb-lemma8-dual-bound``).

    For the projected dual step ``phi_{t+1} = Proj_[0,rho](phi_t + g_t / eta)`` with ``phi_1 = 0``
    and any ``phi in [0, rho]``, non-expansiveness of the projection gives
    ``sum_t (phi - phi_t) g_t <= eta phi^2 / 2 + sum_t g_t^2 / (2 eta)`` for every sequence ``g``.
    """
    g = np.asarray(gradients, dtype=float)
    if not eta > 0:
        raise ValueError(f"eta={eta} must be positive")
    return eta * phi * phi / 2.0 + np.sum(g * g, axis=-1) / (2.0 * eta)


def lemma8_bound(T, rho: float, eps: float = 0.0):
    """Lemma 8 with ``eta = sqrt(T)/rho``, ``phi <= rho`` and ``|g_t| <= 1 + eps``: ``rho sqrt(T) (1 + eps)^2``.

    Derived in notebooks/cclb/03_primal_dual.md, section 'Lemma 8, the telescoping bound of the dual
    step' (equation ``cclb-lemma8-dual-bound``).
    """
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

    Derived in notebooks/cclb/03_primal_dual.md, section 'Theorems 1 and 2 beside the measurements'
    (equation ``cclb-theorem1-bounds``).

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
    (it may be negative: then the guarantee is zero violation).

    Derived in notebooks/cclb/03_primal_dual.md, section 'Theorems 1 and 2 beside the measurements'
    (equation ``cclb-theorem1-bounds``).
    """
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


def proposition4_first_horizon(horizons, n: int, S: float, kappa_Z: float, delta: float) -> float:
    """The first of ``horizons`` (ascending) at which Proposition 4's ``eps'`` (every ``C_i = 1``,
    :func:`proposition4_threshold`) is below ``delta``, i.e. the zero-violation window
    ``(eps', delta)`` is open; ``inf`` when it opens at none of them.

    Derived in notebooks/cclb/03_primal_dual.md, section 'Propositions 3 and 4 for epsilon-CCLB'.
    """
    horizons = np.asarray(horizons, dtype=float)
    eps_prime = proposition4_threshold(horizons, n, S, kappa_Z)
    return horizons[np.flatnonzero(eps_prime < delta)[0]] if np.any(eps_prime < delta) else np.inf


def proposition2_shape(T, n: int, S: float, kappa_Z: float, constants=(1.0, 1.0, 1.0)) -> np.ndarray:
    """Shape of Proposition 2's bound on the logistic regret (reconstructed; every ``C_i = 1`` by default):
    ``C1 n S log(T) sqrt(T) + C2 n^2 S^2 log(T)^2 + C3 kappa_Z n^2 S^2 log(T)^2``, the bracket of
    Theorem 1 (:func:`theorem1_shape`).

    Derived in notebooks/cclb/03_primal_dual.md, section 'Proposition 2, the logistic regret'.
    """
    terms = _logistic_terms(T, n, S, kappa_Z, constants)
    return terms["leading"] + terms["second_order"] + terms["kappa_term"]


def radius_orders(t, n: int, S: float) -> dict[str, np.ndarray]:
    """The two confidence radii as orders (every constant 1), as functions of the round ``t``:

    ``ours = sqrt((n + S) log t)`` (the loss-based set of Eq. 10, this paper's Prop. 1 after Lee et
    al. 2024) and ``abeille = sqrt(n S^3 log t)`` (Abeille et al. 2021, Lemma 1), the radius it
    improves on. Their ratio ``sqrt(n S^3 / (n + S))`` does not depend on ``t``
    (:func:`radius_ratio_squared`).

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The radius against the earlier
    logistic-bandit radius' (equation ``cclb-radius-orders``).
    """
    L = np.log(np.asarray(t, dtype=float))
    return {"ours": np.sqrt((n + S) * L), "abeille": np.sqrt(n * S**3 * L)}


def radius_ratio_squared(n: int, S) -> Fraction:
    """``(abeille / ours)^2 = n S^3 / (n + S)`` in exact rational arithmetic (``S`` rational).

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The radius against the earlier
    logistic-bandit radius' (equation ``cclb-radius-orders``).
    """
    n_, s_ = Fraction(n), Fraction(S)
    if n_ < 1 or s_ <= 0:
        raise ValueError(f"need n >= 1 and S > 0; got n={n}, S={S}")
    return n_ * s_**3 / (n_ + s_)


def leading_coefficients(n: int, S: float, rho: float) -> dict[str, float]:
    """Coefficients of ``sqrt(T)`` (up to logarithms) in the leading regret terms compared by Remark 2(1):
    CCLB ``rho n S``, OFULog+ (Lee et al. 2024) ``n S`` (its ``sqrt(1/kappa_*)`` <= 1 left out) and
    OFULog-r (Abeille et al. 2021) ``n S^{5/2}`` (Table 1).

    Derived in notebooks/cclb/03_primal_dual.md, section 'Remark 2, the leading term against
    earlier bounds' (equation ``cclb-remark2-leading-terms``).
    """
    return {"cclb": rho * n * S, "ofulog_plus": n * S, "ofulog_r": n * S**2.5}


def remark3_regret_difference(T, rho: float, eps: float) -> np.ndarray:
    """``rho sqrt(T) (2 eps + eps^2)``: Remark 3(2)'s difference between Theorem 2's and Theorem 1's
    regret bounds.

    Derived in notebooks/cclb/03_primal_dual.md, section 'The regret of Theorem 2 and Remark 3'
    (equation ``cclb-remark3-difference``).
    """
    return rho * np.sqrt(np.asarray(T, dtype=float)) * (2.0 * eps + eps * eps)


def remark3_checks(
    T: int, n: int, S: float, kappa_Z: float, rho: float, eps: float, delta: float
) -> dict[str, float | bool]:
    """Remark 3(2) on our reconstructed bounds: Theorem 2's regret shape minus Theorem 1's equals
    :func:`remark3_regret_difference` (largest error relative to Theorem 1's bound over ``T`` in
    1e2..1e8 and 8 values of ``eps`` in ``[0, delta)``); at ``T`` the difference increases in ``eps``
    and, at our ``eps``, decreases in ``delta`` over 30 values in ``[eps + 0.01, 1]`` (``rho = 2/delta``,
    with ``rho = 2`` at ``delta = 1``).

    Derived in notebooks/cclb/03_primal_dual.md, section 'The regret of Theorem 2 and Remark 3'
    (equation ``cclb-remark3-difference``).

    Returns
    -------
    dict with ``max_relative_error``, ``increasing_in_eps`` and ``decreasing_in_delta``.
    """
    T_grid = 10.0 ** np.arange(2, 9)
    eps_grid = np.linspace(0, delta, 8, endpoint=False)
    diff_err = 0.0
    for e_ in eps_grid:
        b1 = theorem1_shape(T_grid, n, S, kappa_Z, rho)["regret"]
        d_ = theorem2_shape(T_grid, n, S, kappa_Z, rho, e_)["regret"] - b1
        # rounding: the difference of two bounds of size b1 carries an error of order b1 x 1e-16
        diff_err = max(diff_err, float(np.max(np.abs(d_ - remark3_regret_difference(T_grid, rho, e_)) / b1)))
    diffs_eps = np.array([remark3_regret_difference(T, rho, e_) for e_ in eps_grid])
    delta_grid = np.linspace(eps + 0.01, 1.0, 30)
    diffs_delta = np.array([remark3_regret_difference(T, truncation_for_slater(d_), eps) for d_ in delta_grid])
    return {
        "max_relative_error": diff_err,
        "increasing_in_eps": bool(np.all(np.diff(diffs_eps) > 0)),
        "decreasing_in_delta": bool(np.all(np.diff(diffs_delta) < 0)) and truncation_for_slater(1.0) == 2.0,
    }


def leading_term_exponents_at_log_delta(T: float, n: float, S: float, h: float = 1e-6) -> dict[str, float]:
    """The local log-log slopes in ``T``, ``n`` and ``S`` of Theorem 1's leading term
    ``rho n S log(T) sqrt(T)`` at Slater's constant ``delta = 1/log T`` (``rho = 2/delta = 2 log T``),
    by forward differences of step ``h`` in the logarithm of each argument (Remark 2(1): about
    ``1/2 + 2/ln T``, 1 and 0).

    Derived in notebooks/cclb/03_primal_dual.md, section 'Remark 2, the leading term against
    earlier bounds' (equation ``cclb-remark2-leading-terms``).
    """

    def lead(T_, n_, S_):  # rho = 2 / delta = 2 log T
        return 2 * np.log(T_) * n_ * S_ * np.log(T_) * np.sqrt(T_)

    point = (T, n, S)
    return {
        name: float(
            (np.log(lead(*[v * np.exp(h) if i == k else v for i, v in enumerate(point)])) - np.log(lead(*point))) / h
        )
        for k, name in enumerate(("T", "n", "S"))
    }


def analysis_gram(X: np.ndarray, theta_star, S: float) -> np.ndarray:
    """``H_t(theta*) = sum_s g'(x_s^T theta*) x_s x_s^T + lambda_t I`` with Lemma 7's
    ``lambda_t = 1/(4 S^2 (2 + 2S))``, for raw data ``X (R, n, t)`` -> (R, n, n).

    Derived in notebooks/cclb/02_confidence_sets.md, section 'Lemma 7, the set in the curvature
    norm' (equation ``cclb-lemma7``).
    """
    X = np.asarray(X, dtype=float)
    p = expit(np.einsum("k,rkt->rt", np.asarray(theta_star, dtype=float), X))
    gram = (X * (p * (1.0 - p))[:, None, :]) @ np.swapaxes(X, -1, -2)
    return gram + analysis_ridge(S) * np.eye(X.shape[1])


def lemma7_radius(t, n: int, S: float, alpha: float, denominator: float = 4.0):
    """``gamma_t(alpha)`` of Lemma 7 (**reconstructed**; the supplied text loses the display):

    ``gamma_t^2 = 2 (2+2S) beta_t^2 + 4 (e-2) (2+2S)^2 (n log(1 + 4 S t / n) + log(1/alpha)) + (2+2S) n + 1``,

    the notes' re-derivation from the proof's steps (second-order expansion with
    ``G_t >= H_t / (2+2S)``, Freedman with ``eta = 1/(2(e-2)(2+2S))``, an ``n/t``-net of the ball;
    the ``O((2+2S) n)`` term taken with constant 1 is our choice).

    Derived in notebooks/cclb/02_confidence_sets.md, section 'Lemma 7, the set in the curvature
    norm' (equation ``cclb-lemma7``).
    """
    t = np.asarray(t, dtype=float)
    c = 2.0 + 2.0 * S
    g2 = (
        2.0 * c * beta_squared(t, n, S, alpha, denominator)
        + 4.0 * (math.e - 2.0) * c * c * (n * np.log(1.0 + 4.0 * S * t / n) + math.log(1.0 / alpha))
        + c * n
        + 1.0
    )
    return np.sqrt(g2)


def confidence_boundary_points(
    data, theta_hat: np.ndarray, beta2: float, S: float, directions: np.ndarray, iters: int = 60, compiled: bool = True
):
    """Points of ``C_t`` on its boundary: from the MLE ``theta_hat (R, n)`` along each unit direction
    ``(M, n)`` or ``(R, M, n)``, the farthest ``theta_hat + s u`` with ``L(theta) - L(theta_hat) <= beta2`` and
    ``||theta|| <= S`` (bisection; the loss is convex along the line, so the set's trace is an interval).

    ``data`` is a :class:`~.confidence.LogisticData`; returns (R, M, n), every point inside ``C_t``.

    The compiled path (the default) takes the same steps as the numpy one (the same ball
    intercept, the same ``iters`` halvings from the same ends, the same trial points) with the loss
    of :func:`_line_losses`: its exp and log are :mod:`.kernels`' (within 2 ulp of the C library's)
    and it adds the softplus terms in numpy's pairwise order. A halving can therefore go the other
    way only where the two losses differ across ``beta2`` in their last bits, i.e. within rounding
    of the boundary itself; the tests ask for points within 1e-9 relative of numpy's.
    ``compiled=False`` is the readable reference.

    Used in notebooks/cclb/02_confidence_sets.md, section 'Lemma 7, the set in the curvature norm'.
    """
    th = np.asarray(theta_hat, dtype=float)[:, None, :]
    u = np.asarray(directions, dtype=float)
    u = u if u.ndim == 3 else u[None, :, :]
    # the ball: ||th + s u|| = S, s >= 0
    bu = np.sum(th * u, axis=-1)
    s_ball = -bu + np.sqrt(np.maximum(bu * bu - (np.sum(th * th, axis=-1) - S * S), 0.0))
    if compiled:
        c = np.ascontiguousarray
        X = c(data.X, dtype=float)
        w = np.ones(X.shape[::2]) if data.weights is None else c(data.weights, dtype=float)
        u = c(np.broadcast_to(u, s_ball.shape + (th.shape[-1],)))
        s = np.empty_like(s_ball)
        _bisect_lines(X, w, c(data.b), c(th[:, 0, :]), u, s_ball, float(beta2), int(iters), s)
        return th + s[..., None] * u
    base = data.loss(th[:, 0, :])[:, None]
    lo, hi = np.zeros_like(s_ball), s_ball.copy()
    inside_at_ball = data.loss(th + hi[..., None] * u) - base <= beta2
    for _ in range(int(iters)):
        mid = 0.5 * (lo + hi)
        ok = data.loss(th + mid[..., None] * u) - base <= beta2
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    s = np.where(inside_at_ball, s_ball, lo)
    return th + s[..., None] * u


# ---------------------------------------------------------------------------- compiled line search
@njit(cache=True, error_model="numpy")
def _pairwise_sum(a, n, nodes, sums):
    """``sum(a[:n])`` in numpy's pairwise order, the sum of
    :func:`~causalbandits_lib.core.kernels.pairwise_sum` on stacks the caller allocates once (the
    bisection adds ``iters`` losses per point): a run longer than 128 terms is split in two at half
    its length rounded down to a multiple of eight, each half summed so, the two added; blocks of at
    most 128 by :func:`~causalbandits_lib.core.kernels.block_sum`. The recursion is unrolled on the
    stacks ``nodes (D, 3)`` (start, length, halves done) and ``sums (D,)``, ``D`` at least ``2 log2(n)``."""
    if n <= 128:
        return block_sum(a, 0, n)
    top, done = 0, 0
    nodes[0, 0], nodes[0, 1], nodes[0, 2] = 0, n, 0
    while top >= 0:
        start, length, halves = nodes[top, 0], nodes[top, 1], nodes[top, 2]
        half = length // 2
        half -= half % 8
        if length <= 128 or halves == 2:
            if length <= 128:
                value = block_sum(a, start, length)
            else:
                done -= 2
                value = sums[done] + sums[done + 1]
            sums[done] = value
            done += 1
            top -= 1
            continue
        nodes[top, 2] = halves + 1
        top += 1
        if halves == 0:
            nodes[top, 0], nodes[top, 1] = start, half
        else:
            nodes[top, 0], nodes[top, 1] = start + half, length - half
        nodes[top, 2] = 0
    return sums[0]


@njit(cache=True, error_model="numpy")
def _line_losses(X, w, b, point, z, nodes, sums):
    """``L(point)`` of one run's data ``X (n, P)``, weights ``w (P,)`` and ``b (n,)``, as
    :meth:`~.confidence.LogisticData.loss` computes it but with :func:`~.kernels.fast_exp` and
    :func:`~.kernels.fast_log`: ``z = x^T point`` (products added in order), then
    ``max(z, 0) + log1p(exp(-|z|))`` into ``z`` (``log1p(e)`` as ``log(1 + e)`` corrected for the
    rounding of ``1 + e``), weighted and added pairwise, minus ``point^T b``."""
    n, P = X.shape
    for p in range(P):
        z[p] = point[0] * X[0, p]
    for k in range(1, n):
        pk = point[k]
        for p in range(P):
            z[p] = z[p] + pk * X[k, p]
    for p in range(P):
        e = fast_exp(-abs(z[p]))
        q = 1.0 + e
        z[p] = w[p] * (max(z[p], 0.0) + (fast_log(q) - ((q - 1.0) - e) / q))
    lin = point[0] * b[0]
    for k in range(1, n):
        lin = lin + point[k] * b[k]
    return _pairwise_sum(z, P, nodes, sums) - lin


def losses_at_points(data, points: np.ndarray) -> np.ndarray:
    """``L(theta)`` of one run's data (a :class:`~.confidence.LogisticData` with one run) at every
    point ``theta`` of ``points (M, n)``, by the compiled loss of :func:`_line_losses` (the loss of
    the bisection above: products added in order, exp and log within 2 ulp of the C library's,
    softplus terms added in numpy's pairwise order). It agrees with
    :meth:`~.confidence.LogisticData.loss` to rounding (the tests ask for 1e-12 relative) in about
    half its time; it draws the confidence-set slices of notebook ``cclb/02``
    (:func:`~.experiments.loss_gap_slice`), which no record keeps."""
    c = np.ascontiguousarray
    X = c(data.X[0], dtype=float)
    w = np.ones(X.shape[1]) if data.weights is None else c(data.weights[0], dtype=float)
    pts = c(points, dtype=float)
    out = np.empty(len(pts))
    _point_losses(X, w, c(data.b[0]), pts, out)
    return out


@njit(cache=True, error_model="numpy")
def _point_losses(X, w, b, points, out):
    """:func:`_line_losses` at each row of ``points (M, n)`` into ``out (M,)``."""
    z = np.empty(X.shape[1])
    nodes = np.empty((128, 3), dtype=np.int64)
    sums = np.empty(128)
    for m in range(points.shape[0]):
        out[m] = _line_losses(X, w, b, points[m], z, nodes, sums)


@njit(cache=True, error_model="numpy")
def _bisect_lines(X, w, b, theta, u, s_ball, beta2, iters, s_out):
    """The bisection of :func:`confidence_boundary_points` for every run ``r`` and direction ``m``:
    ``s_out[r, m]`` is ``s_ball`` where the ball's intercept lies in the set, else the last inside
    end after ``iters`` halvings of ``[0, s_ball]``. Once the midpoint rounds to an end, the step
    evaluates that end's point again (the start, ``s = 0``, is inside) and changes nothing, so
    the remaining steps are skipped."""
    R, M = s_ball.shape
    n, P = X.shape[1], X.shape[2]
    z = np.empty(P)
    point = np.empty(n)
    nodes = np.empty((128, 3), dtype=np.int64)
    sums = np.empty(128)
    for r in range(R):
        base = _line_losses(X[r], w[r], b[r], theta[r], z, nodes, sums)
        for m in range(M):
            hi = s_ball[r, m]
            for k in range(n):
                point[k] = theta[r, k] + hi * u[r, m, k]
            if _line_losses(X[r], w[r], b[r], point, z, nodes, sums) - base <= beta2:
                s_out[r, m] = hi
                continue
            lo = 0.0
            for _ in range(iters):
                mid = 0.5 * (lo + hi)
                if mid == lo or mid == hi:  # the ends are adjacent doubles: every further step repeats this one
                    break
                for k in range(n):
                    point[k] = theta[r, k] + mid * u[r, m, k]
                if _line_losses(X[r], w[r], b[r], point, z, nodes, sums) - base <= beta2:
                    lo = mid
                else:
                    hi = mid
            s_out[r, m] = lo


def elliptical_potential(U: np.ndarray, lam: float) -> np.ndarray:
    """``sum_{s<=t} ||u_s||^2_{V_s^{-1}}`` with ``V_s = lam I + sum_{r<s} u_r u_r^T``, for ``U (R, n, T)``
    -> (R, T) cumulative (Sherman-Morrison updates of ``V^{-1}``).

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The technical lemmas of Appendix C'
    (equation ``cclb-lemmas-1-2``).
    """
    U = np.asarray(U, dtype=float)
    R, n, T = U.shape
    Vinv = np.broadcast_to(np.eye(n) / lam, (R, n, n)).copy()
    out = np.empty((R, T))
    for t in range(T):
        u = U[:, :, t]
        Vu = np.einsum("rij,rj->ri", Vinv, u)
        q = np.einsum("ri,ri->r", u, Vu)
        out[:, t] = q
        Vinv -= np.einsum("ri,rj->rij", Vu, Vu) / (1.0 + q)[:, None, None]
    return np.cumsum(out, axis=1)


def lemma1_bound(t, n: int, B2: float, lam: float):
    """Lemma 1 (determinant-trace): ``log det V_{t+1} <= n log(lam + t B^2 / n)`` for ``||u|| <= B``.

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The technical lemmas of Appendix C'
    (equation ``cclb-lemmas-1-2``).
    """
    return n * np.log(lam + np.asarray(t, dtype=float) * B2 / n)


def lemma2_bound(t, n: int, B2: float, lam: float):
    """Lemma 2 (elliptical potential, constant ``lam``): ``(1 + B^2/lam) n log((lam + t B^2/n) / lam)``.

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The technical lemmas of Appendix C'
    (equation ``cclb-lemmas-1-2``).
    """
    return (1.0 + B2 / lam) * n * np.log((lam + np.asarray(t, dtype=float) * B2 / n) / lam)


def _gdot(z):
    p = expit(z)
    return p * (1.0 - p)


def lemma3_sides(z1, z2) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 3 (self-concordance): ``int_0^1 g'(z1 + v (z2 - z1)) dv >= g'(z1) / (1 + |z1 - z2|)``.

    Returns (left, right); the left side is ``(g(z2) - g(z1)) / (z2 - z1)`` (``g'(z1)`` where equal).

    Used in notebooks/cclb/02_confidence_sets.md, section 'The technical lemmas of Appendix C'.
    """
    z1, z2 = np.broadcast_arrays(np.asarray(z1, dtype=float), np.asarray(z2, dtype=float))
    dz = z2 - z1
    small = np.abs(dz) < 1e-8
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(small, _gdot(z1), (expit(z2) - expit(z1)) / np.where(small, 1.0, dz))
    return left, _gdot(z1) / (1.0 + np.abs(dz))


def lemma4_sides(b, c) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 4: for ``b, c >= 0``, ``u^2 <= b u + c`` implies ``u <= b + sqrt(c)``.

    Returns (the largest ``u`` with ``u^2 <= b u + c``, i.e. ``(b + sqrt(b^2 + 4c)) / 2``; ``b + sqrt(c)``).

    Used in notebooks/cclb/02_confidence_sets.md, section 'The technical lemmas of Appendix C'.
    """
    b, c = np.broadcast_arrays(np.asarray(b, dtype=float), np.asarray(c, dtype=float))
    return (b + np.sqrt(b * b + 4.0 * c)) / 2.0, b + np.sqrt(c)


def bernoulli_kl_forms(z1, z2, nodes: int = 64) -> dict[str, np.ndarray]:
    """Lemma 6's three forms of ``KL(Bern(g(z1)) || Bern(g(z2)))``: ``direct`` (from the two
    probabilities), ``bregman`` ``m(z2) - m(z1) - g(z1) (z2 - z1)`` with ``m(z) = log(1 + e^z)``, and
    ``integral`` ``(z2 - z1)^2 int_0^1 (1 - v) g'(z1 + v (z2 - z1)) dv`` (Gauss-Legendre, ``nodes`` points).

    Used in notebooks/cclb/02_confidence_sets.md, section 'The technical lemmas of Appendix C'.
    """
    z1, z2 = np.broadcast_arrays(np.asarray(z1, dtype=float), np.asarray(z2, dtype=float))
    p, q = expit(z1), expit(z2)
    direct = p * (np.log(p) - np.log(q)) + (1.0 - p) * (np.log1p(-p) - np.log1p(-q))
    bregman = np.logaddexp(0.0, z2) - np.logaddexp(0.0, z1) - p * (z2 - z1)
    x, w = np.polynomial.legendre.leggauss(int(nodes))
    v, w = (x + 1.0) / 2.0, w / 2.0
    dz = (z2 - z1)[..., None]
    integral = np.sum(w * (1.0 - v) * _gdot(z1[..., None] + v * dz), axis=-1) * (z2 - z1) ** 2
    return {"direct": direct, "bregman": bregman, "integral": integral}


def freedman_excess(increments: np.ndarray, variances: np.ndarray, eta: float, alpha: float) -> np.ndarray:
    """Lemma 5 (anytime Freedman): ``max_t [sum_{s<=t} X_s - (e-2) eta sum_{s<=t} E[X_s^2|F] - log(1/alpha)/eta]``
    per run (last axis is time); the inequality holds at every ``t`` iff the value is ``<= 0``.

    Used in notebooks/cclb/02_confidence_sets.md, section 'The technical lemmas of Appendix C'.
    """
    if not eta > 0:
        raise ValueError(f"eta={eta} must be positive")
    lhs = np.cumsum(np.asarray(increments, dtype=float), axis=-1)
    rhs = (math.e - 2.0) * eta * np.cumsum(np.asarray(variances, dtype=float), axis=-1) + math.log(1.0 / alpha) / eta
    return np.max(lhs - rhs, axis=-1)
