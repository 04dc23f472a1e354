"""The chapter's figures (they draw; they compute nothing a record keeps).

- :func:`draw_causal_graph`, :func:`email_graph_figure`, :func:`adult_graph_figure`: causal graphs
  with their node roles (notebooks ``fucb/01`` and ``fucb/05``);
- :func:`estimation_curves`, :func:`paper_confidence_widths`: how fast the cells learn the arm
  means (notebook ``fucb/01``);
- :func:`regret_beside_bounds`, :func:`paper_regret_beside_bounds`: measured regret beside
  Theorems 1 and 3 (notebook ``fucb/02``);
- :func:`smallest_radius_curves`, :func:`theorem2_intervals`: the radius of Eq. 12 and the bounds
  of Theorem 2 (notebook ``fucb/03``);
- :func:`figure2b`, :func:`fallback_shares`: Figure 2b and F-UCB's fallback rounds (notebook
  ``fucb/04``);
- :func:`table2_figure`: regret of the Adult-Video algorithms and F-UCB's regret against τ
  (notebook ``fucb/05``).
"""

from __future__ import annotations

from typing import Collection, Mapping, Sequence

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np

from ..core import figures as plotting
from . import theory
from .instances.adult_video import SENSITIVE as ADULT_SENSITIVE
from .instances.adult_video import USER_NODES, VIDEO_NODES
from .instances.email_campaign import ARM_NODES, CONTEXT_NODES, INTERMEDIATE_NODES

__all__ = [
    "draw_causal_graph",
    "email_graph_figure",
    "adult_graph_figure",
    "estimation_curves",
    "paper_confidence_widths",
    "regret_beside_bounds",
    "paper_regret_beside_bounds",
    "smallest_radius_curves",
    "theorem2_intervals",
    "figure2b",
    "fallback_shares",
    "table2_figure",
]

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
    nx.draw_networkx_labels(
        graph, pos, labels=dict(labels) if labels else None, ax=ax, font_size=plotting.SMALL_FONT_SIZE
    )
    ax.set_axis_off()


def email_graph_figure(graph: nx.DiGraph, separator: Collection[str]):
    """The Email Campaign graph with its node roles, the separator ``W`` framed in black and the
    sensitive ``X1`` in red; the policy edges ``X → A`` are not drawn (notebook ``fucb/01``)."""
    roles = {
        **{n: "context" for n in CONTEXT_NODES},
        **{n: "arm" for n in ARM_NODES},
        **{n: "intermediate" for n in INTERMEDIATE_NODES},
        "R": "reward",
    }
    policy_edges = [(x, a) for x in CONTEXT_NODES for a in ARM_NODES]
    fig, ax = plotting.new_axes(row_height=4.2)
    layers = [CONTEXT_NODES, ("I4", "A1", "A2", "A3"), (None, None, "I2", None), ("I1", None, None, "I3"), ("R",)]
    draw_causal_graph(ax, graph, layers, roles, highlight=separator, sensitive="X1", hide_edges=policy_edges)
    plotting.panel_title(ax, "Email Campaign graph (policy edges X→A not drawn)\nblack frames: W, red: sensitive X1")
    return fig


def adult_graph_figure(graph: nx.DiGraph, separator: Collection[str]):
    """The Adult-Video graph with its node roles, ``W`` framed in black and gender in red; the
    policy edges user → video are not drawn (notebook ``fucb/05``)."""
    roles = {**{n: "context" for n in USER_NODES}, **{n: "arm" for n in VIDEO_NODES}, "R": "reward"}
    fig, ax = plotting.new_axes(row_height=3.6)
    draw_causal_graph(
        ax,
        graph,
        [("sex", "race"), ("age", "income"), (None, "R", None), VIDEO_NODES],
        roles,
        highlight=separator,
        sensitive=ADULT_SENSITIVE,
        hide_edges=[(u, v) for u in USER_NODES for v in VIDEO_NODES],
    )
    plotting.panel_title(ax, "Adult-Video graph (policy edges user→video not drawn)\nblack frames: W, red: sensitive")
    return fig


def estimation_curves(
    checkpoints: np.ndarray, learned: Mapping[str, Mapping[str, np.ndarray]], n_cells: Mapping[str, int]
):
    """Mean confidence width (left) and RMSE (right) of the arm means after ``n`` rounds of random
    play, one line per decomposition with a 5–95% band over data sets, log-log axes
    (:func:`~causalbandits_lib.fucb.experiments.offline_estimation_error`; notebook ``fucb/01``)."""
    fig, axes = plotting.new_axes(2)
    panels = (("width", "mean confidence width of the arm means"), ("rmse", "RMSE of the estimated arm means"))
    for ax, (what, label) in zip(axes, panels):
        for name, res in learned.items():
            (line,) = ax.plot(
                checkpoints, res[what].mean(axis=1), marker="o", ms=3, label=f"{name}: {n_cells[name]} cells"
            )
            ax.fill_between(
                checkpoints,
                *np.quantile(res[what], [0.05, 0.95], axis=1),
                color=line.get_color(),
                alpha=0.2,
                linewidth=0,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rounds of uniformly random play n")
        ax.set_ylabel(label)
    axes[0].legend()
    return fig


def paper_confidence_widths(paper, labels: Mapping[str, str]):
    """The mean confidence widths of a paper-scale record of notebook ``fucb/01``; ``labels`` maps
    each metric key (``W``, ``PaR``, ...) to its legend."""
    fig, ax = plotting.new_axes(row_height=4)
    for key, label in labels.items():
        ax.plot(
            paper.metric("email.checkpoints"),
            paper.metric(f"email.confidence_width_curve.{key}"),
            marker="o",
            ms=3,
            label=label,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rounds of uniformly random play n")
    ax.set_ylabel("mean confidence width of the arm means")
    ax.legend()
    return fig


def _colours(names) -> dict:
    return dict(zip(names, plt.rcParams["axes.prop_cycle"].by_key()["color"]))


def regret_beside_bounds(
    runs: Mapping[str, object], cells: Mapping[str, int], k: int, tau: float, delta0: float, max_gap: float
):
    """Left, log-log axes: the measured cumulative regret of each run in ``runs`` (mean, 5–95% band)
    beside Theorem 1's bound for the ``cells`` of UCB, C-UCB and D-UCB, Theorem 3 as printed and
    corrected for ``k`` cells, and the trivial bound ``t · max_gap``. Right: the measured curves on
    linear axes (notebook ``fucb/02``)."""
    T = next(iter(runs.values()))["regret"].shape[1]
    t = np.arange(2, T + 1)
    fig, axes = plotting.new_axes(2)
    colours = _colours(runs)
    for name, r in runs.items():
        plotting.band(axes[0], r["regret"], f"{name} (measured)", color=colours[name])
    for name, n in cells.items():
        axes[0].plot(t, theory.theorem1_bound(n, t, 1.0 / t**2), "--", color=colours[name], label=f"Thm 1, {n} cells")
    axes[0].plot(t, theory.theorem3_bound(k, t, tau, delta0), ":", color=colours["F-UCB"], lw=2, label="Thm 3 printed")
    axes[0].plot(
        t,
        theory.theorem3_bound(k, t, tau, delta0, version="corrected"),
        "-.",
        color=colours["F-UCB"],
        label="Thm 3 corrected",
    )
    axes[0].plot(t, max_gap * t, "k:", label="trivial: t · max gap")
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("round t")
    axes[0].set_ylabel("cumulative regret")
    plotting.panel_title(axes[0], "measured regret and bounds, log-log")
    for name, r in runs.items():
        plotting.band(axes[1], r["regret"], name, spacing="linear", color=colours[name])
    axes[1].set_xlabel("round t")
    axes[1].set_ylabel("cumulative regret")
    plotting.panel_title(axes[1], "measured regret, linear axes")
    plotting.legend_below(fig, axes[:1], ncol=3)
    return fig


def paper_regret_beside_bounds(paper, names: Sequence[str], k: int, tau: float, delta0: float, max_gap: float):
    """The regret curves of a paper-scale record of notebook ``fucb/02`` beside Theorem 1 for ``k``
    cells, Theorem 3 as printed and the trivial bound, log-log axes."""
    T_paper = paper.record["parameters"]["T"]
    tp = np.arange(2, T_paper + 1)
    colours = _colours(names)
    fig, ax = plotting.new_axes(row_height=4.2)
    for name in names:
        paper.plot(ax, f"long_run.regret.{name}", f"{name} (measured, T = {T_paper})", color=colours[name])
    ax.plot(tp, theory.theorem1_bound(k, tp, 1.0 / tp**2), "--", color=colours["D-UCB"], label=f"Thm 1, {k} cells")
    ax.plot(tp, theory.theorem3_bound(k, tp, tau, delta0), ":", color=colours["F-UCB"], lw=2, label="Thm 3 printed")
    ax.plot(tp, max_gap * tp, "k:", label="trivial: t · max gap")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.legend()
    return fig


def smallest_radius_curves(probs: np.ndarray, diff: np.ndarray, horizon: int):
    """The smallest radius of ``UCB_Δ`` an allocation of ``t`` observations can reach
    (:func:`~causalbandits_lib.fucb.theory.smallest_discrepancy_radius`) with the weights of Eq. 12
    as printed (``probs``) and with ``|diff|``, against ``t``, with τ = 0.1, 0.3, 0.5 and the
    horizon marked (notebook ``fucb/03``)."""
    t = np.geomspace(10, 10 * horizon, 200)
    fig, ax = plotting.new_axes(row_height=4)
    ax.plot(t, theory.smallest_discrepancy_radius(probs, t), label="smallest radius, Eq. 12 as printed")
    ax.plot(t, theory.smallest_discrepancy_radius(np.abs(diff), t), label="smallest radius, weights |d_z| (ours)")
    for tau_line in (0.1, 0.3, 0.5):
        ax.axhline(tau_line, color="grey", lw=0.8, ls=":")
    ax.axvline(horizon, color="k", lw=0.8, ls="--", label=f"t = {horizon}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t (all observations on the arm's cells)")
    ax.set_ylabel("radius of UCB_Δ")
    ax.legend()
    return fig


def theorem2_intervals(context_codes: np.ndarray, arm: int, lower, upper, printed_lower, true):
    """For every user and both ``s*``: the corrected bounds ``[lower, upper]`` (bars), Eq. 11 as
    printed (black ticks) and the true counterfactual mean (dots) of ``arm``; arrays indexed
    ``(context, arm, s*)`` (notebook ``fucb/03``)."""
    fig, ax = plotting.new_axes(row_height=3.8)
    xs = np.arange(len(context_codes))
    for s, off, col in ((0, -0.12, "C0"), (1, 0.12, "C1")):
        ax.vlines(
            xs + off,
            lower[:, arm, s],
            upper[:, arm, s],
            color=col,
            lw=6,
            alpha=0.35,
            label=f"corrected bounds, s* = {s}",
        )
        ax.plot(
            xs + off,
            printed_lower[:, arm, s],
            "_",
            color="k",
            ms=14,
            mew=2,
            label="Eq. 11 as printed" if s == 0 else None,
        )
        ax.plot(xs + off, true[:, arm, s], "o", color=col, ms=4, label=f"true (monotone coupling), s* = {s}")
    ax.set_xticks(xs, [str(tuple(int(v) for v in codes)) for codes in context_codes], fontsize=plotting.SMALL_FONT_SIZE)
    ax.set_xlabel("user (X1, X2, X3)")
    ax.set_ylabel("counterfactual mean reward of the best arm")
    ax.legend(ncol=2)
    return fig


def figure2b(
    results: Mapping,
    variants: Sequence[str],
    fig_tau: float,
    early_round: int,
    ax=None,
    title: str | None = None,
    legend: bool = True,
):
    """Figure 2b: cumulative regret of UCB, C-UCB, D-UCB and the F-UCB ``variants`` at ``fig_tau``
    (``results[name]`` and ``results[variant, tau]``), with the paper's early round marked
    (notebook ``fucb/04``); drawn on ``ax`` when given (``legend=False``: no legend on the axes)."""
    T = results["UCB"]["regret"].shape[1]
    if ax is None:
        fig, ax = plotting.new_axes(row_height=4.4)
    else:
        fig = ax.figure
    for name in ("UCB", "C-UCB", "D-UCB"):
        plotting.band(ax, results[name]["regret"], name, spacing="linear")
    for variant, style, colour in zip(variants, ("-", "--", ":"), ("C3", "C4", "C5")):
        plotting.band(
            ax,
            results[variant, fig_tau]["regret"],
            f"{variant} (τ = {fig_tau:g})",
            spacing="linear",
            ls=style,
            color=colour,
        )
    ax.axvline(min(early_round, T), color="grey", lw=0.8)
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    if title:
        plotting.panel_title(ax, title)
    if legend:
        ax.legend(loc="upper left")
    return fig


def figure2b_by_fallback(results_by: Mapping[str, Mapping], variants: Sequence[str], fig_tau: float, early_round: int):
    """Figure 2b once per F-UCB fallback rule (``results_by[rule]``), side by side on a shared
    vertical axis (notebook ``fucb/04``)."""
    rules = list(results_by)
    fig, axes = plotting.new_axes(len(rules), sharey=True, squeeze=False)
    for ax, rule in zip(axes, rules):
        figure2b(results_by[rule], variants, fig_tau, early_round, ax=ax, title=f"fallback = {rule}", legend=False)
    plotting.legend_below(fig, axes[:1], ncol=3)
    return fig


def fallback_shares(results: Mapping, variants: Sequence[str], taus: Sequence[float]):
    """The share of rounds without a certified arm (a moving mean over runs) of each F-UCB variant,
    one panel per variant, one line per τ (notebook ``fucb/04``)."""
    T = results[variants[0], taus[0]]["fallback"].shape[1]
    fig, axes = plotting.new_axes(len(variants), sharey=True, squeeze=False)
    window = max(1, T // 50)
    kernel = np.ones(window) / window
    for ax, variant in zip(axes, variants):
        for tau in taus:
            empty = results[variant, tau]["fallback"].mean(axis=0)
            ax.plot(np.arange(window, T + 1), np.convolve(empty, kernel, mode="valid"), label=f"τ = {tau:g}")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("round t")
        plotting.panel_title(ax, variant)
    axes[0].set_ylabel(f"share of rounds without\na certified arm ({window}-round mean)")
    plotting.legend_below(fig, axes[:1], ncol=len(taus))
    return fig


def table2_figure(
    results: Mapping,
    final: Mapping,
    variants: Sequence[str],
    taus: Sequence[float],
    paper_regret: Mapping[float, float],
    title: str | None = None,
):
    """Left: cumulative regret of D-UCB, Fair-LinUCB and the F-UCB ``variants`` at τ = 0.3 (or the
    first τ). Right: F-UCB's final regret against τ beside the paper's (``paper_regret``) and
    Fair-LinUCB (notebook ``fucb/05``)."""
    T = results["D-UCB"]["regret"].shape[1]
    shown = 0.3 if 0.3 in taus else taus[0]
    fig, axes = plotting.new_axes(2, row_height=4.2)  # room for the legend below both panels
    for name in ("D-UCB", "Fair-LinUCB"):
        plotting.band(axes[0], results[name]["regret"], name, spacing="linear")
    for name in variants:
        plotting.band(axes[0], results[name, shown]["regret"], f"{name} (τ = {shown:g})", spacing="linear", ls="--")
    axes[0].set_xlabel("round t")
    axes[0].set_ylabel("cumulative regret")
    for name in variants:
        axes[1].plot(taus, [final[name, t] for t in taus], marker="o", label=name)
    axes[1].plot(
        [t for t in taus if t in paper_regret],
        [paper_regret[t] for t in taus if t in paper_regret],
        "k*--",
        label="paper, F-UCB",
    )
    axes[1].axhline(final["Fair-LinUCB"], color="grey", ls=":", label="Fair-LinUCB (ours)")
    axes[1].set_xlabel("fairness threshold τ")
    axes[1].set_ylabel(f"cumulative regret\nat T = {T}")
    plotting.legend_below(fig, axes, ncol=3)  # both panels' lines, off the data
    if title:
        fig.suptitle(title)
    return fig


def tradeoff_figure(taus: Sequence[float], regret: Mapping[str, np.ndarray], unfair: Mapping[str, np.ndarray]):
    """Regret (left) and unfair decisions under the true Δ (right) against τ, one line per algorithm:
    ``regret[name]`` and ``unfair[name]`` have shape ``(len(taus), n_runs)``; mean over runs with
    two standard errors (notebook ``fucb/04``, the interaction variant)."""
    fig, axes = plotting.new_axes(2)
    for ax, values, label in (
        (axes[0], regret, "cumulative regret at T"),
        (axes[1], unfair, "unfair decisions (true Δ)"),
    ):
        for name, v in values.items():
            v = np.asarray(v, dtype=float)
            se = v.std(axis=1, ddof=1) / np.sqrt(v.shape[1]) if v.shape[1] > 1 else np.zeros(len(taus))
            ax.errorbar(taus, v.mean(axis=1), yerr=2 * se, marker="o", capsize=3, label=name)
        ax.set_xlabel("fairness threshold τ")
        ax.set_ylabel(label)
    axes[0].legend()
    return fig
