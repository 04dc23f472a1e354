"""The regret bounds of D-UCB and F-UCB (Huang, Zhang and Wu, AAAI 2022, Theorems 1 and 3),
as printed and as their own proofs support them.

All logarithms are natural. ``n_cells`` is ``|W|``, the *domain size* of the d-separation set.

Theorem 1 (D-UCB, Eq. 15): with probability at least
``1 − 2δT|W| − exp(−|W| log³T / (32 log(1/δ)))``,
``R_T ≤ sqrt(|W| T log T log T) + sqrt(32 |W| T log(1/δ))``.
The proof applies Azuma's inequality to a martingale with squared increments at most
``32 log(1/δ)`` at ``ε = sqrt(|W| T) log T``, which gives ``exp(−|W| log²T / (64 log(1/δ)))``, not
the printed term (``corrected`` below). With ``δ = 1/T²`` the corrected term is
``exp(−|W| log T / 128)``: about 0.45 for ``|W| = 12`` and ``T = 5000``.

Theorem 3 (F-UCB): with ``δ_E = 4|W|Tδ``, ``α_c = 1`` and ``α_r = 2/(τ − Δ_π0)``, with probability
at least ``1 − δ_E``,
``R_T ≤ (2/(τ − Δ_π0) + 1)(2 sqrt(2T|W| log(1/δ_E)) + 4 sqrt(T log(2/δ_E) log(1/δ_E)))``.
The proof's optimism step needs ``(τ − Δ_π0)(α_r − 1) ≥ 1 + α_c``, which the printed ``α_r``
violates; the smallest admissible value is ``α_r = 1 + (1 + α_c)/(τ − Δ_π0)``. The proof's
confidence radius uses ``log(1/δ)`` with ``δ = δ_E/(4|W|T)``, where the statement writes
``log(1/δ_E)``. The corrected bound makes both repairs.

Theorem 2's bounds against the trivial ones (ours, notebooks ``fucb/03`` and ``fucb/05``): without
the theorem, ``μ_{a,s*}`` is still a mixture of the cell means an arm can reach, so it lies between
their smallest and largest (:func:`arm_cell_range`); :func:`check_interval_bounds` tests the bounds only
where they are narrower than that.

Eq. 12's radius at its best (ours, notebook ``fucb/03``): with ``t`` observations spread over an
arm's cells, ``Σ_k w_k sqrt(8 log(1/δ_t)/N_k)`` with ``δ_t = 1/t²`` is smallest when the counts are
split in proportion to ``w_k^{2/3}``, where it equals ``sqrt(16 ln t / t) (Σ_k w_k^{2/3})^{3/2}``
(Hölder's inequality): :func:`smallest_discrepancy_radius`.
"""

from __future__ import annotations

import numpy as np

from ..core import checks

__all__ = [
    "theorem1_bound",
    "theorem1_probability",
    "corollary1_bound",
    "corollary1_probability",
    "theorem3_alpha_condition",
    "theorem3_alpha_r",
    "theorem3_bound",
    "proposition2_bound",
    "domain_size",
    "smallest_discrepancy_radius",
    "arm_cell_range",
    "check_interval_bounds",
    "VERSIONS",
]

VERSIONS = ("printed", "corrected")


def _check(n_cells, T, **probs):
    n_cells = np.asarray(n_cells, dtype=float)
    T = np.asarray(T, dtype=float)
    if np.any(n_cells < 1):
        raise ValueError(f"n_cells={n_cells} must be >= 1 (the domain size of W)")
    if np.any(T < 2):
        raise ValueError(f"T={T} must be >= 2 (the bounds contain log T)")
    for name, p in probs.items():
        p = np.asarray(p, dtype=float)
        if np.any((p <= 0) | (p >= 1)):
            raise ValueError(f"{name}={p} must lie strictly between 0 and 1")
    return n_cells, T


def _version(version: str) -> None:
    if version not in VERSIONS:
        raise ValueError(f"version={version!r} is not allowed; use one of {VERSIONS}")


def theorem1_bound(n_cells, T, delta) -> np.ndarray:
    """Eq. 15: ``sqrt(|W| T log T log T) + sqrt(32 |W| T log(1/δ))`` (same in both versions).

    Derived in notebooks/fucb/02_regret_bounds.md, section 'Theorem 1' (equation ``fucb-eq15-theorem1-bound``).
    """
    n_cells, T = _check(n_cells, T, delta=delta)
    return np.sqrt(n_cells * T) * np.log(T) + np.sqrt(32.0 * n_cells * T * np.log(1.0 / np.asarray(delta, dtype=float)))


def theorem1_probability(n_cells, T, delta, version: str = "printed") -> np.ndarray:
    """The probability with which Theorem 1 holds: ``1 − 2δT|W| − exp(−|W| log³T/(32 log(1/δ)))``
    as printed, ``1 − 2δT|W| − exp(−|W| log²T/(64 log(1/δ)))`` as the proof's Azuma step gives.
    May be negative (then the statement is empty).

    Derived in notebooks/fucb/02_regret_bounds.md, section 'Theorem 1' (equation ``fucb-eq15-theorem1-bound``).
    """
    _version(version)
    n_cells, T = _check(n_cells, T, delta=delta)
    delta = np.asarray(delta, dtype=float)
    li = np.log(1.0 / delta)
    if version == "printed":
        tail = np.exp(-n_cells * np.log(T) ** 3 / (32.0 * li))
    else:
        tail = np.exp(-n_cells * np.log(T) ** 2 / (64.0 * li))
    return 1.0 - 2.0 * delta * T * n_cells - tail


def corollary1_bound(n_cells, T) -> np.ndarray:
    """Corollary 1 (``δ = 1/T²``): ``16 sqrt(|W| T log T) log T``."""
    n_cells, T = _check(n_cells, T)
    return 16.0 * np.sqrt(n_cells * T * np.log(T)) * np.log(T)


def corollary1_probability(n_cells, T, version: str = "printed") -> np.ndarray:
    """Corollary 1's probability: ``1 − 2|W|/T − exp(−|W| log²T/64)`` as printed;
    ``1 − 2|W|/T − exp(−|W| log T/128)`` from the corrected Theorem 1 at ``δ = 1/T²``."""
    _version(version)
    n_cells, T = _check(n_cells, T)
    tail = np.exp(-n_cells * np.log(T) ** 2 / 64.0) if version == "printed" else np.exp(-n_cells * np.log(T) / 128.0)
    return 1.0 - 2.0 * n_cells / T - tail


def theorem3_alpha_condition(alpha_r, alpha_c, tau, delta0) -> np.ndarray:
    """``(τ − Δ_π0)(α_r − 1) − (1 + α_c)``: the optimism step of Theorem 3's proof needs it ``>= 0``.

    Derived in notebooks/fucb/02_regret_bounds.md, section 'Theorem 3' (equation
    ``fucb-theorem3-optimism-condition``).
    """
    return (np.asarray(tau, dtype=float) - delta0) * (np.asarray(alpha_r, dtype=float) - 1.0) - (
        1.0 + np.asarray(alpha_c, dtype=float)
    )


def theorem3_alpha_r(tau, delta0, alpha_c: float = 1.0, version: str = "printed") -> np.ndarray:
    """``α_r``: ``2/(τ − Δ_π0)`` as printed; ``1 + (1 + α_c)/(τ − Δ_π0)`` (the smallest value the
    proof admits) as corrected.

    Derived in notebooks/fucb/02_regret_bounds.md, section 'Theorem 3' (equation ``fucb-theorem3-bound``).
    """
    _version(version)
    gap = np.asarray(tau, dtype=float) - delta0
    if np.any(gap <= 0):
        raise ValueError(f"tau={tau} must exceed the safe policy's discrepancy delta0={delta0}")
    return 2.0 / gap if version == "printed" else 1.0 + (1.0 + alpha_c) / gap


def theorem3_bound(n_cells, T, tau, delta0=0.0, delta_E=None, version: str = "printed") -> np.ndarray:
    """Theorem 3's bound on F-UCB's regret.

    Derived in notebooks/fucb/02_regret_bounds.md, section 'Theorem 3' (equation ``fucb-theorem3-bound``).

    Parameters
    ----------
    n_cells : |W|
    T : horizon (array allowed)
    tau : fairness threshold
    delta0 : discrepancy ``Δ_π0`` of the safe policy (``< tau``)
    delta_E : overall failure probability (default ``1/T²``, as in the paper's Õ statement)
    version : {"printed", "corrected"}
        ``printed``: ``(2/(τ−Δ_π0) + 1)(2 sqrt(2T|W| log(1/δ_E)) + 4 sqrt(T log(2/δ_E) log(1/δ_E)))``;
        ``corrected``: ``(α_r + 1)(2 sqrt(2T|W| log(1/δ)) + 4 sqrt(T log(2/δ_E) log(1/δ)))`` with
        ``α_r = 1 + 2/(τ − Δ_π0)`` and ``δ = δ_E/(4|W|T)``.
    """
    _version(version)
    n_cells, T = _check(n_cells, T)
    delta_E = 1.0 / T**2 if delta_E is None else np.asarray(delta_E, dtype=float)
    _check(n_cells, T, delta_E=delta_E)
    alpha_r = theorem3_alpha_r(tau, delta0, 1.0, version)
    li_E = np.log(1.0 / delta_E)
    li = li_E if version == "printed" else np.log(4.0 * n_cells * T / delta_E)
    width = 2.0 * np.sqrt(2.0 * T * n_cells * li) + 4.0 * np.sqrt(T * np.log(2.0 / delta_E) * li)
    return (alpha_r + 1.0) * width


def proposition2_bound(n_cells, T, delta, alpha_r=1.0) -> np.ndarray:
    """Proposition 2 (App. D): with ``δ_E = 4|W|Tδ``, with probability at least ``1 − δ_E/2``,
    ``Σ_t (E_{π_t}[UCB_a(t)] − E_{π_t}[μ_a]) ≤ (α_r + 1)(2 sqrt(2T|W| log(1/δ)) + 4 sqrt(T log(2/δ_E) log(1/δ)))``.

    ``delta`` is the per-cell confidence level ``δ`` of the radii (``δ_E`` follows from it);
    ``α_r = 1`` is D-UCB. Raises when ``δ_E >= 1`` (the statement is then empty)."""
    n_cells, T = _check(n_cells, T, delta=delta)
    delta = np.asarray(delta, dtype=float)
    delta_E = 4.0 * n_cells * T * delta
    if np.any(delta_E >= 1):
        raise ValueError(f"delta_E = 4|W|T delta = {delta_E} must be < 1")
    alpha_r = np.asarray(alpha_r, dtype=float)
    if np.any(alpha_r < 1):
        raise ValueError(f"alpha_r={alpha_r} must be >= 1")
    li = np.log(1.0 / delta)
    width = 2.0 * np.sqrt(2.0 * T * n_cells * li) + 4.0 * np.sqrt(T * np.log(2.0 / delta_E) * li)
    return (alpha_r + 1.0) * width


def domain_size(cards, nodes) -> int:
    """The number of joint values of ``nodes`` (``cards`` maps a node to its number of values)."""
    out = 1
    for n in nodes:
        if int(cards[n]) < 1:
            raise ValueError(f"node {n!r} has {cards[n]} values")
        out *= int(cards[n])
    return out


def smallest_discrepancy_radius(weights, t) -> np.ndarray:
    """The smallest radius of ``UCB_Δ`` (Eq. 12, ``δ_t = 1/t²``) that any allocation of ``t``
    observations to an arm's cells reaches, over all arms:
    ``sqrt(16 ln t / t) · min_a (Σ_k w_{a,k}^{2/3})^{3/2}`` (see the module docstring).

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'What an estimate can show' (equation
    ``fucb-eq12-discrepancy-radius``).

    Parameters
    ----------
    weights : ndarray, shape (..., n_cells)
        The cell weights of every (context, arm): ``P(k | x, a)`` for Eq. 12 as printed, or
        ``|P(k | s+, ·) − P(k | s−, ·)|`` for the propagated radius.
    t : int or ndarray
        Rounds (an array gives one value per round).
    """
    return np.sqrt(16 * np.log(t) / t) * ((weights ** (2 / 3)).sum(axis=-1) ** 1.5).min()


def arm_cell_range(probs, cell_means) -> tuple[np.ndarray, np.ndarray]:
    """The trivial bounds on any mixture of the cells an arm can reach: the smallest and largest
    ``cell_means[k]`` over the cells ``k`` with ``probs[x, a, k] > 0`` for some context ``x``.

    Parameters
    ----------
    probs : ndarray, shape (n_contexts, n_arms, n_cells)
    cell_means : ndarray, shape (n_cells,) (NaN for a cell of probability zero, which no arm reaches)

    Returns
    -------
    lower, upper : ndarray, shape (n_arms,)
    """
    probs = np.asarray(probs, dtype=float)
    m = np.asarray(cell_means, dtype=float)
    reach = (probs > 0).any(axis=0) & ~np.isnan(m)  # (n_arms, n_cells)
    if not reach.any(axis=1).all():
        raise ValueError("every arm must reach at least one cell of known mean")
    return np.where(reach, m, np.inf).min(axis=1), np.where(reach, m, -np.inf).max(axis=1)


def check_interval_bounds(
    true, lower, upper, trivial_lower, trivial_upper, what: str = "true value", tol: float = 1e-12
):
    """Bounds ``lower <= true <= upper`` (arrays of one shape) tested where they say more than the
    trivial ``[trivial_lower, trivial_upper]`` (broadcastable to that shape).

    Each side is a bound of its own: the upper one on ``true − trivial_lower`` against the trivial
    ``trivial_upper − trivial_lower``, the lower one on ``trivial_upper − true`` against the same, so
    :func:`~causalbandits_lib.core.checks.check_bound_curve` tests it only in the cases (numbered
    0, 1, ... in place of horizons, upper sides first) where it is narrower than the trivial range,
    and says ``not testable here`` (vacuous) when none is. ``tol`` absorbs rounding.
    """
    shape = np.shape(true)
    true, lo, hi = (np.broadcast_to(np.asarray(x, dtype=float), shape).ravel() for x in (true, lower, upper))
    tlo, thi = (np.broadcast_to(np.asarray(x, dtype=float), shape).ravel() for x in (trivial_lower, trivial_upper))
    span = np.maximum(thi - tlo, tol)
    measured = np.concatenate([true - tlo - tol, thi - true - tol])
    bound = np.concatenate([hi - tlo, thi - lo])
    # a side as wide as the trivial range (to rounding) is vacuous
    bound = np.where(np.abs(bound - np.concatenate([span, span])) <= tol, np.concatenate([span, span]), bound)
    cases = np.arange(measured.size, dtype=float)
    return checks.check_bound_curve(cases, measured, bound, np.concatenate([span, span]), what)
