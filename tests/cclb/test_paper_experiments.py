"""The result objects of notebook cclb/04 (paper_experiments), each against a hand-computed
expectation on a tiny input, and the one call against the batches it replaces."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.cclb import experiments as E
from causalbandits_lib.cclb import paper_experiments as PE
from causalbandits_lib.cclb.generator import RoundGenerator
from causalbandits_lib.core.runner import SimulationResult
from tests.recording_notebook import RecordingNotebook

METRICS = ("action", "regret", "regret_plus", "penalized_regret", "violation", "violation_pos")


def _result(offset: float = 0.0, T: int = 4) -> SimulationResult:
    """Two runs of ``T`` rounds: every per-round value 1 + offset in run 0 and 3 + offset in run 1,
    the violation -1 then +2 alternating (plus offset), the action 0 (1 in the last round of run 1 if offset)."""
    base = np.array([[1.0] * T, [3.0] * T]) + offset
    metrics = {m: base.copy() for m in METRICS}
    metrics["violation"] = np.tile([-1.0, 2.0], (2, T // 2)) + offset
    metrics["action"] = np.zeros((2, T))
    if offset:
        metrics["action"][1, -1] = 1
    return SimulationResult(metrics, np.arange(2), 0, T)


def test_with_se_by_hand():
    assert E.with_se(np.array([1.0, 2.0, 3.0])) == pytest.approx({"mean": 2.0, "se": 1 / math.sqrt(3)})


def _runs() -> PE.PaperRuns:
    configs = tuple(E.paper_configs(4, 0.2, 2.0, 0.1, eps_values=[0.05], tau_values=[0.3]))
    results = {c.key: _result(i) for i, c in enumerate(configs)} | {"glm_ucb": _result(10.0)}
    short = {2: {"cclb": _result(T=2), "eps_cclb": _result(1.0, T=2)}}
    other = {a: _result(0.0) for a in PE.ALGORITHMS}
    return PE.PaperRuns(configs, results, short, other, 0.2, 2.0, "random", "fairer", 0, 2, 0.05)


def test_sweeps_pick_the_configurations_of_figures_4_and_5():
    runs = _runs()
    fig4 = runs.eps_sweep([0.05], 0.1)
    assert fig4.values == [0.0, 0.05, 0.1] and fig4.keys == ["cclb", "eps_cclb_eps0.05", "eps_cclb"]
    fig5 = runs.tau_sweep([0.3])
    assert fig5.values == [0.2, 0.3] and fig5.keys == ["cclb", "cclb_tau0.3"]
    # cclb is config 1 (offset 1): regret per round 2 and 4 over 4 rounds -> 8 and 16, mean 12
    assert fig5.means("regret")[0] == pytest.approx(12.0)
    np.testing.assert_allclose(fig5.per_run("regret")["cclb"], [8.0, 16.0])
    assert [label for label, _ in fig4.panels()] == ["ε = 0", "ε = 0.05", "ε = 0.1"]
    nb = RecordingNotebook()
    fig5.record(nb, ("regret",))
    assert nb.metrics == pytest.approx({"fig5.tau_0.2.final_regret": 12.0, "fig5.tau_0.3.final_regret": 24.0})


def test_paper_runs_record_and_horizons_by_hand():
    runs = _runs()
    nb = RecordingNotebook()
    runs.record(nb)
    # ofulog_plus is config 0 (offset 0): regret per round 1 and 3 -> 4 and 12, mean 8; its violation
    # (-1, 2, -1, 2) sums to 2 per run, positive in half the rounds
    assert nb.metrics["final_regret.ofulog_plus"] == pytest.approx(8.0)
    assert nb.metrics["final_violation.ofulog_plus.positive_part_of_sum"] == pytest.approx(2.0)
    assert nb.metrics["violating_round_fraction.ofulog_plus"] == pytest.approx(0.5)
    assert nb.metrics["final_regret.glm_ucb"] == pytest.approx(48.0)  # offset 10: 11 and 13 per round
    # the run of horizon 2: per-round parts 1 and 3 per round -> 2 and 6, mean 4
    assert nb.metrics["horizon.cclb.2.violation_sum_of_positive_parts"] == pytest.approx(4.0)
    assert nb.metrics["horizon.cclb.4.violation_sum_of_positive_parts"] == pytest.approx(12.0)
    assert len(nb.metrics) == 6 * 4 + 2 * 2 * 2 and len(nb.curves) == 4 * 4
    assert nb.cumulative["cclb.violation_positive_part_of_sum"] is False
    assert len(runs.summary().splitlines()) == 4


def test_tie_study_record_and_summary_by_hand():
    n_tied = np.array([[1, 3], [2, 1]])  # rounds (0, 1) and (1, 0) are tied
    same = np.array([[True, False], [True, True]])
    split = {
        ("random", m): {"total": np.array([2.0, 4.0]), "tied": np.array([1.0, 1.0]), "untied": np.array([1.0, 3.0])}
        for m in PE.SPLIT_METRICS
    }
    free = {"ofulog_plus": _result(0.0, T=2), "cclb": _result(1.0, T=2), "eps_cclb": _result(2.0, T=2)}
    study = PE.TieStudy(
        n_tied,
        split,
        {"random": same},
        free,
        np.zeros((2, 2), bool),
        {"unconstrained_infeasible_fraction": 0.9},
        "half_scaled",
    )
    nb = RecordingNotebook()
    study.record(nb)
    assert nb.metrics["ties.tied_round_fraction"] == pytest.approx(0.5)
    assert nb.metrics["ties.decisions_tied_mean"] == pytest.approx(2.5)
    assert nb.metrics["ties.random.same_decision_fraction.tied_rounds"] == pytest.approx(0.5)
    assert nb.metrics["ties.random.same_decision_fraction.untied_rounds"] == pytest.approx(1.0)
    assert nb.metrics["ties.random.violation_pos.ofulog_plus_minus_cclb.untied"] == pytest.approx(2.0)
    assert nb.metrics["ties.tie_free.same_decision_fraction"] == pytest.approx(0.75)  # one of 4 actions differs
    assert nb.metrics["ties.tie_free.final_regret.eps_cclb"] == pytest.approx(8.0)  # 3 and 5 per round, 2 rounds
    lines = study.summary().splitlines()
    assert lines[0] == "tied rounds: 0.500 of rounds, 2.50 decisions tied on average"
    assert len(lines) == 1 + 3 + 1 + 3


def test_run_paper_experiments_equals_the_batches_it_replaces():
    gen, T, reps = RoundGenerator(tau=0.2), 60, 2
    runs = PE.run_paper_experiments(gen, T, 5, reps, [30, 60, 90], 0.2, 2 / 0.15, 0.1, [0.05], [0.3], 0.05, "random")
    configs = E.paper_configs(T, 0.2, 2 / 0.15, 0.1, eps_values=[0.05], tau_values=[0.3])
    direct = E.run_configs(gen, configs, T, 5, reps, alpha=0.05, tie_rule="random")
    np.testing.assert_array_equal(runs.results["eps_cclb"]["violation"], direct["eps_cclb"]["violation"])
    glm = E.run_glm_ucb(gen, T, 5, reps, 0.2, alpha=0.05, tie_rule="fairer")
    np.testing.assert_array_equal(runs.other["glm_ucb"]["regret"], glm["regret"])
    assert sorted(runs.short) == [30] and runs.short[30]["cclb"].T == 30
    gen_free = RoundGenerator(tau=0.2, feature_map="half_scaled")
    study = runs.tie_study(gen, gen_free, {"unconstrained_infeasible_fraction": 1.0})
    np.testing.assert_array_equal(study.n_tied, E.tied_rounds(gen, T, 5, reps))
    free = E.run_configs(gen_free, configs[:3], T, 5, reps, alpha=0.05, tie_rule="random")
    np.testing.assert_array_equal(study.free["cclb"]["action"], free["cclb"]["action"])
    np.testing.assert_array_equal(
        study.split["fairer", "penalized_regret"]["total"],
        (runs.other["ofulog_plus"]["penalized_regret"] - runs.other["cclb"]["penalized_regret"]).sum(axis=1),
    )
