"""The chapter's figures (they draw; they compute nothing a record keeps).

- :func:`divergences_to_cheap_arm`, :func:`spread_against_divergence`: the divergences to the cheap
  arm and what they cost in spread (notebook ``bestfair/01``);
- :func:`allocation_fractions`, :func:`phase_trace`, :func:`demo_errors`: ALLOCATE's fractions,
  one run of each algorithm phase by phase, and the errors at the paper's scale (notebook
  ``bestfair/02``);
- :func:`error_band`, :func:`theorem1_against_measured`, :func:`theorem2_against_measured`,
  :func:`paper_theory`: the bounds of Theorems 1 and 2 beside the measured probabilities (notebook
  ``bestfair/03``);
- :func:`error_curves`, :func:`paper_error_curves`: Figures 3 and 6 (notebook ``bestfair/04``) and
  Figure 5 (notebook ``bestfair/05``).

Every figure is drawn and returned; the notebook shows it.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from ..core import figures as plotting
from .model import FairArmsProblem

__all__ = [
    "COLORS",
    "divergences_to_cheap_arm",
    "spread_against_divergence",
    "allocation_fractions",
    "phase_trace",
    "demo_errors",
    "error_band",
    "theorem1_against_measured",
    "theorem2_against_measured",
    "paper_theory",
    "error_curves",
    "paper_error_curves",
]

#: The paper's colours of the four algorithms.
COLORS = {"CSR-V1": "tab:red", "CSR-V2": "tab:green", "TS-V1": "tab:blue", "TS-V2": "tab:purple"}


# ---------------------------------------------------------------------------- notebook 01
def divergences_to_cheap_arm(problem: FairArmsProblem, setting: str):
    """``M_k1``, ``D^{s,s'}_k1`` and ``D^{s',s}_k1`` of every arm ``k = 2..K``, on a log scale."""
    fig, ax = plotting.new_axes(row_height=3.6)
    arms = np.arange(2, problem.n_arms + 1)
    ax.plot(arms, problem.M[1:, 0], "o", label=r"$M_{k1}$ (outcome)")
    ax.plot(arms, problem.D[1:, 0], "s", label=r"$D^{s,s'}_{k1}$ (fairness, $S=s'$ pulls)")
    ax.plot(arms, problem.D_reverse[1:, 0], "^", label=r"$D^{s',s}_{k1}$ (fairness, $S=s$ pulls)")
    ax.set_yscale("log")
    ax.set_xlabel("arm k")
    ax.set_ylabel("divergence to the cheap arm 1")
    plotting.panel_title(ax, f"setting '{setting}'")
    ax.legend()
    return fig


def spread_against_divergence(
    problem: FairArmsProblem, sd: Mapping[str, np.ndarray], demo_pulls: int, n_replicates: int
):
    """Spread of each arm's estimates from the cheap arm's pulls against its divergence to arm 1.

    Parameters
    ----------
    sd : dict
        ``"outcome"``, ``"fairness"``, ``"fairness_reverse"``: standard deviation over replicates
        of each arm's estimate, shape ``(K,)``.
    """
    others = np.arange(1, problem.n_arms)
    fig, axes = plotting.new_axes(2)
    axes[0].plot(problem.M[others, 0], sd["outcome"][others], "o")
    axes[0].set_xlabel(r"outcome divergence $M_{k1}$ to the cheap arm")
    axes[0].set_ylabel(r"sd of $\hat Y_k$ over replicates")
    axes[1].plot(problem.D[others, 0], sd["fairness"][others], "s", label=r"$\hat\zeta^{s,s'}$ vs $D^{s,s'}_{k1}$")
    axes[1].plot(
        problem.D_reverse[others, 0],
        sd["fairness_reverse"][others],
        "^",
        label=r"$\hat\zeta^{s',s}$ vs $D^{s',s}_{k1}$",
    )
    axes[1].set_xlabel("fairness divergence to the cheap arm")
    axes[1].set_ylabel("sd over replicates")
    axes[1].legend()
    for ax in axes:
        ax.set_xscale("log")
        plotting.plain_log_ticks(ax, "x")
        plotting.panel_title(ax, f"{demo_pulls} pulls of arm 1 per kind, {n_replicates} replicates", fontsize=9)
    return fig


# ---------------------------------------------------------------------------- notebook 02
def allocation_fractions(nu: np.ndarray, T: int):
    """ALLOCATE's fractions ``ν`` (shape ``(3, K)``) per arm, stacked by kind of pull."""
    n_arms = nu.shape[1]
    fig, ax = plotting.new_axes(row_height=3.6)
    arms = np.arange(1, n_arms + 1)
    bottom = np.zeros(n_arms)
    for b, label in enumerate(("S natural (for Ŷ)", "S = s (for ζ̂^{s',s})", "S = s' (for ζ̂^{s,s'})")):
        ax.bar(arms, nu[b], bottom=bottom, label=label)
        bottom += nu[b]
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("arm")
    ax.set_ylabel("fraction ν of the phase's pulls")
    plotting.panel_title(ax, f"ALLOCATE with R = all arms, B = 1/√T, T = {T}")
    ax.legend()
    return fig


def phase_trace(results: Mapping[str, object], n_arms: int, k_star: int):
    """Run 1 of each algorithm phase by phase: eliminated, remaining or certified fair.

    Parameters
    ----------
    results : dict of algorithm name to :class:`~.algorithms.IdentificationResult`
    n_arms : int
    k_star : int
        The true best fair arm (marked by a red line).
    """
    cmap = ListedColormap(["#dddddd", "#6baed6", "#08519c"])
    fig, axes = plotting.new_axes(len(results), row_height=3.0, sharey=True, squeeze=False)
    for ax, (name, res) in zip(axes, results.items()):
        # 0 out, 1 in R, 2 certified in that phase
        state = np.where(res.fair_set[0], 2, res.remaining[0, 1:].astype(int))
        ax.imshow(
            state.T,
            aspect="auto",
            cmap=cmap,
            vmin=0,
            vmax=2,
            interpolation="nearest",
            extent=(0.5, state.shape[0] + 0.5, n_arms + 0.5, 0.5),
        )
        ax.axhline(k_star + 1, color="red", lw=0.8)
        if name.startswith("TS"):
            ax.axvline((res.stage == 1).sum() + 0.5, color="k", lw=1, ls="--")
        chosen = res.chosen[0]
        plotting.panel_title(ax, f"{name}: returned {'no fair arm' if chosen < 0 else f'arm {chosen + 1}'}", fontsize=9)
        ax.set_xlabel("phase" + (" (dashed: stage 1 | stage 2)" if name.startswith("TS") else ""))
    for i, ax in enumerate(axes):
        if i % 2 == 0:
            ax.set_ylabel("arm (red line: k*)")
    fig.legend(
        handles=[
            Patch(color=c, label=label)
            for c, label in zip(cmap.colors, ("eliminated", "remaining", "certified fair (F)"))
        ],
        loc="outside lower center",
        ncol=3,
        fontsize=plotting.SMALL_FONT_SIZE,
    )
    return fig


def demo_errors(errors: Mapping[str, float], T: int, n_runs: int):
    """A bar per algorithm: its probability of error at ``T`` pulls over ``n_runs`` runs."""
    fig, ax = plotting.new_axes(row_height=3.4)
    ax.bar(list(errors), list(errors.values()), color=[COLORS[name] for name in errors])
    ax.set_ylabel(f"probability of error at T = {T}")
    plotting.panel_title(ax, f"paper scale: {n_runs} runs")
    return fig


# ---------------------------------------------------------------------------- notebook 03
def error_band(ax, x, errors: np.ndarray, label: str, floor: float = 0.0, **kw) -> None:
    """Mean over runs of a ``(len(x), n_runs)`` array of 0/1 outcomes with a ±2 standard-error band
    (binomial), the band cut at ``floor``."""
    p = errors.mean(axis=1)
    se = np.sqrt(p * (1 - p) / errors.shape[1])
    (line,) = ax.plot(x, p, "o-", label=label, **kw)
    ax.fill_between(
        x, np.clip(p - 2 * se, floor, 1), np.clip(p + 2 * se, floor, 1), color=line.get_color(), alpha=0.2, lw=0
    )


def theorem1_against_measured(
    budgets: Sequence[int], measured: Mapping[str, np.ndarray], log10_bound: Sequence[float], title: str
):
    """Measured probabilities of error (``(len(budgets), n_runs)`` per algorithm) beside Theorem 1's
    bound, on a log axis."""
    fig, ax = plotting.new_axes(row_height=4)
    for name, err in measured.items():
        error_band(ax, budgets, err, f"{name}, measured (±2 se)", floor=1e-3, color=COLORS[name])
    ax.plot(budgets, [10**b for b in log10_bound], "k--", label="Theorem 1 bound")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 1e6)
    ax.set_xlabel("total pulls T")
    ax.set_ylabel("probability of error")
    plotting.panel_title(ax, title)
    ax.legend()
    return fig


def theorem2_against_measured(budgets: Sequence[int], declared: Mapping[str, np.ndarray], lower_bound: Sequence[float]):
    """Measured probabilities of declaring "no fair arm" beside Theorem 2's lower bound."""
    fig, ax = plotting.new_axes(row_height=4)
    for name, d in declared.items():
        error_band(ax, budgets, d, f"{name}, measured (±2 se)", color=COLORS[name])
    ax.plot(budgets, np.maximum(list(lower_bound), 0), "k--", label="Theorem 2 lower bound (clipped at 0)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("total pulls T")
    ax.set_ylabel("P(declares no fair arm)")
    ax.legend()
    return fig


def paper_theory(
    budgets: Sequence[int], measured_error: Mapping[str, Sequence[float]], declared: Mapping[str, Sequence[float]]
):
    """The paper-scale record's error on the Theorem 1 instance and declarations on the Theorem 2
    instance, per algorithm."""
    fig, axes = plotting.new_axes(2)
    for name in measured_error:
        axes[0].plot(budgets, measured_error[name], "o-", color=COLORS[name], label=name)
        axes[1].plot(budgets, declared[name], "o-", color=COLORS[name], label=name)
    axes[0].set_ylabel("probability of error\n(Theorem 1 instance)")
    axes[1].set_ylabel("P(declares no fair arm)\n(Theorem 2 instance)")
    for ax in axes:
        ax.set_xlabel("total pulls T")
    plotting.legend_below(fig, axes[:1], ncol=4)
    return fig


# ---------------------------------------------------------------------------- notebooks 04 and 05
def error_curves(
    budgets: Sequence[int],
    errors: Mapping[str, Mapping[str, np.ndarray]],
    titles: Mapping[str, str],
    log_x: bool = True,
    row_height: float | None = None,
):
    """One panel per entry of ``titles``: each algorithm's probability of error against the budget,
    with ±2 binomial standard errors as error bars, the algorithms' points set slightly apart along
    the budget axis so that no bar hides another (Figures 3, 5 and 6).

    Parameters
    ----------
    errors : dict of panel to dict of algorithm to 0/1 array ``(len(budgets), n_runs)``
    titles : dict of panel to its title
    log_x : bool
        A log budget axis (Figures 3 and 6) or a linear one (Figure 5).
    row_height : float, optional
        Height of a row of panels (inches); the figure has the column width, three panels a row.
    """
    panels = list(titles)
    fig, axes = plotting.new_axes(len(panels), row_height=row_height, sharey=True, squeeze=False)
    b = np.asarray(budgets, dtype=float)
    for ax, name in zip(axes, panels):
        n_alg = len(errors[name])
        for i, (alg, err) in enumerate(errors[name].items()):
            p = err.mean(axis=1)
            se = np.sqrt(p * (1 - p) / err.shape[1])
            # four overlapping shaded bands cannot be told apart: error bars, each algorithm's
            # moved a little sideways (by a fraction of the gap between budgets) so none hides another
            shift = (i - (n_alg - 1) / 2) * 0.025
            x = b * np.exp(shift * np.log(b[-1] / b[0]) / max(len(b) - 1, 1)) if log_x else b + shift * np.ptp(b)
            lo, hi = np.clip(p - 2 * se, 0, 1), np.clip(p + 2 * se, 0, 1)
            ax.errorbar(x, p, yerr=[p - lo, hi - p], fmt="o-", color=COLORS[alg], capsize=3, ms=4, label=alg)
        if log_x:
            ax.set_xscale("log")
            plotting.plain_log_ticks(ax, "x")
        ax.set_xlabel("total pulls T (log scale)" if log_x else "total pulls T")
        plotting.panel_title(ax, titles[name], fontsize=plotting.SMALL_FONT_SIZE)
    for i, ax in enumerate(axes):
        if i % plotting.MAX_PER_ROW == 0:
            ax.set_ylabel("probability of error (±2 se)")
    axes[0].set_ylim(-0.03, 1.03)
    plotting.legend_below(fig, axes[:1], ncol=4)
    return fig


def paper_error_curves(
    budgets: Sequence[int], panels: Sequence[str], algorithms: Sequence[str], error: Callable[[str, str], Sequence]
):
    """The paper-scale record's error curves, three panels a row; ``error(panel, algorithm)`` gives
    the curve."""
    fig, axes = plotting.new_axes(len(panels), sharey=True, squeeze=False)
    for ax, name in zip(axes, panels):
        for alg in algorithms:
            ax.plot(budgets, error(name, alg), "o-", color=COLORS[alg], label=alg)
        ax.set_xscale("log")
        plotting.plain_log_ticks(ax, "x")
        plotting.panel_title(ax, name)
        ax.set_xlabel("total pulls T (log scale)")
    for i, ax in enumerate(axes):
        if i % plotting.MAX_PER_ROW == 0:
            ax.set_ylabel("probability of error")
    plotting.legend_below(fig, axes[:1], ncol=4)
    return fig
