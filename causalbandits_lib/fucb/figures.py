"""Figures of the chapter that are drawn more than once: causal graphs with their node roles."""

from __future__ import annotations

from typing import Collection, Mapping, Sequence

import networkx as nx

__all__ = ["draw_causal_graph"]

_ROLE_COLOURS = {"context": "#cfe2f3", "arm": "#d9ead3", "intermediate": "#fff2cc", "reward": "#f4cccc"}


def draw_causal_graph(
    ax,
    graph: nx.DiGraph,
    layers: Sequence[Sequence[str]],
    roles: Mapping[str, str],
    highlight: Collection[str] = (),
    sensitive: str | None = None,
    hide_edges: Collection[tuple[str, str]] = (),
    labels: Mapping[str, str] | None = None,
) -> None:
    """Draw ``graph`` in horizontal ``layers`` (top to bottom; ``None`` leaves a slot empty, to keep
    edges from running behind nodes), nodes coloured by role
    (``context``, ``arm``, ``intermediate``, ``reward``), the nodes of ``highlight`` with a thick
    black frame (a separator **W**), ``sensitive`` with a red frame, and without ``hide_edges``
    (e.g. the policy edges, drawn as a note instead)."""
    pos = {}
    for depth, layer in enumerate(layers):
        for i, node in enumerate(layer):
            if node is not None:
                pos[node] = ((i + 0.5) / len(layer) - 0.5, -depth)
    missing = [n for n in graph.nodes if n not in pos]
    if missing:
        raise ValueError(f"node {missing[0]!r} is in no layer")
    edges = [e for e in graph.edges if e not in set(hide_edges)]
    nx.draw_networkx_edges(
        graph, pos, edgelist=edges, ax=ax, arrows=True, arrowsize=12, node_size=1400, edge_color="#555555"
    )
    for node in graph.nodes:
        frame = "red" if node == sensitive else ("black" if node in highlight else "#888888")
        width = 3.0 if (node in highlight or node == sensitive) else 1.0
        nx.draw_networkx_nodes(
            graph,
            pos,
            nodelist=[node],
            ax=ax,
            node_size=1400,
            node_color=_ROLE_COLOURS.get(roles.get(node, ""), "white"),
            edgecolors=frame,
            linewidths=width,
        )
    nx.draw_networkx_labels(graph, pos, labels=dict(labels) if labels else None, ax=ax, font_size=8)
    ax.set_axis_off()
