"""The FairX figures (they draw; they compute nothing a record keeps).

- :func:`plot_regrets`: fairness and reward regret of tuned algorithms on two axes (notebooks
  ``fairx/05`` and ``fairx/06``), and :func:`regret_small_multiples`, one column per merit
  steepness ``c`` (Figures 5-8);
- :func:`regrets_against_references`: fairness and reward regret of simulated runs with bounds and
  guide lines (notebooks ``fairx/02`` and ``fairx/03``), and :func:`ucb_ts_regrets`, its panels of
  ``fairx/02`` (Theorems 3.2.1 and 3.2.2);
- :func:`exposure_bars`: average exposure per arm next to the optimal fair policy (Figure 1);
- :func:`paper_fairness_curves`: fairness regret curves of a committed paper-profile record.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..core import figures as plotting

__all__ = [
    "plot_regrets",
    "regret_pair",
    "replay_grid",
    "regret_small_multiples",
    "regrets_against_references",
    "ucb_ts_regrets",
    "exposure_bars",
    "exposure_panels",
    "paper_fairness_curves",
]


def plot_regrets(axes, results: Mapping[str, Any], g: int = 0, x: str = "rounds", reward_for: str = "fair"):
    """Fairness regret (left, log-log) and reward regret (right) against rounds: mean over runs
    with a 5-95% band, for configuration ``g``. Reward regret is drawn for the FairX algorithms
    (``reward_for="fair"``, as in the paper's figures) or for all.

    Parameters
    ----------
    axes : pair of matplotlib axes
    results : mapping of name to :class:`~.experiments.Tuned`
    g : int
        Configuration (index into the ``c`` values).
    x : {"rounds", "accepted"}
        Horizontal axis: rounds, or accepted replay rounds (mean over runs).
    """
    ax_fr, ax_rr = axes
    for name, res in results.items():
        run = res.test.config(g)
        t = run.t if x == "rounds" else run.rounds[:, 0].mean(axis=0)
        fr, rr = run.fairness[:, 0], run.reward[:, 0]
        style = "-" if res.test.info.get("fair", name.startswith("FairX")) else "--"
        (line,) = ax_fr.plot(t, fr.mean(axis=0), style, label=name)
        if fr.shape[0] > 1:
            ax_fr.fill_between(
                t, *np.quantile(fr, [0.05, 0.95], axis=0), color=line.get_color(), alpha=0.2, linewidth=0
            )
        if reward_for == "all" or name.startswith("FairX"):
            ax_rr.plot(t, rr.mean(axis=0), style, color=line.get_color(), label=name)
            if rr.shape[0] > 1:
                ax_rr.fill_between(
                    t, *np.quantile(rr, [0.05, 0.95], axis=0), color=line.get_color(), alpha=0.2, linewidth=0
                )
    ax_fr.set_xscale("log")
    ax_fr.set_yscale("log")
    ax_fr.set_xlabel("round t" if x == "rounds" else "accepted rounds t")
    ax_fr.set_ylabel("cumulative fairness regret FR_t")
    ax_rr.set_xscale("log")
    ax_rr.set_xlabel(ax_fr.get_xlabel())
    ax_rr.set_ylabel("cumulative reward regret RR_t")
    ax_rr.axhline(0.0, color="k", lw=0.5)


def regret_pair(
    results: Mapping[str, Any],
    g: int = 0,
    title: str = "",
    guide: float | None = None,
    x: str = "rounds",
    reward_for: str = "fair",
):
    """:func:`plot_regrets` at the column width: fairness regret (left) and reward regret (right),
    one legend below; ``guide`` draws ``guide * √t`` on the fairness panel."""
    fig, axes = plotting.new_axes(2)
    plot_regrets(axes, results, g, x=x, reward_for=reward_for)
    if guide is not None:
        t = next(iter(results.values())).test.t
        axes[0].plot(t, guide * np.sqrt(t), color="grey", lw=0.8, label="√t guide")
    plotting.legend_below(fig, axes)
    if title:
        fig.suptitle(title)
    return fig


def replay_grid(by_mode: Mapping[str, Mapping[str, Any]], g: int = 0, title: str = ""):
    """:func:`plot_regrets` against accepted replay rounds, one row per mode (fairness regret left,
    reward regret right), one legend below."""
    fig, axes = plotting.new_axes(2 * len(by_mode), per_row=2)
    for row, (mode, results) in enumerate(by_mode.items()):
        pair = axes[2 * row : 2 * row + 2]
        plot_regrets(pair, results, g, x="accepted")
        plotting.panel_title(pair[0], f"{mode}: fairness regret")
        plotting.panel_title(pair[1], f"{mode}: reward regret")
    plotting.legend_below(fig, axes)
    if title:
        fig.suptitle(title)
    return fig


def regret_small_multiples(results: Mapping[str, Any], c_values: Sequence[float], title: str):
    """:func:`plot_regrets` for every configuration, one row per ``c`` (fairness regret left, reward
    regret right: two panels a row, so the column holds them), one legend below."""
    fig, axes = plotting.new_axes(2 * len(c_values), per_row=2, sharex=True)
    for g, cv in enumerate(c_values):
        pair = axes[2 * g : 2 * g + 2]
        plot_regrets(pair, results, g)
        plotting.panel_title(pair[0], f"c = {cv:g}: fairness regret")
        plotting.panel_title(pair[1], f"c = {cv:g}: reward regret")
        if g < len(c_values) - 1:
            for ax in pair:
                ax.set_xlabel("")
    plotting.legend_below(fig, axes)
    fig.suptitle(title)
    return fig


def regrets_against_references(
    runs: Mapping[str, Any],
    t: np.ndarray,
    fairness_lines: Sequence[dict] = (),
    reward_lines: Sequence[dict] = (),
    reward_bands: bool = True,
    reward_yscale: str | None = None,
):
    """Cumulative fairness regret (left, log-log; mean over runs with a 5-95% band) of every run
    (FairX solid, conventional dashed) and reward regret of the FairX algorithms (right), with
    reference lines.

    Parameters
    ----------
    runs : mapping of name to :class:`~.experiments.FairnessRun`
        Configuration 0 of each is drawn.
    t : ndarray
        The checkpoint rounds of the runs.
    fairness_lines, reward_lines : sequence of dict
        Reference lines on the left and right panels: ``y`` (values at ``t``), ``fmt`` (optional
        format string) and keyword arguments of ``Axes.plot`` (``label``, ``color``, ...).
    reward_bands : bool
        Draw the 5-95% bands of the reward regret too.
    reward_yscale : str, optional
        Scale of the reward axis (``"symlog"`` with ``linthresh=10``), default linear.
    """
    fig, (ax1, ax2) = plotting.new_axes(2)
    for name, run in runs.items():
        fr, rr = run.fairness[:, 0], run.reward[:, 0]
        (line,) = ax1.plot(t, fr.mean(0), "-" if name.startswith("FairX") else "--", label=name)
        ax1.fill_between(t, *np.quantile(fr, [0.05, 0.95], axis=0), color=line.get_color(), alpha=0.2, lw=0)
        if name.startswith("FairX"):
            ax2.plot(t, rr.mean(0), color=line.get_color(), label=name)
            if reward_bands:
                ax2.fill_between(t, *np.quantile(rr, [0.05, 0.95], axis=0), color=line.get_color(), alpha=0.2, lw=0)
    for ax, lines in ((ax1, fairness_lines), (ax2, reward_lines)):
        for spec in lines:
            spec = dict(spec)
            y, fmt = spec.pop("y"), spec.pop("fmt", None)
            ax.plot(t, y, *([fmt] if fmt else []), **spec)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("round t")
    ax1.set_yscale("log")
    if reward_yscale == "symlog":
        ax2.set_yscale("symlog", linthresh=10)
    ax1.set_ylabel("cumulative fairness regret FR_t")
    ax2.set_ylabel("cumulative reward regret RR_t")
    plotting.legend_below(fig, [ax1, ax2])
    return fig


def ucb_ts_regrets(runs: Mapping[str, Any], t: np.ndarray, fairness_bound: np.ndarray, reward_bound: np.ndarray):
    """:func:`regrets_against_references` with the references of ``fairx/02``: Theorem 3.2.1's
    fairness bound, the trivial ``2t`` and a ``3√t`` guide on the left, Theorem 3.2.2's reward
    bound on the right (symlog reward axis, no reward bands).

    Parameters
    ----------
    runs : mapping of name to :class:`~.experiments.FairnessRun`
    t : ndarray
        The checkpoint rounds of the runs.
    fairness_bound, reward_bound : ndarray
        The two bounds at ``t``.
    """
    return regrets_against_references(
        runs,
        t,
        fairness_lines=[
            dict(y=fairness_bound, fmt="k:", label="Thm 3.2.1 bound (L/γ = c·e^c)"),
            dict(y=2 * t, fmt="k-.", lw=0.8, label="trivial 2t"),
            dict(y=3 * np.sqrt(t), color="grey", lw=0.8, label="√t guide"),
        ],
        reward_lines=[dict(y=reward_bound, fmt="k:", label="Thm 3.2.2 bound")],
        reward_bands=False,
        reward_yscale="symlog",
    )


def exposure_bars(ax, optimal: np.ndarray, exposures: Mapping[str, np.ndarray], title: str, width: float = 0.16):
    """Average exposure of every arm for each algorithm next to the optimal fair policy (black),
    as in Figure 1."""
    arms = np.arange(len(optimal))
    ax.bar(arms - 2 * width, optimal, width, color="k", label="optimal fair π*")
    for i, (name, exposure) in enumerate(exposures.items()):
        ax.bar(arms + (i - 1) * width, exposure, width, label=name)
    ax.set_xticks(range(len(optimal)))
    ax.set_xlabel("arm (yeast class, 0-based)")
    plotting.panel_title(ax, title)


def exposure_panels(optimal: np.ndarray, panels: Mapping[str, Mapping[str, np.ndarray]], ylabel: str):
    """:func:`exposure_bars` for each panel (title to exposures by algorithm), one full-width panel
    a row (14 arms of four bars each need the column), one legend below."""
    fig, axes = plotting.new_axes(len(panels), per_row=1, sharey=True, squeeze=False)
    for ax, (title, exposures) in zip(axes, panels.items()):
        exposure_bars(ax, optimal, exposures, title)
        ax.set_ylabel(ylabel)
    plotting.legend_below(fig, axes)
    return fig


def paper_fairness_curves(paper, curves: Mapping[str, str], title: str):
    """The cumulative fairness regret curves ``curves`` (label to record curve name) of a committed
    paper-profile record (the notebook session's ``paper_results``), on log-log axes."""
    fig, ax = plotting.new_axes()
    for label, key in curves.items():
        paper.plot(ax, key, label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative fairness regret FR_t")
    plotting.panel_title(ax, title)
    ax.legend()
    return fig
