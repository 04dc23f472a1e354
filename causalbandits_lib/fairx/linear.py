"""FairX linear bandit algorithms and the conventional baselines, vectorised over runs and
configurations.

State per run and configuration: the ridge/posterior mean ``μ̂`` (R, G, d) and a square root ``S``
(R, G, d, d) of the inverse Gram matrix, ``S Sᵀ = A⁻¹`` with ``A = λI + Σ_τ x_τ x_τᵀ/σ²``.

- FairX-LinUCB (Algorithm 3) and LinUCB use ``λ`` and ``σ = 1`` (``A = Σ_t`` of Eq. E8);
- FairX-LinTS (Algorithm 4) and LinTS use the Gaussian posterior ``N(μ̂, A⁻¹)`` with
  ``λ = 1/σ_0²`` and noise ``σ²`` (Eq. E12);
- FairX-LinEG and LinEG use the ridge estimate with regularisation ``λ``.

``S`` is updated by Potter's square-root form of the Sherman-Morrison update, ``O(d²)`` per round
and numerically stable: with ``v = Sᵀx`` and ``s = vᵀv``,
``S ← S − α (S v) vᵀ``, ``α = 1/((σ² + s)(1 + √(σ²/(σ² + s))))``, and
``μ̂ ← μ̂ + S v (r − x·μ̂)/(σ² + s)`` (recursive least squares).

Contexts arrive from the environment as ``(R, K, d)``; ``select`` returns arms ``(R, G)`` and
sets ``policy`` ``(R, G, K)``.
"""

from __future__ import annotations

import numpy as np

from ..core.streams import RunStreams
from .mab import _fair_sample, _n_configs, config_array
from .merit import sample_from_policy
from .optimism import optimistic_ellipsoid_pgd

__all__ = ["FairXLinUCB", "FairXLinTS", "FairXLinEG", "LinUCB", "LinTS", "LinEG", "RidgeState"]


def _scores(contexts: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``x_{t,a}·θ`` for every arm: contexts (R, K, d), theta (R, G, d) → (R, G, K)."""
    return (contexts[:, None, :, :] * theta[:, :, None, :]).sum(axis=-1)


class RidgeState:
    """Ridge regression / Gaussian posterior with a square-root inverse Gram matrix.

    Parameters
    ----------
    dim : int
    prior_precision : ndarray (G,)
        ``λ`` (ridge) or ``1/σ_0²`` (posterior).
    noise_var : ndarray (G,)
        ``σ²`` (1 for ridge).
    n_runs : int
    """

    def __init__(self, dim: int, prior_precision: np.ndarray, noise_var: np.ndarray, n_runs: int):
        G = len(prior_precision)
        self.dim = int(dim)
        self.mean = np.zeros((n_runs, G, dim))
        self.root = np.broadcast_to(np.eye(dim) / np.sqrt(prior_precision)[:, None, None], (n_runs, G, dim, dim)).copy()
        self.noise_var = np.asarray(noise_var, dtype=float)

    def update(self, x: np.ndarray, reward: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Add one observation per run and configuration: ``x`` (R, G, d), ``reward`` (R, G).
        Entries where ``mask`` (R, G) is False are left unchanged (replay evaluation)."""
        S = self.root
        v = (S * x[..., :, None]).sum(axis=-2)  # Sᵀx
        s = (v * v).sum(axis=-1)
        Sv = (S * v[..., None, :]).sum(axis=-1)
        denom = self.noise_var + s
        alpha = 1.0 / (denom * (1.0 + np.sqrt(self.noise_var / denom)))
        resid = reward - (x * self.mean).sum(axis=-1)
        step = resid / denom
        if mask is not None:
            alpha = np.where(mask, alpha, 0.0)
            step = np.where(mask, step, 0.0)
        S -= (alpha[..., None] * Sv)[..., :, None] * v[..., None, :]
        self.mean += Sv * step[..., None]

    def covariance(self) -> np.ndarray:
        """``A⁻¹ = S Sᵀ``, shape (R, G, d, d) (for checks)."""
        return np.einsum("rgij,rgkj->rgik", self.root, self.root)


class _LinearPolicy:
    def __init__(self, dim: int, n_arms: int, prior_precision, noise_var, c=None, **other):
        if int(dim) < 1 or int(n_arms) < 2:
            raise ValueError(f"dim={dim} must be positive and n_arms={n_arms} at least 2")
        self.dim, self.n_arms = int(dim), int(n_arms)
        self.n_configs = _n_configs(prior_precision=prior_precision, noise_var=noise_var, c=c, **other)
        G = self.n_configs
        self._prior_precision = np.broadcast_to(prior_precision, (G,)).astype(float)
        self._noise_var = np.broadcast_to(noise_var, (G,)).astype(float)
        self.policy = None

    def reset(self, streams: RunStreams) -> None:
        self.n_runs = streams.n_runs
        self.state = RidgeState(self.dim, self._prior_precision, self._noise_var, self.n_runs)
        self._u = streams.per_round("arm", (), "uniform")
        self._rows = np.arange(self.n_runs)[:, None]
        self._base = (np.arange(self.n_runs * self.n_configs) * self.n_arms).reshape(self.n_runs, self.n_configs)
        self._reset_extra(streams)

    def _reset_extra(self, streams: RunStreams) -> None:
        pass

    def _one_hot(self, arms: np.ndarray) -> np.ndarray:
        pi = np.zeros((self.n_runs, self.n_configs, self.n_arms))
        pi.reshape(-1)[(self._base + arms).ravel()] = 1.0
        return pi

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        x = context[self._rows, actions]  # (R, G, d)
        self.state.update(x, np.asarray(feedback["reward"], dtype=float), feedback.get("accepted"))

    def diagnostics(self) -> dict[str, np.ndarray]:
        return {"policy": self.policy}


class FairXLinUCB(_LinearPolicy):
    """FairX-LinUCB (Algorithm 3) with a constant radius ``β`` (as in the experiments, §5.1).

    ``CR_t = {μ : ‖μ − μ̂_t‖_{Σ_t} <= √β}``; Step 7 by projected gradient ascent in the
    reparametrisation ``μ = μ̂ + √β S u``, ``‖u‖ <= 1``
    (:func:`~.optimism.optimistic_ellipsoid_pgd`, learning rate 0.01, 10 steps).

    Parameters
    ----------
    merit, beta (G,), ridge (G,) = λ, dim, n_arms, lr, steps
    """

    def __init__(self, merit, beta, ridge, dim: int, n_arms: int, lr: float = 0.01, steps: int = 10):
        self.beta = config_array("beta", beta, positive=True)
        ridge = config_array("ridge", ridge, positive=True)
        super().__init__(dim, n_arms, ridge, np.ones(1), c=getattr(merit, "c", None), beta=self.beta)
        self.merit = merit
        self.lr, self.steps = float(lr), int(steps)
        if not self.lr > 0 or self.steps < 0:
            raise ValueError(f"lr={lr} must be positive and steps={steps} non-negative")
        self._sqrt_beta = np.sqrt(np.broadcast_to(self.beta, (self.n_configs,)))[:, None, None]

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        z0 = _scores(context, self.state.mean)
        directions = self._sqrt_beta * (context[:, None, :, :] @ self.state.root)  # √β X S
        z = optimistic_ellipsoid_pgd(self.merit, z0, directions, self.lr, self.steps)
        self.policy, arms = _fair_sample(self.merit, z, self._u.at(t))
        return arms


class LinUCB(_LinearPolicy):
    """LinUCB: ``a_t = argmax_a μ̂·x_a + √β ‖x_a‖_{Σ_t⁻¹}`` = ``argmax_a max_{μ ∈ CR_t} μ·x_a``;
    ties to the lowest index; deployed policy one-hot."""

    def __init__(self, beta, ridge, dim: int, n_arms: int):
        self.beta = config_array("beta", beta, positive=True)
        ridge = config_array("ridge", ridge, positive=True)
        super().__init__(dim, n_arms, ridge, np.ones(1), beta=self.beta)
        self._sqrt_beta = np.sqrt(np.broadcast_to(self.beta, (self.n_configs,)))[:, None]

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        W = context[:, None, :, :] @ self.state.root
        index = _scores(context, self.state.mean) + self._sqrt_beta * np.sqrt((W * W).sum(axis=-1))
        arms = np.argmax(index, axis=-1)
        self._u.at(t)
        self.policy = self._one_hot(arms)
        return arms


class _LinearPosterior(_LinearPolicy):
    def __init__(self, prior_sd, reward_sd, dim: int, n_arms: int, c=None):
        self.prior_sd = config_array("prior_sd", prior_sd, positive=True)
        self.reward_sd = config_array("reward_sd", reward_sd, positive=True)
        super().__init__(dim, n_arms, 1.0 / self.prior_sd**2, self.reward_sd**2, c=c)

    def _reset_extra(self, streams: RunStreams) -> None:
        self._xi = streams.per_round("posterior", (self.dim,), "normal")

    def posterior_sample(self, t: int) -> np.ndarray:
        """``μ_t ~ N(μ̂_t, A_t⁻¹)`` as ``μ̂ + S ξ``, shape (R, G, d)."""
        return self.state.mean + (self.state.root * self._xi.at(t)[:, None, None, :]).sum(axis=-1)


class FairXLinTS(_LinearPosterior):
    """FairX-LinTS (Algorithm 4): ``π_t(a) = f(μ_t·x_a)/Σ f(μ_t·x_a')`` with ``μ_t`` a posterior
    draw (prior ``N(0, σ_0² I)``, noise ``N(0, σ²)``)."""

    def __init__(self, merit, prior_sd, reward_sd, dim: int, n_arms: int):
        super().__init__(prior_sd, reward_sd, dim, n_arms, c=getattr(merit, "c", None))
        self.merit = merit

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        z = _scores(context, self.posterior_sample(t))
        self.policy, arms = _fair_sample(self.merit, z, self._u.at(t))
        return arms


class LinTS(_LinearPosterior):
    """Linear Thompson sampling: play ``argmax_a μ_t·x_a`` for a posterior draw ``μ_t``."""

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        arms = np.argmax(_scores(context, self.posterior_sample(t)), axis=-1)
        self._u.at(t)
        self.policy = self._one_hot(arms)
        return arms


class FairXLinEG(_LinearPolicy):
    """FairX-LinEG (§5.1): ``π_t = (1 − ε) f(μ̂_t·x)/Σ f(μ̂_t·x) + ε/K`` with the ridge estimate
    ``μ̂_t`` (regularisation ``λ``)."""

    def __init__(self, merit, epsilon, ridge, dim: int, n_arms: int):
        self.epsilon = config_array("epsilon", epsilon, nonnegative=True, at_most=1.0)
        ridge = config_array("ridge", ridge, positive=True)
        super().__init__(dim, n_arms, ridge, np.ones(1), c=getattr(merit, "c", None), epsilon=self.epsilon)
        self.merit = merit
        self._eps = np.broadcast_to(self.epsilon, (self.n_configs,))[:, None]

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        pi = self.merit.policy(_scores(context, self.state.mean))
        self.policy = (1.0 - self._eps) * pi + self._eps / self.n_arms
        return sample_from_policy(self.policy, self._u.at(t))


class LinEG(_LinearPolicy):
    """Conventional linear ε-greedy: ``(1 − ε) one-hot(argmax μ̂·x) + ε/K``."""

    def __init__(self, epsilon, ridge, dim: int, n_arms: int):
        self.epsilon = config_array("epsilon", epsilon, nonnegative=True, at_most=1.0)
        ridge = config_array("ridge", ridge, positive=True)
        super().__init__(dim, n_arms, ridge, np.ones(1), epsilon=self.epsilon)
        self._eps = np.broadcast_to(self.epsilon, (self.n_configs,))[:, None]

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        greedy = self._one_hot(np.argmax(_scores(context, self.state.mean), axis=-1))
        self.policy = (1.0 - self._eps) * greedy + self._eps / self.n_arms
        return sample_from_policy(self.policy, self._u.at(t))
