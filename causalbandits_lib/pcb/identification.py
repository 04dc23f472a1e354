"""The graph side of BCE (Huang and Wu 2024, Algorithms 1-3): what the biased data can identify.

Everything here is structural (it reads the causal diagram, never the data):

- :func:`latent_projection`: the acyclic directed mixed graph (ADMG) of a DAG with hidden nodes;
  a bidirected edge ``A <-> B`` marks a hidden common cause;
- :func:`c_components`: the confounded components (Tian and Pearl 2002);
- :func:`identify`: Tian and Pearl's (2003) ``Identify(C, T, Q[T])``, the graph test of whether the
  c-factor ``Q[C]`` is computable from ``Q[T]``;
- :func:`is_identifiable`: whether ``P(y | do(x))`` is identifiable from ``P(V)`` (Tian and Pearl
  2002, c-component factorisation, eq. (4) of the paper);
- :func:`rc_star`: the paper's RC* (Algorithm 2): is a c-factor recoverable from ``P(V | S=1)``?
  If not, the paper bounds it by ``[0, 1]``;
- :func:`c_component_route`: Algorithm 1, lines 5-10: the decomposition of ``P_x(y, c)`` into
  c-factors and RC*'s verdict on each;
- :func:`find_rsi`: Algorithm 3 with the exchange condition the paper states before Theorem 4,
  ``(Y, C ⊥ W, S | X)`` in ``G`` with the edges into ``X`` and out of ``W`` removed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Collection, Iterable

import networkx as nx

from ..core import graphs

__all__ = [
    "ADMG",
    "latent_projection",
    "c_components",
    "ancestors",
    "identify",
    "is_identifiable",
    "rc_star",
    "CComponentRoute",
    "c_component_route",
    "exchange_condition_holds",
    "find_rsi",
]


@dataclass(frozen=True)
class ADMG:
    """An acyclic directed mixed graph.

    Attributes
    ----------
    directed : networkx.DiGraph
        Directed edges between observed nodes (all observed nodes are its nodes).
    bidirected : frozenset of frozenset
        Unordered pairs ``{A, B}`` sharing a hidden common cause.
    """

    directed: nx.DiGraph
    bidirected: frozenset

    @property
    def nodes(self) -> frozenset:
        return frozenset(self.directed.nodes)

    def subgraph(self, nodes: Collection[str]) -> "ADMG":
        """The induced sub-ADMG ``G_nodes``."""
        keep = set(nodes)
        missing = keep - self.nodes
        if missing:
            raise graphs.GraphError(f"node {sorted(missing)[0]!r} is not in the graph; nodes are {sorted(self.nodes)}")
        return ADMG(self.directed.subgraph(keep).copy(), frozenset(e for e in self.bidirected if e <= keep))


def latent_projection(dag: nx.DiGraph, latent: Iterable[str]) -> ADMG:
    """Project the hidden nodes of a DAG out (Verma's latent projection).

    ``A -> B`` for observed ``A, B`` when a directed path from ``A`` to ``B`` has only hidden
    intermediate nodes; ``A <-> B`` when some hidden node reaches both through hidden-only directed
    paths.
    """
    g = graphs.as_dag(dag)
    hidden = set(latent)
    missing = hidden - set(g.nodes)
    if missing:
        raise graphs.GraphError(
            f"latent node {sorted(missing)[0]!r} is not in the graph; nodes are {sorted(map(str, g.nodes))}"
        )
    observed = [n for n in g.nodes if n not in hidden]

    def observed_reach(start: str) -> set[str]:
        """Observed nodes reached from ``start`` by directed paths whose inner nodes are hidden."""
        out, stack, seen = set(), list(g.successors(start)), set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in hidden:
                stack.extend(g.successors(n))
            else:
                out.add(n)
        return out

    directed = nx.DiGraph()
    directed.add_nodes_from(observed)
    for a in observed:
        directed.add_edges_from((a, b) for b in observed_reach(a))
    bidirected = set()
    for h in hidden:
        reached = sorted(observed_reach(h))
        bidirected.update(frozenset(p) for p in itertools.combinations(reached, 2))
    return ADMG(directed, frozenset(bidirected))


def c_components(admg: ADMG, nodes: Collection[str] | None = None) -> list[frozenset]:
    """The c-components of ``G_nodes``: classes of nodes joined by bidirected paths inside ``nodes``.

    Returned in a deterministic order (by their smallest node name).
    """
    keep = set(admg.nodes if nodes is None else nodes)
    u = nx.Graph()
    u.add_nodes_from(keep)
    u.add_edges_from(tuple(e) for e in admg.bidirected if e <= keep)
    return sorted((frozenset(c) for c in nx.connected_components(u)), key=lambda c: min(c))


def ancestors(admg: ADMG, targets: Collection[str], within: Collection[str] | None = None) -> frozenset:
    """``An(targets)`` in ``G_within`` (directed edges only), the targets included."""
    keep = set(admg.nodes if within is None else within)
    t = set(targets)
    if not t <= keep:
        raise graphs.GraphError(f"targets {sorted(t - keep)} are not inside the node set {sorted(keep)}")
    sub = admg.directed.subgraph(keep)
    out = set(t)
    for n in t:
        out |= nx.ancestors(sub, n)
    return frozenset(out)


def identify(c: Collection[str], t: Collection[str], admg: ADMG) -> bool:
    """Tian and Pearl's (2003) ``Identify(C, T, Q[T])``: is ``Q[C]`` computable from ``Q[T]``?

    ``C ⊆ T`` with ``T`` a c-component of ``G_T``. Let ``A = An(C)`` in ``G_T``: if ``A = C`` the
    answer is yes (``Q[C] = Σ_{T∖C} Q[T]``); if ``A = T`` it is no (FAIL); otherwise recurse on the
    c-component of ``G_A`` that contains ``C``.
    """
    c, t = frozenset(c), frozenset(t)
    if not c <= t:
        raise graphs.GraphError(f"identify: C={sorted(c)} must be a subset of T={sorted(t)}")
    while True:
        a = ancestors(admg, c, within=t)
        if a == c:
            return True
        if a == t:
            return False
        t = next(comp for comp in c_components(admg, a) if c <= comp)


def is_identifiable(outcomes: Collection[str], treatments: Collection[str], admg: ADMG) -> bool:
    """Whether ``P(outcomes | do(treatments))`` is identifiable from ``P(V)`` in ``admg``.

    Tian and Pearl (2002): with ``D = An(Y)`` in ``G_{V∖X}``, it is identifiable iff every
    c-component ``D_i`` of ``G_D`` has ``Identify(D_i, S_j)`` succeed, ``S_j`` being the
    c-component of ``G`` that contains ``D_i``.
    """
    y, x = set(outcomes), set(treatments)
    for label, s in (("outcomes", y), ("treatments", x)):
        if not s <= admg.nodes:
            raise graphs.GraphError(
                f"{label} {sorted(s - admg.nodes)} are not in the graph; nodes are {sorted(admg.nodes)}"
            )
    rest = admg.nodes - x
    d = ancestors(admg, y, within=rest)
    whole = c_components(admg)
    for di in c_components(admg, d):
        sj = next(comp for comp in whole if di <= comp)
        if not identify(di, sj, admg):
            return False
    return True


def rc_star(e: Collection[str], admg: ADMG, selection: str) -> bool:
    """The paper's RC* (Algorithm 2), structurally: is the c-factor ``Q[E]`` recoverable from
    ``P(V | S=1)``?

    1. Keep only ``An(E) ∪ An(S)`` (line 4-5).
    2. The c-components that contain no ancestor of ``S`` are recoverable (Bareinboim and Tian
       2015, Lemma 3); if there are none, ``Q[E]`` is not recoverable and the paper bounds it by
       ``[0, 1]`` (lines 7-10).
    3. If ``E`` lies inside one of them, ``Q[E]`` is recoverable iff ``Identify`` succeeds there
       (lines 12-13).
    4. Otherwise divide those c-factors out and recurse on the rest of the graph (line 15).

    Where the paper's pseudocode leaves a case undefined (``E`` partly inside a recoverable
    component, or inside one where Identify fails, after which line 15 would remove nodes of
    ``E``) we return False, i.e. the trivial bound ``[0, 1]``, which is always valid.

    Returns
    -------
    bool
        True if recoverable (RC* returns a point value), False if RC* returns ``[0, 1]``.
    """
    e = frozenset(e)
    if selection not in admg.nodes:
        raise graphs.GraphError(f"selection node {selection!r} is not in the graph; nodes are {sorted(admg.nodes)}")
    if not e or not e <= admg.nodes or selection in e:
        raise graphs.GraphError(f"E={sorted(e)} must be a non-empty set of graph nodes other than {selection!r}")
    nodes = frozenset(admg.nodes)
    while True:
        keep = ancestors(admg, e | {selection}, within=nodes)
        nodes = keep
        an_s = ancestors(admg, {selection}, within=nodes)
        free = [comp for comp in c_components(admg, nodes - {selection}) if not comp & an_s]
        if not free:
            return False
        for comp in free:
            if e <= comp:
                return identify(e, comp, admg.subgraph(nodes))
        union = frozenset().union(*free)
        if e & union:
            return False
        nodes = nodes - union


@dataclass(frozen=True)
class CComponentRoute:
    """Algorithm 1, lines 5-10: ``P_x(y, c) = Σ_{D∖(Y ∪ C)} Π_i Q[D_i]``, eq. (4).

    Attributes
    ----------
    d : frozenset
        ``D = An(Y ∪ C)`` in ``G_{V∖X}`` (the selection node excluded).
    components : tuple of frozenset
        The c-components ``D_i`` of ``G_D``.
    recoverable : tuple of bool
        RC*'s verdict for each ``D_i`` (False: bounded by ``[0, 1]``).
    summed : frozenset
        ``D ∖ (Y ∪ C)``, the variables summed over.
    """

    d: frozenset
    components: tuple
    recoverable: tuple
    summed: frozenset


def c_component_route(admg: ADMG, treatments, outcome: str, context, selection: str) -> CComponentRoute:
    """Decompose ``P_x(y, c)`` into c-factors and run :func:`rc_star` on each (Algorithm 1,
    lines 5-9).

    Derived in notebooks/pcb/02_causal_bounds.md, section 'The c-component route'
    (equation ``pcb-eq7-theorem3-bounds``).
    """
    x, c = frozenset(treatments), frozenset(context)
    causal = admg.subgraph(admg.nodes - {selection})
    d = ancestors(causal, c | {outcome}, within=causal.nodes - x)
    comps = tuple(c_components(causal, d))
    rec = tuple(rc_star(di, admg, selection) for di in comps)
    return CComponentRoute(d, comps, rec, frozenset(d - c - {outcome}))


def exchange_condition_holds(dag: nx.DiGraph, treatments, substitute, outcome: str, context, selection: str) -> bool:
    """The condition the paper uses to turn ``P_x(y, c | w)`` into ``P_{x,w}(y, c)``:
    ``(Y, C ⊥ W, S | X)`` in ``G_{X̄ W̲}`` (edges into ``X`` and out of ``W`` removed).

    Checked by d-separation on the DAG *with* its hidden nodes (never conditioned on).
    """
    g = graphs.as_dag(dag)
    x, w = set(treatments), set(substitute)
    cut = g.copy()
    cut.remove_edges_from([(a, b) for a, b in g.edges if b in x or a in w])
    return graphs.d_separated(cut, {outcome} | set(context), w | {selection}, x)


def find_rsi(
    dag: nx.DiGraph, latent, treatments, outcome: str, context, selection: str, max_size: int | None = None
) -> list[frozenset]:
    """FindRSI (Algorithm 3): the sets ``W`` (disjoint from ``X``, ``Y``, ``C``, ``S`` and hidden
    nodes), by increasing size, for which the paper's exchange condition
    (:func:`exchange_condition_holds`) holds, so that ``P_{x,w}(y, c)`` may replace
    ``P_x(y, c | w)`` in eq. (8).
    """
    g = graphs.as_dag(dag)
    hidden = set(latent)
    excluded = set(treatments) | set(context) | {outcome, selection} | hidden
    candidates = sorted(n for n in g.nodes if n not in excluded)
    top = len(candidates) if max_size is None else min(max_size, len(candidates))
    found = []
    for k in range(1, top + 1):
        for combo in itertools.combinations(candidates, k):
            if exchange_condition_holds(g, treatments, combo, outcome, context, selection):
                found.append(frozenset(combo))
    return found
