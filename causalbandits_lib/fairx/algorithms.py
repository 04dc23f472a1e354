"""The FairX algorithms and the conventional baselines, vectorised over runs and over
*configurations* (Wang, Bai, Sun and Joachims, ICML 2021).

State arrays have shape ``(R, G, K)``: ``R`` runs (the runner's leading axis), ``G``
configurations (hyper-parameter grid points and/or merit steepnesses ``c``, one per entry of the
per-configuration arrays) and ``K`` arms. All configurations of a run share the run's random
numbers (common random numbers), so a grid search compares grid points on the same noise.

Every policy follows the runner's protocol (``reset(streams)``, ``select(t, context)``,
``update(t, context, actions, feedback)``) and exposes the distribution it deployed in the last
round as ``policy`` (and through ``diagnostics()``), from which the fairness and reward regrets are
computed (:class:`~.merit.RegretMeter`, :mod:`.experiments`). ``select`` returns the sampled arm of
every run and configuration, shape ``(R, G)``.

Multi-armed (§3, §5.1):

- :class:`FairXUCB` (Algorithm 1) with the paper's projected-gradient optimistic step or the exact
  box solver;
- :class:`FairXTS` (Algorithm 2) with a Gaussian prior and Gaussian likelihood;
- :class:`FairXEG` (§5.1): the fair policy of the empirical means mixed with uniform exploration;
- conventional :class:`UCB`, :class:`ThompsonSampling` and :class:`EpsilonGreedy`, whose deployed
  policy is one-hot on the chosen arm (mixed with ε/K for ε-greedy).

Linear (§4, §5.1). State per run and configuration: the ridge/posterior mean ``μ̂`` (R, G, d) and
a square root ``S`` (R, G, d, d) of the inverse Gram matrix, ``S Sᵀ = A⁻¹`` with
``A = λI + Σ_τ x_τ x_τᵀ/σ²`` (:class:`RidgeState`).

- :class:`FairXLinUCB` (Algorithm 3) and :class:`LinUCB` use ``λ`` and ``σ = 1`` (``A = Σ_t`` of
  Eq. E8);
- :class:`FairXLinTS` (Algorithm 4) and :class:`LinTS` use the Gaussian posterior ``N(μ̂, A⁻¹)``
  with ``λ = 1/σ_0²`` and noise ``σ²`` (Eq. E12);
- :class:`FairXLinEG` and :class:`LinEG` use the ridge estimate with regularisation ``λ``.

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
from .merit import ExpMerit, sample_from_policy, softmax_and_sample
from .optimism import optimistic_box_exact, optimistic_box_pgd, optimistic_ellipsoid_pgd, pgd_exp_scores

__all__ = [
    "config_array",
    "FairXUCB",
    "FairXTS",
    "FairXEG",
    "UCB",
    "ThompsonSampling",
    "EpsilonGreedy",
    "RidgeState",
    "FairXLinUCB",
    "FairXLinTS",
    "FairXLinEG",
    "LinUCB",
    "LinTS",
    "LinEG",
]


def config_array(
    name: str, value, positive: bool = False, nonnegative: bool = False, at_most: float | None = None
) -> np.ndarray:
    """A per-configuration hyper-parameter as a 1-d float array, checked where it enters."""
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}={np.asarray(value).tolist()} must be a finite number or a 1-d list of them")
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name}={arr.tolist()} must be positive")
    if nonnegative and np.any(arr < 0):
        raise ValueError(f"{name}={arr.tolist()} must be non-negative")
    if at_most is not None and np.any(arr > at_most):
        raise ValueError(f"{name}={arr.tolist()} must be at most {at_most:g}")
    return arr


def _n_configs(**arrays) -> int:
    sizes = {k: v.size for k, v in arrays.items() if v is not None and v.size != 1}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"per-configuration parameters must have one common length (or length 1); got {sizes}")
    return next(iter(sizes.values()), 1)


def _fair_sample(merit, mu: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``π = f(μ)/Σ f(μ)`` and one arm per row (the softmax fast form for ``exp(cμ)``)."""
    if isinstance(merit, ExpMerit):
        return softmax_and_sample(merit.c_column * mu, u)
    pi = merit.policy(mu)
    return pi, sample_from_policy(pi, u)


class _MABPolicy:
    """Counts, sums and the deployed policy of every run and configuration."""

    #: whether the first K rounds pull each arm once (UCB family, notes §8 A4)
    round_robin = False

    def __init__(self, n_arms: int, n_configs: int):
        if int(n_arms) < 2:
            raise ValueError(f"n_arms={n_arms} must be at least 2")
        self.n_arms = int(n_arms)
        self.n_configs = int(n_configs)
        self.policy: np.ndarray | None = None

    def reset(self, streams: RunStreams) -> None:
        R, G, K = streams.n_runs, self.n_configs, self.n_arms
        self.n_runs = R
        self.counts = np.zeros((R, G, K))
        self.sums = np.zeros((R, G, K))
        self._base = (np.arange(R * G) * K).reshape(R, G)
        self.arm_uniforms = streams.per_round("arm", (), "uniform")
        self._reset_extra(streams)

    def _reset_extra(self, streams: RunStreams) -> None:
        pass

    def _one_hot(self, arms: np.ndarray, width: int | None = None) -> np.ndarray:
        width = self.n_arms if width is None else int(width)
        pi = np.zeros((self.n_runs, self.n_configs, width))
        pi.reshape(-1)[(np.arange(self.n_runs * self.n_configs) * width + arms.ravel())] = 1.0
        return pi

    def select(self, t: int, context=None) -> np.ndarray:
        """Arms of every run and configuration, (R, G).

        ``context`` is None for the plain multi-armed bandit, or the candidate pool of the round
        (int array of arm ids, shared by all runs; replay evaluation), in which case the policy
        is over the pool and the returned arms index into it.
        """
        if context is None and self.round_robin and t < self.n_arms:
            arms = np.full((self.n_runs, self.n_configs), t, dtype=np.int64)
            self.policy = self._one_hot(arms)
            self.arm_uniforms.at(t)  # keep the stream aligned with the rounds
            return arms
        arms = self._select(t, context)
        if context is not None and self.round_robin:
            # an arm of the pool never pulled is pulled first (the round-robin start, per pool)
            fresh = self.counts[..., context] == 0
            if fresh.any():
                rows = fresh.any(axis=-1)
                first = np.argmax(fresh, axis=-1)
                arms = np.where(rows, first, arms)
                self.policy = np.where(rows[..., None], self._one_hot(first, len(context)), self.policy)
        return arms

    def _select(self, t: int, pool) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def _restrict(values: np.ndarray, pool) -> np.ndarray:
        return values if pool is None else values[..., pool]

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        reward = np.asarray(feedback["reward"], dtype=float)
        if context is not None:
            actions = np.asarray(context)[actions]
        flat = (self._base + actions).ravel()
        accepted = feedback.get("accepted")
        if accepted is None:
            self.counts.reshape(-1)[flat] += 1.0
            self.sums.reshape(-1)[flat] += reward.reshape(-1)
        else:  # replay: only the events where the logged arm was chosen count
            weight = np.asarray(accepted, dtype=float).reshape(-1)
            self.counts.reshape(-1)[flat] += weight
            self.sums.reshape(-1)[flat] += weight * reward.reshape(-1)
        self._updated(flat)

    def _updated(self, flat: np.ndarray) -> None:
        pass

    def diagnostics(self) -> dict[str, np.ndarray]:
        return {"policy": self.policy}

    def compiled(self, env):
        """The compiled fast path against a multi-armed environment (:mod:`.kernels`), or None
        (a subclass, another environment, merit function or solver: the numpy path runs)."""
        from . import kernels

        code = {
            FairXUCB: kernels.FAIRX_UCB,
            FairXTS: kernels.FAIRX_TS,
            FairXEG: kernels.FAIRX_EG,
            UCB: kernels.UCB,
            ThompsonSampling: kernels.TS,
            EpsilonGreedy: kernels.EG,
        }.get(type(self))
        return None if code is None else kernels.kernel_for(self, env, code)

    def empirical_means(self) -> np.ndarray:
        """``μ̂`` of Eq. (E3), 0 for arms never pulled; shape (R, G, K)."""
        return self.sums / np.maximum(self.counts, 1.0)


class FairXUCB(_MABPolicy):
    """FairX-UCB (Algorithm 1): optimistic parameter in a box confidence region, fair policy.

    Each arm is pulled once in rounds ``1..K`` (the proofs' ``2K`` term; the paper leaves the
    start open). Then ``CR_t = Π_a [μ̂_a − w_0/√N_a, μ̂_a + w_0/√N_a]`` and
    ``μ_t = argmax_{μ ∈ CR_t} V(μ)`` is computed by ``solver``; ``π_t = f(μ_t)/Σ f(μ_t)``.

    Parameters
    ----------
    merit : merit function with one ``c`` per configuration (or one for all)
    w0 : float or array (G,)
        Width scale; the theory sets ``√(2 ln(4TK/δ))`` (Theorem 3.2.1), the experiments tune it in
        ``[1e-5, 1e-1]``.
    n_arms : int
    solver : {"pgd", "exact"}
        ``"pgd"``: the paper's projected gradient ascent (``lr``, ``steps``) from ``μ̂``;
        ``"exact"``: :func:`~.optimism.optimistic_box_exact`.
    """

    round_robin = True

    def __init__(self, merit, w0, n_arms: int, solver: str = "pgd", lr: float = 0.01, steps: int = 10):
        if solver not in ("pgd", "exact"):
            raise ValueError(f"solver={solver!r}; allowed are 'pgd' (the paper's) and 'exact'")
        self.w0 = config_array("w0", w0, positive=True)
        super().__init__(n_arms, _n_configs(w0=self.w0, c=getattr(merit, "c", None)))
        self.merit = merit
        self.solver = solver
        self.lr = float(lr)
        self.steps = int(steps)
        if not self.lr > 0 or self.steps < 0:
            raise ValueError(f"lr={lr} must be positive and steps={steps} non-negative")
        self._w0 = self.w0[:, None]

    def confidence_box(self, pool=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``μ̂``, lower and upper ends of ``CR_t``, each (R, G, K) (or over the pool)."""
        counts = self._restrict(self.counts, pool)
        if pool is not None:
            counts = np.maximum(counts, 1.0)  # unpulled pool arms are played first anyway
        mean = self._restrict(self.sums, pool) / counts
        width = self._w0 / np.sqrt(counts)
        return mean, mean - width, mean + width

    def optimistic_parameter(self, pool=None) -> np.ndarray:
        """``μ_t`` of Step 7, shape (R, G, K)."""
        mean, lower, upper = self.confidence_box(pool)
        if self.solver == "exact":
            return optimistic_box_exact(self.merit, lower, upper)[0]
        return optimistic_box_pgd(self.merit, lower, upper, start=mean, lr=self.lr, steps=self.steps)

    def _select(self, t: int, pool) -> np.ndarray:
        u = self.arm_uniforms.at(t)
        if self.solver == "pgd" and isinstance(self.merit, ExpMerit):
            # the same iteration as optimistic_box_pgd, kept in scaled coordinates y = cμ - s
            mean, lower, upper = self.confidence_box(pool)
            y, _ = pgd_exp_scores(self.merit.c_column, lower, upper, mean, self.lr, self.steps)
            self.policy, arms = softmax_and_sample(y, u)
            return arms
        self.policy, arms = _fair_sample(self.merit, self.optimistic_parameter(pool), u)
        return arms


class UCB(_MABPolicy):
    """Conventional UCB with the same confidence widths: ``a_t = argmax_a μ̂_a + w_0/√N_a`` after
    one pull of each arm; ties to the lowest index; deployed policy one-hot."""

    round_robin = True

    def __init__(self, w0, n_arms: int):
        self.w0 = config_array("w0", w0, positive=True)
        super().__init__(n_arms, self.w0.size)
        self._w0 = self.w0[:, None]

    def _select(self, t: int, pool) -> np.ndarray:
        counts = self._restrict(self.counts, pool)
        if pool is not None:
            counts = np.maximum(counts, 1.0)
        index = self._restrict(self.sums, pool) / counts + self._w0 / np.sqrt(counts)
        arms = np.argmax(index, axis=-1)
        self.arm_uniforms.at(t)
        self.policy = self._one_hot(arms, index.shape[-1])
        return arms


class _GaussianPosterior(_MABPolicy):
    """Independent Gaussian posteriors per arm: prior ``N(0, σ_0²)``, likelihood ``N(μ_a, σ²)``
    (Eq. E11b; the theory's case is ``σ_0 = σ = 1``, Eq. E11a)."""

    def __init__(self, prior_sd, reward_sd, n_arms: int, c=None):
        self.prior_sd = config_array("prior_sd", prior_sd, positive=True)
        self.reward_sd = config_array("reward_sd", reward_sd, positive=True)
        super().__init__(n_arms, _n_configs(prior_sd=self.prior_sd, reward_sd=self.reward_sd, c=c))
        G = self.n_configs
        self.prior_prec = np.broadcast_to(1.0 / self.prior_sd**2, (G,))[:, None]
        self.lik_prec = np.broadcast_to(1.0 / self.reward_sd**2, (G,))[:, None]

    def _reset_extra(self, streams: RunStreams) -> None:
        R, G, K = self.n_runs, self.n_configs, self.n_arms
        self.posterior_noise = streams.per_round("posterior", (K,), "normal")
        self.post_mean = np.zeros((R, G, K))
        self.post_sd = np.broadcast_to(1.0 / np.sqrt(self.prior_prec), (R, G, K)).copy()
        self._prec = np.empty((R, G, K))

    def _updated(self, flat: np.ndarray) -> None:
        # whole-array recomputation: fewer numpy calls than updating the pulled entries
        prec = self._prec
        np.multiply(self.counts, self.lik_prec, out=prec)
        prec += self.prior_prec
        np.multiply(self.sums, self.lik_prec, out=self.post_mean)
        self.post_mean /= prec
        np.sqrt(prec, out=self.post_sd)
        np.divide(1.0, self.post_sd, out=self.post_sd)

    def posterior_sample(self, t: int, pool=None) -> np.ndarray:
        """``μ_t ~ V_t``: one draw for every arm (of the pool), shape (R, G, K)."""
        return self._restrict(self.post_mean + self.post_sd * self.posterior_noise.at(t)[:, None, :], pool)


class FairXTS(_GaussianPosterior):
    """FairX-TS (Algorithm 2): sample ``μ_t`` from the posterior, deploy ``π_t = f(μ_t)/Σ f(μ_t)``.

    Parameters
    ----------
    merit : merit function
    prior_sd, reward_sd : float or array (G,)
        ``σ_0`` and ``σ`` of the Gaussian model (tuned in the experiments; 1 and 1 in the theory).
    n_arms : int
    """

    def __init__(self, merit, prior_sd, reward_sd, n_arms: int):
        super().__init__(prior_sd, reward_sd, n_arms, c=getattr(merit, "c", None))
        self.merit = merit

    def _select(self, t: int, pool) -> np.ndarray:
        self.policy, arms = _fair_sample(self.merit, self.posterior_sample(t, pool), self.arm_uniforms.at(t))
        return arms


class ThompsonSampling(_GaussianPosterior):
    """Conventional Thompson sampling with the same Gaussian model: play the arm with the largest
    posterior sample (deployed policy one-hot on it, notes §8 A5)."""

    def _select(self, t: int, pool) -> np.ndarray:
        sample = self.posterior_sample(t, pool)
        arms = np.argmax(sample, axis=-1)
        self.arm_uniforms.at(t)
        self.policy = self._one_hot(arms, sample.shape[-1])
        return arms


class FairXEG(_MABPolicy):
    """FairX-EG (§5.1): ``π_t = (1 − ε) f(μ̂_t)/Σ f(μ̂_t) + ε/K``, with ``μ̂ = 0`` for arms not yet
    pulled (the mixture reading of "identical to ε-greedy", notes §8 A6).

    Parameters
    ----------
    merit : merit function
    epsilon : float or array (G,), in [0, 1]
    n_arms : int
    """

    def __init__(self, merit, epsilon, n_arms: int):
        self.epsilon = config_array("epsilon", epsilon, nonnegative=True, at_most=1.0)
        super().__init__(n_arms, _n_configs(epsilon=self.epsilon, c=getattr(merit, "c", None)))
        self.merit = merit
        self._eps = self.epsilon[:, None]

    def _select(self, t: int, pool) -> np.ndarray:
        pi = self.merit.policy(self._restrict(self.empirical_means(), pool))
        self.policy = (1.0 - self._eps) * pi + self._eps / pi.shape[-1]
        return sample_from_policy(self.policy, self.arm_uniforms.at(t))


class EpsilonGreedy(_MABPolicy):
    """Conventional ε-greedy: ``π_t = (1 − ε) one-hot(argmax μ̂_t) + ε/K`` (ties to the lowest
    index, unpulled arms at 0)."""

    def __init__(self, epsilon, n_arms: int):
        self.epsilon = config_array("epsilon", epsilon, nonnegative=True, at_most=1.0)
        super().__init__(n_arms, self.epsilon.size)
        self._eps = self.epsilon[:, None]

    def _select(self, t: int, pool) -> np.ndarray:
        means = self._restrict(self.empirical_means(), pool)
        greedy = self._one_hot(np.argmax(means, axis=-1), means.shape[-1])
        self.policy = (1.0 - self._eps) * greedy + self._eps / means.shape[-1]
        return sample_from_policy(self.policy, self.arm_uniforms.at(t))


# ---------------------------------------------------------------------------------- linear bandits


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
        self.prior_precision = np.broadcast_to(prior_precision, (G,)).astype(float)
        self._noise_var = np.broadcast_to(noise_var, (G,)).astype(float)
        self.policy = None

    def reset(self, streams: RunStreams) -> None:
        self.n_runs = streams.n_runs
        self.state = RidgeState(self.dim, self.prior_precision, self._noise_var, self.n_runs)
        self.arm_uniforms = streams.per_round("arm", (), "uniform")
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

    def compiled(self, env):
        """The compiled fast path against a linear environment (:mod:`.linear_kernels`), or None
        (a subclass, another environment or merit function: the numpy path runs)."""
        from . import linear_kernels as lk

        code = {
            FairXLinUCB: lk.FAIRX_LINUCB,
            LinUCB: lk.LINUCB,
            FairXLinTS: lk.FAIRX_LINTS,
            LinTS: lk.LINTS,
            FairXLinEG: lk.FAIRX_LINEG,
            LinEG: lk.LINEG,
        }.get(type(self))
        return None if code is None else lk.linear_kernel_for(self, env, code)


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
        self.policy, arms = _fair_sample(self.merit, z, self.arm_uniforms.at(t))
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
        self.arm_uniforms.at(t)
        self.policy = self._one_hot(arms)
        return arms


class _LinearPosterior(_LinearPolicy):
    def __init__(self, prior_sd, reward_sd, dim: int, n_arms: int, c=None):
        self.prior_sd = config_array("prior_sd", prior_sd, positive=True)
        self.reward_sd = config_array("reward_sd", reward_sd, positive=True)
        super().__init__(dim, n_arms, 1.0 / self.prior_sd**2, self.reward_sd**2, c=c)

    def _reset_extra(self, streams: RunStreams) -> None:
        self.posterior_noise = streams.per_round("posterior", (self.dim,), "normal")

    def posterior_sample(self, t: int) -> np.ndarray:
        """``μ_t ~ N(μ̂_t, A_t⁻¹)`` as ``μ̂ + S ξ``, shape (R, G, d)."""
        return self.state.mean + (self.state.root * self.posterior_noise.at(t)[:, None, None, :]).sum(axis=-1)


class FairXLinTS(_LinearPosterior):
    """FairX-LinTS (Algorithm 4): ``π_t(a) = f(μ_t·x_a)/Σ f(μ_t·x_a')`` with ``μ_t`` a posterior
    draw (prior ``N(0, σ_0² I)``, noise ``N(0, σ²)``)."""

    def __init__(self, merit, prior_sd, reward_sd, dim: int, n_arms: int):
        super().__init__(prior_sd, reward_sd, dim, n_arms, c=getattr(merit, "c", None))
        self.merit = merit

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        z = _scores(context, self.posterior_sample(t))
        self.policy, arms = _fair_sample(self.merit, z, self.arm_uniforms.at(t))
        return arms


class LinTS(_LinearPosterior):
    """Linear Thompson sampling: play ``argmax_a μ_t·x_a`` for a posterior draw ``μ_t``."""

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        arms = np.argmax(_scores(context, self.posterior_sample(t)), axis=-1)
        self.arm_uniforms.at(t)
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
        return sample_from_policy(self.policy, self.arm_uniforms.at(t))


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
        return sample_from_policy(self.policy, self.arm_uniforms.at(t))
