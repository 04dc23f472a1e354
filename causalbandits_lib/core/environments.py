"""Generic bandit environments, vectorised over runs.

Rewards of *every* arm are drawn each round from the run's own stream, whichever arm is played, so
two policies simulated with the same seed face the same reward table (common random numbers), and
a run's rewards never depend on other runs.
"""

from __future__ import annotations

import numpy as np

from .streams import RunStreams

__all__ = ["BernoulliBandit", "GaussianBandit", "ContextualBernoulliBandit"]


class _FixedMeans:
    def __init__(self, means):
        means = np.asarray(means, dtype=float)
        if means.ndim != 1 or len(means) < 1:
            raise ValueError(f"means must be a non-empty 1-d list, got shape {means.shape}")
        self.means = means
        self.n_arms = len(means)
        self.best_mean = float(means.max())

    def observe(self, t: int):
        return None

    def regret_of(self, actions: np.ndarray) -> np.ndarray:
        """Exact expected regret of each run's action: ``μ* − μ_a``."""
        return self.best_mean - self.means[actions]


class BernoulliBandit(_FixedMeans):
    """``k`` arms with Bernoulli rewards of the given means.

    Feedback per round: ``reward`` (0 or 1) and ``regret`` (``μ* − μ_a``, exact).
    """

    def __init__(self, means):
        super().__init__(means)
        if np.any((self.means < 0) | (self.means > 1)):
            raise ValueError(f"Bernoulli means must lie in [0, 1], got {self.means.tolist()}")

    def reset(self, streams: RunStreams) -> None:
        self.reward_noise = streams.per_round("rewards", (self.n_arms,), "uniform")
        self._rows = np.arange(streams.n_runs)

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        u = self.reward_noise.at(t)[self._rows, actions]
        return {"reward": (u < self.means[actions]).astype(float), "regret": self.regret_of(actions)}


class GaussianBandit(_FixedMeans):
    """``k`` arms with Gaussian rewards ``N(μ_a, σ²)``."""

    def __init__(self, means, sigma: float = 1.0):
        super().__init__(means)
        if not sigma > 0:
            raise ValueError(f"sigma={sigma} must be positive")
        self.sigma = float(sigma)

    def reset(self, streams: RunStreams) -> None:
        self.reward_noise = streams.per_round("rewards", (self.n_arms,), "normal")
        self._rows = np.arange(streams.n_runs)

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        z = self.reward_noise.at(t)[self._rows, actions]
        return {"reward": self.means[actions] + self.sigma * z, "regret": self.regret_of(actions)}


class ContextualBernoulliBandit:
    """Each round a context ``c ~ P(C)`` arrives; arm ``a`` pays ``Bernoulli(means[c, a])``.

    Feedback: ``reward``, and ``regret`` = ``max_a' means[c, a'] − means[c, a]`` (exact, against
    the best arm for the round's context, i.e. the best soft intervention).

    Parameters
    ----------
    context_probs : array_like, shape (n_contexts,)
    means : array_like, shape (n_contexts, n_arms)
    """

    def __init__(self, context_probs, means):
        self.context_probs = np.asarray(context_probs, dtype=float)
        self.means = np.asarray(means, dtype=float)
        if self.means.ndim != 2 or self.means.shape[0] != len(self.context_probs):
            raise ValueError(
                f"means must have shape (n_contexts={len(self.context_probs)}, n_arms), got {self.means.shape}"
            )
        if abs(self.context_probs.sum() - 1) > 1e-9 or np.any(self.context_probs < 0):
            raise ValueError(f"context_probs must be a probability vector, got {self.context_probs.tolist()}")
        if np.any((self.means < 0) | (self.means > 1)):
            raise ValueError("Bernoulli means must lie in [0, 1]")
        self.n_contexts, self.n_arms = self.means.shape
        self.context_cdf = np.cumsum(self.context_probs)
        self.context_cdf[-1] = 1.0

    def reset(self, streams: RunStreams) -> None:
        self.context_noise = streams.per_round("contexts", (), "uniform")
        self.reward_noise = streams.per_round("rewards", (self.n_arms,), "uniform")
        self._rows = np.arange(streams.n_runs)
        self._context = None

    def observe(self, t: int) -> np.ndarray:
        self._context = np.searchsorted(self.context_cdf, self.context_noise.at(t), side="right")
        return self._context

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        c = self._context
        mu = self.means[c, actions]
        u = self.reward_noise.at(t)[self._rows, actions]
        return {"reward": (u < mu).astype(float), "regret": self.means[c].max(axis=1) - mu}
