"""The chapter's figures draw without error on small inputs (they compute nothing recorded)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from causalbandits_lib.core.runner import SimulationResult  # noqa: E402
from causalbandits_lib.pcb import figures  # noqa: E402
from causalbandits_lib.pcb import model as M  # noqa: E402


def _result(scale: float) -> SimulationResult:
    regret = np.random.default_rng(0).random((3, 50)) * scale
    return SimulationResult({"regret": regret}, np.arange(3), 0, 50)


def test_every_figure_draws(table2):
    rng = np.random.default_rng(1)
    truth = M.conditional_causal_effects(table2)
    res = {"LinUCB": _result(1.0), "LinUCB-PCB": _result(0.5)}
    final = {k: r.final() for k, r in res.items()}
    t = np.arange(1, 51)
    figs = [
        figures.logged_rows_histogram(rng.integers(14000, 14500, 20), 30_000, 0.47625),
        figures.coverage_per_cell(
            {"a": rng.random(16), "b": rng.random(16)}, rng.random(16) + 1, 0.95, 20, {"a": "A", "b": "B"}
        ),
        figures.table1_fit(
            {c: truth for c in ("truth", "biased", "lb", "ub")},
            {c: truth[None] for c in ("truth", "biased", "lb", "ub")},
            {c: truth[None] for c in ("truth", "biased", "lb", "ub")},
            1,
        ),
        figures.regret_bands(res, "title", highlight="LinUCB-PCB"),
        figures.final_regret_histograms(final, ("LinUCB", "LinUCB-PCB")),
        figures.regret_against_bound(res, ("LinUCB",), 10 * np.sqrt(t), "bound", 0.2 * t),
        figures.regret_with_bounds(res, (10 * np.log1p(t), 5 * np.log1p(t))),
    ]
    fig, ax = plt.subplots()
    figures.draw_graph(ax, table2.graph)
    figures.draw_cell_intervals(ax, truth, {"sound": (truth - 0.1, truth + 0.1)}, {"CP": truth + 0.05})
    figs.append(fig)
    assert all(len(f.axes) >= 1 for f in figs)
    assert len(figs[1].axes) == 2  # the twin axis of the stratum sizes
    assert len(figs[3].axes) == 1  # two algorithms: their bands in one panel
    plt.close("all")


def test_figure4_with_many_algorithms_splits_its_bands_into_panels():
    """Seven overlapping bands cannot be told apart: one panel of means, then one per algorithm,
    at most three panels in a row, at the column width."""
    from causalbandits_lib.core import figures as plotting

    res = {f"alg{i}": _result(1.0 + i) for i in range(7)}
    fig = figures.regret_bands(res, "title", highlight="alg0")
    assert len(fig.axes) == 8
    assert max(ax.get_subplotspec().colspan.stop for ax in fig.axes) <= plotting.MAX_PER_ROW
    assert fig.get_figwidth() == plotting.COLUMN_WIDTH
    shaded = [len(ax.collections) for ax in fig.axes]
    assert shaded[0] == 0 and all(n >= 1 for n in shaded[1:])  # bands only in the separate panels
    plt.close(fig)
