"""Compiled kernels (numba) for the linear FairX algorithms and their baselines.

One kernel steps FairX-LinUCB (the projected-gradient ellipsoid step of
:func:`~.optimism.optimistic_ellipsoid_pgd`), FairX-LinTS, FairX-LinEG (all three with
``f = exp(cμ)``), LinUCB, LinTS or linear ε-greedy, for every run and configuration, through a
block of rounds, against

- :class:`~.model.ContextTableBandit` (label rewards or ``θ·x`` plus Gaussian noise),
- :class:`~.model.GaussianContextBandit` (fresh unit-norm contexts, fixed or per-run ``θ``),
- :class:`~.yahoo.ReplayEnvironment` in ``mode="linear"`` (replay of a uniformly logged click log:
  a run learns only in the events where its arm is the logged one, and the kernel writes
  ``accepted`` as the numpy path's feedback does).

It reads the same named random streams as the numpy classes of :mod:`.algorithms`,
:mod:`.model` and :mod:`.yahoo` (which stay the readable reference), updates the policy's
:class:`~.algorithms.RidgeState` (mean and square-root inverse Gram matrix) in place, and writes
the deployed policy, the reward and the exact arm means of every round, from which the regrets
are computed as on the numpy path.

Arithmetic: every element-wise step and every row sum is repeated in numpy's order (pairwise sums
of contiguous rows through :func:`~causalbandits_lib.core.kernels.pairwise_sum`, sequential sums
along a non-contiguous axis), so the ridge state, the rewards and the decisions are the numpy
path's bit for bit. One product is BLAS's: FairX-LinUCB and LinUCB multiply the contexts by the
square root ``S`` with ``@``, which numpy hands to BLAS (dgemm), whose order of summation and use
of fused multiply-adds are its own. The kernel calls BLAS too (``np.dot`` in numba goes through
SciPy's BLAS), which on this machine gives numpy's numbers bit for bit (tested at the notebooks'
sizes); where the two libraries differ the deployed policies agree to rounding, and in
ill-conditioned configurations (ridge 1e-6, β = 100, c = 10 on the replay) tiny probabilities may
then differ by more than the check's 1e-9 relative. A sequential sum instead of BLAS did exactly
that. The replay environment's ground truth ``θ_LS·x`` is a BLAS product as well: it is computed
with numpy for the whole block at once, which gives the numbers of the environment's per-event
product on this machine (tested); it enters the regrets only, never a decision.

Not covered (the numpy path runs): merit functions other than :class:`~.merit.ExpMerit`,
subclasses of these classes or environments. The multi-armed replay (``mode="mab"``) has its kernel
in :mod:`.kernels`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.kernels import np_maximum, pairwise_sum
from .kernels import sample_row, softmax_sample_row

__all__ = [
    "FAIRX_LINUCB",
    "LINUCB",
    "FAIRX_LINTS",
    "LINTS",
    "FAIRX_LINEG",
    "LINEG",
    "LinearKernel",
    "linear_kernel_for",
]

# algorithm codes
FAIRX_LINUCB, LINUCB, FAIRX_LINTS, LINTS, FAIRX_LINEG, LINEG = range(6)
# environment codes
TABLE_LABELS, TABLE_NOISE, GAUSSIAN_CONTEXTS, REPLAY = range(4)


@njit(cache=True, inline="always")
def _row_dot(x, y, n, tmp):
    """``(x * y).sum(axis=-1)`` for one row of ``n`` numbers (numpy's pairwise order)."""
    for j in range(n):
        tmp[j] = x[j] * y[j]
    return pairwise_sum(tmp, 0, n)


@njit(cache=True)
def _ridge_update(S, mean, x, reward, noise_var, v, Sv, tmp):
    """:meth:`~.algorithms.RidgeState.update` for one run and configuration (Potter's square-root
    form of the Sherman-Morrison update); ``S`` (d, d) and ``mean`` (d,) change in place."""
    d = mean.shape[0]
    # v = Sᵀx: a sum along the rows of S, sequential in i as numpy's (the loop over j innermost)
    for j in range(d):
        v[j] = S[0, j] * x[0]
    for i in range(1, d):
        for j in range(d):
            v[j] += S[i, j] * x[i]
    s = _row_dot(v, v, d, tmp)
    for i in range(d):
        Sv[i] = _row_dot(S[i], v, d, tmp)
    denom = noise_var + s
    alpha = 1.0 / (denom * (1.0 + math.sqrt(noise_var / denom)))
    resid = reward - _row_dot(x, mean, d, tmp)
    step = resid / denom
    for i in range(d):
        a = alpha * Sv[i]
        for j in range(d):
            S[i, j] -= a * v[j]
    for i in range(d):
        mean[i] += Sv[i] * step


@njit(cache=True)
def _linear_block(
    algo,
    env_kind,
    mean,
    root,
    noise_var,
    sqrt_beta,
    c,
    eps,
    lr,
    steps,
    u_arm,
    xi,
    ctx_table,
    ctx_index,
    means_table,
    thetas,
    labels,
    env_noise,
    noise_sd,
    shown,
    click,
    policy_out,
    reward_out,
    means_out,
    accepted_out,
):
    """Every run and configuration through the rounds of one block (see the module docstring).

    mean (R, G, d), root (R, G, d, d) : the policy's ridge state, updated in place
    noise_var, sqrt_beta, c, eps : (G,) per-configuration values
    u_arm (R, B) : the policy's "arm" uniforms; xi (R, B, d) : its posterior normals (TS family)
    ctx_table (n, K, d), ctx_index (R, B) : the contexts of run r in round s are
        ``ctx_table[ctx_index[r, s]]`` (raw normals to be scaled to unit norm for
        GAUSSIAN_CONTEXTS); means_table (n, K) the exact means (not for GAUSSIAN_CONTEXTS,
        whose means are ``θ_r·x`` with ``thetas`` (R, d))
    labels (n, K) : label rewards (TABLE_LABELS); env_noise (R, B) : reward noise (TABLE_NOISE,
        GAUSSIAN_CONTEXTS); shown, click (B,) : the logged arm and click (REPLAY)
    policy_out (R, B, G, K), reward_out (R, B, G), means_out (R, B, K), accepted_out (R, B, G)
    """
    R, G, d = mean.shape
    B = u_arm.shape[1]
    K = ctx_table.shape[1]
    X = np.empty((K, d))
    m = np.empty(K)
    z0 = np.empty(K)
    z = np.empty(K)
    y = np.empty(K)
    g_ = np.empty(K)
    cdf = np.empty(K)
    tmp = np.empty(max(K, d))
    Y = np.empty((K, d))
    u = np.empty(d)
    ug = np.empty(d)
    theta = np.empty(d)
    v = np.empty(d)
    Sv = np.empty(d)
    for r in range(R):
        for s in range(B):
            # the environment's round: contexts X (K, d) and exact means m (K,)
            idx = ctx_index[r, s]
            raw = ctx_table[idx]
            if env_kind == GAUSSIAN_CONTEXTS:
                for a in range(K):
                    norm = math.sqrt(_row_dot(raw[a], raw[a], d, tmp))
                    for j in range(d):
                        X[a, j] = raw[a, j] / norm
                    m[a] = _row_dot(X[a], thetas[r], d, tmp)
            else:
                for a in range(K):
                    for j in range(d):
                        X[a, j] = raw[a, j]
                    m[a] = means_table[idx, a]
            for a in range(K):
                means_out[r, s, a] = m[a]
            u0 = u_arm[r, s]
            for g in range(G):
                S = root[r, g]
                mu = mean[r, g]
                pi = policy_out[r, s, g]
                if algo == FAIRX_LINTS or algo == LINTS:
                    for i in range(d):  # posterior draw μ̂ + S ξ
                        theta[i] = mu[i] + _row_dot(S[i], xi[r, s], d, tmp)
                    for a in range(K):
                        z[a] = _row_dot(X[a], theta, d, tmp)
                else:
                    for a in range(K):
                        z[a] = _row_dot(X[a], mu, d, tmp)
                if algo == FAIRX_LINUCB or algo == LINUCB:
                    np.dot(X, S, Y)  # BLAS, as numpy's ``@`` (the same numbers, see the module docstring)
                if algo == FAIRX_LINUCB:
                    for a in range(K):
                        z0[a] = z[a]
                        for j in range(d):
                            Y[a, j] = sqrt_beta[g] * Y[a, j]
                    for j in range(d):
                        u[j] = 0.0
                    for _ in range(steps):
                        # π = softmax(c z), V = Σ π z, gradient g = π (1 + c (z - V))
                        top = c[g] * z[0]
                        for a in range(K):
                            y[a] = c[g] * z[a]
                            if y[a] > top:
                                top = y[a]
                        for a in range(K):
                            y[a] = math.exp(y[a] - top)
                        total = pairwise_sum(y, 0, K)
                        for a in range(K):
                            y[a] = y[a] / total
                            tmp[a] = y[a] * z[a]
                        value = pairwise_sum(tmp, 0, K)
                        for a in range(K):
                            g_[a] = y[a] * (1.0 + c[g] * (z[a] - value))
                        # u ← u + lr Yᵀg (a sum over the arms, sequential as numpy's), then back
                        # into the unit ball
                        for j in range(d):
                            ug[j] = Y[0, j] * g_[0]
                        for a in range(1, K):
                            for j in range(d):
                                ug[j] += Y[a, j] * g_[a]
                        for j in range(d):
                            u[j] = u[j] + lr * ug[j]
                        shrink = np_maximum(1.0, math.sqrt(_row_dot(u, u, d, tmp)))
                        for j in range(d):
                            u[j] /= shrink
                        for a in range(K):
                            z[a] = z0[a] + _row_dot(Y[a], u, d, tmp)
                    for a in range(K):
                        y[a] = c[g] * z[a]
                    arm = softmax_sample_row(y, u0, pi, cdf)
                elif algo == FAIRX_LINTS:
                    for a in range(K):
                        y[a] = c[g] * z[a]
                    arm = softmax_sample_row(y, u0, pi, cdf)
                elif algo == FAIRX_LINEG:
                    top = c[g] * z[0]
                    for a in range(K):
                        y[a] = c[g] * z[a]
                        if y[a] > top:
                            top = y[a]
                    for a in range(K):
                        y[a] = math.exp(y[a] - top)
                    total = pairwise_sum(y, 0, K)
                    for a in range(K):
                        pi[a] = (1.0 - eps[g]) * (y[a] / total) + eps[g] / K
                    arm = sample_row(pi, u0)
                else:
                    if algo == LINUCB:
                        for a in range(K):
                            z[a] = z[a] + sqrt_beta[g] * math.sqrt(_row_dot(Y[a], Y[a], d, tmp))
                    arm = 0  # np.argmax: the first maximum (or the first NaN)
                    for a in range(1, K):
                        if z[arm] != z[arm]:
                            break
                        if z[a] > z[arm] or z[a] != z[a]:
                            arm = a
                    if algo == LINEG:
                        for a in range(K):
                            pi[a] = (1.0 - eps[g]) * (1.0 if a == arm else 0.0) + eps[g] / K
                        arm = sample_row(pi, u0)
                    else:
                        for a in range(K):
                            pi[a] = 0.0
                        pi[arm] = 1.0
                # the environment's reward for this run's arm, and the learner's update
                learn = True
                if env_kind == TABLE_LABELS:
                    reward = labels[idx, arm]
                elif env_kind == REPLAY:
                    learn = arm == shown[s]
                    accepted_out[r, s, g] = learn
                    reward = click[s] if learn else 0.0
                else:
                    reward = m[arm] + noise_sd * env_noise[r, s]
                reward_out[r, s, g] = reward
                if learn:
                    _ridge_update(S, mu, X[arm], reward, noise_var[g], v, Sv, tmp)


class LinearKernel:
    """The compiled fast path of one linear FairX policy against one environment."""

    def __init__(self, policy, env, algo: int, env_kind: int):
        self.policy, self.env, self.algo, self.env_kind = policy, env, algo, env_kind
        G, K, d = policy.n_configs, policy.n_arms, policy.dim
        self.outputs = {
            "policy": (np.float64, (G, K)),
            "reward": (np.float64, (G,)),
            "arm_means": (np.float64, (K,)),
        }
        if env_kind == REPLAY:
            self.outputs["accepted"] = (np.bool_, (G,))
        self.G, self.K, self.d = G, K, d

        def per_config(values, default):
            arr = np.atleast_1d(np.asarray(default if values is None else values, dtype=float))
            return np.ascontiguousarray(np.broadcast_to(arr.reshape(-1), (G,)))

        merit = getattr(policy, "merit", None)
        self.c = per_config(None if merit is None else merit.c, 1.0)
        self.sqrt_beta = np.sqrt(per_config(getattr(policy, "beta", None), 1.0))
        self.eps = per_config(getattr(policy, "epsilon", None), 0.0)
        self.noise_var = per_config(policy.state.noise_var, 1.0)
        self.lr = float(getattr(policy, "lr", 0.0))
        self.steps = int(getattr(policy, "steps", 0))
        self._replay_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _environment_block(self, t0: int, t1: int):
        """The environment's inputs of rounds ``t0 .. t1-1`` (see :func:`_linear_block`)."""
        env, R, B = self.env, self.policy.n_runs, t1 - t0
        none2 = np.zeros((1, 1))
        if self.env_kind in (TABLE_LABELS, TABLE_NOISE):
            example = (env.example_uniforms.block(t0, t1) * env.n_examples).astype(np.int64)
            env._example = example[:, -1].copy()  # what observe() leaves behind
            labels = env.labels if self.env_kind == TABLE_LABELS else none2
            noise = env.reward_noise.block(t0, t1) if self.env_kind == TABLE_NOISE else none2
            return dict(
                ctx_table=env.contexts,
                ctx_index=example,
                means_table=env.true_means,
                thetas=none2,
                labels=labels,
                env_noise=noise,
                shown=np.zeros(1, dtype=np.int64),
                click=np.zeros(1),
            )
        if self.env_kind == GAUSSIAN_CONTEXTS:
            raw = env.context_noise.block(t0, t1)
            x = raw[:, -1]  # what observe() leaves behind, computed as it does
            env._contexts = x / np.sqrt((x * x).sum(axis=-1, keepdims=True))
            env._means = (env._contexts * env.thetas[:, None, :]).sum(axis=-1)
            return dict(
                ctx_table=np.ascontiguousarray(raw).reshape((R * B,) + raw.shape[2:]),
                ctx_index=np.arange(R * B, dtype=np.int64).reshape(R, B),
                means_table=none2,
                thetas=np.ascontiguousarray(env.thetas),
                labels=none2,
                env_noise=env.reward_noise.block(t0, t1),
                shown=np.zeros(1, dtype=np.int64),
                click=np.zeros(1),
            )
        # replay: the events of the block, the contexts and ground truth exactly as observe() has them
        e0, e1 = env.start + t0, env.start + t1
        if e1 > env.stop:
            raise IndexError(f"round {t1 - 1} is past the end of the replayed events ({env.n_rounds})")
        ctx = env.log.contexts(slice(e0, e1))
        means = ctx @ env.theta  # observe() multiplies one event at a time (the same numbers here)
        env._e = e1 - 1
        env._means = np.broadcast_to(means[-1], (R, means.shape[1]))
        return dict(
            ctx_table=ctx,
            ctx_index=np.ascontiguousarray(np.broadcast_to(np.arange(B, dtype=np.int64), (R, B))),
            means_table=means,
            thetas=none2,
            labels=none2,
            env_noise=none2,
            shown=np.ascontiguousarray(env.log.shown[e0:e1], dtype=np.int64),
            click=np.ascontiguousarray(env.log.click[e0:e1], dtype=float),
        )

    def run(self, t0: int, t1: int, out) -> None:
        policy = self.policy
        R, B, G, K = policy.n_runs, t1 - t0, self.G, self.K
        u_arm = np.ascontiguousarray(policy.arm_uniforms.block(t0, t1))
        xi = (
            np.ascontiguousarray(policy.posterior_noise.block(t0, t1))
            if self.algo in (FAIRX_LINTS, LINTS)
            else np.zeros((1, 1, 1))
        )
        env_in = {k: np.ascontiguousarray(v) for k, v in self._environment_block(t0, t1).items()}
        policy_out = out["policy"] if "policy" in out else np.empty((R, B, G, K))
        reward_out = out["reward"] if "reward" in out else np.empty((R, B, G))
        means_out = out["arm_means"] if "arm_means" in out else np.empty((R, B, K))
        accepted_out = out["accepted"] if "accepted" in out else np.empty((R, B, G), dtype=np.bool_)
        _linear_block(
            self.algo,
            self.env_kind,
            policy.state.mean,
            policy.state.root,
            self.noise_var,
            self.sqrt_beta,
            self.c,
            self.eps,
            self.lr,
            self.steps,
            u_arm,
            xi,
            env_in["ctx_table"],
            env_in["ctx_index"],
            env_in["means_table"],
            env_in["thetas"],
            env_in["labels"],
            env_in["env_noise"],
            float(getattr(self.env, "noise_sd", 0.0)),
            env_in["shown"],
            env_in["click"],
            policy_out,
            reward_out,
            means_out,
            accepted_out,
        )
        policy.policy = policy_out[:, -1].copy()  # what select() leaves behind


def linear_kernel_for(policy, env, algo: int):
    """The kernel of the linear ``policy`` (algorithm code ``algo``) against ``env``, or None when
    the pair has none (another environment or mode, a subclass, another merit function)."""
    from .merit import ExpMerit
    from .model import ContextTableBandit, GaussianContextBandit
    from .yahoo import ReplayEnvironment

    if algo in (FAIRX_LINUCB, FAIRX_LINTS, FAIRX_LINEG) and type(getattr(policy, "merit", None)) is not ExpMerit:
        return None
    kind = type(env)
    if kind is ContextTableBandit:
        env_kind = TABLE_LABELS if env.labels is not None else TABLE_NOISE
    elif kind is GaussianContextBandit:
        env_kind = GAUSSIAN_CONTEXTS
    elif kind is ReplayEnvironment and env.mode == "linear":
        env_kind = REPLAY
    else:
        return None
    if env.dim != policy.dim:
        return None
    n_arms = env.n_arms
    if n_arms != policy.n_arms:
        return None
    return LinearKernel(policy, env, algo, env_kind)
