"""The FairX model: the bandit environments of the theorems and the experiments, vectorised over runs.

Each environment follows the runner's protocol. ``pull(t, arms)`` takes the arms of every run and
configuration, shape ``(R, G)``, and returns

- ``reward``: shape ``(R, G)``, what the learner observes;
- ``arm_means``: shape ``(R, K)``, the exact mean reward of every arm in this round (the ground
  truth the regrets are measured against: label frequencies for the multi-armed case, ``θ*·x_{t,a}``
  for the linear case), never a sample.

All configurations of a run see the same example (or context) in a round.

- :class:`ArmsBandit`: fixed means with Bernoulli or Gaussian rewards (the theorems' settings);
- :class:`MultiLabelBandit`: a multi-label data set as a bandit (§5.1): classes are arms, each
  round a uniformly drawn example, reward = the chosen class's label;
- :class:`ContextTableBandit`: the linear version, contexts from a per-example table (random
  Fourier features of the example-arm outer product, :func:`random_fourier_contexts`), reward the
  label (misspecified, Figs. 3, 7, 8) or ``θ·x`` plus Gaussian noise (well specified, Fig. 10);
- :class:`GaussianContextBandit`: fresh unit-norm Gaussian contexts each round and a linear
  reward model (the linear theorems' setting).
"""

from __future__ import annotations

import numpy as np

from ..core.streams import RunStreams

__all__ = [
    "ArmsBandit",
    "PriorArmsBandit",
    "MultiLabelBandit",
    "ContextTableBandit",
    "GaussianContextBandit",
    "random_fourier_contexts",
    "least_squares_parameter",
]


class ArmsBandit:
    """``K`` arms with fixed means and Bernoulli (``noise="bernoulli"``) or Gaussian rewards.

    Parameters
    ----------
    means : array_like, shape (K,)
    noise : {"bernoulli", "gaussian"}
    sd : float
        Standard deviation of Gaussian rewards.
    """

    def __init__(self, means, noise: str = "bernoulli", sd: float = 1.0):
        means = np.asarray(means, dtype=float)
        if means.ndim != 1 or len(means) < 2:
            raise ValueError(f"means must be a 1-d list of at least 2 arms, got shape {means.shape}")
        if noise not in ("bernoulli", "gaussian"):
            raise ValueError(f"noise={noise!r}; allowed are 'bernoulli' and 'gaussian'")
        if noise == "bernoulli" and np.any((means < 0) | (means > 1)):
            raise ValueError(f"Bernoulli means must lie in [0, 1], got {means.tolist()}")
        if not sd > 0:
            raise ValueError(f"sd={sd} must be positive")
        self.means = means
        self.n_arms = len(means)
        self.noise = noise
        self.sd = float(sd)

    def reset(self, streams: RunStreams) -> None:
        R, K = streams.n_runs, self.n_arms
        kind = "uniform" if self.noise == "bernoulli" else "normal"
        self.reward_noise = streams.per_round("rewards", (K,), kind)
        self._rows = np.arange(R)[:, None]
        self._truth = np.broadcast_to(self.means, (R, K))

    def observe(self, t: int):
        return None

    def pull(self, t: int, arms: np.ndarray) -> dict[str, np.ndarray]:
        draw = self.reward_noise.at(t)[self._rows, arms]
        mu = self.means[arms]
        reward = (draw < mu).astype(float) if self.noise == "bernoulli" else mu + self.sd * draw
        return {"reward": reward, "arm_means": self._truth}


class PriorArmsBandit:
    """Gaussian arms whose means are drawn per run from the prior ``N(0, prior_sd²)``: the
    Bayesian setting of Theorems 3.3.1-3.3.2 (``μ*_a ~ N(0, 1)``, ``r ~ N(μ*_a, 1)``).

    ``arm_means`` differs between runs; the Bayesian regrets are the averages over runs.
    """

    def __init__(self, n_arms: int, prior_sd: float = 1.0, sd: float = 1.0):
        if int(n_arms) < 2 or not prior_sd > 0 or not sd > 0:
            raise ValueError(f"n_arms={n_arms} must be at least 2, prior_sd={prior_sd} and sd={sd} positive")
        self.n_arms, self.prior_sd, self.sd = int(n_arms), float(prior_sd), float(sd)

    def reset(self, streams: RunStreams) -> None:
        self.means = self.prior_sd * streams.once("means", (self.n_arms,), "normal")
        self.reward_noise = streams.per_round("rewards", (self.n_arms,), "normal")
        self._rows = np.arange(streams.n_runs)[:, None]

    def observe(self, t: int):
        return None

    def pull(self, t: int, arms: np.ndarray) -> dict[str, np.ndarray]:
        reward = self.means[self._rows, arms] + self.sd * self.reward_noise.at(t)[self._rows, arms]
        return {"reward": reward, "arm_means": self.means}


class MultiLabelBandit:
    """A multi-label data set as a ``K``-armed bandit (§5.1).

    Each round draws one example uniformly (with replacement) per run; the learner picks a class
    and observes that class's 0/1 label. The mean of arm ``a`` is the frequency of label ``a`` in
    the data given (the paper's "empirical mean reward of each arm").

    Parameters
    ----------
    labels : array_like, shape (n, K), entries 0/1
    """

    def __init__(self, labels):
        labels = np.asarray(labels, dtype=float)
        if labels.ndim != 2 or labels.shape[0] < 1 or labels.shape[1] < 2:
            raise ValueError(f"labels must have shape (n_examples, n_classes >= 2), got {labels.shape}")
        if not np.all((labels == 0) | (labels == 1)):
            raise ValueError("labels must be 0 or 1")
        self.labels = labels
        self.n_examples, self.n_arms = labels.shape
        self.means = labels.mean(axis=0)
        self._flat = labels.reshape(-1)

    def reset(self, streams: RunStreams) -> None:
        self.example_uniforms = streams.per_round("example", (), "uniform")
        self._truth = np.broadcast_to(self.means, (streams.n_runs, self.n_arms))

    def observe(self, t: int):
        return None

    def pull(self, t: int, arms: np.ndarray) -> dict[str, np.ndarray]:
        example = (self.example_uniforms.at(t) * self.n_examples).astype(np.int64)
        reward = self._flat[(example * self.n_arms)[:, None] + arms]
        return {"reward": reward, "arm_means": self._truth}


class ContextTableBandit:
    """Linear bandit over a table of per-example contexts.

    Each round draws an example ``i`` per run; the contexts are ``contexts[i]`` (shape (K, d)) and
    the exact means ``true_means[i]``. The reward of arm ``a`` is ``labels[i, a]`` when labels are
    given, otherwise ``true_means[i, a] + noise_sd·ε`` with ``ε ~ N(0, 1)``.

    Parameters
    ----------
    contexts : ndarray, shape (n, K, d)
    true_means : ndarray, shape (n, K)
        Ground truth used for the regrets (``θ_LS · x`` for the labelled data sets).
    labels : ndarray, shape (n, K), optional
    noise_sd : float
        Only without labels.
    """

    def __init__(self, contexts, true_means, labels=None, noise_sd: float = 0.1):
        contexts = np.asarray(contexts, dtype=float)
        true_means = np.asarray(true_means, dtype=float)
        if contexts.ndim != 3 or true_means.shape != contexts.shape[:2]:
            raise ValueError(f"contexts {contexts.shape} must be (n, K, d) and true_means {true_means.shape} (n, K)")
        if labels is not None:
            labels = np.asarray(labels, dtype=float)
            if labels.shape != true_means.shape:
                raise ValueError(f"labels {labels.shape} must have the shape of true_means {true_means.shape}")
        elif not noise_sd > 0:
            raise ValueError(f"noise_sd={noise_sd} must be positive")
        self.contexts = contexts
        self.true_means = true_means
        self.labels = labels
        self.noise_sd = float(noise_sd)
        self.n_examples, self.n_arms, self.dim = contexts.shape

    def reset(self, streams: RunStreams) -> None:
        self.example_uniforms = streams.per_round("example", (), "uniform")
        if self.labels is None:
            self.reward_noise = streams.per_round("noise", (), "normal")
        self._rows = np.arange(streams.n_runs)[:, None]
        self._example = None

    def observe(self, t: int) -> np.ndarray:
        self._example = (self.example_uniforms.at(t) * self.n_examples).astype(np.int64)
        return self.contexts[self._example]

    def pull(self, t: int, arms: np.ndarray) -> dict[str, np.ndarray]:
        means = self.true_means[self._example]
        if self.labels is not None:
            reward = self.labels[self._example[:, None], arms]
        else:
            reward = means[self._rows, arms] + self.noise_sd * self.reward_noise.at(t)[:, None]
        return {"reward": reward, "arm_means": means}


class GaussianContextBandit:
    """Fresh contexts every round: ``K`` vectors drawn ``N(0, I_d)`` and scaled to unit norm
    (``‖x‖ <= 1`` as in Theorems 4.2.1-4.3.2); mean ``θ·x``, reward ``θ·x + noise_sd·ε``.

    Parameters
    ----------
    theta : array_like, shape (d,), or None
        The parameter; ``None`` draws one per run from ``N(0, prior_sd² I_d)`` (the Bayesian
        setting of Theorems 4.3.1-4.3.2), which then needs ``dim``.
    n_arms : int
    noise_sd : float
    dim : int, optional
    prior_sd : float
    """

    def __init__(self, theta, n_arms: int, noise_sd: float = 1.0, dim: int | None = None, prior_sd: float = 1.0):
        if theta is not None:
            theta = np.asarray(theta, dtype=float)
            if theta.ndim != 1 or len(theta) < 1:
                raise ValueError(f"theta must be a 1-d vector, got shape {theta.shape}")
            dim = len(theta)
        elif dim is None or int(dim) < 1 or not prior_sd > 0:
            raise ValueError(f"without theta, give dim (got {dim}) and a positive prior_sd (got {prior_sd})")
        if int(n_arms) < 2 or not noise_sd > 0:
            raise ValueError(f"n_arms={n_arms} must be at least 2 and noise_sd={noise_sd} positive")
        self.theta = theta
        self.dim = int(dim)
        self.prior_sd = float(prior_sd)
        self.n_arms = int(n_arms)
        self.noise_sd = float(noise_sd)

    def reset(self, streams: RunStreams) -> None:
        if self.theta is None:
            self.thetas = self.prior_sd * streams.once("theta", (self.dim,), "normal")
        else:
            self.thetas = np.broadcast_to(self.theta, (streams.n_runs, self.dim))
        self.context_noise = streams.per_round("contexts", (self.n_arms, self.dim), "normal")
        self.reward_noise = streams.per_round("noise", (), "normal")
        self._rows = np.arange(streams.n_runs)[:, None]

    def observe(self, t: int) -> np.ndarray:
        x = self.context_noise.at(t)
        self._contexts = x / np.sqrt((x * x).sum(axis=-1, keepdims=True))
        self._means = (self._contexts * self.thetas[:, None, :]).sum(axis=-1)
        return self._contexts

    def pull(self, t: int, arms: np.ndarray) -> dict[str, np.ndarray]:
        reward = self._means[self._rows, arms] + self.noise_sd * self.reward_noise.at(t)[:, None]
        return {"reward": reward, "arm_means": self._means}


def random_fourier_contexts(
    features, n_arms: int, dim: int = 50, bandwidth: float = 1.0, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Random Fourier features (Rahimi and Recht 2007) of the example-arm outer product (§5.1).

    The input of arm ``a`` for example ``x`` is ``vec(x ⊗ e_a)``: ``x`` placed in block ``a`` of a
    ``p·K`` vector. For the Gaussian kernel ``exp(−bandwidth·‖v − v'‖²)`` the map is
    ``z(v) = √(2/D) cos(ωᵀv + b)``, ``ω ~ N(0, 2·bandwidth·I)``, ``b ~ U[0, 2π)`` (the convention of
    scikit-learn's ``RBFSampler``). The paper states only ``D = 50``; kernel, bandwidth and
    normalisation are the book's choices (notes §8 A7). ``ωᵀ vec(x ⊗ e_a) = ω_aᵀ x`` with ``ω_a``
    the rows of block ``a``, so the table is computed without forming the outer product.

    Parameters
    ----------
    features : ndarray, shape (n, p)
    n_arms : int
    dim : int
        ``D``.
    bandwidth : float
        Kernel parameter (``γ`` of the Gaussian kernel).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n, K, D)
    """
    features = np.asarray(features, dtype=float)
    if features.ndim != 2:
        raise ValueError(f"features must have shape (n, p), got {features.shape}")
    if int(dim) < 1 or not bandwidth > 0 or int(n_arms) < 1:
        raise ValueError(f"dim={dim} and n_arms={n_arms} must be positive integers, bandwidth={bandwidth} positive")
    if rng is None:
        raise ValueError("rng is required (the feature map is part of the environment's seeded definition)")
    n, p = features.shape
    omega = rng.normal(0.0, np.sqrt(2.0 * bandwidth), size=(n_arms, p, dim))
    offset = rng.uniform(0.0, 2.0 * np.pi, size=dim)
    proj = np.matmul(features[None, :, :], omega).transpose(1, 0, 2)  # (n, K, D): ω_aᵀ x per arm
    return np.sqrt(2.0 / dim) * np.cos(proj + offset)


def least_squares_parameter(contexts, targets) -> np.ndarray:
    """Ordinary least squares ``θ = argmin Σ_{i,a} (x_{i,a}·θ − y_{i,a})²`` over every
    (example, arm) pair, without intercept (the paper's linear "optimal" model, notes §8 A8).

    Parameters
    ----------
    contexts : ndarray, shape (n, K, d)
    targets : ndarray, shape (n, K)
    """
    contexts = np.asarray(contexts, dtype=float)
    X = contexts.reshape(-1, contexts.shape[-1])
    y = np.asarray(targets, dtype=float).reshape(-1)
    gram = X.T @ X
    if np.linalg.cond(gram) < 1e10:  # the normal equations are accurate enough and much faster
        return np.linalg.solve(gram, X.T @ y)
    return np.linalg.lstsq(X, y, rcond=None)[0]
