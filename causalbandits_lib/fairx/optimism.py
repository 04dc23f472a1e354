"""The optimistic step of FairX-UCB and FairX-LinUCB: maximise the value of the fair policy over a
confidence region.

Step 7 of Algorithm 1 asks for ``μ_t = argmax_{μ ∈ CR_t} V(μ)``, with
``V(μ) = Σ_a π_μ(a) μ_a`` and ``π_μ = f(μ)/Σ f(μ)``. The paper calls it non-convex and solves it
approximately by projected gradient ascent (learning rate 0.01, 10 steps, §5.1). The gradient is
(Eq. E6 of the notes)

    ∂V/∂μ_b = π_μ(b) · [1 + (ln f)'(μ_b) (μ_b − V(μ))].

For the multi-armed case the confidence region is a box ``[l, u]`` and the problem can be solved
exactly (Eq. E7, Dinkelbach's parametric form): ``V* = max V`` is the root of
``F(λ) = Σ_a max_{m ∈ [l_a, u_a]} f(m)(m − λ)``. For merits where ``m ↦ f(m)(m − λ)`` is
maximised at an endpoint (``exp(cm)``: it decreases then increases), coordinate ``a`` sits at its
upper end iff ``λ`` is below the threshold ``τ_a = (f(u_a)u_a − f(l_a)l_a)/(f(u_a) − f(l_a))``, so
the maximiser is one of the ``K + 1`` nested vertices "the ``j`` arms with the largest ``τ`` up,
the rest down": :func:`optimistic_box_exact` evaluates all of them in ``O(K log K)``.
:func:`optimistic_box_corners` (all ``2^K`` corners) and :func:`optimistic_box_dinkelbach`
(bisection on ``F``) are the references the tests compare it with.

All functions take arrays with the arms on the last axis and any leading axes (runs, configs).
"""

from __future__ import annotations

import itertools

import numpy as np

from .merit import ExpMerit

__all__ = [
    "fair_value",
    "fair_value_gradient",
    "optimistic_box_exact",
    "optimistic_box_corners",
    "optimistic_box_dinkelbach",
    "optimistic_box_pgd",
    "pgd_exp_scores",
    "optimistic_ellipsoid_pgd",
]


def fair_value(merit, mu: np.ndarray) -> np.ndarray:
    """``V(μ) = Σ_a π_μ(a) μ_a``, the expected reward of the fair policy ``μ`` induces if ``μ``
    were the truth; shape = leading axes."""
    mu = np.asarray(mu, dtype=float)
    return (merit.policy(mu) * mu).sum(axis=-1)


def fair_value_gradient(merit, mu: np.ndarray) -> np.ndarray:
    """``∇V(μ)`` of Eq. (E6), same shape as ``mu``."""
    mu = np.asarray(mu, dtype=float)
    pi = merit.policy(mu)
    v = (pi * mu).sum(axis=-1, keepdims=True)
    return pi * (1.0 + merit.log_derivative(mu) * (mu - v))


def _check_box(lower, upper):
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    if lower.shape != upper.shape:
        raise ValueError(f"lower {lower.shape} and upper {upper.shape} must have the same shape")
    if np.any(upper < lower):
        raise ValueError("every upper end must be at least its lower end")
    return lower, upper


def _merit_pair(merit, lower, upper):
    """``f(l)`` and ``f(u)`` up to a positive factor per row (``V`` does not change), scaled so
    that ``exp`` cannot overflow."""
    if isinstance(merit, ExpMerit):
        shift = upper.max(axis=-1, keepdims=True)
        return np.exp(merit.c_column * (lower - shift)), np.exp(merit.c_column * (upper - shift))
    return merit(lower), merit(upper)


def optimistic_box_exact(merit, lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """Exact maximiser of ``V`` over the box ``[lower, upper]`` (Eq. E7, nested-vertex form).

    Parameters
    ----------
    merit : merit function with ``endpoint_maximal = True`` and a ``threshold`` method
    lower, upper : ndarray, shape (..., K)

    Returns
    -------
    mu : ndarray, shape (..., K)
        A maximising vertex: arms whose threshold ``τ_a`` exceeds ``V*`` at their upper end, the
        others at their lower end (optimism lowers the estimates of bad arms).
    value : ndarray, shape (...)
        ``V*``.
    """
    if not getattr(merit, "endpoint_maximal", False) or not hasattr(merit, "threshold"):
        raise ValueError(
            f"the exact box solver needs a merit whose f(m)(m - λ) peaks at an interval end; {merit!r} is not one"
        )
    lower, upper = _check_box(lower, upper)
    tau = merit.threshold(lower, upper)
    order = np.argsort(-tau, axis=-1, kind="stable")
    fl, fu = _merit_pair(merit, lower, upper)
    take = lambda a: np.take_along_axis(a, order, axis=-1)  # noqa: E731
    l_s, u_s, fl_s, fu_s = take(lower), take(upper), take(fl), take(fu)
    zero = np.zeros(lower.shape[:-1] + (1,))
    # prefix sums over the first j sorted arms (j = 0..K) at the upper end, the rest at the lower
    up_num = np.concatenate([zero, np.cumsum(fu_s * u_s, axis=-1)], axis=-1)
    up_den = np.concatenate([zero, np.cumsum(fu_s, axis=-1)], axis=-1)
    low_num = np.concatenate([zero, np.cumsum(fl_s * l_s, axis=-1)], axis=-1)
    low_den = np.concatenate([zero, np.cumsum(fl_s, axis=-1)], axis=-1)
    num = up_num + (low_num[..., -1:] - low_num)
    den = up_den + (low_den[..., -1:] - low_den)
    values = num / den
    j = np.argmax(values, axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(order.shape[-1]), order.shape), axis=-1)
    mu = np.where(rank < j[..., None], upper, lower)
    return mu, fair_value(merit, mu)


def optimistic_box_corners(merit, lower, upper) -> tuple[np.ndarray, float]:
    """Brute force over all ``2^K`` corners of one box (reference for tests; ``K <= 16``).

    Parameters
    ----------
    lower, upper : ndarray, shape (K,)

    Returns
    -------
    mu : ndarray, shape (K,), the best corner; value : float.
    """
    lower, upper = _check_box(lower, upper)
    if lower.ndim != 1 or len(lower) > 16:
        raise ValueError(f"brute force takes one box of at most 16 arms, got shape {lower.shape}")
    corners = np.array(list(itertools.product((0, 1), repeat=len(lower))), dtype=bool)
    mus = np.where(corners, upper, lower)
    values = fair_value(merit, mus)
    values = values.reshape(len(mus), -1)[:, 0] if values.ndim > 1 else values
    best = int(np.argmax(values))
    return mus[best], float(values[best])


def optimistic_box_dinkelbach(merit, lower, upper, iterations: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Bisection on ``F(λ) = Σ_a max(f(u_a)(u_a − λ), f(l_a)(l_a − λ))`` (Eq. E7).

    ``F`` is continuous and strictly decreasing with its root at ``V*``; each coordinate of the
    maximiser is the endpoint with the larger term. ``iterations`` halvings of
    ``[min l, max u]``.
    """
    lower, upper = _check_box(lower, upper)
    fl, fu = _merit_pair(merit, lower, upper)
    lo = lower.min(axis=-1)
    hi = upper.max(axis=-1)
    for _ in range(int(iterations)):
        lam = 0.5 * (lo + hi)
        F = np.maximum(fu * (upper - lam[..., None]), fl * (lower - lam[..., None])).sum(axis=-1)
        lo = np.where(F > 0, lam, lo)
        hi = np.where(F > 0, hi, lam)
    lam = 0.5 * (lo + hi)[..., None]
    mu = np.where(fu * (upper - lam) >= fl * (lower - lam), upper, lower)
    return mu, fair_value(merit, mu)


def optimistic_box_pgd(merit, lower, upper, start=None, lr: float = 0.01, steps: int = 10) -> np.ndarray:
    """The paper's approximate Step 7 (§5.1): projected gradient *ascent* on ``V`` over the box.

    ``μ ← clip(μ + lr·∇V(μ), l, u)`` for ``steps`` steps from ``start`` (default: the box centre,
    i.e. the empirical means μ̂). Start point, ascent sign and projection are not stated in the
    paper; these are the book's choices (notes §8, A3). For ``f = exp(cμ)`` the same iteration is
    run in the scaled coordinates of :func:`pgd_exp_scores`.

    Returns
    -------
    mu : ndarray, shape (..., K), a feasible point (not in general the maximiser).
    """
    lower, upper = _check_box(lower, upper)
    if not lr > 0 or int(steps) < 0:
        raise ValueError(f"lr={lr} must be positive and steps={steps} non-negative")
    mu = 0.5 * (lower + upper) if start is None else np.clip(np.asarray(start, dtype=float), lower, upper)
    if isinstance(merit, ExpMerit):
        y, shift = pgd_exp_scores(merit.c_column, lower, upper, mu, lr, steps)
        return np.clip((y + shift) / merit.c_column, lower, upper)
    for _ in range(int(steps)):
        mu = mu + lr * fair_value_gradient(merit, mu)
        np.clip(mu, lower, upper, out=mu)
    return mu


def pgd_exp_scores(c: np.ndarray, lower: np.ndarray, upper: np.ndarray, start: np.ndarray, lr: float, steps: int):
    """Projected gradient ascent on ``V`` for ``f = exp(cμ)``, in the coordinates
    ``y = cμ − s`` with ``s = max_a c·u_a`` per row (so ``exp(y) <= 1`` never overflows).

    With ``π = softmax(y)`` and ``Y = Σ π y``, Eq. (E6) reads ``∂V/∂μ = π(1 + y − Y)`` (the shift
    cancels), and the step ``μ ← μ + lr·∇V`` is ``y ← y + c·lr·π(1 + y − Y)``; the box becomes
    ``[c·l − s, c·u − s]``. ``start`` must lie in the box.

    Returns
    -------
    y : ndarray, shape (..., K); shift : ndarray, shape (..., 1)
    """
    ylo = c * lower
    yhi = c * upper
    shift = yhi.max(axis=-1, keepdims=True)
    ylo -= shift
    yhi -= shift
    y = c * start
    y -= shift
    gain = c * lr
    # one reduction per step: row sums of exp(y) and of exp(y)·y side by side
    both = np.empty(y.shape[:-1] + (2, y.shape[-1]))
    e, ey = both[..., 0, :], both[..., 1, :]
    g = np.empty_like(y)
    previous = np.empty_like(y)
    for _ in range(int(steps)):
        np.copyto(previous, y)
        np.exp(y, out=e)
        np.multiply(e, y, out=ey)
        sums = both.sum(axis=-1)
        big_y = (sums[..., 1] / sums[..., 0])[..., None]  # Y = Σ π y
        np.subtract(y, big_y, out=g)
        g += 1.0
        g *= e
        g *= gain / sums[..., :1]  # c·lr·π(1 + y − Y)
        y += g
        np.minimum(y, yhi, out=y)
        np.maximum(y, ylo, out=y)
        if np.array_equal(y, previous):
            break  # a fixed point of the step map: every further step returns it unchanged
    return y, shift


def optimistic_ellipsoid_pgd(merit, base_scores, directions, lr: float = 0.01, steps: int = 10) -> np.ndarray:
    """Projected gradient ascent for Step 7 of FairX-LinUCB over the ellipsoid
    ``{μ̂ + √β S u : ‖u‖ <= 1}`` with ``S Sᵀ = Σ_t⁻¹`` (the book's reparametrisation; the paper does
    not say how it projects, notes §3.3).

    In ``u``-space the arm scores are ``z = z₀ + Y u`` with ``z₀ = X μ̂`` and
    ``Y = √β X S``, the gradient is ``∇_u V = Yᵀ g`` with ``g`` of Eq. (E10), and the projection is
    radial, ``u ← u / max(1, ‖u‖)``. The trajectory does not depend on which square root ``S`` is
    used (any two differ by a rotation, which commutes with these steps).

    Parameters
    ----------
    base_scores : ndarray, shape (..., K)
        ``z₀ = X μ̂`` (scores of the centre).
    directions : ndarray, shape (..., K, d)
        ``Y = √β X S``.

    Returns
    -------
    scores : ndarray, shape (..., K), the arm scores ``x_a · μ_t`` of the point reached.
    """
    if not lr > 0 or int(steps) < 0:
        raise ValueError(f"lr={lr} must be positive and steps={steps} non-negative")
    u = np.zeros(directions.shape[:-2] + directions.shape[-1:])
    z = np.array(base_scores, dtype=float)
    for _ in range(int(steps)):
        pi = merit.policy(z)
        v = (pi * z).sum(axis=-1, keepdims=True)
        g = pi * (1.0 + merit.log_derivative(z) * (z - v))
        u = u + lr * (directions * g[..., None]).sum(axis=-2)
        u /= np.maximum(1.0, np.sqrt((u * u).sum(axis=-1, keepdims=True)))
        z = base_scores + (directions * u[..., None, :]).sum(axis=-1)
    return z
