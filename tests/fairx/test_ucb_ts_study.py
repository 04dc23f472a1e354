"""The measurements of ``fairx/02`` (:mod:`causalbandits_lib.fairx.ucb_ts_study`) and its figure,
against hand-computed values and the inequalities they must satisfy."""

from __future__ import annotations

import contextlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from causalbandits_lib.fairx import data, figures, theory  # noqa: E402
from causalbandits_lib.fairx import ucb_ts_study as study  # noqa: E402
from causalbandits_lib.fairx.algorithms import FairXEG, FairXTS  # noqa: E402
from causalbandits_lib.fairx.experiments import FairnessRun  # noqa: E402
from causalbandits_lib.fairx.merit import ExpMerit  # noqa: E402
from tests.recording_notebook import RecordingNotebook

MEANS = data.YEAST_LABEL_COUNTS / data.YEAST_N


def linear_run(slope_per_round, T=8):
    """Cumulative regrets ``slope · t`` (fairness) and ``-t`` (reward) at 1, 2, 4, 8, two runs."""
    t = np.array([1.0, 2.0, 4.0, 8.0])
    fr = np.array([[slope_per_round * t], [slope_per_round * t]])
    return FairnessRun(t, fr, -np.ones_like(fr) * t, {}, np.arange(2), 0, T)


def test_metric_key_drops_brackets_and_commas():
    assert study.metric_key("FairX-UCB (theory w0, exact)") == "FairX-UCB_theory_w0_exact"
    assert study.metric_key("TS") == "TS"


def test_step_gaps_metrics_and_text():
    gaps = study.StepGaps({0.5: np.array([0.0, 2e-6]), 10.0: np.array([0.1, 0.3])})
    assert gaps.metrics() == {
        "optimistic_step.value_gap_mean.w0_0.5": pytest.approx(1e-6),
        "optimistic_step.value_gap_mean.w0_10": pytest.approx(0.2),
    }
    lines = gaps.text().splitlines()
    assert lines[0] == (
        "w0 = 0.5: exact - PGD value gap mean 1.00e-06, max 2.00e-06, "
        "PGD short by > 1e-6 in 50% of boxes, min gap 0.0e+00"
    )
    assert lines[1].endswith("in 100% of boxes, min gap 1.0e-01")


def test_optimistic_step_gaps_exact_never_worse_and_no_gap_without_width():
    merit = ExpMerit(10.0)
    out = study.optimistic_step_gaps(merit, MEANS, (0.0, 0.5), np.random.default_rng(1), 30)
    assert set(out.gaps) == {0.0, 0.5} and out.gaps[0.5].shape == (30,)
    assert out.gaps[0.5].min() >= -1e-12  # the exact step maximises over the box
    np.testing.assert_allclose(out.gaps[0.0], 0.0, atol=1e-12)  # a box of width 0 is a point
    again = study.optimistic_step_gaps(merit, MEANS, (0.5,), np.random.default_rng(1), 30)
    np.testing.assert_array_equal(again.gaps[0.5], out.gaps[0.5])


def test_run_table_and_record_runs():
    runs = {"FairX-TS (a, b)": linear_run(2.0), "UCB": linear_run(1.0)}
    table = study.run_table(runs)
    assert table["FairX-TS (a, b)"]["fr"] == 16.0 and table["UCB"]["rr"] == -8.0
    assert table["UCB"]["slope"] == pytest.approx(1.0)  # linear growth
    nb = RecordingNotebook()
    assert study.record_runs(nb, runs, "theory.") == table
    assert nb.metrics["theory.final_fairness_regret.FairX-TS_a_b"] == 16.0
    assert nb.metrics["theory.final_reward_regret.UCB"] == -8.0
    assert set(nb.curves) == {
        "theory.fairness_regret.FairX-TS_a_b",
        "theory.reward_regret.FairX-TS_a_b",
        "theory.fairness_regret.UCB",
        "theory.reward_regret.UCB",
    }


def test_late_fairness_per_round_over_the_last_tenth():
    t = np.array([1.0, 5.0, 9.0, 10.0])
    run = FairnessRun(
        t, np.array([[[0.0, 1.0, 3.0, 4.0]], [[0.0, 1.0, 3.0, 6.0]]]), np.zeros((2, 1, 4)), {}, np.arange(2), 0, 10
    )
    # from t = 9 (first checkpoint >= 0.9 T) to t = 10: (4 - 3) / 1 and (6 - 3) / 1
    assert study.late_fairness_per_round(run, 0.9).tolist() == [1.0, 3.0]
    assert study.late_fairness_per_round(run, 0.5).tolist() == [0.6, 1.0]  # from t = 5: (4 - 1) / 5 and (6 - 1) / 5


def test_proof_steps_metrics_and_text():
    steps = {
        "played": np.array([10.0, 20.0]),
        "expected": np.array([12.0, 19.0]),
        "rounds": np.array([100.0, 100.0]),
        "covered": np.array([50.0, 100.0]),
        "max_step_ratio": np.array([0.25, 0.5]),
    }
    p = study.ProofSteps(steps, 40.0, 4.0, 1000)
    assert p.deviation.tolist() == [2.0, 1.0]
    assert p.metrics() == {
        "proof_steps.width_sum_over_bound_max": 0.5,
        "proof_steps.azuma_deviation_over_bound_max": 0.5,
        "proof_steps.covered_round_fraction": 0.75,
        "proof_steps.per_round_step_ratio_max": 0.5,
    }
    assert p.text().startswith("T = 1,000: Σ 1/√N_(t,a_t) = 15.0 (max 20.0) against 2√(TK) = 40.0; ")
    assert "on 75.0% of rounds; largest FR_t / step = 5.00e-01" in p.text()


def test_run_proof_steps_measures_the_width_sum_within_its_bound():
    p = study.run_proof_steps(ExpMerit(10.0), MEANS, 60, 0.05, 3, 2)
    assert p.width_bound == pytest.approx(2 * np.sqrt(60 * 14)) and p.T == 60
    assert p.azuma == pytest.approx(float(theory.azuma_width_bound(60, 0.05)))
    assert p.steps["played"].shape == (2,)
    assert np.all(p.steps["played"] <= p.width_bound)  # the deterministic last step of the proof
    assert np.all(p.steps["rounds"] <= 60 - 14)  # rounds t > K only


def test_time_per_round_repeats_every_policy_in_its_timed_section():
    merit = ExpMerit(1.0)
    sections = []

    @contextlib.contextmanager
    def timed(section):
        sections.append(section)
        yield

    makers = {"FairX-EG": lambda: FairXEG(merit, 0.1, 14), "FairX-TS": lambda: FairXTS(merit, 1.0, 0.5, 14)}
    out = study.time_per_round(makers, MEANS, merit, 20, 0, 2, repetitions=3, timed=timed)
    assert set(out) == set(makers) and all(v.shape == (3,) and np.all(v > 0) for v in out.values())
    assert sections == ["timing FairX-EG, 3 x 20 rounds", "timing FairX-TS, 3 x 20 rounds"] * 3


def test_ucb_ts_regrets_draws_the_runs_and_the_references():
    t = np.array([1.0, 2.0, 4.0, 8.0])
    fig = figures.ucb_ts_regrets({"FairX-TS": linear_run(2.0), "UCB": linear_run(1.0)}, t, 10 * t, 5 * t)
    left, right = fig.axes[:2]
    labels = [line.get_label() for line in left.get_lines()]
    assert labels == ["FairX-TS", "UCB", "Thm 3.2.1 bound (L/γ = c·e^c)", "trivial 2t", "√t guide"]
    assert [line.get_label() for line in right.get_lines()][-1] == "Thm 3.2.2 bound"
    assert right.get_yscale() == "symlog" and left.get_yscale() == "log"
    plt.close(fig)
