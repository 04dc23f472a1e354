"""Compiled kernels (numba) for the chapter's algorithms on the contextual causal bandit.

:class:`CausalBanditKernel` steps :class:`~.algorithms.DecomposedUCB` (D-UCB, C-UCB, UCB),
:class:`~.algorithms.FairUCB` (F-UCB with either discrepancy estimator, either radius, every
fallback), :class:`~.algorithms.TrueDeltaFairUCB` or :class:`~.algorithms.FairLinUCB`, alone or wrapped in
:class:`~.auditing.Audited` with its :class:`~.auditing.FairnessAuditor`, against
:class:`~.model.CausalBanditEnv` (contexts drawn i.i.d. or from a user sequence), for every run
through a block of rounds. It reads the same named random streams as the numpy path (contexts or
the user order, the node uniforms, the reward noise, the tie-breaking uniforms: every one is read
whether it is used or not, so each stream advances exactly as on the numpy path), samples the
model's nodes by the same inverse-CDF rule, updates the policy's (and the auditor's) own state
arrays in place, and writes every per-round value the numpy path produces: the feedback
(``reward``, ``regret``, ``discrepancy`` and the state code of every node), F-UCB's diagnostics
(``fallback``, ``fair_set_size``, ``own_ucb_delta``) and the audit (``audit_delta_hat``,
``audit_radius_paper``, ``audit_radius_diff``).

Another chapter that runs these learners on its own problem reaches the kernel through
:func:`kernel_for` with two keywords: ``algorithm`` names the class of this chapter whose arithmetic
a subclass keeps (the caller vouches that the subclass changes nothing else), and
``index_bounds`` clips every arm's reward index ``UCB_a`` into per-run bounds
``max(min(UCB_a, U), L)`` before the choice (the pcb chapter's rule; F-UCB's discrepancy side is
not clipped). Neither is used by this chapter, whose numbers they leave unchanged.

The numpy classes stay the readable reference. The arithmetic repeats theirs operation for
operation, including the order of every sum over cells or coordinates (numpy reduces a contiguous
row pairwise: :func:`~causalbandits_lib.core.kernels.pairwise_sum` does the same), and ``log(1/δ_t)`` is computed by
:func:`~.algorithms.log_inv_delta` itself, so the two paths agree bit for bit; the tests and the
registry's conformance check compare them.

The module registers :func:`kernel_for` as the compiled fast path of
:class:`~.algorithms.DecomposedUCB` (and so of its subclasses), :class:`~.algorithms.FairLinUCB` and
:class:`~.auditing.Audited` (:func:`~causalbandits_lib.core.kernels.register_kernel`) when it is
imported, which the chapter's package does: the classes do not import it back.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.kernels import argmax_ties_row, np_maximum, np_minimum, pairwise_sum, register_kernel
from .algorithms import (
    BoundedDiscrepancy,
    DecomposedUCB,
    FairLinUCB,
    FairUCB,
    IdentifiedDiscrepancy,
    TrueDeltaFairUCB,
    log_inv_delta,
)
from .auditing import Audited, FairnessAuditor
from .model import CausalBanditEnv, IIDContexts, UserSequence

__all__ = ["CausalBanditKernel", "kernel_for"]

# policy codes
DECOMPOSED, FAIR_UCB, FAIR_LINUCB, TRUE_DELTA = range(4)
# estimator codes
IDENTIFIED, BOUNDED, BOUNDED_POINT_MASSES = range(3)
# fallback codes (FairUCBConfig.fallback)
FALLBACK = {"min_ucb_delta": 0, "safe_arm": 1, "unconstrained": 2}


@njit(cache=True)
def _row_dots(x, xo, x_step, y, yo, y_step, n, m, out, oo, tmp):
    """``out[oo + i] = (x[xi : xi + n] * y[yi : yi + n]).sum()`` for ``i < m``, with
    ``xi = xo + i · x_step`` and ``yi = yo + i · y_step``, each sum in numpy's order
    (:func:`pairwise_sum` of the rounded products; up to 128 numbers the products are summed as
    they are formed). Flat arrays and offsets, and many rows per call: no array view is made and
    few calls are paid for."""
    for row in range(m):
        a, b = xo + row * x_step, yo + row * y_step
        if n < 8:
            res = 0.0
            for i in range(n):
                res += x[a + i] * y[b + i]
        elif n <= 128:
            r0, r1 = x[a] * y[b], x[a + 1] * y[b + 1]
            r2, r3 = x[a + 2] * y[b + 2], x[a + 3] * y[b + 3]
            r4, r5 = x[a + 4] * y[b + 4], x[a + 5] * y[b + 5]
            r6, r7 = x[a + 6] * y[b + 6], x[a + 7] * y[b + 7]
            i = 8
            stop = n - (n % 8)
            while i < stop:
                r0 += x[a + i] * y[b + i]
                r1 += x[a + i + 1] * y[b + i + 1]
                r2 += x[a + i + 2] * y[b + i + 2]
                r3 += x[a + i + 3] * y[b + i + 3]
                r4 += x[a + i + 4] * y[b + i + 4]
                r5 += x[a + i + 5] * y[b + i + 5]
                r6 += x[a + i + 6] * y[b + i + 6]
                r7 += x[a + i + 7] * y[b + i + 7]
                i += 8
            res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            while i < n:
                res += x[a + i] * y[b + i]
                i += 1
        else:
            for i in range(n):
                tmp[i] = x[a + i] * y[b + i]
            res = pairwise_sum(tmp, 0, n)
        out[oo + row] = res


@njit(cache=True)
def _cell_means(counts, sums, row, unseen, out):
    """:func:`~.algorithms.running_means` of run ``row`` of the statistics."""
    for k in range(out.shape[0]):
        n = counts[row, k]
        out[k] = sums[row, k] / max(n, 1.0) if n > 0 else unseen


@njit(cache=True)
def _cell_radius(counts, row, factor_log, clip, out):
    """:func:`~.algorithms.cell_radius` of run ``row`` (``factor_log = factor · log(1/δ)``)."""
    for k in range(out.shape[0]):
        r = math.sqrt(factor_log / max(counts[row, k], 1.0))
        out[k] = np_minimum(r, 1.0) if clip else r


@njit(cache=True)
def _estimate(est, n_arms, c, first, m, means, rad8, tmp, mu_rd, only, delta_hat, radius_paper, radius_diff):
    """``Δ̂``, ``radius_paper`` and ``radius_diff`` of the arms ``first .. first + m - 1`` in context
    ``c``, into ``[0, m)`` of the three outputs: the estimators' ``estimate`` for one run. With
    ``only`` 0 (1) the identified estimator leaves the radius ``diff`` (``paper``) at 0, as the
    numpy path does not compute it either.

    ``est`` = (kind, n_b, diff, abs_diff, probs, q, cells, own), the arrays flattened from
    ``(n_contexts, n_arms, n_cells)`` (``diff``, ``abs_diff``, the decomposition's ``probs``),
    ``(n_contexts, 2, n_b, n_arms, n_cells)`` (the bounded estimator's ``q``) and
    ``(n_contexts, 2, n_b, n_arms)``, ``(n_contexts, n_arms)`` (its gathered point-mass cells);
    ``tmp`` and ``mu_rd`` (two numbers) are scratch.
    """
    kind, n_b, diff, abs_diff, probs, q, cells, own = est
    n_cells = means.shape[0]
    row = (c * n_arms + first) * n_cells
    if kind == IDENTIFIED:
        _row_dots(diff, row, n_cells, means, 0, 0, n_cells, m, delta_hat, 0, tmp)
        for i in range(m):
            delta_hat[i] = abs(delta_hat[i])
        if only != 1:
            _row_dots(probs, row, n_cells, rad8, 0, 0, n_cells, m, radius_paper, 0, tmp)
        else:
            radius_paper[:m] = 0.0
        if only != 0:
            _row_dots(abs_diff, row, n_cells, rad8, 0, 0, n_cells, m, radius_diff, 0, tmp)
        else:
            radius_diff[:m] = 0.0
        return
    if kind == BOUNDED:
        _row_dots(probs, row, n_cells, rad8, 0, 0, n_cells, m, radius_paper, 0, tmp)
    for i in range(m):
        a = first + i
        lo0 = hi0 = lo1 = hi1 = 0.0
        lo = hi = rmax = 0.0
        for si in range(2):
            for b in range(n_b):
                j = ((c * 2 + si) * n_b + b) * n_arms + a
                if kind == BOUNDED:
                    _row_dots(q, j * n_cells, 0, means, 0, 0, n_cells, 1, mu_rd, 0, tmp)
                    _row_dots(q, j * n_cells, 0, rad8, 0, 0, n_cells, 1, mu_rd, 1, tmp)
                    mu, rd = mu_rd[0], mu_rd[1]
                else:
                    mu = means[cells[j]]
                    rd = rad8[cells[j]]
                if b == 0:
                    lo, hi = mu, mu
                else:
                    lo, hi = np_minimum(lo, mu), np_maximum(hi, mu)
                rmax = rd if (si == 0 and b == 0) else np_maximum(rmax, rd)
            if si == 0:
                lo0, hi0 = lo, hi
            else:
                lo1, hi1 = lo, hi
        delta_hat[i] = np_maximum(abs(hi0 - lo1), abs(hi1 - lo0))
        if kind != BOUNDED:
            radius_paper[i] = rad8[own[c * n_arms + a]]
        radius_diff[i] = rmax


@njit(cache=True)
def _causal_bandit_block(
    env_arrays,
    ctx,
    u_nodes,
    z,
    policy_kind,
    pol_stats,
    pol_cells,
    pol_knobs,
    est,
    fair_knobs,
    index_bounds,
    allowed,
    lin_state,
    lin_arrays,
    ties,
    use_ties,
    log_inv,
    audit,
    aud_stats,
    aud_cells,
    aud_knobs,
    aud_est,
    aud_log_inv,
    feedback_out,
    codes_out,
    diag_out,
    audit_out,
):
    """Every run through one block of rounds (see the module docstring).

    env_arrays : (context_codes, context_pos, arm_codes, arm_pos, plan_pos, plan_col, par_ptr,
        par_pos, par_stride, cdf_flat, cdf_off, cdf_width, rw_pos, rw_weight, labels_flat,
        labels_off, means, best_means, discrepancy, offset_sigma)
    ctx : (R, B) contexts; u_nodes : (R, B, n_nodes) node uniforms; z : (R, B) reward noise
    pol_stats : (counts, sums), (R, n_cells) each, updated in place (DecomposedUCB, FairUCB)
    pol_cells : (w_pos, w_stride, probs) the decomposition: realized cell of the nodes ``w_pos``
        with row-major strides, and ``probs`` (n_ctx, K, n_cells) flattened
    pol_knobs : (unseen_mean, alpha_r, clip_radius)
    fair_knobs : (tau, alpha_c, radius 0 paper 1 diff, fallback code, safe_arm)
    index_bounds : (lower, upper (R, n_ctx, K), whether to clip): the arms' reward index is clipped
        into ``[lower, upper]`` of the run and context when the flag is set
    allowed : (n_ctx, K) bool, the arms TrueDeltaFairUCB may play in each context
    lin_state : (a_inv (R, d, d), b (R, d), group counts, group sums (R, 2K)), updated in place
    lin_arrays : (features (n_ctx, K, d) flattened, groups (n_ctx,), alpha, gamma, d)
    ties : (R, B) uniforms (read only if ``use_ties``); log_inv : (B,) the policy's log(1/δ_t)
    aud_* : the auditor's statistics, decomposition, (unseen_mean, clip_radius), estimator, log(1/δ_t)
    feedback_out : (R, B, 3) reward, regret, discrepancy; codes_out : (R, B, n_nodes) node codes
    diag_out : (R, B, 3) fallback, fair_set_size, own_ucb_delta
    audit_out : (R, B, 3) audit_delta_hat, audit_radius_paper, audit_radius_diff
    """
    (
        context_codes,
        context_pos,
        arm_codes,
        arm_pos,
        plan_pos,
        plan_col,
        par_ptr,
        par_pos,
        par_stride,
        cdf_flat,
        cdf_off,
        cdf_width,
        rw_pos,
        rw_weight,
        labels_flat,
        labels_off,
        env_means,
        best_means,
        discrepancy,
        offset_sigma,
    ) = env_arrays
    offset, sigma = offset_sigma[0], offset_sigma[1]
    counts, sums = pol_stats
    w_pos, w_stride, probs = pol_cells
    unseen, alpha_r, clip = pol_knobs
    tau, alpha_c, radius_kind, fallback, safe_arm = fair_knobs
    ucb_lower, ucb_upper, clip_ucb = index_bounds
    a_inv_all, b_all, g_counts, g_sums = lin_state
    lin_features, groups, lin_alpha, lin_gamma, d = lin_arrays
    a_counts, a_sums = aud_stats
    a_w_pos, a_w_stride, _a_probs = aud_cells
    a_unseen, a_clip = aud_knobs

    R, B = ctx.shape
    n_nodes = u_nodes.shape[2]
    K = arm_codes.shape[0]
    n_cells = counts.shape[1]
    a_n_cells = a_counts.shape[1]
    tmp = np.empty(max(n_cells, a_n_cells, d, 1))
    means = np.empty(n_cells)
    rad = np.empty(n_cells)
    rad8 = np.empty(n_cells)
    ucb_w = np.empty(n_cells)
    a_means = np.empty(a_n_cells)
    a_rad8 = np.empty(a_n_cells)
    ucb = np.empty(K)
    ucb_d = np.empty(K)
    masked = np.empty(K)
    theta = np.empty(d)
    ax = np.empty(K * d)
    a_inv = np.empty(d * d)
    bv = np.empty(d)
    codes = np.empty(n_nodes, dtype=np.int64)
    e_dh, e_rp, e_rd = np.empty(K), np.empty(K), np.empty(K)
    lin_mean, lin_wsq = np.empty(K), np.empty(K)
    mu_rd = np.empty(2)
    for r in range(R):
        if policy_kind == FAIR_LINUCB:
            for i in range(d):
                bv[i] = b_all[r, i]
                for j in range(d):
                    a_inv[i * d + j] = a_inv_all[r, i, j]
        for s in range(B):
            c = ctx[r, s]
            L = log_inv[s]
            u = ties[r, s]
            # ---------------------------------------------------------------- the decision
            if policy_kind == FAIR_LINUCB:
                xo = c * K * d
                _row_dots(a_inv, 0, d, bv, 0, 0, d, d, theta, 0, tmp)  # θ = A⁻¹b
                _row_dots(lin_features, xo, d, theta, 0, 0, d, K, lin_mean, 0, tmp)  # xᵀθ
                for a in range(K):
                    _row_dots(a_inv, 0, d, lin_features, xo + a * d, 0, d, d, ax, a * d, tmp)  # A⁻¹x
                _row_dots(ax, 0, d, lin_features, xo, d, d, K, lin_wsq, 0, tmp)  # (A⁻¹x)ᵀx
                for a in range(K):
                    mean = lin_mean[a]
                    width_a = math.sqrt(np_maximum(lin_wsq[a], 0.0))
                    n1, n0 = g_counts[r, K + a], g_counts[r, a]
                    gm1 = g_sums[r, K + a] / max(n1, 1.0) if n1 > 0 else 0.0
                    gm0 = g_sums[r, a] / max(n0, 1.0) if n0 > 0 else 0.0
                    ucb[a] = mean + lin_alpha * width_a - lin_gamma * abs(gm1 - gm0)
                arm = argmax_ties_row(ucb, K, u, use_ties)
            else:
                _cell_means(counts, sums, r, unseen, means)
                _cell_radius(counts, r, 2.0 * L, clip, rad)
                for k in range(n_cells):
                    ucb_w[k] = means[k] + alpha_r * rad[k]
                _row_dots(probs, c * K * n_cells, n_cells, ucb_w, 0, 0, n_cells, K, ucb, 0, tmp)
                if clip_ucb:
                    for a in range(K):
                        ucb[a] = np_maximum(np_minimum(ucb[a], ucb_upper[r, c, a]), ucb_lower[r, c, a])
                if policy_kind == DECOMPOSED:
                    arm = argmax_ties_row(ucb, K, u, use_ties)
                elif policy_kind == TRUE_DELTA:
                    for a in range(K):
                        masked[a] = ucb[a] if allowed[c, a] else -np.inf
                    arm = argmax_ties_row(masked, K, u, use_ties)
                else:
                    _cell_radius(counts, r, 8.0 * L, clip, rad8)
                    _estimate(est, K, c, 0, K, means, rad8, tmp, mu_rd, radius_kind, e_dh, e_rp, e_rd)
                    n_fair = 0
                    for a in range(K):
                        ucb_d[a] = e_dh[a] + alpha_c * (e_rp[a] if radius_kind == 0 else e_rd[a])
                        if ucb_d[a] <= tau:
                            n_fair += 1
                            masked[a] = ucb[a]
                        else:
                            masked[a] = -np.inf
                    arm = argmax_ties_row(masked, K, u, use_ties)
                    if n_fair == 0:
                        if fallback == 0:
                            lowest = ucb_d[0]
                            for a in range(1, K):
                                lowest = np_minimum(lowest, ucb_d[a])
                            for a in range(K):
                                masked[a] = ucb[a] if ucb_d[a] <= lowest else -np.inf
                            arm = argmax_ties_row(masked, K, u, use_ties)
                        elif fallback == 1:
                            arm = safe_arm
                        else:
                            arm = argmax_ties_row(ucb, K, u, use_ties)
                    diag_out[r, s, 0] = 0.0 if n_fair > 0 else 1.0
                    diag_out[r, s, 1] = float(n_fair)
                    diag_out[r, s, 2] = ucb_d[arm]
            # ---------------------------------------------------------------- the audit
            if audit:
                _cell_means(a_counts, a_sums, r, a_unseen, a_means)
                _cell_radius(a_counts, r, 8.0 * aud_log_inv[s], a_clip, a_rad8)
                _estimate(aud_est, K, c, arm, 1, a_means, a_rad8, tmp, mu_rd, -1, e_dh, e_rp, e_rd)
                audit_out[r, s, 0] = e_dh[0]
                audit_out[r, s, 1] = e_rp[0]
                audit_out[r, s, 2] = e_rd[0]
            # ---------------------------------------------------------------- the environment
            for j in range(context_pos.shape[0]):
                codes[context_pos[j]] = context_codes[c, j]
            for j in range(arm_pos.shape[0]):
                codes[arm_pos[j]] = arm_codes[arm, j]
            for p in range(plan_pos.shape[0]):
                flat = 0
                for q in range(par_ptr[p], par_ptr[p + 1]):
                    flat = flat + codes[par_pos[q]] * par_stride[q]
                uu = u_nodes[r, s, plan_col[p]]
                w = cdf_width[p]
                base = cdf_off[p] + flat * w
                code = 0
                for j in range(w):
                    if uu >= cdf_flat[base + j]:
                        code += 1
                codes[plan_pos[p]] = code
            mean = offset
            for q in range(rw_pos.shape[0]):
                mean = mean + rw_weight[q] * labels_flat[labels_off[q] + codes[rw_pos[q]]]
            reward = mean + sigma * z[r, s]
            feedback_out[r, s, 0] = reward
            feedback_out[r, s, 1] = best_means[c] - env_means[c, arm]
            feedback_out[r, s, 2] = discrepancy[c, arm]
            for j in range(n_nodes):
                codes_out[r, s, j] = codes[j]
            # ---------------------------------------------------------------- the updates
            if policy_kind == FAIR_LINUCB:
                xo = (c * K + arm) * d
                _row_dots(lin_features, xo, 0, ax, arm * d, 0, d, 1, lin_mean, 0, tmp)
                denom = 1.0 + lin_mean[0]
                for i in range(d):
                    for j in range(d):
                        a_inv[i * d + j] = a_inv[i * d + j] - ax[arm * d + i] * ax[arm * d + j] / denom
                for i in range(d):
                    bv[i] = bv[i] + reward * lin_features[xo + i]
                g = groups[c] * K + arm
                g_counts[r, g] += 1.0
                g_sums[r, g] += reward
            else:
                cell = 0
                for j in range(w_pos.shape[0]):
                    cell += codes[w_pos[j]] * w_stride[j]
                counts[r, cell] += 1.0
                sums[r, cell] += reward
            if audit:
                cell = 0
                for j in range(a_w_pos.shape[0]):
                    cell += codes[a_w_pos[j]] * a_w_stride[j]
                a_counts[r, cell] += 1.0
                a_sums[r, cell] += reward
        if policy_kind == FAIR_LINUCB:
            for i in range(d):
                b_all[r, i] = bv[i]
                for j in range(d):
                    a_inv_all[r, i, j] = a_inv[i * d + j]


def _strides(cards) -> np.ndarray:
    """Row-major strides of variables with ``cards`` states (``np.ravel_multi_index``)."""
    return np.array([int(np.prod(cards[i + 1 :], dtype=np.int64)) for i in range(len(cards))], dtype=np.int64)


def _flat(a, dtype=float) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1)


def _cells(dec, position) -> tuple:
    """(node positions, strides, flattened probs) of a decomposition's cells."""
    return (
        np.array([position[v] for v in dec.variables], dtype=np.int64),
        _strides(dec.cards),
        _flat(dec.probs),
    )


def _estimator(est) -> tuple | None:
    """The arrays :func:`_estimate` reads, or None for an estimator the kernel does not know."""
    f, i = np.zeros(0), np.zeros(0, dtype=np.int64)
    probs = _flat(est.dec.probs)
    if type(est) is IdentifiedDiscrepancy:
        return (IDENTIFIED, 0, _flat(est.diff), _flat(est.abs_diff), probs, f, i, i)
    if type(est) is BoundedDiscrepancy:
        n_b = est.probs.shape[2]
        if est.cells is not None:
            cells, own = _flat(est.cells, np.int64), _flat(est.own_cells, np.int64)
            return (BOUNDED_POINT_MASSES, n_b, f, f, f, f, cells, own)
        return (BOUNDED, n_b, f, f, probs, _flat(est.probs), i, i)
    return None


def _no_estimator() -> tuple:
    """The estimator tuple of a policy or auditor that has none (never read)."""
    f, i = np.zeros(0), np.zeros(0, dtype=np.int64)
    return (IDENTIFIED, 0, f, f, f, f, i, i)


def _environment(env) -> tuple:
    """The arrays of :class:`~.model.CausalBanditEnv` the kernel reads (its sampling plan flattened)."""
    nodes = list(env.model.nodes)
    position = {n: i for i, n in enumerate(nodes)}
    plan = env.sampling_plan()
    par_ptr, par_pos, par_stride, cdf_parts, cdf_off, cdf_width = [0], [], [], [], [], []
    offset = 0
    for _, _, parents, strides, cdf in plan:
        par_pos += [position[p] for p in parents]
        par_stride += list(strides)
        par_ptr.append(len(par_pos))
        cdf = np.ascontiguousarray(cdf, dtype=float)
        cdf_parts.append(cdf.ravel())
        cdf_off.append(offset)
        cdf_width.append(cdf.shape[1])
        offset += cdf.size
    labels, labels_off, pos = [], [], 0
    for node in env.reward_weights:
        lab = np.asarray(env.labels[node], dtype=float)
        labels.append(lab)
        labels_off.append(pos)
        pos += len(lab)
    i64 = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    arrays = (
        np.ascontiguousarray(env.context_codes, dtype=np.int64),
        i64([position[n] for n in env.context_nodes]),
        np.ascontiguousarray(env.arm_codes, dtype=np.int64),
        i64([position[n] for n in env.arm_nodes]),
        i64([position[p[0]] for p in plan]),
        i64([p[1] for p in plan]),
        i64(par_ptr),
        i64(par_pos),
        i64(par_stride),
        np.concatenate(cdf_parts) if cdf_parts else np.zeros(0),
        i64(cdf_off),
        i64(cdf_width),
        i64([position[n] for n in env.reward_weights]),
        np.array([float(w) for w in env.reward_weights.values()]),
        np.concatenate(labels) if labels else np.zeros(0),
        i64(labels_off),
        np.ascontiguousarray(env.means, dtype=float),
        np.ascontiguousarray(env.best_means, dtype=float),
        np.ascontiguousarray(env.discrepancy, dtype=float),
        np.array([float(env.offset), float(env.sigma)]),
    )
    return arrays, nodes, position


class CausalBanditKernel:
    """One of the chapter's policies (optionally audited) against :class:`~.model.CausalBanditEnv`
    (see the module docstring); built by :func:`kernel_for`."""

    def __init__(
        self, policy, env, inner, auditor, env_arrays, nodes, position, est, aud_est, kind=None, index_bounds=None
    ):
        self.policy, self.env, self.inner, self.auditor = policy, env, inner, auditor
        self.env_arrays, self.nodes, self.position = env_arrays, nodes, position
        self.kind = _policy_kind(type(inner)) if kind is None else kind
        self.est, self.aud_est = est, aud_est
        outputs = {"reward": (np.float64, ()), "regret": (np.float64, ()), "discrepancy": (np.float64, ())}
        outputs.update({n: (np.int64, ()) for n in nodes})
        if self.kind == FAIR_UCB:
            outputs.update({n: (np.float64, ()) for n in ("fallback", "fair_set_size", "own_ucb_delta")})
        if auditor is not None:
            outputs.update(
                {n: (np.float64, ()) for n in ("audit_delta_hat", "audit_radius_paper", "audit_radius_diff")}
            )
        self.outputs = outputs
        n = len(policy_rows(inner))
        empty2 = np.zeros((n, 0))
        if self.kind == FAIR_LINUCB:
            self.pol_stats = (empty2, empty2)
            self.pol_cells = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
            self.pol_knobs = (0.0, 0.0, False)
            self.lin_arrays = (_flat(inner.features), _flat(inner.groups, np.int64), inner.alpha, inner.gamma, inner.d)
        else:
            self.pol_stats = (inner.stats.counts, inner.stats.sums)
            self.pol_cells = _cells(inner.dec, position)
            self.pol_knobs = (inner.unseen_mean, inner.alpha_r, inner.clip_radius)
            self.lin_arrays = (np.zeros(0), np.zeros(0, dtype=np.int64), 0.0, 0.0, 0)
        if self.kind == FAIR_UCB:
            radius = 0 if inner.fair_radius == "paper" else 1
            safe = -1 if inner.safe_arm is None else int(inner.safe_arm)
            self.fair_knobs = (inner.tau, inner.alpha_c, radius, FALLBACK[inner.fallback], safe)
        else:
            self.fair_knobs = (0.0, 0.0, 0, 0, -1)
        if index_bounds is None:
            never = np.zeros((1, 1, 1))
            self.index_bounds = (never, never, False)
        else:
            lower, upper = (np.ascontiguousarray(b, dtype=float) for b in index_bounds)
            self.index_bounds = (lower, upper, True)
        if self.kind == TRUE_DELTA:
            self.allowed = np.ascontiguousarray(inner.allowed, dtype=np.bool_)
        else:
            self.allowed = np.zeros((1, 1), dtype=np.bool_)
        if auditor is not None:
            self.aud_cells = _cells(auditor.dec, position)
            self.aud_knobs = (auditor.unseen_mean, auditor.clip_radius)
        else:
            self.aud_cells = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
            self.aud_knobs = (0.0, False)

    def _contexts(self, t0: int, t1: int) -> np.ndarray:
        src = self.env.contexts
        if type(src) is IIDContexts:
            return np.searchsorted(src.cdf, src.noise.block(t0, t1), side="right").astype(np.int64)
        return src.user_contexts[src.order[:, np.arange(t0, t1) % len(src.user_contexts)]].astype(np.int64)

    def run(self, t0: int, t1: int, out) -> None:
        env, inner, auditor = self.env, self.inner, self.auditor
        R, B = len(policy_rows(inner)), t1 - t0
        ctx = np.ascontiguousarray(self._contexts(t0, t1))
        u_nodes = np.ascontiguousarray(env.node_uniforms.block(t0, t1))
        z = np.ascontiguousarray(env.reward_noise.block(t0, t1))
        use_ties = inner.ties is not None
        ties = np.ascontiguousarray(inner.ties.block(t0, t1)) if use_ties else np.zeros((R, B))
        if self.kind == FAIR_LINUCB:
            lin_state = (inner.a_inv, inner.b, inner.group_stats.counts, inner.group_stats.sums)
            log_inv = np.zeros(B)
        else:
            lin_state = (np.zeros((R, 0, 0)), np.zeros((R, 0)), np.zeros((R, 0)), np.zeros((R, 0)))
            log_inv = np.array([log_inv_delta(t, inner.delta_power) for t in range(t0, t1)])
        if auditor is not None:
            aud_stats = (auditor.stats.counts, auditor.stats.sums)
            aud_log_inv = np.array([log_inv_delta(t, auditor.delta_power) for t in range(t0, t1)])
        else:
            aud_stats = (np.zeros((R, 0)), np.zeros((R, 0)))
            aud_log_inv = np.zeros(B)
        feedback = np.empty((R, B, 3))
        codes = np.empty((R, B, len(self.nodes)), dtype=np.int64)
        diag = np.empty((R, B, 3))
        audit = np.empty((R, B, 3))
        _causal_bandit_block(
            self.env_arrays,
            ctx,
            u_nodes,
            z,
            self.kind,
            self.pol_stats,
            self.pol_cells,
            self.pol_knobs,
            self.est,
            self.fair_knobs,
            self.index_bounds,
            self.allowed,
            lin_state,
            self.lin_arrays,
            ties,
            use_ties,
            log_inv,
            auditor is not None,
            aud_stats,
            self.aud_cells,
            self.aud_knobs,
            self.aud_est,
            aud_log_inv,
            feedback,
            codes,
            diag,
            audit,
        )
        values = {"reward": feedback[:, :, 0], "regret": feedback[:, :, 1], "discrepancy": feedback[:, :, 2]}
        values.update({n: codes[:, :, j] for j, n in enumerate(self.nodes)})
        diag_names = ("fallback", "fair_set_size", "own_ucb_delta")
        audit_names = ("audit_delta_hat", "audit_radius_paper", "audit_radius_diff")
        if self.kind == FAIR_UCB:
            values.update({n: diag[:, :, j] for j, n in enumerate(diag_names)})
        if auditor is not None:
            values.update({n: audit[:, :, j] for j, n in enumerate(audit_names)})
        for name, arr in out.items():
            arr[...] = values[name]
        # what the numpy path leaves behind after round t1 - 1
        env.observe(t1 - 1)
        if self.kind == FAIR_UCB:
            inner.last_diagnostics = {n: diag[:, -1, j].copy() for j, n in enumerate(diag_names)}
        if auditor is not None:
            self.policy.last_audit = {n: audit[:, -1, j].copy() for j, n in enumerate(audit_names)}


def policy_rows(policy) -> np.ndarray:
    """The runs of a reset policy of this chapter (one row per run)."""
    if hasattr(policy, "stats"):
        return policy.stats.counts
    return policy.b


def _policy_kind(cls) -> int | None:
    """The policy code of one of the chapter's classes (exact type), or None."""
    kinds = {DecomposedUCB: DECOMPOSED, FairUCB: FAIR_UCB, FairLinUCB: FAIR_LINUCB, TrueDeltaFairUCB: TRUE_DELTA}
    return kinds.get(cls)


def kernel_for(policy, env, *, algorithm=None, index_bounds=None):
    """The compiled kernel of ``policy`` (a :class:`~.algorithms.DecomposedUCB`,
    :class:`~.algorithms.FairUCB`, :class:`~.algorithms.TrueDeltaFairUCB` or
    :class:`~.algorithms.FairLinUCB`, or one of them in :class:`~.auditing.Audited` with a
    :class:`~.auditing.FairnessAuditor`) against ``env``, or None when the kernel does not know an
    exact type involved (a subclass, another environment, context source or estimator): the numpy
    path runs then.

    Parameters
    ----------
    algorithm : class, optional
        One of the four classes above, for a ``policy`` (or audited policy) that is a subclass of
        it: the kernel then repeats that class's arithmetic. Only for a subclass whose decisions and
        updates are the class's own but for ``index_bounds`` (its caller vouches for it).
    index_bounds : (lower, upper), optional
        Arrays of shape ``(n_runs, n_contexts, n_arms)``: each run's reward index ``UCB_a`` is
        clipped to ``max(min(UCB_a, upper), lower)`` of its context before the choice (not with
        :class:`~.algorithms.FairLinUCB`, whose score is not a cell-decomposed index: None then).
    """
    if type(env) is not CausalBanditEnv or type(env.contexts) not in (IIDContexts, UserSequence):
        return None
    inner, auditor = policy, None
    if type(policy) is Audited:
        inner, auditor = policy.policy, policy.auditor
        if type(auditor) is not FairnessAuditor:
            return None
    cls = type(inner) if algorithm is None else algorithm
    kind = _policy_kind(cls)
    if kind is None or not isinstance(inner, cls):
        return None
    if index_bounds is not None:
        if cls is FairLinUCB:
            return None
        shape = (len(policy_rows(inner)), env.n_contexts, env.n_arms)
        if len(index_bounds) != 2 or any(np.shape(b) != shape for b in index_bounds):
            raise ValueError(f"index_bounds must be two arrays of shape {shape} (runs, contexts, arms)")
    env_arrays, nodes, position = _environment(env)
    names = {"reward", "regret", "discrepancy"}
    if names & set(nodes):
        return None  # a node named like a feedback value would shadow it
    if cls is FairLinUCB:
        if inner.features.shape[:2] != (env.n_contexts, env.n_arms) or len(inner.groups) != env.n_contexts:
            return None
    elif inner.dec.probs.shape[:2] != (env.n_contexts, env.n_arms):
        return None
    elif cls is TrueDeltaFairUCB and inner.allowed.shape != (env.n_contexts, env.n_arms):
        return None
    est = _no_estimator()
    if cls is FairUCB:
        est = _estimator(inner.discrepancy)
        if est is None:
            return None
    aud_est = _no_estimator()
    if auditor is not None:
        aud_est = _estimator(auditor.estimator)
        if aud_est is None or auditor.dec.probs.shape[:2] != (env.n_contexts, env.n_arms):
            return None
        if {"audit_delta_hat", "audit_radius_paper", "audit_radius_diff"} & set(nodes):
            return None
    if cls is FairUCB and {"fallback", "fair_set_size", "own_ucb_delta"} & set(nodes):
        return None
    return CausalBanditKernel(
        policy, env, inner, auditor, env_arrays, nodes, position, est, aud_est, kind, index_bounds
    )


register_kernel(DecomposedUCB, kernel_for)
register_kernel(FairLinUCB, kernel_for)
register_kernel(Audited, kernel_for)
