"""The paper's guarantees as functions: Theorem 1 (error of CSR when a best fair arm exists),
Theorem 2 (detecting that no arm is fair) and the lemmas they rest on, evaluated exactly.

All logarithms in the phase constants are base 2 (notes, "Conventions"); ``loḡ`` is the harmonic
number. Main-text Theorem 1 prints ``ρ_k²`` in ``H̄``; Eq. (49) and the proof (Eq. 58) have ``ρ_k³``,
which is used here (notes, A14).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.checks import Verdict, check_bound_curve, informative_horizon
from .algorithms import AlgorithmConfig
from .allocation import ALL_BLOCKS, AllocationLP, harmonic, n_phases
from .estimators import clip_multiplier
from .model import FORCED_S, FORCED_S_PRIME, NATURAL, FairArmsProblem

__all__ = [
    "phase_of_gap",
    "theorem1_constants",
    "theorem1_bound",
    "theorem2_constants",
    "theorem2_bound",
    "outcome_clip_quantile",
    "fairness_clip_quantile",
    "theorem1_informative_horizon",
    "theorem2_informative_horizon",
    "lemma4_table",
    "lemma8_integer_ratio",
    "lemma8_rounding_guarantee",
    "safe_event_survival",
    "theorem7_interval",
    "lemma9_bound",
    "conditional_failure",
    "check_lemma4",
]


def phase_of_gap(gap: np.ndarray, scale: float) -> np.ndarray:
    """The phase ``l`` with ``scale/2^l < gap ≤ scale/2^{l-1}`` (Eqs. 51, 52): ``⌊log2(scale/gap)⌋ + 1``;
    ``inf`` where ``gap <= 0``.

    Derived in notebooks/bestfair/03_theory.md, section 'Theorem 1: error when a best fair arm exists' (equation
    ``bestfair-elimination-phases``).
    """
    gap = np.asarray(gap, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(gap > 0, np.floor(np.log2(scale / np.where(gap > 0, gap, 1.0))) + 1, np.inf)
    return np.maximum(out, 1.0)


def theorem1_constants(
    problem: FairArmsProblem, tolerance: float, budget: float, lp: AllocationLP | None = None
) -> dict[str, Any]:
    """The problem-dependent constants of Theorem 1 / Theorem 10 (Eqs. 49, 51-55).

    Derived in notebooks/bestfair/03_theory.md, section 'Theorem 1: error when a best fair arm exists' (equation
    ``bestfair-elimination-phases``).

    Returns a dict with ``rho`` (``ρ_k``, shape ``(K,)``, ``inf`` for ``k*``), ``rho_star``,
    ``l0``, ``v`` (``v*(B, R*(k))``), ``H_bar`` and the gaps ``Delta``, ``Delta_s_prime``,
    ``Delta_s``.

    Raises
    ------
    ValueError
        If no arm is fair (Theorem 1 assumes a best fair arm).
    """
    k_star = problem.best_fair_arm(tolerance)
    if k_star < 0:
        raise ValueError(f"no arm is {tolerance}-fair; Theorem 1 needs a best fair arm (see theorem2_bound)")
    lp = lp or AllocationLP(problem.allocation_matrices, problem.costs)
    mu, z, zr, E = problem.mu, problem.zeta, problem.zeta_reverse, tolerance
    fair = problem.fair(tolerance)
    delta = mu[k_star] - mu
    so = np.where(fair & (delta > 0), phase_of_gap(delta, 10.0), np.inf)
    f_sp = np.where(np.abs(z) >= E, phase_of_gap(np.abs(z) - E, 6.0), np.inf)
    f_s = np.where(np.abs(zr) >= E, phase_of_gap(np.abs(zr) - E, 6.0), np.inf)
    l0 = max(math.log2(5.0 / (E + sign * zeta)) for zeta in (z[k_star], zr[k_star]) for sign in (1.0, -1.0))
    l0_phase = max(1.0, math.ceil(l0))
    rho = np.minimum(np.maximum(so, l0_phase), np.minimum(f_sp, f_s))
    rho[k_star] = np.inf
    sub = fair & (delta > 0)
    unfair_sp, unfair_s = np.abs(z) >= E, np.abs(zr) >= E
    gaps = {
        "Delta": float(delta[sub].min()) if sub.any() else math.inf,
        "Delta_s_prime": float(np.minimum(np.abs(z - E), np.abs(z + E))[unfair_sp].min())
        if unfair_sp.any()
        else math.inf,
        "Delta_s": float(np.minimum(np.abs(zr - E), np.abs(zr + E))[unfair_s].min()) if unfair_s.any() else math.inf,
    }
    # a list, so that an instance with no unfair arm (no fairness gap) has a ρ* too
    rho_star = max(
        [
            math.log2(20.0 / gaps["Delta"]) if math.isfinite(gaps["Delta"]) else 0.0,
            *(math.log2(12.0 / gaps[k]) for k in ("Delta_s_prime", "Delta_s") if math.isfinite(gaps[k])),
        ]
    )
    v = np.full(problem.n_arms, np.nan)
    terms = np.full(problem.n_arms, np.nan)
    for k in np.flatnonzero(np.isfinite(rho)):
        members = rho >= rho[k]
        v[k] = lp.solve(members, budget, ALL_BLOCKS)[1]
        terms[k] = rho[k] ** 3 / (2.0 ** (-2 * rho[k]) * v[k] ** 2)
    return {
        "k_star": k_star,
        "rho": rho,
        "rho_star": float(rho_star),
        "l0": float(l0),
        "v": v,
        "H_bar": float(np.nanmax(terms)) if np.isfinite(terms).any() else math.nan,
        **gaps,
    }


def theorem1_bound(
    problem: FairArmsProblem,
    tolerance: float,
    T: int,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
) -> dict[str, float]:
    """Theorem 1: ``e(T, B) ≤ 8 K² ρ* exp(−T / (8 H̄ loḡ(n(T))))``.

    Derived in notebooks/bestfair/03_theory.md, section 'Theorem 1: error when a best fair arm exists' (equation
    ``bestfair-theorem1-bound``).

    Returns the bound (which may exceed 1), its exponent, and ``T_nonvacuous``: the budget at which
    the bound would reach 1 if ``H̄`` stayed at its value for this ``T`` (``B = 1/√T`` changes it).
    """
    config = config or AlgorithmConfig()
    c = theorem1_constants(problem, tolerance, config.budget_for(T), lp)
    n = n_phases(T, config.phase_rule)
    h = harmonic(n)
    K = problem.n_arms
    prefactor = 8.0 * K**2 * c["rho_star"]
    exponent = T / (8.0 * c["H_bar"] * h)
    return {
        "bound": float(prefactor * math.exp(-exponent)),
        "log10_bound": float(math.log10(prefactor) - exponent / math.log(10)),
        "exponent": float(exponent),
        "H_bar": c["H_bar"],
        "rho_star": c["rho_star"],
        "T_nonvacuous": float(8.0 * c["H_bar"] * h * math.log(prefactor)),
    }


def theorem2_constants(problem: FairArmsProblem, tolerance: float) -> dict[str, float]:
    """``ξ* = min_k min(||ζ_k^{s,s'}| − 𝓔|, ||ζ_k^{s',s}| − 𝓔|)`` of Theorem 2, after checking that
    every arm violates the constraint.

    Derived in notebooks/bestfair/03_theory.md, section 'Theorem 2: when no arm is fair' (equation
    ``bestfair-theorem2-bound``).
    """
    if problem.fair(tolerance).any():
        raise ValueError(f"some arm is {tolerance}-fair; Theorem 2 assumes none is")
    xi = np.minimum(np.abs(np.abs(problem.zeta) - tolerance), np.abs(np.abs(problem.zeta_reverse) - tolerance))
    return {"xi_star": float(xi.min())}


def theorem2_bound(
    problem: FairArmsProblem,
    tolerance: float,
    T: int,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
) -> dict[str, float]:
    """Theorem 2: ``P(declare no fair arm) ≥ 1 − 4 K n(T) exp(−ξ*² T v*(B)² / (32 n(T)³ loḡ(n(T))))``
    with ``v*(B) = v*(B, [K])`` (the LP value can only shrink as ``R`` grows).

    Derived in notebooks/bestfair/03_theory.md, section 'Theorem 2: when no arm is fair' (equation
    ``bestfair-theorem2-bound``).
    """
    config = config or AlgorithmConfig()
    lp = lp or AllocationLP(problem.allocation_matrices, problem.costs)
    xi = theorem2_constants(problem, tolerance)["xi_star"]
    n = n_phases(T, config.phase_rule)
    v = lp.solve(np.ones(problem.n_arms, bool), config.budget_for(T), ALL_BLOCKS)[1]
    exponent = xi**2 * T * v**2 / (32.0 * n**3 * harmonic(n))
    return {
        "lower_bound": float(1.0 - 4.0 * problem.n_arms * n * math.exp(-exponent)),
        "exponent": float(exponent),
        "xi_star": xi,
        "v_star": float(v),
    }


def _upper_quantile(values: np.ndarray, probs: np.ndarray, mass: float) -> float:
    """The smallest ``x`` with ``Σ_{values > x} probs ≤ mass``."""
    order = np.argsort(values)
    v, p = values[order], probs[order]
    tail = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])  # mass strictly above v[i]
    ok = np.flatnonzero(tail <= mass + 1e-15)
    return float(v[ok[0]]) if len(ok) else float(v[-1])


def outcome_clip_quantile(problem: FairArmsProblem, i: int, j: int, eps: float) -> float:
    """``η_ij(ε) = min{η : P_i(P_i/P_j > η) ≤ ε/2}`` (Def. 3), exactly."""
    p = problem.cell_probs[NATURAL, i]
    keep = p > 0
    values = np.concatenate([[0.0], problem.ratios[i, j][keep]])
    return _upper_quantile(values, np.concatenate([[0.0], p[keep]]), eps / 2)


def fairness_clip_quantile(problem: FairArmsProblem, i: int, j: int, eps: float, reverse: bool = False) -> float:
    """``γ_ij^{s,s'}(ε)`` (Def. 4; ``reverse`` gives ``γ^{s',s}``): the smallest ``γ`` with
    ``P_{i,s}(|w| > γ) + P_{i,s'}(|w| > γ) ≤ ε/2``, ``w = (P_i/P_j)(P_s/P_{s'} − 1)``."""
    rho = problem.rho_reverse if reverse else problem.rho
    w = np.abs(problem.ratios[i, j] * (rho - 1.0))
    p = np.concatenate([problem.cell_probs[FORCED_S, i], problem.cell_probs[FORCED_S_PRIME, i]])
    values = np.concatenate([w, w])
    keep = p > 0
    return _upper_quantile(np.concatenate([[0.0], values[keep]]), np.concatenate([[0.0], p[keep]]), eps / 2)


def theorem1_informative_horizon(
    problem: FairArmsProblem,
    tolerance: float,
    t_start: int,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
) -> int | None:
    """The smallest budget ``T >= t_start`` at which Theorem 1's bound falls below 1 (the trivial
    bound of a probability), with ``H̄`` re-evaluated at every ``T`` (``B = 1/√T``); None up to
    ``10^12`` (:func:`~causalbandits_lib.core.checks.informative_horizon`)."""
    lp = lp or AllocationLP(problem.allocation_matrices, problem.costs)
    return informative_horizon(
        lambda T: theorem1_bound(problem, tolerance, T, config, lp)["log10_bound"], lambda T: 0.0, t_start=t_start
    )


def theorem2_informative_horizon(
    problem: FairArmsProblem,
    tolerance: float,
    t_start: int,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
) -> int | None:
    """The smallest budget ``T >= t_start`` at which Theorem 2's lower bound on the probability of
    declaring "no fair arm" is above 0, i.e. its bound ``1 - lower`` on the probability of not
    declaring it is below the trivial 1; None up to ``10^12``."""
    lp = lp or AllocationLP(problem.allocation_matrices, problem.costs)
    return informative_horizon(
        lambda T: -theorem2_bound(problem, tolerance, T, config, lp)["lower_bound"], lambda T: 0.0, t_start=t_start
    )


def lemma4_table(problem: FairArmsProblem, phases: Any, columns: Any, log_base: float = 2.0) -> dict[str, np.ndarray]:
    """Lemma 4 case by case: for every phase ``l`` in ``phases``, every arm ``i``, every ``j`` in
    ``columns`` and the three weights (outcome ``η_ij`` against ``M_ij``, fairness ``γ_ij`` against
    ``D_ij`` and ``D^{s',s}_ij``), the exact quantile at ``ε = 2^{-(l-1)}``, the clip level
    ``2 log(2/ε)·div`` that Lemma 4 says dominates it, and the trivial bound on the quantile: the
    largest weight with positive probability under arm ``i`` (a clip level at or above it drops
    nothing, and the lemma then holds whatever the quantile).

    Returns
    -------
    dict of 1-d arrays ``phase``, ``quantile``, ``clip``, ``trivial`` (one entry per case).
    """
    rows = []
    for phase in phases:
        eps = 2.0 ** -(int(phase) - 1)
        mult = clip_multiplier(int(phase), log_base)
        for i in range(problem.n_arms):
            p_nat = problem.cell_probs[NATURAL, i] > 0
            p_forced = (problem.cell_probs[FORCED_S, i] > 0) | (problem.cell_probs[FORCED_S_PRIME, i] > 0)
            for j in columns:
                r = problem.ratios[i, j]
                rows.append((phase, outcome_clip_quantile(problem, i, j, eps), mult * problem.M[i, j], r[p_nat].max()))
                fair = ((False, problem.D, problem.rho), (True, problem.D_reverse, problem.rho_reverse))
                for reverse, div, rho in fair:
                    w = np.abs(r * (rho - 1.0))
                    q = fairness_clip_quantile(problem, i, j, eps, reverse)
                    rows.append((phase, q, mult * div[i, j], w[p_forced].max()))
    a = np.array(rows, dtype=float)
    return {"phase": a[:, 0], "quantile": a[:, 1], "clip": a[:, 2], "trivial": a[:, 3]}


def check_lemma4(table: dict[str, np.ndarray]) -> Verdict:
    """Lemma 4 tested case by case where it is informative: ``quantile <= clip`` wherever the clip
    level is below the trivial bound (:func:`~causalbandits_lib.core.checks.check_bound_curve`, the
    cases in place of horizons, each labelled by its phase). The details keep the counts of cases
    (all and informative) per phase, not the thousands of per-case ratios."""
    return check_bound_curve(
        table["phase"],
        table["quantile"],
        table["clip"],
        table["trivial"],
        what="clip quantile (t = phase l)",
        points="cases",
        x="case",
    )


def lemma8_integer_ratio(
    problem: FairArmsProblem, allocation: np.ndarray, remaining: np.ndarray, lp: AllocationLP, budget: float
) -> np.ndarray:
    """Lemma 8 on the pulls an algorithm actually made: for every run and phase, the smallest
    effective sample fraction of a remaining arm, ``min_{k∈R} min([A τ_Y]_k, [B τ_s]_k, [C τ_s']_k) / τ``,
    divided by ``v*(B, R)`` (the LP's value for that remaining set).

    The LP's continuous solution attains ``v*`` by construction; the algorithms pull integer counts
    (largest-remainder rounding of ``τ ν*``), which can fall below it. A ratio ``>= 1`` means the
    integer pulls keep Lemma 8's guarantee.

    Parameters
    ----------
    allocation : int ndarray, shape (n, P, 3, K)
        Pulls of each kind of each arm per phase (:attr:`.algorithms.IdentificationResult.allocation`
        of a CSR run, which uses all three kinds).
    remaining : bool ndarray, shape (n, P + 1, K)
        The remaining sets; phase ``l`` allocates over ``remaining[:, l - 1]``.

    Returns
    -------
    float ndarray, shape (n, P): NaN where the run made no pull in the phase (it had ended).
    """
    g = lemma8_rounding_guarantee(problem, allocation, remaining, lp, budget)
    return g["achieved"] / g["v_star"]


def safe_event_survival(problem: FairArmsProblem, tolerance: float, result: Any) -> dict[str, np.ndarray]:
    """Eqs. (39)-(43) on a CSR run: in which phases the safe event ``E_l`` held, and whether ``k*``
    was then kept.

    ``E_l`` (Eq. 39): every remaining arm's ``Ŷ_k`` lies in ``[μ_k − 3/2^l, μ_k + 1/2^{l−1}]`` and
    every remaining arm other than ``k*`` has both fairness estimates within ``3/2^l`` of the truth.
    The paper concludes (Eqs. 42-43) that ``k*`` is then "safe from elimination" in phase ``l``.

    Parameters
    ----------
    result : :class:`~.algorithms.IdentificationResult` of CSR-V1 or CSR-V2 (its ``estimates`` and
        ``remaining``).

    Returns
    -------
    dict with bool ndarrays of shape ``(n, P)``: ``"active"`` (the run computed estimates in the
    phase, with ``k*`` still remaining before it), ``"safe"`` (``E_l`` held) and ``"kept"`` (``k*``
    still remaining after the phase).
    """
    k_star = problem.best_fair_arm(tolerance)
    if k_star < 0:
        raise ValueError("safe_event_survival needs a problem with a best fair arm")
    est = np.asarray(result.estimates)  # (n, P, 3, K)
    rem = np.asarray(result.remaining)  # (n, P + 1, K)
    n, P = est.shape[:2]
    phase = np.arange(1, P + 1)[None, :, None]
    Y, z, zr = est[:, :, 0], est[:, :, 1], est[:, :, 2]
    before = rem[:, :-1]
    with np.errstate(invalid="ignore"):
        y_ok = (Y >= problem.mu - 3.0 / 2.0**phase) & (Y <= problem.mu + 1.0 / 2.0 ** (phase - 1))
        z_ok = (np.abs(z - problem.zeta) < 3.0 / 2.0**phase) & (np.abs(zr - problem.zeta_reverse) < 3.0 / 2.0**phase)
    z_ok[:, :, k_star] = True
    computed = ~np.isnan(Y).all(axis=2)
    active = computed & before[:, :, k_star]
    safe = active & np.all(~before | (y_ok & z_ok), axis=2)
    return {"active": active, "safe": safe, "kept": rem[:, 1:, k_star]}


def theorem7_interval(
    truth: np.ndarray,
    effective_fraction: np.ndarray,
    tau: int,
    phase: int,
    alpha: float,
    which: str,
    log_base: float = 2.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The interval Theorem 7 (Eqs. 32, 33; Theorem 5 for one source arm) guarantees with
    probability at least ``1 − alpha``.

    Solving ``2 exp(−δ² τ (Z_k/τ)² / (c log(2/ε)²)) = alpha`` for ``δ`` gives
    ``δ = log(2/ε) √(c ln(2/alpha)) / ((Z_k/τ) √τ)``, with ``c = 8`` for the outcome and ``c = 32``
    for a fairness gap, and ``ε = 2^{-(phase−1)}``. The interval is ``[μ − δ − ε/2, μ + δ]`` for the
    outcome and ``[ζ − δ − ε/2, ζ + δ + ε/2]`` for a fairness gap. (Eq. 27 prints ``D`` where Eq. 15
    with Lemma 4's ``γ ≤ 2 log(2/ε) D`` gives ``D²``; Eq. 33, through ``O_k/τ = 1/D``, also squares
    it: ``D²`` is used.) ``log`` has base ``log_base`` as the clip level does.

    Parameters
    ----------
    truth : ndarray, shape (K,)
        ``μ_k`` or ``ζ_k``.
    effective_fraction : ndarray, shape (K,)
        ``Z_k/τ`` (``O_k/τ_{s'}``); for pulls of one arm ``j`` only, ``1/M_kj`` (``1/D_kj``).
    which : {"outcome", "fairness"}

    Returns
    -------
    low, high, informative : ndarrays of shape (K,); ``informative`` where the interval is narrower
    than the range of the estimated quantity (1 for ``μ``, 2 for ``ζ``).
    """
    if which not in ("outcome", "fairness"):
        raise ValueError(f"which={which!r}; allowed are 'outcome' and 'fairness'")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} must be in (0, 1)")
    eps = 2.0 ** -(int(phase) - 1)
    log_term = clip_multiplier(phase, log_base) / 2.0
    c = 8.0 if which == "outcome" else 32.0
    delta = log_term * math.sqrt(c * math.log(2.0 / alpha)) / (np.asarray(effective_fraction, float) * math.sqrt(tau))
    truth = np.asarray(truth, dtype=float)
    if which == "outcome":
        low, high, span = truth - delta - eps / 2, truth + delta, 1.0
    else:
        low, high, span = truth - delta - eps / 2, truth + delta + eps / 2, 2.0
    return low, high, (high - low) < span


def lemma9_bound(
    problem: FairArmsProblem, T: int, config: AlgorithmConfig | None = None, lp: AllocationLP | None = None
) -> np.ndarray:
    """Lemma 9's bound on ``C_l = P(E_l^c | E_{1:l-1})`` for every phase ``l`` of a budget of ``T``
    pulls, ``6 |R*(l)| exp(−2^{−2(l−1)} τ(l) v*(B, R(l))² / (32 l²))`` (Eq. 44), evaluated at its
    largest: ``|R*(l)| = K`` and ``R(l) = [K]`` (``v*`` can only shrink as ``R`` grows), so a
    measured ``C_l`` above it would contradict the lemma for any remaining sets. Returns shape ``(n(T),)``.
    """
    from .allocation import phase_budgets

    config = config or AlgorithmConfig()
    lp = lp or AllocationLP(problem.allocation_matrices, problem.costs)
    P = n_phases(T, config.phase_rule)
    tau = phase_budgets(T, P)
    _, v = lp.solve(np.ones(problem.n_arms, dtype=bool), config.budget_for(T), ALL_BLOCKS)
    phase = np.arange(1, P + 1, dtype=float)
    return 6.0 * problem.n_arms * np.exp(-(2.0 ** (-2.0 * (phase - 1))) * tau * v**2 / (32.0 * phase**2))


def conditional_failure(safe: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Measured ``P(E_l^c | E_{1:l-1})`` per phase from per-run, per-phase indicators (shape
    ``(n, P)``): among the runs active in phase ``l`` whose earlier active phases were all safe, the
    fraction in which ``E_l`` failed. Returns the fractions (NaN where no run qualifies) and the
    numbers of qualifying runs."""
    safe, active = np.asarray(safe, bool), np.asarray(active, bool)
    ok_before = np.cumprod(np.c_[np.ones(len(safe), bool), safe | ~active][:, :-1], axis=1).astype(bool)
    cond = active & ok_before
    n = cond.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(n > 0, (cond & ~safe).sum(axis=0) / np.maximum(n, 1), np.nan)
    return frac, n


def lemma8_rounding_guarantee(
    problem: FairArmsProblem, allocation: np.ndarray, remaining: np.ndarray, lp: AllocationLP, budget: float
) -> dict[str, np.ndarray]:
    """Lemma 8 with whole pulls: what the pulls achieved against what rounding ``τ ν*`` guarantees.

    For every run and phase with pulls: ``achieved = min_{k∈R} min_b [W_b n_b]_k / τ`` (the smallest
    effective sample fraction of the integer pulls ``n``) and ``guaranteed = min_{k∈R} min_b
    Σ_j W_b[k, j] max(τ ν*_bj − 1, 0) / τ``, with ``ν*`` ALLOCATE's solution for that remaining set:
    any rounding that gives each entry at least ``⌊τ ν*_bj⌋`` pulls (largest remainders does)
    achieves at least ``guaranteed``, and ``guaranteed → v*`` as ``τ`` grows. ``achieved <
    guaranteed`` would mean the pulls did not follow ALLOCATE's solution. Also ``v_star``.

    Returns
    -------
    dict of float arrays ``achieved``, ``guaranteed``, ``v_star``, each shape (n, P), NaN where the
    run made no pull in the phase.
    """
    alloc = np.asarray(allocation, dtype=float)
    rem = np.asarray(remaining, dtype=bool)
    n, P = alloc.shape[:2]
    if alloc.shape[2:] != (3, problem.n_arms) or rem.shape != (n, P + 1, problem.n_arms):
        raise ValueError(
            f"allocation {alloc.shape} and remaining {rem.shape} do not match (n, P, 3, K) and (n, P + 1, K)"
        )
    W = problem.allocation_matrices
    out = {k: np.full((n, P), np.nan) for k in ("achieved", "guaranteed", "v_star")}
    for i in range(n):
        for p in range(P):
            tau = alloc[i, p].sum()
            if tau == 0:
                continue
            R = rem[i, p]
            nu, v_star = lp.solve(R, budget, ALL_BLOCKS)
            nu = np.where(nu < 1e-9, 0.0, nu)
            nu = nu / nu.sum()
            floor_bound = np.maximum(tau * nu - 1.0, 0.0)
            eff = np.stack([W[b] @ alloc[i, p, b] for b in range(3)])[:, R] / tau
            low = np.stack([W[b] @ floor_bound[b] for b in range(3)])[:, R] / tau
            out["achieved"][i, p] = float(eff.min())
            out["guaranteed"][i, p] = float(low.min())
            out["v_star"][i, p] = v_star
    return out
