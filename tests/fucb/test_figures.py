"""The chapter's figures draw on small inputs without error (they compute nothing a record keeps)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from causalbandits_lib.core.runner import simulate  # noqa: E402
from causalbandits_lib.fucb import figures  # noqa: E402
from causalbandits_lib.fucb import registry as R  # noqa: E402
from causalbandits_lib.fucb.experiments import FUCB_VARIANTS, audited_run, make_policy  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_graphs_and_estimation_curves():
    s, a = R.email(), R.adult()
    assert figures.email_graph_figure(s.graph, s.separator).axes
    assert figures.adult_graph_figure(a.graph, a.separator).axes
    learned = {"W": {"rmse": np.ones((3, 2)), "width": np.ones((3, 2))}}
    assert len(figures.estimation_curves(np.array([10, 20, 40]), learned, {"W": 12}).axes) == 2
    with pytest.raises(ValueError, match="in no layer"):
        figures.draw_causal_graph(plt.gca(), s.graph, [("X1",)], {})


def test_regret_and_fairness_figures():
    s = R.email()
    runs = {n: simulate(s.env, make_policy(n, s.decompositions[n]), 30, 0, n_runs=2) for n in ("UCB", "C-UCB", "D-UCB")}
    runs["F-UCB"] = simulate(s.env, make_policy("F-UCB", s.decompositions["D-UCB"], s.estimator, 0.3), 30, 0, n_runs=2)
    figures.regret_beside_bounds(runs, {"UCB": 36, "C-UCB": 24, "D-UCB": 12}, 12, 0.3, 0.007, 0.5)
    dec = s.decompositions["D-UCB"]
    figures.smallest_radius_curves(dec.probs, s.estimator.diff, 100)
    bounds = np.zeros((8, 36, 2))
    figures.theorem2_intervals(s.env.context_codes, 0, bounds, bounds + 1, bounds, bounds + 0.5)
    results = {
        n: audited_run(s.env, make_policy(n, s.decompositions[n]), s.estimator, 30, 0, 2)
        for n in ("UCB", "C-UCB", "D-UCB")
    }
    for v in FUCB_VARIANTS:
        results[v, 0.3] = audited_run(s.env, make_policy(v, dec, s.estimator, 0.3), s.estimator, 30, 0, 2)
    figures.figure2b(results, list(FUCB_VARIANTS), 0.3, 2000)
    assert len(figures.fallback_shares(results, ("F-UCB", "F-UCB-diff"), [0.3]).axes) == 2
    results["Fair-LinUCB"] = results["D-UCB"]
    final = {k: float(r.final().mean()) for k, r in results.items()}
    figures.table2_figure(results, final, list(FUCB_VARIANTS), [0.3], {0.3: 323.12})
