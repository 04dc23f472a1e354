"""The d-separation set of smallest domain (Algorithm 1 and 2, line 2; Theorem 1).

D-UCB learns one mean per joint value of a set **W** ⊆ **A** ∪ **X** ∪ **I** that d-separates the
reward ``R`` from the arm and user features outside it, ``(A ∪ X) ∖ W``. Theorem 1's regret grows
with the *domain size* ``|dom W| = Π_{V ∈ W} card(V)``, so line 2 asks for the separator of least
domain. (The algorithm boxes print "minimum subset **Z** in terms of domain space"; minimising the
domain of **Z** = **W** ∖ (**A** ∪ **X**) alone is trivial, **W** = **A** ∪ **X** has an empty **Z**,
so we minimise the domain of **W**, as the text and Theorem 1 do.)

The set to separate from depends on **W** itself, so the search runs over the arm/user part
``W_AX = W ∩ (A ∪ X)``: for each choice, :func:`causalbandits_lib.core.graphs.minimum_cost_d_separator`
finds the cheapest completion by intermediate nodes, with cost = domain size (infinite for sets
that drop a node of ``W_AX``). Ties: smaller domain, then fewer nodes, then alphabetical.
"""

from __future__ import annotations

import itertools
import math
from typing import Collection, Mapping

import networkx as nx

from ..core.graphs import as_dag, d_separated, minimum_cost_d_separator

__all__ = ["domain_size", "is_reward_separator", "minimum_domain_separator", "reward_separators"]


def domain_size(nodes: Collection[str], cards: Mapping[str, int]) -> int:
    """``Π card(V)`` over ``nodes`` (1 for the empty set)."""
    missing = [n for n in nodes if n not in cards]
    if missing:
        raise KeyError(f"no number of states for node {missing[0]!r}; cards are given for {sorted(cards)}")
    return math.prod(int(cards[n]) for n in nodes)


def _roles(graph, reward, arm_nodes, context_nodes, intermediate_nodes):
    g = as_dag(graph)
    arms, ctx, inter = set(arm_nodes), set(context_nodes), set(intermediate_nodes)
    for label, s in (("arm_nodes", arms), ("context_nodes", ctx), ("intermediate_nodes", inter), ("reward", {reward})):
        missing = sorted(n for n in s if n not in g)
        if missing:
            raise ValueError(
                f"{label} names {missing[0]!r}, which is not in the graph; nodes are {sorted(map(str, g.nodes))}"
            )
    for (la, a), (lb, b) in itertools.combinations(
        (("arm_nodes", arms), ("context_nodes", ctx), ("intermediate_nodes", inter), ("reward", {reward})), 2
    ):
        if a & b:
            raise ValueError(f"node {sorted(a & b)[0]!r} is in both {la} and {lb}")
    return g, arms | ctx, inter


def is_reward_separator(graph: nx.DiGraph, w: Collection[str], reward: str, arm_nodes, context_nodes) -> bool:
    """Whether **W** d-separates ``reward`` from ``(A ∪ X) ∖ W`` (true when nothing is left)."""
    rest = (set(arm_nodes) | set(context_nodes)) - set(w)
    return True if not rest else d_separated(graph, rest, {reward}, set(w))


def minimum_domain_separator(
    graph: nx.DiGraph,
    reward: str,
    arm_nodes: Collection[str],
    context_nodes: Collection[str],
    intermediate_nodes: Collection[str],
    cards: Mapping[str, int],
) -> tuple[frozenset[str], int]:
    """The set **W** ⊆ **A** ∪ **X** ∪ **I** of least ``|dom W|`` that d-separates ``reward`` from
    ``(A ∪ X) ∖ W``.

    Parameters
    ----------
    graph : networkx.DiGraph
        The causal graph including the reward node.
    reward : str
    arm_nodes, context_nodes, intermediate_nodes : collections of str
        The roles **A**, **X**, **I** (disjoint).
    cards : mapping of node to int
        Number of states of each candidate node.

    Returns
    -------
    (W, |dom W|)
        Ties go to fewer nodes, then to the alphabetically first sorted list. A solution always
        exists (**W** = **A** ∪ **X** is one).
    """
    g, ax, inter = _roles(graph, reward, arm_nodes, context_nodes, intermediate_nodes)
    best = None
    for k in range(len(ax) + 1):
        for w_ax in itertools.combinations(sorted(ax), k):
            w_ax = frozenset(w_ax)
            rest = ax - w_ax
            if not rest:
                found = (w_ax, domain_size(w_ax, cards))
            else:

                def cost(s, w_ax=w_ax):
                    return domain_size(s, cards) if w_ax <= s else math.inf

                found = minimum_cost_d_separator(g, rest, {reward}, cost, candidates=inter | w_ax)
                if found is None or math.isinf(found[1]):
                    continue
            key = (found[1], len(found[0]), sorted(found[0]))
            if best is None or key < best[0]:
                best = (key, found[0])
    return best[1], int(best[0][0])


def reward_separators(
    graph: nx.DiGraph,
    reward: str,
    arm_nodes: Collection[str],
    context_nodes: Collection[str],
    intermediate_nodes: Collection[str],
    cards: Mapping[str, int],
) -> list[tuple[frozenset[str], int]]:
    """Every **W** ⊆ **A** ∪ **X** ∪ **I** that d-separates ``reward`` from ``(A ∪ X) ∖ W``, with its
    domain size, sorted by (domain, number of nodes, names). Exhaustive: for showing the ranking on
    small graphs (the tests check the search against their own brute force)."""
    g, ax, inter = _roles(graph, reward, arm_nodes, context_nodes, intermediate_nodes)
    cand = sorted(ax | inter)
    out = []
    for k in range(len(cand) + 1):
        for w in itertools.combinations(cand, k):
            if is_reward_separator(g, w, reward, arm_nodes, context_nodes):
                out.append((frozenset(w), domain_size(w, cards)))
    return sorted(out, key=lambda x: (x[1], len(x[0]), sorted(x[0])))
