"""Problems from a causal model: what pulls of any arm can show, by exact inference.

:func:`observation_model` takes a :class:`~causalbandits_lib.core.scm.DiscreteSCM` with the
paper's roles (sensitive root ``S``, intervened node ``V``, outcome ``Y``), works out the observed
nodes and computes, once, the exact joint of the observed nodes for each kind of pull; an
:class:`ObservationModel` then gives the :class:`~.model.FairArmsProblem` of any set of arm tables
without further inference (:func:`problem_from_scm` does both). HEPAR-II
(:mod:`.instances.hepar2`) is built this way; the synthetic instances are built directly and
cross-checked against it.
"""

from __future__ import annotations

from typing import Hashable, Mapping, Sequence

import networkx as nx
import numpy as np

from ..core.scm import DiscreteSCM
from .model import FairArmsProblem, ProblemError

__all__ = ["ObservationModel", "observation_model", "observed_joint", "problem_from_scm"]


def _dedupe(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        if n not in out:
            out.append(n)
    return out


class ObservationModel:
    """What pulls of any arm can show, computed once from a causal model by exact inference.

    One exact query per kind of pull gives ``base[pool, c]``, the joint of the observed nodes with
    ``V``'s mechanism set to uniform. Because ``pa(V)`` and ``V`` are observed, the cell
    probabilities of an arm ``P_k(V | pa(V))`` are ``base · P_k(v_c | pa_c) · |V|`` (truncated
    factorisation), so any table can be evaluated without further inference.

    Build it with :func:`observation_model`.
    """

    def __init__(
        self,
        name,
        observed,
        codes,
        base,
        rho,
        cell_y,
        pa_index,
        v_index,
        pa_cards,
        card_v,
        sensitive_labels,
        intervened,
    ):
        self.name = name
        self.observed = tuple(observed)
        self.codes = codes
        self.base = base
        self.rho = rho
        self.cell_y = cell_y
        self.pa_index = pa_index
        self.v_index = v_index
        self.pa_cards = tuple(pa_cards)
        self.card_v = int(card_v)
        self.sensitive_labels = tuple(sensitive_labels)
        self.intervened = intervened

    def _tables(self, arm_tables: np.ndarray) -> np.ndarray:
        tables = np.asarray(arm_tables, dtype=float)
        want = self.pa_cards + (self.card_v,)
        if tables.ndim != len(want) + 1 or tables.shape[1:] != want:
            raise ProblemError(
                f"arm_tables has shape {tables.shape}; expected (K, {', '.join(map(str, want))}) "
                f"for P_k({self.intervened} | parents)"
            )
        if np.any(tables < 0) or not np.allclose(tables.sum(-1), 1.0, atol=1e-9):
            raise ProblemError("every row of every arm table must be a probability vector")
        return tables

    def arm_prob(self, arm_tables: np.ndarray) -> np.ndarray:
        """``P_k(v_c | pa_c)`` for every arm and cell, shape ``(K, C)``."""
        tables = self._tables(arm_tables)
        return tables[(slice(None),) + self.pa_index + (self.v_index,)]

    def cell_probs(self, arm_tables: np.ndarray) -> np.ndarray:
        """Cell probabilities of each kind of pull of each arm, shape ``(3, K, C)``."""
        probs = self.base[:, None, :] * self.arm_prob(arm_tables)[None, :, :] * self.card_v
        return probs / probs.sum(-1, keepdims=True)  # removes the inference's round-off (~1e-16)

    def means(self, arm_tables: np.ndarray) -> np.ndarray:
        """``E_k[Y]`` with ``S`` natural, set to ``s`` and set to ``s'``, shape ``(3, K)``; valid for
        any tables, including deterministic ones."""
        return self.cell_probs(arm_tables) @ self.cell_y

    def problem(
        self,
        arm_tables: np.ndarray,
        costs: np.ndarray | None = None,
        arm_names: Sequence[str] | None = None,
        name: str | None = None,
    ) -> FairArmsProblem:
        """The :class:`FairArmsProblem` of these arms."""
        return FairArmsProblem(
            self.cell_probs(arm_tables),
            self.arm_prob(arm_tables),
            self.rho,
            self.cell_y,
            costs=costs,
            name=name or self.name,
            arm_names=arm_names,
            sensitive_labels=self.sensitive_labels,
            observed=self.observed,
            cell_codes=self.codes,
        )


def _point_mass(model: DiscreteSCM, node: str, label: Hashable) -> np.ndarray:
    table = np.zeros(model.card(node))
    table[model.code(node, label)] = 1.0
    return table


def observed_joint(
    model: DiscreteSCM, observed: Sequence[str], replace: Mapping[str, tuple] | None = None
) -> np.ndarray:
    """Exact joint distribution of ``observed`` after replacing some mechanisms, by variable
    elimination in a fixed order.

    pgmpy's inference gives the same numbers up to the last bits, but in an order that depends on
    Python's string hashing, so two executions of a notebook could differ in the 16th digit; this
    routine eliminates the non-observed ancestors in reverse topological order and multiplies
    factors with ``numpy.einsum`` in list order, so its result is the same in every process.

    Parameters
    ----------
    model : DiscreteSCM
    observed : sequence of str
        The nodes of the joint, in the order of the returned axes.
    replace : mapping of node to (parents, table)
        Mechanisms to use instead of the model's (a point mass with no parents is ``do``).

    Returns
    -------
    ndarray with one axis per observed node.
    """
    replace = dict(replace or {})
    mech = {
        n: (tuple(replace[n][0]), np.asarray(replace[n][1], dtype=float))
        if n in replace
        else (model.parents(n), model.mechanisms[n].table)
        for n in model.nodes
    }
    needed = set(observed)
    frontier = list(observed)
    while frontier:
        for p in mech[frontier.pop()][0]:
            if p not in needed:
                needed.add(p)
                frontier.append(p)
    order = [n for n in model.nodes if n in needed]  # topological
    factors: list[tuple[tuple[str, ...], np.ndarray]] = [(mech[n][0] + (n,), mech[n][1]) for n in order]
    rank = {n: i for i, n in enumerate(order)}

    def contract(parts, keep):
        labels = {n: i for i, n in enumerate(sorted({v for axes, _ in parts for v in axes} | set(keep), key=rank.get))}
        args: list = []
        for axes, table in parts:
            args += [table, [labels[v] for v in axes]]
        return np.einsum(*args, [labels[v] for v in keep], optimize=False)

    for x in reversed(order):
        if x in observed:
            continue
        touching = [f for f in factors if x in f[0]]
        factors = [f for f in factors if x not in f[0]]
        keep = tuple(sorted({v for axes, _ in touching for v in axes} - {x}, key=rank.get))
        factors.append((keep, contract(touching, keep)))
    return contract(factors, tuple(observed))


def observation_model(
    model: DiscreteSCM,
    sensitive: str,
    intervened: str,
    outcome: str,
    outcome_values: Sequence[float] | Mapping[Hashable, float] | None = None,
    sensitive_values: tuple[Hashable, Hashable] | None = None,
    sensitive_children: Sequence[str] | None = None,
    name: str | None = None,
) -> ObservationModel:
    """The :class:`ObservationModel` of a discrete causal model with the paper's roles.

    Parameters
    ----------
    model : DiscreteSCM
    sensitive : str
        ``S``: a root; ``sensitive_values`` (default: its first two states) are ``s`` and ``s'``.
    intervened : str
        ``V``: the node whose mechanism the arms replace; ``S`` must not be one of its parents.
    outcome : str
        ``Y``.
    outcome_values : sequence or mapping, optional
        The number in ``[0, 1]`` of each state of ``Y`` (default: the state labels).
    sensitive_children : sequence of str, optional
        The children of ``S`` whose conditionals are reweighted (``ch(S)`` in Eq. 1). Default: the
        children of ``S`` that are ancestors of ``Y`` (or ``Y`` itself); any other child may be
        added but none of those may be left out, or the counterfactual estimator is biased.

    Raises
    ------
    ProblemError
        Naming the role or node that violates an assumption.
    """
    name = name or f"{model.name}: σ({intervened}) → {outcome}, S = {sensitive}"
    for role, node in (("sensitive", sensitive), ("intervened", intervened), ("outcome", outcome)):
        if node not in model.states:
            raise ProblemError(f"{role} node {node!r} is not in {model.name}")
    if len({sensitive, intervened, outcome}) != 3:
        raise ProblemError(
            f"sensitive={sensitive!r}, intervened={intervened!r} and outcome={outcome!r} must be three different nodes"
        )
    if model.parents(sensitive):
        raise ProblemError(
            f"the sensitive attribute {sensitive!r} has parents {model.parents(sensitive)}; "
            "the paper assumes it is a root"
        )
    pa_v = list(model.parents(intervened))
    if sensitive in pa_v:
        raise ProblemError(
            f"{sensitive!r} is a parent of the intervened node {intervened!r}; "
            "the arms would change a mechanism that S enters"
        )
    s_vals = tuple(sensitive_values) if sensitive_values is not None else tuple(model.states[sensitive][:2])
    if len(s_vals) != 2 or s_vals[0] == s_vals[1]:
        raise ProblemError(f"sensitive_values={sensitive_values!r} must be two different states of {sensitive!r}")
    s_codes = [model.code(sensitive, v) for v in s_vals]
    children = sorted(model.graph.successors(sensitive))
    ancestors = nx.ancestors(model.graph, outcome) | {outcome}
    needed = [c for c in children if c in ancestors]
    ch = list(sensitive_children) if sensitive_children is not None else needed
    for c in ch:
        if c not in children:
            raise ProblemError(
                f"sensitive_children names {c!r}, which is not a child of {sensitive!r} (children: {children})"
            )
    missing = [c for c in needed if c not in ch]
    if missing:
        raise ProblemError(
            f"sensitive_children leaves out {missing}: children of {sensitive!r} that affect {outcome!r} "
            "must be reweighted"
        )
    observed = _dedupe(
        pa_v + [intervened] + [n for c in ch for n in (c, *model.parents(c)) if n != sensitive] + [outcome]
    )

    card_v = model.card(intervened)
    pa_cards = tuple(model.card(p) for p in pa_v)
    if outcome_values is None:
        yv = np.asarray(model.states[outcome], dtype=float)
    elif isinstance(outcome_values, Mapping):
        yv = np.array([float(outcome_values[s]) for s in model.states[outcome]])
    else:
        yv = np.asarray(outcome_values, dtype=float)
    if yv.shape != (model.card(outcome),):
        raise ProblemError(
            f"outcome_values must give one number per state of {outcome!r} ({model.card(outcome)} states)"
        )
    if np.any((yv < 0) | (yv > 1)):
        raise ProblemError(f"outcome_values {yv.tolist()} must lie in [0, 1]")

    uniform = np.full(pa_cards + (card_v,), 1.0 / card_v)
    base = np.stack(
        [
            observed_joint(model, observed, replace={intervened: (tuple(pa_v), uniform)}),
            observed_joint(
                model,
                observed,
                replace={intervened: (tuple(pa_v), uniform), sensitive: ((), _point_mass(model, sensitive, s_vals[0]))},
            ),
            observed_joint(
                model,
                observed,
                replace={intervened: (tuple(pa_v), uniform), sensitive: ((), _point_mass(model, sensitive, s_vals[1]))},
            ),
        ]
    ).reshape(3, -1)
    cards = [model.card(n) for n in observed]
    codes = np.array(np.unravel_index(np.arange(int(np.prod(cards))), cards)).T  # (C, n_obs)
    col = {n: i for i, n in enumerate(observed)}
    reach = base.sum(0) > 0
    rho = np.ones(codes.shape[0])
    for c in ch:
        table = model.mechanisms[c].table
        idx_s = tuple(np.full(len(codes), s_codes[0]) if p == sensitive else codes[:, col[p]] for p in model.parents(c))
        idx_sp = tuple(
            np.full(len(codes), s_codes[1]) if p == sensitive else codes[:, col[p]] for p in model.parents(c)
        )
        x = codes[:, col[c]]
        num, den = table[idx_s + (x,)], table[idx_sp + (x,)]
        if np.any(((den <= 0) | (num <= 0)) & reach):
            raise ProblemError(
                f"P({c} | ..., {sensitive}) is zero for one value of {sensitive} where the other is positive; "
                "P_s/P_s' is not finite"
            )
        rho *= np.where(reach, num / np.where(den > 0, den, 1.0), 1.0)
    return ObservationModel(
        name=name,
        observed=observed,
        codes=codes,
        base=base,
        rho=rho,
        cell_y=yv[codes[:, col[outcome]]],
        pa_index=tuple(codes[:, col[p]] for p in pa_v),
        v_index=codes[:, col[intervened]],
        pa_cards=pa_cards,
        card_v=card_v,
        sensitive_labels=s_vals,
        intervened=intervened,
    )


def problem_from_scm(
    model: DiscreteSCM,
    sensitive: str,
    intervened: str,
    outcome: str,
    arm_tables: np.ndarray,
    outcome_values: Sequence[float] | Mapping[Hashable, float] | None = None,
    sensitive_values: tuple[Hashable, Hashable] | None = None,
    sensitive_children: Sequence[str] | None = None,
    costs: np.ndarray | None = None,
    arm_names: Sequence[str] | None = None,
    name: str | None = None,
) -> FairArmsProblem:
    """A :class:`FairArmsProblem` for ``arm_tables`` (shape ``(K, *pa_cards(V), card(V))``) on a
    causal model: :func:`observation_model` followed by :meth:`ObservationModel.problem`."""
    obs = observation_model(
        model, sensitive, intervened, outcome, outcome_values, sensitive_values, sensitive_children, name
    )
    return obs.problem(arm_tables, costs=costs, arm_names=arm_names)
