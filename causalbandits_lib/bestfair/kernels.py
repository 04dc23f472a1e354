"""Compiled kernels (numba) for the chapter's fixed-budget identifiers.

The four algorithms (:mod:`.algorithms`) spend their time in three places: the allocation LP
(HiGHS, solved once per distinct remaining set and cached, :mod:`.allocation`), the multinomial
pulls (each run's own numpy generator, untouched here) and the clipped estimators
(:mod:`.estimators`). The estimators are what this module compiles, with the sample pool they
read:

- :class:`RewardCounts` keeps each run's pool as counts at the **reward cells** only (the cells
  with ``Y != 0``, the only ones that enter a numerator) and the number of samples of each kind of
  pull of each arm (the normalisers' ``τ``: the multinomials draw exactly the allocated numbers);
  the readable path keeps the counts of every cell and sums them;
- :func:`_estimate_kernel` evaluates Eq. 3 and Eq. 4 for every active run, visiting only the cells
  in which the run has samples.

**Bit for bit.** :meth:`~.estimators.WeightedEstimator.estimate` adds, source arm after source
arm, ``np.einsum("rc,kc->rk", counts, G)``. Both operands come from indexing the cell axis with
the reward cells, which leaves the cell axis outermost in memory, so numpy's einsum walks the
cells in the outer loop and accumulates each ``(run, arm)`` sum cell after cell, in ascending
order, from zero, one rounded product and one rounded addition at a time. The kernel does the
same, then adds each source arm's sum and normaliser term in the same order. A product with a
zero count is an exact zero, which leaves a sum unchanged (a sum that starts at ``+0`` never
becomes ``-0``), so skipping empty cells, and source arms without samples, changes nothing.
:func:`reproduces` checks the claim once per process against the readable path on random pools;
where it fails (a numpy build or CPU that fuses multiply-adds, say) the ``"auto"`` backend runs the
readable path and ``"compiled"`` is an error.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .estimators import ESTIMATES, WeightedEstimator
from .model import FORCED_S, FORCED_S_PRIME, NATURAL, FairArmsProblem

__all__ = ["RewardCounts", "estimate_compiled", "reproduces"]

#: Pool of the pulls each estimate reads, in :data:`~.estimators.ESTIMATES` order.
_POOLS = np.array([NATURAL, FORCED_S_PRIME, FORCED_S], dtype=np.int64)


@njit(cache=True)
def _estimate_kernel(counts, pulls, ratio, size, limit, inv_div, pools, which, active, out):
    """Eq. 3 / Eq. 4 for every active run, one estimate ``which[e]`` after the other.

    counts : (n, 3, J, C') int, samples at the reward cells; pulls : (n, 3, J) int, the ``τ``
    ratio, size : (3, J, C', K) the weight before clipping ``value / div`` and the clip size, by
    source arm ``j``, reward cell ``c`` and target arm ``k``
    limit, inv_div : (3, J, K) the phase's clip level ``mult · div`` and ``1 / div``
    pools : (3,) the pool each estimate reads; which : (E,) estimates to compute
    out : (E, n, K); NaN where the pool has no sample of the kind, and for runs not active
    """
    n = counts.shape[0]
    J, C, K = ratio.shape[1], ratio.shape[2], ratio.shape[3]
    acc = np.empty(K)
    num = np.empty(K)
    norm = np.empty(K)
    for r in range(n):
        if not active[r]:
            for e in range(which.shape[0]):
                for k in range(K):
                    out[e, r, k] = np.nan
            continue
        for e in range(which.shape[0]):
            w = which[e]
            p = pools[w]
            for k in range(K):
                num[k] = 0.0
                norm[k] = 0.0
            for j in range(J):
                tau = pulls[r, p, j]
                if tau == 0:
                    continue
                for k in range(K):
                    acc[k] = 0.0
                for c in range(C):
                    m = counts[r, p, j, c]
                    if m == 0:
                        continue
                    x = float(m)
                    for k in range(K):
                        g = ratio[w, j, c, k] if size[w, j, c, k] <= limit[w, j, k] else 0.0
                        acc[k] += x * g
                t = float(tau)
                for k in range(K):
                    num[k] += acc[k]
                    norm[k] += t * inv_div[w, j, k]
            for k in range(K):
                out[e, r, k] = num[k] / norm[k] if norm[k] > 0 else np.nan


@njit(cache=True)
def _add_draws(counts, run_of, rows, drawn, cells):
    """``counts[run_of[q], rows[q], :] += drawn[q, cells]`` for every drawn row ``q``; ``counts``
    is (n, 3K, C') and ``drawn`` (Q, C) holds the multinomial counts of every cell."""
    for q in range(rows.shape[0]):
        r, row = run_of[q], rows[q]
        for c in range(cells.shape[0]):
            counts[r, row, c] += drawn[q, cells[c]]


class RewardCounts:
    """Every run's sample pool for the compiled path: counts at the reward cells, and pulls.

    Parameters
    ----------
    n_runs : int
    estimator : WeightedEstimator
        Gives the problem, its reward cells and the weights.

    Attributes
    ----------
    counts : int ndarray, shape (n_runs, 3, K, C')
        Samples of each kind of pull of each arm in each reward cell.
    pulls : int ndarray, shape (n_runs, 3, K)
        Samples of each kind of pull of each arm, in all cells.
    """

    def __init__(self, n_runs: int, estimator: WeightedEstimator):
        self.est = estimator
        self.cells = np.asarray(estimator.reward_cells, dtype=np.int64)
        K = estimator.problem.n_arms
        self.counts = np.zeros((int(n_runs), 3, K, len(self.cells)), dtype=np.int64)
        self.pulls = np.zeros((int(n_runs), 3, K), dtype=np.int64)

    def clear(self) -> None:
        """Empty every pool (the second stage of the two-stage baseline starts afresh)."""
        self.counts[...] = 0
        self.pulls[...] = 0

    def add(self, alloc: np.ndarray, draws, cumulative: bool) -> None:
        """Add one phase's pulls to the pools, or replace the pools by them (``cumulative=False``,
        V1). ``alloc`` (n_runs, 3, K) are the pulls made; ``draws`` lists ``(run, rows, counts)``,
        ``rows`` the flat ``(kind, arm)`` indices of the non-zero pulls of the run and ``counts``
        their multinomial cell counts."""
        if not cumulative:
            self.clear()
        self.pulls += alloc
        if not draws:
            return
        runs = np.repeat(np.array([i for i, _, _ in draws], dtype=np.int64), [len(rows) for _, rows, _ in draws])
        rows = np.concatenate([rows for _, rows, _ in draws]).astype(np.int64)
        drawn = np.concatenate([d for _, _, d in draws])
        n, _, K, C = self.counts.shape
        _add_draws(self.counts.reshape(n, 3 * K, C), runs, rows, drawn, self.cells)

    def estimates(self, phase: int | None, which: tuple[str, ...], active: np.ndarray) -> list[np.ndarray]:
        """The estimates ``which`` (names in :data:`~.estimators.ESTIMATES`) of every run, each of
        shape ``(n_runs, K)``; NaN for a run that is not active or has no sample of the kind."""
        ratio, size, div = self.est.source_tables()
        index = np.array([ESTIMATES.index(w) for w in which], dtype=np.int64)
        out = np.empty((len(index), self.counts.shape[0], self.counts.shape[2]))
        _estimate_kernel(
            self.counts,
            self.pulls,
            ratio,
            size,
            self.est.clip_level(phase) * div,
            1.0 / div,
            _POOLS,
            index,
            np.ascontiguousarray(active, dtype=np.bool_),
            out,
        )
        return list(out)


def estimate_compiled(
    estimator: WeightedEstimator, counts: np.ndarray, phase: int | None, which: str, active: np.ndarray | None = None
) -> np.ndarray:
    """:meth:`~.estimators.WeightedEstimator.estimate` of the cell counts ``(n_runs, 3, K, C)``
    through the kernel: the same values, bit for bit (NaN for runs where ``active`` is False)."""
    counts = np.asarray(counts)
    pool = RewardCounts(counts.shape[0], estimator)
    pool.counts[...] = counts[..., pool.cells]
    pool.pulls[...] = counts.sum(-1)
    if active is None:
        active = np.ones(counts.shape[0], dtype=bool)
    return pool.estimates(phase, (which,), active)[0]


_REPRODUCES: list[bool] = []


def _probe_problem() -> FairArmsProblem:
    """A random problem of 5 arms and 48 cells, a third of them without reward (for :func:`reproduces`)."""
    rng = np.random.default_rng(2021)
    K, C = 5, 48
    cell_probs = rng.dirichlet(np.ones(C), size=(3, K))
    arm_prob = rng.uniform(0.2, 0.8, size=(K, C))
    cell_y = np.where(rng.random(C) < 1 / 3, 0.0, rng.random(C))
    return FairArmsProblem(cell_probs, arm_prob, rng.uniform(0.5, 2.0, size=C), cell_y, name="kernel probe")


def reproduces() -> bool:
    """Whether the kernel gives :meth:`~.estimators.WeightedEstimator.estimate`'s values bit for
    bit on this numpy build and CPU: checked once per process, on a random problem, on 12 random
    pools of 1 to 700 samples per kind of pull and arm (some empty), for the three estimates with
    and without clipping. (The order of the readable path's sums depends on how its arrays are
    laid out, which its code fixes, not on the problem; the tests compare the two paths on the
    chapter's problems.)"""
    if not _REPRODUCES:
        problem = _probe_problem()
        estimator = WeightedEstimator(problem)
        rng = np.random.default_rng(2021)
        shape = (12, 3, problem.n_arms)
        n = rng.integers(1, 700, size=shape) * (rng.random(shape) < 0.7)
        counts = np.zeros((*shape, problem.n_cells), dtype=np.int64)
        for i in np.ndindex(*shape):
            counts[i] = rng.multinomial(n[i], problem.cell_probs[i[1], i[2]])
        _REPRODUCES.append(
            all(
                np.array_equal(
                    estimator.estimate(counts, phase, w), estimate_compiled(estimator, counts, phase, w), equal_nan=True
                )
                for w in ESTIMATES
                for phase in (1, 3, None)
            )
        )
    return _REPRODUCES[0]
