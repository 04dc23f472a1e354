"""What holds exactly on the recommender, whatever the learner: the ordering of the notions' fair
optima.

For a threshold τ, the per-decision constraint (``Δ_k(o) <= τ`` for every decision) is a special
case of the average constraint (``E_o Σ_k π(k|o) (Δ_k(o) - τ) <= 0``): every policy that satisfies
the first satisfies the second, so the average-constraint optimum is at least as good and its
price (the unconstrained optimum minus the fair optimum, per round) at most the per-decision
price. When some context has no item with ``Δ <= τ`` the per-decision optimum falls back to the
smallest ``Δ`` (F-UCB's fallback), which the average constraint need not satisfy; then the ordering
is not guaranteed and :func:`relaxation_holds` says so.
"""

from __future__ import annotations

import numpy as np

from . import model as M

__all__ = ["prices", "relaxation_holds"]


def prices(inst: M.Instance, tau: float, c: float) -> dict[str, float]:
    """Per-round price of each notion's fair optimum at ``tau`` (exposure: at steepness ``c``)."""
    v = M.optimum_values(inst, tau, c)
    return {k: v["unconstrained"] - x for k, x in v.items() if k != "unconstrained"}


def relaxation_holds(inst: M.Instance, tau: float, atol: float = 1e-9) -> bool | None:
    """Whether the average-constraint price is at most the per-decision price (None when some
    context has no item with ``Δ <= τ``, where the per-decision optimum is not feasible)."""
    if not np.all((inst.discrepancy <= tau).any(axis=1)):
        return None
    p = prices(inst, tau, 1.0)
    return bool(p["average CF constraint"] <= p["per-decision CF"] + atol)
