"""Graph utilities: d-separation against brute-force path enumeration on random DAGs."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.core import graphs


@st.composite
def random_dag(draw, max_nodes=7):
    n = draw(st.integers(3, max_nodes))
    nodes = [f"N{i}" for i in range(n)]
    edges = [(nodes[i], nodes[j]) for i, j in itertools.combinations(range(n), 2) if draw(st.booleans())]
    g = nx.DiGraph(edges)
    g.add_nodes_from(nodes)
    return g


def path_blocked(g: nx.DiGraph, path: list[str], z: set[str]) -> bool:
    """Pearl's rule for one path: a non-collider in Z, or a collider with itself and all its
    descendants outside Z, blocks it."""
    for a, m, b in zip(path, path[1:], path[2:]):
        collider = g.has_edge(a, m) and g.has_edge(b, m)
        if collider:
            if m not in z and not (nx.descendants(g, m) & z):
                return True
        elif m in z:
            return True
    return False


def brute_force_d_separated(g: nx.DiGraph, x: set[str], y: set[str], z: set[str]) -> bool:
    skeleton = g.to_undirected()
    for a in x:
        for b in y:
            for path in nx.all_simple_paths(skeleton, a, b):
                if not path_blocked(g, path, z):
                    return False
    return True


@given(g=random_dag(), data=st.data())
@settings(max_examples=150, deadline=None)
def test_d_separation_agrees_with_path_enumeration(g, data):
    nodes = sorted(g.nodes)
    x = data.draw(st.sampled_from(nodes))
    y = data.draw(st.sampled_from([n for n in nodes if n != x]))
    rest = [n for n in nodes if n not in (x, y)]
    z = set(data.draw(st.lists(st.sampled_from(rest), unique=True))) if rest else set()
    assert graphs.d_separated(g, {x}, {y}, z) == brute_force_d_separated(g, {x}, {y}, z)


@given(g=random_dag(6), data=st.data())
@settings(max_examples=60, deadline=None)
def test_every_enumerated_separator_separates_and_minimal_one_is_minimal(g, data):
    nodes = sorted(g.nodes)
    x = data.draw(st.sampled_from(nodes))
    y = data.draw(st.sampled_from([n for n in nodes if n != x]))
    found = list(graphs.d_separators(g, {x}, {y}))
    for s in found:
        assert brute_force_d_separated(g, {x}, {y}, set(s))
    minimal = graphs.minimal_d_separator(g, {x}, {y})
    if minimal is None:
        assert not found
    else:
        assert brute_force_d_separated(g, {x}, {y}, minimal)
        for k in minimal:
            assert not brute_force_d_separated(g, {x}, {y}, minimal - {k})


def test_minimum_cost_separator_uses_cost_then_size():
    # X -> M1 -> Y and X -> M2 -> Y: must block both mediators; cost decides nothing else here
    g = nx.DiGraph([("X", "M1"), ("M1", "Y"), ("X", "M2"), ("M2", "Y"), ("X", "A"), ("A", "M1")])
    sep, cost = graphs.minimum_cost_d_separator(g, {"X"}, {"Y"}, cost=lambda s: len(s) * 10)
    assert sep == frozenset({"M1", "M2"}) and cost == 20


def test_backdoor_sets_on_the_textbook_example():
    g = nx.DiGraph([("Z", "X"), ("Z", "Y"), ("X", "Y"), ("X", "M"), ("M", "Y")])
    assert graphs.is_backdoor_set(g, {"X"}, {"Y"}, {"Z"})
    assert not graphs.is_backdoor_set(g, {"X"}, {"Y"}, set())
    assert not graphs.is_backdoor_set(g, {"X"}, {"Y"}, {"Z", "M"})  # M descends from X
    assert graphs.minimal_backdoor_sets(g, {"X"}, {"Y"}) == [frozenset({"Z"})]


def test_errors_name_the_node_or_cycle():
    with pytest.raises(graphs.GraphError, match="directed cycle"):
        graphs.as_dag([("A", "B"), ("B", "A")])
    g = nx.DiGraph([("A", "B")])
    with pytest.raises(graphs.GraphError, match="node 'Q' in ys"):
        graphs.d_separated(g, {"A"}, {"Q"})
    with pytest.raises(graphs.GraphError, match="in both xs and zs"):
        graphs.d_separated(g, {"A"}, {"B"}, {"A"})
