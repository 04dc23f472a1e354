"""Compiled kernel (numba) of the OFULog+ family against the fair logistic bandit.

:class:`OFULogKernel` steps :class:`~.algorithms.OFULogPlus` and :class:`~.algorithms.CCLB` (so
also epsilon-CCLB, and every configuration of the configurations x replications layout) against
:class:`~.environment.FairLogisticBandit`, every run through a block of rounds: the norm-constrained
MLE (Newton steps on the ball with the line search of the warm-up), the optimistic step, the
tie-broken choice, CCLB's Lagrangian score and dual step, the environment's exact feedback and the
binned history's update. It covers the optimistic modes ``"sqp"`` (support points at the anchors,
the chord and half-space bounds, the extra solves) and ``"quadratic"`` on the binned loss
(:class:`~.history.BinnedHistory`, ``loss_bins > 0``) with either feature map. It does not cover
the ``"exact"`` mode (cvxpy), the raw-observation loss (``loss_bins = 0``), GLM-UCB, or subclasses.

The numpy classes stay the readable reference; the kernel takes the same steps on the same random
streams, and its decisions are the numpy path's (the tests compare actions, rewards and regrets
exactly, and the estimates within 1e-9). It does not repeat numpy's arithmetic bit for bit, which
it did until issue 17's last step (the README gives the speed gained): the loss's passes run over
each run's pseudo-points of positive weight only, compacted once a round (:func:`_compact`), in
their order, with an exp and a log written out in arithmetic (:func:`fast_exp`, :func:`fast_log`,
within 1 and 2 ulp of the C library's) so that the compiler can inline and vectorise them; the
gradient and the Hessian's ten distinct entries are accumulated with fused multiply-adds (LLVM's
``fma``: rounded once, so the same on every CPU); the 4 x 4 eigendecompositions are cyclic Jacobi
rotations (:func:`_jacobi4`) instead of LAPACK's ``dsyevd``; the environment's rounds come once
per replication instead of once per run; no scratch is allocated per call. The last bits of the
estimates therefore differ from numpy's (about 1e-14), and over thousands of rounds a near-tie can
be broken the other way, after which the two paths follow different but equally valid
trajectories; the records are computed by the kernel. Its numbers do not depend on numpy's or
BLAS's build, only on the C library's ``exp`` and ``log1p`` in the line search and the choice's
scores.

A run does not depend on its neighbours, bit for bit (``tests/cclb/test_kernels.py`` runs R runs
at once and each alone): a support point starts Newton's iteration on ``s`` from its own slot's
hint when that slot has one (until issue 16 only when *every* run had one), and the maximisers'
change of basis adds its four products in order whatever the number of columns (it followed the
array layout, so a lone extra solve was summed differently). The kernel steps rounds in phases
over all runs, as the numpy path does.

The module sits below the classes it steps (the environment takes :func:`mixture_lp_values` from
it), so it imports neither: :meth:`~.algorithms.OFULogPlus.compiled` checks the exact types of the
pair and says whether the policy is CCLB, and :func:`kernel_for` checks the rest.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ..core.kernels import argmax_ties_row, np_maximum, np_minimum
from .confidence import beta_squared

__all__ = [
    "OFULogKernel",
    "kernel_for",
    "fast_exp",
    "fast_log",
    "mixture_lp_values",
    "expit_scalar",
    "argmax_atol_row",
    "minimise_support_any",
    "model_support_eig",
    "ball_minimiser_eig",
    "half_dist2",
    "softplus",
    "tie_threshold",
    "lagrangian_choice",
    "environment_feedback",
    "fma",
    "float_bits",
    "float_from_bits",
]

UNIT_NORM, HALF_SCALED = 0, 1
FEATURE_CODES = {"unit_norm": UNIT_NORM, "half_scaled": HALF_SCALED}
#: Per-round values the kernel writes: the environment's feedback, then the policy's diagnostics.
FEEDBACK = (
    "action",
    "reward",
    "expected_reward",
    "regret",
    "regret_plus",
    "penalized_regret",
    "violation",
    "violation_pos",
    "unconstrained_regret",
)
DIAGNOSTICS = ("dual", "estimated_violation", "optimistic_value")
#: Per-round values beside those, for recorders that keep the rounds themselves
#: (:class:`~.experiments.PlayedRounds`): the played decision's features ``x_t`` (n,).
PLAYED = ("played_x",)
LOG2 = 0.693147180559945309417232121458176568  # numpy's NPY_LOGE2
#: Rows (of four numbers) of the scratch that :func:`_mle` and :func:`_support_points` take
#: (their own vectors, then their callees'), allocated once per block instead of once per call.
MLE_ROWS, SUPPORT_ROWS = 19, 26


# ---------------------------------------------------------------------------- numpy's sums of four
@njit(cache=True, error_model="numpy", inline="always")
def _seq4(a0, a1, a2, a3):
    """``np.sum`` over four contiguous numbers (and a strided ``einsum``): sequential."""
    return ((a0 + a1) + a2) + a3


@njit(cache=True, error_model="numpy", inline="always")
def _pair4(a0, a1, a2, a3):
    """A four-term ``einsum`` over a contiguous axis: two SSE lanes, then the lanes added."""
    return (a0 + a2) + (a1 + a3)


@njit(cache=True, error_model="numpy", inline="always")
def _dot_seq(x, y):
    return _seq4(x[0] * y[0], x[1] * y[1], x[2] * y[2], x[3] * y[3])


@njit(cache=True, error_model="numpy", inline="always")
def _dot_pair(x, y):
    return _pair4(x[0] * y[0], x[1] * y[1], x[2] * y[2], x[3] * y[3])


@njit(cache=True, error_model="numpy")
def _to_eig(V, v, out):
    """``einsum("rji,rj->ri")``: ``Q^T v`` (strided sum, sequential)."""
    for i in range(4):
        out[i] = _seq4(V[0, i] * v[0], V[1, i] * v[1], V[2, i] * v[2], V[3, i] * v[3])


@njit(cache=True, error_model="numpy")
def _from_eig(V, v, out):
    """``einsum("rij,rj->ri")``: ``Q v`` (contiguous sum, SSE pairs)."""
    for i in range(4):
        out[i] = _pair4(V[i, 0] * v[0], V[i, 1] * v[1], V[i, 2] * v[2], V[i, 3] * v[3])


@njit(cache=True, error_model="numpy")
def _from_eig_seq(V, v, out):
    """``Q v`` with the four products added in order: :func:`~.optimism.model_support`'s change of
    basis of its maximisers (``optimism._from_eig_sequential``)."""
    for i in range(4):
        out[i] = _seq4(V[i, 0] * v[0], V[i, 1] * v[1], V[i, 2] * v[2], V[i, 3] * v[3])


@njit(cache=True, error_model="numpy", inline="always")
def _expit(z):
    return 1.0 / (1.0 + math.exp(-z))


# ---------------------------------------------------------------------------- exp and log in the loss
# The loss pass over the pseudo-points calls exp and log once per point, and the C library's calls
# were half of its time. These two are written out in arithmetic the compiler can inline: exp
# within 1 ulp and log within 2 ulp of the C library's (tests/cclb/test_kernels.py measures both
# on a million arguments).
@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``fma``: one instruction where the CPU has it, the same
    correctly rounded result everywhere)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def _as_float(typingctx, i):
    """The 64 bits of an integer read as a double."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@intrinsic
def _as_int(typingctx, x):
    """The 64 bits of a double read as an integer."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


#: public names of the exact-rounding intrinsics (the GLM-UCB kernel repeats BLAS's fused products)
fma, float_bits, float_from_bits = _fma, _as_int, _as_float

_ROUNDER = 6755399441055744.0  # 1.5 * 2**52: adding it rounds to an integer held in the low bits
_INV_LN2 = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # ln 2 = _LN2_HI + _LN2_LO, _LN2_HI with trailing zero bits
_LN2_LO = 1.9082149292705877e-10
#: Taylor coefficients of exp, 1/13! down to 1/0!; of atanh(f)/f - 1 in f**2, 1/23 down to 1/3.
_EXP_TAYLOR = tuple(1.0 / math.factorial(k) for k in range(13, -1, -1))
_ATANH_SERIES = tuple(1.0 / k for k in range(23, 1, -2))


@njit(cache=True, error_model="numpy", inline="always")
def _horner(coefficients, x):
    p = 0.0
    for c in coefficients:
        p = _fma(p, x, c)
    return p


@njit(cache=True, error_model="numpy")
def fast_exp(x):
    """``exp(x)`` as ``2**n * exp(r)``, ``n`` the integer nearest ``x / ln 2`` and ``|r| <= ln(2)/2``,
    ``exp(r)`` by its Taylor polynomial to degree 13 (remainder below 2e-16 relative). Arguments
    are clipped to [-708, 709] (the loss never comes near: ``|z| <= S``)."""
    x = min(max(x, -708.0), 709.0)
    t = x * _INV_LN2 + _ROUNDER
    n = t - _ROUNDER
    r = (x - n * _LN2_HI) - n * _LN2_LO
    return _horner(_EXP_TAYLOR, r) * _as_float((_as_int(t) + 1023) << 52)


@njit(cache=True, error_model="numpy")
def fast_log(q):
    """``log(q)`` for a positive normal ``q = m 2**k`` with ``m`` in [sqrt(1/2), sqrt(2)): ``k ln 2 +
    2 atanh(f)``, ``f = (m - 1) / (m + 1)``, the odd series of ``atanh`` to ``f**23`` (``|f| <= 0.172``)."""
    bits = _as_int(q)
    k = (bits >> 52) - 1023
    m = _as_float((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > 1.4142135623730951
    m = 0.5 * m if big else m
    k = k + 1 if big else k
    f = (m - 1.0) / (m + 1.0)
    f2 = f * f
    s = _horner(_ATANH_SERIES, f2) * f2 * f
    kf = float(k)
    return kf * _LN2_HI + (2.0 * f + (2.0 * s + kf * _LN2_LO))


# ---------------------------------------------------------------------------- the loss of the binned data
@njit(cache=True, error_model="numpy")
def _compact(X, w, Xc, wc):
    """Copy the pseudo-points of positive weight of one run (``X (4, P)``, ``w (P,)``), in their
    order, to the front of ``Xc`` and ``wc``, then zeros up to the next multiple of 8 (``Xc`` and
    ``wc`` have room: their length is ``P`` rounded up so); returns that length. The loss passes
    below run over these only: a point of weight zero adds exact zeros, and with whole groups of 8
    the vectorised first pass needs no scalar remainder."""
    n = 0
    for p in range(w.shape[0]):
        if w[p] != 0.0:
            for k in range(4):
                Xc[k, n] = X[k, p]
            wc[n] = w[p]
            n += 1
    while n % 8:
        for k in range(4):
            Xc[k, n] = 0.0
        wc[n] = 0.0
        n += 1
    return n


@njit(cache=True, error_model="numpy")
def _evaluate(X, w, n, b, th, grad, gram, pr, sp):
    """:meth:`~.confidence.LogisticData.evaluate` at one point over the first ``n`` (compacted)
    pseudo-points: the loss is returned, the gradient written to ``grad`` and the Hessian to
    ``gram`` (also returned). A first pass computes each point's probability and softplus into
    ``pr`` and ``sp`` (no sums, so the compiler can run it on several points at once); a second
    adds them up in the order of the points, each entry of the symmetric Hessian once."""
    t0, t1, t2, t3 = th[0], th[1], th[2], th[3]
    x0, x1, x2, x3 = X[0], X[1], X[2], X[3]
    for p in range(n):
        z = ((t0 * x0[p] + t1 * x1[p]) + t2 * x2[p]) + t3 * x3[p]
        pp = 1.0 / (1.0 + fast_exp(-z))
        pr[p] = pp
        sp[p] = z if z > 30.0 else -fast_log(1.0 - pp)
    g0 = g1 = g2 = g3 = 0.0
    h00 = h01 = h02 = h03 = h11 = h12 = h13 = h22 = h23 = h33 = 0.0
    total = 0.0
    for p in range(n):
        wt, pp = w[p], pr[p]
        y0, y1, y2, y3 = x0[p], x1[p], x2[p], x3[p]
        a = wt * pp
        g0 = _fma(a, y0, g0)
        g1 = _fma(a, y1, g1)
        g2 = _fma(a, y2, g2)
        g3 = _fma(a, y3, g3)
        v = a * (1.0 - pp)
        v0, v1, v2, v3 = v * y0, v * y1, v * y2, v * y3
        h00 = _fma(v0, y0, h00)
        h01 = _fma(v0, y1, h01)
        h02 = _fma(v0, y2, h02)
        h03 = _fma(v0, y3, h03)
        h11 = _fma(v1, y1, h11)
        h12 = _fma(v1, y2, h12)
        h13 = _fma(v1, y3, h13)
        h22 = _fma(v2, y2, h22)
        h23 = _fma(v2, y3, h23)
        h33 = _fma(v3, y3, h33)
        total = _fma(wt, sp[p], total)
    grad[0] = g0 - b[0]
    grad[1] = g1 - b[1]
    grad[2] = g2 - b[2]
    grad[3] = g3 - b[3]
    gram[0, 0], gram[1, 1], gram[2, 2], gram[3, 3] = h00, h11, h22, h33
    gram[0, 1] = gram[1, 0] = h01
    gram[0, 2] = gram[2, 0] = h02
    gram[0, 3] = gram[3, 0] = h03
    gram[1, 2] = gram[2, 1] = h12
    gram[1, 3] = gram[3, 1] = h13
    gram[2, 3] = gram[3, 2] = h23
    return total - _dot_seq(th, b), gram


@njit(cache=True, error_model="numpy")
def softplus(z):
    """``np.logaddexp(0, z)``, with numpy's branches and the C library's ``exp`` and ``log1p``."""
    if z == 0.0:
        return LOG2
    if -z > 0:
        return math.log1p(math.exp(z))
    if -z <= 0:
        return z + math.log1p(math.exp(-z))
    return -z


@njit(cache=True, error_model="numpy")
def _loss(X, w, n, b, th):
    """:meth:`~.confidence.LogisticData.loss` at one point over the first ``n`` pseudo-points (the
    line search's trial points; ``logaddexp`` as numpy computes it)."""
    t0, t1, t2, t3 = th[0], th[1], th[2], th[3]
    total = 0.0
    for p in range(n):
        z = ((t0 * X[0, p] + t1 * X[1, p]) + t2 * X[2, p]) + t3 * X[3, p]
        total += w[p] * softplus(z)
    return total - _dot_seq(th, b)


# ---------------------------------------------------------------------------- quadratic models
@njit(cache=True, error_model="numpy")
def _jacobi4(a, ev, V):
    """Eigenvalues (ascending, in ``ev``) and unit eigenvectors (the columns of ``V``) of the
    symmetric 4 x 4 matrix ``a`` by cyclic Jacobi rotations; ``a`` is overwritten. Each rotation
    zeroes one off-diagonal entry; sweeps repeat until every off-diagonal entry is negligible
    against its two diagonal entries (relative 1e-18, below the rounding of a double), which takes
    three to five sweeps. Returns False if 50 sweeps were not enough (not met in the tests)."""
    for i in range(4):
        for j in range(4):
            V[i, j] = 1.0 if i == j else 0.0
    done = False
    for _ in range(50):
        done = True
        for p in range(3):
            for q in range(p + 1, 4):
                apq = a[p, q]
                if apq == 0.0:
                    continue
                app, aqq = a[p, p], a[q, q]
                if abs(apq) <= 1e-18 * (abs(app) + abs(aqq)):
                    a[p, q] = 0.0
                    a[q, p] = 0.0
                    continue
                done = False
                # t = tan of the rotation's angle, the smaller root of t^2 + 2ht - 1 with
                # h = (aqq - app) / (2 apq), written with one square root and one division
                d = aqq - app
                t = 2.0 * apq / (abs(d) + math.sqrt(d * d + 4.0 * apq * apq))
                if d < 0:
                    t = -t
                c = 1.0 / math.sqrt(t * t + 1.0)
                sn = t * c
                a[p, p] = app - t * apq
                a[q, q] = aqq + t * apq
                a[p, q] = 0.0
                a[q, p] = 0.0
                for r in range(4):
                    if r != p and r != q:
                        arp, arq = a[r, p], a[r, q]
                        a[r, p] = c * arp - sn * arq
                        a[p, r] = a[r, p]
                        a[r, q] = sn * arp + c * arq
                        a[q, r] = a[r, q]
                for r in range(4):
                    vrp, vrq = V[r, p], V[r, q]
                    V[r, p] = c * vrp - sn * vrq
                    V[r, q] = sn * vrp + c * vrq
        if done:
            break
    for i in range(4):
        ev[i] = a[i, i]
    for i in range(1, 4):  # insertion sort, ascending, columns along
        j = i
        while j > 0 and ev[j - 1] > ev[j]:
            ev[j - 1], ev[j] = ev[j], ev[j - 1]
            for r in range(4):
                V[r, j - 1], V[r, j] = V[r, j], V[r, j - 1]
            j -= 1
    return done


@njit(cache=True, error_model="numpy")
def _qmodel(theta0, grad, hess, ridge, ev, V, cb, tmp, At):
    """:class:`~.confidence.QuadraticModel`: eigenvalues ``ev``, eigenvectors ``V`` and the centre
    in eigen-coordinates ``cb``. Returns False if the Hessian is not positive definite. ``At`` is
    scratch (4 x 4)."""
    for i in range(4):
        for j in range(4):
            At[i, j] = hess[i, j] + ridge * (1.0 if i == j else 0.0)
    ok = _jacobi4(At, ev, V)
    for i in range(4):
        if not ev[i] > 0:
            ok = False
    _to_eig(V, grad, tmp)
    _to_eig(V, theta0, cb)
    for i in range(4):
        cb[i] = cb[i] - tmp[i] / ev[i]
    return ok


@njit(cache=True, error_model="numpy")
def half_dist2(ev, cb, tb):
    """``1/2 (tb - cb)^T diag(ev) (tb - cb)``: a model's distance from its centre in its
    eigen-coordinates, of any length (the terms added in order)."""
    total = 0.0
    for i in range(tb.shape[0]):
        d = tb[i] - cb[i]
        total += ev[i] * d * d
    return 0.5 * total


@njit(cache=True, error_model="numpy")
def ball_minimiser_eig(ev, cb, S, out, b):
    """:func:`~.confidence.ball_minimiser` for one model in eigen-coordinates (eigenvalues ``ev``,
    centre ``cb``), of any length ``n``: writes the minimiser to ``out``; ``b`` is scratch (n).
    Newton's iteration on the ball constraint's multiplier, the sums over the coordinates in order."""
    n = ev.shape[0]
    cc = bb = 0.0
    for i in range(n):
        b[i] = ev[i] * cb[i]
        cc += cb[i] * cb[i]
        bb += b[i] * b[i]
    inside = math.sqrt(cc) <= S
    nu = 0.0
    hi = math.sqrt(bb) / S
    active = not inside
    for _ in range(100):
        if not active:
            break
        p2 = r = 0.0
        for i in range(n):
            den = ev[i] + nu
            q = b[i] / den
            p2 += q * q
            r += b[i] * b[i] / math.pow(den, 3.0)
        pn = math.sqrt(p2)
        dp = -r / pn
        phi = 1.0 / S - 1.0 / pn
        dphi = dp / p2
        step = -phi / dphi if dphi != 0 else 0.0
        new = nu + step
        if new <= 0 or new >= hi or not np.isfinite(new):
            new = 0.5 * (nu + hi)
        if abs(pn - S) <= 1e-13 * S:
            active = False
        else:
            nu = new
    for i in range(n):
        out[i] = cb[i] if inside else b[i] / (ev[i] + nu)


# ---------------------------------------------------------------------------- the MLE
@njit(cache=True, error_model="numpy")
def _mle(X, w, n, b, theta, S, ridge, max_steps, tol, full_step_below, pr, sp, m_ev, m_V, m_cb, gram, wk):
    """:func:`~.confidence.constrained_mle` for one run: ``theta`` is updated in place, the model
    of the last step written to ``m_*``; returns the model's value at the new ``theta``. ``wk`` is
    scratch (:data:`MLE_ROWS` x 4)."""
    grad, ev, cb, tmp, nb, new, cand, tb, gb, sb = wk[0], wk[1], wk[2], wk[3], wk[4], wk[5], wk[6], wk[7], wk[8], wk[9]
    V, At, ball = wk[10:14], wk[14:18], wk[18]
    loss_model = 0.0
    for _ in range(max_steps):
        loss, hess = _evaluate(X, w, n, b, theta, grad, gram, pr, sp)
        if not _qmodel(theta, grad, hess, ridge, ev, V, cb, tmp, At):
            return np.nan, False
        ball_minimiser_eig(ev, cb, S, nb, ball)
        _from_eig(V, nb, new)
        norm = math.sqrt(_dot_seq(new, new))
        if norm > S:
            c = S / np_maximum(norm, 1e-300)
            for i in range(4):
                new[i] = new[i] * c
        _to_eig(V, theta, tb)
        _to_eig(V, grad, gb)
        for i in range(4):
            sb[i] = nb[i] - tb[i]
        dec = -(
            _dot_seq(gb, sb)
            + 0.5
            * _seq4(ev[0] * (sb[0] * sb[0]), ev[1] * (sb[1] * sb[1]), ev[2] * (sb[2] * sb[2]), ev[3] * (sb[3] * sb[3]))
        )
        m_ev[:] = ev
        m_V[:, :] = V
        m_cb[:] = cb
        for i in range(4):
            tmp[i] = (new[i] - theta[i]) * (new[i] - theta[i])
        length = math.sqrt(_seq4(tmp[0], tmp[1], tmp[2], tmp[3]))
        if length >= full_step_below:
            alpha = 1.0
            cand[:] = new
            for _ in range(60):
                trial = _loss(X, w, n, b, cand)
                if not ((trial > loss - 1e-4 * alpha * dec) and (alpha > 1e-12)):
                    break
                alpha = 0.5 * alpha
                for i in range(4):
                    cand[i] = theta[i] + alpha * (new[i] - theta[i])
            new[:] = cand
        _to_eig(V, new, nb)
        _to_eig(V, theta, tb)
        for i in range(4):
            sb[i] = nb[i] - tb[i]
        loss_model = (loss + _dot_seq(gb, sb)) + 0.5 * _seq4(
            ev[0] * (sb[0] * sb[0]), ev[1] * (sb[1] * sb[1]), ev[2] * (sb[2] * sb[2]), ev[3] * (sb[3] * sb[3])
        )
        theta[:] = new
        if not dec > tol:
            break
    return loss_model, True


# ---------------------------------------------------------------------------- support functions
# These take vectors of any length in the eigen-coordinates of a quadratic model (eigenvalues ``ev``
# and centre ``cb``; the caller changes basis, :func:`_model_support` for the chapter's four
# features) and add over the coordinates in order from 0.0: for four, :func:`_seq4`'s sums (adding
# 0.0 first changes only the sign of a sum of negative zeros). The synthesis chapter's cell kernel
# (:mod:`~causalbandits_lib.synthesis.cell_kernels`) is built on them too: its sixteen one-hot
# features give a diagonal Hessian, so the cells are its models' eigen-coordinates.
@njit(cache=True, error_model="numpy")
def _slope(s, a, e, acc, xx, xac, acc_e, xx_e, S2):
    """``h'(s)`` of :class:`~.optimism._SupportFamily` for one column of any length (scalars, no
    allocation; the sums over the coordinates in order)."""
    W0 = Q0 = AE = XE = PX = 0.0
    for i in range(a.shape[0]):
        inv = 1.0 / (a[i] + s * e[i])
        inv2 = inv * inv
        W0 += acc[i] * inv
        Q0 += xx[i] * inv
        AE += acc_e[i] * inv2
        XE += xx_e[i] * inv2
        PX += xac[i] * inv2
    ss = s * (1.0 - s)
    rho = np_maximum(1.0 - ss * S2 * W0, 1e-300)
    u1 = -S2 * ((1.0 - 2.0 * s) * W0 - ss * AE) * Q0 - rho * XE
    return -S2 * PX + u1 / (2.0 * math.sqrt(rho * Q0))


@njit(cache=True, error_model="numpy")
def _slope_curvature(s, a, e, acc, xx, xac, acc_e, xx_e, S2):
    """``h'(s)`` and ``h''(s)`` for one column of any length (scalars, no allocation)."""
    W0 = W1 = W2 = Q0 = Q1 = Q2 = P1 = P2 = 0.0
    for i in range(a.shape[0]):
        inv = 1.0 / (a[i] + s * e[i])
        inv2 = inv * inv
        inv3 = inv2 * inv
        W0 += acc[i] * inv
        W1 += acc_e[i] * inv2
        W2 += acc_e[i] * e[i] * inv3
        Q0 += xx[i] * inv
        Q1 += xx_e[i] * inv2
        Q2 += xx_e[i] * e[i] * inv3
        P1 += xac[i] * inv2
        P2 += xac[i] * e[i] * inv3
    W1, W2, Q1, Q2 = -W1, 2.0 * W2, -Q1, 2.0 * Q2
    P1, P2 = -S2 * P1, 2.0 * S2 * P2
    ss = s * (1.0 - s)
    rho = np_maximum(1.0 - ss * S2 * W0, 1e-300)
    rho1 = -S2 * ((1.0 - 2.0 * s) * W0 + ss * W1)
    rho2 = -S2 * (-2.0 * W0 + 2.0 * (1.0 - 2.0 * s) * W1 + ss * W2)
    u = rho * Q0
    u1 = rho1 * Q0 + rho * Q1
    u2 = rho2 * Q0 + 2.0 * rho1 * Q1 + rho * Q2
    root = math.sqrt(u)
    return P1 + u1 / (2.0 * root), P2 + u2 / (2.0 * root) - u1 * u1 / (4.0 * u * root)


@njit(cache=True, error_model="numpy", inline="always")
def _clip01(x):
    return np_minimum(np_maximum(x, 0.0), 1.0)


@njit(cache=True, error_model="numpy")
def minimise_support_any(a, e, acc, xx, xac, acc_e, xx_e, S2, has_hint, hint):
    """:func:`~.optimism._minimise_support` for one column of any length: Newton's iteration on
    ``h'`` from the hint when there is one, else (or when it fails) the bracketed Illinois search
    (scalars, no allocation)."""
    s_tol = 1e-9
    if has_hint:
        x = _clip01(hint)
        for _ in range(6):
            f, c = _slope_curvature(x, a, e, acc, xx, xac, acc_e, xx_e, S2)
            at_end = (x == 0.0 and f >= 0) or (x == 1.0 and f <= 0) or f == 0
            nxt = _clip01(x - f / c)
            good = np.isfinite(nxt) and c > 0
            if at_end:
                return x
            if good and abs(nxt - x) <= s_tol:
                return nxt
            if not good:
                break
            x = nxt
    flo = _slope(0.0, a, e, acc, xx, xac, acc_e, xx_e, S2)
    fhi = _slope(1.0, a, e, acc, xx, xac, acc_e, xx_e, S2)
    if not (flo < 0 and fhi > 0):
        return 0.0 if flo >= 0 else 1.0
    lo, hi = 0.0, 1.0
    x = 0.5
    side = 0.0
    for _ in range(100):
        nxt = (lo * fhi - hi * flo) / (fhi - flo)
        if not (nxt > lo and nxt < hi):
            nxt = 0.5 * (lo + hi)
        moved = abs(nxt - x)
        x = nxt
        f = _slope(x, a, e, acc, xx, xac, acc_e, xx_e, S2)
        if f > 0:
            if side > 0:
                flo = 0.5 * flo
            fhi = f
            hi = x
            side = 1.0
        else:
            flo = f
            if side < 0:
                fhi = 0.5 * fhi
            lo = x
            side = -1.0
        if not (moved > s_tol and hi - lo > s_tol and f != 0):
            break
    return x


@njit(cache=True, error_model="numpy")
def model_support_eig(ev, cb, radius2, S, xb, has_hint, hint, tb, wk):
    """:func:`~.optimism.model_support` for one direction, everything in the model's
    eigen-coordinates and of any length ``n``: ``max xb^T theta`` over
    ``{1/2 sum_i ev_i (theta_i - cb_i)^2 <= radius2} cap {||theta|| <= S}``. Returns the value and
    the duality parameter ``s``; writes the maximiser to ``tb``. ``wk`` is scratch (9 x n)."""
    S2 = 1.0 / (S * S)
    a, e, ac, acc, xx, xac, acc_e, xx_e, inv = wk[0], wk[1], wk[2], wk[3], wk[4], wk[5], wk[6], wk[7], wk[8]
    n = ev.shape[0]
    for i in range(n):  # each value in a local first: the rows of wk may alias for the compiler
        ai = ev[i] / (2.0 * radius2)
        ei = S2 - ai
        aci = ai * cb[i]
        acci = aci * cb[i]
        xbi = xb[i]
        xxi = xbi * xbi
        a[i], e[i], ac[i], acc[i] = ai, ei, aci, acci
        xac[i], xx[i], acc_e[i], xx_e[i] = xbi * aci, xxi, acci * ei, xxi * ei
    s = minimise_support_any(a, e, acc, xx, xac, acc_e, xx_e, S2, has_hint, hint)
    W0 = Q0 = 0.0
    for i in range(n):
        invi = 1.0 / (a[i] + s * e[i])
        inv[i] = invi
        W0 += acc[i] * invi
        Q0 += xx[i] * invi
    rho = np_maximum(1.0 - s * (1.0 - s) * S2 * W0, 0.0)
    scale = math.sqrt(rho / Q0) if Q0 > 0 else 0.0
    value = 0.0
    for i in range(n):
        xbi, invi = xb[i], inv[i]
        mi = (1.0 - s) * ac[i] * invi
        value += xbi * mi
        tb[i] = mi + scale * xbi * invi
    return value + math.sqrt(rho * Q0), s


@njit(cache=True, error_model="numpy")
def _model_support(ev, V, cb, radius2, S, xdir, has_hint, hint, theta_out, wk):
    """:func:`~.optimism.model_support` for one direction of the chapter's four features:
    :func:`model_support_eig` in the model's eigen-coordinates (``Q^T x`` in, ``Q`` times its
    maximiser out, the products added in order). Returns the value and ``s``, writes the maximiser
    to ``theta_out``; ``wk`` is scratch (11 x 4)."""
    xb, tb = wk[9], wk[10]
    _to_eig(V, xdir, xb)
    value, s = model_support_eig(ev, cb, radius2, S, xb, has_hint, hint, tb, wk[:9])
    _from_eig_seq(V, tb, theta_out)
    return value, s


@njit(cache=True, error_model="numpy")
def _support_points(
    X,
    w,
    n,
    b,
    level,
    S,
    xdir,
    start,
    fb_ev,
    fb_V,
    fb_cb,
    fb_r2,
    iterations,
    ridge,
    has_hint,
    hint,
    inside,
    pr,
    sp,
    theta_out,
    lin,
    cut_a,
    gram,
    wk,
):
    """:func:`~.optimism.support_points` for one run and one direction. Returns the value, the
    cut's offset and ``s``; writes the maximiser, the next linearisation point and the cut's normal.
    ``wk`` is scratch (:data:`SUPPORT_ROWS` x 4)."""
    grad, ev, cb, tmp, tb, step = wk[0], wk[1], wk[2], wk[3], wk[4], wk[5]
    V, At, ball, ms = wk[6:10], wk[10:14], wk[14], wk[15:26]
    lin[:] = start
    value, cut_b, s = np.nan, np.nan, hint
    use_hint = has_hint
    for _ in range(iterations):
        loss0, hess = _evaluate(X, w, n, b, lin, grad, gram, pr, sp)
        if not _qmodel(lin, grad, hess, ridge, ev, V, cb, tmp, At):
            return np.nan, np.nan, np.nan, False
        _to_eig(V, lin, tb)
        radius2 = level - loss0 + half_dist2(ev, cb, tb)
        ok = (loss0 <= level) and (_dot_seq(lin, lin) <= S * S)
        for i in range(4):
            step[i] = inside[i] - lin[i]
        quad = 0.0
        for i in range(4):
            for j in range(4):
                quad = quad + step[i] * hess[i, j] * step[j]
        ok = ok or (loss0 + _dot_seq(grad, step) + 0.5 * quad <= level)
        if not ok and radius2 > 0:
            ball_minimiser_eig(ev, cb, S, tb, ball)
            ok = half_dist2(ev, cb, tb) <= radius2
        if ok:
            value, s = _model_support(ev, V, cb, radius2, S, xdir, use_hint, s, theta_out, ms)
        else:
            value, s = _model_support(fb_ev, fb_V, fb_cb, fb_r2, S, xdir, use_hint, s, theta_out, ms)
        use_hint = True
        for i in range(4):
            cut_a[i] = grad[i]
        cut_b = level - loss0 + _dot_seq(grad, lin)
        for i in range(4):
            step[i] = theta_out[i] - lin[i]
        length = math.sqrt(_dot_seq(step, step))
        c = np_minimum(1.0, 1.0 / np_maximum(length, 1e-300))
        for i in range(4):
            lin[i] = lin[i] + c * step[i]
    return value, cut_b, s, True


@njit(cache=True, error_model="numpy")
def _feasible(A, bb, th):
    for j in range(2):
        if not (_dot_pair(A[j], th) <= bb[j] + 1e-9 * (1 + abs(bb[j]))):
            return False
    return True


@njit(cache=True, error_model="numpy")
def _ball_halfspace(x, A, bb, S, wk):
    """:func:`~.optimism.ball_halfspace_support` for one candidate (``wk``: scratch, 4 x 4)."""
    xn = math.sqrt(_dot_seq(x, x))
    best = -np.inf
    th, ahat, xp, tp = wk[0], wk[1], wk[2], wk[3]
    for k in range(4):
        th[k] = S * (x[k] / xn if xn > 0 else 0.0)
    if _feasible(A, bb, th):
        best = S * xn
    for j in range(2):
        an = math.sqrt(_dot_seq(A[j], A[j]))
        for k in range(4):
            ahat[k] = A[j, k] / an if an > 0 else 0.0
        beta = bb[j] / an if an > 0 else np.inf
        xa = _dot_seq(x, ahat)
        for k in range(4):
            xp[k] = x[k] - xa * ahat[k]
        xpn = math.sqrt(_dot_seq(xp, xp))
        r = math.sqrt(np_maximum(S * S - beta * beta, 0.0))
        for k in range(4):
            th[k] = beta * ahat[k] + r * (xp[k] / xpn if xpn > 0 else 0.0)
        if abs(beta) <= S and _feasible(A, bb, th):
            best = np_maximum(best, xa * beta + xpn * r)
    g00 = _dot_pair(A[0], A[0])
    g01 = _dot_pair(A[0], A[1])
    g11 = _dot_pair(A[1], A[1])
    det = g00 * g11 - g01 * g01
    good = det > 1e-12 * (g00 * g11 + 1e-300)
    dd = det if good else 1.0
    i00, i01, i10, i11 = g11 / dd, -g01 / dd, -g01 / dd, g00 / dd
    y0 = i00 * bb[0] + i01 * bb[1]
    y1 = i10 * bb[0] + i11 * bb[1]
    ax0 = _dot_pair(A[0], x)
    ax1 = _dot_pair(A[1], x)
    z0 = i00 * ax0 + i01 * ax1
    z1 = i10 * ax0 + i11 * ax1
    for k in range(4):
        tp[k] = A[0, k] * y0 + A[1, k] * y1
        xp[k] = x[k] - (A[0, k] * z0 + A[1, k] * z1)
    r2 = S * S - _dot_seq(tp, tp)
    val = _dot_seq(x, tp) + math.sqrt(np_maximum(r2, 0.0)) * math.sqrt(_dot_seq(xp, xp))
    if good and r2 >= 0:
        best = np_maximum(best, val)
    return best


@njit(cache=True, error_model="numpy")
def _fmap(raw, fmap, out):
    if fmap == UNIT_NORM:
        norm = math.sqrt(_dot_seq(raw, raw))
        for k in range(4):
            out[k] = raw[k] / norm if norm > 0 else 0.0
    else:
        for k in range(4):
            out[k] = raw[k] / 2.0


@njit(cache=True, error_model="numpy")
def tie_threshold(values, n, atol):
    """``max(values[:n]) - atol`` (``np.maximum``'s maximum): the values at or above it are tied."""
    m = values[0]
    for a in range(1, n):
        m = np_maximum(m, values[a])
    return m - atol


@njit(cache=True, error_model="numpy")
def _argmax_atol(values, n, u, atol):
    """:func:`~causalbandits_lib.core.policies.argmax_ties` of one row with a uniform and ``atol``."""
    thr = tie_threshold(values, n, atol)
    n_tied = 0
    for a in range(n):
        if values[a] >= thr:
            n_tied += 1
    pick = min(int(u * n_tied), n_tied - 1)
    seen = 0
    for a in range(n):
        if values[a] >= thr:
            seen += 1
            if seen > pick:
                return a
    return 0


@njit(cache=True, error_model="numpy")
def lagrangian_choice(reward, delta, n, phi, tau, d0, u, score_atol, score):
    """CCLB's Lagrangian choice (:meth:`~.algorithms.CCLB.select`) among ``n`` candidates whose
    rewards and counterfactual gaps ``delta`` are estimated with the optimistic choice ``d0``'s
    parameter: the scores ``reward - phi (|delta| - tau)`` into ``score``; ``d0`` is kept when
    ``phi`` is zero or its score is within ``score_atol`` of the best, else the best score wins
    (ties broken with the uniform ``u``). Returns the choice."""
    best = -np.inf
    for k in range(n):
        score[k] = reward[k] - phi * (abs(delta[k]) - tau)
        best = np_maximum(best, score[k]) if k > 0 else score[k]
    keep = (phi == 0) or (score[d0] >= best - score_atol)
    return d0 if keep else argmax_ties_row(score, n, u, True)


@njit(cache=True, error_model="numpy")
def environment_feedback(rec, action, rr, size, tau, u, best, lp, unc):
    """:class:`~.environment.FairLogisticBandit`'s feedback of one round, the values of
    :data:`FEEDBACK` in order into ``rec[:9]``: the ``action`` played, its click (``u < rr``, ``u``
    the round's reward uniform), its expected reward ``rr`` and effect size ``size`` against the
    threshold ``tau``, and the round's best, LP and unconstrained values (``best``, ``lp``, ``unc``)
    less ``rr``. Returns the click."""
    violation = size - tau
    y = 1.0 if u < rr else 0.0
    rec[0] = float(action)
    rec[1] = y
    rec[2] = rr
    rec[3] = best - rr
    rec[4] = lp - rr
    rec[5] = best - (rr if size <= tau else 0.0)
    rec[6] = violation
    rec[7] = np_maximum(violation, 0.0)
    rec[8] = unc - rr
    return y


# ---------------------------------------------------------------------------- one block of rounds
@njit(cache=True, error_model="numpy")
def _block(
    # environment block
    x_rep,
    xcf_rep,
    raw_rep,
    code_rep,
    reward_rep,
    size_rep,
    best_all,
    lp_all,
    unc_all,
    replica,
    noise,
    taus_env,
    # policy knobs and per-round values
    ties,
    beta_sq,
    max_steps,
    t_hist0,
    S,
    ridge,
    tie_atol,
    score_atol,
    J,
    frac,
    sqp_iterations,
    extra_solves,
    quadratic,
    fmap,
    cclb,
    fairer,
    tau,
    rho,
    eps,
    step,
    # state, updated in place
    theta_hat,
    warm,
    warm_s,
    phi,
    count,
    s1,
    s2,
    d_min,
    d_max,
    HX,
    weights,
    hb,
    bins,
    # outputs
    rec,
    solved,
    uncertified,
):
    """Every run through a block of rounds, in the order of the numpy path: rounds are the outer
    loop and each round is stepped in phases over all runs (a run's numbers do not depend on its
    neighbours: the phases only repeat the numpy path's order of work). The environment's arrays
    come once per replication (:meth:`~.environment.FairLogisticBandit.replica_block`; run ``r``
    reads row ``replica[r]``, features before candidates) and are copied to each run's
    candidates-by-features rows at the start of its round."""
    R, B = best_all.shape
    K = reward_rep.shape[2]
    xs = np.empty((R, K, 4))
    xcfs = np.empty((R, K, 4))
    raws = np.empty((R, K, 4))
    P = HX.shape[2]
    pr = np.empty(P + 7)
    sp = np.empty(P + 7)
    gram = np.empty((4, 4))
    # each run's pseudo-points of positive weight, compacted at the start of every round
    Xc = np.empty((R, 4, P + 7))
    wc = np.empty((R, P + 7))
    n_pts = np.zeros(R, dtype=np.int64)
    # per-run values of the current round
    m_ev = np.empty((R, 4))
    m_V = np.empty((R, 4, 4))
    m_cb = np.empty((R, 4))
    level = np.empty(R)
    radius2 = np.empty(R)
    values = np.empty((R, K))
    thetas = np.zeros((R, K, 4))
    seg = np.zeros((R, K), dtype=np.int64)
    lam = np.zeros((R, K))
    th_a = np.empty((R, J, 4))
    s_new = np.empty((R, J))
    need = np.zeros(R, dtype=np.int64)
    # scratch
    tb = np.empty(4)
    masked = np.empty(K)
    anchor_raw = np.empty((J, 4))
    anchor_x = np.empty((J, 4))
    start = np.empty(4)
    val_a = np.empty(J)
    cut_a = np.empty((J, 4))
    cut_b = np.empty(J)
    A = np.empty((2, 4))
    bb = np.empty(2)
    score = np.empty(K)
    est_reward = np.empty(K)
    delta = np.empty(K)
    one = np.empty(4)
    nxt = np.empty(4)
    t1v = np.empty(4)
    pts = np.empty(2)
    rawp = np.empty(4)
    feat = np.empty(4)
    h = np.empty(2)
    wk_mle = np.empty((MLE_ROWS, 4))
    wk_sp = np.empty((SUPPORT_ROWS, 4))
    wk_hs = np.empty((4, 4))
    status = 0
    for s in range(B):
        t = t_hist0 + s
        tracked = not (quadratic or t == 0)
        # -- phase 1, every run: the estimate, the anchors, the bounds
        for r in range(R):
            n_pts[r] = _compact(HX[r], weights[r], Xc[r], wc[r])
            X, w, npt = Xc[r], wc[r], n_pts[r]
            bv = hb[r]
            th_hat = theta_hat[r]
            q = replica[r]
            for k in range(K):
                for i in range(4):
                    xs[r, k, i] = x_rep[q, s, i, k]
                    xcfs[r, k, i] = xcf_rep[q, s, i, k]
                    raws[r, k, i] = raw_rep[q, s, i, k]
            x, raw, code = xs[r], raws[r], code_rep[q, s]
            loss, ok = _mle(
                X,
                w,
                npt,
                bv,
                th_hat,
                S,
                ridge,
                max_steps[s],
                1e-10,
                0.1,
                pr,
                sp,
                m_ev[r],
                m_V[r],
                m_cb[r],
                gram,
                wk_mle,
            )
            if not ok:
                status = 1
            level[r] = loss + beta_sq[s]
            _to_eig(m_V[r], th_hat, tb)
            radius2[r] = beta_sq[s] + half_dist2(m_ev[r], m_cb[r], tb)
            if not tracked:
                for k in range(K):
                    values[r, k], _ = _model_support(
                        m_ev[r], m_V[r], m_cb[r], radius2[r], S, x[k], False, 0.0, thetas[r, k], wk_sp[15:26]
                    )
                    solved[r, k] = True
                continue
            lo, hi = 0, 0
            for k in range(1, K):
                if raw[k, 3] < raw[lo, 3]:
                    lo = k
                if raw[k, 3] > raw[hi, 3]:
                    hi = k
            for j in range(J):
                for i in range(4):
                    anchor_raw[j, i] = raw[lo, i] + frac[j] * (raw[hi, i] - raw[lo, i])
                _fmap(anchor_raw[j], fmap, anchor_x[j])
            for j in range(J):
                slot = J * code + j
                for i in range(4):
                    wv = warm[r, slot, i]
                    start[i] = wv if np.isfinite(wv) else th_hat[i]
                val_a[j], cut_b[j], s_new[r, j], ok = _support_points(
                    X,
                    w,
                    npt,
                    bv,
                    level[r],
                    S,
                    anchor_x[j],
                    start,
                    m_ev[r],
                    m_V[r],
                    m_cb[r],
                    radius2[r],
                    sqp_iterations,
                    ridge,
                    np.isfinite(warm_s[r, slot]),
                    warm_s[r, slot],
                    th_hat,
                    pr,
                    sp,
                    th_a[r, j],
                    nxt,
                    cut_a[j],
                    gram,
                    wk_sp,
                )
                if not ok:
                    status = 1
                for i in range(4):
                    warm[r, slot, i] = nxt[i]
                warm_s[r, slot] = s_new[r, j]
                if not np.isfinite(s_new[r, j]):
                    status = 2
            span = anchor_raw[J - 1, 3] - anchor_raw[0, 3]
            for k in range(K):
                vnorm = math.sqrt(_dot_seq(raw[k], raw[k]))
                scale = math.sqrt(_dot_seq(x[k], x[k])) / vnorm if vnorm > 0 else 0.0
                pos = (raw[k, 3] - anchor_raw[0, 3]) * (J - 1) / span if span > 0 else 0.0
                sg = min(max(int(math.floor(pos)), 0), J - 2)
                seg[r, k] = sg
                lm = np_minimum(np_maximum(pos - sg, 0.0), 1.0)
                lam[r, k] = lm
                for q in range(2):
                    jj = sg + q
                    an = math.sqrt(_dot_seq(anchor_raw[jj], anchor_raw[jj]))
                    ascale = math.sqrt(_dot_seq(anchor_x[jj], anchor_x[jj])) / an if an > 0 else 0.0
                    h[q] = val_a[jj] / ascale if ascale > 0 else 0.0
                v = scale * ((1 - lm) * h[0] + lm * h[1])
                for i in range(4):
                    A[0, i] = cut_a[sg, i]
                    A[1, i] = cut_a[sg + 1, i]
                bb[0] = cut_b[sg]
                bb[1] = cut_b[sg + 1]
                values[r, k] = np_minimum(v, _ball_halfspace(x[k], A, bb, S, wk_hs))
                solved[r, k] = False
                for i in range(4):
                    thetas[r, k, i] = 0.0
            for j in range(J):
                for k in range(K):
                    same = True
                    for i in range(4):
                        if not abs(x[k, i] - anchor_x[j, i]) <= 1e-15:
                            same = False
                    if same:
                        values[r, k] = val_a[j]
                        for i in range(4):
                            thetas[r, k, i] = th_a[r, j, i]
                        solved[r, k] = True
        # -- phase 2: the extra solves (one column per run that needs one, all runs at once)
        if tracked:
            for _ in range(extra_solves):
                n_need = 0
                for r in range(R):
                    top = -np.inf
                    for k in range(K):
                        top = np_maximum(top, values[r, k] if solved[r, k] else -np.inf)
                    any_open = False
                    for k in range(K):
                        is_open = (not solved[r, k]) and values[r, k] > top + tie_atol
                        masked[k] = values[r, k] if is_open else -np.inf
                        any_open = any_open or is_open
                    need[r] = argmax_ties_row(masked, K, 0.0, False) if any_open else -1
                    n_need += 1 if any_open else 0
                if n_need == 0:
                    break
                for r in range(R):
                    bk = need[r]
                    if bk < 0:
                        continue
                    near = seg[r, bk] if lam[r, bk] < 0.5 else seg[r, bk] + 1
                    v1, _, _, ok = _support_points(
                        Xc[r],
                        wc[r],
                        n_pts[r],
                        hb[r],
                        level[r],
                        S,
                        xs[r, bk],
                        th_a[r, near],
                        m_ev[r],
                        m_V[r],
                        m_cb[r],
                        radius2[r],
                        max(sqp_iterations, 3),
                        ridge,
                        np.isfinite(s_new[r, near]),
                        s_new[r, near],
                        theta_hat[r],
                        pr,
                        sp,
                        t1v,
                        nxt,
                        one,
                        gram,
                        wk_sp,
                    )
                    if not ok:
                        status = 1
                    values[r, bk] = v1
                    for i in range(4):
                        thetas[r, bk, i] = t1v[i]
                    solved[r, bk] = True
        # -- phase 3, every run: the choice, the feedback, the history, the dual step
        for r in range(R):
            q = replica[r]
            x, raw, code = xs[r], raws[r], code_rep[q, s]
            if tracked:
                top = -np.inf
                for k in range(K):
                    top = np_maximum(top, values[r, k] if solved[r, k] else -np.inf)
                unc = False
                for k in range(K):
                    if (not solved[r, k]) and values[r, k] > top + tie_atol:
                        unc = True
                uncertified[r] = unc
            for k in range(K):
                masked[k] = values[r, k] if solved[r, k] else -np.inf
            u = ties[r, s]
            d0 = _argmax_atol(masked, K, u, tie_atol)
            if fairer:  # algorithms.fairer_tie: the tied decision of smallest estimated |Delta~|
                tt = thetas[r, d0]
                thr = tie_threshold(masked, K, tie_atol)
                for k in range(K):
                    if masked[k] >= thr:
                        rk = _expit(_dot_seq(x[k], tt))
                        rcf = _expit(_dot_seq(xcfs[r, k], tt))
                        score[k] = -abs(rcf - rk)
                    else:
                        score[k] = -np.inf
                d0 = argmax_ties_row(score, K, u, True)
            action = d0
            if cclb:
                tt = thetas[r, d0]
                for k in range(K):
                    est_reward[k] = _expit(_dot_seq(x[k], tt))
                    delta[k] = _expit(_dot_seq(xcfs[r, k], tt)) - est_reward[k]
                action = lagrangian_choice(est_reward, delta, K, phi[r], tau[r], d0, u, score_atol, score)
                rec[r, s, 9] = phi[r]
                rec[r, s, 10] = abs(delta[action]) - tau[r]
            rec[r, s, 11] = values[r, d0]
            # the environment's feedback
            y = environment_feedback(
                rec[r, s], action, reward_rep[q, s, action], size_rep[q, s, action], taus_env[r], noise[r, s],
                best_all[r, s], lp_all[r, s], unc_all[r, s],
            )  # fmt: skip
            # the binned history
            X = HX[r]
            w = weights[r]
            bv = hb[r]
            d = raw[action, 3]
            cell = code * bins + min(max(int(math.floor((d + 1.0) * 0.5 * bins)), 0), bins - 1)
            count[r, cell] += 1.0
            s1[r, cell] += d
            s2[r, cell] += d * d
            d_min[r, cell] = np_minimum(d_min[r, cell], d)
            d_max[r, cell] = np_maximum(d_max[r, cell], d)
            for i in range(4):
                bv[i] = bv[i] + y * x[action, i]
            nc = count[r, cell]
            mean = s1[r, cell] / nc
            sd = math.sqrt(np_maximum(s2[r, cell] / nc - mean * mean, 0.0))
            pts[0] = mean - sd
            pts[1] = mean + sd
            rawp[0] = float(code // 4)
            rawp[1] = float((code // 2) % 2)
            rawp[2] = float(code % 2)
            for q in range(2):
                rawp[3] = np_minimum(np_maximum(pts[q], d_min[r, cell]), d_max[r, cell])
                _fmap(rawp, fmap, feat)
                for i in range(4):
                    X[i, 2 * cell + q] = feat[i]
                w[2 * cell + q] = 0.5 * nc
            # the dual step
            if cclb:
                phi[r] = np_minimum(np_maximum(phi[r] + step[r] * (rec[r, s, 10] + eps[r]), 0.0), rho[r])
    return status


class OFULogKernel:
    """:class:`~.algorithms.OFULogPlus` or :class:`~.algorithms.CCLB` against
    :class:`~.environment.FairLogisticBandit` (see the module docstring); writes the environment's
    feedback, the policy's diagnostics and, on request, the played features (:data:`PLAYED`: copied
    from the environment's rounds at the chosen decisions, the numbers ``context.x[rows, action]``
    of the numpy path)."""

    def __init__(self, policy, env, cclb: bool):
        self.policy, self.env = policy, env
        self.cclb = cclb
        names = FEEDBACK + (DIAGNOSTICS if self.cclb else ("optimistic_value",))
        self.outputs = {name: (np.float64, ()) for name in names}
        self.outputs["played_x"] = (np.float64, (env.n_features,))
        self.fmap = FEATURE_CODES[policy.feature_map]
        J = policy.anchors
        self.frac = np.ascontiguousarray(np.linspace(0.0, 1.0, J), dtype=float)

    def run(self, t0: int, t1: int, out) -> None:
        p, env = self.policy, self.env
        h = p.history
        R, B = p.n_runs, t1 - t0
        c = lambda a: np.ascontiguousarray(a)  # noqa: E731
        blk = env.replica_block(t0, t1)
        ties = c(p._ties.block(t0, t1))
        noise = c(env.reward_noise.block(t0, t1))
        t_hist0 = h.t
        beta = np.array(
            [float(beta_squared(t + 1, h.N_FEATURES, p.S, p.alpha, p.beta_denominator)) for t in range(t0, t1)]
        )
        steps = np.array([100 if t < p.mle_warmup else p.mle_steps for t in range(t0, t1)], dtype=np.int64)
        J = p.anchors
        code = c(blk["code"]).astype(np.int64)
        tracked = p.optimistic == "sqp"
        R0 = np.zeros(R)
        if self.cclb:
            tau, rho, eps, step, phi = p._tau, p._rho, p._eps, p._step, p.phi
        else:
            tau = rho = eps = step = R0
            phi = np.zeros(R)
        rec = np.full((R, B, 12), np.nan)
        K = blk["reward"].shape[2]
        solved = np.zeros((R, K), dtype=bool)
        unc = np.asarray(getattr(p, "uncertified", np.zeros(R, dtype=bool)), dtype=bool).copy()
        for name in ("count", "s1", "s2", "d_min", "d_max", "X", "weights", "b"):
            if not getattr(h, name).flags.c_contiguous:
                setattr(h, name, c(getattr(h, name)))
        theta_hat = c(p.theta_hat).copy()
        fairer = p.tie_rule == "fairer"
        status = _block(
            c(blk["x"]), c(blk["x_cf"]), c(blk["raw"]), code, c(blk["reward"]), c(blk["size"]), c(blk["best"]),
            c(blk["lp"]), c(blk["unconstrained"]), blk["replica"], noise, c(env.taus),
            ties, beta, steps, t_hist0, p.S, p.ridge, p.tie_atol, getattr(p, "score_atol", 0.0), J,
            self.frac, p.sqp_iterations, p.extra_solves, not tracked, self.fmap, self.cclb, fairer,
            c(tau), c(rho), c(eps),
            c(step), theta_hat, p._warm, p._warm_s, phi, h.count, h.s1, h.s2, h.d_min,
            h.d_max, h.X, h.weights, h.b, h.bins, rec, solved, unc,
        )  # fmt: skip
        if status:
            raise RuntimeError(f"the compiled OFULog+ kernel met a case it does not follow (status {status})")
        h.t += B
        p.theta_hat = theta_hat
        last = rec[:, -1]
        p.solved = solved
        if tracked and t_hist0 + B > 1:
            p.uncertified = unc
        if self.cclb:
            p._est_violation = last[:, 10].copy()
            p._diag = {
                "dual": last[:, 9].copy(),
                "estimated_violation": p._est_violation,
                "optimistic_value": last[:, 11].copy(),
            }
        else:
            p._diag = {"optimistic_value": last[:, 11].copy()}
        names = FEEDBACK + DIAGNOSTICS
        for name, arr in out.items():
            if name == "played_x":  # x_rep is (replications, rounds, n, K): pick each run's row and decision
                rounds = np.arange(B)[None, :]
                arr[...] = blk["x"][blk["replica"][:, None], rounds, :, rec[:, :, 0].astype(np.int64)]
            else:
                arr[...] = rec[:, :, names.index(name)]


def kernel_for(policy, env, *, cclb: bool):
    """The compiled kernel of ``policy`` against ``env``, or None when it does not cover the pair
    (the exact mode, the raw-observation loss, another feature map or dimension). The caller,
    :meth:`~.algorithms.OFULogPlus.compiled`, has checked the exact types: ``policy`` an
    :class:`~.algorithms.OFULogPlus` or, with ``cclb``, a :class:`~.algorithms.CCLB`, and ``env`` a
    :class:`~.environment.FairLogisticBandit`."""
    if policy.optimistic not in ("sqp", "quadratic") or not policy.loss_bins:
        return None
    if policy.feature_map not in FEATURE_CODES or env.n_features != 4:
        return None
    return OFULogKernel(policy, env, cclb)


# ---------------------------------------------------------------------------- the environment's LP benchmark
@njit(cache=True, error_model="numpy")
def _mixture_lp(r, c, tau, out):
    for i in range(r.shape[0]):
        tv = tau[i]
        for t in range(r.shape[1]):
            best = -np.inf
            for a in range(r.shape[2]):
                if c[i, t, a] <= tv:
                    best = np_maximum(best, r[i, t, a])
            for a in range(r.shape[2]):
                ca, ra = c[i, t, a], r[i, t, a]
                if not ca <= tv:
                    continue
                for b in range(r.shape[2]):
                    cb, rb = c[i, t, b], r[i, t, b]
                    if cb <= tv or not rb > ra:
                        continue
                    p = (tv - ca) / (cb - ca)
                    best = np_maximum(best, ra + p * (rb - ra))
            out[i, t] = best


def mixture_lp_values(reward: np.ndarray, effect: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """:func:`~.oracle.mixture_lp_value` for rounds ``(R, T, K)`` with one threshold per row
    ``tau (R,)``, compiled: the same pairs and the same arithmetic, so the same numbers bit for bit
    (``tests/cclb/test_kernels.py``); the environment computes its benchmark with it."""
    r = np.ascontiguousarray(reward, dtype=float)
    c = np.ascontiguousarray(np.abs(effect), dtype=float)
    tau = np.ascontiguousarray(np.broadcast_to(np.asarray(tau, dtype=float).reshape(-1), (r.shape[0],)))
    out = np.empty(r.shape[:2])
    _mixture_lp(r, c, tau, out)
    return out


# ---------------------------------------------------------------------------- pieces other kernels share
#: Public names of two scalar pieces above: ``g(z) = 1 / (1 + exp(-z))`` (scipy's ``expit``) and
#: :func:`~causalbandits_lib.core.policies.argmax_ties` of one row with a uniform and ``atol``.
expit_scalar = _expit
argmax_atol_row = _argmax_atol
