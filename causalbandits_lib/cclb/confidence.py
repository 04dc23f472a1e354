"""Norm-constrained logistic MLE, the loss-based confidence set and the exact optimistic step.

Notation (Chen, Tian and Quinn 2025, §3.1, after Lee, Yun and Jun 2024): with played features
``x_s = f(Z_s)`` and outcomes ``y_s`` of the rounds before ``t``,

- log-loss ``L_t(theta) = sum_s [log(1 + exp(x_s^T theta)) - y_s x_s^T theta]`` (unregularised);
- MLE ``theta_hat_t = argmin_{||theta|| <= S} L_t(theta)``;
- confidence set (Eq. 10) ``C_t = {||theta|| <= S : L_t(theta) - L_t(theta_hat_t) <= beta_t^2}`` with
  ``beta_t^2 = 10 n log(S t / (4 n) + e) + 2 ((e - 2) + S) log(1/alpha)``. The supplied text prints it
  without the square; Algorithm 2 line 3 and Lee et al.'s Theorem 1 show it is the squared radius
  (**reconstructed**);
- optimistic value of a decision ``U_t(x) = max_{theta in C_t} x^T theta``, one convex problem per
  candidate (:func:`optimistic_exact`, cvxpy); the fast approximations are in :mod:`.optimism`.

Losses are evaluated through :class:`LogisticData`, which covers the raw observations and the
binned summary of :mod:`.history` alike. All vectorised functions take a leading runs axis ``R``;
data are stored time-last, ``X (R, n, P)``, so every sum over data is a contiguous reduction (or one
BLAS call per run) whose result does not depend on how many runs are stacked.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

__all__ = [
    "beta_squared",
    "analysis_ridge",
    "LogisticData",
    "log_loss",
    "weighted_gram",
    "QuadraticModel",
    "ball_minimiser",
    "merge_model",
    "ball_newton_step",
    "constrained_mle",
    "constrained_mle_scipy",
    "in_confidence_set",
    "optimistic_exact",
    "optimistic_exact_task",
]


def beta_squared(t, n: int, S: float, alpha: float, denominator: float = 4.0):
    """``beta_t(alpha)^2 = 10 n log(S t / (denominator n) + e) + 2 ((e - 2) + S) log(1/alpha)`` (Eq. 10).

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The confidence set and its radius'
    (equation ``cclb-eq10-confidence-set``).

    ``denominator`` is 4 in the supplied text and 2 in Lee et al.'s code (notes, ambiguity A4).

    Parameters
    ----------
    t : int or array
        Round index, 1-based (``C_t`` uses the ``t - 1`` observations before round ``t``).
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha={alpha} must lie in (0, 1]")
    if S <= 0 or n < 1 or denominator <= 0:
        raise ValueError(f"need S > 0, n >= 1 and denominator > 0; got S={S}, n={n}, denominator={denominator}")
    t = np.asarray(t, dtype=float)
    return 10.0 * n * np.log(S * t / (denominator * n) + math.e) + 2.0 * ((math.e - 2.0) + S) * math.log(1.0 / alpha)


def analysis_ridge(S: float) -> float:
    """``lambda_t = 1 / (4 S^2 (2 + 2S))`` of Lemma 7 (analysis only in the paper; we use it as the
    proximal term of the Newton step and the ridge of the quadratic models, so both stay well posed
    before ``n`` independent features are seen)."""
    return 1.0 / (4.0 * S * S * (2.0 + 2.0 * S))


def weighted_gram(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_j w_j x_j x_j^T`` per run (and per leading batch index), for ``X (..., n, P)``, ``w (..., P)``.

    A batched matrix product: one BLAS call per matrix, the same call whatever the number of runs
    (the tests check that stacking runs does not change a bit)."""
    return (X * w[..., None, :]) @ np.swapaxes(X, -1, -2)


def _softplus_from(z: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``log(1 + exp(z))`` given ``p = g(z)``: ``-log(1 - p)``, exact to rounding while ``z`` is
    moderate (always here: ``|z| <= S ||x||``); ``z`` itself beyond 30."""
    with np.errstate(divide="ignore"):
        return np.where(z > 30.0, z, -np.log1p(-p))


class LogisticData:
    """The log-loss of every run in the form ``L(theta) = sum_j w_j log(1 + exp(x_j^T theta)) - b^T theta``.

    The raw observations give ``w_j = 1`` and ``b = sum_s y_s x_s`` (:meth:`from_observations`); the
    binned summary of :class:`~causalbandits_lib.cclb.history.BinnedHistory` gives weighted
    pseudo-points and the same exact ``b``.

    Parameters
    ----------
    X : (R, n, P); weights : (R, P) or None (all ones); b : (R, n)
    """

    def __init__(self, X: np.ndarray, weights: np.ndarray | None, b: np.ndarray):
        self.X = X
        self.weights = weights
        self.b = np.asarray(b, dtype=float)

    @classmethod
    def from_observations(cls, X: np.ndarray, y: np.ndarray) -> "LogisticData":
        """Raw data ``X (R, n, t)``, ``y (R, t)``."""
        X = np.asarray(X, dtype=float)
        return cls(X, None, np.einsum("rkt,rt->rk", X, np.asarray(y, dtype=float)))

    @property
    def n_runs(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def rows(self, r: np.ndarray) -> "LogisticData":
        """The data of the runs ``r`` only."""
        return LogisticData(self.X[r], None if self.weights is None else self.weights[r], self.b[r])

    def evaluate(self, theta: np.ndarray, with_loss: bool = True):
        """Loss, gradient and Hessian at ``theta`` of shape (R, n), or (R, M, n) for ``M`` points per run.

        Returns
        -------
        loss : (R,) or (R, M), None unless ``with_loss``; grad : (..., n); hess : (..., n, n)
        """
        theta = np.asarray(theta, dtype=float)
        single = theta.ndim == 2
        th = theta[:, None, :] if single else theta
        X = self.X
        z = np.einsum("rmk,rkp->rmp", th, X)
        p = expit(z)
        w = 1.0 if self.weights is None else self.weights[:, None, :]
        wp = w * p
        grad = np.einsum("rkp,rmp->rmk", X, wp) - self.b[:, None, :]
        hess = weighted_gram(X[:, None], wp * (1.0 - p))
        loss = None
        if with_loss:
            loss = np.sum(w * _softplus_from(z, p), axis=-1) - np.einsum("rmk,rk->rm", th, self.b)
        if single:
            return (None if loss is None else loss[:, 0]), grad[:, 0], hess[:, 0]
        return loss, grad, hess

    def loss(self, theta: np.ndarray) -> np.ndarray:
        """``L(theta)`` for ``theta`` of shape (R, n) or (R, M, n)."""
        theta = np.asarray(theta, dtype=float)
        single = theta.ndim == 2
        th = theta[:, None, :] if single else theta
        z = np.einsum("rmk,rkp->rmp", th, self.X)
        w = 1.0 if self.weights is None else self.weights[:, None, :]
        out = np.sum(w * np.logaddexp(0.0, z), axis=-1) - np.einsum("rmk,rk->rm", th, self.b)
        return out[:, 0] if single else out


def log_loss(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``L_t(theta)`` of raw data for every run: ``theta (R, n)``, ``X (R, n, t)``, ``y (R, t)`` -> (R,).

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The maximum-likelihood estimate'
    (equation ``cclb-constrained-mle``).
    """
    z = np.einsum("rk,rkt->rt", theta, X)
    return np.sum(np.logaddexp(0.0, z) - y * z, axis=-1)


# ---------------------------------------------------------------------------- Newton step on the ball
class QuadraticModel:
    """Second-order model ``m(theta) = L0 + g^T (theta - theta0) + 1/2 (theta - theta0)^T H_r (theta - theta0)``
    of the loss around ``theta0`` (``H_r = H + ridge I``), in the eigenbasis of ``H_r``.

    Attributes
    ----------
    theta0 : (R, n); grad : (R, n); eigval : (R, n); eigvec : (R, n, n) (columns)
    center : (R, n)
        The unconstrained minimiser ``c = theta0 - H_r^{-1} g``.
    """

    def __init__(self, theta0: np.ndarray, grad: np.ndarray, hess: np.ndarray, ridge: float):
        self.theta0 = np.asarray(theta0, dtype=float)
        self.grad = np.asarray(grad, dtype=float)
        n = self.theta0.shape[-1]
        self.eigval, self.eigvec = np.linalg.eigh(np.asarray(hess, dtype=float) + ridge * np.eye(n))
        if np.any(self.eigval <= 0):
            raise ValueError(
                f"the model Hessian must be positive definite (ridge={ridge}); "
                f"smallest eigenvalue {self.eigval.min():.3g}"
            )
        g_bar = self.to_eig(self.grad)
        self.center_bar = self.to_eig(self.theta0) - g_bar / self.eigval
        self.center = self.from_eig(self.center_bar)

    def to_eig(self, v: np.ndarray) -> np.ndarray:
        """Coordinates in the eigenbasis: ``Q^T v`` for ``v`` of shape (R, n) or (R, K, n)."""
        if v.ndim == 2:
            return np.einsum("rji,rj->ri", self.eigvec, v)
        return np.einsum("rji,rkj->rki", self.eigvec, v)

    def from_eig(self, v: np.ndarray) -> np.ndarray:
        if v.ndim == 2:
            return np.einsum("rij,rj->ri", self.eigvec, v)
        return np.einsum("rij,rkj->rki", self.eigvec, v)

    def half_dist2(self, theta_bar: np.ndarray) -> np.ndarray:
        """``1/2 (theta - c)^T H_r (theta - c)`` for eigen-coordinates ``theta_bar`` (R, n)."""
        d = theta_bar - self.center_bar
        return 0.5 * np.sum(self.eigval * d * d, axis=-1)


def ball_minimiser(model: QuadraticModel, S: float, max_iter: int = 100) -> np.ndarray:
    """Eigen-coordinates of ``argmin_{||theta|| <= S} m(theta)`` (a trust-region subproblem).

    Inside the ball the answer is the centre. Otherwise ``theta(nu) = (H_r + nu I)^{-1} b`` with
    ``b = H_r c``, and ``nu > 0`` solves ``||theta(nu)|| = S``; we use the safeguarded Newton
    iteration of Moré and Sorensen on ``1/S - 1/||theta(nu)||`` (monotone from the left), run
    per run until it converges (converged runs are frozen, so results do not depend on the other runs).
    """
    lam = model.eigval
    b = lam * model.center_bar
    inside = np.sqrt(np.sum(model.center_bar**2, axis=-1)) <= S
    nu = np.zeros(lam.shape[0])
    hi = np.sqrt(np.sum(b * b, axis=-1)) / S  # ||theta(hi)|| <= S there
    active = ~inside
    for _ in range(max_iter):
        if not active.any():
            break
        den = lam + nu[:, None]
        p2 = np.sum((b / den) ** 2, axis=-1)
        pn = np.sqrt(p2)
        dp = -np.sum(b * b / den**3, axis=-1) / pn  # d||p|| / d nu
        phi = 1.0 / S - 1.0 / pn
        dphi = dp / p2
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(dphi != 0, -phi / dphi, 0.0)
        new = nu + step
        new = np.where((new <= 0) | (new >= hi) | ~np.isfinite(new), 0.5 * (nu + hi), new)
        done = np.abs(pn - S) <= 1e-13 * S
        active = active & ~done
        nu = np.where(active, new, nu)
    theta_bar = b / (lam + nu[:, None])
    return np.where(inside[:, None], model.center_bar, theta_bar)


def ball_newton_step(theta: np.ndarray, grad: np.ndarray, hess: np.ndarray, S: float, ridge: float):
    """One Newton step for ``min_{||theta|| <= S} L`` from ``theta``: minimise the quadratic model
    (with proximal ridge) over the ball exactly.

    Returns
    -------
    theta_new : (R, n)
    model : QuadraticModel around ``theta``
    decrease : (R,) predicted decrease ``m(theta) - m(theta_new) >= 0``
    """
    model = QuadraticModel(theta, grad, hess, ridge)
    new_bar = ball_minimiser(model, S)
    new = model.from_eig(new_bar)
    norm = np.sqrt(np.sum(new * new, axis=-1))
    new = np.where((norm > S)[:, None], new * (S / np.maximum(norm, 1e-300))[:, None], new)  # rounding only
    step_bar = new_bar - model.to_eig(theta)
    g_bar = model.to_eig(grad)
    decrease = -(np.sum(g_bar * step_bar, axis=-1) + 0.5 * np.sum(model.eigval * step_bar**2, axis=-1))
    return new, model, decrease


def constrained_mle(
    data: LogisticData,
    S: float,
    theta0: np.ndarray | None = None,
    ridge: float | None = None,
    max_steps: int = 100,
    tol: float = 1e-13,
    full_step_below: float = 0.0,
):
    """Norm-constrained MLE by Newton steps on the ball with a backtracking line search.

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The maximum-likelihood estimate'
    (equation ``cclb-constrained-mle``).

    Parameters
    ----------
    data : LogisticData
    theta0 : (R, n), optional
        Warm start (default 0).
    max_steps : int
        Newton steps at most; ``1`` gives the warm-started single step used in long runs.
    tol : float
        Stop a run when the predicted decrease falls below ``tol``.
    full_step_below : float
        Take full steps without evaluating the loss when the step is shorter than this (Euclidean).
        The logistic loss with ``||x|| <= 1`` is generalised self-concordant:
        ``exp(-||d||) H(theta) <= H(theta + d) <= exp(||d||) H(theta)``, so on short steps the
        quadratic model is accurate. Longer steps backtrack until the loss decreases. ``0``
        always checks.

    Returns
    -------
    theta : (R, n)
    model : QuadraticModel at the last linearisation point (the model whose ball-minimiser is ``theta``)
    steps : (R,) int, Newton steps taken per run
    loss : (R,) the model's value at ``theta`` (``L(theta)`` to second order in the last step;
        exact at convergence)
    """
    R, n = data.n_runs, data.n_features
    ridge = analysis_ridge(S) if ridge is None else float(ridge)
    theta = np.zeros((R, n)) if theta0 is None else np.array(theta0, dtype=float)
    active = np.ones(R, dtype=bool)
    steps = np.zeros(R, dtype=np.int64)
    model = None
    loss_model = np.zeros(R)
    for _ in range(max_steps):
        loss, grad, hess = data.evaluate(theta)
        new, step_model, dec = ball_newton_step(theta, grad, hess, S, ridge)
        if model is None:
            model = step_model
        else:
            merge_model(model, step_model, active)
        length = np.sqrt(np.sum((new - theta) ** 2, axis=-1))
        check = active & (length >= full_step_below)
        if check.any():
            alpha = np.ones(R)
            cand = new.copy()
            for _ in range(60):
                trial = data.loss(cand)
                bad = check & (trial > loss - 1e-4 * alpha * dec) & (alpha > 1e-12)
                if not bad.any():
                    break
                alpha = np.where(bad, 0.5 * alpha, alpha)
                cand = np.where(bad[:, None], theta + alpha[:, None] * (new - theta), cand)
            new = cand
        step_bar = model.to_eig(new) - model.to_eig(theta)
        g_bar = model.to_eig(grad)
        predicted = loss + np.sum(g_bar * step_bar, axis=-1) + 0.5 * np.sum(model.eigval * step_bar**2, axis=-1)
        loss_model = np.where(active, predicted, loss_model)
        theta = np.where(active[:, None], new, theta)
        steps += active
        active = active & (dec > tol)
        if not active.any():
            break
    return theta, model, steps, loss_model


def merge_model(into: QuadraticModel, new: QuadraticModel, which: np.ndarray) -> None:
    """Replace, in place, the model of the runs ``which`` (a boolean mask) by ``new``'s (per-run bookkeeping)."""
    for name in ("theta0", "grad", "eigval", "eigvec", "center_bar", "center"):
        old = getattr(into, name)
        mask = which.reshape((-1,) + (1,) * (old.ndim - 1))
        setattr(into, name, np.where(mask, getattr(new, name), old))


def constrained_mle_scipy(X: np.ndarray, y: np.ndarray, S: float) -> np.ndarray:
    """Reference fit for one run with scipy (SLSQP with analytic gradient, ``||theta||^2 <= S^2``).

    Parameters
    ----------
    X : (n, t); y : (t,)

    Returns
    -------
    theta : (n,)
    """
    from scipy.optimize import minimize

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)

    def fun(th):
        z = th @ X
        return float(np.sum(np.logaddexp(0.0, z) - y * z))

    def jac(th):
        return X @ (expit(th @ X) - y)

    cons = {"type": "ineq", "fun": lambda th: S * S - th @ th, "jac": lambda th: -2.0 * th}
    res = minimize(
        fun, np.zeros(X.shape[0]), jac=jac, method="SLSQP", constraints=[cons], options={"ftol": 1e-12, "maxiter": 1000}
    )
    if not res.success:
        raise RuntimeError(f"scipy reference MLE did not converge: {res.message}")
    return res.x


def in_confidence_set(theta: np.ndarray, data: LogisticData, loss_hat: np.ndarray, beta_sq, S: float) -> np.ndarray:
    """Whether ``theta`` (R, n) lies in ``C_t``: ``L_t(theta) - L_t(theta_hat) <= beta_t^2`` and ``||theta|| <= S``.

    Derived in notebooks/cclb/02_confidence_sets.md, section 'The confidence set and its radius'
    (equation ``cclb-eq10-confidence-set``).
    """
    gap = data.loss(theta) - loss_hat
    return (gap <= beta_sq) & (np.sqrt(np.sum(theta * theta, axis=-1)) <= S * (1 + 1e-12))


def optimistic_exact(
    X: np.ndarray, y: np.ndarray, loss_hat: float, beta_sq: float, S: float, x: np.ndarray, solver: str = "CLARABEL"
):
    """The exact optimistic step for one run: for each candidate, the convex program
    ``max x^T theta  s.t.  L_t(theta) <= L_t(theta_hat) + beta^2,  ||theta|| <= S`` (cvxpy).

    Parameters
    ----------
    X : (n, t); y : (t,); loss_hat : float, ``L_t(theta_hat_t)``
    x : (K, n) candidate features

    Returns
    -------
    value : (K,); theta : (K, n)

    Notes
    -----
    ``solver`` is tried first and SCS (tight tolerances) second. An ``optimal`` status is preferred;
    ``optimal_inaccurate`` is accepted only when neither solver reaches ``optimal``, and then cvxpy's
    warning is shown. (Conic solvers report inaccurate solutions on this program when the
    confidence set is very thin.)

    Raises
    ------
    RuntimeError
        If neither solver reports an (inaccurate) optimal solution, naming the candidate and the status.
    """
    import warnings

    import cvxpy as cp

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    x = np.asarray(x, dtype=float)
    K, n = x.shape
    if X.shape[1] == 0:  # C_1 is the whole ball
        norms = np.sqrt(np.sum(x * x, axis=-1))
        theta = S * np.divide(x, norms[:, None], out=np.zeros_like(x), where=norms[:, None] > 0)
        return S * norms, theta
    theta = cp.Variable(n)
    direction = cp.Parameter(n)
    scale = 1.0 / X.shape[1]  # the loss per observation keeps the conic problem well scaled
    z = X.T @ theta
    loss = scale * (cp.sum(cp.logistic(z)) - (X @ y) @ theta)
    problem = cp.Problem(
        cp.Maximize(direction @ theta), [loss <= scale * (float(loss_hat) + float(beta_sq)), cp.norm(theta, 2) <= S]
    )
    values, thetas = np.empty(K), np.empty((K, n))
    for k in range(K):
        direction.value = x[k]
        statuses, inaccurate = [], None
        for name in (solver, "SCS"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    problem.solve(solver=name, **({"eps": 1e-9, "max_iters": 200000} if name == "SCS" else {}))
                except cp.error.SolverError as err:
                    statuses.append(f"{name}: {err}")
                    continue
            statuses.append(f"{name}: {problem.status}")
            if theta.value is None:
                continue
            if problem.status == "optimal":
                thetas[k] = theta.value
                break
            if problem.status == "optimal_inaccurate" and inaccurate is None:
                inaccurate = (theta.value.copy(), caught)
        else:
            if inaccurate is None:
                raise RuntimeError(f"optimistic step: no solution for candidate {k} ({'; '.join(statuses)})")
            thetas[k] = inaccurate[0]
            for w in inaccurate[1]:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        values[k] = float(x[k] @ thetas[k])
    return values, thetas


def optimistic_exact_task(
    X: np.ndarray, y: np.ndarray, loss_hat: float, beta_sq: float, S: float, x: np.ndarray
) -> tuple[np.ndarray, list[tuple]]:
    """:func:`optimistic_exact` for one run, as a task of
    :func:`~causalbandits_lib.core.parallel.map_tasks` (the exact comparisons of
    :func:`~.experiments.compare_optimistic_steps`). It lives here so that a worker process needs
    this light module and cvxpy, not :mod:`.experiments` and the compiled kernels it imports.

    Returns
    -------
    value : (K,); warnings : list of ``(message, category, filename, lineno)``, those raised while
    solving, as plain data for the caller to re-issue (a worker's own warnings would not reach it).
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values, _ = optimistic_exact(X, y, loss_hat, beta_sq, S, x)
    return values, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]
