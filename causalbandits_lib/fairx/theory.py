"""The paper's regret bounds as functions of the horizon, and its two lower-bound constructions.

Upper bounds (explicit forms from the appendix proofs; numbering of the notes' §4):

- (B1) FairX-UCB fairness regret, Theorem 3.2.1 / A.5;
- (B2) FairX-UCB reward regret, Theorem 3.2.2 / A.4;
- (B3) FairX-LinUCB fairness regret, Theorem 4.2.1 / Prop. A.6.2, with ``β_T`` of Prop. A.6.1 (E9);
- (B4) FairX-LinUCB reward regret, Theorem 4.2.2;
- (B5) FairX-LinTS Bayesian fairness regret, Theorem 4.3.1 / A.8 (FairX-TS: ``d = K``, Thm 3.3.1);
- (B6) FairX-LinTS Bayesian reward regret, Theorem 4.3.2 / A.8.1.

``L_over_gamma`` is ``L/γ`` of Conditions 3.1.2-3.1.3: for ``f = exp(cμ)`` on ``[0, 1]`` it is
``c·e^c`` (:func:`exp_merit_ratio`), which makes the bounds vacuous (larger than the trivial
``2T``) for the paper's ``c`` at its horizons; the notebooks show the rate, not the level.

Lower bounds (Theorems 3.1.4 and 3.1.5): two-armed Gaussian instances (variance 1/2) that no
algorithm can tell apart in ``T`` rounds, with optimal fair policies far apart, so that
``E[FR¹_T/T] + E[FR²_T/T] >= e^{-1}/12 ≈ 0.0307`` for *every* algorithm.
"""

from __future__ import annotations

import numpy as np

from .merit import AffineMerit, RampMerit

__all__ = [
    "exp_merit_ratio",
    "theory_width",
    "fairx_ucb_fairness_bound",
    "fairx_ucb_reward_bound",
    "linucb_beta",
    "fairx_linucb_fairness_bound",
    "fairx_linucb_reward_bound",
    "fairx_lints_fairness_bound",
    "fairx_lints_reward_bound",
    "bound_ratio_d_exponent",
    "elliptical_potential",
    "ellipsoid_coverage",
    "LowerBoundPair",
    "min_merit_lower_bound_pair",
    "lipschitz_lower_bound_pair",
]


def _T(T):
    T = np.asarray(T, dtype=float)
    if np.any(T < 1):
        raise ValueError("T must be at least 1")
    return T


def exp_merit_ratio(c, lo: float = 0.0, hi: float = 1.0):
    """``L/γ`` of ``f = exp(cμ)`` on ``[lo, hi]``: ``c·e^{c·hi}/e^{c·lo}``."""
    c = np.asarray(c, dtype=float)
    return c * np.exp(c * (hi - lo))


def theory_width(T, K: int, delta: float):
    """``w_0 = √(2 ln(4TK/δ))`` of Theorems 3.2.1-3.2.2."""
    return np.sqrt(2.0 * np.log(4.0 * _T(T) * K / delta))


def fairx_ucb_fairness_bound(T, K: int, delta: float, L_over_gamma):
    """(B1): ``FR_T <= 2K + (4L/γ)√(2 ln(4TK/δ)) (√(2T ln(4/δ)) + 2√(TK))`` w.p. ``>= 1 − δ``."""
    T = _T(T)
    return 2 * K + 4 * L_over_gamma * np.sqrt(2 * np.log(4 * T * K / delta)) * (
        np.sqrt(2 * T * np.log(4 / delta)) + 2 * np.sqrt(T * K)
    )


def fairx_ucb_reward_bound(T, K: int, delta: float):
    """(B2): ``RR_T <= 2K + 2√(2 ln(4TK/δ)) (√(2T ln(4/δ)) + 2√(TK))`` (no merit condition)."""
    T = _T(T)
    return 2 * K + 2 * np.sqrt(2 * np.log(4 * T * K / delta)) * (
        np.sqrt(2 * T * np.log(4 / delta)) + 2 * np.sqrt(T * K)
    )


def linucb_beta(t, d: int, delta: float, W: float = 1.0):
    """(E9), Prop. A.6.1: ``β_t = (W + √(d ln(1 + t/d) + 2 ln(π² t²/(3δ))))²`` (λ = 1)."""
    t = _T(t)
    return (W + np.sqrt(d * np.log(1 + t / d) + 2 * np.log(np.pi**2 * t**2 / (3 * delta)))) ** 2


def fairx_linucb_fairness_bound(T, d: int, delta: float, L_over_gamma, W: float = 1.0):
    """(B3) = (P10): ``(4L√β_T/γ)(√(2Td ln(1 + T/d)) + √(2T ln(4/δ)))``."""
    T = _T(T)
    return (
        4
        * L_over_gamma
        * np.sqrt(linucb_beta(T, d, delta, W))
        * (np.sqrt(2 * T * d * np.log(1 + T / d)) + np.sqrt(2 * T * np.log(4 / delta)))
    )


def fairx_linucb_reward_bound(T, d: int, delta: float, W: float = 1.0):
    """(B4): ``2√β_T (√(2Td ln(1 + T/d)) + 2√(2T ln(4/δ)))``."""
    T = _T(T)
    return (
        2
        * np.sqrt(linucb_beta(T, d, delta, W))
        * (np.sqrt(2 * T * d * np.log(1 + T / d)) + 2 * np.sqrt(2 * T * np.log(4 / delta)))
    )


def fairx_lints_fairness_bound(T, d: int, K: int, L_over_gamma):
    """(B5), Theorem 4.3.1 (FairX-TS: ``d = K``, Theorem 3.3.1), with ``δ' = 1/(KT)``:

    ``(4L/γ)(1 + √(2 ln(KT/δ')))(√(2Td ln(1 + T/d)) + √(2T ln(4T)) + 1) + (4L/γ)√K(√(Tδ') + δ')``.
    """
    T = _T(T)
    dp = 1.0 / (K * T)
    main = (1 + np.sqrt(2 * np.log(K * T / dp))) * (
        np.sqrt(2 * T * d * np.log(1 + T / d)) + np.sqrt(2 * T * np.log(4 * T)) + 1
    )
    return 4 * L_over_gamma * (main + np.sqrt(K) * (np.sqrt(T * dp) + dp))


def fairx_lints_reward_bound(T, d: int):
    """(B6), Theorem 4.3.2, with ``W = √(2d ln(Td))`` and ``δ = 1/T``."""
    T = _T(T)
    W = np.sqrt(2 * d * np.log(T * d))
    delta = 1.0 / T
    root = np.sqrt(d * np.log(1 + T / d) + 2 * np.log(T**2 * np.pi**2 / (3 * delta)))
    tail = np.exp(-(W**2) / (2 * d))
    return (
        2 * (W + root) * (np.sqrt(2 * T * d * np.log(1 + T / d)) + 2 * np.sqrt(2 * T * np.log(4 / delta)))
        + 4 * T * d * tail * root
        + 2 * T * d * np.sqrt(2 * tail)
        + delta * T * (2 * d * np.sqrt(2 * tail) + 2 * W)
    )


def bound_ratio_d_exponent(T, d_lo: int, d_hi: int, K: int, delta: float) -> float:
    """The exponent of ``d`` in the ratio (B3)/(B5) of FairX-LinUCB's to FairX-LinTS's fairness
    bound at horizon ``T``: ``log(r(d_hi)/r(d_lo)) / log(d_hi/d_lo)`` (``L/γ`` cancels). §4.3 says
    the Bayesian bound is ``√d`` tighter, an exponent of 1/2 up to the log factors that ``Õ`` hides
    (``ln(1 + T/d)`` inside ``β_T`` depends on ``d``, so at finite ``T`` the exponent is smaller)."""
    r = [
        float(fairx_linucb_fairness_bound(T, d, delta, 1.0) / fairx_lints_fairness_bound(T, d, K, 1.0))
        for d in (d_lo, d_hi)
    ]
    return float(np.log(r[1] / r[0]) / np.log(d_hi / d_lo))


def elliptical_potential(X: np.ndarray) -> dict[str, np.ndarray]:
    """The quantities of Lemmas A.6.6-A.6.8 along a sequence of played contexts ``X`` (T, d), with
    ``Σ_1 = I`` and ``Σ_{t+1} = Σ_t + x_t x_tᵀ``.

    Returns, for ``t = 1..T``: ``w2`` (``w_t² = x_tᵀ Σ_t⁻¹ x_t``), ``sum_w2`` (``Σ_{τ<=t} w_τ²``),
    ``log_prod`` (``Σ_{τ<=t} ln(1 + w_τ²)``, Lemma A.6.6's ``ln det Σ_{t+1}``), ``log_det``
    (``ln det Σ_{t+1}`` computed directly), ``log_det_bound`` (``d ln(1 + t/d)``, Lemma A.6.7) and
    ``potential_bound`` (``2d ln(1 + t/d)``, Lemma A.6.8, which needs ``w² <= 1``, i.e. ``‖x‖ <= 1``).
    """
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    inv = np.eye(d)
    w2 = np.empty(T)
    log_det = np.empty(T)
    gram = np.eye(d)
    for t in range(T):
        x = X[t]
        v = inv @ x
        w2[t] = float(x @ v)
        inv -= np.outer(v, v) / (1.0 + w2[t])  # Sherman-Morrison
        gram += np.outer(x, x)
        log_det[t] = np.linalg.slogdet(gram)[1]
    steps = np.arange(1, T + 1, dtype=float)
    return {
        "w2": w2,
        "sum_w2": np.cumsum(w2),
        "log_prod": np.cumsum(np.log1p(w2)),
        "log_det": log_det,
        "log_det_bound": d * np.log1p(steps / d),
        "potential_bound": 2 * d * np.log1p(steps / d),
    }


def ellipsoid_coverage(
    d: int, T: int, n_runs: int, delta: float, rng: np.random.Generator, W: float = 1.0
) -> np.ndarray:
    """Does FairX-LinUCB's ellipsoid ``{μ: ‖μ − μ̂_t‖_{Σ_t} <= √β_t}`` (Prop. A.6.1, ``λ = 1``,
    ``β_t`` of :func:`linucb_beta`) contain ``μ*`` in every round ``t = 1..T``?

    Per run: ``μ*`` uniform on the sphere of radius ``W`` (the largest norm the proposition allows),
    contexts uniform on the unit sphere (any sequence is allowed: the bound is uniform over them),
    rewards ``μ*·x + η`` with ``η ~ N(0, 1)`` (1-sub-Gaussian). ``Σ_t`` and ``μ̂_t`` use the first
    ``t - 1`` observations. Returns, per run, whether the ellipsoid covered ``μ*`` at every round
    (shape ``(n_runs,)``)."""
    R = int(n_runs)
    theta = rng.normal(size=(R, d))
    theta *= W / np.linalg.norm(theta, axis=1, keepdims=True)
    gram = np.broadcast_to(np.eye(d), (R, d, d)).copy()
    inv = gram.copy()
    b = np.zeros((R, d))
    covered = np.ones(R, dtype=bool)
    for t in range(1, int(T) + 1):
        diff = np.einsum("rij,rj->ri", inv, b) - theta  # μ̂_t − μ* from t − 1 observations
        q = np.einsum("ri,rij,rj->r", diff, gram, diff)
        covered &= q <= float(linucb_beta(t, d, delta, W))
        x = rng.normal(size=(R, d))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        r = np.einsum("ri,ri->r", theta, x) + rng.normal(size=R)
        v = np.einsum("rij,rj->ri", inv, x)
        inv -= np.einsum("ri,rj->rij", v, v) / (1.0 + np.einsum("ri,ri->r", x, v))[:, None, None]
        gram += np.einsum("ri,rj->rij", x, x)
        b += r[:, None] * x
    return covered


class LowerBoundPair:
    """Two two-armed Gaussian instances (variance 1/2) and a merit function.

    Attributes
    ----------
    means : tuple of two ndarrays (2,)
    merit : merit function
    sd : float
        Reward standard deviation (``√(1/2)``).
    bound : float
        The lower bound on ``E[FR¹/T] + E[FR²/T]`` from Bretagnolle-Huber.
    """

    def __init__(self, means, merit, bound: float, description: str):
        self.means = tuple(np.asarray(m, dtype=float) for m in means)
        self.merit = merit
        self.sd = float(np.sqrt(0.5))
        self.bound = float(bound)
        self.description = description

    def optimal_policies(self):
        return tuple(self.merit.policy(m) for m in self.means)

    def kl_per_pull(self) -> float:
        """``KL(N(a, 1/2), N(b, 1/2)) = (a − b)²`` for the arm whose mean differs."""
        return float(np.max((self.means[0] - self.means[1]) ** 2))


def min_merit_lower_bound_pair(T: int) -> LowerBoundPair:
    """Theorem 3.1.4: means ``(θ, 2θ)`` and ``(2θ, 2θ)``, ``θ = 1/√T``, identity merit (floored at
    ``1/√T``, so ``γ = 1/√T`` and ``L = 1``). ``π*¹ = (1/3, 2/3)``, ``π*² = (1/2, 1/2)``; the bound is
    ``e^{−θ²T}/12 = e^{−1}/12``."""
    theta = 1.0 / np.sqrt(_T(T))
    return LowerBoundPair(
        ([theta, 2 * theta], [2 * theta, 2 * theta]),
        AffineMerit(0.0, floor=theta),
        np.exp(-(theta**2) * T) / 12.0,
        "γ → 0: identity merit, θ = 1/√T",
    )


def lipschitz_lower_bound_pair(T: int) -> LowerBoundPair:
    """Theorem 3.1.5: means ``(θ, 0)`` and ``(0, 0)``, ``θ = 1/√T``, merit ``1 + Lμ`` above 0
    with ``L = √T`` (minimum merit 1). ``π*¹ = (2/3, 1/3)``; the bound is
    ``Lθ e^{−θ²T}/(4Lθ + 8) = e^{−1}/12``."""
    T = float(_T(T))
    theta = 1.0 / np.sqrt(T)
    L = np.sqrt(T)
    return LowerBoundPair(
        ([theta, 0.0], [0.0, 0.0]),
        RampMerit(L),
        L * theta * np.exp(-(theta**2) * T) / (4 * L * theta + 8),
        "L → ∞: ramp merit with L = √T, θ = 1/√T",
    )
