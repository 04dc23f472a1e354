"""Figure 2's panels (and Figures 4 and 5) draw at the column width, at most three panels a row,
with the legend in a cell of its own, never over a curve (they compute nothing a record keeps)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from causalbandits_lib.cclb import figures  # noqa: E402
from causalbandits_lib.cclb.experiments import LABELS  # noqa: E402
from causalbandits_lib.core import figures as plotting  # noqa: E402

METRICS = ("regret", "violation_pos", "penalized_regret", "violation")


def _result(seed: int, T: int = 40) -> dict:
    rng = np.random.default_rng(seed)
    return {m: rng.random((3, T)) - (0.5 if m == "violation" else 0.0) for m in METRICS}


def _check_layout(fig) -> None:
    assert fig.get_figwidth() == plotting.COLUMN_WIDTH
    drawn = [ax for ax in fig.axes if ax.axison]
    legend_cells = [ax for ax in fig.axes if not ax.axison]
    assert len(drawn) == 3 and len(legend_cells) == 1
    assert max(ax.get_subplotspec().colspan.stop for ax in fig.axes) <= plotting.MAX_PER_ROW
    assert all(ax.get_legend() is None for ax in drawn)  # no legend over the curves
    assert legend_cells[0].get_legend() is not None


def test_figure2_and_three_panels_layout():
    results = {a: _result(i) for i, a in enumerate(LABELS)}
    at_horizon = {
        "cclb": {
            20: {"regret": np.ones(3), "violation_sum_of_positive_parts": np.ones(3), "penalized_regret": np.ones(3)}
        }
    }
    fig = figures.figure2(results, list(LABELS), at_horizon, T=40)
    _check_layout(fig)
    labels = [t.get_text() for t in fig.axes[3].get_legend().get_texts()]
    assert "CCLB, end of each horizon" in labels and len(labels) == len(set(labels))
    _check_layout(figures.three_panels([(f"ε = {e}", _result(e)) for e in range(3)]))
    plt.close("all")
