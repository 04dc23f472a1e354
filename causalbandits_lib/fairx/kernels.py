"""Compiled kernels (numba) for the multi-armed FairX algorithms and their baselines.

One kernel steps FairX-UCB (the paper's projected gradient or the exact box solver of
:func:`~.optimism.optimistic_box_exact`, ``f = exp(cμ)`` only), FairX-TS, FairX-EG, UCB, Thompson
sampling or ε-greedy, the FairX algorithms with the merit :class:`~.merit.ExpMerit`,
:class:`~.merit.AffineMerit` or :class:`~.merit.RampMerit` (a merit code each, evaluated in the
kernel; the last two are fairx/01's lower-bound merits), against :class:`~.model.MultiLabelBandit`,
:class:`~.model.ArmsBandit`, :class:`~.model.PriorArmsBandit` or the multi-armed replay of a click
log (:class:`~.yahoo.ReplayEnvironment` with ``mode="mab"``: the policy is over each event's pool
of candidates, the UCB family plays an unpulled candidate first, and only the events whose arm is
the logged one are learnt from, ``accepted``), or, for another chapter that runs these context-free
learners on a contextual problem, against the core's
:class:`~causalbandits_lib.core.environments.ContextualBernoulliBandit` (the policy ignores the
round's context, the click's mean depends on it), for every run and configuration, through a block of
rounds, reading the same named random streams as the numpy classes of
:mod:`.algorithms` and :mod:`.model` (which stay the readable reference). It writes the deployed
policy of every round, from which the fairness and reward regrets are computed exactly as on the
numpy path (:func:`.experiments.regret_values`); a conformance check compares the two paths for
every registered pair. A caller that steps the kernel inside its own can also have the played arms
(``run(..., arms=)``) and clip FairX-UCB's confidence box into per-run bounds (``kernel_for(...,
box_bounds=)``); neither is used by this chapter.

The arithmetic repeats the numpy path's operation for operation, including the order of its sums
(numpy reduces a row of eight or more numbers pairwise:
:func:`~causalbandits_lib.core.kernels.pairwise_sum` does the same), so the
two paths agree bit for bit on this machine; the tests allow 1e-9 relative, as for every kernel.
The exact box solver repeats its numpy steps too: ``expm1`` and ``exp`` (numpy's and numba's are
the same C library functions), ``np.argsort(..., kind="stable")`` (any stable sort gives the same
order: an insertion sort here), the sequential ``np.cumsum`` and ``np.argmax``; the tests compare
those paths bit for bit (``tests/fairx/test_kernels_exact_and_merits.py``). The linear
algorithms have their kernel in :mod:`.linear_kernels`. Not covered here (the numpy path runs):
other merit functions, the exact solver and the merits other than ``exp(cμ)`` over a replay's
pools, subclasses of these classes or environments.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.kernels import argmax_ties_row, np_maximum, pairwise_sum

__all__ = ["FairXKernel", "kernel_for", "softmax_sample_row", "sample_row"]

# algorithm codes
FAIRX_UCB, FAIRX_TS, FAIRX_EG, UCB, TS, EG = range(6)
# environment codes
MULTILABEL, BERNOULLI, GAUSSIAN, REPLAY, CONTEXTUAL = range(5)
# merit codes: f = exp(cμ), max(μ + b, floor) (or μ + b), 1 + L·max(μ, 0)
EXP_MERIT, AFFINE_MERIT, RAMP_MERIT = range(3)


@njit(cache=True)
def softmax_sample_row(y, u, pi, cdf):
    """:func:`~.merit.softmax_and_sample` for one row: ``y`` is overwritten; returns the arm."""
    K = y.shape[0]
    m = y[0]
    for a in range(1, K):
        if y[a] > m:
            m = y[a]
    acc = 0.0
    for a in range(K):
        y[a] = math.exp(y[a] - m)
        acc += y[a]
        cdf[a] = acc
    total = cdf[K - 1]
    threshold = u * total
    count = 0
    for a in range(K):
        if cdf[a] <= threshold:
            count += 1
    for a in range(K):
        pi[a] = y[a] / total
    return min(count, K - 1)


@njit(cache=True)
def sample_row(pi, u):
    """:func:`~.merit.sample_from_policy` for one row."""
    K = pi.shape[0]
    acc = 0.0
    count = 0
    for a in range(K):
        acc += pi[a]
        if acc <= u:
            count += 1
    return min(count, K - 1)


@njit(cache=True)
def _pgd_exp(c, lower, upper, mean, lr, steps, y, ylo, yhi, e, ey, g, prev):
    """:func:`~.optimism.pgd_exp_scores` for one row; the result is left in ``y``.

    The numpy version stops when no row of the whole array moved in a step; a row that did not
    move is a fixed point of the step, so stopping each row on its own gives the same numbers."""
    K = y.shape[0]
    shift = c * upper[0]
    for a in range(1, K):
        v = c * upper[a]
        if v > shift:
            shift = v
    for a in range(K):
        ylo[a] = c * lower[a] - shift
        yhi[a] = c * upper[a] - shift
        y[a] = c * mean[a] - shift
    gain = c * lr
    for _ in range(steps):
        for a in range(K):
            prev[a] = y[a]
            e[a] = math.exp(y[a])
            ey[a] = e[a] * y[a]
        s0 = pairwise_sum(e, 0, K)
        s1 = pairwise_sum(ey, 0, K)
        big_y = s1 / s0
        scale = gain / s0
        moved = False
        for a in range(K):
            step = y[a] - big_y
            step += 1.0
            step *= e[a]
            step *= scale
            v = y[a] + step
            v = min(v, yhi[a])
            v = max(v, ylo[a])
            y[a] = v
            if v != prev[a]:
                moved = True
        if not moved:
            break


@njit(cache=True, inline="always")
def _clip(x, lo, hi):
    """``np.clip`` of a float (no NaN here): ``min(max(x, lo), hi)`` as numpy orders it."""
    v = x if x > lo else lo
    return v if v < hi else hi


@njit(cache=True, inline="always")
def _sorts_before(a, b):
    """numpy's order of floats in a sort: ``a < b``, with NaN after every number."""
    return a < b or (b != b and a == a)


@njit(cache=True, error_model="numpy")
def _exact_exp(c, lower, upper, y, tau, order, fl, fu, low_num, low_den, values):
    """:func:`~.optimism.optimistic_box_exact` for ``f = exp(cμ)`` on one row, its steps in numpy's
    order: the thresholds :meth:`~.merit.ExpMerit.threshold`, ``np.argsort(-τ, kind="stable")``
    (an insertion sort: a stable sort has one result), the scaled merits of ``_merit_pair``, the
    prefix sums (``np.cumsum``: sequential), the nested vertices' values and ``np.argmax`` over
    them. Leaves ``y = c·μ_t``, the scores :func:`~.merit.softmax_and_sample` takes (the solver's
    ``V*`` is not needed). ``values``, ``low_num`` and ``low_den`` have ``K + 1`` entries."""
    K = y.shape[0]
    for a in range(K):
        width = upper[a] - lower[a]
        if width > 0:
            tau[a] = upper[a] + width / math.expm1(c * width)
        else:
            tau[a] = upper[a] + 1.0 / c
    for a in range(K):
        order[a] = a
    for i in range(1, K):
        x = order[i]
        key = -tau[x]
        k = i - 1
        while k >= 0 and _sorts_before(key, -tau[order[k]]):
            order[k + 1] = order[k]
            k -= 1
        order[k + 1] = x
    shift = upper[0]  # np.max (NaN propagates)
    for a in range(1, K):
        if upper[a] > shift or upper[a] != upper[a]:
            shift = upper[a]
    for a in range(K):
        fl[a] = math.exp(c * (lower[a] - shift))
        fu[a] = math.exp(c * (upper[a] - shift))
    # np.concatenate([0, np.cumsum(...)]) of the sorted lower ends: the rest down
    low_num[0] = 0.0
    low_den[0] = 0.0
    for i in range(K):
        a = order[i]
        term_num = fl[a] * lower[a]
        if i == 0:
            low_num[1] = term_num
            low_den[1] = fl[a]
        else:
            low_num[i + 1] = low_num[i] + term_num
            low_den[i + 1] = low_den[i] + fl[a]
    # the first j sorted arms up: the prefix sums of the upper ends, walked with j
    up_num = 0.0
    up_den = 0.0
    for j in range(K + 1):
        if j == 1:
            a = order[0]
            up_num = fu[a] * upper[a]
            up_den = fu[a]
        elif j > 1:
            a = order[j - 1]
            up_num = up_num + fu[a] * upper[a]
            up_den = up_den + fu[a]
        num = up_num + (low_num[K] - low_num[j])
        den = up_den + (low_den[K] - low_den[j])
        values[j] = num / den
    j = argmax_ties_row(values, K + 1, 0.0, False)
    for i in range(K):
        a = order[i]
        y[a] = c * (upper[a] if i < j else lower[a])


@njit(cache=True, error_model="numpy")
def _merit_policy(merit, mu, f, pi):
    """``merit.policy(μ)`` of one row for :class:`~.merit.AffineMerit` or
    :class:`~.merit.RampMerit` (``merit`` = (code, b, floor, has_floor, L)): the merits into ``f``,
    ``f / Σ f`` (numpy's pairwise row sum) into ``pi``. Returns the index of the first arm whose
    affine merit without a floor is not positive (where the numpy path raises), else -1."""
    kind, b, floor, has_floor, L = merit
    K = mu.shape[0]
    for a in range(K):
        if kind == AFFINE_MERIT:
            v = mu[a] + b
            if has_floor:
                v = np_maximum(v, floor)
            elif v <= 0:
                return a
        else:
            v = 1.0 + L * np_maximum(mu[a], 0.0)
        f[a] = v
    total = pairwise_sum(f, 0, K)
    for a in range(K):
        pi[a] = f[a] / total
    return -1


@njit(cache=True, error_model="numpy")
def _pgd_merit(merit, lower, upper, mean, lr, steps, mu, f, pi, prod, grad):
    """:func:`~.optimism.optimistic_box_pgd` for a merit other than ``exp(cμ)`` on one row
    (``μ ← clip(μ + lr·∇V(μ), l, u)`` from ``clip(μ̂, l, u)``, ``steps`` times, with
    :func:`~.optimism.fair_value_gradient`'s ``π(1 + (ln f)'(μ)(μ − V))``); the result is left in
    ``mu``. Returns -1, or the arm whose merit is not positive (see :func:`_merit_policy`)."""
    kind, b, floor, has_floor, L = merit
    K = mu.shape[0]
    for a in range(K):
        mu[a] = _clip(mean[a], lower[a], upper[a])
    for _ in range(steps):
        bad = _merit_policy(merit, mu, f, pi)
        if bad >= 0:
            return bad
        for a in range(K):
            prod[a] = pi[a] * mu[a]
        v = pairwise_sum(prod, 0, K)
        for a in range(K):
            # merit.log_derivative(μ): the slope over f(μ) (f as the policy computed it)
            if kind == AFFINE_MERIT:
                slope = 1.0 if (not has_floor or mu[a] + b > floor) else 0.0
            else:
                slope = L if mu[a] > 0 else 0.0
            grad[a] = pi[a] * (1.0 + (slope / f[a]) * (mu[a] - v))
        for a in range(K):
            mu[a] = _clip(mu[a] + lr * grad[a], lower[a], upper[a])
    return -1


@njit(cache=True)
def _mab_block(
    algo,
    env,
    counts,
    sums,
    post_mean,
    post_sd,
    prior_prec,
    lik_prec,
    w0,
    c,
    eps,
    lr,
    steps,
    t0,
    u_arm,
    posterior_noise,
    env_u,
    env_noise,
    labels,
    arm_means,
    env_sd,
    pools,
    shown,
    click,
    env_ctx,
    ctx_means,
    box,
    merit,
    exact,
    policy_out,
    reward_out,
    accepted_out,
    arms_out,
):
    """Every run and configuration through the rounds of one block (see the module docstring).

    counts, sums, post_mean, post_sd : (R, G, K) state, updated in place
    prior_prec, lik_prec, w0, c, eps : (G,) per-configuration hyper-parameters
    u_arm : (R, B) the policy's "arm" uniforms; posterior_noise : (R, B, K) (TS family)
    env_u : (R, B) example uniforms (multi-label); env_noise : (R, B, K) reward noise (arms)
    labels : (n, K) 0/1 labels (multi-label); arm_means : (R, K) exact means
    pools, shown, click : (B, P), (B,), (B,) replay only: the candidate arms of each logged event,
        the index (into the pool) of the logged arm and its click
    env_ctx, ctx_means : (R, B), (n_contexts, K) contextual only: the round's context and the
        Bernoulli means of every context
    box : (lower, upper (R, G, K), whether to clip): FairX-UCB's empirical means and the ends of
        its box are clipped into ``[lower, upper]`` when the flag is set
    merit : (code, b, floor, has_floor, L): the FairX policies' merit function (``EXP_MERIT``: ``c``
        per configuration; the affine and ramp merits read ``b``, ``floor``, ``has_floor``, ``L``)
    exact : FairX-UCB's optimistic step by the exact box solver (``exp(cμ)`` only), not by PGD
    policy_out : (R, B, G, P) deployed policies (P = K without replay); reward_out : (R, B, G)
    rewards; accepted_out : (R, B, G) replay only, whether the run's arm is the logged one;
    arms_out : (R, B, G) the arm played (an index into the pool in replay)

    Returns ``(r, s, g, a)`` of the first decision where an affine merit without a floor was not
    positive at arm ``a`` (the numpy path raises there; the block stops), else ``(-1, -1, -1, -1)``.
    """
    R, G, K = counts.shape
    B = u_arm.shape[1]
    n_examples = labels.shape[0]
    round_robin = algo == FAIRX_UCB or algo == UCB
    replay = env == REPLAY
    box_lo, box_hi, clip_box = box
    every_arm = np.arange(K)
    mu = np.empty(K)
    lower = np.empty(K)
    upper = np.empty(K)
    y = np.empty(K)
    ylo = np.empty(K)
    yhi = np.empty(K)
    e = np.empty(K)
    ey = np.empty(K)
    g_ = np.empty(K)
    prev = np.empty(K)
    cdf = np.empty(K)
    f = np.empty(K)
    pi_m = np.empty(K)
    tau = np.empty(K)
    order = np.empty(K, dtype=np.int64)
    values = np.empty(K + 1)
    low_num = np.empty(K + 1)
    low_den = np.empty(K + 1)
    merit_kind = merit[0]
    for r in range(R):
        for s in range(B):
            t = t0 + s
            u = u_arm[r, s]
            ids = pools[s] if replay else every_arm  # the candidate arms of the round
            P = ids.shape[0]
            for g in range(G):
                pi = policy_out[r, s, g]
                # the round-robin start: each arm once (per pool in replay: an unpulled candidate first)
                first = -1
                if round_robin:
                    if replay:
                        for p in range(P):
                            if counts[r, g, ids[p]] == 0:
                                first = p
                                break
                    elif t < K:
                        first = t
                if first >= 0:
                    arm = first
                    for p in range(P):
                        pi[p] = 0.0
                    pi[arm] = 1.0
                elif algo == FAIRX_UCB:
                    for p in range(P):
                        n = counts[r, g, ids[p]]
                        if replay:
                            n = max(n, 1.0)
                        mean = sums[r, g, ids[p]] / n
                        width = w0[g] / math.sqrt(n)
                        mu[p] = mean
                        lower[p] = mean - width
                        upper[p] = mean + width
                        if clip_box:  # np.clip: max with the lower end first, then min
                            lo, hi = box_lo[r, g, ids[p]], box_hi[r, g, ids[p]]
                            mu[p] = _clip(mu[p], lo, hi)
                            lower[p] = _clip(lower[p], lo, hi)
                            upper[p] = _clip(upper[p], lo, hi)
                    if exact:
                        _exact_exp(c[g], lower[:P], upper[:P], y[:P], tau, order, e, ey, low_num, low_den, values)
                        arm = softmax_sample_row(y[:P], u, pi, cdf)
                    elif merit_kind == EXP_MERIT:
                        _pgd_exp(c[g], lower[:P], upper[:P], mu[:P], lr, steps, y[:P], ylo, yhi, e, ey, g_, prev)
                        arm = softmax_sample_row(y[:P], u, pi, cdf)
                    else:  # the general step of optimistic_box_pgd, then the merit's policy
                        bad = _pgd_merit(merit, lower[:P], upper[:P], mu[:P], lr, steps, y[:P], f, pi_m, e, ey)
                        if bad < 0:
                            bad = _merit_policy(merit, y[:P], f, pi)
                        if bad >= 0:
                            return r, s, g, bad
                        arm = sample_row(pi, u)
                elif algo == UCB:
                    arm = 0
                    best = -np.inf
                    for p in range(P):
                        n = counts[r, g, ids[p]]
                        if replay:
                            n = max(n, 1.0)
                        v = sums[r, g, ids[p]] / n + w0[g] / math.sqrt(n)
                        if v > best:
                            best = v
                            arm = p
                    for p in range(P):
                        pi[p] = 0.0
                    pi[arm] = 1.0
                elif algo == FAIRX_TS:
                    if merit_kind == EXP_MERIT:
                        for p in range(P):
                            a = ids[p]
                            y[p] = c[g] * (post_mean[r, g, a] + post_sd[r, g, a] * posterior_noise[r, s, a])
                        arm = softmax_sample_row(y[:P], u, pi, cdf)
                    else:  # merit.policy of the posterior draw, then inverse-CDF sampling
                        for p in range(P):
                            a = ids[p]
                            y[p] = post_mean[r, g, a] + post_sd[r, g, a] * posterior_noise[r, s, a]
                        bad = _merit_policy(merit, y[:P], f, pi)
                        if bad >= 0:
                            return r, s, g, bad
                        arm = sample_row(pi, u)
                elif algo == TS:
                    arm = 0
                    best = -np.inf
                    for p in range(P):
                        a = ids[p]
                        v = post_mean[r, g, a] + post_sd[r, g, a] * posterior_noise[r, s, a]
                        if v > best:
                            best = v
                            arm = p
                    for p in range(P):
                        pi[p] = 0.0
                    pi[arm] = 1.0
                elif algo == FAIRX_EG and merit_kind != EXP_MERIT:
                    # the merit's policy of the empirical means, mixed with the uniform policy
                    for p in range(P):
                        a = ids[p]
                        y[p] = sums[r, g, a] / max(counts[r, g, a], 1.0)
                    bad = _merit_policy(merit, y[:P], f, pi_m)
                    if bad >= 0:
                        return r, s, g, bad
                    for p in range(P):
                        pi[p] = (1.0 - eps[g]) * pi_m[p] + eps[g] / P
                    arm = sample_row(pi, u)
                elif algo == FAIRX_EG:
                    # ExpMerit.policy of the empirical means, mixed with the uniform policy
                    m = -np.inf
                    for p in range(P):
                        a = ids[p]
                        y[p] = c[g] * (sums[r, g, a] / max(counts[r, g, a], 1.0))
                        if y[p] > m:
                            m = y[p]
                    for p in range(P):
                        y[p] = math.exp(y[p] - m)
                    if replay:
                        # numpy's arrays restricted to a pool (``values[..., pool]``) have the pool
                        # axis outermost in memory, so their row sums are sequential, not pairwise
                        total = y[0]
                        for p in range(1, P):
                            total += y[p]
                    else:
                        total = pairwise_sum(y, 0, P)
                    for p in range(P):
                        pi[p] = (1.0 - eps[g]) * (y[p] / total) + eps[g] / P
                    arm = sample_row(pi, u)
                else:  # EG
                    greedy = 0
                    best = -np.inf
                    for p in range(P):
                        a = ids[p]
                        v = sums[r, g, a] / max(counts[r, g, a], 1.0)
                        if v > best:
                            best = v
                            greedy = p
                    for p in range(P):
                        pi[p] = (1.0 - eps[g]) * (1.0 if p == greedy else 0.0) + eps[g] / P
                    arm = sample_row(pi, u)
                arms_out[r, s, g] = arm
                # the environment's reward for this run's arm
                if env == MULTILABEL:
                    example = int(env_u[r, s] * n_examples)
                    reward = labels[example, arm]
                elif env == BERNOULLI:
                    reward = 1.0 if env_noise[r, s, arm] < arm_means[r, arm] else 0.0
                elif env == CONTEXTUAL:
                    reward = 1.0 if env_noise[r, s, arm] < ctx_means[env_ctx[r, s], arm] else 0.0
                elif env == REPLAY:
                    accepted = arm == shown[s]
                    accepted_out[r, s, g] = accepted
                    reward = click[s] if accepted else 0.0
                    if not accepted:  # a rejected event teaches nothing
                        reward_out[r, s, g] = reward
                        continue
                else:
                    reward = arm_means[r, arm] + env_sd * env_noise[r, s, arm]
                reward_out[r, s, g] = reward
                a = ids[arm]
                counts[r, g, a] += 1.0
                sums[r, g, a] += reward
                if algo == FAIRX_TS or algo == TS:
                    prec = counts[r, g, a] * lik_prec[g] + prior_prec[g]
                    post_mean[r, g, a] = sums[r, g, a] * lik_prec[g] / prec
                    post_sd[r, g, a] = 1.0 / math.sqrt(prec)
    return -1, -1, -1, -1


def _merit_code(merit):
    """The kernel's code of a merit function (exact type), or None when it has none."""
    from .merit import AffineMerit, ExpMerit, RampMerit

    return {ExpMerit: EXP_MERIT, AffineMerit: AFFINE_MERIT, RampMerit: RAMP_MERIT}.get(type(merit))


def _merit_args(merit):
    """``(code, b, floor, has_floor, L)`` of :func:`_mab_block` (the exponential merit's ``c`` goes per
    configuration; a policy without a merit gets the exponential code, unused)."""
    code = EXP_MERIT if merit is None else _merit_code(merit)
    b = float(getattr(merit, "b", 0.0))
    floor = getattr(merit, "floor", None)
    L = float(getattr(merit, "L", 0.0))
    return (code, b, 0.0 if floor is None else float(floor), floor is not None, L)


class FairXKernel:
    """The compiled fast path of one multi-armed FairX policy against one environment."""

    def __init__(self, policy, env, algo: int, env_kind: int, box_bounds=None):
        self.policy, self.env, self.algo, self.env_kind = policy, env, algo, env_kind
        R, G, K = policy.counts.shape
        P = env.n_arms if env_kind == REPLAY else K  # the candidates of a round (the pool in replay)
        self.outputs = {
            "policy": (np.float64, (G, P)),
            "reward": (np.float64, (G,)),
            "arm_means": (np.float64, (P,)),
        }
        if env_kind == REPLAY:
            self.outputs["accepted"] = (np.bool_, (G,))
        self.G, self.K, self.P = G, K, P

        def per_config(values, default):
            arr = np.atleast_1d(np.asarray(default if values is None else values, dtype=float))
            return np.ascontiguousarray(np.broadcast_to(arr.reshape(-1), (G,)))

        merit = getattr(policy, "merit", None)
        self.c = per_config(getattr(merit, "c", None), 1.0)
        self.merit = _merit_args(merit)
        self.exact = algo == FAIRX_UCB and policy.solver == "exact"
        self.w0 = per_config(getattr(policy, "w0", None), 1.0)
        self.eps = per_config(getattr(policy, "epsilon", None), 0.0)
        prior = getattr(policy, "prior_prec", None)
        lik = getattr(policy, "lik_prec", None)
        self.prior_prec = per_config(None if prior is None else prior[:, 0], 1.0)
        self.lik_prec = per_config(None if lik is None else lik[:, 0], 1.0)
        self.lr = float(getattr(policy, "lr", 0.0))
        self.steps = int(getattr(policy, "steps", 0))
        if env_kind == MULTILABEL:
            self.labels = np.ascontiguousarray(env.labels)
        else:
            self.labels = np.zeros((1, K))
        if env_kind in (REPLAY, CONTEXTUAL):
            self.arm_means = np.zeros((1, 1))
        else:
            self.arm_means = np.ascontiguousarray(np.broadcast_to(env.means, (R, K)))
        if env_kind == CONTEXTUAL:
            self.ctx_means = np.ascontiguousarray(env.means, dtype=float)
        else:
            self.ctx_means = np.zeros((1, 1))
        if box_bounds is None:
            never = np.zeros((1, 1, 1))
            self.box = (never, never, False)
        else:
            lo, hi = (np.array(np.broadcast_to(b, (R, G, K)), dtype=float) for b in box_bounds)  # own copies
            self.box = (lo, hi, True)
        self.env_sd = float(getattr(env, "sd", 1.0))
        self.post_mean = getattr(policy, "post_mean", None)
        self.post_sd = getattr(policy, "post_sd", None)
        if self.post_mean is None:
            self.post_mean = self.post_sd = np.zeros((1, 1, 1))

    def run(self, t0: int, t1: int, out, arms=None) -> None:
        """Step every run through rounds ``t0 .. t1-1`` (the runner's protocol); ``arms``, an int
        array ``(R, t1 - t0, G)`` if given, receives the arm played in every round (an index
        into the round's pool in replay), for a caller that steps this kernel inside its own."""
        policy, env = self.policy, self.env
        R, B = policy.counts.shape[0], t1 - t0
        u_arm = np.ascontiguousarray(policy.arm_uniforms.block(t0, t1))
        posterior = (
            np.ascontiguousarray(policy.posterior_noise.block(t0, t1))
            if self.algo in (FAIRX_TS, TS)
            else np.zeros((1, 1, 1))
        )
        env_u, env_noise = np.zeros((1, 1)), np.zeros((1, 1, 1))
        pools, shown, click = np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1)
        env_ctx = np.zeros((1, 1), dtype=np.int64)
        if self.env_kind == CONTEXTUAL:
            env_ctx = np.searchsorted(env.context_cdf, env.context_noise.block(t0, t1), side="right")
            env_ctx = np.ascontiguousarray(env_ctx, dtype=np.int64)
        if self.env_kind == MULTILABEL:
            env_u = np.ascontiguousarray(env.example_uniforms.block(t0, t1))
        elif self.env_kind == REPLAY:
            e0, e1 = env.start + t0, env.start + t1
            if e1 > env.stop:
                raise IndexError(f"round {t1 - 1} is past the end of the replayed events ({env.n_rounds})")
            log = env.log
            pools = np.ascontiguousarray(log.pool[e0:e1], dtype=np.int64)
            shown = np.ascontiguousarray(log.shown[e0:e1], dtype=np.int64)
            click = np.ascontiguousarray(log.click[e0:e1], dtype=float)
        else:
            env_noise = np.ascontiguousarray(env.reward_noise.block(t0, t1))
        policy_out = out["policy"] if "policy" in out else np.empty((R, B, self.G, self.P))
        reward_out = out["reward"] if "reward" in out else np.empty((R, B, self.G))
        accepted_out = out["accepted"] if "accepted" in out else np.empty((R, B, self.G), dtype=np.bool_)
        arms_out = np.empty((R, B, self.G), dtype=np.int64) if arms is None else arms
        failed = _mab_block(
            self.algo,
            self.env_kind,
            policy.counts,
            policy.sums,
            self.post_mean,
            self.post_sd,
            self.prior_prec,
            self.lik_prec,
            self.w0,
            self.c,
            self.eps,
            self.lr,
            self.steps,
            t0,
            u_arm,
            posterior,
            env_u,
            env_noise,
            self.labels,
            self.arm_means,
            self.env_sd,
            pools,
            shown,
            click,
            env_ctx,
            self.ctx_means,
            self.box,
            self.merit,
            self.exact,
            policy_out,
            reward_out,
            accepted_out,
            arms_out,
        )
        if failed[0] >= 0:  # where the numpy path's AffineMerit raises
            r, s, g, a = failed
            merit = self.policy.merit
            raise ValueError(
                f"AffineMerit(b={merit.b}) is not positive at arm {a} in round {t0 + s} of run {r} (configuration "
                f"{g}); merits must be positive"
            )
        if self.env_kind == REPLAY:
            means = env.ctr[pools]  # (B, P): the click rates of each event's pool, as observe() has them
            if "arm_means" in out:
                out["arm_means"][:] = means[None]
            env._e = env.start + t1 - 1  # what observe() leaves behind
            env._means = np.broadcast_to(means[-1], (R, self.P))
        elif self.env_kind == CONTEXTUAL:
            if "arm_means" in out:
                out["arm_means"][:] = self.ctx_means[env_ctx]
            env._context = env_ctx[:, -1].copy()  # what observe() leaves behind
        elif "arm_means" in out:
            out["arm_means"][:] = self.arm_means[:, None, :]
        policy.policy = policy_out[:, -1].copy()  # what select() leaves behind


def kernel_for(policy, env, algo: int, *, box_bounds=None):
    """The kernel of ``policy`` (algorithm code ``algo``) against ``env``, or None when the pair
    has none (another environment, a subclass, another merit function or solver).

    ``box_bounds`` (FairX-UCB only): ``(lower, upper)``, arrays broadcastable to the policy's
    ``(R, G, K)``; the kernel then clips the empirical means and both ends of the confidence box
    into them (``np.clip``) before the optimistic step, as a subclass of FairX-UCB that clips its
    box does (the caller vouches that the policy is otherwise FairX-UCB's).

    Against the core's :class:`~causalbandits_lib.core.environments.ContextualBernoulliBandit`
    (exact type) the arms pay ``Bernoulli(means[c, a])`` for the round's context ``c``, which the
    policy does not see: a context-free learner on a contextual problem.
    """
    from ..core.environments import ContextualBernoulliBandit
    from .model import ArmsBandit, MultiLabelBandit, PriorArmsBandit
    from .yahoo import ReplayEnvironment

    merit = None
    if algo in (FAIRX_UCB, FAIRX_TS, FAIRX_EG):
        merit = _merit_code(getattr(policy, "merit", None))
        if merit is None:
            return None
    if algo == FAIRX_UCB and policy.solver not in ("pgd", "exact"):
        return None
    if algo == FAIRX_UCB and policy.solver == "exact" and merit != EXP_MERIT:
        return None  # the numpy path's solver refuses these merits
    kind = type(env)
    if kind is MultiLabelBandit:
        env_kind = MULTILABEL
    elif kind is ArmsBandit:
        env_kind = BERNOULLI if env.noise == "bernoulli" else GAUSSIAN
    elif kind is PriorArmsBandit:
        env_kind = GAUSSIAN
    elif kind is ReplayEnvironment and env.mode == "mab" and int(env.log.pool.max()) < policy.n_arms:
        env_kind = REPLAY
    elif kind is ContextualBernoulliBandit and env.n_arms == policy.n_arms:
        env_kind = CONTEXTUAL
    else:
        return None
    if box_bounds is not None and algo != FAIRX_UCB:
        return None
    if env_kind == REPLAY and (merit not in (None, EXP_MERIT) or (algo == FAIRX_UCB and policy.solver == "exact")):
        return None  # over a replay's pools: only the exponential merit and FairX-UCB's gradient steps
    return FairXKernel(policy, env, algo, env_kind, box_bounds)
