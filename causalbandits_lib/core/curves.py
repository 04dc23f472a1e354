"""Curves of a simulation as the book stores and judges them: log-spaced rounds, summaries over
runs, and log-log slopes (the growth rate of a cumulative regret).

These functions compute numbers that records keep and verdicts use, so they live in the core (and
in every record's library fingerprint), not beside the plotting code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["curve_points", "summarise_curve", "summarise_checkpoints", "loglog_slope"]


def curve_points(T: int, n_points: int = 200) -> np.ndarray:
    """About ``n_points`` distinct, log-spaced round numbers in ``1..T`` (always including ``T``)."""
    if T < 1:
        raise ValueError(f"T={T} must be at least 1")
    pts = np.unique(np.round(np.logspace(0, np.log10(T), num=max(2, n_points))).astype(np.int64))
    pts = pts[(pts >= 1) & (pts <= T)]
    if pts[-1] != T:
        pts = np.append(pts, T)
    return pts


def summarise_curve(values: np.ndarray, n_points: int = 200, cumulative: bool = True) -> dict[str, list]:
    """Downsample a ``(n_runs, T)`` per-round array for a record.

    Parameters
    ----------
    values : ndarray, shape (n_runs, T)
    n_points : int
        Number of log-spaced rounds kept.
    cumulative : bool
        Summarise the running sum (e.g. cumulative regret) rather than the per-round values.

    Returns
    -------
    dict with ``t`` (1-based rounds), and over runs ``mean``, ``sd``, ``q05``, ``q95`` and ``n_runs``.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"curve values must have shape (n_runs, T), got {values.shape}")
    series = np.cumsum(values, axis=1) if cumulative else values
    t = curve_points(values.shape[1], n_points)
    sel = series[:, t - 1]
    sd = sel.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros(len(t))
    return {
        "t": t.tolist(),
        "mean": sel.mean(axis=0).tolist(),
        "sd": sd.tolist(),
        "q05": np.quantile(sel, 0.05, axis=0).tolist(),
        "q95": np.quantile(sel, 0.95, axis=0).tolist(),
        "n_runs": int(values.shape[0]),
    }


def summarise_checkpoints(t: np.ndarray, cumulative: np.ndarray) -> dict[str, Any]:
    """A record curve (the format of :func:`summarise_curve`) from cumulative values already
    taken at rounds ``t`` (e.g. by a :class:`~causalbandits_lib.core.recorders.RunningSums`).

    Parameters
    ----------
    t : ndarray, shape (P,)
    cumulative : ndarray, shape (n_runs, P)
    """
    cumulative = np.asarray(cumulative, dtype=float)
    if cumulative.ndim != 2 or cumulative.shape[1] != len(t):
        raise ValueError(f"cumulative must have shape (n_runs, {len(t)}), got {cumulative.shape}")
    n = cumulative.shape[0]
    return {
        "t": np.asarray(t).tolist(),
        "mean": cumulative.mean(axis=0).tolist(),
        "sd": (cumulative.std(axis=0, ddof=1) if n > 1 else np.zeros(len(t))).tolist(),
        "q05": np.quantile(cumulative, 0.05, axis=0).tolist(),
        "q95": np.quantile(cumulative, 0.95, axis=0).tolist(),
        "n_runs": int(n),
        "cumulative": True,
    }


def loglog_slope(
    t: np.ndarray, y: np.ndarray, t_min: float | None = None, t_max: float | None = None
) -> tuple[float, float]:
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
        raise ValueError(
            f"need at least two positive points in [{t_min}, {t_max}] to fit a slope, have {int(sel.sum())}"
        )
    slope, intercept = np.polyfit(np.log(t[sel]), np.log(y[sel]), 1)
    return float(slope), float(intercept)
