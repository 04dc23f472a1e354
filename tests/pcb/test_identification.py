"""The graph side of BCE: latent projection, identifiability, RC*, FindRSI."""

from __future__ import annotations

import networkx as nx
import pytest

from causalbandits_lib.core.graphs import GraphError
from causalbandits_lib.pcb import identification as I
from causalbandits_lib.pcb import model as M


def test_latent_projection_and_paper_route(table2):
    adm = I.latent_projection(table2.graph, M.LATENT)
    assert adm.bidirected == frozenset({frozenset({"I1", "Y"})})
    route = I.c_component_route(adm, M.ARM, "Y", M.CONTEXT, "S")
    assert route.d == frozenset({"Y", "I1", "U1", "U2"})  # the paper writes {Y, U1, U2}
    verdicts = dict(zip(route.components, route.recoverable))
    assert verdicts == {frozenset({"Y", "I1"}): False, frozenset({"U1"}): False, frozenset({"U2"}): True}
    assert I.find_rsi(table2.graph, M.LATENT, M.ARM, "Y", M.CONTEXT, "S") == []
    causal = adm.subgraph(adm.nodes - {"S"})
    assert I.is_identifiable({"Y", "U1", "U2"}, {"X1", "X2"}, causal)
    assert not I.is_identifiable({"Y", "U1", "U2"}, {"X1", "X2", "I1"}, causal)


@pytest.mark.parametrize(
    "edges, latent, y, x, expected",
    [
        ([("X", "Y"), ("U", "X"), ("U", "Y")], ["U"], {"Y"}, {"X"}, False),  # bow
        ([("Z", "X"), ("X", "Y"), ("Z", "Y")], [], {"Y"}, {"X"}, True),  # observed confounder
        ([("X", "M"), ("M", "Y"), ("U", "X"), ("U", "Y")], ["U"], {"Y"}, {"X"}, True),  # front door
        ([("X", "M"), ("M", "Y"), ("U", "X"), ("U", "M")], ["U"], {"Y"}, {"X"}, False),  # confounded mediator
        ([("X", "Y"), ("U", "Z"), ("U", "Y"), ("Z", "X")], ["U"], {"Y"}, {"X"}, True),  # back door through Z
    ],
)
def test_identifiability_textbook_cases(edges, latent, y, x, expected):
    adm = I.latent_projection(nx.DiGraph(edges), latent)
    assert I.is_identifiable(y, x, adm) is expected


def test_rc_star_on_small_selection_graphs():
    # X -> Y, Y -> S: Q[Y] is not recoverable (selection on the outcome)
    adm = I.latent_projection(nx.DiGraph([("X", "Y"), ("Y", "S")]), [])
    assert not I.rc_star({"Y"}, adm, "S")
    # X -> Y, X -> S: Y's component has no ancestor of S -> recoverable
    adm = I.latent_projection(nx.DiGraph([("X", "Y"), ("X", "S")]), [])
    assert I.rc_star({"Y"}, adm, "S")
    with pytest.raises(GraphError, match="selection node 'T'"):
        I.rc_star({"Y"}, adm, "T")
