"""Causal graph utilities on networkx: d-separation, separators and back-door adjustment sets.

All functions take a :class:`networkx.DiGraph` (or anything with ``.edges`` and ``.nodes`` that
networkx accepts) and check that it is acyclic and that the named nodes exist, so that a typo gives
an error naming the node instead of a silent "separated".
"""

from __future__ import annotations

import itertools
from typing import Callable, Collection, Iterable, Iterator

import networkx as nx

__all__ = [
    "GraphError",
    "as_dag",
    "d_separated",
    "minimal_d_separator",
    "d_separators",
    "minimum_cost_d_separator",
    "backdoor_graph",
    "is_backdoor_set",
    "backdoor_sets",
    "minimal_backdoor_sets",
]


class GraphError(ValueError):
    """The graph is cyclic, or a named node is missing, or node sets overlap."""


def as_dag(graph: nx.DiGraph | Iterable[tuple[str, str]], nodes: Iterable[str] = ()) -> nx.DiGraph:
    """A :class:`networkx.DiGraph` from a graph or an edge list, checked to be acyclic.

    Parameters
    ----------
    graph : DiGraph or iterable of (parent, child)
    nodes : iterable of str
        Extra isolated nodes to include.

    Raises
    ------
    GraphError
        Naming a directed cycle.
    """
    g = graph.copy() if isinstance(graph, nx.DiGraph) else nx.DiGraph(list(graph))
    g.add_nodes_from(nodes)
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return g
    path = " -> ".join([e[0] for e in cycle] + [cycle[0][0]])
    raise GraphError(f"the graph has a directed cycle {path}; causal graphs must be acyclic")


def _sets(g: nx.DiGraph, **named: Collection[str]) -> list[set[str]]:
    out = []
    for label, nodes in named.items():
        s = {nodes} if isinstance(nodes, str) else set(nodes)
        missing = sorted(str(n) for n in s if n not in g)
        if missing:
            raise GraphError(
                f"node {missing[0]!r} in {label} is not in the graph; nodes are {sorted(map(str, g.nodes))}"
            )
        out.append(s)
    names = list(named)
    for (i, a), (j, b) in itertools.combinations(enumerate(out), 2):
        common = a & b
        if common:
            raise GraphError(
                f"node {sorted(common)[0]!r} is in both {names[i]} and {names[j]}; the sets must be disjoint"
            )
    return out


def d_separated(graph: nx.DiGraph, xs: Collection[str], ys: Collection[str], zs: Collection[str] = ()) -> bool:
    """Whether ``zs`` d-separates ``xs`` from ``ys`` (Pearl 2009, Def. 1.2.3)."""
    g = as_dag(graph)
    x, y, z = _sets(g, xs=xs, ys=ys, zs=zs)
    return nx.is_d_separator(g, x, y, z)


def minimal_d_separator(
    graph: nx.DiGraph,
    xs: Collection[str],
    ys: Collection[str],
    included: Collection[str] = (),
    restricted: Collection[str] | None = None,
) -> set[str] | None:
    """A minimal (no proper subset works) d-separator with ``included ⊆ Z ⊆ restricted``, or None.

    Thin wrapper of :func:`networkx.find_minimal_d_separator` (van der Zander, Liśkiewicz and
    Textor, 2019) with node checks.
    """
    g = as_dag(graph)
    x, y = _sets(g, xs=xs, ys=ys)
    inc = set(included)
    res = set(g.nodes) - x - y if restricted is None else set(restricted)
    _sets(g, included=inc, restricted=res)  # existence only (they may overlap)
    return nx.find_minimal_d_separator(g, x, y, included=inc, restricted=res)


def d_separators(
    graph: nx.DiGraph,
    xs: Collection[str],
    ys: Collection[str],
    candidates: Collection[str] | None = None,
    max_size: int | None = None,
) -> Iterator[frozenset[str]]:
    """Every subset of ``candidates`` (by increasing size) that d-separates ``xs`` from ``ys``.

    Exhaustive, so meant for the small graphs of the book (2^|candidates| tests).
    """
    g = as_dag(graph)
    x, y = _sets(g, xs=xs, ys=ys)
    cand = sorted(set(g.nodes) - x - y if candidates is None else set(candidates) - x - y)
    _sets(g, candidates=cand)
    top = len(cand) if max_size is None else min(max_size, len(cand))
    for k in range(top + 1):
        for combo in itertools.combinations(cand, k):
            if nx.is_d_separator(g, x, y, set(combo)):
                yield frozenset(combo)


def minimum_cost_d_separator(
    graph: nx.DiGraph,
    xs: Collection[str],
    ys: Collection[str],
    cost: Callable[[frozenset[str]], float],
    candidates: Collection[str] | None = None,
) -> tuple[frozenset[str], float] | None:
    """The d-separator of least ``cost`` among subsets of ``candidates`` (ties: fewer nodes, then
    alphabetical), found by exhaustive search; None if none exists.

    Tian, Paz and Pearl (1998) solve the minimum-cost problem with a min-cut for additive costs;
    the book's graphs are small, and the costs it needs (a domain size, i.e. a product) are not
    additive, so exhaustive search is both exact and fast enough here.
    """
    best = None
    for sep in d_separators(graph, xs, ys, candidates):
        key = (cost(sep), len(sep), sorted(sep))
        if best is None or key < best[0]:
            best = (key, sep)
    return None if best is None else (best[1], best[0][0])


def backdoor_graph(graph: nx.DiGraph, treatments: Collection[str]) -> nx.DiGraph:
    """The graph with every edge out of the treatments removed."""
    g = as_dag(graph)
    (t,) = _sets(g, treatments=treatments)
    out = g.copy()
    out.remove_edges_from([(a, b) for a, b in g.edges if a in t])
    return out


def is_backdoor_set(
    graph: nx.DiGraph, treatments: Collection[str], outcomes: Collection[str], zs: Collection[str]
) -> bool:
    """Pearl's back-door criterion: no element of ``zs`` descends from a treatment, and ``zs``
    blocks every path from a treatment to an outcome that starts with an arrow into the treatment.

    When it holds, ``P(y | do(x)) = Σ_z P(y | x, z) P(z)`` (Pearl 2009, Thm 3.3.2).
    """
    g = as_dag(graph)
    t, o, z = _sets(g, treatments=treatments, outcomes=outcomes, zs=zs)
    desc = set().union(*(nx.descendants(g, n) for n in t)) if t else set()
    if z & desc:
        return False
    return nx.is_d_separator(backdoor_graph(g, t), t, o, z)


def backdoor_sets(
    graph: nx.DiGraph, treatments: Collection[str], outcomes: Collection[str], candidates: Collection[str] | None = None
) -> Iterator[frozenset[str]]:
    """Every back-door adjustment set among subsets of ``candidates``, by increasing size."""
    g = as_dag(graph)
    t, o = _sets(g, treatments=treatments, outcomes=outcomes)
    cand = sorted(set(g.nodes) - t - o if candidates is None else set(candidates) - t - o)
    for k in range(len(cand) + 1):
        for combo in itertools.combinations(cand, k):
            if is_backdoor_set(g, t, o, combo):
                yield frozenset(combo)


def minimal_backdoor_sets(
    graph: nx.DiGraph, treatments: Collection[str], outcomes: Collection[str], candidates: Collection[str] | None = None
) -> list[frozenset[str]]:
    """The back-door sets none of whose proper subsets is one."""
    found: list[frozenset[str]] = []
    for s in backdoor_sets(graph, treatments, outcomes, candidates):
        if not any(f <= s for f in found):
            found.append(s)
    return found
