"""The book's figure conventions: mean over runs with a shaded band, curves stored in records, log
axes with a fitted slope, bounds drawn beside measurements.

Every chapter's ``figures`` module and every notebook draws with these, so they sit in the core
where a chapter may import them. They draw and compute nothing a record keeps; modules named
``figures`` are therefore left out of the record fingerprint. matplotlib is imported only when a
new figure is made (:func:`new_axes`): the helpers that draw on given axes need none of it, and
importing the core stays free of plotting libraries.

The book-wide style: every figure is drawn at the column width (:data:`COLUMN_WIDTH` inches at
:data:`DPI`), with text of at least 9 pt at that size, at most three panels in a row
(:func:`new_axes`, :func:`grid_shape`), and legends that cover no data (inside an empty corner, or
below the panels with :func:`legend_below`). The notebook session applies :func:`use_book_style`
and stores PNGs at twice the resolution.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .curves import curve_points

__all__ = [
    "COLUMN_WIDTH",
    "DPI",
    "FONT_SIZE",
    "SMALL_FONT_SIZE",
    "MAX_PER_ROW",
    "book_style",
    "use_book_style",
    "grid_shape",
    "figure_size",
    "new_axes",
    "panel_title",
    "plain_log_ticks",
    "legend_entries",
    "legend_below",
    "band",
    "band_from_summary",
    "annotate_slope",
]

#: The display width of a figure in inches at :data:`DPI`: 7.5 in x 100 dpi = 750 px, which fills
#: the book's main column (about 760-780 px in a 1400 px window) without being shrunk.
COLUMN_WIDTH = 7.5
#: The dots per inch of the figure. The book stores PNGs at twice this ("retina"), with a width
#: metadata of half the pixel width, so an image is shown at ``COLUMN_WIDTH * DPI`` CSS pixels.
DPI = 100
#: Text sizes in points. A figure is shown at ``DPI / 96`` of its size in inches (slightly more
#: than 1:1), so these are at least their own size on the page when the figure is not shrunk.
FONT_SIZE = 10.0
SMALL_FONT_SIZE = 9.0
#: No row of a figure holds more panels than this; more panels wrap into more rows.
MAX_PER_ROW = 3
#: The height of one row of panels (inches) by the number of panels in the row.
_ROW_HEIGHT = {1: 4.0, 2: 3.2, 3: 2.8}


def book_style() -> dict:
    """The matplotlib ``rcParams`` of the book (figure size at column width, dpi, font sizes)."""
    return {
        "figure.figsize": (COLUMN_WIDTH, _ROW_HEIGHT[1]),
        "figure.dpi": DPI,
        "savefig.dpi": "figure",
        "font.size": FONT_SIZE,
        "axes.titlesize": FONT_SIZE,
        "axes.labelsize": FONT_SIZE,
        "figure.titlesize": FONT_SIZE + 1,
        "xtick.labelsize": SMALL_FONT_SIZE,
        "ytick.labelsize": SMALL_FONT_SIZE,
        "legend.fontsize": SMALL_FONT_SIZE,
        "legend.title_fontsize": SMALL_FONT_SIZE,
        "legend.framealpha": 0.85,
    }


def use_book_style() -> None:
    """Apply :func:`book_style` to matplotlib (imports it; called by the notebook session)."""
    import matplotlib

    matplotlib.rcParams.update(book_style())


def grid_shape(n_panels: int, per_row: int = MAX_PER_ROW) -> tuple[int, int]:
    """``(rows, columns)`` of a grid of ``n_panels`` with at most ``min(per_row, MAX_PER_ROW)`` in a
    row, the rows as full as possible."""
    if n_panels < 1:
        raise ValueError(f"n_panels={n_panels}; a figure has at least one panel")
    per_row = max(1, min(int(per_row), MAX_PER_ROW))
    rows = -(-n_panels // per_row)
    cols = -(-n_panels // rows)  # balanced: 4 panels give 2 x 2, not 3 + 1
    return rows, cols


def figure_size(n_panels: int = 1, per_row: int = MAX_PER_ROW, row_height: float | None = None) -> tuple[float, float]:
    """The figure size (inches) of a grid of panels: the column width, and ``row_height`` (by
    default one that suits the number of columns) per row."""
    rows, cols = grid_shape(n_panels, per_row)
    h = _ROW_HEIGHT[cols] if row_height is None else float(row_height)
    return COLUMN_WIDTH, h * rows


def new_axes(
    n_panels: int = 1,
    per_row: int = MAX_PER_ROW,
    row_height: float | None = None,
    sharex: bool = False,
    sharey: bool = False,
    squeeze: bool = True,
    **subplot_kw,
):
    """A column-width figure with ``n_panels`` axes, at most three in a row (returns ``fig, ax`` for
    one panel, ``fig, axes`` with a flat list of ``n_panels`` axes otherwise or when ``squeeze`` is
    false; cells of the last row left over are removed)."""
    import matplotlib.pyplot as plt

    rows, cols = grid_shape(n_panels, per_row)
    fig, grid = plt.subplots(
        rows,
        cols,
        figsize=figure_size(n_panels, per_row, row_height),
        squeeze=False,
        layout="constrained",
        sharex=sharex,
        sharey=sharey,
        **subplot_kw,
    )
    axes = list(grid.ravel())
    for k, ax in enumerate(axes[n_panels:], start=n_panels):
        ax.remove()
        if sharex and rows > 1:  # the panel above a removed cell ends its column: show its x ticks
            grid.ravel()[k - cols].xaxis.set_tick_params(labelbottom=True)
    axes = axes[:n_panels]
    return (fig, axes[0]) if n_panels == 1 and squeeze else (fig, axes)


def _wrap_line(text: str, chars: int) -> str:
    """``text`` broken at spaces into lines of at most ``chars`` characters where it can be, never
    inside ``$...$``."""
    words: list[str] = []
    for i, piece in enumerate(text.split("$")):  # even indices lie outside mathematics
        if i % 2:
            words[-1:] = [(words[-1] if words else "") + f"${piece}$"]
            continue
        parts = piece.split(" ")
        if words and parts:
            words[-1] += parts[0]
            parts = parts[1:]
        words.extend(parts)
    lines, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > chars:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(lines)


def panel_title(ax, text: str, **kw):
    """``ax.set_title`` with the text wrapped to the width of its panel, so that the titles of
    panels side by side do not run into each other (text with ``$...$`` mathematics is not
    wrapped inside a formula: it is broken only at spaces outside one)."""
    import matplotlib

    spec = ax.get_subplotspec()
    share = 1.0 if spec is None else len(spec.colspan) / spec.get_gridspec().ncols
    size = kw.get("fontsize", matplotlib.rcParams["axes.titlesize"])
    size = size if isinstance(size, (int, float)) else FONT_SIZE
    chars = max(12, int(ax.figure.get_figwidth() * share * 72 / (0.55 * size)))
    wrapped = "\n".join(_wrap_line(line, chars) for line in text.split("\n"))
    return ax.set_title(wrapped, **kw)


def plain_log_ticks(ax, axis: str = "x") -> None:
    """Label a log axis with plain numbers (``1.2``, ``2``, ``5``), so that the tick labels of an
    axis spanning less than a decade do not run into each other (``1.2×10⁰1.4×10⁰``)."""
    from matplotlib.ticker import LogFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(LogFormatter(labelOnlyBase=False))
    target.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def legend_entries(axes) -> tuple[list, list]:
    """The legend handles and labels of ``axes``, each label once (first occurrence)."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    return handles, labels


def legend_below(fig, axes=None, ncol: int | None = None, **kw):
    """One legend for the whole figure, below its panels (outside the data), with every distinct
    label of ``axes`` (default: all axes of ``fig``) once."""
    handles, labels = legend_entries(fig.axes if axes is None else axes)
    if ncol is None:
        longest = max((len(lab) for lab in labels), default=1)
        ncol = max(1, min(len(labels), int(90 // max(longest, 1)), 3))
    return fig.legend(handles, labels, loc="outside lower center", ncol=ncol, **kw)


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
    ax.text(*xy, f"{label}slope {slope:.2f}", transform=ax.transAxes, fontsize=SMALL_FONT_SIZE, va="top")
