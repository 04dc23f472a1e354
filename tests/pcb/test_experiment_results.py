"""The result objects of notebook 4 (``pcb.experiments``): what they record and show, on hand-made
inputs with hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core import checks
from causalbandits_lib.core.runner import SimulationResult, simulate
from causalbandits_lib.pcb import algorithms as A
from causalbandits_lib.pcb import estimators as E
from causalbandits_lib.pcb import experiments as X
from causalbandits_lib.pcb import model as M
from causalbandits_lib.pcb import offline as O
from tests.recording_notebook import RecordingNotebook


def result(regret, **more):
    regret = np.asarray(regret, dtype=float)
    return SimulationResult(metrics={"regret": regret, **more}, runs=np.arange(len(regret)), seed=0, T=regret.shape[1])


def two_algorithms():
    return X.RegretComparison(
        {
            "A": result([[0, 1, 1], [1, 1, 1]], dominated=np.array([[0, 1, 0], [0, 0, 1]])),
            "B": result([[0.5, 0, 1], [0, 0, 0.5]]),
        }
    )


def test_mean_se_by_hand():
    assert X.mean_se([1.0, 3.0]) == pytest.approx({"mean": 2.0, "se": 1.0})


def test_regret_comparison_finals_table_and_counts():
    cmp = two_algorithms()
    np.testing.assert_array_equal(cmp.final["A"], [2, 3])
    np.testing.assert_array_equal(cmp.final["B"], [1.5, 0.5])
    table = cmp.table()
    # final regrets 2, 3: mean 2.5, sd 1/√2, se 1/2; 1.5, 0.5: mean 1, se 1/2
    assert table.loc["A"].tolist() == pytest.approx([2.5, 0.5, 2.5])
    assert table.loc["B"].tolist() == pytest.approx([1.0, 0.5, 1.0])
    assert cmp.dominated_pulls("A") == 2
    # A's regret is all in rounds of regret 1; B spends 2 rounds x 0.5 of its total 2.0 at gap 0.5
    assert cmp.share_of_regret(1.0) == pytest.approx({"A": 1.0, "B": 0.5})
    assert cmp.share_of_regret(0.5) == pytest.approx({"A": 0.0, "B": 0.5})


def test_regret_comparison_records_metrics_and_curves():
    nb = RecordingNotebook()
    two_algorithms().record(nb)
    assert nb.metrics == pytest.approx(
        {"final_regret.A": 2.5, "final_regret_se.A": 0.5, "final_regret.B": 1.0, "final_regret_se.B": 0.5}
    )
    assert list(nb.curves) == ["regret.A", "regret.B"]
    np.testing.assert_array_equal(nb.curves["regret.B"], [[0.5, 0, 1], [0, 0, 0.5]])
    nb = RecordingNotebook()
    two_algorithms().record(nb, suffix="_w", se=False)
    assert nb.metrics == pytest.approx({"final_regret_w.A": 2.5, "final_regret_w.B": 1.0})
    assert list(nb.curves) == ["regret_w.A", "regret_w.B"]


def finals(shift):
    return {
        "LinUCB": np.array([2.0, 2.0, 2.0]),
        "LinUCB-PCB": np.array([1.0, 1.0, 1.0]) + shift,
        "LinUCB_Biased": np.array([3.0, 3.0, 3.0]),
        "LinUCB_CP": np.array([4.0, 4.0, 4.0]),
    }


def below_linucb(f):
    return checks.check_at_most(float(f["LinUCB-PCB"].mean()), float(f["LinUCB"].mean()), "PCB's mean", "LinUCB's mean")


def test_setting_comparison_records_judges_and_tabulates():
    # ours (1, 1): PCB below LinUCB; α = 2: above; λ = 5: below again
    study = X.SettingComparison({(1.0, 1.0): finals(0.0), (2.0, 1.0): finals(5.0), (1.0, 5.0): finals(0.5)}, 1, 1)
    nb = RecordingNotebook()
    study.record(nb)
    assert len(nb.metrics) == 12
    assert nb.metrics["alpha_lambda.alpha=2,lam=1.final_regret.LinUCB-PCB"] == pytest.approx(6.0)
    assert nb.metrics["alpha_lambda.alpha=1,lam=5.final_regret.LinUCB_CP"] == pytest.approx(4.0)
    v = study.judge(below_linucb)
    assert v.verdict == "reproduced"
    assert v.details["sensitive_to"] == {"alpha": {"1.0": "reproduced", "2.0": "not reproduced"}}
    assert v.details["robust_to"] == {"lam": ["1.0", "5.0"]}
    table = study.table({"pcb.below (a note)": below_linucb})
    assert list(table.columns) == ["α=1, λ=1 (this run)", "α=2, λ=1", "α=1, λ=5"]
    assert list(table.index) == ["LinUCB", "LinUCB-PCB", "LinUCB_Biased", "LinUCB_CP", "pcb.below"]
    assert table.loc["pcb.below"].tolist() == ["reproduced", "not reproduced", "reproduced"]
    assert table.loc["LinUCB-PCB", "α=1, λ=5"] == pytest.approx(1.5)


def test_warm_start_picks_best_counts_contexts():
    means = np.array([[0.1, 0.9], [0.8, 0.2]])  # (arm, context): best arm 1 in context 0, arm 0 in context 1
    world = {"biased": np.array([[0.0, 1.0], [1.0, 0.0]]), "cp": np.array([[1.0, 0.0], [1.0, 0.0]])}  # (context, arm)
    assert X.warm_start_picks_best(world, means) == {
        "table1_world.contexts_where_biased_picks_best_arm": 2,
        "table1_world.contexts_where_cp_picks_best_arm": 1,
    }


def test_theorem5_norms_on_the_chapter_features(truth):
    f = A.arm_context_features()
    theta = np.array([3.0, 0.0, 4.0, 0.0, 0.0])
    upper = np.ones((2, 4, 4))  # bounds that eliminate nothing
    T, lam, delta, d = 50, 2.0, 0.1, 5
    thm = X.theorem5_norms(f, truth, upper, theta, T, lam, delta)
    # the largest feature is [1, 1, 1, 1, 1] (and [1, 1, 1, 1] without the intercept)
    assert thm.M == pytest.approx(5.0)
    assert thm.L_plain == pytest.approx(np.sqrt(5)) and thm.L_pcb.tolist() == pytest.approx([np.sqrt(5)] * 2)
    assert thm.L_plain_no_intercept == pytest.approx(2.0) and thm.L_pcb_max_no_intercept == pytest.approx(2.0)
    log_term = d * np.log(1 + T * 5 / (d * lam))
    expected = np.sqrt(2 * T * log_term) * 2 * (np.sqrt(lam) * 5.0 + np.sqrt(2 * np.log(1 / delta) + log_term))
    assert thm.bound.shape == (T,) and thm.bound[-1] == pytest.approx(expected)
    nb = RecordingNotebook()
    thm.record(nb)
    assert nb.metrics == pytest.approx(
        {
            "thm5.L_linucb": np.sqrt(5),
            "thm5.L_pcb_max": np.sqrt(5),
            "thm5.L_linucb_no_intercept": 2.0,
            "thm5.L_pcb_max_no_intercept": 2.0,
            "thm5.bound_at_T": expected,
        }
    )


def test_theorem8_bounds_by_hand():
    means = np.array([0.5, 0.25])  # gap 0.25
    upper = np.array([[1.0, 1.0], [1.0, 0.375]])  # run 1 eliminates arm 1
    regret = np.array([[0.25, 0.0, 0.25], [0.25, 0.25, 0.0]])
    thm = X.theorem8_bounds(means, upper, regret, 3)
    plain = 3 * 0.25 + 16 / 0.25 * np.log(3)
    assert thm.plain[-1] == pytest.approx(plain)
    assert thm.pcb[-1] == pytest.approx((plain + 3 * 0.25) / 2)
    np.testing.assert_array_equal(thm.eliminated, [[False, False], [False, True]])
    np.testing.assert_array_equal(thm.pulls_eliminated, [0, 2])
    nb = RecordingNotebook()
    thm.record(nb)
    assert nb.metrics == pytest.approx(
        {
            "thm8.bound_at_T.UCB": plain,
            "thm8.bound_at_T.UCB-PCB": (plain + 0.75) / 2,
            "ucb_pcb.eliminated_arm_pulls_mean": 1.0,
        }
    )


def test_lemma6_and_margin_and_bias_metrics_and_tables():
    pulls = {"upper": np.array([0, 3, 1]), "both": np.array([0, 0, 0])}
    assert X.lemma6_metrics(pulls) == {
        "lemma6.eliminated_pair_pulls.clip=upper": 4,
        "lemma6.runs_with_such_pulls.clip=upper": 2,
        "lemma6.eliminated_pair_pulls.clip=both": 0,
        "lemma6.runs_with_such_pulls.clip=both": 0,
    }
    final = {0.1: np.array([1.0, 3.0]), 1.0: np.array([5.0, 5.0])}
    n_minus = {0.1: 8, 1.0: 0}
    assert X.margin_metrics(final, n_minus) == pytest.approx(
        {
            "margin.final_regret.w=0.1": 2.0,
            "margin.n_minus.w=0.1": 8,
            "margin.final_regret.w=1": 5.0,
            "margin.n_minus.w=1": 0,
        }
    )
    table = X.margin_table(final, n_minus, np.array([4.0, 4.0]))
    assert table.loc[0.1].tolist() == pytest.approx([8, 2.0, 2.0]) and table.loc[1.0].tolist() == pytest.approx(
        [0, 5.0, -1.0]
    )
    bias = {
        "lvl": {
            "LinUCB": np.array([3.0, 5.0]),
            "LinUCB-PCB": np.array([1.0, 1.0]),
            "n_eliminated": np.array([2, 4]),
            "covered": np.array([True, False]),
        }
    }
    assert X.bias_metrics(bias) == pytest.approx(
        {
            "bias_levels.lvl.final_regret.LinUCB": 4.0,
            "bias_levels.lvl.final_regret.LinUCB-PCB": 1.0,
            "bias_levels.lvl.n_eliminated_mean": 3.0,
        }
    )
    # paired differences 2 and 4: mean 3, sd √2, se 1
    row = X.bias_table(bias).loc["lvl"]
    assert row.tolist() == pytest.approx([4.0, 1.0, 3.0, 1.0, 3.0, 0.5])
    assert list(row.index) == ["LinUCB", "LinUCB-PCB", "paired diff", "se", "N- per run", "all 16 covered"]


def test_learn_priors_counts_eliminated_pairs_and_covered_runs(table2, truth):
    learned = X.learn_priors(table2, truth, 30_000, 3, 0, 0.95, True)
    priors = E.offline_priors(O.offline_count_tables(table2, 30_000, 3, 0).selected, 0.95, True)
    np.testing.assert_array_equal(learned.priors["upper"], priors["upper"])
    best = truth.max(axis=0)  # per context
    for r in range(3):
        up = priors["upper"][r]  # (context, arm)
        n = sum(up[c, a] < best[c] for c in range(4) for a in range(4))
        assert learned.eliminated[r] == n
    covered = [
        all(lo[c, a] <= truth[a, c] <= up[c, a] for c in range(4) for a in range(4))
        for lo, up in zip(priors["lower"], priors["upper"])
    ]
    assert learned.all_covered == pytest.approx(np.mean(covered))
    nb = RecordingNotebook()
    learned.record(nb)
    assert nb.metrics == pytest.approx(
        {"priors.n_eliminated_mean": learned.eliminated.mean(), "priors.all_cells_covered": np.mean(covered)}
    )


def test_lemma6_pulls_equals_the_count_by_hand(table2, truth):
    """Lemma 6's count equals simulating Algorithm 4's clipping and reading the pulls by hand."""
    f, pc, T, n = A.arm_context_features(), M.context_probabilities(table2), 200, 2
    priors = E.offline_priors(O.offline_count_tables(table2, 30_000, n, 0).selected, 0.95)
    pcb = X.figure4(pc, truth, f, priors, T, 1, n, 1.0, 1.0, "both")["LinUCB-PCB"]["regret"]
    got = X.lemma6_pulls(pc, truth, f, priors, T, 1, n, 1.0, 1.0, "both", pcb)
    assert list(got) == ["upper", "both"]
    upper = simulate(
        X.contextual_environment(pc, truth),
        A.LinUCB(f, A.LinUCBConfig(1.0, 1.0, clip="upper"), lower=priors["lower"], upper=priors["upper"]),
        T,
        1,
        n_runs=n,
    )["regret"]
    seen = X.contexts_seen(pc, truth, T, 1, n)
    gaps = truth.max(axis=0) - truth  # (arm, context)
    for key, regret in (("upper", upper), ("both", pcb)):
        for r in range(n):
            count = 0
            for t in range(T):
                c = seen[r, t]
                arm = int(np.flatnonzero(np.isclose(gaps[:, c], regret[r, t], atol=1e-12, rtol=0))[0])
                count += priors["upper"][r, c, arm] < truth[:, c].max()
            assert got[key][r] == count, (key, r)
