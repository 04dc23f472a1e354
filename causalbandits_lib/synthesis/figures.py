"""The synthesis chapter's figures: the model's graph, the exact quantities, the trade-off curves.
They draw; they compute nothing a record keeps."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..core.figures import legend_below, new_axes, panel_title
from . import model as M
from . import notions as N

__all__ = ["POSITIONS", "draw_graph", "exact_quantities", "price_curves", "tradeoffs", "frontiers", "group_losses"]

#: node positions of the recommender's graph
POSITIONS = {
    "A": (0.0, 2.0),
    "NU": (0.0, 0.6),
    "U": (1.0, 1.3),
    "H": (2.0, 2.6),
    "I": (2.0, 1.3),
    "E": (3.0, 2.0),
    "Y": (3.0, 0.6),
    "S": (4.0, 2.0),
}


def draw_graph(ax, graph) -> None:
    """The DAG: hidden nodes dashed, the selection node as a square."""
    for a, b in graph.edges:
        ax.annotate(
            "",
            xy=POSITIONS[b],
            xytext=POSITIONS[a],
            arrowprops=dict(
                arrowstyle="-|>", linestyle="dashed" if a in M.HIDDEN else "solid", shrinkA=13, shrinkB=13, color="0.2"
            ),
        )
    for node, (x, y) in POSITIONS.items():
        if node in M.HIDDEN:
            box = dict(boxstyle="circle,pad=0.3", fc="white", ec="0.3", ls="--")
        elif node == "S":
            box = dict(boxstyle="square,pad=0.4", fc="0.9", ec="0.2")
        else:
            box = dict(boxstyle="circle,pad=0.35", fc="white", ec="0.2")
        ax.text(x, y, node, bbox=box, ha="center", va="center", fontsize=10, zorder=3)
    ax.set_xlim(-0.4, 4.4)
    ax.set_ylim(0.1, 3.0)
    ax.set_axis_off()


def exact_quantities(insts: Sequence[M.Instance], taus: Sequence[float]):
    """Per instance: each item's (μ_k(o), Δ_k(o)) over the four contexts, the threshold as a line."""
    fig, axes = new_axes(len(insts), squeeze=False)
    for ax, inst, tau in zip(axes, insts, taus):
        for k in range(M.N_ITEMS):
            ax.plot(inst.means[:, k], inst.discrepancy[:, k], "o-", label=f"item {k}", ms=4)
        ax.axhline(tau, color="0.4", ls=":", label="τ (median Δ)")
        ax.set_xlabel("μ_k(o)")
        ax.set_ylabel("Δ_k(o)")
        panel_title(ax, inst.name)
    legend_below(fig, axes[:1])
    return fig


def price_curves(curves: Mapping[str, dict], quantiles: Sequence[float]):
    """The exact price of fairness per round (unconstrained optimum minus the fair optimum) of each
    notion as its threshold varies, one panel per instance (exposure: against the merit
    steepness c, on a second x axis)."""
    fig, axes = new_axes(len(curves), squeeze=False)
    for ax, (name, cv) in zip(axes, curves.items()):
        for notion, style in (("per-decision CF", "o-"), ("average CF constraint", "s--"), ("fair intervention", "^:")):
            ax.plot(quantiles, cv[notion], style, label=notion, ms=4)
        ax.set_xlabel("τ as a quantile of Δ")
        ax.set_ylabel("price per round")
        top = ax.twiny()
        top.plot(cv["c"], cv["exposure"], "d-.", color="C3", label="exposure (top axis: c)", ms=4)
        top.set_xscale("log")
        top.set_xlabel("merit steepness c")
        panel_title(ax, name)
    legend_below(fig, fig.axes[:1] + fig.axes[len(axes) : len(axes) + 1])
    return fig


def tradeoffs(points: Mapping[str, dict]):
    """Learners: final regret against each notion's unfairness (mean over runs and instances); the
    lines join one learner's points as its threshold (F-UCB: τ quantile) or merit steepness
    (FairX-UCB: c) varies."""
    fig, axes = new_axes(3, squeeze=False)
    for ax, (score, label) in zip(
        axes,
        (("cf_rate", "CF unfair rate u_T"), ("violation_pos", "V+_T"), ("fairness_regret", "exposure FR_T")),
    ):
        for name, pts in points.items():
            xs = [p[score] for p in pts]
            ys = [p["regret"] for p in pts]
            ax.plot(xs, ys, "o-" if len(pts) > 1 else "o", label=name, ms=4)
        ax.set_xlabel(label)
        ax.set_ylabel("regret R_T")
    legend_below(fig, axes)
    return fig


_STYLE = {
    "per-decision CF": "o-",
    "average CF constraint": "s--",
    "fair intervention": "^:",
    "exposure": "d-.",
}


def frontiers(inst: M.Instance, matched: N.Matched, learners: Mapping[str, tuple[float, float]] | None = None):
    """Each notion's exact price-unfairness frontier on one model: the price per round
    ``V(π⁰) - V(π_N(θ))`` against the mean discrepancy ``D(π_N(θ))`` of its optimum at every
    threshold (the average constraint at 40 levels from ``D_min`` to ``D(π⁰)``); dotted verticals:
    the matched levels; the points on them, each notion's price there (unreachable: none).
    ``learners``: ``label: (D, regret per round)`` measured, drawn as crosses."""
    import numpy as np

    fig, ax = new_axes(1)
    lo, hi = matched.d_min, matched.d_pi0
    for notion in N.NOTIONS:
        grid = np.linspace(lo, hi, 40) if notion == "average CF constraint" else None
        f = N.frontier(inst, notion, grid)
        order = np.argsort(f.D, kind="stable")
        ax.plot(f.D[order], matched.v_pi0 - f.V[order], _STYLE[notion], label=notion, ms=3, lw=1)
    for j, d in enumerate(matched.levels):
        ax.axvline(d, color="0.6", ls=":", lw=0.8)
        for i, notion in enumerate(N.NOTIONS):
            p = matched.prices[notion][j]
            if p.reachable:
                ax.plot([d], [p.price], "o", mfc="none", mec=f"C{i}", ms=8)
    for i, (label, (d, cost)) in enumerate((learners or {}).items()):
        ax.plot([d], [cost], "x", color=f"C{4 + i}", ms=7, mew=1.5, label=label)
    ax.set_xlabel("mean counterfactual discrepancy D(π)")
    ax.set_ylabel("price per round")
    panel_title(ax, f"{inst.name}: the frontiers; dotted, the matched levels")
    legend_below(fig, [ax])
    return fig


def group_losses(table):
    """Who pays: per notion at the middle matched level, each model's loss of the group the
    unconstrained optimum serves worse against the other group's (one point per model; above the
    diagonal the group served worse pays more). ``table`` is :func:`~.study.group_table`'s."""
    import numpy as np

    fig, axes = new_axes(4, squeeze=False, sharex=True, sharey=True)
    for ax, notion in zip(axes, N.NOTIONS):
        t = table[table["notion"] == notion]
        worse = np.where(t["worse served"] == 0, t["loss A=0"], t["loss A=1"])
        other = np.where(t["worse served"] == 0, t["loss A=1"], t["loss A=0"])
        ax.plot(other, worse, _STYLE[notion][0], ms=4, label=notion)
        top = float(max(np.max(worse, initial=0), np.max(other, initial=0), 1e-3))
        ax.plot([0, top], [0, top], color="0.5", lw=0.8, ls=":")
        ax.set_xlabel("loss of the group served better")
        ax.set_ylabel("loss of the group served worse")
        panel_title(ax, notion)
    return fig
