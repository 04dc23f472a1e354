"""Compiled kernels (numba) for the core's bandits, and the helpers every kernel shares.

A kernel is the compiled fast path of one (environment, policy) pair
(:class:`~causalbandits_lib.core.protocols.Kernel`): it steps every run through a block of rounds
in one call, reading the runs' named random streams through
:meth:`~causalbandits_lib.core.streams.RoundNoise.block` and updating the policy's own state arrays
in place. The numpy implementations in :mod:`~causalbandits_lib.core.policies` and
:mod:`~causalbandits_lib.core.environments` stay the readable reference: each kernel repeats their
arithmetic operation for operation, and the conformance check of every registered pair compares
the two (identical decisions, values within 1e-9 relative; in practice bit for bit).

Kernels are compiled on first use and cached on disk (``cache=True``), so a warm run does not
compile again; nothing needs the network.

A chapter whose kernel module must know the classes it accelerates (to check exact types) does not
let those classes import it back: the kernel module registers a factory for them
(:func:`register_kernel`) when it is imported (the chapter's package imports it), and the classes'
``compiled(env)`` looks the factory up (:func:`registered_kernel`). So no two modules of the
library import each other (``tests/test_layers.py``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numba import njit

__all__ = [
    "accumulate_block",
    "block_sum",
    "pairwise_sum",
    "argmax_ties_row",
    "np_minimum",
    "np_maximum",
    "UCB1Kernel",
    "register_kernel",
    "registered_kernel",
]


# ---------------------------------------------------------------------------- which kernel a class has
#: class -> factory(policy, env) returning a kernel or None (see :func:`register_kernel`)
_FACTORIES: dict[type, Callable[[Any, Any], Any]] = {}


def register_kernel(cls: type, factory: Callable[[Any, Any], Any]) -> None:
    """Make ``factory(policy, env)`` (a kernel, or None when it does not cover the pair) the
    compiled fast path of ``cls`` and of its subclasses that have no factory of their own.

    A chapter's kernel module calls it, when imported, for the classes it accelerates; registering
    another factory for a class that has one is an error (two kernel modules claiming a class).
    """
    known = _FACTORIES.get(cls)
    if known is not None and known is not factory:
        raise ValueError(f"{cls.__qualname__} already has a compiled kernel factory ({known.__qualname__})")
    _FACTORIES[cls] = factory


def registered_kernel(policy, env):
    """The kernel that the factory registered for the nearest class of ``policy`` (along its method
    resolution order) builds against ``env``, or None when no class of it has a factory."""
    for cls in type(policy).__mro__:
        factory = _FACTORIES.get(cls)
        if factory is not None:
            return factory(policy, env)
    return None


# ---------------------------------------------------------------------------- numpy's arithmetic
# Kernels repeat the numpy path's arithmetic operation for operation; these are the pieces whose
# order numpy fixes: a row sum (pairwise, not sequential) and argmax with ties.


@njit(cache=True)
def block_sum(x, lo, n):
    """numpy's pairwise sum of ``x[lo : lo + n]`` for ``n <= 128`` (one leaf of its recursion)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += x[i]
        return res
    r0, r1, r2, r3 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3]
    r4, r5, r6, r7 = x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
    i = 8
    stop = n - (n % 8)
    while i < stop:
        r0 += x[lo + i]
        r1 += x[lo + i + 1]
        r2 += x[lo + i + 2]
        r3 += x[lo + i + 3]
        r4 += x[lo + i + 4]
        r5 += x[lo + i + 5]
        r6 += x[lo + i + 6]
        r7 += x[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(x, lo, n):
    """``np.sum`` of the contiguous numbers ``x[lo : lo + n]`` in numpy's order: sequential from 0
    below 8 numbers, eight interleaved partial sums combined pairwise up to 128, and above that
    the sum of the two halves (cut at a multiple of 8), each summed the same way.

    numpy recurses; this walks the same tree with an explicit stack (numba cannot cache a
    recursive function)."""
    if n <= 128:
        return block_sum(x, lo, n)
    los = np.empty(128, dtype=np.int64)
    ns = np.empty(128, dtype=np.int64)
    combine = np.empty(128, dtype=np.bool_)
    partial = np.empty(64)
    top, depth = 0, 0
    los[0], ns[0], combine[0] = lo, n, False
    top = 1
    while top > 0:
        top -= 1
        a, m, join = los[top], ns[top], combine[top]
        if join:
            depth -= 1
            partial[depth - 1] = partial[depth - 1] + partial[depth]
        elif m <= 128:
            partial[depth] = block_sum(x, a, m)
            depth += 1
        else:
            m2 = m // 2
            m2 -= m2 % 8
            los[top], ns[top], combine[top] = a, m, True
            los[top + 1], ns[top + 1], combine[top + 1] = a + m2, m - m2, False
            los[top + 2], ns[top + 2], combine[top + 2] = a, m2, False
            top += 3
    return partial[0]


@njit(cache=True)
def argmax_ties_row(values, n, u, use_u):
    """:func:`~causalbandits_lib.core.policies.argmax_ties` for one row ``values[:n]`` (``atol = 0``):
    ``np.argmax`` (the first maximum, or the first NaN) without ``u``; with it, the
    ``int(u · n_tied)``-th (0-based, capped) of the entries ``>=`` the row maximum (NaN if the row
    has one, then no entry is tied and the answer is 0, as numpy's)."""
    if not use_u:
        best = 0
        for a in range(1, n):
            if values[best] != values[best]:
                break
            if values[a] > values[best] or values[a] != values[a]:
                best = a
        return best
    m = values[0]
    has_nan = m != m
    for a in range(1, n):
        v = values[a]
        if v != v:
            has_nan = True
        elif v > m:
            m = v
    if has_nan:
        m = np.nan
    n_tied = 0
    for a in range(n):
        if values[a] >= m:
            n_tied += 1
    pick = int(u * n_tied)
    if pick > n_tied - 1:
        pick = n_tied - 1
    seen = 0
    for a in range(n):
        if values[a] >= m:
            seen += 1
        if seen > pick:
            return a
    return 0


@njit(cache=True, inline="always")
def np_minimum(a, b):
    """``np.minimum`` of two floats (NaN propagates)."""
    return a if (a <= b or a != a) else b


@njit(cache=True, inline="always")
def np_maximum(a, b):
    """``np.maximum`` of two floats (NaN propagates)."""
    return a if (a >= b or a != a) else b


@njit(cache=True)
def accumulate_block(sums, block, start, marks):
    """Add the rounds ``start ..`` of ``block`` (R, B, M) to ``sums`` (R, M) one round after the
    other (the order of the numpy path's in-place additions, so the result is bit for bit the
    same), and return the sums after each round index in ``marks`` (sorted), shape (R, M, len(marks))."""
    R, B, M = block.shape
    taken = np.empty((R, M, marks.shape[0]))
    for r in range(R):
        for m in range(M):
            acc = sums[r, m]
            j = 0
            for s in range(B):
                if s >= start:
                    acc += block[r, s, m]
                while j < marks.shape[0] and marks[j] == s:
                    taken[r, m, j] = acc
                    j += 1
            sums[r, m] = acc
    return taken


@njit(cache=True)
def _ucb1_block(counts, sums, cells, env_contexts, n_arms, means, best, noise, gaussian, sigma, reward_out, regret_out):
    """UCB1 against fixed-mean arms, every run through one block of rounds.

    counts, sums : (R, n_cells) the policy's :class:`~causalbandits_lib.core.policies.CellStatistics`
    cells : (R, B) int, the policy's context code of every round (0 for a context-free UCB1)
    env_contexts : (R, B) int, the environment's context of every round (row of ``means``)
    means : (n_contexts, K); best : (n_contexts,) best mean per context
    noise : (R, B, K) the environment's reward noise (uniforms, or standard normals if ``gaussian``)
    """
    R, B = cells.shape
    index = np.empty(n_arms)
    for r in range(R):
        for s in range(B):
            base = cells[r, s] * n_arms
            n = 0.0
            for a in range(n_arms):
                n += counts[r, base + a]
            log_n = math.log(max(n, 1.0))
            for a in range(n_arms):
                k = counts[r, base + a]
                if k > 0:
                    index[a] = sums[r, base + a] / max(k, 1.0) + math.sqrt(2.0 * log_n / k)
                else:
                    index[a] = np.inf
            arm = 0  # np.argmax: the first maximum
            for a in range(1, n_arms):
                if index[a] > index[arm]:
                    arm = a
            c = env_contexts[r, s]
            mu = means[c, arm]
            if gaussian:
                reward = mu + sigma * noise[r, s, arm]
            else:
                reward = 1.0 if noise[r, s, arm] < mu else 0.0
            counts[r, base + arm] += 1.0
            sums[r, base + arm] += reward
            reward_out[r, s] = reward
            regret_out[r, s] = best[c] - mu


class UCB1Kernel:
    """UCB1 against :class:`~causalbandits_lib.core.environments.BernoulliBandit`,
    :class:`~causalbandits_lib.core.environments.GaussianBandit` or
    :class:`~causalbandits_lib.core.environments.ContextualBernoulliBandit` (one UCB1 per context,
    or one for all contexts)."""

    outputs = {"reward": (np.float64, ()), "regret": (np.float64, ())}

    def __init__(self, policy, env):
        from .environments import ContextualBernoulliBandit, GaussianBandit

        self.policy, self.env = policy, env
        self.contextual = isinstance(env, ContextualBernoulliBandit)
        self.gaussian = isinstance(env, GaussianBandit)
        means = np.asarray(env.means, dtype=float)
        self.means = np.ascontiguousarray(means if self.contextual else means[None, :])
        self.best = self.means.max(axis=1)
        self.sigma = float(getattr(env, "sigma", 1.0))

    def run(self, t0: int, t1: int, out) -> None:
        env, policy = self.env, self.policy
        R, B = policy.stats.n_runs, t1 - t0
        if self.contextual:
            env_ctx = np.searchsorted(env.context_cdf, env.context_noise.block(t0, t1), side="right").astype(np.int64)
            env._context = env_ctx[:, -1].copy()  # what observe() leaves behind
        else:
            env_ctx = np.zeros((R, B), dtype=np.int64)
        cells = env_ctx if policy.n_contexts is not None else np.zeros((R, B), dtype=np.int64)
        reward = out["reward"] if "reward" in out else np.empty((R, B))
        regret = out["regret"] if "regret" in out else np.empty((R, B))
        noise = np.ascontiguousarray(env.reward_noise.block(t0, t1))
        _ucb1_block(
            policy.stats.counts,
            policy.stats.sums,
            cells,
            env_ctx,
            policy.n_arms,
            self.means,
            self.best,
            noise,
            self.gaussian,
            self.sigma,
            reward,
            regret,
        )
