"""The d-separation set of smallest domain: on the Email graph, and against brute force on random DAGs."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.fucb.instances.email_campaign import (
    ARM_NODES,
    CONTEXT_NODES,
    INTERMEDIATE_NODES,
    email_campaign_env,
    email_graph,
)
from causalbandits_lib.fucb.separators import domain_size, minimum_domain_separator, reward_separators


@pytest.fixture(scope="module")
def env():
    return email_campaign_env()


def test_minimum_domain_separator_on_the_email_graph(env):
    g = email_graph(env.model)
    cards = {n: env.model.card(n) for n in env.model.states}
    w, dom = minimum_domain_separator(g, "R", ARM_NODES, CONTEXT_NODES, INTERMEDIATE_NODES, cards)
    assert w == {"A3", "I1", "I2"} and dom == 12
    ranked = reward_separators(g, "R", ARM_NODES, CONTEXT_NODES, INTERMEDIATE_NODES, cards)
    assert ranked[0] == (w, 12)
    assert domain_size(sorted(g.predecessors("R")), cards) == 24
    with pytest.raises(ValueError, match="both"):
        minimum_domain_separator(g, "R", ARM_NODES, ("X1", "A1"), INTERMEDIATE_NODES, cards)


def _brute_force(g, reward, arms, ctx, inter, cards):
    ax = set(arms) | set(ctx)
    best = None
    for k in range(len(ax | set(inter)) + 1):
        for w in itertools.combinations(sorted(ax | set(inter)), k):
            rest = ax - set(w)
            if rest and not nx.is_d_separator(g, rest, {reward}, set(w)):
                continue
            key = (int(np.prod([cards[n] for n in w])), len(w), sorted(w))
            best = key if best is None or key < best else best
    return frozenset(best[2]), best[0]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_minimum_domain_separator_matches_brute_force_on_random_dags(data):
    n = data.draw(st.integers(3, 7), label="nodes before R")
    roles = data.draw(st.lists(st.sampled_from(["X", "A", "I"]), min_size=n, max_size=n), label="roles")
    cards = {f"V{i}": data.draw(st.integers(2, 4)) for i in range(n)}
    g = nx.DiGraph()
    g.add_nodes_from([*cards, "R"])
    for j in range(n):
        for i in range(j):
            if data.draw(st.booleans()):
                g.add_edge(f"V{i}", f"V{j}")
        if data.draw(st.booleans()):
            g.add_edge(f"V{j}", "R")
    ctx = [f"V{i}" for i, r in enumerate(roles) if r == "X"]
    arms = [f"V{i}" for i, r in enumerate(roles) if r == "A"]
    inter = [f"V{i}" for i, r in enumerate(roles) if r == "I"]
    got = minimum_domain_separator(g, "R", arms, ctx, inter, cards)
    assert got == _brute_force(g, "R", arms, ctx, inter, cards)
