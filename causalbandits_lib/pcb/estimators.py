"""Bounds and point estimates of the arm means from biased offline count tables.

All functions take count tables of the offline log, shape ``(..., 2, 2, 2, 2, 2, 2)`` with axes
``X1, X2, U1, U2, I1, Y`` (:data:`~causalbandits_lib.pcb.model.OBSERVED`; leading axes index
independent data sets), and return arrays of shape ``(..., 4, 4)`` indexed ``[arm, context]``
(arm ``a = 2x1 + x2``, context ``c = 2u1 + u2``). The target is ``μ_{a,c} = P(Y=1 | do(x_a), c)``,
eq. (5)-(6) of Huang and Wu (2024).

Estimators
----------
- :func:`cp_estimate`: ``P̂(y | x, c, S=1)``, the naive conditional probability ("CP");
- :func:`biased_estimate`: eq. (2) with ``Z = C`` on the selected rows, ``Σ_c' P̂(y | x, c', S=1)
  P̂(c' | S=1)``, which adjusts for confounding by the context but ignores selection ("Biased");
- :func:`c_component_bounds`: Theorem 3 (eq. 7) on the RC* decomposition;
- :func:`substitute_bounds_eq3`: Theorem 4 (eq. 10) with ``W = {I1}`` as the paper asserts, each
  ``P_{x,w}(y, c)`` estimated by eq. (3), the only adjustment formula the graph allows (``Z = ∅``);
- :func:`bce_bounds`: Algorithm 1's combination ``[max(L_q, L_w), min(U_q, U_w)]``;
- :func:`conditioning_bounds`: the sound bound ``[min_w, max_w] P̂(y | x, c, w, S=1)`` with
  ``W = {I1}``, optionally widened by a finite-sample margin with a stated coverage;
- :func:`context_free_bounds` and friends: the context-free pipeline that reproduces the paper's
  printed Table 1 (see notebook 3);
- :func:`offline_priors`: everything the online algorithms take from each run's offline log (prior
  bounds and warm-start estimates), in the bandit's ``[run, context, arm]`` layout.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from .model import N_ARMS, N_CONTEXTS, OBSERVED

__all__ = [
    "MARGINS",
    "cells",
    "cp_estimate",
    "biased_estimate",
    "selected_context_distribution",
    "c_component_bounds",
    "substitute_bounds_eq3",
    "bce_bounds",
    "conditioning_bounds",
    "per_side_alpha",
    "context_free_bounds",
    "context_free_selected_means",
    "population_arm_means",
    "marginal_bounds",
    "coverage",
    "mean_width",
    "METHOD_LABELS",
    "bound_methods",
    "n_eliminated",
    "contains",
    "offline_priors",
]

#: Finite-sample margins for :func:`conditioning_bounds`.
MARGINS = ("none", "clopper_pearson", "wald")


def cells(counts: np.ndarray) -> np.ndarray:
    """Reshape a count table to ``(..., arm, context, i1, y) = (..., 4, 4, 2, 2)``."""
    counts = np.asarray(counts)
    if counts.shape[-len(OBSERVED) :] != (2,) * len(OBSERVED):
        raise ValueError(
            f"count table has shape {counts.shape}; its last {len(OBSERVED)} axes must be {(2,) * len(OBSERVED)} "
            f"({', '.join(OBSERVED)})"
        )
    if np.any(counts < 0):
        raise ValueError("count table has a negative entry")
    lead = counts.shape[: -len(OBSERVED)]
    return counts.reshape(lead + (N_ARMS, N_CONTEXTS, 2, 2))


def _ratio(num, den):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def cp_estimate(counts: np.ndarray) -> np.ndarray:
    """``P̂(Y=1 | x_a, c, S=1)``, shape ``(..., 4, 4)``; NaN where a cell has no row."""
    n = cells(counts).sum(axis=-2)  # (..., a, c, y)
    return _ratio(n[..., 1], n.sum(axis=-1))


def selected_context_distribution(counts: np.ndarray) -> np.ndarray:
    """``P̂(c | S=1)``, shape ``(..., 4)``."""
    n = cells(counts).sum(axis=(-4, -2, -1))
    return n / n.sum(axis=-1, keepdims=True)


def biased_estimate(counts: np.ndarray) -> np.ndarray:
    """Eq. (2) with the context as adjustment set, on the selected rows:
    ``Σ_c' P̂(Y=1 | x_a, c', S=1) P̂(c' | S=1)`` (adjusts for confounding, ignores selection).

    For a conditional effect, conditioning on ``c`` would collapse eq. (2) to :func:`cp_estimate`;
    the paper's "Biased" column is context-free (notebook 3), so we read it as this marginal
    adjustment, used for every context (our reading). Shape ``(..., 4, 4)``, constant over contexts.
    """
    cp = cp_estimate(counts)
    pc = selected_context_distribution(counts)
    marg = (cp * pc[..., None, :]).sum(axis=-1)
    return np.broadcast_to(marg[..., None], cp.shape).copy()


def c_component_bounds(counts: np.ndarray, p_context: np.ndarray, route) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 3, eq. (7): ``L_q = Σ_{D∖{Y,C}} Π_i L_{Q[D_i]} / P(c)`` and the same with ``U``.

    Derived in notebooks/pcb/02_causal_bounds.md, section 'The c-component route'
    (equation ``pcb-eq7-theorem3-bounds``).

    Factors that RC* cannot recover are bounded by ``[0, 1]`` (Algorithm 2, line 9). A recoverable
    factor of a single root node ``V`` equals ``P(v) = P(v | S=1)`` (a root that is not an ancestor
    of ``S`` is independent of ``S``), estimated from the counts. Other recoverable factors would
    need the Identify expression; they do not occur in the paper's graph and raise
    ``NotImplementedError``. Results are clipped to ``[0, 1]`` (``U_q`` can exceed 1).

    Parameters
    ----------
    counts : ndarray, shape (..., 2, 2, 2, 2, 2, 2)
    p_context : ndarray, shape (4,) or (..., 4)
        ``P(c)`` (the paper assumes it known; see the notebook for where it comes from).
    route : :class:`~causalbandits_lib.pcb.identification.CComponentRoute`
    """
    table = cells(counts)
    lead = table.shape[:-4]
    p_context = np.asarray(p_context, dtype=float)
    n_summed_configs = 1
    factor = np.ones(lead + (N_CONTEXTS,))
    any_unrecoverable = False
    for comp, rec in zip(route.components, route.recoverable):
        summed = comp & route.summed
        if not rec:
            any_unrecoverable = True
            n_summed_configs *= 2 ** len(summed)  # Σ over the factor's summed variables of U = 1
            continue
        if len(comp) != 1 or next(iter(comp)) not in ("U1", "U2"):
            raise NotImplementedError(f"recoverable c-factor {sorted(comp)}: only single context roots are implemented")
        (v,) = comp
        pc = selected_context_distribution(counts).reshape(lead + (2, 2))  # (..., u1, u2)
        pv = pc.sum(axis=-1) if v == "U1" else pc.sum(axis=-2)  # (..., 2)
        u_bits = np.array([[c >> 1, c & 1] for c in range(N_CONTEXTS)])
        factor = factor * np.take(pv, u_bits[:, 0 if v == "U1" else 1], axis=-1)
    if not any_unrecoverable:
        raise NotImplementedError("every c-factor is recoverable: the point value needs Identify's expression")
    upper = n_summed_configs * factor / p_context
    shape = lead + (N_ARMS, N_CONTEXTS)
    lower = np.zeros(shape)
    upper = np.broadcast_to(np.clip(upper, 0.0, 1.0)[..., None, :], shape).copy()
    return lower, upper


def substitute_bounds_eq3(counts: np.ndarray, p_context: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 4, eq. (10), with ``W = {I1}`` (as the paper's example asserts) and each
    ``P_{x,i1}(y, c)`` estimated by eq. (3).

    Derived in notebooks/pcb/02_causal_bounds.md, section 'The substitute-intervention route'
    (equation ``pcb-eq10-theorem4-bounds``).

    ``L_w = min_{i1} P̂(Y=1, c | x, i1, S=1) / P(c)`` and ``U_w`` with ``max``, clipped to ``[0, 1]``.
    Eq. (3) needs an adjustment set ``Z`` disjoint from the treatments ``X ∪ W`` and the outcomes
    ``{Y} ∪ C``; in this graph no observed variable is left, so ``Z = ∅``. The notebook shows that
    these are not valid bounds: ``do(I1)`` is not identifiable, and the estimand differs from it.
    """
    table = cells(counts)  # (..., a, c, i, y)
    per_ai = table.sum(axis=(-3, -1))  # (..., a, i)
    joint = _ratio(table[..., 1], per_ai[..., None, :])  # P̂(Y=1, c | a, i, S=1): (..., a, c, i)
    est = joint / np.asarray(p_context, dtype=float)[..., None, :, None]
    lower = np.nanmin(np.where(np.isnan(est), np.inf, est), axis=-1)
    upper = np.nanmax(np.where(np.isnan(est), -np.inf, est), axis=-1)
    lower = np.where(np.isfinite(lower), lower, 0.0)
    upper = np.where(np.isfinite(upper), upper, 1.0)
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def bce_bounds(
    lq: np.ndarray, uq: np.ndarray, lw: np.ndarray | None, uw: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1, line 18: ``[max(L̂_q, L̂_w), min(Û_q, Û_w)]``; ``[L_w, U_w] = [0, 1]`` when
    FindRSI found no substitute set (``lw`` and ``uw`` None)."""
    if (lw is None) != (uw is None):
        raise ValueError("give both lw and uw, or neither")
    if lw is None:
        return np.asarray(lq, dtype=float).copy(), np.asarray(uq, dtype=float).copy()
    return np.maximum(lq, lw), np.minimum(uq, uw)


def per_side_alpha(level: float, simultaneous_cells: int = 1) -> float:
    """The one-sided error of each binomial bound for :func:`conditioning_bounds`.

    A cell's interval misses its truth only if the lower bound of the ``i1`` that attains the
    population minimum lies above it, or the upper bound of the one attaining the maximum lies
    below it: two one-sided events. With error ``α/(2K)`` per side, all ``K`` cells are covered
    simultaneously with probability at least ``1 - α`` (union bound), ``α = 1 - level``.
    """
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level={level} must be in (0, 1)")
    if int(simultaneous_cells) < 1:
        raise ValueError(f"simultaneous_cells={simultaneous_cells} must be at least 1")
    return (1.0 - float(level)) / (2.0 * int(simultaneous_cells))


def conditioning_bounds(
    counts: np.ndarray,
    margin: str = "none",
    level: float = 0.95,
    simultaneous_cells: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """The sound substitute bound: ``[min_{i1}, max_{i1}] P̂(Y=1 | x, c, i1, S=1)``.

    Derived in notebooks/pcb/02_causal_bounds.md, section 'A sound bound' (equation ``pcb-sound-bound``).

    Why it is valid (any model on the paper's graph): ``C`` blocks every back-door path from ``X``
    to ``Y``, so ``P_x(y | c) = P(y | x, c) = Σ_{i1} P(y | x, c, i1) P(i1 | x, c)``, a convex
    combination; and ``S``'s only parent is ``I1``, so ``P(y | x, c, i1) = P(y | x, c, i1, S=1)``
    is recoverable. The weights ``P(i1 | x, c)`` are not (selection acts on ``I1``), hence a bound.

    Parameters
    ----------
    counts : ndarray, shape (..., 2, 2, 2, 2, 2, 2)
    margin : {"none", "clopper_pearson", "wald"}
        ``"none"``: plug-in frequencies (what the paper computes). ``"clopper_pearson"``: each
        ``P(y | x, c, i1)`` replaced by its exact one-sided binomial bound (Clopper and Pearson
        1934), which holds with probability at least ``1 - α_side`` for every sample size.
        ``"wald"``: ``p̂ ∓ z·sqrt(p̂(1-p̂)/n)`` with ``z = Φ⁻¹(1 - α_side)`` (asymptotic only).
    level : float
        Coverage level ``1 - α``.
    simultaneous_cells : int
        ``K``: with 1 the level holds per cell; with 16, for all 16 cells at once
        (:func:`per_side_alpha`). The Clopper-Pearson guarantee is exact (finite-sample).

    Returns
    -------
    lower, upper : ndarray, shape (..., 4, 4)
        An ``i1`` stratum without rows gives the trivial ``0`` (lower) or ``1`` (upper).
    """
    if margin not in MARGINS:
        raise ValueError(f"margin={margin!r}; allowed are {MARGINS}")
    table = cells(counts).astype(float)  # (..., a, c, i, y)
    k = table[..., 1]
    n = table.sum(axis=-1)
    empty = n == 0
    if margin == "none":
        p = _ratio(k, n)
        lo_i = np.where(empty, 0.0, p)
        hi_i = np.where(empty, 1.0, p)
    else:
        a_side = per_side_alpha(level, simultaneous_cells)
        if margin == "clopper_pearson":
            with np.errstate(invalid="ignore", divide="ignore"):
                lo_i = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1, a_side), 0.0)
                hi_i = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - a_side), 1.0)
        else:
            z = float(stats.norm.ppf(1.0 - a_side))
            p = _ratio(k, n)
            se = np.sqrt(np.where(empty, 0.0, p * (1 - p)) / np.where(empty, 1.0, n))
            lo_i = np.clip(p - z * se, 0.0, 1.0)
            hi_i = np.clip(p + z * se, 0.0, 1.0)
        lo_i = np.where(empty, 0.0, lo_i)
        hi_i = np.where(empty, 1.0, hi_i)
    return lo_i.min(axis=-1), hi_i.max(axis=-1)


def context_free_bounds(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[min_{i1}, max_{i1}] P̂(Y=1 | x, i1, S=1)``, the same for every context, shape ``(..., 4, 4)``.

    Not a bound on the conditional effect: the pipeline that best matches the paper's printed BCE
    columns (notebook 3).
    """
    table = cells(counts).sum(axis=-3)  # (..., a, i, y)
    p = _ratio(table[..., 1], table.sum(axis=-1))
    lo = np.nanmin(p, axis=-1)
    hi = np.nanmax(p, axis=-1)
    shape = lo.shape + (N_CONTEXTS,)
    return np.broadcast_to(lo[..., None], shape).copy(), np.broadcast_to(hi[..., None], shape).copy()


def context_free_selected_means(counts: np.ndarray) -> np.ndarray:
    """``P̂(Y=1 | x, S=1)``, the same for every context, shape ``(..., 4, 4)``."""
    table = cells(counts).sum(axis=(-3, -2))  # (..., a, y)
    p = _ratio(table[..., 1], table.sum(axis=-1))
    return np.broadcast_to(p[..., None], p.shape + (N_CONTEXTS,)).copy()


def population_arm_means(arm_outcome_counts: np.ndarray) -> np.ndarray:
    """``Ê[Y | x]`` over all drawn units (before selection), from counts of shape ``(..., 4, 2)``;
    the same for every context, shape ``(..., 4, 4)`` (the paper's "Truth" column, notebook 3)."""
    c = np.asarray(arm_outcome_counts, dtype=float)
    p = _ratio(c[..., 1], c.sum(axis=-1))
    return np.broadcast_to(p[..., None], p.shape + (N_CONTEXTS,)).copy()


def marginal_bounds(lower: np.ndarray, upper: np.ndarray, p_context: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on ``P(Y=1 | do(x_a)) = Σ_c P(c) P(Y=1 | do(x_a), c)`` from per-context bounds
    (valid whenever every per-context bound is), shape ``(..., 4)``: the prior bounds of UCB-PCB.

    Derived in notebooks/pcb/04_online_learning.md, section 'UCB-PCB and Theorem 8'
    (equation ``pcb-theorem8-bound``).
    """
    pc = np.asarray(p_context, dtype=float)
    if pc.shape != (N_CONTEXTS,) or abs(pc.sum() - 1) > 1e-9:
        raise ValueError(f"p_context must be a probability vector of length {N_CONTEXTS}, got {pc.tolist()}")
    return (np.asarray(lower) * pc).sum(axis=-1), (np.asarray(upper) * pc).sum(axis=-1)


def contains(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Whether each interval contains its truth (broadcasting over leading axes)."""
    return (np.asarray(lower) <= truth) & (truth <= np.asarray(upper))


def coverage(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Fraction of the 16 cells whose truth lies in ``[lower, upper]``, shape ``lower.shape[:-2]``."""
    return contains(lower, upper, truth).mean(axis=(-2, -1))


def mean_width(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Mean of ``upper - lower`` over the 16 cells, shape ``lower.shape[:-2]``."""
    return (np.asarray(upper) - np.asarray(lower)).mean(axis=(-2, -1))


def n_eliminated(upper: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``N_pcb^-`` (after Theorem 6): pairs ``(a, c)`` with ``U_{a,c} < μ*_c``, shape ``upper.shape[:-2]``."""
    best = np.asarray(truth).max(axis=-2, keepdims=True)
    return (np.asarray(upper) < best).sum(axis=(-2, -1))


#: Display names of the bounds computed by :func:`bound_methods`.
METHOD_LABELS = {
    "bce_as_written": "BCE as written (Alg. 1 executed)",
    "paper_example": "paper's example: Thm 4 with W={I1}, eq. (3)",
    "sound_plugin": "sound bound, plug-in",
    "sound_wald": "sound bound + Wald margin (per cell)",
    "sound_cp_cell": "sound bound + Clopper-Pearson (per cell)",
    "sound_cp_all": "sound bound + Clopper-Pearson (all 16 cells)",
    "table1_pipeline": "context-free pipeline (reads Table 1)",
}


def bound_methods(
    counts: np.ndarray, p_context: np.ndarray, route, substitute_sets, level: float
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every bound of the chapter on the same count tables, keyed as in :data:`METHOD_LABELS`.

    Parameters
    ----------
    counts : ndarray, shape (..., 2, 2, 2, 2, 2, 2)
    p_context : ndarray, shape (4,) or (..., 4)
        ``P(c)`` for eqs. (7) and (10).
    route : CComponentRoute
        From :func:`~causalbandits_lib.pcb.identification.c_component_route`.
    substitute_sets : list
        FindRSI's output; empty means Algorithm 1 skips the substitute route (lines 13-15).
    level : float
        Coverage level of the margins.
    """
    lq, uq = c_component_bounds(counts, p_context, route)
    lw, uw = substitute_bounds_eq3(counts, p_context)
    as_written = bce_bounds(lq, uq, lw, uw) if substitute_sets else bce_bounds(lq, uq, None, None)
    return {
        "bce_as_written": as_written,
        "paper_example": bce_bounds(lq, uq, lw, uw),
        "sound_plugin": conditioning_bounds(counts),
        "sound_wald": conditioning_bounds(counts, "wald", level, 1),
        "sound_cp_cell": conditioning_bounds(counts, "clopper_pearson", level, 1),
        "sound_cp_all": conditioning_bounds(counts, "clopper_pearson", level, N_ARMS * N_CONTEXTS),
        "table1_pipeline": context_free_bounds(counts),
    }


def offline_priors(counts: np.ndarray, level: float, simultaneous: bool = True) -> dict[str, np.ndarray]:
    """Everything the online algorithms take from each run's offline log, in ``[run, context, arm]``
    layout (the bandit's), from count tables of shape ``(n_runs, 2, 2, 2, 2, 2, 2)``.

    Returns
    -------
    dict with ``lower``/``upper`` (sound bound with the Clopper-Pearson margin at ``level``, for all
    16 cells at once if ``simultaneous``), ``lower_plugin``/``upper_plugin`` (sound bound, plug-in),
    ``cp`` and ``biased`` (the naive estimates) and ``count`` (logged rows per cell, the warm-start
    weight ``n₀``).
    """

    def swap(a):
        return np.swapaxes(np.asarray(a, dtype=float), -1, -2)

    lo, hi = conditioning_bounds(counts, "clopper_pearson", level, N_ARMS * N_CONTEXTS if simultaneous else 1)
    lo0, hi0 = conditioning_bounds(counts)
    return {
        "lower": swap(lo),
        "upper": swap(hi),
        "lower_plugin": swap(lo0),
        "upper_plugin": swap(hi0),
        "cp": swap(cp_estimate(counts)),
        "biased": swap(biased_estimate(counts)),
        "count": swap(cells(counts).sum(axis=(-2, -1))),
    }
