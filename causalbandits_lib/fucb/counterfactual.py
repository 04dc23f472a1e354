"""Counterfactual rewards and discrepancies (Huang, Zhang and Wu, AAAI 2022, §3.3, Eq. 8–11).

The counterfactual reward of arm ``a`` for a user ``x_t`` had their sensitive attribute been ``s*``
is ``μ_{a,s*} = E[R(a, s*) | x_t]`` (a soft intervention on the arm and a hard one on ``S``), and
the discrepancy is ``Δ_a = μ_{a,s+} − μ_{a,s−}``.

- **Identified case** (no other user feature descends from ``S``; Wu, Zhang and Wu 2019, Prop. 1):
  Eq. 8, ``μ_{a,s*} = Σ_z E[R | s*, w∖s_t] P(z | s*, x_{t,a}∖s_t)``, i.e. the decomposition of Eq. 2
  evaluated at the context with ``S`` set to ``s*`` (:func:`identified_discrepancy`).
- **Not identified** (a set **B** ⊆ **X** ∖ {S} of descendants of ``S``): Theorem 2 bounds
  ``μ_{a,s*}`` between ``Σ_z min_b E[R | s*, w∖s_t] P(z | x_{t,a})`` and the same with ``max``
  (:func:`theorem2_bounds`).
- A **true** value in the non-identified case needs the structural equations, not only the tables.
  :func:`monotone_counterfactual` computes it exactly for the monotone (comonotone) coupling the
  core sampler uses: node ``V = min{v : U_V < F(v | pa)}`` with independent uniforms ``U_V``
  (abduction restricts each ``U_V`` to an interval, action replaces the parents, prediction reads
  the new bins). It is *one* structural model consistent with the tables, our choice.
"""

from __future__ import annotations

from typing import Hashable, Mapping, Sequence

import networkx as nx
import numpy as np

from ..core.scm import DiscreteSCM, NotIdentifiableError
from .model import CellDecomposition

__all__ = [
    "identified_discrepancy",
    "identified_counterfactual_means",
    "theorem2_bounds",
    "printed_theorem2_bounds",
    "counterfactual_bounds",
    "worst_case_discrepancy",
    "monotone_counterfactual",
    "monotone_counterfactual_means",
    "monotone_discrepancy_table",
]


def identified_counterfactual_means(dec: CellDecomposition, cf_contexts: np.ndarray) -> np.ndarray:
    """Eq. 8: ``μ_{a,s}(x) = Σ_k P(W = k | x with S = s, do(a)) E[R | W = k]`` for every context,
    arm and value ``s`` of the sensitive attribute.

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'Counterfactual fairness' (equation
    ``fucb-eq8-counterfactual-reward``).

    Parameters
    ----------
    dec : CellDecomposition
        Over a d-separating set **W**.
    cf_contexts : int array, shape (n_contexts, n_s)
        ``cf_contexts[c, s]`` = context ``c`` with ``S`` set to ``s``
        (:meth:`CausalBanditEnv.counterfactual_contexts`).

    Returns
    -------
    ndarray, shape (n_contexts, n_arms, n_s)
    """
    m = np.where(np.isnan(dec.cell_means), 0.0, dec.cell_means)
    probs = dec.probs[cf_contexts]  # (n_ctx, n_s, n_arms, n_cells)
    return np.moveaxis((probs * m).sum(axis=-1), 1, -1)


def identified_discrepancy(
    dec: CellDecomposition, cf_contexts: np.ndarray, s_plus: int = 1, s_minus: int = 0
) -> np.ndarray:
    """``Δ(x, a) = μ_{a,s+}(x) − μ_{a,s−}(x)`` by Eq. 8, shape ``(n_contexts, n_arms)``.

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'Counterfactual fairness' (equation
    ``fucb-eq8-counterfactual-reward``).
    """
    mu = identified_counterfactual_means(dec, cf_contexts)
    return mu[..., s_plus] - mu[..., s_minus]


def theorem2_bounds(cell_means: np.ndarray, p_z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 2 (Eq. 11): bounds on ``μ_{a,s*}`` when descendants **B** of ``S`` are user features.

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'Theorem 2' (equation
    ``fucb-eq11-theorem2-bounds``).

    Parameters
    ----------
    cell_means : ndarray, shape (..., n_z, n_b)
        ``E[R | s*, w ∖ s_t]`` for every value ``z`` of **Z** and every joint value ``b`` of the
        descendants **B** in **W** (the other parts of ``w`` fixed by the arm and the user).
    p_z : ndarray, shape (..., n_z)
        The factual ``P(z | x_{t,a})``, as printed in the theorem.

    Returns
    -------
    lower, upper : ndarray, shape (...)
        ``Σ_z min_b cell_means · p_z`` and ``Σ_z max_b cell_means · p_z``.
    """
    cell_means = np.asarray(cell_means, dtype=float)
    p_z = np.asarray(p_z, dtype=float)
    if cell_means.ndim < 2 or cell_means.shape[:-1] != p_z.shape:
        raise ValueError(
            f"cell_means must have shape p_z.shape + (n_b,) = {p_z.shape} + (n_b,), got {cell_means.shape}"
        )
    return (cell_means.min(axis=-1) * p_z).sum(axis=-1), (cell_means.max(axis=-1) * p_z).sum(axis=-1)


def printed_theorem2_bounds(
    dec: CellDecomposition, sensitive: str, s_value: int, varied: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 11 as printed, for every context and arm: ``Σ_k P(W = k | x_t, do(a)) min_b μ_{k(s*, b)}``
    and the same with ``max``, where ``k(s*, b)`` is cell ``k`` with its sensitive part set to
    ``s_value`` and its **B** part (the nodes of ``varied`` that are in **W**) set to ``b``.

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'Theorem 2' (equation
    ``fucb-eq11-theorem2-bounds``).

    Returns ``(lower, upper)``, each of shape ``(n_contexts, n_arms)``.
    """
    codes = (
        np.array(np.unravel_index(np.arange(dec.n_cells), dec.cards)).T
        if dec.cards
        else np.zeros((1, 0), dtype=np.int64)
    )
    codes = codes.copy()
    if sensitive in dec.variables:
        codes[:, dec.variables.index(sensitive)] = s_value
    in_w = [v for v in varied if v in dec.variables]
    cols = [dec.variables.index(v) for v in in_w]
    b_values = (
        np.array(np.meshgrid(*[np.arange(dec.cards[c]) for c in cols], indexing="ij")).reshape(len(cols), -1).T
        if cols
        else np.zeros((1, 0), dtype=np.int64)
    )
    means = np.empty((dec.n_cells, len(b_values)))
    for bi, b in enumerate(b_values):
        c2 = codes.copy()
        c2[:, cols] = b
        cells = np.ravel_multi_index(tuple(c2.T), dec.cards) if dec.cards else np.zeros(1, dtype=np.int64)
        means[:, bi] = dec.cell_means[cells]
    means = np.where(np.isnan(means), 0.0, means)
    return theorem2_bounds(np.broadcast_to(means, dec.probs.shape + (len(b_values),)), dec.probs)


def counterfactual_bounds(dec: CellDecomposition, varied_contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on ``μ_{a,s*}`` that hold whatever the counterfactual values ``b`` of **B** are:
    ``min_b`` and ``max_b`` of ``Σ_k P(W = k | s*, b, x∖{s, B}, do(a)) E[R | W = k]`` (a
    counterfactual mean is a mixture of these over ``b``). This is Eq. 11 when **W** has no
    intermediate node; otherwise our corrected form (minimum outside the sum, counterfactual
    weights).

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'Theorem 2' (equation
    ``fucb-theorem2-corrected-bounds``).

    Parameters
    ----------
    varied_contexts : int array, shape (n_contexts, n_s, n_b)
        :meth:`CausalBanditEnv.varied_contexts`.

    Returns
    -------
    lower, upper : ndarray, shape (n_contexts, n_arms, n_s)
    """
    m = np.where(np.isnan(dec.cell_means), 0.0, dec.cell_means)
    mu = (dec.probs[np.asarray(varied_contexts)] * m).sum(axis=-1)  # (n_ctx, n_s, n_b, n_arms)
    return np.moveaxis(mu.min(axis=2), 1, -1), np.moveaxis(mu.max(axis=2), 1, -1)


def worst_case_discrepancy(lower_plus, upper_plus, lower_minus, upper_minus) -> np.ndarray:
    """The largest ``|μ_{s+} − μ_{s−}|`` compatible with the bounds: ``max(|U+ − L−|, |U− − L+|)``
    (our reading: the paper does not say which end points enter Δ̂ when it uses Theorem 2)."""
    return np.maximum(np.abs(np.asarray(upper_plus) - lower_minus), np.abs(np.asarray(upper_minus) - lower_plus))


def monotone_counterfactual(
    model: DiscreteSCM,
    evidence: Mapping[str, Hashable],
    do: Mapping[str, Hashable],
    targets: Sequence[str],
) -> np.ndarray:
    """``P(targets_{do} | evidence)`` under the monotone coupling of the model's tables.

    Every node ``V`` is ``min{v : U_V < F(v | pa(V))}`` with independent ``U_V ~ U[0, 1)`` (the
    coupling of :meth:`DiscreteSCM.sample_from_uniforms`). Abduction: an observed ``V = v`` with
    observed parents restricts ``U_V`` to ``[F(v−1 | pa), F(v | pa))``; a node without evidence
    keeps ``U_V`` uniform (it must then have no observed descendant). Action and prediction: nodes
    are recomputed in topological order from their counterfactual parents.

    Parameters
    ----------
    model : DiscreteSCM
    evidence : mapping of node to state label
        Must contain every non-intervened ancestor of the targets that has an observed descendant.
    do : mapping of node to state label
    targets : sequence of str

    Returns
    -------
    ndarray with one axis per target (over their states in code order).

    Raises
    ------
    NotIdentifiableError
        If a node without evidence has an observed descendant (its noise posterior would then
        depend on the unobserved value, which this routine does not marginalise).
    ValueError
        If the evidence has probability zero.
    """
    targets = list(targets)
    for n in (*evidence, *do, *targets):
        model.card(n)  # raises KeyError naming the node
    ev = {n: model.code(n, v) for n, v in evidence.items()}
    dd = {n: model.code(n, v) for n, v in do.items()}
    needed = set(targets)
    for t in targets:
        needed |= nx.ancestors(model.graph, t)
    order = [n for n in model.nodes if n in needed]
    branches: list[tuple[float, dict[str, int]]] = [(1.0, {})]
    for node in order:
        if node in dd:
            branches = [(p, {**cf, node: dd[node]}) for p, cf in branches]
            continue
        mech = model.mechanisms[node]
        table = mech.table
        if node in ev:
            missing = [p for p in mech.parents if p not in ev]
            if missing:
                raise NotIdentifiableError(
                    f"observed node {node!r} has an unobserved parent {missing[0]!r}; give evidence on it too"
                )
            row = table[tuple(ev[p] for p in mech.parents)]
            cdf = np.concatenate([[0.0], np.cumsum(row)])
            lo, hi = cdf[ev[node]], cdf[ev[node] + 1]
            if hi - lo <= 0:
                raise ValueError(f"the evidence {node}={evidence[node]!r} has probability zero given its parents")
        else:
            observed_desc = sorted(model.descendants(node) & set(ev))
            if observed_desc:
                raise NotIdentifiableError(
                    f"node {node!r} has no evidence but its descendant {observed_desc[0]!r} does; "
                    f"give evidence on {node!r}"
                )
            lo, hi = 0.0, 1.0
        new = []
        for p, cf in branches:
            row = table[tuple(cf[q] for q in mech.parents)]
            cdf = np.concatenate([[0.0], np.cumsum(row)])
            cdf[-1] = 1.0
            for v in range(len(row)):
                overlap = min(hi, cdf[v + 1]) - max(lo, cdf[v])
                if overlap > 0:
                    new.append((p * overlap / (hi - lo), {**cf, node: v}))
        branches = new
    out = np.zeros([model.card(t) for t in targets])
    for p, cf in branches:
        out[tuple(cf[t] for t in targets)] += p
    return out


def monotone_counterfactual_means(env, sensitive: str) -> np.ndarray:
    """``E[R(a, s) | x]`` for every context, arm and value ``s`` of the sensitive attribute of a
    :class:`~causalbandits_lib.fucb.model.CausalBanditEnv`, under the monotone coupling
    (:func:`monotone_counterfactual`), shape ``(n_contexts, n_arms, card(S))``.

    Reward nodes that are arm nodes take the arm's value, the sensitive node takes ``s``, user
    features that do not descend from it keep the user's value, and every other reward node
    (intermediate nodes, descendants of ``S``) follows its counterfactual distribution. Where the
    counterfactual is identified the coupling does not matter and this equals Eq. 8.
    """
    model = env.model
    if sensitive not in env.context_nodes:
        raise ValueError(f"sensitive={sensitive!r} must be a context node; they are {env.context_nodes}")
    desc = model.descendants(sensitive)
    targets = [
        n
        for n in env.reward_weights
        if n not in env.arm_nodes and n != sensitive and (n not in env.context_nodes or n in desc)
    ]
    card_s = model.card(sensitive)
    out = np.full((env.n_contexts, env.n_arms, card_s), float(env.offset))
    labels = {n: np.asarray(model.states[n], dtype=float) for n in env.reward_weights}
    for c, ccodes in enumerate(env.context_codes):
        evidence = {n: model.label(n, int(v)) for n, v in zip(env.context_nodes, ccodes)}
        for a, acodes in enumerate(env.arm_codes):
            do_arm = {n: model.label(n, int(v)) for n, v in zip(env.arm_nodes, acodes)}
            for s in range(card_s):
                total = 0.0
                for n, w in env.reward_weights.items():
                    if n in env.arm_nodes:
                        total += w * labels[n][acodes[env.arm_nodes.index(n)]]
                    elif n == sensitive:
                        total += w * labels[n][s]
                    elif n not in targets:
                        total += w * labels[n][ccodes[env.context_nodes.index(n)]]
                if targets:
                    dist = monotone_counterfactual(
                        model, evidence, {**do_arm, sensitive: model.label(sensitive, s)}, targets
                    )
                    for i, n in enumerate(targets):
                        marginal = dist.sum(axis=tuple(j for j in range(len(targets)) if j != i))
                        total += env.reward_weights[n] * float(marginal @ labels[n])
                out[c, a, s] += total
    return out


def monotone_discrepancy_table(env, sensitive: str, s_plus: int = 1, s_minus: int = 0) -> np.ndarray:
    """``Δ(x, a) = E[R(a, s+) | x] − E[R(a, s−) | x]`` under the monotone coupling, shape
    ``(n_contexts, n_arms)`` (see :func:`monotone_counterfactual_means`)."""
    mu = monotone_counterfactual_means(env, sensitive)
    return mu[..., s_plus] - mu[..., s_minus]
