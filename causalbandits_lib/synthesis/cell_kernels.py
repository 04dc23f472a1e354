"""Compiled kernel (numba) of CCLB and ε-CCLB on the recommender's (context, item) cells.

:class:`CellCCLBKernel` steps :class:`~.logistic.LogisticView` around :class:`~.logistic.CellCCLB`
against :class:`~.model.RecommenderEnv`, every run through a block of rounds: the norm-constrained
MLE on the cell counts, the ``"sqp"`` optimistic step of the four candidates (each from the slot of
its cell), the tie-broken optimistic choice, CCLB's Lagrangian score and dual step, the
environment's exact feedback and the counts' update. It also covers the ``"quadratic"`` mode and
the ``"fairer"`` tie rule; not the ``"exact"`` mode (cvxpy) nor other policies.

The numpy classes stay the readable reference. The kernel reads the same streams (the
environment's contexts and clicks, the policy's tie-breaking uniforms) and leaves the policy as the
numpy path would after every block (MLE, slots, dual variable, counts, last diagnostics), so a
block may end at any round.

Why it is short: with one-hot features the loss's Hessian is diagonal (:class:`~.logistic.CellData`),
so every quadratic model of the loss is diagonal in the cells. The numpy path still calls ``eigh``,
which for a diagonal matrix only sorts the diagonal (its eigenvectors are a permutation); the
kernel skips it and runs the cclb chapter's pieces in the cells' own coordinates: the support
function and its search for the duality parameter
(:func:`~causalbandits_lib.cclb.kernels.model_support_eig`) and the ball minimiser
(:func:`~causalbandits_lib.cclb.kernels.ball_minimiser_eig`).

Identity with the numpy path: the same decisions, values equal to rounding, not bit for bit. The
numpy path adds over the models' eigen-coordinates (the cells sorted by curvature), and in its
search for ``s`` it adds pairwise or in order depending on how many columns are still searching;
the kernel adds over the cells in order. The values the chapter records (regret, reward,
discrepancy, violation, exposure) are exact functions of the decisions and agree exactly; the
estimates (dual variable, estimated violation, optimistic value) agree within 1e-9 relative
(``tests/synthesis/test_cell_kernels.py``). A run's numbers do not depend on the runs beside it.

The module registers :func:`kernel_for` as the compiled fast path of :class:`~.logistic.LogisticView`
(:func:`~causalbandits_lib.core.kernels.register_kernel`) when it is imported, which the chapter's
package does: the view does not import it back.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..cclb.confidence import beta_squared
from ..cclb.kernels import (
    argmax_atol_row,
    ball_minimiser_eig,
    expit_scalar,
    half_dist2,
    lagrangian_choice,
    model_support_eig,
    softplus,
    tie_threshold,
)
from ..core.kernels import argmax_ties_row, np_maximum, np_minimum, register_kernel
from . import model as M
from .logistic import N_CELLS, CellCCLB, LogisticView, cell_context

__all__ = ["FEEDBACK", "DIAGNOSTICS", "CellCCLBKernel", "kernel_for"]

#: Per-round values of the environment the kernel writes (floats), besides the codes ``O`` and ``I``.
FEEDBACK = ("reward", "regret", "delta", "violation", "violation_pos", "cf_unfair")
#: The policy's diagnostics (floats), besides ``exposure`` (the one-hot deployed distribution).
DIAGNOSTICS = ("dual", "estimated_violation", "optimistic_value")
_REC = FEEDBACK + DIAGNOSTICS
#: The MLE takes this many Newton steps before ``mle_warmup`` rounds (the numpy path's "to convergence").
WARMUP_STEPS = 100


# ---------------------------------------------------------------------------- the cell loss
@njit(cache=True, error_model="numpy")
def _evaluate(count, clicks, th, grad, hess):
    """:meth:`~.logistic.CellData.evaluate` at one point: returns the loss
    ``sum_c n_c log(1 + exp(th_c)) - s_c th_c``, writes the gradient and the Hessian's diagonal. A
    cell never played adds nothing to the loss (its weight is zero)."""
    soft = 0.0
    lin = 0.0
    for i in range(th.shape[0]):
        z = th[i]
        p = expit_scalar(z)
        wp = count[i] * p
        grad[i] = wp - clicks[i]
        hess[i] = wp * (1.0 - p)
        if count[i] != 0.0:
            soft += count[i] * softplus(z)
        lin += z * clicks[i]
    return soft - lin


@njit(cache=True, error_model="numpy")
def _loss(count, clicks, th):
    """:meth:`~.logistic.CellData.loss` at one point (the line search's trial points)."""
    soft = 0.0
    lin = 0.0
    for i in range(th.shape[0]):
        if count[i] != 0.0:
            soft += count[i] * softplus(th[i])
        lin += th[i] * clicks[i]
    return soft - lin


@njit(cache=True, error_model="numpy")
def _model(theta0, grad, hess, ridge, ev, cb):
    """:class:`~causalbandits_lib.cclb.confidence.QuadraticModel` of a diagonal Hessian, in the
    cells' coordinates: curvatures ``ev = hess + ridge`` and centre ``cb = theta0 - grad / ev``.
    Returns False if a curvature is not positive."""
    ok = True
    for i in range(theta0.shape[0]):
        ev[i] = hess[i] + ridge
        if not ev[i] > 0:
            ok = False
        cb[i] = theta0[i] - grad[i] / ev[i]
    return ok


# ---------------------------------------------------------------------------- the MLE
@njit(cache=True, error_model="numpy")
def _mle(count, clicks, theta, S, ridge, max_steps, tol, full_step_below, ev, cb, wk):
    """:func:`~causalbandits_lib.cclb.confidence.constrained_mle` for one run: Newton steps on the
    ball (the model minimised exactly over the ball), each longer than ``full_step_below`` checked
    by a backtracking line search, until the predicted decrease is at most ``tol``. ``theta`` is
    updated in place and the model of the last step written to ``ev``, ``cb``; returns the model's
    value at the new ``theta`` and whether every model was positive definite. ``wk``: scratch (5 x n)."""
    n = theta.shape[0]
    grad, hess, nb, new, scratch = wk[0], wk[1], wk[2], wk[3], wk[4]
    loss_model = 0.0
    for _ in range(max_steps):
        loss = _evaluate(count, clicks, theta, grad, hess)
        if not _model(theta, grad, hess, ridge, ev, cb):
            return np.nan, False
        ball_minimiser_eig(ev, cb, S, nb, scratch)
        norm2 = 0.0
        gs = qs = 0.0
        for i in range(n):
            norm2 += nb[i] * nb[i]
            sb = nb[i] - theta[i]
            gs += grad[i] * sb
            qs += ev[i] * (sb * sb)
        dec = -(gs + 0.5 * qs)
        norm = math.sqrt(norm2)
        c = S / np_maximum(norm, 1e-300) if norm > S else 1.0  # rounding only
        length2 = 0.0
        for i in range(n):
            new[i] = nb[i] * c if norm > S else nb[i]
            length2 += (new[i] - theta[i]) * (new[i] - theta[i])
        if math.sqrt(length2) >= full_step_below:
            # halve the step while the loss does not decrease enough (``nb`` keeps the full step)
            for i in range(n):
                nb[i] = new[i]
            alpha = 1.0
            for _ in range(60):
                trial = _loss(count, clicks, new)
                if not ((trial > loss - 1e-4 * alpha * dec) and (alpha > 1e-12)):
                    break
                alpha = 0.5 * alpha
                for i in range(n):
                    new[i] = theta[i] + alpha * (nb[i] - theta[i])
        gs = qs = 0.0
        for i in range(n):
            sb = new[i] - theta[i]
            gs += grad[i] * sb
            qs += ev[i] * (sb * sb)
        loss_model = (loss + gs) + 0.5 * qs
        for i in range(n):
            theta[i] = new[i]
        if not dec > tol:
            break
    return loss_model, True


# ---------------------------------------------------------------------------- the optimistic step
@njit(cache=True, error_model="numpy")
def _support_point(
    count,
    clicks,
    level,
    S,
    xb,
    start,
    fb_ev,
    fb_cb,
    fb_r2,
    iterations,
    ridge,
    has_hint,
    hint,
    inside,
    theta_out,
    lin,
    wk,
    wk_ms,
):
    """:func:`~causalbandits_lib.cclb.optimism.support_points` for one run and one direction
    ``xb``: ``iterations`` times, the diagonal model of the loss at ``lin`` (or the MLE's
    ``fb_*`` where that model's set misses the ball), its support point, and a move of at most 1
    towards it. Returns the value, the duality parameter ``s`` and whether every model was positive
    definite; writes the maximiser to ``theta_out`` and the next linearisation point to ``lin``.
    ``wk``: scratch (6 x n); ``wk_ms``: :func:`~causalbandits_lib.cclb.kernels.model_support_eig`'s."""
    n = lin.shape[0]
    grad, hess, ev, cb, tb, ball = wk[0], wk[1], wk[2], wk[3], wk[4], wk[5]
    for i in range(n):
        lin[i] = start[i]
    value, s = np.nan, hint
    use_hint = has_hint
    for _ in range(iterations):
        loss0 = _evaluate(count, clicks, lin, grad, hess)
        if not _model(lin, grad, hess, ridge, ev, cb):
            return np.nan, np.nan, False
        radius2 = level - loss0 + half_dist2(ev, cb, lin)
        # the linearised set meets the ball if the point is in both, or if the MLE is in the set
        norm2 = gs = quad = 0.0
        for i in range(n):
            norm2 += lin[i] * lin[i]
            st = inside[i] - lin[i]
            gs += grad[i] * st
            quad += st * hess[i] * st
        ok = (loss0 <= level) and (norm2 <= S * S)
        ok = ok or (loss0 + gs + 0.5 * quad <= level)
        if not ok and radius2 > 0:  # otherwise the trust-region subproblem tells
            ball_minimiser_eig(ev, cb, S, tb, ball)
            ok = half_dist2(ev, cb, tb) <= radius2
        if ok:
            value, s = model_support_eig(ev, cb, radius2, S, xb, use_hint, s, theta_out, wk_ms)
        else:
            value, s = model_support_eig(fb_ev, fb_cb, fb_r2, S, xb, use_hint, s, theta_out, wk_ms)
        use_hint = np.isfinite(s)
        length2 = 0.0
        for i in range(n):
            length2 += (theta_out[i] - lin[i]) * (theta_out[i] - lin[i])
        c = np_minimum(1.0, 1.0 / np_maximum(math.sqrt(length2), 1e-300))
        for i in range(n):
            lin[i] = lin[i] + c * (theta_out[i] - lin[i])
    return value, s, True


# ---------------------------------------------------------------------------- one block of rounds
@njit(cache=True, error_model="numpy")
def _block(
    # the environment's block
    contexts,
    noise,
    means,
    best,
    disc,
    cf,
    tau_env,
    # the policy's knobs and per-round numbers
    ties,
    beta_sq,
    max_steps,
    t_hist0,
    S,
    ridge,
    tie_atol,
    score_atol,
    sqp_iterations,
    quadratic,
    fairer,
    tau,
    rho,
    eps,
    step,
    # the policy's state, updated in place
    theta_hat,
    warm,
    warm_s,
    phi,
    count,
    clicks,
    # outputs
    rec,
    actions,
):
    """Every run through a block of rounds, one run after the other (a run's numbers do not depend
    on the others). ``contexts (R, B)`` are the users' codes, ``noise (R, B, K)`` the click
    uniforms; ``rec (R, B, len(_REC))`` receives the feedback and diagnostics, ``actions (R, B)``
    the items. Returns 0, or 1 if a model was not positive definite (not met: the ridge is positive)."""
    R, B = contexts.shape
    K = means.shape[1]
    n = theta_hat.shape[1]
    ev = np.empty(n)
    cb = np.empty(n)
    xb = np.zeros(n)
    start = np.empty(n)
    nxt = np.empty(n)
    values = np.empty(K)
    thetas = np.empty((K, n))
    score = np.empty(K)
    est_reward = np.empty(K)
    delta = np.empty(K)
    wk_mle = np.empty((5, n))
    wk_sp = np.empty((6, n))
    wk_ms = np.empty((9, n))
    status = 0
    for r in range(R):
        th_hat, cnt, clk = theta_hat[r], count[r], clicks[r]
        for s in range(B):
            c = contexts[r, s]
            # the estimate and the pieces of the confidence set
            loss, ok = _mle(cnt, clk, th_hat, S, ridge, max_steps[s], 1e-10, 0.1, ev, cb, wk_mle)
            if not ok:
                status = 1
            level = loss + beta_sq[s]
            radius2 = beta_sq[s] + half_dist2(ev, cb, th_hat)
            # the optimistic step: every candidate, from the slot of its cell
            for k in range(K):
                cell = K * c + k
                xb[cell] = 1.0
                if quadratic or t_hist0 + s == 0:
                    values[k], _ = model_support_eig(ev, cb, radius2, S, xb, False, 0.0, thetas[k], wk_ms)
                else:
                    for i in range(n):
                        wv = warm[r, cell, i]
                        start[i] = wv if np.isfinite(wv) else th_hat[i]
                    hint = warm_s[r, cell]
                    v, s_new, ok = _support_point(
                        cnt,
                        clk,
                        level,
                        S,
                        xb,
                        start,
                        ev,
                        cb,
                        radius2,
                        sqp_iterations,
                        ridge,
                        np.isfinite(hint),
                        hint,
                        th_hat,
                        thetas[k],
                        nxt,
                        wk_sp,
                        wk_ms,
                    )
                    if not ok:
                        status = 1
                    values[k] = v
                    for i in range(n):
                        warm[r, cell, i] = nxt[i]
                    warm_s[r, cell] = s_new
                xb[cell] = 0.0
            # the optimistic choice
            u = ties[r, s]
            d0 = argmax_atol_row(values, K, u, tie_atol)
            ccf = cf[c]
            if fairer:  # algorithms.fairer_tie, |Delta~| estimated with the first choice's parameter
                tt = thetas[d0]
                thr = tie_threshold(values, K, tie_atol)
                for k in range(K):
                    if values[k] >= thr:
                        score[k] = -abs(expit_scalar(tt[K * ccf + k]) - expit_scalar(tt[K * c + k]))
                    else:
                        score[k] = -np.inf
                d0 = argmax_ties_row(score, K, u, True)
            # CCLB's Lagrangian choice with the optimistic parameter of d0
            tt = thetas[d0]
            for k in range(K):
                est_reward[k] = expit_scalar(tt[K * c + k])
                delta[k] = expit_scalar(tt[K * ccf + k]) - est_reward[k]
            a = lagrangian_choice(est_reward, delta, K, phi[r], tau[r], d0, u, score_atol, score)
            est = abs(delta[a]) - tau[r]
            # the environment's feedback
            mu = means[c, a]
            y = 1.0 if noise[r, s, a] < mu else 0.0
            d = disc[c, a]
            rec[r, s, 0] = y
            rec[r, s, 1] = best[c] - mu
            rec[r, s, 2] = d
            rec[r, s, 3] = d - tau_env
            rec[r, s, 4] = np_maximum(d - tau_env, 0.0)
            rec[r, s, 5] = 1.0 if d > tau_env else 0.0
            rec[r, s, 6] = phi[r]
            rec[r, s, 7] = est
            rec[r, s, 8] = values[d0]
            actions[r, s] = a
            # the counts and the dual step
            cnt[K * c + a] += 1.0
            clk[K * c + a] += y
            phi[r] = np_minimum(np_maximum(phi[r] + step[r] * (est + eps[r]), 0.0), rho[r])
    return status


def _contiguous(obj, name: str, dtype=np.float64) -> np.ndarray:
    """``obj.name`` as a C-contiguous array (replaced on ``obj`` if it was not one), to be updated in place."""
    arr = getattr(obj, name)
    if not (isinstance(arr, np.ndarray) and arr.flags.c_contiguous and arr.dtype == dtype):
        arr = np.ascontiguousarray(arr, dtype=dtype)
        setattr(obj, name, arr)
    return arr


class CellCCLBKernel:
    """:class:`~.logistic.LogisticView` of a :class:`~.logistic.CellCCLB` against
    :class:`~.model.RecommenderEnv` (see the module docstring): writes the environment's feedback
    (``reward``, ``regret``, ``delta``, ``violation``, ``violation_pos``, ``cf_unfair``, the codes
    ``O`` and ``I``) and the policy's diagnostics (``dual``, ``estimated_violation``,
    ``optimistic_value``, ``exposure``)."""

    def __init__(self, view, env):
        self.view, self.policy, self.env = view, view.inner, env
        self.outputs = {name: (np.float64, ()) for name in _REC}
        self.outputs.update(O=(np.int64, ()), I=(np.int64, ()), exposure=(np.float64, (M.N_ITEMS,)))
        self.means = np.ascontiguousarray(env.means, dtype=float)
        self.best = self.means.max(axis=1)
        self.disc = np.ascontiguousarray(env.delta, dtype=float)
        self.cf = np.asarray(M.CF_CONTEXT, dtype=np.int64)

    def run(self, t0: int, t1: int, out) -> None:
        view, p, env = self.view, self.policy, self.env
        h = p.history
        R, B = p.n_runs, t1 - t0
        contexts = np.searchsorted(env.context_cdf, env.context_noise.block(t0, t1), side="right").astype(np.int64)
        noise = np.ascontiguousarray(env.reward_noise.block(t0, t1))
        ties = np.ascontiguousarray(p._ties.block(t0, t1))
        beta = np.array([float(beta_squared(t + 1, N_CELLS, p.S, p.alpha, p.beta_denominator)) for t in range(t0, t1)])
        steps = np.array([WARMUP_STEPS if t < p.mle_warmup else p.mle_steps for t in range(t0, t1)], dtype=np.int64)
        rec = np.empty((R, B, len(_REC)))
        actions = np.empty((R, B), dtype=np.int64)
        status = _block(
            contexts, noise, self.means, self.best, self.disc, self.cf, float(env.tau),
            ties, beta, steps, h.t, p.S, p.ridge, p.tie_atol, p.score_atol, p.sqp_iterations,
            p.optimistic == "quadratic", p.tie_rule == "fairer",
            np.ascontiguousarray(p._tau, dtype=float), np.ascontiguousarray(p._rho, dtype=float),
            np.ascontiguousarray(p._eps, dtype=float), np.ascontiguousarray(p._step, dtype=float),
            _contiguous(p, "theta_hat"), _contiguous(p, "_warm"), _contiguous(p, "_warm_s"), _contiguous(p, "phi"),
            _contiguous(h, "count"), _contiguous(h, "clicks"),
            rec, actions,
        )  # fmt: skip
        if status:
            raise RuntimeError(f"the compiled CCLB kernel met a model that is not positive definite (status {status})")
        # what the numpy path leaves behind after the block's last round
        h.t += B
        p.solved = np.ones((R, M.N_ITEMS), dtype=bool)
        p.uncertified = np.zeros(R, dtype=bool)
        last = rec[:, -1]
        p._est_violation = last[:, _REC.index("estimated_violation")].copy()
        p._diag = {
            "dual": last[:, _REC.index("dual")].copy(),
            "estimated_violation": p._est_violation,
            "optimistic_value": last[:, _REC.index("optimistic_value")].copy(),
        }
        view._ctx = cell_context(contexts[:, -1])
        view._actions = actions[:, -1].copy()
        env._context = contexts[:, -1].copy()
        for name, arr in out.items():
            if name == "O":
                arr[...] = contexts
            elif name == "I":
                arr[...] = actions
            elif name == "exposure":
                arr[...] = np.eye(M.N_ITEMS)[actions]
            else:
                arr[...] = rec[:, :, _REC.index(name)]


def kernel_for(view, env):
    """The compiled kernel of ``view`` (a :class:`~.logistic.LogisticView`) against ``env``, or
    None when it does not cover the pair: another environment or policy, or the ``"exact"`` mode."""
    if type(env) is not M.RecommenderEnv or type(getattr(view, "inner", None)) is not CellCCLB:
        return None
    if view.inner.optimistic not in ("sqp", "quadratic"):
        return None
    if np.shape(env.means) != (M.N_CONTEXTS, M.N_ITEMS):
        return None
    return CellCCLBKernel(view, env)


register_kernel(LogisticView, kernel_for)
