"""Figures of the pcb chapter: the causal graph of Figure 2 and interval plots like Figure 3."""

from __future__ import annotations

from typing import Mapping

import networkx as nx
import numpy as np

from .model import LATENT, SELECTION

__all__ = ["FIG2_POSITIONS", "draw_graph", "draw_cell_intervals"]

#: Node positions for drawing the graph of Figure 2 (context left, arm, intermediate, reward right).
FIG2_POSITIONS = {
    "U1": (0, 2),
    "U2": (0, 0),
    "X1": (1, 2),
    "X2": (1, 0),
    "C1": (2.4, 2.9),
    "I1": (2, 2),
    "Y": (3, 1),
    "S": (3, 2.6),
}


def draw_graph(ax, graph: nx.DiGraph, positions: Mapping[str, tuple] = FIG2_POSITIONS) -> None:
    """Draw the model's DAG: hidden nodes dashed, the selection node as a square."""
    pos = dict(positions)
    for a, b in graph.edges:
        style = "dashed" if a in LATENT else "solid"
        ax.annotate(
            "",
            xy=pos[b],
            xytext=pos[a],
            arrowprops=dict(arrowstyle="-|>", linestyle=style, shrinkA=14, shrinkB=14, color="0.2"),
        )
    for node, (x, y) in pos.items():
        kw = dict(ha="center", va="center", fontsize=11, zorder=3)
        if node in LATENT:
            box = dict(boxstyle="circle,pad=0.35", fc="white", ec="0.3", ls="--")
        elif node == SELECTION:
            box = dict(boxstyle="square,pad=0.45", fc="0.9", ec="0.2")
        else:
            box = dict(boxstyle="circle,pad=0.35", fc="white", ec="0.2")
        ax.text(x, y, node, bbox=box, **kw)
    ax.set_xlim(-0.4, 3.4)
    ax.set_ylim(-0.5, 3.3)
    ax.set_axis_off()


def draw_cell_intervals(
    ax, truth: np.ndarray, intervals: Mapping[str, tuple], points: Mapping[str, np.ndarray] | None = None
) -> None:
    """Figure 3's layout: for each of the 16 cells (Table 1 index 1..16), intervals and point
    estimates against the truth.

    Parameters
    ----------
    truth : ndarray, shape (4, 4)
        ``[arm, context]``; drawn as short red lines.
    intervals : mapping of label to (lower, upper), each of shape (4, 4)
    points : mapping of label to ndarray of shape (4, 4), optional
    """
    idx = np.arange(1, 17)
    k = max(len(intervals), 1)
    offsets = np.linspace(-0.25, 0.25, k) if k > 1 else np.zeros(1)
    for j, (off, (label, (lo, hi))) in enumerate(zip(offsets, intervals.items())):
        lo, hi = np.ravel(lo), np.ravel(hi)
        mid = (lo + hi) / 2
        ax.errorbar(
            idx + off, mid, yerr=[mid - lo, hi - mid], fmt="none", capsize=3, lw=1.6, color=f"C{j}", label=label
        )
    for j, ((label, vals), marker) in enumerate(zip((points or {}).items(), ("s", "^", "D", "v"))):
        ax.plot(idx, np.ravel(vals), marker, ms=5, ls="none", color=f"C{len(intervals) + j}", label=label)
    ax.hlines(np.ravel(truth), idx - 0.38, idx + 0.38, color="red", lw=2, label="truth $P(Y=1\\mid do(x), c)$")
    ax.set_xticks(idx)
    ax.set_xlabel("cell (Table 1 index $1 + 8x_1 + 4x_2 + 2u_1 + u_2$)")
    ax.set_ylabel("$P(Y=1)$")
