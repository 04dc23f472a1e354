"""What a learner keeps of its past rounds: the raw observations, or a binned summary of them.

The log-loss is ``L_t(theta) = sum_s log(1 + exp(x_s^T theta)) - theta^T sum_s y_s x_s``. Its
second term is exact from the running sum ``b = sum_s y_s x_s``. The first term needs every past
feature; evaluating it costs one pass over ``t`` points, and the optimistic step needs several
passes per round. :class:`BinnedHistory` replaces it by a quadrature that costs a fixed number of
points: the played features share the context ``(a, w, m)`` (8 values) and differ in the scalar
decision ``d``, so within each context the decisions are binned and each bin is represented by two
pseudo-decisions ``mean +- sd`` (kept within the bin's observed range) of weight ``count / 2``. The
rule is exact for any function of ``d`` that is quadratic within a bin; the error of the loss is of order
``t * width^4 * max |d^4 phi / dd^4|`` (``phi(d) = log(1 + exp(f(Z(d))^T theta))``), which the tests
and ``notebooks/cclb/02_confidence_sets.md`` measure. This is our approximation, for long runs only.
"""

from __future__ import annotations

import numpy as np

from .confidence import LogisticData
from .features import FEATURE_MAPS, raw_features

__all__ = ["LogisticHistory", "BinnedHistory"]


class LogisticHistory:
    """Played features and outcomes of every run, stored time-last: ``X (R, n, t)``, ``y (R, t)``.

    The buffers double when full (copying keeps every value, so results do not depend on the
    capacity).
    """

    def __init__(self, n_runs: int, n: int, capacity: int = 512):
        self.X = np.zeros((n_runs, n, capacity))
        self.y = np.zeros((n_runs, capacity))
        self.t = 0

    def add(self, x: np.ndarray, y: np.ndarray, **_) -> None:
        """Append one observation per run: ``x (R, n)``, ``y (R,)``."""
        if self.t == self.X.shape[-1]:
            X = np.zeros(self.X.shape[:2] + (2 * self.t,))
            X[..., : self.t] = self.X
            Y = np.zeros((self.y.shape[0], 2 * self.t))
            Y[:, : self.t] = self.y
            self.X, self.y = X, Y
        self.X[:, :, self.t] = x
        self.y[:, self.t] = y
        self.t += 1

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        return self.X[:, :, : self.t], self.y[:, : self.t]

    def data(self) -> LogisticData:
        return LogisticData.from_observations(*self.view())


class BinnedHistory:
    """Binned summary of the observations (see the module docstring).

    Parameters
    ----------
    n_runs : int
    bins : int
        Bins of ``d in [-1, 1]`` per context (an even number puts a bin edge at ``d = 0``, where the
        features of the context ``a = w = m = 0`` jump).
    feature_map : str
        A key of :data:`~causalbandits_lib.cclb.features.FEATURE_MAPS`.
    """

    N_CONTEXTS = 8
    N_FEATURES = 4

    def __init__(self, n_runs: int, bins: int = 16, feature_map: str = "unit_norm"):
        if bins < 1:
            raise ValueError(f"bins={bins} must be a positive integer")
        if feature_map not in FEATURE_MAPS:
            raise ValueError(f"feature_map={feature_map!r} is not allowed; use one of {sorted(FEATURE_MAPS)}")
        self.bins = int(bins)
        self.fmap = FEATURE_MAPS[feature_map]
        cells = self.N_CONTEXTS * self.bins
        self.count = np.zeros((n_runs, cells))
        self.s1 = np.zeros((n_runs, cells))
        self.s2 = np.zeros((n_runs, cells))
        self.d_min = np.full((n_runs, cells), np.inf)
        self.d_max = np.full((n_runs, cells), -np.inf)
        self.X = np.zeros((n_runs, self.N_FEATURES, 2 * cells))
        self.weights = np.zeros((n_runs, 2 * cells))
        self.b = np.zeros((n_runs, self.N_FEATURES))
        self.t = 0
        self._rows = np.arange(n_runs)

    def add(self, x: np.ndarray, y: np.ndarray, code: np.ndarray, d: np.ndarray) -> None:
        """Add one observation per run: its features ``x (R, n)``, outcome ``y (R,)``, context
        code ``4a + 2w + m`` and decision ``d``."""
        rows = self._rows
        d = np.asarray(d, dtype=float)
        code = np.asarray(code, dtype=np.int64)
        cell = code * self.bins + np.clip(np.floor((d + 1.0) * 0.5 * self.bins).astype(np.int64), 0, self.bins - 1)
        self.count[rows, cell] += 1.0
        self.s1[rows, cell] += d
        self.s2[rows, cell] += d * d
        self.d_min[rows, cell] = np.minimum(self.d_min[rows, cell], d)
        self.d_max[rows, cell] = np.maximum(self.d_max[rows, cell], d)
        self.b += np.asarray(y, dtype=float)[:, None] * x
        n = self.count[rows, cell]
        mean = self.s1[rows, cell] / n
        sd = np.sqrt(np.maximum(self.s2[rows, cell] / n - mean * mean, 0.0))
        # kept within the observed decisions of the cell: the features of the context a = w = m = 0
        # jump at d = 0, and a pseudo-decision must stay on the side of the data it stands for
        pts = np.clip(
            np.stack([mean - sd, mean + sd], axis=1), self.d_min[rows, cell][:, None], self.d_max[rows, cell][:, None]
        )
        a, w, m = code // 4, (code // 2) % 2, code % 2
        feats = self.fmap(raw_features(a, w, m, pts))  # (R, 2, n)
        for j in range(2):
            self.X[rows, :, 2 * cell + j] = feats[:, j]
            self.weights[rows, 2 * cell + j] = 0.5 * n
        self.t += 1

    def data(self) -> LogisticData:
        return LogisticData(self.X, self.weights, self.b)
