"""The chapter's figures draw on small inputs without error (they compute nothing a record keeps)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from causalbandits_lib.bestfair import figures  # noqa: E402
from causalbandits_lib.bestfair.algorithms import ALGORITHMS, AlgorithmConfig, identify  # noqa: E402
from causalbandits_lib.bestfair.allocation import AllocationLP  # noqa: E402

from .problems import easy_problem  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_problem_and_allocation_figures():
    prob = easy_problem()
    assert len(figures.divergences_to_cheap_arm(prob, "easy").axes) == 1
    sd = {w: np.linspace(0.1, 0.4, prob.n_arms) for w in ("outcome", "fairness", "fairness_reverse")}
    assert len(figures.spread_against_divergence(prob, sd, 100, 10).axes) == 2
    nu, _ = AllocationLP(prob.allocation_matrices, prob.costs).solve(np.ones(4, bool), 1.0)
    assert len(figures.allocation_fractions(nu, 1000).axes) == 1


def test_phase_trace_and_error_figures():
    prob = easy_problem()
    cfg = AlgorithmConfig(budget=1.0)
    results = {a: identify(prob, a, 300, 0.2, 0, n_runs=2, config=cfg) for a in ALGORITHMS}
    assert len(figures.phase_trace(results, prob.n_arms, prob.best_fair_arm(0.2)).axes) == 4
    assert len(figures.demo_errors({a: r.error_rate for a, r in results.items()}, 300, 2).axes) == 1
    budgets = [100, 200, 400]
    err = {a: np.array([[1, 0], [0, 1], [0, 0]], bool) for a in ("CSR-V1", "CSR-V2")}
    assert len(figures.theorem1_against_measured(budgets, err, [3.0, 2.0, 1.0], "t").axes) == 1
    assert len(figures.theorem2_against_measured(budgets, err, [-1.0, 0.2, 0.5]).axes) == 1
    curve = {a: [0.5, 0.2, 0.1] for a in err}
    assert len(figures.paper_theory(budgets, curve, curve).axes) == 2
    panels = {"a": {a: np.zeros((3, 2), bool) for a in ALGORITHMS}, "b": {a: np.ones((3, 2), bool) for a in ALGORITHMS}}
    assert len(figures.error_curves(budgets, panels, {"a": "A", "b": "B"}).axes) == 2
    assert len(figures.error_curves(budgets, panels, {"a": "A", "b": "B"}, log_x=False).axes) == 2
    names = [f"p{i}" for i in range(6)]
    assert len(figures.paper_error_curves(budgets, names, ALGORITHMS, lambda n, a: [0.3, 0.2, 0.1]).axes) == 6
