"""The book-wide figure style: column width, at most three panels a row, legible text."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from causalbandits_lib.core import figures as plotting  # noqa: E402


@pytest.mark.parametrize("n", range(1, 12))
def test_grid_never_puts_more_than_three_panels_in_a_row(n):
    rows, cols = plotting.grid_shape(n)
    assert cols <= plotting.MAX_PER_ROW
    assert rows * cols >= n > (rows - 1) * cols  # no empty row
    assert rows * cols - n < cols  # the rows are balanced: fewer left-over cells than a row


def test_grid_respects_a_smaller_row_and_refuses_no_panels():
    assert plotting.grid_shape(3, per_row=2) == (2, 2)
    assert plotting.grid_shape(4) == (2, 2)
    assert plotting.grid_shape(7) == (3, 3)
    assert plotting.grid_shape(5, per_row=10) == (2, 3)  # never more than MAX_PER_ROW
    with pytest.raises(ValueError):
        plotting.grid_shape(0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 10])
def test_new_axes_fills_the_column_with_n_panels(n):
    fig, axes = plotting.new_axes(n, squeeze=False)
    assert len(axes) == len(fig.axes) == n
    assert fig.get_figwidth() == pytest.approx(plotting.COLUMN_WIDTH)
    assert max(ax.get_subplotspec().colspan.stop for ax in axes) <= plotting.MAX_PER_ROW
    plt.close(fig)


def test_column_width_fits_the_page_column():
    # 760-780 px column in a 1400 px window: the figure must be at most that wide at its dpi
    assert 700 <= plotting.COLUMN_WIDTH * plotting.DPI <= 760


def test_book_style_text_is_at_least_9_points():
    style = plotting.book_style()
    sizes = [v for k, v in style.items() if k.endswith("size") and not k.startswith("figure.figsize")]
    assert sizes and min(sizes) >= 9
    assert style["figure.figsize"][0] == plotting.COLUMN_WIDTH
    with matplotlib.rc_context():
        plotting.use_book_style()
        assert matplotlib.rcParams["legend.fontsize"] >= 9
        assert matplotlib.rcParams["figure.dpi"] == plotting.DPI


def test_legend_below_lists_each_label_once():
    fig, axes = plotting.new_axes(2)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="same")
        ax.plot([0, 1], [1, 0], label="_hidden")
    axes[1].plot([0, 1], [0.5, 0.5], label="other")
    legend = plotting.legend_below(fig)
    assert [t.get_text() for t in legend.get_texts()] == ["same", "other"]
    plt.close(fig)


def test_plain_log_ticks_label_a_short_log_axis_with_plain_numbers():
    import numpy as np

    fig, ax = plotting.new_axes()
    ax.plot(np.linspace(1.05, 2.3, 5), np.arange(5))
    ax.set_xscale("log")
    plotting.plain_log_ticks(ax, "x")
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels(minor=True) + ax.get_xticklabels() if t.get_text()]
    assert labels and not any("times" in lab or "×" in lab or "^" in lab for lab in labels), labels
    plt.close(fig)


def test_panel_title_wraps_to_its_panel_but_never_inside_mathematics():
    fig, axes = plotting.new_axes(3)
    text = r"(c) tight, $\mathcal{E} = 0.03$, 9 feasible (5 instances, 500 runs) and some more words"
    title = plotting.panel_title(axes[0], text).get_text()
    lines = title.split("\n")
    assert len(lines) > 1 and title.replace("\n", " ") == text
    assert all(line.count("$") % 2 == 0 for line in lines)  # every formula on one line
    assert plotting.panel_title(axes[1], "two\nlines").get_text() == "two\nlines"
    fig1, ax = plotting.new_axes()
    assert "\n" not in plotting.panel_title(ax, text).get_text()  # fits a full-width panel
    plt.close("all")


def test_a_panel_above_a_removed_cell_keeps_its_x_tick_labels():
    fig, axes = plotting.new_axes(5, sharex=True)  # 2 x 3, the last cell removed
    fig.canvas.draw()
    shown = [any(t.get_visible() and t.get_text() for t in ax.get_xticklabels()) for ax in axes]
    assert shown == [False, False, True, True, True]
    plt.close(fig)
