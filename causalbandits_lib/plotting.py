"""Plotting helpers with the book's conventions: mean over runs with a shaded band, log axes with
a fitted slope, bounds drawn beside measurements.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from .records import curve_points

__all__ = ["loglog_slope", "band", "band_from_summary", "annotate_slope", "new_axes"]


def new_axes(width: float = 6.4, height: float = 4.0, ncols: int = 1):
    """A figure with ``ncols`` axes side by side (returns ``fig, axes``)."""
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False, layout="constrained")
    return fig, axes[0] if ncols > 1 else axes[0, 0]


def loglog_slope(t: np.ndarray, y: np.ndarray, t_min: float | None = None, t_max: float | None = None) -> tuple[float, float]:
    """Least-squares slope and intercept of ``log y`` against ``log t`` for ``t_min <= t <= t_max``.

    A cumulative regret growing like ``t^a`` has slope ``a``: 0.5 for ``√T`` rates, 1 for linear
    regret, and slopes falling towards 0 for logarithmic regret.

    Raises
    ------
    ValueError
        If fewer than two positive points fall in the window.
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    sel = (t > 0) & (y > 0)
    if t_min is not None:
        sel &= t >= t_min
    if t_max is not None:
        sel &= t <= t_max
    if sel.sum() < 2:
        raise ValueError(f"need at least two positive points in [{t_min}, {t_max}] to fit a slope, have {int(sel.sum())}")
    slope, intercept = np.polyfit(np.log(t[sel]), np.log(y[sel]), 1)
    return float(slope), float(intercept)


def band(ax, runs: np.ndarray, label: str, cumulative: bool = True, spacing: str = "log", n_points: int = 400, quantiles=(0.05, 0.95), **kw):
    """Draw the mean over runs of a ``(n_runs, T)`` per-round array, with a shaded band between the
    given quantiles over runs.

    Parameters
    ----------
    runs : ndarray, shape (n_runs, T)
    cumulative : bool
        Plot the running sum (cumulative regret, say) rather than the per-round values.
    spacing : {"log", "linear"}
        Draw at ``n_points`` log-spaced or evenly spaced rounds, so long horizons stay light.
    """
    runs = np.asarray(runs, dtype=float)
    series = np.cumsum(runs, axis=1) if cumulative else runs
    T = series.shape[1]
    if spacing == "log":
        pts = curve_points(T, n_points)
    elif spacing == "linear":
        pts = np.unique(np.linspace(1, T, min(n_points, T)).round().astype(np.int64))
    else:
        raise ValueError(f"spacing={spacing!r}; allowed are 'log' and 'linear'")
    sel = series[:, pts - 1]
    (line,) = ax.plot(pts, sel.mean(axis=0), label=label, **kw)
    if sel.shape[0] > 1:
        lo, hi = np.quantile(sel, quantiles, axis=0)
        ax.fill_between(pts, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def band_from_summary(ax, summary: Mapping[str, Sequence[float]], label: str, **kw):
    """Draw a curve stored in a record (``t``, ``mean``, ``q05``, ``q95``)."""
    t = np.asarray(summary["t"])
    (line,) = ax.plot(t, summary["mean"], label=label, **kw)
    if summary.get("n_runs", 1) > 1:
        ax.fill_between(t, summary["q05"], summary["q95"], color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def annotate_slope(ax, slope: float, label: str = "", xy=(0.03, 0.92)) -> None:
    """Write a fitted log-log slope into the corner of ``ax``."""
    ax.text(*xy, f"{label}slope {slope:.2f}", transform=ax.transAxes, fontsize=9, va="top")
