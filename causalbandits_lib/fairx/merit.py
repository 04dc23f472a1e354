"""Merit functions, the optimal fair policy and the two regrets of the FairX setting.

Wang, Bai, Sun and Joachims (ICML 2021), §3.1 and §4.1:

- a merit function ``f > 0`` maps an arm's mean reward to its merit;
- the optimal fair policy gives every arm exposure proportional to its merit, Eq. (E2) of the
  notes (Theorem 3.1.1): ``π*(a) = f(μ*_a) / Σ_a' f(μ*_a')``;
- fairness regret (Eq. 2 / 6) is the cumulative ℓ1 distance ``Σ_t Σ_a |π*_t(a) − π_t(a)|``;
- reward regret (Eq. 1 / 5) is ``Σ_t Σ_a (π*_t(a) − π_t(a)) μ*_{t,a}`` (it can be negative);
- :class:`RegretMeter` computes both per round for a deployed policy against the round's exact
  arm means (what the simulations accumulate).

Every function here is vectorised: the arm axis is the last one, and any leading axes (runs,
configurations) broadcast. A merit function may carry one parameter per *configuration* (for
instance one steepness ``c`` per grid point of a hyper-parameter search), broadcast over the axis
just before the arms.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ExpMerit",
    "AffineMerit",
    "RampMerit",
    "fair_policy",
    "optimal_fair_policy",
    "fairness_regret_per_round",
    "reward_regret_per_round",
    "sample_from_policy",
    "softmax_and_sample",
    "RegretMeter",
]


class ExpMerit:
    """``f(μ) = exp(c μ)``, the merit function of the paper's experiments (§5.1).

    Parameters
    ----------
    c : float or array_like, shape (G,)
        Steepness, one per configuration (``c > 0``). Larger ``c`` moves the optimal fair policy
        towards the winner-takes-all policy; ``c → 0`` towards the uniform one.

    Notes
    -----
    With ``f = exp(cμ)`` the fair policy is ``softmax(cμ)``, invariant to adding a constant to
    ``μ``. On rewards in ``[lo, hi]`` the constants of Conditions 3.1.2 and 3.1.3 are
    ``γ = exp(c·lo)`` and ``L = c·exp(c·hi)`` (:meth:`constants`).
    """

    #: For every λ, ``m ↦ f(m)(m − λ)`` first decreases then increases, so its maximum over an
    #: interval is at an endpoint (what the exact optimistic solver needs).
    endpoint_maximal = True

    def __init__(self, c):
        c = np.asarray(c, dtype=float)
        if c.ndim > 1 or c.size == 0 or not np.all(np.isfinite(c)) or np.any(c <= 0):
            raise ValueError(f"c={c.tolist()} must be a positive number or a 1-d list of positive numbers")
        self.c = c
        self._c = c[..., None]  # broadcasts over the arm axis

    @property
    def n_configs(self) -> int:
        return int(self.c.size) if self.c.ndim else 1

    @property
    def c_column(self) -> np.ndarray:
        """``c`` with a trailing axis, shape ``(G, 1)`` (or ``(1,)``), broadcasting over the arm axis:
        the scale of the softmax fast paths (``y = c_column · μ``)."""
        return self._c

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        return np.exp(self._c * mu)

    def log_derivative(self, mu: np.ndarray) -> np.ndarray:
        """``(ln f)'(μ) = c``, broadcast to the shape of ``mu``."""
        return np.broadcast_to(self._c, np.broadcast_shapes(np.shape(mu), self._c.shape))

    def policy(self, mu: np.ndarray) -> np.ndarray:
        """``softmax(c μ)`` along the last axis, computed with the maximum subtracted."""
        z = self._c * mu
        z -= z.max(axis=-1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=-1, keepdims=True)
        return z

    def threshold(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """The λ at which ``f(u)(u − λ) = f(l)(l − λ)`` (see :func:`..optimism.optimistic_box_exact`).

        ``τ = u + (u − l)/expm1(c(u − l))``, the stable form of ``(f(u)u − f(l)l)/(f(u) − f(l))``;
        it tends to ``u + 1/c`` as the interval shrinks (the sign change of Eq. E6's gradient).
        """
        width = upper - lower
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = upper + width / np.expm1(self._c * width)
        return np.where(width > 0, tau, upper + 1.0 / self._c)

    def constants(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
        """Minimum merit ``γ`` and Lipschitz constant ``L`` of ``f`` on ``[lo, hi]``."""
        return np.exp(self.c * lo), self.c * np.exp(self.c * hi)

    def __repr__(self) -> str:
        return f"ExpMerit(c={self.c.tolist()})"


class AffineMerit:
    """``f(μ) = max(μ + b, floor)``: identity merit for ``b = 0``.

    Theorem 3.1.4's construction uses the identity merit; only the merits of the instance's arms
    matter, so a floor ``1/√T`` makes it a positive, 1-Lipschitz merit with minimum merit ``1/√T``
    everywhere (notes §8 A17). Without a floor, non-positive merits are an error.
    """

    def __init__(self, b: float = 0.0, floor: float | None = None):
        self.b = float(b)
        if floor is not None and not floor > 0:
            raise ValueError(f"floor={floor} must be positive")
        self.floor = None if floor is None else float(floor)
        # without a floor f(m)(m − λ) is a convex quadratic; with one it need not peak at an end
        self.endpoint_maximal = floor is None

    @property
    def n_configs(self) -> int:
        return 1

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        f = np.asarray(mu, dtype=float) + self.b
        if self.floor is not None:
            return np.maximum(f, self.floor)
        if np.any(f <= 0):
            raise ValueError(f"AffineMerit(b={self.b}) is not positive at μ = {np.min(mu):g}; merits must be positive")
        return f

    def policy(self, mu: np.ndarray) -> np.ndarray:
        f = self(mu)
        return f / f.sum(axis=-1, keepdims=True)

    def log_derivative(self, mu: np.ndarray) -> np.ndarray:
        mu = np.asarray(mu, dtype=float)
        slope = np.ones_like(mu) if self.floor is None else (mu + self.b > self.floor).astype(float)
        return slope / self(mu)


class RampMerit:
    """``f(μ) = 1`` for ``μ <= 0`` and ``1 + L μ`` for ``μ > 0`` (Theorem 3.1.5's merit).

    Minimum merit 1, Lipschitz constant ``L``.
    """

    endpoint_maximal = False

    def __init__(self, L: float):
        if not L > 0:
            raise ValueError(f"L={L} must be positive")
        self.L = float(L)

    @property
    def n_configs(self) -> int:
        return 1

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        return 1.0 + self.L * np.maximum(np.asarray(mu, dtype=float), 0.0)

    def policy(self, mu: np.ndarray) -> np.ndarray:
        f = self(mu)
        return f / f.sum(axis=-1, keepdims=True)

    def log_derivative(self, mu: np.ndarray) -> np.ndarray:
        mu = np.asarray(mu, dtype=float)
        return np.where(mu > 0, self.L, 0.0) / self(mu)


def fair_policy(merit, mu: np.ndarray) -> np.ndarray:
    """The policy a parameter ``μ`` induces: ``π_μ(a) = f(μ_a)/Σ_a' f(μ_a')`` (Alg. 1 step 8).

    Parameters
    ----------
    merit : merit function (:class:`ExpMerit`, ...)
    mu : ndarray, shape (..., K)
        Parameter (means) with the arms on the last axis.

    Returns
    -------
    ndarray, shape (..., K), rows summing to one.
    """
    return merit.policy(np.asarray(mu, dtype=float))


def optimal_fair_policy(merit, true_means: np.ndarray) -> np.ndarray:
    """The optimal fair policy of Theorem 3.1.1 (Eq. E2): the unique policy whose exposure is
    proportional to merit, ``π*(a) = f(μ*_a) / Σ_a' f(μ*_a')``.

    Parameters
    ----------
    merit : merit function
    true_means : ndarray, shape (..., K)
        Exact arm means (MAB) or ``μ*·x_{t,a}`` (linear, one row per round).
    """
    true_means = np.asarray(true_means, dtype=float)
    if true_means.ndim == 0 or true_means.shape[-1] < 1:
        raise ValueError(f"true_means must have the arms on the last axis, got shape {true_means.shape}")
    return merit.policy(true_means)


def fairness_regret_per_round(policy: np.ndarray, optimal: np.ndarray) -> np.ndarray:
    """``fr_t = Σ_a |π*_t(a) − π_t(a)|`` (Eq. 9), in ``[0, 2]``; shape = leading axes."""
    return np.abs(policy - optimal).sum(axis=-1)


def reward_regret_per_round(policy: np.ndarray, optimal: np.ndarray, true_means: np.ndarray) -> np.ndarray:
    """``rr_t = Σ_a (π*_t(a) − π_t(a)) μ*_{t,a}`` (summand of Eq. 1 / Eq. 5); negative when the
    deployed policy is less fair but more rewarding than π*."""
    return (optimal * true_means).sum(axis=-1) - (policy * true_means).sum(axis=-1)


def sample_from_policy(policy: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling of one arm per row: the smallest ``a`` with ``Σ_{b<=a} π(b) > u``.

    Parameters
    ----------
    policy : ndarray, shape (R, G, K)
    u : ndarray, shape (R,) or (R, G)
        Uniforms in ``[0, 1)``, one per run (shared by the configurations of a run: common random
        numbers) or one per run and configuration.

    Returns
    -------
    int ndarray, shape (R, G)
    """
    u = np.asarray(u)
    if u.ndim == policy.ndim - 2:
        u = u[..., None]
    cdf = np.cumsum(policy, axis=-1)
    arms = (cdf <= u[..., None]).sum(axis=-1)
    return np.minimum(arms, policy.shape[-1] - 1)


def softmax_and_sample(y: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``π = softmax(y)`` along the last axis and one arm per row drawn from it by inverse CDF.

    The fast form used by the fair policies with ``f = exp(cμ)`` (``y = cμ``): ``y`` is
    overwritten. The normaliser is the last entry of the cumulative sum, so the sampled arm and
    ``π`` come from the same numbers.

    Parameters
    ----------
    y : ndarray, shape (R, G, K)  (modified in place)
    u : ndarray, shape (R,)

    Returns
    -------
    policy : ndarray (R, G, K); arms : int ndarray (R, G)
    """
    y -= y.max(axis=-1, keepdims=True)
    np.exp(y, out=y)
    cdf = np.cumsum(y, axis=-1)
    total = cdf[..., -1:]
    arms = np.minimum((cdf <= u[:, None, None] * total).sum(axis=-1), y.shape[-1] - 1)
    y /= total
    return y, arms


class RegretMeter:
    """Per-round fairness and reward regret of a deployed policy against the optimal fair policy.

    ``fr_t = ‖π_t − π*_t‖₁`` (Eq. 9) and ``rr_t = π*_t·m_t − π_t·m_t`` (summand of Eq. 1/5),
    where ``m_t`` are the exact arm means of the round and ``π*_t = f(m_t)/Σ f(m_t)``
    (Theorem 3.1.1). The optimal policy is recomputed only when the means array changes (the
    multi-armed environments return the same array every round).

    Parameters
    ----------
    merit : merit function with one ``c`` per configuration (or one for all)
    """

    def __init__(self, merit):
        self.merit = merit
        self._means = None

    def step(self, policy: np.ndarray, arm_means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``policy`` (R, G, K), ``arm_means`` (R, K) → ``fr``, ``rr`` each (R, G)."""
        means = arm_means[:, None, :]
        if arm_means is not self._means:
            self._means = arm_means
            self._optimal = optimal_fair_policy(self.merit, means)
            self._optimal_value = (self._optimal * means).sum(axis=-1)
        fr = fairness_regret_per_round(policy, self._optimal)
        rr = self._optimal_value - (policy * means).sum(axis=-1)
        return fr, rr

    def uniform_regret(self, arm_means: np.ndarray) -> np.ndarray:
        """The per-round reward regret of the uniform policy over the arms, ``π*_t·m_t − mean_a
        m_{t,a}``, shape (R, G); call after :meth:`step` with the same ``arm_means``."""
        if arm_means is not self._means:
            raise ValueError("uniform_regret needs the arm_means of the last step()")
        return self._optimal_value - arm_means.mean(axis=-1)[:, None]
