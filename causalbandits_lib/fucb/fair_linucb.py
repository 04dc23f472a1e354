"""Fair-LinUCB, **a reconstruction**: Huang, Zhang and Wu (AAAI 2022, §4.2) compare F-UCB with
Fair-LinUCB of Huang, Labille, Wu, Lee and Heffernan (arXiv:2010.12102) but describe it only as a
LinUCB heuristic for correlation-based, group-level user-side fairness under the same linear
reward. Its rule is not given there and no code is public, so this class is our stand-in, built
from that description:

- one shared parameter vector over ``x_{t,a}`` = (user features, video features[, 1]);
- ridge statistics ``A = λI + Σ x xᵀ``, ``b = Σ r x`` and ``θ̂ = A⁻¹ b`` (LinUCB, Li et al. 2010);
- score ``θ̂ᵀx + α sqrt(xᵀ A⁻¹ x) − γ |r̄_{S=1}(a) − r̄_{S=0}(a)|``, where ``r̄_g(a)`` is the running
  mean reward that users of group ``g`` got when shown arm ``a`` (0 before the first such round):
  arms whose rewards differ between the groups are penalised.

Defaults ``α = 1``, ``λ = 1``, ``γ = 1``. ``A⁻¹`` is kept by Sherman-Morrison updates with
element-wise sums (no BLAS), so a vectorised run equals one-at-a-time runs bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..core.policies import CellStatistics, argmax_ties
from ..core.streams import RunStreams

__all__ = ["FairLinUCB", "linear_features"]


def linear_features(context_features: np.ndarray, arm_features: np.ndarray, bias: bool = True) -> np.ndarray:
    """``x_{t,a}`` for every context and arm: shape ``(n_contexts, n_arms, d_x + d_a [+ 1])``."""
    cx = np.asarray(context_features, dtype=float)
    ax = np.asarray(arm_features, dtype=float)
    if cx.ndim != 2 or ax.ndim != 2:
        raise ValueError(f"features must be 2-d tables, got shapes {cx.shape} and {ax.shape}")
    parts = [
        np.broadcast_to(cx[:, None, :], (len(cx), len(ax), cx.shape[1])),
        np.broadcast_to(ax[None, :, :], (len(cx), len(ax), ax.shape[1])),
    ]
    if bias:
        parts.append(np.ones((len(cx), len(ax), 1)))
    return np.concatenate(parts, axis=-1)


class FairLinUCB:
    """Our reconstruction of Fair-LinUCB (see the module docstring), vectorised over runs.

    Parameters
    ----------
    features : ndarray, shape (n_contexts, n_arms, d)
        ``x_{t,a}`` (:func:`linear_features`).
    groups : int array, shape (n_contexts,)
        The sensitive group (0 or 1) of every context.
    alpha, lam, gamma : float
        Exploration width, ridge parameter and weight of the group-gap penalty.
    tie_break : {"first", "random"}
    """

    def __init__(
        self,
        features: np.ndarray,
        groups: np.ndarray,
        alpha: float = 1.0,
        lam: float = 1.0,
        gamma: float = 1.0,
        tie_break: str = "first",
        name: str = "Fair-LinUCB",
    ):
        features = np.asarray(features, dtype=float)
        groups = np.asarray(groups, dtype=np.int64)
        if features.ndim != 3:
            raise ValueError(f"features must have shape (n_contexts, n_arms, d), got {features.shape}")
        if groups.shape != (features.shape[0],) or not np.all((groups == 0) | (groups == 1)):
            raise ValueError(f"groups must hold 0 or 1 for each of the {features.shape[0]} contexts")
        for label, v in (("alpha", alpha), ("gamma", gamma)):
            if not v >= 0:
                raise ValueError(f"{label}={v} must be >= 0")
        if not lam > 0:
            raise ValueError(f"lam={lam} must be > 0")
        if tie_break not in ("first", "random"):
            raise ValueError(f"tie_break={tie_break!r} is not allowed; use 'first' or 'random'")
        self.features, self.groups = features, groups
        self.alpha, self.lam, self.gamma = float(alpha), float(lam), float(gamma)
        self.tie_break = tie_break
        self.name = name
        self.n_arms, self.d = features.shape[1], features.shape[2]

    def reset(self, streams: RunStreams) -> None:
        n = streams.n_runs
        self.a_inv = np.broadcast_to(np.eye(self.d) / self.lam, (n, self.d, self.d)).copy()
        self.b = np.zeros((n, self.d))
        self.group_stats = CellStatistics(n, 2 * self.n_arms)
        self._rows = np.arange(n)
        self._ties = streams.per_round("ties", (), "uniform") if self.tie_break == "random" else None

    def scores(self, t: int, context: np.ndarray) -> np.ndarray:
        """The penalised optimistic score of every arm, shape ``(n_runs, n_arms)``."""
        x = self.features[context]  # (n_runs, n_arms, d)
        theta = (self.a_inv * self.b[:, None, :]).sum(axis=-1)
        mean = (x * theta[:, None, :]).sum(axis=-1)
        ax = (self.a_inv[:, None, :, :] * x[:, :, None, :]).sum(axis=-1)
        width = np.sqrt(np.maximum((ax * x).sum(axis=-1), 0.0))
        counts, sums = self.group_stats.counts, self.group_stats.sums
        gm = np.where(counts > 0, sums / np.maximum(counts, 1.0), 0.0).reshape(-1, 2, self.n_arms)
        gap = np.abs(gm[:, 1] - gm[:, 0])
        return mean + self.alpha * width - self.gamma * gap

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        return argmax_ties(self.scores(t, context), None if self._ties is None else self._ties.at(t))

    def update(self, t: int, context, actions, feedback) -> None:
        x = self.features[context, actions]  # (n_runs, d)
        r = feedback["reward"]
        ax = (self.a_inv * x[:, None, :]).sum(axis=-1)
        denom = 1.0 + (x * ax).sum(axis=-1)
        self.a_inv -= ax[:, :, None] * ax[:, None, :] / denom[:, None, None]
        self.b += r[:, None] * x
        self.group_stats.add(self.groups[context] * self.n_arms + actions, r)
