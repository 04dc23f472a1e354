"""The book's figure conventions: mean over runs with a shaded band, curves stored in records, log
axes with a fitted slope, bounds drawn beside measurements.

Every chapter's ``figures`` module and every notebook draws with these, so they sit in the core
where a chapter may import them. They draw and compute nothing a record keeps; modules named
``figures`` are therefore left out of the record fingerprint. matplotlib is imported only when a
new figure is made (:func:`new_axes`): the helpers that draw on given axes need none of it, and
importing the core stays free of plotting libraries.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .curves import curve_points

__all__ = ["band", "band_from_summary", "annotate_slope", "new_axes"]


def new_axes(width: float = 6.4, height: float = 4.0, ncols: int = 1):
    """A figure with ``ncols`` axes side by side (returns ``fig, axes``)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False, layout="constrained")
    return fig, axes[0] if ncols > 1 else axes[0, 0]


def band(
    ax,
    runs: np.ndarray,
    label: str,
    cumulative: bool = True,
    spacing: str = "log",
    n_points: int = 400,
    quantiles=(0.05, 0.95),
    **kw,
):
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
