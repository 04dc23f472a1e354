"""The primer's figures (they draw; they compute nothing a record keeps)."""

from __future__ import annotations

import numpy as np

from ..core import figures as plotting

__all__ = ["regret_between_bounds", "backdoor_histograms", "soft_versus_hard_regret"]


def regret_between_bounds(regret: np.ndarray, upper: np.ndarray, lower: np.ndarray):
    """UCB1's cumulative regret (mean, 5-95% band) between the Auer et al. upper bound and the
    Lai-Robbins curve, on linear and log-log axes (notebook ``primer/01``).

    Parameters
    ----------
    regret : ndarray (n_runs, T)
        Per-round regret.
    upper, lower : ndarray (T,)
        The two bounds at rounds ``1..T``.
    """
    t = np.arange(1, regret.shape[1] + 1)
    fig, axes = plotting.new_axes(2)
    for ax, log in zip(axes, (False, True)):
        plotting.band(ax, regret, "UCB1 (mean, 5-95% band)", spacing="log" if log else "linear")
        ax.plot(t, upper, "k--", label="Auer et al. upper bound")
        ax.plot(t[1:], lower[1:], "k:", label=r"Lai–Robbins $c_{LR}\ln t$")
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative regret $R_t$")
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
    plotting.legend_below(fig, axes[:1])
    plotting.panel_title(axes[0], "linear axes")
    plotting.panel_title(axes[1], "log-log axes")
    return fig


def backdoor_histograms(estimates: dict[str, np.ndarray], seeing: float, doing: float):
    """Histograms of the naive and the back-door estimates over data sets, with the exact
    observational and interventional probabilities (notebook ``primer/02``)."""
    naive, adjusted = estimates["naive"], estimates["adjusted"]
    fig, ax = plotting.new_axes(row_height=3.6)
    bins = np.linspace(min(naive.min(), adjusted.min()), max(naive.max(), adjusted.max()), 50)
    ax.hist(naive, bins=bins, alpha=0.6, label=r"naive $\hat P(Y=1\mid X=1)$")
    ax.hist(adjusted, bins=bins, alpha=0.6, label="back-door adjusted")
    ax.axvline(doing, color="k", ls="--", label=r"exact $P(Y=1\mid do(X=1))$")
    ax.axvline(seeing, color="k", ls=":", label=r"exact $P(Y=1\mid X=1)$")
    ax.set_xlabel("estimate of the recovery probability under treatment")
    ax.set_ylabel(f"data sets (of {len(naive)})")
    ax.legend()
    return fig


def soft_versus_hard_regret(blind: np.ndarray, per_context: np.ndarray, loss_per_round: float):
    """Cumulative regret against the best soft policy of a context-blind UCB1 and of one UCB1 per
    context, with the linear growth of the best hard intervention (notebook ``primer/03``)."""
    t = np.arange(1, blind.shape[1] + 1)
    fig, ax = plotting.new_axes(row_height=4)
    plotting.band(ax, blind, "UCB1 ignoring the context (hard interventions)")
    plotting.band(ax, per_context, "UCB1 per context (soft intervention)")
    ax.plot(t, loss_per_round * t, "k:", label=r"$(V(\pi^*) - \max_a V(do(a)))\,t$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret against the best soft policy")
    ax.legend()
    return fig
