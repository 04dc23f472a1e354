"""Figures of the pcb chapter (they draw; they compute nothing a record keeps).

- :func:`draw_graph`: the causal graph of Figure 2 (notebook ``pcb/01``);
- :func:`logged_rows_histogram`: rows that enter the offline log (notebook ``pcb/01``);
- :func:`coverage_per_cell`: coverage of the bounds per cell (notebook ``pcb/02``);
- :func:`draw_cell_intervals`: intervals and point estimates per cell like Figure 3, and
  :func:`table1_fit`: the printed Table 1 against its recomputations (notebook ``pcb/03``);
- :func:`regret_bands`, :func:`final_regret_histograms`, :func:`regret_against_bound` and
  :func:`regret_with_bounds`: Figure 4, the spread of final regrets and the regret bounds of
  Theorems 5 and 8 (notebook ``pcb/04``); :func:`regret_against_margin`: LinUCB-PCB's final
  regret against the half-width of its prior bounds (notebook ``pcb/04``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import networkx as nx
import numpy as np

from ..core import figures as plotting
from .model import LATENT, SELECTION

__all__ = [
    "FIG2_POSITIONS",
    "draw_graph",
    "logged_rows_histogram",
    "coverage_per_cell",
    "draw_cell_intervals",
    "table1_fit",
    "regret_against_margin",
    "regret_bands",
    "final_regret_histograms",
    "regret_against_bound",
    "regret_with_bounds",
]

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


def logged_rows_histogram(n_selected: np.ndarray, n_draws: int, p_selected: float):
    """Histogram over data sets of the rows logged out of ``n_draws`` draws, with the expectation
    ``n_draws · P(S=1)`` and the paper's "approximately 15,000" (notebook ``pcb/01``)."""
    fig, ax = plotting.new_axes(row_height=3.4)
    ax.hist(n_selected, bins=20, color="C0", alpha=0.8)
    ax.axvline(n_draws * p_selected, color="k", ls="--", label=f"expected {n_draws * p_selected:,.0f}")
    ax.axvline(15000, color="C3", ls=":", label="the paper's 'approximately 15,000'")
    ax.set_xlabel(f"rows logged out of {n_draws:,} draws")
    ax.set_ylabel(f"data sets (of {len(n_selected)})")
    ax.legend()
    return fig


def coverage_per_cell(
    per_cell: Mapping[str, np.ndarray], small: np.ndarray, level: float, n_datasets: int, labels: Mapping[str, str]
):
    """Bars: the fraction of data sets whose bound covers the truth, per cell and bound (at most
    four bounds); dots on a log right axis: the mean rows of the cell's smaller ``I1`` stratum
    (notebook ``pcb/02``).

    Parameters
    ----------
    per_cell : mapping of bound key to ndarray (16,)
    small : ndarray (16,)
    labels : mapping of bound key to display name
    """
    fig, ax = plotting.new_axes(row_height=4.4)
    idx = np.arange(1, 17)
    for off, (k, v) in zip((-0.3, -0.1, 0.1, 0.3), per_cell.items()):
        ax.bar(idx + off, v, width=0.2, label=labels[k])
    ax.axhline(level, color="k", ls="--", lw=1, label=f"level {level}")
    ax.set_ylim(0.5, 1.01)
    ax.set_xticks(idx)
    ax.set_xlabel("cell (Table 1 index)")
    ax.set_ylabel(f"fraction of {n_datasets} data sets covering the truth")
    ax2 = ax.twinx()
    ax2.plot(idx, small, "k.:", label="mean rows in the smaller $I_1$ stratum")
    ax2.set_yscale("log")
    ax2.set_ylabel("rows (log scale)")
    plotting.legend_below(fig)
    return fig


def table1_fit(
    printed: Mapping[str, np.ndarray],
    ours: Mapping[str, np.ndarray],
    context_free: Mapping[str, np.ndarray],
    n_datasets: int,
    columns: Sequence[str] = ("truth", "biased", "lb", "ub"),
):
    """Each printed column of Table 1 against its recomputed value, mean over data sets: ours
    (per context, causal) and the context-free pipeline (notebook ``pcb/03``).

    Parameters
    ----------
    printed : mapping of column to ndarray (4, 4)
    ours, context_free : mapping of column to ndarray (n_datasets, 4, 4)
    """
    fig, axes = plotting.new_axes(len(columns), row_height=2.8, sharey=True, squeeze=False)
    for ax, col in zip(axes, columns):
        ax.plot([0.1, 0.8], [0.1, 0.8], color="0.6", lw=1)
        ax.plot(printed[col].ravel(), ours[col].mean(axis=0).ravel(), "o", label="ours (per context)")
        ax.plot(
            printed[col].ravel(), context_free[col].mean(axis=0).ravel(), "s", mfc="none", label="context-free pipeline"
        )
        plotting.panel_title(ax, col)
        ax.set_xlabel("printed in Table 1")
    rows, cols = plotting.grid_shape(len(columns))
    for ax in axes[::cols]:
        ax.set_ylabel(f"recomputed\n(mean of {n_datasets} data sets)")
    plotting.legend_below(fig, axes[:1])
    return fig


def regret_bands(results: Mapping, title: str, highlight: str | None = None, max_bands: int = 3):
    """Cumulative regret of each algorithm (mean over runs, 5-95% band) on linear axes: Figure 4
    (notebook ``pcb/04``).

    With at most ``max_bands`` algorithms, one panel with every band. With more, overlapping bands
    cannot be told apart, so the first panel shows every mean as a line (no bands) and each
    algorithm then has its own panel with its band, the mean of ``highlight`` drawn there in black
    for reference; all panels share their axes, at most three in a row.

    Parameters
    ----------
    results : mapping of name to SimulationResult (with per-round ``regret``)
    highlight : str, optional
        The algorithm drawn with a thicker line (and the reference line of the separate panels).
    """
    names = list(results)
    colours = {k: f"C{i}" for i, k in enumerate(names)}

    def width(k):
        return {} if highlight is None else {"lw": 2.2 if k == highlight else 1.2}

    if len(names) <= max_bands:
        fig, ax = plotting.new_axes()
        for k in names:
            plotting.band(ax, results[k]["regret"], k, spacing="linear", color=colours[k], **width(k))
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative regret")
        plotting.panel_title(ax, title)
        ax.legend(loc="upper left")
        return fig
    fig, axes = plotting.new_axes(len(names) + 1, row_height=2.4, sharex=True, sharey=True)
    for k in names:  # the means only: every algorithm at once
        runs = np.asarray(results[k]["regret"], dtype=float)
        plotting.band(axes[0], runs.mean(axis=0, keepdims=True), k, spacing="linear", color=colours[k], **width(k))
    plotting.panel_title(axes[0], "all algorithms (means)")
    if highlight is not None:  # a legend entry for the reference line of the separate panels
        axes[0].plot([], [], "k--", lw=1, label=f"{highlight} mean (dashed in each panel)")
    for ax, k in zip(axes[1:], names):
        if highlight is not None and k != highlight:
            ref = np.asarray(results[highlight]["regret"], dtype=float).mean(axis=0, keepdims=True)
            plotting.band(ax, ref, f"_{highlight}", spacing="linear", color="k", lw=1, ls="--")
        plotting.band(ax, results[k]["regret"], f"_{k}", spacing="linear", color=colours[k])
        plotting.panel_title(ax, k, color=colours[k])
    rows, cols = plotting.grid_shape(len(axes))
    for i, ax in enumerate(axes):
        if i % cols == 0:
            ax.set_ylabel("cumulative regret")
        if i + cols >= len(axes):  # the last panel of its column
            ax.set_xlabel("round t")
    plotting.legend_below(fig, axes[:1])
    fig.suptitle(title)
    return fig


def final_regret_histograms(final: Mapping[str, np.ndarray], names: Sequence[str]):
    """Histograms of the final regrets over runs (plus one, log scale) of the algorithms ``names``
    (notebook ``pcb/04``); the bins span every algorithm of ``final``."""
    fig, ax = plotting.new_axes(row_height=3.4)
    bins = np.logspace(0, np.log10(max(v.max() for v in final.values()) + 1), 30)
    for k in names:
        ax.hist(final[k] + 1, bins=bins, histtype="step", lw=1.6, label=k)
    ax.set_xscale("log")
    ax.set_xlabel("final regret + 1 (log scale)")
    ax.set_ylabel(f"runs (of {len(final[names[0]])})")
    ax.legend()
    return fig


def regret_against_bound(
    results: Mapping, names: Sequence[str], bound: np.ndarray, bound_label: str, trivial: np.ndarray
):
    """Measured cumulative regret of ``names`` (log-log) against a regret bound (dashed) and the
    trivial bound (dotted): Theorem 5 (notebook ``pcb/04``). ``bound`` and ``trivial`` are given
    at rounds ``1..T``."""
    t = np.arange(1, len(bound) + 1)
    fig, ax = plotting.new_axes(row_height=4)
    for k in names:
        plotting.band(ax, results[k]["regret"], f"{k}, measured")
    ax.plot(t, bound, "k--", label=bound_label)
    ax.plot(t, trivial, "k:", label="trivial bound Δ_max · t")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.legend()
    return fig


def regret_with_bounds(results: Mapping, bounds: Sequence[np.ndarray]):
    """Measured cumulative regret of each algorithm (log-log) with its own bound (dashed, same
    colour), in the order of ``results``: Theorem 8 (notebook ``pcb/04``)."""
    fig, ax = plotting.new_axes(row_height=4)
    for (k, r), b in zip(results.items(), bounds):
        t = np.arange(1, len(b) + 1)
        line = plotting.band(ax, r["regret"], f"{k}, measured")
        ax.plot(t, b, "--", color=line.get_color(), label=f"Theorem 8 bound, {k}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.legend()
    return fig


def regret_against_margin(final: Mapping[float, np.ndarray], n_minus: Mapping[float, int], baseline: np.ndarray):
    """LinUCB-PCB's mean final regret (± 2 standard errors over runs) against the half-width ``w``
    of bounds ``[μ - w, μ + w]``, each point labelled with ``N_pcb^-``; LinUCB's as a line."""
    w = np.array(list(final))
    mean = np.array([v.mean() for v in final.values()])
    se = np.array([v.std(ddof=1) / np.sqrt(len(v)) for v in final.values()])
    fig, ax = plotting.new_axes(row_height=3.8)
    ax.errorbar(w, mean, yerr=2 * se, marker="o", capsize=3, label="LinUCB-PCB, bounds [μ - w, μ + w]")
    for x, y, k in zip(w, mean, n_minus.values()):
        ax.annotate(f"N⁻={k}", (x, y), textcoords="offset points", xytext=(4, 6), fontsize=plotting.SMALL_FONT_SIZE)
    b, bse = baseline.mean(), baseline.std(ddof=1) / np.sqrt(len(baseline))
    ax.axhline(b, color="0.3", ls="--", label="LinUCB (no bounds)")
    ax.axhspan(b - 2 * bse, b + 2 * bse, color="0.8", alpha=0.5)
    ax.set_xscale("log")
    ax.set_xlabel("half-width w of the prior bounds")
    ax.set_ylabel("final regret (mean ± 2 se)")
    ax.legend()
    return fig
