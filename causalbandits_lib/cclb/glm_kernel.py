"""Compiled kernel (numba) of GLM-UCB against the fair logistic bandit.

:class:`GLMUCBKernel` steps :class:`~.algorithms.GLMUCB` against
:class:`~.environment.FairLogisticBandit`, every run through a block of rounds: the bonus ``rho_t``
from ``log det V_t``, the index of every candidate, the tie-broken choice (``tie_rule`` "random"
or "fairer"), the environment's exact feedback, then the policy's update: the raw history, ``V``,
``V^{-1}`` (Sherman-Morrison) and the Newton steps of the ridge-regularised MLE on the raw
history. It covers every knob of :class:`~.algorithms.GLMUCB` and either feature map (the policy
reads the environment's features and has no map of its own); not subclasses, not another
environment.

The numpy class stays the readable reference. The kernel reads the same random streams and
repeats its arithmetic operation for operation, so that on the book's pinned environment (numpy
at its SSE baseline for ``einsum``, OpenBLAS's Haswell kernels with ``OPENBLAS_CORETYPE=Haswell``,
glibc's ``exp``) the two agree bit for bit: decisions, per-round values and the policy's state.

- every ``np.einsum`` in the order numpy sums it: the index's ``x^T theta`` and
  ``x^T V^{-1} x`` (reductions over a strided axis) sequentially from zero, the three-operand
  form row after row; the update's ``V^{-1} x`` and ``x^T (V^{-1} x)`` and the gradient's sum
  over the history (reductions over a contiguous axis) in numpy's two SSE lanes, for four terms
  ``(a0 + a2) + (a1 + a3)`` (:func:`_einsum_dot4`);
- the Hessian ``(X * w) @ X^T`` in OpenBLAS's order (:func:`_weighted_gram`): one chain of fused
  multiply-adds per entry and block of the inner dimension, the blocks added in order;
- ``g(z)`` as scipy's ``expit``, ``1 / (1 + exp(-z))``: in the passes over the history with the
  steps of glibc's ``exp`` written out (:func:`_expit_pass`) where a check on a sample finds them
  giving the C library's bits (:func:`exp_repeats_libm`), else by calling it;
- ``slogdet`` and ``solve`` through numba's ``np.linalg`` (LAPACK's ``getrf`` and ``gesv``, the
  routines numpy calls).

Elsewhere (another BLAS, its kernels for another CPU, another numpy baseline) the sums are the
same but may be rounded in another order, so the estimates differ in the last bits; the
registry's rule (identical decisions, values within 1e-9) is what the tests ask for. A decision
could then differ only through a near-tie within that distance of the ``tie_atol`` boundary.

Speed: the Newton steps dominate (``newton_steps`` passes over the ``t`` observations every
``lazy_every`` rounds, about 1e9 observation-steps for 20 runs of 10,000 rounds). Each step makes
three passes: ``g`` (the exp's argument reduction and polynomial vectorised, its table read in a
loop of its own), the gradient (the four rows' eight lanes at once) and the Hessian (four vector
chains in LLVM's vector instructions, :func:`_gram_chains`); fused into one, the exp's call or
the table's loads would spill the Hessian's accumulators. About 4 ns per observation and step
against numpy's 17.

:func:`glm_kernel_for` is the compiled fast path of :class:`~.algorithms.GLMUCB`: its ``compiled``
imports this module on first use and calls it. This module does not import the algorithms (it
recognises the class by its module and name), so the two do not import each other.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..core.kernels import argmax_ties_row
from .environment import FairLogisticBandit
from .kernels import (
    FEEDBACK,
    PLAYED,
    argmax_atol_row,
    environment_feedback,
    float_bits,
    float_from_bits,
    fma,
    tie_threshold,
)

__all__ = ["GLMUCBKernel", "glm_kernel_for", "exp_repeats_libm", "OUTPUTS"]

#: Per-round values the kernel writes: the environment's feedback and the policy's diagnostic
#: (besides, for recorders that keep the rounds, the played features :data:`~.kernels.PLAYED`).
OUTPUTS = FEEDBACK + ("ucb_index",)


# ---------------------------------------------------------------------------- numpy's and BLAS's orders
#: OpenBLAS's blocking of the inner dimension of a matrix product (``GEMM_Q`` and ``GEMM_UNROLL_M``
#: of its Haswell kernels, which the book pins with ``OPENBLAS_CORETYPE=Haswell``).
GEMM_Q, GEMM_UNROLL_M = 256, 4


# the exact-rounding intrinsics are the chapter's (kernels.py): fma, and a double's bits
_fma, _bits, _from_bits = fma, float_bits, float_from_bits


@njit(cache=True, error_model="numpy", inline="always")
def _expit(z):
    """scipy's ``expit``: ``1 / (1 + exp(-z))`` with the C library's ``exp`` (the same bits)."""
    return 1.0 / (1.0 + math.exp(-z))


@njit(cache=True, error_model="numpy", inline="always")
def _column_dot(x, k, th):
    """``x[:, k]^T theta`` of features ``x (4, K)``, as ``np.einsum`` sums a strided axis: in order."""
    return ((x[0, k] * th[0] + x[1, k] * th[1]) + x[2, k] * th[2]) + x[3, k] * th[3]


# ---------------------------------------------------------------------------- the C library's exp, inlined
# scipy's expit calls the C library's exp once per observation, and so does the kernel's first pass
# over the history: the call is half of a Newton step's time and keeps the pass scalar. glibc
# (2.28 and later) computes exp(x) as 2^(k/128) exp(r) with x = k ln2/128 + r: a table gives
# 2^(k/128) as a double H and the relative rest T of its rounding, a polynomial of degree five
# gives exp(r) - 1, and the pieces are put together with fused multiply-adds (its FMA build, which
# it picks on a CPU with FMA). :func:`_expit_pass` repeats these steps, split into loops the
# compiler can vectorise and one that reads the table; :func:`exp_repeats_libm` checks on a sample
# that they give the C library's bits here, and the kernel calls exp where they do not.
_EXP_N = 128
_EXP_INV_LN2_N = float.fromhex("0x1.71547652b82fep0") * _EXP_N
_EXP_SHIFT = float.fromhex("0x1.8p52")  # adding it rounds to an integer held in the low bits
_EXP_SHIFT_BITS = 0x4338000000000000  # the bits of _EXP_SHIFT
_EXP_LN2_N_HI = -float.fromhex("0x1.62e42fefa0000p-8")  # -ln2/128 = HI + LO, HI with trailing zeros
_EXP_LN2_N_LO = -float.fromhex("0x1.cf79abc9e3b3ap-47")
#: The polynomial's coefficients of r^2 .. r^5 (those of 1 and r are 1).
_EXP_C2 = float.fromhex("0x1.ffffffffffdbdp-2")
_EXP_C3 = float.fromhex("0x1.555555555543cp-3")
_EXP_C4 = float.fromhex("0x1.55555cf172b91p-5")
_EXP_C5 = float.fromhex("0x1.1111167a4d017p-7")
#: Below this ``|x|`` glibc's exp takes its main path (beyond, a scaled one for over- and underflow).
_EXP_MAIN_PATH = 512.0


def _exp_table() -> tuple[np.ndarray, np.ndarray]:
    """The table of ``2^(k/128)``, ``k = 0..127``: the rest ``T_k = (2^(k/128) - H_k) / H_k`` (as a
    double) and the bits of ``H_k`` (the nearest double) less ``k << 45``, so that adding the
    integer ``(128 j + k) << 45`` gives the bits of ``2^j H_k``. Computed to 60 digits and rounded."""
    with localcontext() as ctx:
        ctx.prec = 60
        tail = np.empty(_EXP_N)
        scale = np.empty(_EXP_N, dtype=np.int64)
        for k in range(_EXP_N):
            exact = Decimal(2) ** (Decimal(k) / Decimal(_EXP_N))
            h = float(exact)
            tail[k] = float((exact - Decimal(h)) / Decimal(h))
            scale[k] = int(np.float64(h).view(np.int64)) - (k << 45)
    return tail, scale


_EXP_TAIL, _EXP_SCALE = _exp_table()


@njit(cache=True, error_model="numpy")
def _expit_pass(X, y, m, th, e, w, ks, rs, inline_exp):
    """The first pass of a Newton step over the first ``m`` observations: ``p = g(x^T theta)``
    (numpy's ``einsum`` order, scipy's ``expit``), then ``e = p - y`` and ``w = p (1 - p)`` into
    ``e`` and ``w``. With ``inline_exp`` the C library's exp is repeated in three loops (reduction
    of the argument; the table; polynomial and quotient), and the rare arguments outside its main
    path go to the library. ``ks`` (int) and ``rs`` are scratch."""
    t0, t1, t2, t3 = th[0], th[1], th[2], th[3]
    x0, x1, x2, x3 = X[0], X[1], X[2], X[3]
    if not inline_exp:
        for j in range(m):
            p = _expit(((t0 * x0[j] + t1 * x1[j]) + t2 * x2[j]) + t3 * x3[j])
            e[j] = p - y[j]
            w[j] = p * (1.0 - p)
        return
    outside = 0
    for j in range(m):
        x = -(((t0 * x0[j] + t1 * x1[j]) + t2 * x2[j]) + t3 * x3[j])
        outside += not abs(x) < _EXP_MAIN_PATH
        kd = _fma(_EXP_INV_LN2_N, x, _EXP_SHIFT)
        ks[j] = _bits(kd) - _EXP_SHIFT_BITS  # k, the integer nearest 128 x / ln2
        kd = kd - _EXP_SHIFT
        rs[j] = _fma(kd, _EXP_LN2_N_LO, _fma(kd, _EXP_LN2_N_HI, x))
    tail, scale = _EXP_TAIL, _EXP_SCALE
    for j in range(m):
        k = ks[j]
        i = k & (_EXP_N - 1)
        e[j] = tail[i]
        ks[j] = scale[i] + (k << 45)
    for j in range(m):
        r = rs[j]
        r2 = r * r
        tmp = _fma(r2 * r2, _fma(r, _EXP_C5, _EXP_C4), _fma(r2, _fma(r, _EXP_C3, _EXP_C2), e[j] + r))
        sc = _from_bits(ks[j])
        p = 1.0 / (1.0 + _fma(sc, tmp, sc))
        e[j] = p - y[j]
        w[j] = p * (1.0 - p)
    if outside:
        for j in range(m):
            z = ((t0 * x0[j] + t1 * x1[j]) + t2 * x2[j]) + t3 * x3[j]
            if not abs(z) < _EXP_MAIN_PATH:
                p = _expit(z)
                e[j] = p - y[j]
                w[j] = p * (1.0 - p)


@functools.lru_cache(maxsize=None)
def exp_repeats_libm() -> bool:
    """Whether :func:`_expit_pass` gives the same bits with the inlined exp as with the C
    library's, on a fixed sample of arguments: normal and uniform ones over the range the MLE
    meets, zero and tiny ones, ones beyond the main path, and ones next to the points where the
    reduction's rounding turns (``(j + 1/2) ln2 / 128``). Computed once per process."""
    rng = np.random.default_rng(20240730)
    turns = (np.arange(-9000, 9000) + 0.5) / _EXP_INV_LN2_N
    z = np.concatenate(
        [
            rng.standard_normal(100_000) * 4.0,
            rng.uniform(-40.0, 40.0, 100_000),
            rng.uniform(-700.0, 700.0, 2_000),
            [0.0, -0.0, 1e-300, -1e-300, 2.0**-54, -(2.0**-54), 2.0**-60, 1e-17, 511.9, -511.9, 512.0, -512.0],
            np.nextafter(turns, np.inf),
            np.nextafter(turns, -np.inf),
            turns,
        ]
    )
    m = z.shape[0]
    X = np.zeros((4, m))
    X[0] = z
    y = (rng.random(m) < 0.5).astype(float)
    th = np.array([1.0, 0.0, 0.0, 0.0])
    ks, rs = np.empty(m, dtype=np.int64), np.empty(m)
    out = {}
    for inline in (False, True):
        e, w = np.empty(m), np.empty(m)
        _expit_pass(X, y, m, th, e, w, ks, rs, inline)
        out[inline] = (e, w)
    return all(np.array_equal(a, b) for a, b in zip(out[False], out[True]))


@njit(cache=True, error_model="numpy")
def _gemm_chunk_end(lo, m):
    """The end of OpenBLAS's next block of the inner dimension starting at ``lo`` of ``m``: ``GEMM_Q``
    while at least twice that remains, half the rest (rounded up to ``GEMM_UNROLL_M``) while more
    than ``GEMM_Q`` remains, else the rest."""
    left = m - lo
    if left >= 2 * GEMM_Q:
        left = GEMM_Q
    elif left > GEMM_Q:
        left = ((left // 2 + GEMM_UNROLL_M - 1) // GEMM_UNROLL_M) * GEMM_UNROLL_M
    return lo + left


@intrinsic
def _gram_chains(typingctx, X, w, lo, hi):
    """The sixteen sums of one block of OpenBLAS's inner dimension, ``c_ij = sum_t (x_it w_t) x_jt``
    over ``t = lo .. hi-1``, each a chain of fused multiply-adds from zero in the order of ``t``
    (``X (4, capacity)`` C-contiguous, ``w`` contiguous); returned row after row. Written in LLVM's
    vector instructions: a point's four features are one vector ``b``, and row ``i`` of the sums
    takes ``fma(splat(x_i w), b, c_i)``, four chains advancing together where the compiler would
    otherwise run sixteen scalar ones."""
    if not (isinstance(X, types.Array) and X.ndim == 2 and X.layout == "C" and X.dtype == types.float64):
        return None
    if not (isinstance(w, types.Array) and w.ndim == 1 and w.layout == "C" and w.dtype == types.float64):
        return None
    result = types.UniTuple(types.float64, 16)
    sig = result(X, w, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        xs = context.make_array(signature.args[0])(context, builder, args[0])
        ws = context.make_array(signature.args[1])(context, builder, args[1])
        _, cap = cgutils.unpack_tuple(builder, xs.shape, 2)
        lo, hi = args[2], args[3]
        i32, i64, vec = ir.IntType(32), ir.IntType(64), ir.VectorType(ir.DoubleType(), 4)
        fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec] * 3), "llvm.fma.v4f64")

        def splat(v, lane):
            return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, 4), [lane] * 4))

        rows = [builder.gep(xs.data, [builder.mul(cap, ir.Constant(i64, i))]) for i in range(4)]
        start = builder.block
        head = builder.append_basic_block("gram.head")
        body = builder.append_basic_block("gram.body")
        done = builder.append_basic_block("gram.done")
        builder.branch(head)
        builder.position_at_end(head)
        t = builder.phi(i64)
        sums = [builder.phi(vec) for _ in range(4)]
        t.add_incoming(lo, start)
        for c in sums:
            c.add_incoming(ir.Constant(vec, [0.0] * 4), start)
        builder.cbranch(builder.icmp_signed("<", t, hi), body, done)
        builder.position_at_end(body)
        b = ir.Constant(vec, ir.Undefined)
        for i in range(4):
            b = builder.insert_element(b, builder.load(builder.gep(rows[i], [t])), ir.Constant(i32, i))
        wt = builder.load(builder.gep(ws.data, [t]))
        wt = builder.insert_element(ir.Constant(vec, ir.Undefined), wt, ir.Constant(i32, 0))
        a = builder.fmul(b, splat(wt, 0))  # x_i w, rounded as the scalar product
        nxt = [builder.call(fma, [splat(a, i), b, sums[i]]) for i in range(4)]
        end = builder.block
        t.add_incoming(builder.add(t, ir.Constant(i64, 1)), end)
        for c, n in zip(sums, nxt):
            c.add_incoming(n, end)
        builder.branch(head)
        builder.position_at_end(done)
        values = [builder.extract_element(sums[i], ir.Constant(i32, j)) for i in range(4) for j in range(4)]
        return context.make_tuple(builder, result, values)

    return sig, codegen


@njit(cache=True, error_model="numpy")
def _weighted_gram(X, w, m, H):
    """:func:`~.confidence.weighted_gram` of one run, ``H = (X * w) @ X^T`` over the first ``m``
    columns, in OpenBLAS's order: entry ``(i, j)`` of each block of the inner dimension
    (:func:`_gemm_chunk_end`) is one chain of fused multiply-adds of ``(x_i w) x_j`` from zero
    (:func:`_gram_chains`), and the blocks' sums are added to the result in order. The matrix is
    not exactly symmetric (``(x_i w) x_j`` and ``(x_j w) x_i`` round differently): all sixteen
    entries are summed."""
    for i in range(4):
        for j in range(4):
            H[i, j] = 0.0
    lo = 0
    while lo < m:
        hi = _gemm_chunk_end(lo, m)
        c = _gram_chains(X, w, lo, hi)
        for i in range(4):
            for j in range(4):
                H[i, j] = H[i, j] + c[4 * i + j]
        lo = hi


@njit(cache=True, error_model="numpy")
def _einsum_dot4(X, e, m, out):
    """``np.einsum("kt,t->k")`` of the four rows of ``X`` with ``e`` over the first ``m`` entries,
    as numpy reduces a contiguous axis (``sum_of_products_contig_contig_outstride0_two`` at its
    SSE baseline): two lanes per row, the even and the odd entries; each block of eight entries is
    taken in the pairs (6, 7), (4, 5), (2, 3), (0, 1), the rest in pairs from the front (a missing
    odd entry adds a zero); the lanes are added at the end. No fused multiply-adds. The four rows
    are summed in one pass, so their eight independent chains overlap."""
    x0, x1, x2, x3 = X[0], X[1], X[2], X[3]
    p0 = q0 = p1 = q1 = p2 = q2 = p3 = q3 = 0.0
    i = 0
    while m - i >= 8:
        for j in (6, 4, 2, 0):
            ea, eb = e[i + j], e[i + j + 1]
            p0 = x0[i + j] * ea + p0
            q0 = x0[i + j + 1] * eb + q0
            p1 = x1[i + j] * ea + p1
            q1 = x1[i + j + 1] * eb + q1
            p2 = x2[i + j] * ea + p2
            q2 = x2[i + j + 1] * eb + q2
            p3 = x3[i + j] * ea + p3
            q3 = x3[i + j + 1] * eb + q3
        i += 8
    while i < m:
        ea = e[i]
        p0 = x0[i] * ea + p0
        p1 = x1[i] * ea + p1
        p2 = x2[i] * ea + p2
        p3 = x3[i] * ea + p3
        if i + 1 < m:
            eb = e[i + 1]
            q0 = x0[i + 1] * eb + q0
            q1 = x1[i + 1] * eb + q1
            q2 = x2[i + 1] * eb + q2
            q3 = x3[i + 1] * eb + q3
        else:
            q0, q1, q2, q3 = 0.0 + q0, 0.0 + q1, 0.0 + q2, 0.0 + q3
        i += 2
    out[0], out[1], out[2], out[3] = p0 + q0, p1 + q1, p2 + q2, p3 + q3


# ---------------------------------------------------------------------------- the MLE
@njit(cache=True, error_model="numpy")
def _newton(X, y, m, th, lam, steps, inline_exp, e, w, ks, rs, grad, H):
    """``steps`` Newton steps of the ridge-regularised log-loss (``lambda/2 ||theta||^2``) of the
    first ``m`` observations (``X (4, capacity)``, ``y``) from ``th``, in place: the arithmetic of
    :meth:`~.algorithms.GLMUCB.update` (``e``, ``w``, ``ks`` and ``rs`` are scratch). Three
    passes per step (``g``, the gradient, the Hessian): fused, the exp's call or the table's
    loads would spill the Hessian's sixteen accumulators."""
    for _ in range(steps):
        _expit_pass(X, y, m, th, e, w, ks, rs, inline_exp)
        _einsum_dot4(X, e, m, grad)
        for k in range(4):
            grad[k] = grad[k] + lam * th[k]
        _weighted_gram(X, w, m, H)
        for i in range(4):
            H[i, i] = H[i, i] + lam
        step = np.linalg.solve(H, grad)
        for k in range(4):
            th[k] = th[k] - step[k]


# ---------------------------------------------------------------------------- one block of rounds
@njit(cache=True, error_model="numpy")
def _glm_block(
    # environment block (one row per replication; features before candidates)
    x_rep,
    xcf_rep,
    reward_rep,
    size_rep,
    best_all,
    lp_all,
    unc_all,
    replica,
    noise,
    taus,
    # policy knobs
    ties,
    t0,
    rho_scale,
    rho_const,
    rho_shift,
    rho_add,
    lam,
    newton_steps,
    eager_rounds,
    lazy_every,
    tie_atol,
    fairer,
    inline_exp,
    # state, updated in place
    theta_hat,
    V,
    V_inv,
    HX,
    Hy,
    # outputs
    rec,
    played,
):
    """Every run through the rounds ``t0 .. t0 + B - 1``, one run after the other (a run's numbers
    do not depend on its neighbours). ``rec (R, B, 10)`` receives :data:`OUTPUTS` in order,
    ``played (R, B, 4)`` the played features."""
    R, B = best_all.shape
    K = reward_rep.shape[2]
    index = np.empty(K)
    score = np.empty(K)
    vx = np.empty(4)
    xa = np.empty(4)
    H = np.empty((4, 4))
    grad = np.empty(4)
    e = np.empty(HX.shape[2])
    w = np.empty(HX.shape[2])
    ks = np.empty(HX.shape[2], dtype=np.int64)
    rs = np.empty(HX.shape[2])
    for r in range(R):
        q = replica[r]
        th = theta_hat[r]
        Vr, Vi = V[r], V_inv[r]
        X, y = HX[r], Hy[r]
        for s in range(B):
            t = t0 + s
            x = x_rep[q, s]
            xcf = xcf_rep[q, s]
            # -- the index: g(x^T theta) + rho_t ||x||_{V^-1}
            rho = rho_scale * math.sqrt((rho_const + np.linalg.slogdet(Vr)[1]) - rho_shift) + rho_add
            for k in range(K):
                w2 = 0.0
                for i in range(4):
                    for j in range(4):
                        w2 += x[i, k] * Vi[i, j] * x[j, k]
                index[k] = _expit(_column_dot(x, k, th)) + rho * math.sqrt(w2)
            u = ties[r, s]
            action = argmax_atol_row(index, K, u, tie_atol)
            if fairer:  # algorithms.fairer_tie: the tied candidate of smallest estimated |Delta|
                thr = tie_threshold(index, K, tie_atol)
                for k in range(K):
                    if index[k] >= thr:
                        score[k] = -abs(_expit(_column_dot(xcf, k, th)) - _expit(_column_dot(x, k, th)))
                    else:
                        score[k] = -np.inf
                action = argmax_ties_row(score, K, u, True)
            # -- the environment's feedback
            yv = environment_feedback(
                rec[r, s], action, reward_rep[q, s, action], size_rep[q, s, action], taus[r], noise[r, s],
                best_all[r, s], lp_all[r, s], unc_all[r, s],
            )  # fmt: skip
            rec[r, s, 9] = index[action]
            # -- the update: history, V, V^-1 (Sherman-Morrison), then the MLE's Newton steps
            for i in range(4):
                xa[i] = x[i, action]
                played[r, s, i] = xa[i]
            m_hist = t + 1
            for i in range(4):
                X[i, t] = xa[i]
            y[t] = yv
            for i in range(4):
                for j in range(4):
                    Vr[i, j] = Vr[i, j] + xa[i] * xa[j]
            for i in range(4):
                vx[i] = (Vi[i, 0] * xa[0] + Vi[i, 2] * xa[2]) + (Vi[i, 1] * xa[1] + Vi[i, 3] * xa[3])
            den = 1.0 + ((xa[0] * vx[0] + xa[2] * vx[2]) + (xa[1] * vx[1] + xa[3] * vx[3]))
            for i in range(4):
                for j in range(4):
                    Vi[i, j] = Vi[i, j] - vx[i] * vx[j] / den
            if m_hist < eager_rounds or t % lazy_every == 0:
                _newton(X, y, m_hist, th, lam, newton_steps, inline_exp, e, w, ks, rs, grad, H)


class GLMUCBKernel:
    """:class:`~.algorithms.GLMUCB` against :class:`~.environment.FairLogisticBandit` (see the
    module docstring); writes the environment's feedback, the policy's ``ucb_index`` and, on
    request, the played features (:data:`~.kernels.PLAYED`)."""

    def __init__(self, policy, env):
        self.policy, self.env = policy, env
        self.outputs = {name: (np.float64, ()) for name in OUTPUTS}
        self.outputs[PLAYED[0]] = (np.float64, (env.n_features,))
        self.inline_exp = exp_repeats_libm()

    def _grow_history(self, t1: int) -> None:
        """Give the history the capacity the numpy path's doublings give it after ``t1`` rounds
        (:meth:`~.history.LogisticHistory.add`: every value kept, zeros beyond)."""
        h = self.policy.history
        cap = h.X.shape[-1]
        while cap < t1:
            cap *= 2
        if cap != h.X.shape[-1]:
            X = np.zeros(h.X.shape[:2] + (cap,))
            X[..., : h.t] = h.X[..., : h.t]
            Y = np.zeros((h.y.shape[0], cap))
            Y[:, : h.t] = h.y[:, : h.t]
            h.X, h.y = X, Y
        h.X = np.ascontiguousarray(h.X)
        h.y = np.ascontiguousarray(h.y)

    def run(self, t0: int, t1: int, out) -> None:
        p, env = self.policy, self.env
        h = p.history
        if h.t != t0:
            raise RuntimeError(f"the GLM-UCB kernel was asked for round {t0} after {h.t} rounds")
        R, B = p.n_runs, t1 - t0
        c = np.ascontiguousarray
        blk = env.replica_block(t0, t1)
        ties = c(p._ties.block(t0, t1))
        noise = c(env.reward_noise.block(t0, t1))
        self._grow_history(t1)
        theta_hat, V, V_inv = c(p.theta_hat).copy(), c(p.V).copy(), c(p.V_inv).copy()
        rec = np.empty((R, B, len(OUTPUTS)))
        played = np.empty((R, B, env.n_features))
        rho_scale = 0.25 * p.kappa
        rho_const = 2 * math.log(1 / p.alpha)
        rho_shift = p.n * math.log(p.lam)
        rho_add = math.sqrt(p.lam) * p.S
        _glm_block(
            c(blk["x"]), c(blk["x_cf"]), c(blk["reward"]), c(blk["size"]), c(blk["best"]), c(blk["lp"]),
            c(blk["unconstrained"]), blk["replica"], noise, c(env.taus),
            ties, t0, rho_scale, rho_const, rho_shift, rho_add, p.lam, p.newton_steps, p.eager_rounds,
            p.lazy_every, p.tie_atol, p.tie_rule == "fairer", self.inline_exp,
            theta_hat, V, V_inv, h.X, h.y, rec, played,
        )  # fmt: skip
        h.t = t1
        p.theta_hat, p.V, p.V_inv = theta_hat, V, V_inv
        p._diag = {"ucb_index": rec[:, -1, OUTPUTS.index("ucb_index")].copy()}
        for name, arr in out.items():
            arr[...] = played if name == PLAYED[0] else rec[:, :, OUTPUTS.index(name)]


def glm_kernel_for(policy, env):
    """The compiled kernel of ``policy`` against ``env``, or None when it does not cover the pair
    (a subclass of either, or features other than the chapter's four)."""
    # GLM-UCB itself, not a subclass: its ``compiled`` calls this function (this module does not
    # import the algorithms, which import it on first use)
    cls = type(policy)
    if (cls.__module__, cls.__qualname__) != (f"{__package__}.algorithms", "GLMUCB"):
        return None
    if type(env) is not FairLogisticBandit:
        return None
    if env.n_features != 4 or policy.tie_rule not in ("random", "fairer"):
        return None
    return GLMUCBKernel(policy, env)
