"""The exact side of the matched comparisons of hypotheses H6-H10 (``notebooks/synthesis/hypotheses.yml``,
section ``common``): each notion's price at matched unfairness, and who a policy serves.

A *policy* ``π`` is an array of shape ``(n_contexts, n_items)`` whose row ``o`` is a distribution
over the items for the users of context ``o``. With ``P(o)`` the context probabilities:

- its value ``V(π) = E_o Σ_k π(k|o) μ_k(o)`` and its unfairness, the mean counterfactual
  discrepancy ``D(π) = E_o Σ_k π(k|o) Δ_k(o)`` (:func:`value`, :func:`mean_discrepancy`);
- ``π⁰`` the unconstrained optimum, per context the item of largest ``μ``, ties broken to the
  smaller ``Δ``, then the smaller index (:func:`unconstrained_optimum`);
- ``D_min = E_o min_k Δ_k(o)`` (:func:`d_min`), and the matched levels
  ``d_j = D_min + q_j (D(π⁰) - D_min)``, ``q = 0.25, 0.5, 0.75`` (:func:`matched_levels`); a model
  with ``D(π⁰) = D_min`` has nothing to make fair (:func:`has_unfairness`);
- the price of notion ``N`` at level ``d``, ``P_N(d) = min {V(π⁰) - V(π_N(θ)) : D(π_N(θ)) <= d}``
  over ``N``'s thresholds ``θ`` (:func:`price`), ``+inf`` where no threshold reaches ``d``. The
  threshold grids (:func:`frontier`):

  ==========================  ==============================================================
  notion                      thresholds and optimum ``π_N(θ)``
  ==========================  ==============================================================
  ``per-decision CF``         ``τ`` over every distinct ``Δ_k(o)``; per context the best item
                              with ``Δ <= τ`` (F-UCB's fallback where none: the best among the
                              items of least ``Δ``), ties as for ``π⁰`` (:func:`per_decision_policy`)
  ``average CF constraint``   ``τ = d`` itself: the linear program of
                              :func:`~.model.average_constraint_optimum`, its solution as the
                              solver returns it; unreachable only for ``d < D_min``
  ``fair intervention``       the hard rules "always item k", ``θ`` over the distinct
                              ``ζ_k = D(always k)``; :func:`~.model.intervention_optimum`
  ``exposure``                ``c`` in :data:`EXPOSURE_CS` (0 and 200 log-spaced values from 0.1
                              to 1,000); ``π_c(k) ∝ exp(c μ̄_k)`` (:func:`~.model.exposure_optimum`)
  ==========================  ==============================================================

  The threshold that attains ``P_N(d)`` is ``N``'s matched threshold; where several do (prices
  within :data:`PRICE_TIE` of the least: the same optimum at several thresholds, or exposure's
  ``π_c`` once it is one item to machine precision), the smallest of them (for the per-decision and
  intervention notions the left end of the interval of thresholds with that optimum, whose right
  end is :attr:`Price.same_until`). ``D(π_N(θ)) <= d`` is compared exactly (no tolerance); the
  average constraint's ``D`` is the solver's, within its tolerance of ``d``.

- per user group ``A = a`` (conditional on ``A``, :func:`group_outcomes`): value ``v_a``, regret
  ``v_a(π⁰) - v_a(π)``, mean discrepancy, exposure of each item group (:data:`~.model.GROUP`); the
  demographic parity gap ``DP = ½ Σ_k |p_1(k) - p_0(k)|`` with ``p_a(k) = E[π(k|o) | A=a]``
  (:func:`demographic_parity`), and the equal opportunity gap
  ``EO = (1/K) Σ_k |TPR_k(1) - TPR_k(0)|`` with ``TPR_k(a) = E[μ_k(o) π(k|o) | A=a] / E[μ_k(o) | A=a]``
  (:func:`equal_opportunity`): H10's per-run quantities with the sums over rounds replaced by their
  expectations.

Every function reads ``inst.means``, ``inst.discrepancy``, ``inst.context_probs`` and
``inst.merit_means`` only, so that a hand-made table of these (same shapes) can stand for a model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import model as M

__all__ = [
    "NOTIONS",
    "QUANTILES",
    "EXPOSURE_CS",
    "PRICE_TIE",
    "value",
    "mean_discrepancy",
    "unfair_rate",
    "deterministic",
    "context_free",
    "unconstrained_optimum",
    "per_decision_policy",
    "d_min",
    "has_unfairness",
    "matched_levels",
    "thresholds",
    "Frontier",
    "frontier",
    "Price",
    "price",
    "Matched",
    "matched",
    "group_weights",
    "demographic_parity",
    "equal_opportunity",
    "GroupOutcomes",
    "group_outcomes",
]

#: the four notions priced at matched unfairness, named as in :func:`~.model.optimum_values`
NOTIONS = ("per-decision CF", "average CF constraint", "fair intervention", "exposure")
#: the matched levels' positions between ``D_min`` (0) and ``D(π⁰)`` (1)
QUANTILES = (0.25, 0.5, 0.75)
#: exposure's thresholds: ``c = 0`` and 200 log-spaced values from 0.1 to 1,000
EXPOSURE_CS = np.concatenate([[0.0], np.logspace(-1.0, 3.0, 200)])
#: prices closer than this (clicks per round) are one price when the matched threshold is chosen
PRICE_TIE = 1e-12
#: the user group ``A`` of each context
_A_OF_CONTEXT = np.array([a for a, _ in M.CONTEXTS])


# -- a policy's value and unfairness ------------------------------------------------------------------


def _expectation(inst, pi: np.ndarray, table: np.ndarray) -> float:
    """``E_o Σ_k π(k|o) table_k(o)``."""
    return float(inst.context_probs @ (np.asarray(pi, dtype=float) * table).sum(axis=1))


def value(inst, pi: np.ndarray) -> float:
    """``V(π) = E_o Σ_k π(k|o) μ_k(o)``, clicks per round."""
    return _expectation(inst, pi, inst.means)


def mean_discrepancy(inst, pi: np.ndarray) -> float:
    """``D(π) = E_o Σ_k π(k|o) Δ_k(o)``."""
    return _expectation(inst, pi, inst.discrepancy)


def unfair_rate(inst, pi: np.ndarray, tau: float) -> float:
    """``E_o Σ_k π(k|o) 1{Δ_k(o) > τ}``: the exact rate of counterfactually unfair decisions (H8's
    ``u(π⁰)`` for ``π = π⁰``)."""
    return _expectation(inst, pi, (inst.discrepancy > tau).astype(float))


def deterministic(items) -> np.ndarray:
    """The policy recommending ``items[o]`` to context ``o``."""
    items = np.asarray(items, dtype=int)
    return np.eye(M.N_ITEMS)[items]


def context_free(dist) -> np.ndarray:
    """The policy giving every context the distribution ``dist`` over the items."""
    return np.broadcast_to(np.asarray(dist, dtype=float), (M.N_CONTEXTS, M.N_ITEMS)).copy()


def _best_items(inst, allowed: np.ndarray) -> np.ndarray:
    """Per context, among the ``allowed`` items: the largest ``μ``, then the smaller ``Δ``, then the
    smaller index."""
    m, d = inst.means, inst.discrepancy
    out = np.empty(len(m), dtype=int)
    for o, row in enumerate(allowed):
        ks = np.flatnonzero(row)
        out[o] = ks[np.lexsort((ks, d[o, ks], -m[o, ks]))[0]]
    return out


def unconstrained_optimum(inst) -> np.ndarray:
    """``π⁰``: per context the item of largest ``μ`` (ties: smaller ``Δ``, then smaller index)."""
    return deterministic(_best_items(inst, np.ones_like(inst.means, dtype=bool)))


def per_decision_policy(inst, tau: float) -> np.ndarray:
    """The per-decision optimum at ``τ``: per context the best item with ``Δ_k(o) <= τ``; where no
    item qualifies, F-UCB's fallback, the best among the items of least ``Δ``; ties as for ``π⁰``.
    (:func:`~.model.per_decision_optimum` is the same but for ties in ``μ``, which it breaks to the
    smaller index.)"""
    d = inst.discrepancy
    fair = d <= tau
    allowed = np.where(fair.any(axis=1, keepdims=True), fair, d <= d.min(axis=1, keepdims=True))
    return deterministic(_best_items(inst, allowed))


def d_min(inst) -> float:
    """``D_min = E_o min_k Δ_k(o)``, the least mean discrepancy of any policy."""
    return float(inst.context_probs @ inst.discrepancy.min(axis=1))


def has_unfairness(inst) -> bool:
    """Whether ``D(π⁰) > D_min`` (else the model has nothing to make fair: not testable for H6-H10)."""
    return mean_discrepancy(inst, unconstrained_optimum(inst)) > d_min(inst)


def matched_levels(inst, quantiles=QUANTILES) -> np.ndarray:
    """``d_j = D_min + q_j (D(π⁰) - D_min)``."""
    lo = d_min(inst)
    hi = mean_discrepancy(inst, unconstrained_optimum(inst))
    return lo + np.asarray(quantiles, dtype=float) * (hi - lo)


# -- each notion's optima over its thresholds ------------------------------------------------------------


def thresholds(inst, notion: str) -> np.ndarray:
    """The threshold grid of ``notion`` (ascending); the average constraint has none of its own
    (its threshold is the level)."""
    if notion == "per-decision CF":
        return np.unique(inst.discrepancy)
    if notion == "fair intervention":
        return np.unique(inst.context_probs @ inst.discrepancy)
    if notion == "exposure":
        return EXPOSURE_CS.copy()
    if notion == "average CF constraint":
        raise ValueError("the average constraint's threshold is the level itself (τ = d): pass the thresholds")
    raise ValueError(f"unknown notion {notion!r}; expected one of {NOTIONS}")


@dataclass(frozen=True)
class Frontier:
    """A notion's exact optimum at each of its thresholds: ``policies[i]`` is ``π_N(thresholds[i])``,
    with ``D[i]`` and ``V[i]`` its mean discrepancy and value."""

    notion: str
    thresholds: np.ndarray
    policies: np.ndarray
    D: np.ndarray
    V: np.ndarray


def _optimum(inst, notion: str, theta: float) -> np.ndarray:
    if notion == "per-decision CF":
        return per_decision_policy(inst, theta)
    if notion == "average CF constraint":
        return M.average_constraint_optimum(inst, theta)[1]
    if notion == "fair intervention":
        return deterministic(np.full(M.N_CONTEXTS, M.intervention_optimum(inst, theta)))
    if notion == "exposure":
        return context_free(M.exposure_optimum(inst, theta))
    raise ValueError(f"unknown notion {notion!r}; expected one of {NOTIONS}")


def frontier(inst, notion: str, grid=None) -> Frontier:
    """``notion``'s optimum at every threshold of ``grid`` (default :func:`thresholds`; required
    for the average constraint, whose linear program must be feasible: ``τ >= D_min``)."""
    grid = thresholds(inst, notion) if grid is None else np.asarray(grid, dtype=float)
    policies = np.stack([_optimum(inst, notion, float(t)) for t in grid])
    return Frontier(
        notion,
        grid,
        policies,
        np.array([mean_discrepancy(inst, p) for p in policies]),
        np.array([value(inst, p) for p in policies]),
    )


# -- prices at a level ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Price:
    """``P_N(d)`` and what attains it: the matched threshold, its optimum ``policy`` and that
    policy's ``D`` and ``V`` (``price = inf``, ``threshold = nan`` and ``policy = None`` where ``N``
    reaches ``d`` at none of its thresholds). ``same_until``: the first threshold of the grid above
    the matched one at which the optimum differs (inf if none), so that every threshold in
    ``[threshold, same_until)`` has the same optimum (per-decision and intervention notions; nan
    for the others)."""

    notion: str
    level: float
    price: float
    threshold: float
    policy: np.ndarray | None
    D: float
    V: float
    same_until: float = float("nan")

    @property
    def reachable(self) -> bool:
        return bool(np.isfinite(self.price))


def _unreachable(notion: str, d: float) -> Price:
    nan = float("nan")
    return Price(notion, float(d), float("inf"), nan, None, nan, nan)


def price(inst, notion: str, d: float, v0: float | None = None, front: Frontier | None = None) -> Price:
    """``P_N(d)`` with its matched threshold (module docstring). ``v0`` (``V(π⁰)``) and ``front``
    (the notion's :func:`frontier`) may be passed to save recomputing them."""
    v0 = value(inst, unconstrained_optimum(inst)) if v0 is None else v0
    if notion == "average CF constraint":
        if d < d_min(inst):
            return _unreachable(notion, d)
        pi = M.average_constraint_optimum(inst, float(d))[1]
        v = value(inst, pi)
        return Price(notion, float(d), v0 - v, float(d), pi, mean_discrepancy(inst, pi), v)
    front = frontier(inst, notion) if front is None else front
    ok = np.flatnonzero(front.D <= d)
    if not len(ok):
        return _unreachable(notion, d)
    cost = v0 - front.V[ok]
    i = ok[cost <= cost.min() + PRICE_TIE][0]  # the grid is ascending: the smallest threshold
    until = float("nan")
    if notion != "exposure":
        differs = [
            j for j in range(i + 1, len(front.thresholds)) if not np.array_equal(front.policies[j], front.policies[i])
        ]
        until = float(front.thresholds[differs[0]]) if differs else float("inf")
    return Price(
        notion,
        float(d),
        float(v0 - front.V[i]),
        float(front.thresholds[i]),
        front.policies[i],
        float(front.D[i]),
        float(front.V[i]),
        until,
    )


@dataclass(frozen=True)
class Matched:
    """One model's matched comparison: ``prices[notion][j]`` is ``P_N(levels[j])``."""

    quantiles: tuple
    levels: np.ndarray
    d_min: float
    pi0: np.ndarray
    d_pi0: float
    v_pi0: float
    prices: dict

    @property
    def testable(self) -> bool:
        """Whether the model has something to make fair (``D(π⁰) > D_min``)."""
        return self.d_pi0 > self.d_min

    def table(self) -> np.ndarray:
        """The prices, shape ``(len(NOTIONS), len(levels))`` (rows in the order of :data:`NOTIONS`)."""
        return np.array([[p.price for p in self.prices[n]] for n in NOTIONS])


def matched(inst, quantiles=QUANTILES) -> Matched:
    """Every notion's price and matched threshold at each matched level."""
    pi0 = unconstrained_optimum(inst)
    v0 = value(inst, pi0)
    levels = matched_levels(inst, quantiles)
    prices = {}
    for notion in NOTIONS:
        front = None if notion == "average CF constraint" else frontier(inst, notion)
        prices[notion] = tuple(price(inst, notion, float(d), v0, front) for d in levels)
    return Matched(tuple(quantiles), levels, d_min(inst), pi0, mean_discrepancy(inst, pi0), v0, prices)


# -- who is served ---------------------------------------------------------------------------------------


def group_weights(inst) -> np.ndarray:
    """``P(o | A = a)``, shape ``(2, n_contexts)``."""
    w = np.stack([inst.context_probs * (_A_OF_CONTEXT == a) for a in (0, 1)])
    return w / w.sum(axis=1, keepdims=True)


def _by_group(inst, pi: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``E[Σ_k π(k|o) table_k(o) | A = a]`` for ``a = 0, 1``."""
    return group_weights(inst) @ (np.asarray(pi, dtype=float) * table).sum(axis=1)


def demographic_parity(inst, pi: np.ndarray) -> float:
    """``½ Σ_k |p_1(k) - p_0(k)|``, ``p_a(k) = E[π(k|o) | A = a]``: the total variation between the
    two user groups' recommendations."""
    p = group_weights(inst) @ np.asarray(pi, dtype=float)
    return float(0.5 * np.abs(p[1] - p[0]).sum())


def equal_opportunity(inst, pi: np.ndarray) -> float:
    """``(1/K) Σ_k |TPR_k(1) - TPR_k(0)|``, ``TPR_k(a) = E[μ_k(o) π(k|o) | A=a] / E[μ_k(o) | A=a]``."""
    w, m = group_weights(inst), inst.means
    tpr = (w @ (m * np.asarray(pi, dtype=float))) / (w @ m)
    return float(np.abs(tpr[1] - tpr[0]).mean())


@dataclass(frozen=True)
class GroupOutcomes:
    """Who a policy serves. Arrays indexed by the user group ``a`` (``value``, ``regret``,
    ``discrepancy``), by the item group ``g`` (``exposure``), or both (``exposure_by_user[a, g]``).
    ``worse_served`` is ``a⁻ = argmin_a v_a(π⁰)`` (0 on a tie) and ``extra_loss`` is H7's
    ``ℓ_{a⁻} - ℓ_{a⁺}`` with ``ℓ_a = v_a(π⁰) - v_a(π)`` (the ``regret``)."""

    value: np.ndarray
    regret: np.ndarray
    discrepancy: np.ndarray
    exposure: np.ndarray
    exposure_by_user: np.ndarray
    dp: float
    eo: float
    worse_served: int
    extra_loss: float

    def as_dict(self) -> dict[str, float]:
        """Flat ``{name: float}`` (e.g. ``value.A=0``, ``exposure.group=1``, ``exposure.A=1.group=0``)."""
        out = {}
        for key in ("value", "regret", "discrepancy"):
            out.update({f"{key}.A={a}": float(getattr(self, key)[a]) for a in (0, 1)})
        out.update({f"exposure.group={g}": float(self.exposure[g]) for g in (0, 1)})
        for a in (0, 1):
            out.update({f"exposure.A={a}.group={g}": float(self.exposure_by_user[a, g]) for g in (0, 1)})
        out.update(dp=self.dp, eo=self.eo, worse_served=float(self.worse_served), extra_loss=self.extra_loss)
        return out


def group_outcomes(inst, pi: np.ndarray) -> GroupOutcomes:
    """:class:`GroupOutcomes` of ``π`` (regrets against :func:`unconstrained_optimum`'s per-group values)."""
    pi = np.asarray(pi, dtype=float)
    v0 = _by_group(inst, unconstrained_optimum(inst), inst.means)
    v = _by_group(inst, pi, inst.means)
    item_group = np.eye(2)[list(M.GROUP)]  # (n_items, 2)
    by_user = group_weights(inst) @ pi @ item_group
    worse = int(np.argmin(v0))
    loss = v0 - v
    return GroupOutcomes(
        value=v,
        regret=loss,
        discrepancy=_by_group(inst, pi, inst.discrepancy),
        exposure=inst.context_probs @ pi @ item_group,
        exposure_by_user=by_user,
        dp=demographic_parity(inst, pi),
        eo=equal_opportunity(inst, pi),
        worse_served=worse,
        extra_loss=float(loss[worse] - loss[1 - worse]),
    )
