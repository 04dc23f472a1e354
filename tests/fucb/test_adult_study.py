"""The bookkeeping of notebook 5 (``fucb.adult_study``): the true discrepancy, Table 2's runs and
what they measure, the paper-scale paragraph and App. E.2's counts, each against values computed
here by hand or by a direct call."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.datasets import StandInWarning
from causalbandits_lib.core.runner import SimulationResult
from causalbandits_lib.fucb import adult_study
from causalbandits_lib.fucb.experiments import adult_setup_from_users, audited_run, make_policy
from causalbandits_lib.fucb.instances.adult_video import synthetic_adult_users
from tests.recording_notebook import RecordingNotebook


@pytest.fixture(scope="module")
def setup():
    users = synthetic_adult_users(600, np.random.default_rng(0))
    edges = [("sex", "age"), ("sex", "income"), ("age", "income")]
    return adult_setup_from_users(users, {"stand_in": True}, np.random.default_rng(1), n_users=300, user_graph=edges)


def audited(regret, delta_hat, radius, true_delta, fallback=None) -> SimulationResult:
    """An audited run by hand: every per-round value given (2 runs x 3 rounds)."""
    metrics = {
        "regret": np.asarray(regret, dtype=float),
        "audit_delta_hat": np.asarray(delta_hat, dtype=float),
        "audit_radius_paper": np.asarray(radius, dtype=float),
        "audit_radius_diff": np.zeros((2, 3)),
        "discrepancy": np.asarray(true_delta, dtype=float),
    }
    if fallback is not None:
        metrics["fallback"] = np.asarray(fallback, dtype=float)
    return SimulationResult(metrics=metrics, runs=np.arange(2), seed=0, T=3)


def hand_study() -> adult_study.Table2Study:
    z = np.zeros((2, 3))
    ducb = audited([[1, 1, 1], [1, 1, 1]], z, z, z)  # final 3 and 3
    lin = audited([[1, 0, 0], [0, 0, 1]], [[0.3, 0.0, 0.0], [0.0, 0.0, 0.0]], z, [[0.3, -0.3, 0.0], [0.0, 0.0, 0.0]])
    fucb = {  # (rule, τ): run with regret and fallback rounds
        ("ours", 0.1): audited([[2, 2, 2], [2, 2, 0]], z, z, z, fallback=[[1, 1, 0], [0, 0, 0]]),
        ("ours", 0.2): audited([[1, 1, 1], [1, 1, 1]], z, z, z, fallback=[[1, 0, 0], [0, 0, 0]]),
        ("other", 0.1): audited([[0, 0, 0], [2, 0, 0]], z, z, z, fallback=z),
        ("other", 0.2): audited([[4, 0, 0], [0, 0, 0]], z, z, z, fallback=z),
    }
    results_by = {
        rule: {"D-UCB": ducb, "Fair-LinUCB": lin, **{("F-UCB", t): fucb[rule, t] for t in (0.1, 0.2)}}
        for rule in ("ours", "other")
    }
    return adult_study.Table2Study(None, {"F-UCB": (None, "paper")}, [0.1, 0.2], ("ours", "other"), results_by, 2)


def test_table2_study_by_hand():
    study = hand_study()
    assert study.fallback == "ours"
    assert study.final() == {"D-UCB": 3.0, "Fair-LinUCB": 1.0, ("F-UCB", 0.1): 5.0, ("F-UCB", 0.2): 3.0}
    np.testing.assert_array_equal(study.final_runs("other")["F-UCB", 0.2], [4.0, 0.0])
    # Fair-LinUCB: run 0 has |Δ| = 0.3 in rounds 1 and 2 (true) and Δ̂ = 0.3 in round 1 (auditor): > τ at both τ
    np.testing.assert_array_equal(study.unfair("true", "Fair-LinUCB"), [[2, 0], [2, 0]])
    np.testing.assert_array_equal(study.unfair("auditor_paper", "Fair-LinUCB"), [[1, 0], [1, 0]])
    np.testing.assert_array_equal(study.unfair("true", "F-UCB", "other"), [[0, 0], [0, 0]])
    assert study.fairlinucb_over_worst_fucb() == pytest.approx(1.0 / 5.0)
    assert study.fairlinucb_over_worst_fucb("other") == pytest.approx(1.0 / 2.0)
    nb = RecordingNotebook()
    study.record(nb, "paper")
    m = nb.metrics
    assert m["adult_video.final_regret.D-UCB"] == 3.0 and m["adult_video.final_regret.Fair-LinUCB"] == 1.0
    assert m["adult_video.final_regret.F-UCB.tau_0.1"] == 5.0
    assert (
        m["adult_video.fallback_rounds.F-UCB.tau_0.1"] == 1.0 and m["adult_video.fallback_rounds.F-UCB.tau_0.2"] == 0.5
    )
    assert m["adult_video.final_regret_fallback_other.F-UCB.tau_0.1"] == 1.0
    assert m["adult_video.unfair_decisions.Fair-LinUCB.tau_0.1"] == 0.5  # the auditor with the printed radius
    assert m["adult_video.unfair_decisions_true.Fair-LinUCB.tau_0.2"] == 1.0
    assert m["adult_video.unfair_decisions_auditor_diff.D-UCB.tau_0.1"] == 0.0
    assert "adult_video.unfair_decisions_auditor_paper.F-UCB.tau_0.1" not in m
    assert len(m) == 2 + 2 * 3 + 3 * 3 * 2
    assert set(nb.curves) == {"adult_video.regret.Fair-LinUCB", "adult_video.regret.D-UCB"}


def test_table2_study_tables_by_hand():
    study = hand_study()
    assert study.baseline_text() == "D-UCB's regret 3.0 ± 0.0, Fair-LinUCB's 1.0 ± 0.0 (mean ± se over 2 runs)"
    regret = study.regret_table("ours").splitlines()
    assert regret[0] == "**fallback = ours: F-UCB's regret after T rounds (mean ± se over 2 runs)**"
    assert regret[2:] == [
        "| τ | paper F-UCB | F-UCB |",
        "|---|---|---|",
        "| 0.1 | 361.4 | 5.0 ± 1.0 |",
        "| 0.2 | 332.1 | 3.0 ± 0.0 |",
    ]
    unfair = study.unfair_table().splitlines()
    assert unfair[2] == "| τ | algorithm | paper | auditor, printed radius | auditor, propagated radius | true Δ |"
    assert unfair[4] == "| 0.1 | F-UCB (fallback = ours) | 0 | 0 ± 0 | 0 ± 0 | 0 ± 0 |"
    assert unfair[6] == "| 0.1 | Fair-LinUCB | 2053 | 0 ± 0 | 0 ± 0 | 1 ± 1 |"
    assert len(unfair) == 4 + 2 * 3


def test_run_table2_makes_the_runs_one_would_make_by_hand(setup):
    study = adult_study.run_table2(setup, "auto", [0.2], "unconstrained", 30, 5, 2, 1.0, 0.5)
    assert study.primary is setup.estimators["bounds"] and study.rules == ("unconstrained", "min_ucb_delta")
    assert list(study.variants) == ["F-UCB", "F-UCB-diff", "F-UCB-eq9", "F-UCB-eq9-diff"]
    est = setup.estimators["identified"]
    policy = make_policy("F-UCB", setup.decomposition, est, 0.2, fair_radius="diff", fallback="min_ucb_delta")
    direct = audited_run(setup.env, policy, setup.estimators["bounds"], 30, 5, 2)
    got = study.results_by["min_ucb_delta"]["F-UCB-eq9-diff", 0.2]
    np.testing.assert_array_equal(got["regret"], direct["regret"])
    np.testing.assert_array_equal(got["audit_delta_hat"], direct["audit_delta_hat"])
    ducb = audited_run(setup.env, make_policy("D-UCB", setup.decomposition), setup.estimators["bounds"], 30, 5, 2)
    np.testing.assert_array_equal(study.final_runs()["D-UCB"], ducb.final())


def test_true_discrepancy_against_the_environment(setup):
    disc = adult_study.true_discrepancy(setup)
    env = setup.env
    delta = env.discrepancy[:, 0]
    online = np.abs(delta[env.contexts.user_contexts])
    assert disc.share_unfair([0.0, 0.1]) == {0.0: np.mean(online > 0.0), 0.1: np.mean(online > 0.1)}
    assert disc.max_abs() == pytest.approx(np.abs(env.discrepancy).max(), abs=1e-12)  # the same for every video
    assert disc.spread_across_arms() == pytest.approx(0.0, abs=1e-12)  # additive reward: Δ depends on the user only
    assert disc.outside() == 0  # Theorem 2's bounds contain the truth
    assert 0 < disc.width_over_trivial() <= 1
    rows = disc.table().splitlines()
    assert len(rows) == 2 + int((env.context_probs > 0).sum())
    nb = RecordingNotebook()
    disc.record(nb, [0.1])
    assert nb.metrics["adult_video.share_users_truly_unfair"] == {"tau_0.1": np.mean(online > 0.1)}
    assert set(nb.metrics) == {
        "adult_video.theorem2_mean_width_over_trivial",
        "adult_video.max_abs_discrepancy",
        "adult_video.share_users_truly_unfair",
        "adult_video.delta_spread_across_arms",
    }


def test_paper_scale_summary_by_hand():
    metrics = {
        "adult_video.final_regret.D-UCB": 400.04,
        "adult_video.final_regret.Fair-LinUCB": 100.0,
        "adult_video.fallback_rounds.F-UCB.tau_0.1": 4999.6,
        "adult_video.fallback_rounds.F-UCB.tau_0.5": 1.2,
        "adult_video.final_regret.F-UCB.tau_0.1": 1234.56,
        "adult_video.final_regret.F-UCB.tau_0.5": 7.0,
        "adult_video.final_regret_fallback_unconstrained.F-UCB.tau_0.1": 9.0,
        "adult_video.final_regret_fallback_unconstrained.F-UCB.tau_0.5": 10.0,
    }
    text = adult_study.paper_scale_summary(metrics, {"taus": [0.1, 0.5], "fallback": "min_ucb_delta"}, ["F-UCB"])
    assert text == (
        "In the paper-scale record (metrics `adult_video.*`, τ = 0.1, 0.5; D-UCB 400.0, Fair-LinUCB 100.0), rounds "
        "without a certified video and final regret under our fallback (`min_ucb_delta`) and under `unconstrained`:\n"
        "- F-UCB: 5,000, 1 empty rounds; regret 1,234.6, 7.0; unconstrained 9.0, 10.0."
    )


def test_app_e2_counts_only_on_the_real_data(monkeypatch):
    assert adult_study.adult_user_counts({"stand_in": True}, 37.0) is None
    assert adult_study.adult_kinds({"stand_in": True}) is None
    users = np.array([[0, 1, 0, 0], [1, 0, 1, 1], [0, 1, 1, 0]])  # sex is the second column
    monkeypatch.setattr(adult_study, "load_adult_users", lambda age_threshold: (users, {}))
    assert adult_study.adult_user_counts({"stand_in": False}, 37.0) == {"rows": 3, "males": 2, "females": 1}


def test_youtube_stand_in_is_declared_loudly():
    with pytest.warns(StandInWarning):
        prov = adult_study.youtube_stand_in()
    assert prov["stand_in"] is True and prov["name"] == "YouTube video statistics"
