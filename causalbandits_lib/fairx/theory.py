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

from ..core.recorders import RecorderBase
from .merit import AffineMerit, ExpMerit, RampMerit, optimal_fair_policy

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
    "width_sum_bound",
    "azuma_width_bound",
    "UCBProofSteps",
    "LinUCBProofSteps",
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


def width_sum_bound(T, K: int):
    """The last step of Theorems 3.2.1-3.2.2 (A.4-A.5): ``Σ_{t=K+1}^T 1/√N_{t,a_t} <= 2√(TK)``
    (each arm's pulls contribute ``Σ_{n<=N_a} 1/√n <= 2√N_a``; then Cauchy-Schwarz)."""
    return 2.0 * np.sqrt(_T(T) * K)


def azuma_width_bound(T, delta: float):
    """Lemmas A.4.2 and A.6.4: ``|Σ_t E_{a~π_t} w_{t,a} − Σ_t w_{t,a_t}| <= √(2T ln(4/δ))``
    w.p. ``>= 1 − δ/2`` (Azuma-Hoeffding, widths in ``[0, 1]``)."""
    return np.sqrt(2.0 * _T(T) * np.log(4.0 / delta))


def _exp_ratio(c_column, lo, hi):
    """``L/γ`` of ``exp(cμ)`` on ``[lo, hi]`` (per run and configuration)."""
    c = np.asarray(c_column, dtype=float).reshape(-1)[None, :] if np.ndim(c_column) else float(c_column)
    return c * np.exp(c * (hi - lo))


class _ProofSteps(RecorderBase):
    """Running sums of the proof's width quantities over the rounds, kept at the horizon only."""

    keys: tuple[str, ...] = ()

    def start(self, T: int, runs: np.ndarray) -> None:
        super().start(T, runs)
        self._sums: dict[str, np.ndarray] = {}
        self._max: dict[str, np.ndarray] = {}

    def _add(self, **values) -> None:
        for k, v in values.items():
            v = np.asarray(v, dtype=float)
            self._sums[k] = self._sums[k] + v if k in self._sums else v.copy()

    def _keep_max(self, **values) -> None:
        for k, v in values.items():
            v = np.asarray(v, dtype=float)
            self._max[k] = np.maximum(self._max[k], v) if k in self._max else v.copy()

    def result(self) -> dict[str, np.ndarray]:
        """Per run and configuration (R, G): the sums (``played``, ``expected``, ``rounds``,
        ``covered``, ...) and the largest per-round ratios (``max_...``)."""
        return dict(self._sums) | {f"max_{k}": v for k, v in self._max.items()}


class UCBProofSteps(_ProofSteps):
    """The steps of Theorem 3.2.1's proof (A.5, with Lemmas A.4.1-A.4.2) measured on a FairX-UCB
    run (numpy path; the policy exposes ``counts``, ``empirical_means``, ``w0`` and ``policy``).

    Over the rounds ``t > K`` (every arm pulled once; the proof's ``2K`` covers the others) it
    sums ``played`` = ``1/√N_{t,a_t}``, ``expected`` = ``E_{a~π_t} 1/√N_{t,a}`` and counts
    ``rounds``. On the rounds whose box contains ``μ*`` (``covered``, Lemma A.4.1's event) it
    keeps the largest ratio of the round's fairness regret ``‖π_t − π*‖₁`` to the per-round step of
    A.5, ``4 (L/γ) w_0 E_{a~π_t} 1/√N_{t,a}``, with ``L/γ`` of ``exp(cμ)`` on the interval the
    round's box and ``μ*`` span (where ``μ_t`` and ``μ*`` lie; the paper's global constant does not
    exist for ``exp`` on the real line): ``max_step_ratio`` (the step holds when it is ``<= 1``).
    """

    name = "ucb_proof_steps"

    def __init__(self, merit: ExpMerit):
        if not isinstance(merit, ExpMerit):
            raise TypeError("UCBProofSteps needs the exponential merit (its L/γ on an interval)")
        self.merit = merit

    def before_decision(self, t, context, policy) -> None:
        self._counts = policy.counts.copy()
        self._mean = policy.empirical_means()

    def after_round(self, t, context, actions, feedback, policy) -> None:
        N = self._counts  # (R, G, K), before this round's pull
        live = N.min(axis=-1) > 0
        inv = 1.0 / np.sqrt(np.maximum(N, 1.0))
        pi = policy.policy
        played = np.take_along_axis(inv, np.asarray(actions)[..., None], axis=-1)[..., 0]
        expected = (pi * inv).sum(axis=-1)
        mu_star = np.asarray(feedback["arm_means"], dtype=float)[:, None, :]  # (R, 1, K)
        w0 = np.asarray(policy.w0, dtype=float).reshape(1, -1)
        width = w0[..., None] * inv
        covered = live & np.all(np.abs(self._mean - mu_star) <= width, axis=-1)
        fr = np.abs(pi - optimal_fair_policy(self.merit, mu_star)).sum(axis=-1)
        lo = np.minimum((self._mean - width).min(axis=-1), mu_star.min(axis=-1))
        hi = np.maximum((self._mean + width).max(axis=-1), mu_star.max(axis=-1))
        step = 4.0 * _exp_ratio(self.merit.c_column, lo, hi) * w0 * expected
        self._add(played=played * live, expected=expected * live, rounds=live, covered=covered)
        self._keep_max(step_ratio=np.where(covered, fr / step, 0.0))


class LinUCBProofSteps(_ProofSteps):
    """Lemmas A.6.3-A.6.5 measured on a FairX-LinUCB run (numpy path) against an environment
    with one true parameter per run (``env.thetas``, (R, d)).

    Per round, with ``Σ_t`` and ``μ̂_t`` before the round's update and the widths
    ``w_{t,a} = ‖x_{t,a}‖_{Σ_t⁻¹}``:

    - ``played`` = ``w_{t,a_t}`` and ``expected`` = ``E_{a~π_t} w_{t,a}`` (summed; Lemma A.6.4);
    - ``max_cs_ratio``: the largest ``|(μ* − μ̂_t)·x_{t,a}| / (‖μ* − μ̂_t‖_{Σ_t} w_{t,a})`` over
      arms and rounds (Lemma A.6.3 is this Cauchy-Schwarz step, ``<= 1``, with ``‖μ* − μ̂_t‖_{Σ_t}
      <= √β`` when ``μ* ∈ CR_t``);
    - ``covered``: rounds with ``μ* ∈ CR_t`` at the run's ``β`` (the premise of A.6.3 and A.6.5);
    - ``max_step_ratio``: on covered rounds, the largest ratio of ``‖π_t − π*_t‖₁`` to Lemma
      A.6.5's per-round step ``4 (L/γ) √β E_{a~π_t} w_{t,a}``, ``L/γ`` of ``exp(cμ)`` on the interval
      the round's optimistic scores range over (``μ̂·x ± √β w``) and the true scores span.
    """

    name = "linucb_proof_steps"

    def __init__(self, merit: ExpMerit, env):
        if not isinstance(merit, ExpMerit):
            raise TypeError("LinUCBProofSteps needs the exponential merit (its L/γ on an interval)")
        self.merit, self.env = merit, env

    def before_decision(self, t, context, policy) -> None:
        x = np.asarray(context, dtype=float)  # (R, K, d)
        cov = policy.state.covariance()  # Σ_t⁻¹, (R, G, d, d)
        mean = policy.state.mean  # (R, G, d)
        self._w = np.sqrt(np.maximum(np.einsum("rkd,rgde,rke->rgk", x, cov, x), 0.0))
        self._z0 = np.einsum("rkd,rgd->rgk", x, mean)
        diff = np.asarray(self.env.thetas, dtype=float)[:, None, :] - mean  # μ* − μ̂_t
        q = np.sqrt(np.einsum("rgd,rgd->rg", diff, np.linalg.solve(cov, diff[..., None])[..., 0]))
        self._q = q
        lhs = np.abs(np.einsum("rkd,rgd->rgk", x, diff))
        self._cs = (lhs / np.maximum(q[..., None] * self._w, 1e-300)).max(axis=-1)

    def after_round(self, t, context, actions, feedback, policy) -> None:
        pi = policy.policy
        w = self._w
        played = np.take_along_axis(w, np.asarray(actions)[..., None], axis=-1)[..., 0]
        expected = (pi * w).sum(axis=-1)
        sqrt_beta = np.sqrt(np.asarray(policy.beta, dtype=float)).reshape(1, -1)
        covered = self._q <= sqrt_beta
        true = np.asarray(feedback["arm_means"], dtype=float)[:, None, :]  # μ*·x, (R, 1, K)
        fr = np.abs(pi - optimal_fair_policy(self.merit, true)).sum(axis=-1)
        lo = np.minimum((self._z0 - sqrt_beta[..., None] * w).min(axis=-1), true.min(axis=-1))
        hi = np.maximum((self._z0 + sqrt_beta[..., None] * w).max(axis=-1), true.max(axis=-1))
        step = 4.0 * _exp_ratio(self.merit.c_column, lo, hi) * sqrt_beta * expected
        self._add(played=played, expected=expected, rounds=np.ones_like(played), covered=covered)
        self._keep_max(cs_ratio=self._cs, step_ratio=np.where(covered, fr / step, 0.0))


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
