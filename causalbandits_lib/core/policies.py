"""Generic bandit policies and the per-run statistics they share, vectorised over runs.

Every policy follows :class:`causalbandits_lib.core.protocols.Policy`: ``reset(streams)``,
``select(t, context)`` and ``update(t, context, actions, feedback)``, with state arrays of shape
``(n_runs, ...)``. Chapters build their algorithms from :class:`CellStatistics` (running counts
and sums per cell, per run) and :func:`argmax_ties`.
"""

from __future__ import annotations

import numpy as np

from .streams import RunStreams

__all__ = ["CellStatistics", "argmax_ties", "UCB1"]


class CellStatistics:
    """Running count and sum of observations per cell, for every run.

    Parameters
    ----------
    n_runs : int
    n_cells : int
        Number of cells (arms, or joint values of a set of variables).
    """

    def __init__(self, n_runs: int, n_cells: int):
        self.n_runs = int(n_runs)
        self.n_cells = int(n_cells)
        self.counts = np.zeros((self.n_runs, self.n_cells))
        self.sums = np.zeros((self.n_runs, self.n_cells))
        self._rows = np.arange(self.n_runs)

    def add(self, cells: np.ndarray, values: np.ndarray) -> None:
        """Add one observation ``values[r]`` to cell ``cells[r]`` of every run ``r``."""
        self.counts[self._rows, cells] += 1.0
        self.sums[self._rows, cells] += values

    def means(self, unseen: float = 0.0) -> np.ndarray:
        """Sample means, shape ``(n_runs, n_cells)``; ``unseen`` where a cell has no data."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1.0), unseen)


def argmax_ties(values: np.ndarray, u: np.ndarray | None = None, atol: float = 0.0) -> np.ndarray:
    """Row-wise argmax of ``values`` (shape ``(n_runs, k)``).

    Ties (within ``atol``) go to the lowest index when ``u`` is None, and otherwise uniformly at
    random among the tied entries using one uniform ``u[r]`` per run.
    """
    values = np.asarray(values, dtype=float)
    if u is None and atol == 0.0:
        return np.argmax(values, axis=1)
    best = values.max(axis=1, keepdims=True)
    tied = values >= best - atol
    if u is None:
        return np.argmax(tied, axis=1)
    n_tied = tied.sum(axis=1)
    pick = np.minimum((np.asarray(u) * n_tied).astype(np.int64), n_tied - 1)
    # index of the (pick+1)-th True in each row
    return np.argmax(np.cumsum(tied, axis=1) > pick[:, None], axis=1)


class UCB1:
    """UCB1 of Auer, Cesa-Bianchi and Fischer (2002) for ``k`` arms, all runs at once.

    Each arm is played once first (lowest index first); afterwards the arm maximising
    ``μ̂_a + sqrt(2 ln n / N_a)`` is played, ``n`` being the number of rounds so far, ties to the
    lowest index. With ``n_contexts``, one independent UCB1 runs per context (the context being an
    integer code per run), ``n`` then counting the rounds of that context.

    Parameters
    ----------
    n_arms : int
    n_contexts : int, optional
        Number of discrete contexts (default: context-free).
    """

    def __init__(self, n_arms: int, n_contexts: int | None = None):
        if n_arms < 1:
            raise ValueError(f"n_arms={n_arms} must be at least 1")
        if n_contexts is not None and n_contexts < 1:
            raise ValueError(f"n_contexts={n_contexts} must be at least 1")
        self.n_arms = int(n_arms)
        self.n_contexts = n_contexts
        self.stats: CellStatistics | None = None

    def reset(self, streams: RunStreams) -> None:
        self.stats = CellStatistics(streams.n_runs, self.n_arms * (self.n_contexts or 1))
        self._rows = np.arange(streams.n_runs)

    def _cells(self, context) -> np.ndarray:
        """Cell indices of every arm for each run's context, shape ``(n_runs, n_arms)``."""
        if self.n_contexts is None:
            return np.broadcast_to(np.arange(self.n_arms), (len(self._rows), self.n_arms))
        return np.asarray(context, dtype=np.int64)[:, None] * self.n_arms + np.arange(self.n_arms)[None, :]

    def index(self, t: int, context=None) -> np.ndarray:
        """The UCB1 index of every arm, shape ``(n_runs, n_arms)``; ``+inf`` for unplayed arms."""
        cells = self._cells(context)
        rows = self._rows[:, None]
        counts = self.stats.counts[rows, cells]
        means = self.stats.means()[rows, cells]
        n = np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = np.sqrt(2.0 * np.log(n) / counts)
        return np.where(counts > 0, means + bonus, np.inf)

    def select(self, t: int, context=None) -> np.ndarray:
        return np.argmax(self.index(t, context), axis=1)

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        cells = self._cells(context)[self._rows, actions]
        self.stats.add(cells, feedback["reward"])

    def compiled(self, env):
        """The compiled fast path against the core's fixed-mean bandits
        (:class:`~causalbandits_lib.core.kernels.UCB1Kernel`), or None for any other environment
        (or a subclass of either, whose behaviour the kernel does not know)."""
        from .environments import BernoulliBandit, ContextualBernoulliBandit, GaussianBandit

        if type(self) is not UCB1:
            return None
        kind = type(env)
        if kind in (BernoulliBandit, GaussianBandit) and self.n_contexts is None:
            pass
        elif kind is ContextualBernoulliBandit and self.n_contexts in (None, env.n_contexts):
            pass
        else:
            return None
        from .kernels import UCB1Kernel

        return UCB1Kernel(self, env)
