"""Compiled kernels (numba) for the chapter's online algorithms.

- :class:`LinUCBKernel`: :class:`~.algorithms.LinUCB` in all its variants (plain, LinUCB-PCB with
  either clipping, the warm-started LinUCB_Biased and LinUCB_CP: the warm start happens in
  ``reset``, before the kernel runs) against the core's
  :class:`~causalbandits_lib.core.environments.ContextualBernoulliBandit`;
- :class:`ClippedUCBKernel`: :class:`~.algorithms.ClippedUCB` (UCB and UCB-PCB) against the core's
  :class:`~causalbandits_lib.core.environments.BernoulliBandit`.

Each steps every run through a block of rounds, reading the same named random streams as the numpy
path (contexts, reward uniforms, tie-breaking uniforms: every one is drawn whether it is used or
not, so the streams advance exactly as on the numpy path), and updates the policy's own state
arrays in place. The numpy classes stay the readable reference. The arithmetic repeats theirs
operation for operation: LinUCB's matrix-vector products are the same ordered sums of elementwise
products (no BLAS on either path), the Sherman-Morrison update subtracts ``coef · (v_i v_j)`` from
every arm with ``coef = pulled / (1 + xᵀA⁻¹x)`` (an exact zero for the arms not pulled), and ties
are broken by :func:`~causalbandits_lib.core.policies.argmax_ties`'s rule with the same uniform, so
the two paths agree bit for bit; the tests and the registry's conformance check compare them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.kernels import argmax_ties_row, np_maximum, np_minimum

__all__ = ["LinUCBKernel", "ClippedUCBKernel"]


@njit(cache=True)
def _linucb_block(
    a_inv_t,
    b_t,
    features_t,
    ctx,
    alpha,
    clip,
    lower,
    upper,
    track_dominated,
    ties,
    use_ties,
    means,
    best,
    noise,
    reward_out,
    regret_out,
    dominated_out,
    dominated,
    last_v,
    last_vx,
    finite_features,
):
    """LinUCB against the contextual Bernoulli bandit, every run through one block of rounds.

    a_inv_t : (k, d, d, R), b_t : (k, d, R) the policy's state (runs last), updated in place
    features_t : (k, d, n_contexts); ctx : (R, B) context of every round
    clip : 0 none, 1 upper, 2 both; lower, upper : (R, n_contexts, k) (unused without bounds)
    ties : (R, B) tie-breaking uniforms (unused unless ``use_ties``)
    means : (n_contexts, k) arm means; best : (n_contexts,); noise : (R, B, k) reward uniforms
    dominated : (R,) bool, last_v : (k, d, R), last_vx : (k, R): what the last round leaves behind
    finite_features : whether every feature is finite (see the update below)
    """
    k, d = a_inv_t.shape[0], a_inv_t.shape[1]
    R, B = ctx.shape
    A = np.empty((k, d, d))
    bv = np.empty((k, d))
    v = np.empty((k, d))
    vx = np.empty(k)
    ucb = np.empty(k)
    for r in range(R):
        for a in range(k):
            for i in range(d):
                bv[a, i] = b_t[a, i, r]
                for j in range(d):
                    A[a, i, j] = a_inv_t[a, i, j, r]
        for s in range(B):
            c = ctx[r, s]
            # index: v = A⁻¹x, mean = vᵀb, vx = vᵀx (ordered sums, first term not added to 0)
            for a in range(k):
                for i in range(d):
                    acc = A[a, i, 0] * features_t[a, 0, c]
                    for j in range(1, d):
                        acc = acc + A[a, i, j] * features_t[a, j, c]
                    v[a, i] = acc
                mean = v[a, 0] * bv[a, 0]
                w = v[a, 0] * features_t[a, 0, c]
                for i in range(1, d):
                    mean = mean + v[a, i] * bv[a, i]
                    w = w + v[a, i] * features_t[a, i, c]
                vx[a] = w
                value = mean + alpha * math.sqrt(np_maximum(w, 0.0))
                if clip != 0:
                    value = np_minimum(value, upper[r, c, a])
                if clip == 2:
                    value = np_maximum(value, lower[r, c, a])
                ucb[a] = value
            arm = argmax_ties_row(ucb, k, ties[r, s], use_ties)
            if track_dominated:
                best_lower = lower[r, c, 0]
                for a in range(1, k):
                    best_lower = np_maximum(best_lower, lower[r, c, a])
                dom = upper[r, c, arm] < best_lower
                dominated[r] = dom
                dominated_out[r, s] = 1.0 if dom else 0.0
            else:
                dominated_out[r, s] = 1.0 if dominated[r] else 0.0
            mu = means[c, arm]
            reward = 1.0 if noise[r, s, arm] < mu else 0.0
            reward_out[r, s] = reward
            regret_out[r, s] = best[c] - mu
            if s == B - 1:
                for a in range(k):
                    last_vx[a, r] = vx[a]
                    for i in range(d):
                        last_v[a, i, r] = v[a, i]
            # Sherman-Morrison with weight 1 for the pulled arm and an exact 0 for the others. For an
            # arm not pulled the numpy path subtracts coef · (v_i v_j) = ±0 from A⁻¹ and adds
            # 0 · r · x = ±0 to b, which changes no bit (neither ever holds -0.0: they start at +0.0
            # or above and only ever have numbers subtracted or added), so it is skipped when the
            # products are sure to be finite; otherwise (NaN or huge values) it is repeated.
            for a in range(k):
                pulled = 1.0 if a == arm else 0.0
                coef = pulled / (1.0 + vx[a])
                gain = pulled * reward
                if a != arm and coef == 0.0 and finite_features:
                    small = True
                    for i in range(d):
                        if not abs(v[a, i]) <= 1e150:
                            small = False
                    if small:
                        continue
                for i in range(d):
                    for j in range(d):
                        A[a, i, j] = A[a, i, j] - coef * (v[a, i] * v[a, j])
                    bv[a, i] = bv[a, i] + gain * features_t[a, i, c]
        for a in range(k):
            for i in range(d):
                b_t[a, i, r] = bv[a, i]
                for j in range(d):
                    a_inv_t[a, i, j, r] = A[a, i, j]


class LinUCBKernel:
    """:class:`~.algorithms.LinUCB` against
    :class:`~causalbandits_lib.core.environments.ContextualBernoulliBandit`; writes the feedback
    ``reward`` and ``regret`` and the diagnostic ``dominated``."""

    outputs = {"reward": (np.float64, ()), "regret": (np.float64, ()), "dominated": (np.float64, ())}

    def __init__(self, policy, env):
        self.policy, self.env = policy, env
        self.means = np.ascontiguousarray(env.means, dtype=float)
        self.best = self.means.max(axis=1)
        self.clip = {"none": 0, "upper": 1, "both": 2}[policy.clip]
        self.track = policy.upper is not None and policy.lower is not None
        self.finite_features = bool(np.all(np.isfinite(policy.features_t)))
        n = len(policy.dominated)
        empty = np.zeros((n, policy.n_contexts, policy.n_arms))
        self.lower = np.ascontiguousarray(policy.lower) if policy.lower is not None else empty
        self.upper = np.ascontiguousarray(policy.upper) if policy.upper is not None else empty

    def run(self, t0: int, t1: int, out) -> None:
        env, p = self.env, self.policy
        R, B = len(p.dominated), t1 - t0
        ctx = np.searchsorted(env.context_cdf, env.context_noise.block(t0, t1), side="right").astype(np.int64)
        noise = np.ascontiguousarray(env.reward_noise.block(t0, t1))
        use_ties = p.ties is not None
        ties = np.ascontiguousarray(p.ties.block(t0, t1)) if use_ties else np.zeros((R, B))
        a_inv_t = p.a_inv_t if p.a_inv_t.flags.c_contiguous else np.ascontiguousarray(p.a_inv_t)
        b_t = p.b_t if p.b_t.flags.c_contiguous else np.ascontiguousarray(p.b_t)
        last_v = np.empty((p.n_arms, p.d, R))
        last_vx = np.empty((p.n_arms, R))
        _linucb_block(
            a_inv_t,
            b_t,
            p.features_t,
            ctx,
            p.alpha,
            self.clip,
            self.lower,
            self.upper,
            self.track,
            ties,
            use_ties,
            self.means,
            self.best,
            noise,
            out["reward"] if "reward" in out else np.empty((R, B)),
            out["regret"] if "regret" in out else np.empty((R, B)),
            out["dominated"] if "dominated" in out else np.empty((R, B)),
            p.dominated,
            last_v,
            last_vx,
            self.finite_features,
        )
        # what the numpy path leaves behind after round t1 - 1
        p.a_inv_t, p.b_t = a_inv_t, b_t
        p.last_x = p.features_t[:, :, ctx[:, -1]]
        p.last_v, p.last_vx = last_v, last_vx
        env.observe(t1 - 1)


@njit(cache=True)
def _clipped_ucb_block(
    counts, sums, two_log, bounded, lower, upper, ties, use_ties, means, best_mean, noise, reward_out, regret_out
):
    """UCB / UCB-PCB against Bernoulli arms, every run through one block of rounds.

    counts, sums : (R, k) the policy's CellStatistics, updated in place; two_log : ``2 log(1/δ)``
    lower, upper : (R, k) (unused unless ``bounded``); ties : (R, B); noise : (R, B, k)
    """
    R, k = counts.shape
    B = noise.shape[1]
    ucb = np.empty(k)
    for r in range(R):
        for s in range(B):
            for a in range(k):
                n = counts[r, a]
                if n > 0:
                    value = sums[r, a] / max(n, 1.0) + math.sqrt(two_log / n)
                else:
                    value = np.inf
                if bounded:
                    value = np_maximum(np_minimum(value, upper[r, a]), lower[r, a])
                ucb[a] = value
            arm = argmax_ties_row(ucb, k, ties[r, s], use_ties)
            mu = means[arm]
            reward = 1.0 if noise[r, s, arm] < mu else 0.0
            counts[r, arm] += 1.0
            sums[r, arm] += reward
            reward_out[r, s] = reward
            regret_out[r, s] = best_mean - mu


class ClippedUCBKernel:
    """:class:`~.algorithms.ClippedUCB` against
    :class:`~causalbandits_lib.core.environments.BernoulliBandit`; writes ``reward`` and
    ``regret``."""

    outputs = {"reward": (np.float64, ()), "regret": (np.float64, ())}

    def __init__(self, policy, env):
        self.policy, self.env = policy, env
        self.means = np.ascontiguousarray(env.means, dtype=float)
        n = policy.stats.n_runs
        self.bounded = policy.upper is not None
        empty = np.zeros((n, policy.n_arms))
        self.lower = np.ascontiguousarray(policy.lower) if self.bounded else empty
        self.upper = np.ascontiguousarray(policy.upper) if self.bounded else empty

    def run(self, t0: int, t1: int, out) -> None:
        env, p = self.env, self.policy
        R, B = p.stats.n_runs, t1 - t0
        use_ties = p.ties is not None
        ties = np.ascontiguousarray(p.ties.block(t0, t1)) if use_ties else np.zeros((R, B))
        noise = np.ascontiguousarray(env.reward_noise.block(t0, t1))
        _clipped_ucb_block(
            p.stats.counts,
            p.stats.sums,
            2.0 * p.log_inv_delta,
            self.bounded,
            self.lower,
            self.upper,
            ties,
            use_ties,
            self.means,
            env.best_mean,
            noise,
            out["reward"] if "reward" in out else np.empty((R, B)),
            out["regret"] if "regret" in out else np.empty((R, B)),
        )
