"""The bookkeeping of notebook 2 (``fucb.bound_study``): Theorem 1's table, the long-horizon runs and
the bound curves, each against values computed here by hand or by a direct call."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.core import checks
from causalbandits_lib.core.runner import SimulationResult, simulate
from causalbandits_lib.fucb import bound_study
from causalbandits_lib.fucb.experiments import email_setup, make_policy
from tests.recording_notebook import RecordingNotebook


def result(regret, **more) -> SimulationResult:
    regret = np.asarray(regret, dtype=float)
    metrics = {"regret": regret, **{k: np.asarray(v, dtype=float) for k, v in more.items()}}
    return SimulationResult(metrics=metrics, runs=np.arange(regret.shape[0]), seed=0, T=regret.shape[1])


def test_theorem1_table_by_hand():
    table = bound_study.theorem1_table({"two cells": 2}, [10, 5, 10])
    assert [row[2] for row in table.rows] == [5, 10]  # sorted, duplicates dropped
    for name, k, T, bound, printed, proof in table.rows:
        d = 1.0 / T**2
        assert (name, k) == ("two cells", 2)
        assert bound == pytest.approx(math.sqrt(k * T) * math.log(T) + math.sqrt(32 * k * T * math.log(1 / d)))
        tail_printed = math.exp(-k * math.log(T) ** 3 / (32 * math.log(1 / d)))
        tail_proof = math.exp(-k * math.log(T) ** 2 / (64 * math.log(1 / d)))
        assert printed == pytest.approx(1 - 2 * d * T * k - tail_printed)
        assert proof == pytest.approx(1 - 2 * d * T * k - tail_proof)
    lines = table.markdown().splitlines()
    assert lines[1] == "|---|---|---|---|---|---|" and len(lines) == 4
    b, p, q = table.rows[1][3:]
    assert lines[3] == f"| two cells | 2 | 10 | {b:,.0f} | {p:.4f} | {q:.4f} |"
    nb = RecordingNotebook()
    table.record(nb)
    assert nb.metrics["bounds.theorem1.cells_2.T_10"] == b
    assert nb.metrics["bounds.theorem1_probability.cells_2.T_5"] == {
        "printed": table.rows[0][4],
        "corrected": table.rows[0][5],
    }
    assert len(nb.metrics) == 4


def test_long_runs_record_by_hand():
    # regret 1 every round in both runs: cumulative t, slope 1; final T; se 0
    ones = np.ones((2, 8))
    runs = {
        "UCB": result(ones),
        "F-UCB": result(2 * ones, fallback=[[1, 1, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]]),
    }
    long = bound_study.LongRuns(runs, result(3 * ones), safe_arm=4, T=8)
    assert long.final() == {"UCB": 8.0, "F-UCB": 16.0}
    np.testing.assert_array_equal(long.final_runs()["F-UCB"], [16.0, 16.0])
    assert long.slopes(4)["UCB"] == pytest.approx(1.0) and long.slopes(2, 4)["F-UCB"] == pytest.approx(1.0)
    assert long.fallback_rounds() == 1.5
    nb = RecordingNotebook()
    long.record(nb)
    assert nb.metrics["long_run.final_regret.F-UCB_theorem3"] == 24.0
    assert nb.metrics["long_run.final_regret.UCB"] == 8.0 and nb.metrics["long_run.final_regret_se.F-UCB"] == 0.0
    assert nb.metrics["long_run.loglog_slope.F-UCB"] == pytest.approx(1.0)
    assert nb.metrics["long_run.loglog_slope_previous_quarter.UCB"] == pytest.approx(1.0)
    assert nb.metrics["long_run.fucb_fallback_rounds"] == 1.5
    assert set(nb.curves) == {"long_run.regret.UCB", "long_run.regret.F-UCB", "long_run.regret.F-UCB_theorem3"}


def test_run_long_horizon_makes_the_runs_one_would_make_by_hand():
    setup = email_setup()
    decs, est = setup.decompositions, setup.estimator
    long = bound_study.run_long_horizon(setup.env, decs, est, 40, 3, 2, 0.3, 2.0, alpha_r_theorem3=5.0)
    assert list(long.runs) == ["UCB", "C-UCB", "D-UCB", "F-UCB"]
    direct = simulate(setup.env, make_policy("C-UCB", decs["C-UCB"]), 40, 3, n_runs=2)
    np.testing.assert_array_equal(long.runs["C-UCB"]["regret"], direct["regret"])
    safe = int(np.argmin(np.abs(setup.env.discrepancy).max(axis=0)))
    thm3 = make_policy("F-UCB", decs["D-UCB"], est, 0.3, alpha_r=5.0, alpha_c=1.0, fallback="safe_arm", safe_arm=safe)
    direct = simulate(setup.env, thm3, 40, 3, n_runs=2, metrics=("regret", "fallback"))
    assert long.safe_arm == safe
    np.testing.assert_array_equal(long.theorem3["regret"], direct["regret"])
    np.testing.assert_array_equal(long.theorem3["fallback"], direct["fallback"])


def test_bound_curves_against_a_brute_force_search():
    k, T, max_gap = 3, 400, 2.0
    b = bound_study.bound_curves(k, T, tau=0.3, delta0=0.05, max_gap=max_gap)
    assert b.horizons[0] == 2 and b.horizons[-1] == T and len(b.horizons) <= 30
    assert np.all(b.prop2_horizons > 4 * k) and set(b.prop2_horizons) <= set(b.horizons)
    assert b.rate_t[0] == T // 40 and b.rate_t[-1] == T
    assert b.proposition2_level == pytest.approx(1 - 4 * k / T / 2)
    assert b.trivial_at_T() == max_gap * T
    n = np.arange(2, 100_000)
    thm1 = np.sqrt(k * n) * np.log(n) + np.sqrt(32 * k * n * np.log(n.astype(float) ** 2))  # Eq. 15 at δ = 1/n²
    below = thm1 < checks.INFORMATIVE_BELOW * max_gap * n
    assert below.any() and not below[0]
    first = int(n[np.argmax(below)])
    assert b.theorem1_from == first
    np.testing.assert_allclose(b.theorem1, thm1[b.horizons - 2])

    def cor1(t):  # Corollary 1 as printed
        return 16 * math.sqrt(k * t * math.log(t)) * math.log(t)

    c = b.corollary1_from  # the first horizon where it is informative
    assert cor1(c) < checks.INFORMATIVE_BELOW * max_gap * c and cor1(c - 1) >= checks.INFORMATIVE_BELOW * max_gap * (
        c - 1
    )
    assert b.corollary1_at_T() == pytest.approx(cor1(T))
    nb = RecordingNotebook()
    b.record(nb)
    assert nb.metrics["cor1.informative_from"] == c and nb.metrics["cor1.bound_at_T"] == b.corollary1_at_T()
    assert nb.metrics["bounds.theorem1_ratio_to_trivial_at_T"] == pytest.approx(b.theorem1_at_T() / (max_gap * T))
    assert nb.metrics["bounds.informative_from"] == {"theorem1": b.theorem1_from, "theorem3": b.theorem3_from}
    assert set(nb.metrics["cor1.probability_at_T"]) == {"printed", "corrected"}
