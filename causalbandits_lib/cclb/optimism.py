"""Fast optimistic steps: the support function of quadratic models of the confidence set.

The exact optimistic step (:func:`~causalbandits_lib.cclb.confidence.optimistic_exact`) solves one
conic program per candidate and round; at ``T = 10^4`` rounds, 20 candidates and many runs it is
out of reach. This module provides the pieces of the fast step that the long runs use:

- :func:`model_support`: the exact support function of ``{quadratic model <= level} cap ball`` for
  many directions at once (two convex quadratic constraints: strong duality reduces it to a
  one-dimensional search, solved per direction, vectorised);
- :func:`optimistic_quadratic`: the model fitted at the MLE, a poor approximation of Eq. (10) far
  from the MLE (kept to show why);
- :func:`support_points`: sequential quadratic approximation, refitting the model of ``L_t`` at the
  current optimistic point (the loss is generalised self-concordant, so a model is trustworthy
  near where it was fitted); at a fixed point the exact problem's KKT conditions hold;
- :func:`ball_halfspace_support`: a certified upper bound from the cuts ``L(theta) >= L(p) + grad^T (theta - p)``.

:class:`~causalbandits_lib.cclb.algorithms.OFULogPlus` combines them (``optimistic="sqp"``); the
tests and ``notebooks/cclb/02_confidence_sets.md`` measure how closely it follows the exact step.
"""

from __future__ import annotations

import numpy as np

from .confidence import LogisticData, QuadraticModel, analysis_ridge, ball_minimiser, merge_model

__all__ = ["model_support", "optimistic_quadratic", "support_points", "ball_halfspace_support"]


class _SupportFamily:
    """The support function ``h(s)`` of the ellipsoids ``E_s`` at many points, and ``h'(s)``.

    In eigen-coordinates, ``q_E(theta) = sum a_i (theta_i - c_i)^2`` (already divided by the squared
    radius) and ``q_B = ||theta||^2 / S^2``. ``E_s = {(1-s) q_E + s q_B <= 1}`` has
    ``D_i = (1-s) a_i + s / S^2 = a_i + s e_i`` (``e_i = 1/S^2 - a_i``), centre
    ``m_i = (1-s) a_i c_i / D_i`` and

    ``h(s) = x^T m + sqrt(rho q)``, ``q = sum x_i^2 / D_i``, ``rho = 1 - s (1-s) W / S^2``,
    ``W = sum a_i c_i^2 / D_i``; with ``dm_i/ds = -a_i c_i / (S^2 D_i^2)`` the derivatives follow.

    Arrays are laid out coordinate-first, ``(n, N)`` with ``N`` = runs x candidates flattened, so
    every operation is on contiguous rows and sums over the ``n`` coordinates run in a fixed order.
    """

    def __init__(self, a, c, x, S):
        # a, c: (n, N); x: (n, N)
        self.S2 = 1.0 / (S * S)
        self.a = a
        self.e = self.S2 - a
        ac = a * c
        acc = ac * c
        self.acc = acc
        self.x = x
        self.xac = x * ac
        self.ac = ac
        self.xx = x * x
        self.acc_e = acc * self.e
        self.xx_e = self.xx * self.e

    def _doubled(self):
        if getattr(self, "_double", None) is None:
            N = self.a.shape[1]
            self._double = self.subset(np.concatenate([np.arange(N), np.arange(N)]))
        return self._double

    def subset(self, idx):
        out = object.__new__(_SupportFamily)
        out.S2 = self.S2
        for name in ("a", "e", "acc", "x", "xac", "ac", "xx", "acc_e", "xx_e"):
            setattr(out, name, getattr(self, name)[:, idx])
        return out

    def slope(self, s, twice: bool = False):
        """``h'(s)``; with ``twice``, ``s`` has two values per column (all columns, then all again)."""
        if twice:
            return _SupportFamily.slope(self._doubled(), s)
        S2 = self.S2
        inv = 1.0 / (self.a + s * self.e)
        inv2 = inv * inv
        W0 = np.add.reduce(self.acc * inv, axis=0)
        Q0 = np.add.reduce(self.xx * inv, axis=0)
        ss = s * (1.0 - s)
        rho = np.maximum(1.0 - ss * S2 * W0, 1e-300)
        u1 = -S2 * ((1.0 - 2.0 * s) * W0 - ss * np.add.reduce(self.acc_e * inv2, axis=0)) * Q0 - rho * np.add.reduce(
            self.xx_e * inv2, axis=0
        )
        return -S2 * np.add.reduce(self.xac * inv2, axis=0) + u1 / (2.0 * np.sqrt(rho * Q0))

    def slope_curvature(self, s):
        """``h'(s)`` and ``h''(s)`` (with ``d(1/D_i)/ds = -e_i / D_i^2``)."""
        S2 = self.S2
        inv = 1.0 / (self.a + s * self.e)
        inv2 = inv * inv
        inv3 = inv2 * inv
        W0 = np.add.reduce(self.acc * inv, axis=0)
        W1 = -np.add.reduce(self.acc_e * inv2, axis=0)
        W2 = 2.0 * np.add.reduce(self.acc_e * self.e * inv3, axis=0)
        Q0 = np.add.reduce(self.xx * inv, axis=0)
        Q1 = -np.add.reduce(self.xx_e * inv2, axis=0)
        Q2 = 2.0 * np.add.reduce(self.xx_e * self.e * inv3, axis=0)
        P1 = -S2 * np.add.reduce(self.xac * inv2, axis=0)
        P2 = 2.0 * S2 * np.add.reduce(self.xac * self.e * inv3, axis=0)
        ss = s * (1.0 - s)
        rho = np.maximum(1.0 - ss * S2 * W0, 1e-300)
        rho1 = -S2 * ((1.0 - 2.0 * s) * W0 + ss * W1)
        rho2 = -S2 * (-2.0 * W0 + 2.0 * (1.0 - 2.0 * s) * W1 + ss * W2)
        u = rho * Q0
        u1 = rho1 * Q0 + rho * Q1
        u2 = rho2 * Q0 + 2.0 * rho1 * Q1 + rho * Q2
        root = np.sqrt(u)
        return P1 + u1 / (2.0 * root), P2 + u2 / (2.0 * root) - u1 * u1 / (4.0 * u * root)

    def value_and_maximiser(self, s):
        inv = 1.0 / (self.a + s * self.e)
        W0 = np.add.reduce(self.acc * inv, axis=0)
        Q0 = np.add.reduce(self.xx * inv, axis=0)
        rho = np.maximum(1.0 - s * (1.0 - s) * self.S2 * W0, 0.0)
        m = (1.0 - s) * self.ac * inv
        value = np.add.reduce(self.x * m, axis=0) + np.sqrt(rho * Q0)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(Q0 > 0, np.sqrt(rho / Q0), 0.0)
        return value, m + scale * self.x * inv


def _minimise_support(
    fam: _SupportFamily, hint: np.ndarray | None = None, newton_steps: int = 6, max_iter: int = 100, s_tol: float = 1e-9
) -> np.ndarray:
    """``argmin_{s in [0, 1]} h(s)`` for every column.

    With a hint (the solution of a similar problem, e.g. the previous round's; NaN: none for that
    column), Newton's
    iteration on ``h'`` starts there and usually converges in two or three steps; a column whose
    Newton iterates fail (non-positive curvature, or no convergence in ``newton_steps``) falls back
    to the bracketed search. The bracketed search checks the ends (``h'(0) >= 0`` gives ``s = 0``:
    the ellipsoid's maximiser lies in the ball; ``h'(1) <= 0`` gives ``s = 1``: the ball's
    maximiser lies in the ellipsoid) and otherwise runs the Illinois variant of regula falsi on
    ``[0, 1]`` (superlinear, never leaves the bracket; ``h'`` can vary over many orders of
    magnitude near the ends, where Newton's iteration from far away stalls). Each column's
    iterates depend on that column alone.
    """
    N = fam.a.shape[1]
    s = np.full(N, np.nan)
    rest = np.arange(N)
    hint = None if hint is None else np.asarray(hint, dtype=float)
    if hint is not None and np.isfinite(hint).any():
        idx = np.flatnonzero(np.isfinite(hint))  # a column without a hint (NaN) takes the bracketed search
        sub = fam if len(idx) == N else fam.subset(idx)
        x = np.clip(hint[idx], 0.0, 1.0)
        for _ in range(newton_steps):
            f, c = sub.slope_curvature(x)
            at_end = ((x == 0.0) & (f >= 0)) | ((x == 1.0) & (f <= 0)) | (f == 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                nxt = np.clip(x - f / c, 0.0, 1.0)
            good = np.isfinite(nxt) & (c > 0)
            done = at_end | (good & (np.abs(nxt - x) <= s_tol))
            s[idx[done]] = np.where(at_end, x, nxt)[done]
            alive = good & ~done
            if not alive.all():
                keep = np.flatnonzero(alive)
                idx, x, sub = idx[keep], nxt[keep], sub.subset(keep)
            else:
                x = nxt
            if len(idx) == 0:
                break
        rest = np.flatnonzero(np.isnan(s))
        if len(rest) == 0:
            return s
    fam = fam.subset(rest) if len(rest) < N else fam
    M = len(rest)
    ends = fam.slope(np.concatenate([np.zeros(M), np.ones(M)]), twice=True)
    flo, fhi = ends[:M], ends[M:]
    s[rest] = np.where(flo >= 0, 0.0, 1.0)
    inner = np.flatnonzero((flo < 0) & (fhi > 0))
    if len(inner) == 0:
        return s
    idx = rest[inner]
    sub = fam.subset(inner)
    lo, hi, flo, fhi = np.zeros(len(idx)), np.ones(len(idx)), flo[inner], fhi[inner]
    x = np.full(len(idx), 0.5)
    side = np.zeros(len(idx))  # which end moved last: -1 lo, +1 hi
    active = np.ones(len(idx), dtype=bool)
    for _ in range(max_iter):
        with np.errstate(divide="ignore", invalid="ignore"):
            nxt = (lo * fhi - hi * flo) / (fhi - flo)
        nxt = np.where((nxt > lo) & (nxt < hi), nxt, 0.5 * (lo + hi))  # NaN fails both tests
        moved = np.abs(nxt - x)
        x = np.where(active, nxt, x)
        f = sub.slope(x)
        up = f > 0
        # Illinois: when the same end moves twice in a row, halve the value kept at the other end
        flo = np.where(up, np.where(side > 0, 0.5 * flo, flo), f)
        fhi = np.where(up, f, np.where(side < 0, 0.5 * fhi, fhi))
        lo, hi = np.where(up, lo, x), np.where(up, x, hi)
        side = np.where(up, 1.0, -1.0)
        active &= (moved > s_tol) & (hi - lo > s_tol) & (f != 0)
        n_active = np.count_nonzero(active)
        if n_active == 0:
            break
        if n_active <= len(active) // 2:  # shrink the working set as columns converge
            s[idx[~active]] = x[~active]
            keep = np.flatnonzero(active)
            idx, x, lo, hi, flo, fhi, side, active = (
                idx[keep],
                x[keep],
                lo[keep],
                hi[keep],
                flo[keep],
                fhi[keep],
                side[keep],
                active[keep],
            )
            sub = sub.subset(keep)
    s[idx] = x
    return s


def model_support(
    model: QuadraticModel,
    radius2: np.ndarray,
    S: float,
    x: np.ndarray,
    hint: np.ndarray | None = None,
    return_s: bool = False,
):
    """Support function of ``{1/2 (theta - c)^T H_r (theta - c) <= radius2} cap {||theta|| <= S}``
    (``c``, ``H_r`` from ``model``) at the candidates ``x``, with the maximisers.

    The support function of the intersection of the ellipsoid ``{q_E <= 1}`` with the ball
    ``{q_B <= 1}`` is ``min_{s in [0, 1]} h_s(x)``, ``h_s`` the closed-form support function of
    the ellipsoid ``{(1-s) q_E + s q_B <= 1}`` (Lagrangian duality, exact for two convex quadratic
    constraints with a common interior point; ``h`` is quasi-convex in ``s``); see
    :func:`_minimise_support`.

    Parameters
    ----------
    model : QuadraticModel
    radius2 : (R,) positive
    x : (R, K, n)
    hint : (R, K), optional
        Solutions ``s`` of similar problems (see :func:`_minimise_support`).
    return_s : bool
        Also return the ``s`` found, shape (R, K).

    Returns
    -------
    value : (R, K); theta : (R, K, n)
    """
    a = model.eigval / (2.0 * np.asarray(radius2, dtype=float)[:, None])  # (R, n)
    xb = model.to_eig(np.asarray(x, dtype=float))  # (R, K, n)
    R, K, n = xb.shape
    cols = lambda v: np.ascontiguousarray(np.broadcast_to(v[:, None, :], (R, K, n)).reshape(R * K, n).T)  # noqa: E731
    fam = _SupportFamily(cols(a), cols(model.center_bar), np.ascontiguousarray(xb.reshape(R * K, n).T), S)
    s = _minimise_support(fam, None if hint is None else np.asarray(hint, dtype=float).reshape(-1))
    value, theta_bar = fam.value_and_maximiser(s)
    out = value.reshape(R, K), _from_eig_sequential(model.eigvec, theta_bar.reshape(n, R, K))
    return out + (s.reshape(R, K),) if return_s else out


def optimistic_quadratic(model: QuadraticModel, theta_hat: np.ndarray, beta_sq, S: float, x: np.ndarray):
    """Optimistic values over the confidence set with ``L_t`` replaced by its second-order model at
    the MLE (the quadratic-model set ``{m(theta) - m(theta_hat) <= beta^2} cap ball``).

    In the model's eigenbasis ``m(theta) - m(theta_hat) <= beta^2`` reads
    ``1/2 (theta - c)^T H_r (theta - c) <= r^2`` with ``r^2 = beta^2 + 1/2 (theta_hat - c)^T H_r (theta_hat - c)``.
    Far from the MLE the logistic loss is not quadratic (its curvature ``g'`` changes by orders of
    magnitude across the set), so this is a poor approximation of Eq. (10); see
    :func:`support_points` for the one the long runs use.

    Returns
    -------
    value : (R, K); theta : (R, K, n)
    """
    beta_sq = np.broadcast_to(np.asarray(beta_sq, dtype=float), (theta_hat.shape[0],))
    return model_support(model, beta_sq + model.half_dist2(model.to_eig(theta_hat)), S, x)


def support_points(
    data: LogisticData,
    level: np.ndarray,
    S: float,
    directions: np.ndarray,
    start: np.ndarray,
    fallback: tuple[QuadraticModel, np.ndarray],
    iterations: int = 2,
    ridge: float | None = None,
    max_move: float = 1.0,
    s_hint: np.ndarray | None = None,
    inside_point: np.ndarray | None = None,
):
    """``max x^T theta`` s.t. ``L_t(theta) <= level``, ``||theta|| <= S`` for a few directions per
    run, by sequential quadratic approximation of the loss (one pass over the data per iteration).

    Each iteration fits the second-order model of ``L_t`` at the current point (value, gradient,
    Hessian), solves the model problem exactly (:func:`model_support`) and moves the point towards
    the model's maximiser by at most ``max_move`` (the logistic loss with ``||x|| <= 1`` is
    generalised self-concordant, so its curvature changes by at most ``exp(max_move)`` within that
    distance and the model is trustworthy there). At a fixed point the KKT conditions of the exact
    problem hold. Started from the previous round's solution for the same slot, the problem moves
    little between rounds and one or two iterations track it (the tests and
    ``notebooks/cclb/02_confidence_sets.md`` measure how closely against the exact solver).

    Parameters
    ----------
    data : LogisticData; level : (R,)
    directions : (R, M, n)
    start : (R, M, n)
        First linearisation points.
    fallback : (QuadraticModel, radius2)
        The MLE's model (one per run): used where a linearised set is empty or misses the ball.
    s_hint : (R, M), optional
        Duality parameters of similar problems (the previous round's), to bracket the new ones.
    inside_point : (R, n), optional
        A point of the ball inside the confidence set (the MLE), used to check cheaply that a
        linearised set meets the ball.

    Returns
    -------
    value : (R, M) the model problem's optimum at the last linearisation
    theta : (R, M, n) its maximiser
    point : (R, M, n) the next linearisation point (store it as the next round's ``start``)
    cuts : ((R, M, n), (R, M))
        Half-spaces ``{a^T theta <= b}`` that contain ``C_t`` (from the last linearisation).
    s : (R, M)
        The duality parameter of the last model problem (a hint for the next call, ``s_hint``).
    """
    if iterations < 1:
        raise ValueError(f"iterations={iterations} must be at least 1")
    ridge = analysis_ridge(S) if ridge is None else float(ridge)
    R, M, n = directions.shape
    flat = lambda a: a.reshape((R * M,) + a.shape[2:])  # noqa: E731
    lvl = np.repeat(np.asarray(level, dtype=float), M)
    fb_model, fb_radius2 = fallback
    fb_rep = _repeat_model(fb_model, M)
    fb_r2 = np.repeat(np.asarray(fb_radius2, dtype=float), M)
    lin = flat(np.array(start, dtype=float))
    x = flat(np.asarray(directions, dtype=float))[:, None, :]
    hint = None if s_hint is None else np.asarray(s_hint, dtype=float).reshape(-1, 1)
    anchor = fb_model.theta0 if inside_point is None else inside_point
    anchor_rep = np.repeat(np.asarray(anchor, dtype=float), M, axis=0)
    for _ in range(iterations):
        loss0, grad, hess = (flat(v) for v in data.evaluate(lin.reshape(R, M, n)))
        model = QuadraticModel(lin, grad, hess, ridge)
        radius2 = lvl - loss0 + model.half_dist2(model.to_eig(lin))
        # the linearised set meets the ball if the point itself is in both; otherwise solve the
        # trust-region subproblem to find out
        ok = (loss0 <= lvl) & (np.sum(lin * lin, axis=-1) <= S * S)
        if anchor is not None:  # a point of the ball (the MLE) inside the linearised set also shows it
            step = anchor_rep - lin
            ok |= loss0 + np.sum(grad * step, axis=-1) + 0.5 * np.einsum("ri,rij,rj->r", step, hess, step) <= lvl
        unsure = ~ok & (radius2 > 0)
        if unsure.any():
            ok |= unsure & (model.half_dist2(ball_minimiser(model, S)) <= np.where(unsure, radius2, 0.0))
        if not ok.all():
            merge_model(model, fb_rep, ~ok)
            radius2 = np.where(ok, radius2, fb_r2)
        value, theta, hint = model_support(model, radius2, S, x, hint=hint, return_s=True)
        theta = theta[:, 0]
        # by convexity L(theta) >= L(lin) + grad^T (theta - lin): C_t lies in this half-space
        cut_a, cut_b = grad, lvl - loss0 + np.sum(grad * lin, axis=-1)
        move = theta - lin
        length = np.sqrt(np.sum(move * move, axis=-1))
        lin = lin + np.minimum(1.0, max_move / np.maximum(length, 1e-300))[:, None] * move
    cuts = (cut_a.reshape(R, M, n), cut_b.reshape(R, M))
    return value.reshape(R, M), theta.reshape(R, M, n), lin.reshape(R, M, n), cuts, hint.reshape(R, M)


def ball_halfspace_support(x: np.ndarray, A: np.ndarray, b: np.ndarray, S: float) -> np.ndarray:
    """``max x^T theta`` s.t. ``||theta|| <= S`` and ``A theta <= b`` (two half-spaces), exactly.

    Used as a certified upper bound on optimistic values: every cut returned by
    :func:`support_points` contains ``C_t``. The optimum lies on one of four faces (ball only;
    ball and one plane; ball and both planes) and each face has a closed-form maximiser; the
    largest feasible one is the optimum.

    Parameters
    ----------
    x : (N, n); A : (N, 2, n); b : (N, 2)

    Returns
    -------
    (N,) the optimum (``-inf`` where the set is empty)
    """
    tol = 1e-9
    xn = np.sqrt(np.sum(x * x, axis=-1))
    best = np.full(x.shape[0], -np.inf)

    def feasible(theta):
        return np.all(np.einsum("njk,nk->nj", A, theta) <= b + tol * (1 + np.abs(b)), axis=-1)

    theta0 = S * np.divide(x, xn[:, None], out=np.zeros_like(x), where=xn[:, None] > 0)
    best = np.where(feasible(theta0), S * xn, best)
    for j in range(2):
        a = A[:, j]
        an = np.sqrt(np.sum(a * a, axis=-1))
        ahat = np.divide(a, an[:, None], out=np.zeros_like(a), where=an[:, None] > 0)
        beta = np.divide(b[:, j], an, out=np.full_like(an, np.inf), where=an > 0)
        xa = np.sum(x * ahat, axis=-1)
        xp = x - xa[:, None] * ahat
        xpn = np.sqrt(np.sum(xp * xp, axis=-1))
        r = np.sqrt(np.maximum(S * S - beta * beta, 0.0))
        theta = beta[:, None] * ahat + r[:, None] * np.divide(
            xp, xpn[:, None], out=np.zeros_like(xp), where=xpn[:, None] > 0
        )
        ok = (np.abs(beta) <= S) & feasible(theta)
        best = np.where(ok, np.maximum(best, xa * beta + xpn * r), best)
    gram = np.einsum("nik,njk->nij", A, A)
    det = gram[:, 0, 0] * gram[:, 1, 1] - gram[:, 0, 1] ** 2
    good = det > 1e-12 * (gram[:, 0, 0] * gram[:, 1, 1] + 1e-300)
    inv = np.stack([np.stack([gram[:, 1, 1], -gram[:, 0, 1]], -1), np.stack([-gram[:, 0, 1], gram[:, 0, 0]], -1)], -2)
    inv = inv / np.where(good, det, 1.0)[:, None, None]
    theta_p = np.einsum("njk,nj->nk", A, np.einsum("nij,nj->ni", inv, b))  # min-norm point of both planes
    xproj = x - np.einsum("njk,nj->nk", A, np.einsum("nij,nj->ni", inv, np.einsum("njk,nk->nj", A, x)))
    r2 = S * S - np.sum(theta_p * theta_p, axis=-1)
    val = np.sum(x * theta_p, axis=-1) + np.sqrt(np.maximum(r2, 0.0)) * np.sqrt(np.sum(xproj * xproj, axis=-1))
    best = np.where(good & (r2 >= 0), np.maximum(best, val), best)
    return best


def _from_eig_sequential(eigvec: np.ndarray, theta_bar: np.ndarray) -> np.ndarray:
    """``Q theta_bar`` for coordinate-first ``theta_bar`` (n, R, K) -> (R, K, n), its sums over the
    ``n`` coordinates added in order (``((p0 + p1) + p2) + p3``) whatever the number of columns.

    (``einsum`` orders such a sum by the memory layout, which for a transposed array depends on
    whether there is one column or several: a run's maximiser would then depend on how many other
    runs share the call.)
    """
    n = theta_bar.shape[0]
    out = eigvec[:, None, :, 0] * theta_bar[0][..., None]
    for j in range(1, n):
        out = out + eigvec[:, None, :, j] * theta_bar[j][..., None]
    return out


def _repeat_model(model: QuadraticModel, m: int) -> QuadraticModel:
    out = object.__new__(QuadraticModel)
    for name in ("theta0", "grad", "eigval", "eigvec", "center_bar", "center"):
        setattr(out, name, np.repeat(getattr(model, name), m, axis=0))
    return out
