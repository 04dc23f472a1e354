"""The chapter's figures (they draw; they compute nothing a record keeps).

One function per figure of the notebooks, each returning the matplotlib figure; the notebooks pass
in what they measured. Curves are drawn with :func:`causalbandits_lib.core.figures.band` (mean over
runs with a 5-95% band).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..core import figures as plotting
from .confidence import beta_squared
from .experiments import LABELS, positive_part_of_sum

__all__ = [
    "FIGURE2_PANELS",
    "sfm_graph",
    "constraint_binds",
    "beta_radius",
    "coverage",
    "set_slices",
    "fast_step_errors",
    "theorem_shapes",
    "dual_and_violations",
    "figure2",
    "three_panels",
    "figure2_paper",
    "violations_paper",
]

#: The three panels of the paper's Figure 2 (and of Figures 4 and 5): per-round value and label.
FIGURE2_PANELS = (
    ("regret", "cumulative regret $R(t)$"),
    ("violation_pos", r"violations $\sum_s[|\Delta_s|-\tau]_+$"),
    ("penalized_regret", "penalised cumulative regret"),
)


def _figure2_axes():
    """Figure 2's three panels two a row at the column width, the fourth cell holding the legend
    (so that no legend covers a curve): ``fig, panels, legend_axes``."""
    fig, axes = plotting.new_axes(4, per_row=2, row_height=3.0)
    axes[3].set_axis_off()
    for ax, (_, title) in zip(axes, FIGURE2_PANELS):
        plotting.panel_title(ax, title)
    return fig, axes[:3], axes[3]


def _legend_in(legend_ax, axes) -> None:
    handles, labels = plotting.legend_entries(axes)
    legend_ax.legend(handles, labels, loc="center", frameon=False)


# ---------------------------------------------------------------------------- notebook 01
def sfm_graph(g):
    """The extended standard fairness model, the latent ``U`` in grey (notebook ``cclb/01``)."""
    import networkx as nx

    pos = {"U": (0.5, 1.0), "A": (0, 0.5), "W": (1, 0.5), "M": (0.5, 0.15), "D": (0.2, -0.4), "Y": (0.8, -0.4)}
    fig, ax = plotting.new_axes(row_height=3.2)
    nx.draw_networkx(
        g, pos, ax=ax, node_color=["#dddddd" if n == "U" else "#9ecae1" for n in g.nodes], node_size=900, arrowsize=16
    )
    plotting.panel_title(ax, "extended SFM (grey: latent U for A <-> W)")
    ax.axis("off")
    return fig


def constraint_binds(rounds, best_any: np.ndarray, best_feasible_index: np.ndarray, tau: float):
    """Left: ``|Delta|`` at the unconstrained optimum and at the best feasible decision over the
    generated rounds; right: the rewards of one round with ``a = 0`` and one with ``a = 1``, coloured
    by feasibility (notebook ``cclb/01``).

    Parameters
    ----------
    rounds : Rounds
    best_any, best_feasible_index : (N,) int
        The unconstrained optimum and the best feasible decision of each round.
    """
    size = np.abs(rounds.effect)
    rows = np.arange(len(rounds))
    fig, axes = plotting.new_axes(2)
    bins = np.linspace(0, 0.6, 61)
    axes[0].hist(size[rows, best_any], bins=bins, alpha=0.6, density=True, label="unconstrained optimum")
    axes[0].hist(size[rows, best_feasible_index], bins=bins, alpha=0.6, density=True, label="best feasible decision")
    axes[0].axvline(tau, color="k", ls="--", label=r"$\tau$")
    axes[0].set_xlabel(r"$|\Delta_t(d)|$ (probability units)")
    axes[0].set_ylabel("density over rounds")
    axes[0].legend()
    plotting.panel_title(axes[0], "the constraint binds")
    for a_val, marker in ((0, "o"), (1, "s")):
        sel = rounds.a == a_val
        if sel.any():
            k = int(np.flatnonzero(sel)[0])
            axes[1].scatter(
                rounds.d[k],
                rounds.reward[k],
                c=np.abs(rounds.effect[k]) <= tau,
                cmap="coolwarm_r",
                marker=marker,
                label=f"a round with a = {a_val}",
            )
    axes[1].set_xlabel("decision d")
    axes[1].set_ylabel(r"expected reward $r_t(d)$")
    axes[1].legend(title="blue: feasible, red: infeasible", title_fontsize=plotting.SMALL_FONT_SIZE)
    plotting.panel_title(axes[1], "reward rises with d; large d is unfair")
    return fig


# ---------------------------------------------------------------------------- notebook 02
def beta_radius(t_grid: np.ndarray, n: int, S: float, alpha: float, denominators=(4.0, 2.0)):
    """The squared radius ``beta_t^2`` of Eq. (10) against ``t`` under both readings of its
    denominator (notebook ``cclb/02``)."""
    fig, ax = plotting.new_axes(row_height=3.8)
    for den in denominators:
        ax.plot(t_grid, beta_squared(t_grid, n, S, alpha, den), label=f"$\\beta_t^2$, St/({den:g}n)")
    ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel(r"$\beta_t(\alpha)^2$ (log-loss units)")
    plotting.panel_title(ax, f"radius for n = {n}, S = {S:g}, alpha = {alpha:g}")
    ax.legend()
    return fig


def coverage(rounds: np.ndarray, gaps: np.ndarray):
    """The scaled loss gap ``(L_t(theta*) - L_t(theta_hat_t)) / beta_t^2`` of every run at the
    ``rounds`` (``gaps`` of shape ``(n_runs, len(rounds))``), with the boundary of ``C_t`` at 1
    (notebook ``cclb/02``)."""
    fig, ax = plotting.new_axes(row_height=3.8)
    for r in range(len(gaps)):
        ax.plot(rounds, gaps[r], color="C0", alpha=0.5, lw=1)
    ax.axhline(1.0, color="k", ls="--", label=r"boundary of $\mathcal{C}_t$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel(r"$(\mathcal{L}_t(\theta^*) - \mathcal{L}_t(\hat\theta_t)) / \beta_t^2$")
    plotting.panel_title(ax, f"{len(gaps)} runs of OFULog+")
    ax.legend()
    return fig


def set_slices(slices: Mapping):
    """Slices of the confidence sets at several rounds (shaded: inside), the ball and ``theta*``,
    from :func:`~causalbandits_lib.cclb.experiments.confidence_set_slices` (notebook ``cclb/02``)."""
    u = slices["u"]
    fig, ax = plotting.new_axes(row_height=5)
    for i, (t, level) in enumerate(slices["levels"].items()):
        ax.contourf(u, u, level, levels=[-np.inf, 0], colors=[f"C{i}"], alpha=0.15)
        ax.contour(u, u, level, levels=[0], colors=f"C{i}")
        ax.plot([], [], color=f"C{i}", label=f"set at t = {t}")
    ax.contour(u, u, slices["ball"], levels=[0], colors="grey", linestyles="--")
    ax.plot([], [], "--", color="grey", label=r"ball $\Vert\theta\Vert = S$")
    ax.plot(*slices["star"], "k*", ms=12, label=r"$\theta^*$")
    ax.plot(0, 0, "kx", label=r"$\hat\theta_T$")
    ax.set_xlabel(r"coordinate along $\theta^* - \hat\theta_T$")
    ax.set_ylabel("coordinate along the decision's axis (orthogonalised)")
    ax.set_aspect("equal")
    ax.legend()
    return fig


def fast_step_errors(rounds: np.ndarray, fast_error: np.ndarray, quadratic_error: np.ndarray):
    """Errors of the fast optimistic step and of the quadratic model at the MLE against the exact
    step, at the compared rounds (notebook ``cclb/02``)."""
    fig, ax = plotting.new_axes(row_height=3.8)
    ax.scatter(rounds, np.maximum(fast_error, 1e-12), label="ours (binned loss + support points)")
    ax.scatter(rounds, quadratic_error, marker="x", label="quadratic model at the MLE (largest error over candidates)")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("|optimistic value - exact| (logit units)")
    ax.legend()
    return fig


# ---------------------------------------------------------------------------- notebook 03
def theorem_shapes(
    regret_plus: Mapping[str, np.ndarray], violation: Mapping[str, np.ndarray], shape: Mapping[str, np.ndarray]
):
    """Measured ``R+(t)`` (per-round values, summed here) and ``V(t)`` (already cumulative) of each
    algorithm beside the shape of Theorem 1 and the line ``t`` (notebook ``cclb/03``).

    Parameters
    ----------
    regret_plus, violation : dict of algorithm label to (n_runs, T)
    shape : the output of :func:`~causalbandits_lib.cclb.theory.theorem1_shape` at ``t = 1..T``
    """
    T = len(shape["regret"])
    t = np.arange(1, T + 1)
    fig, axes = plotting.new_axes(2)
    for name, runs in regret_plus.items():
        plotting.band(axes[0], runs, f"{name}: measured $R^+(t)$")
    axes[0].plot(t, shape["regret"], "k--", label="Theorem 1 shape (C_i = 1)")
    axes[0].plot(t, t, "k:", label="t (linear)")
    for name, runs in violation.items():
        plotting.band(axes[1], runs, f"{name}: measured $V(t)$", cumulative=False)
    axes[1].plot(t, shape["violation"], "k--", label="Theorem 1 shape (C_i = 1)")
    axes[1].plot(t, t, "k:", label="t (linear)")
    for ax, lab in zip(axes, ("strong regret $R^+(t)$", "violation $V(t) = [\\Sigma(|\\Delta|-\\tau)]_+$")):
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_xlabel("round t")
        plotting.panel_title(ax, lab)
        ax.set_ylabel("reward units (symlog)")
    plotting.legend_below(fig, axes, ncol=2)
    return fig


def dual_and_violations(results: Sequence[tuple[str, object]]):
    """The dual variable ``phi_t`` and the cumulative per-round violations of each (label, result)
    (notebook ``cclb/03``, the sweep over ``rho``)."""
    fig, axes = plotting.new_axes(2)
    for label, res in results:
        plotting.band(axes[0], res["dual"], label, cumulative=False, spacing="linear")
        plotting.band(axes[1], res["violation_pos"], label)
    axes[0].set_xlabel("round t")
    axes[0].set_ylabel(r"dual variable $\phi_t$")
    axes[1].set_xlabel("round t")
    axes[1].set_ylabel(r"$\sum_s [|\Delta_s(d_s)|-\tau]_+$" + "\n(probability units)")
    plotting.legend_below(fig, axes[:1])
    return fig


# ---------------------------------------------------------------------------- notebook 04
def figure2(results: Mapping[str, object], algorithms: Sequence[str], at_horizon: Mapping[str, Mapping], T: int):
    """Our version of the paper's Figure 2 (notebook ``cclb/04``).

    Parameters
    ----------
    results : dict of algorithm key to SimulationResult (horizon ``T``)
    algorithms : keys in drawing order; GLM-UCB and OFULog+ are drawn solid, the others dotted
    at_horizon : dict of algorithm key to {horizon: final values} (the dots of separate runs)
    """
    keys = {
        "regret": "regret",
        "violation_pos": "violation_sum_of_positive_parts",
        "penalized_regret": "penalized_regret",
    }
    fig, axes, legend_ax = _figure2_axes()
    for ax, (metric, label) in zip(axes, FIGURE2_PANELS):
        for i, a in enumerate(algorithms):
            style = "-" if a in ("glm_ucb", "ofulog_plus") else ":"
            tag = "" if a in ("glm_ucb", "ofulog_plus") else f" (run of horizon {T})"
            plotting.band(ax, results[a][metric], LABELS[a] + tag, spacing="linear", color=f"C{i}", ls=style)
            if a in at_horizon:
                hs = sorted(at_horizon[a])
                ax.plot(
                    hs,
                    [at_horizon[a][h][keys[metric]].mean() for h in hs],
                    "o",
                    color=f"C{i}",
                    label=f"{LABELS[a]}, end of each horizon",
                )
        ax.set_xlabel("round t / horizon T")
        ax.set_ylabel("reward units")
    t = np.arange(1, T + 1)
    for a, style, lw in (("ofulog_plus", "k--", 1), ("cclb", "k-.", 1), ("eps_cclb", "k:", 1.5)):
        axes[1].plot(
            t,
            positive_part_of_sum(results[a]["violation"]).mean(axis=0),
            style,
            lw=lw,
            label=rf"{LABELS[a]}: $[\sum_s(|\Delta_s|-\tau)]_+$",
        )
    _legend_in(legend_ax, axes)
    return fig


def three_panels(results: Sequence[tuple[str, object]]):
    """Figure 2's three panels for a family of (label, result), one colour each (Figures 4 and 5,
    notebook ``cclb/04``)."""
    fig, axes, legend_ax = _figure2_axes()
    for i, (label, res) in enumerate(results):
        for ax, (metric, _) in zip(axes, FIGURE2_PANELS):
            plotting.band(ax, res[metric], label, spacing="linear", color=f"C{i}")
    for ax in axes:
        ax.set_xlabel("round t")
        ax.set_ylabel("reward units")
    _legend_in(legend_ax, axes[:1])
    return fig


def figure2_paper(paper, algorithms: Sequence[str]):
    """Figure 2's three panels from a committed paper-scale record (``paper.plot(ax, name, label)``
    draws a stored curve; notebook ``cclb/04``)."""
    fig, axes, legend_ax = _figure2_axes()
    for ax, (metric, label) in zip(axes, FIGURE2_PANELS):
        for a in algorithms:
            paper.plot(ax, f"{a}.{metric}", LABELS[a])
        ax.set_xlabel("round t")
        ax.set_ylabel("reward units")
    _legend_in(legend_ax, axes[:1])
    return fig


def violations_paper(paper, curves: Mapping[str, str]):
    """Stored violation curves ``V(t)`` of a committed paper-scale record on a log round axis
    (``curves``: record curve name to label; notebook ``cclb/03``)."""
    fig, ax = plotting.new_axes()
    for name, label in curves.items():
        paper.plot(ax, name, label)
    ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel(r"$V(t) = [\Sigma(|\Delta|-\tau)]_+$")
    ax.legend()
    return fig
