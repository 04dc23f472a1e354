"""The result objects of the Email Campaign experiment (notebook fucb/04): per-run numbers, metrics,
tables and sentences checked on tiny hand-made runs whose values are worked out by hand, and the
runner checked against the same runs made one by one."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits_lib.core.runner import SimulationResult
from causalbandits_lib.fucb.email_study import (
    TABLE1,
    EmailConfig,
    EmailStudy,
    InteractionStudy,
    PaperScale,
    coverage_bands,
    mean_se,
    run_email_study,
    run_interaction_variant,
)
from causalbandits_lib.fucb.experiments import FUCB_VARIANTS, audited_run, email_setup, make_policy

RULES = ("min_ucb_delta", "unconstrained")


def fake(regret, fallback=None, score=None, discrepancy=None, radius_diff=None):
    """A result with per-round values: ``score`` is Δ̂ + printed radius (all in Δ̂, radius 0)."""
    regret = np.asarray(regret, dtype=float)
    zeros = np.zeros_like(regret)
    metrics = {
        "regret": regret,
        "audit_delta_hat": zeros if score is None else np.asarray(score, dtype=float),
        "audit_radius_paper": zeros,
        "audit_radius_diff": zeros if radius_diff is None else np.asarray(radius_diff, dtype=float),
        "discrepancy": zeros if discrepancy is None else np.asarray(discrepancy, dtype=float),
    }
    if fallback is not None:
        metrics["fallback"] = np.asarray(fallback, dtype=float)
    return SimulationResult(metrics, np.arange(regret.shape[0]), 0, regret.shape[1])


@pytest.fixture(scope="module")
def setup():
    return email_setup()


@pytest.fixture(scope="module")
def study(setup):
    """T = 4, 2 runs, τ in (0.1, 0.35): hand-made runs.

    UCB pays 1 per round in run 0 and 2 in run 1 and scores Δ̂ = 0.2 in every round (unfair at
    τ = 0.1, not at 0.35); C-UCB and D-UCB pay 0.5 per round and score 0. Every F-UCB variant pays
    0.25 per round, falls back in rounds 1-2 of run 0 and round 1 of run 1, and scores 1 exactly
    in those rounds, except under ``unconstrained`` at τ = 0.1, where F-UCB's run 1 also scores 1
    in round 4 (one flag more than its fallbacks)."""
    ones = np.ones((2, 4))
    fb = [[1, 1, 0, 0], [1, 0, 0, 0]]
    base = {
        "UCB": fake([[1] * 4, [2] * 4], score=0.2 * ones),
        "C-UCB": fake(0.5 * ones),
        "D-UCB": fake(0.5 * ones),
    }
    results_by = {}
    for rule in RULES:
        results_by[rule] = dict(base)
        for v in FUCB_VARIANTS:
            for tau in (0.1, 0.35):
                score = np.array(fb, dtype=float)
                if rule == "unconstrained" and tau == 0.1 and v == "F-UCB":
                    score[1, 3] = 1.0
                results_by[rule][v, tau] = fake(0.25 * ones, fallback=fb, score=score)
    config = EmailConfig(T=4, n_runs=2, taus=(0.1, 0.35), fig_tau=0.35, early_round=2)
    true_runs = {0.1: base["D-UCB"], 0.35: fake(0.5 * ones + np.array([[0, 0, 0, 0], [0, 0, 0, 0.5]]))}
    return EmailStudy(config, setup, RULES, results_by, true_runs)


def test_mean_se_and_coverage_bands():
    assert mean_se([1.0, 3.0]) == pytest.approx({"mean": 2.0, "se": 1.0})  # sd sqrt(2), over sqrt(2)
    assert coverage_bands(50) == [(1, 10), (10, 51)]
    assert coverage_bands(5000) == [(1, 10), (10, 100), (100, 1000), (1000, 5001)]


def test_config_from_params_and_its_checks():
    params = {"profile": "smoke", "seed": 3, "T": 10, "n_runs": 2, "taus": [0.1, 0.3], "fig_tau": 0.3, "early_round": 5}
    c = EmailConfig.from_params(params)
    assert c.taus == (0.1, 0.3) and c.T == 10 and c.fallback == "min_ucb_delta"
    assert c.common == {"delta_power": 2.0, "unseen_mean": 0.0, "tie_break": "first"}
    with pytest.raises(ValueError, match="fig_tau"):
        EmailConfig(T=10, n_runs=2, taus=(0.1,), fig_tau=0.3, early_round=5)
    with pytest.raises(ValueError, match="fallback"):
        EmailConfig(T=10, n_runs=2, taus=(0.3,), fig_tau=0.3, early_round=5, fallback="nonsense")
    with pytest.raises(ValueError, match="auditor_radius"):
        EmailConfig(T=10, n_runs=2, taus=(0.3,), fig_tau=0.3, early_round=5, auditor_radius="nonsense")


def test_paper_scale_prefers_the_record_then_this_run_then_the_default():
    record = {"metrics": {"a": 1.0}, "parameters": {"T": 5000}}
    ps = PaperScale(record, {"a": 2.0, "b": 3.0}, {"T": 300})
    assert (ps("a"), ps("b"), ps("c", 4.0), ps.params["T"]) == (1.0, 3.0, 4.0, 5000)
    own = PaperScale(None, {"a": 2.0}, {"T": 300})
    assert (own("a"), own("c"), own.params["T"]) == (2.0, None, 300)


def test_per_run_numbers(study):
    assert study.fallback == "min_ucb_delta" and study.primary == "auditor_paper" and study.t_early == 2
    np.testing.assert_array_equal(study.final()["UCB"], [4, 8])
    np.testing.assert_array_equal(study.early()["UCB"], [2, 4])
    np.testing.assert_array_equal(study.figure2b_final()["F-UCB"], [1, 1])  # at fig_tau = 0.35
    assert list(study.fucb_final_by_tau()) == ["τ = 0.1", "τ = 0.35"]
    np.testing.assert_array_equal(study.empty_rounds()["F-UCB", 0.1], [2, 1])
    # UCB's Δ̂ = 0.2 in every round: 4 unfair decisions per run at τ = 0.1, none at 0.35
    np.testing.assert_array_equal(study.unfair("UCB"), [[4, 4], [0, 0]])
    np.testing.assert_array_equal(study.unfair("UCB", "true"), [[0, 0], [0, 0]])
    np.testing.assert_array_equal(study.unfair("F-UCB", rule="unconstrained"), [[2, 2], [2, 1]])
    assert list(study.unfair_by_tau(["UCB"])) == ["UCB τ = 0.1", "UCB τ = 0.35"]
    # F-UCB's flags equal its fallbacks, except the one extra flag under `unconstrained`
    assert study.audit_minus_fallback() == 1.0
    assert study.true_vs_ducb == {0.1: 0.0, 0.35: 0.5}
    assert study.band_names == ["1-4"] and study.late_bands() == []


def test_metrics_and_record(study):
    m = study.metrics()
    assert m["email.final_regret.UCB"] == 6.0
    assert m["email.final_regret.F-UCB"] == 1.0
    assert m["email.regret_at_early_round"]["UCB"] == 3.0
    assert m["email.fallback_rounds.F-UCB.tau_0.1"] == 1.5
    assert m["email.fucb_regret_fallback_unconstrained.F-UCB.tau_0.1"] == 1.0
    assert "email.fucb_regret_fallback_min_ucb_delta.F-UCB.tau_0.1" not in m  # the chosen rule is email.fucb_regret
    assert m["email.unfair_decisions.UCB.tau_0.1"] == 4.0 and m["email.unfair_decisions.UCB.tau_0.35"] == 0.0
    assert m["email.unfair_decisions_true.UCB.tau_0.1"] == 0.0
    assert "email.unfair_decisions_auditor_paper.UCB.tau_0.1" not in m  # the recorded definition has no suffix
    assert m["email.fucb_audit_minus_fallback_rounds"] == 1.0
    # every round of D-UCB: Δ̂ = |Δ| = 0 within radius 0, covered
    assert m["email.radius_coverage.paper.D-UCB"] == {"1-4": 1.0}
    assert m["email.true_delta_fucb_minus_ducb"] == {"tau_0.1": 0.0, "tau_0.35": 0.5}
    assert m["email.coverage_smallest_radius_at_T"] == study.smallest_radius
    n_unfair = 3 * 6 * 2  # definitions x algorithms x τ
    n_fucb = 3 * 2 * 3  # variants x τ x (regret, fallback rounds, regret under the other rule)
    assert len(m) == 6 + 1 + n_fucb + 1 + n_unfair + 2 * 3 + 2 + 4

    calls = []
    nb = SimpleNamespace(
        metric_items=lambda items: calls.append(("metrics", dict(items))),
        curve=lambda name, values: calls.append((name, values)),
    )
    study.record(nb)
    assert calls[0] == ("metrics", m)
    assert [c[0] for c in calls[1:]] == [f"email.regret.{n}" for n in ("UCB", "C-UCB", "D-UCB", *FUCB_VARIANTS)]
    assert calls[1][1] is study.results["UCB"]["regret"]


def test_tables(study):
    # UCB: at t = 2 runs [2, 4] (mean 3, se 1), at T [4, 8] (mean 6, se 2)
    assert "| UCB | 3.0 ± 1.0 / 6.0 ± 2.0 | 3.0 ± 1.0 / 6.0 ± 2.0 |" in study.figure2b_table()
    table = study.regret_table("min_ucb_delta")
    assert f"| 0.1 | {TABLE1[0.1][0]} | 1.0 ± 0.0 |" in table and "| 0.35 | – |" in table
    assert "| 2 ± 0 | 2 ± 0 | 2 ± 0 |" in study.regret_table("unconstrained")  # empty rounds [2, 1] -> 1.5 -> "2"
    unfair = study.unfair_table()
    # UCB's score Δ̂ = 0.2 with both radii 0: unfair at τ = 0.1 for both auditors, never under the true Δ = 0
    assert f"| 0.1 | UCB | {TABLE1[0.1][1]} | 4 ± 0 | 4 ± 0 | 0 ± 0 |" in unfair
    assert "| 0.1 | F-UCB (fallback = unconstrained) | 0 | 2 ± 0 |" in unfair
    assert "| 0.35 | UCB | – | 0 ± 0 |" in unfair
    assert "| D-UCB | paper | 1.000 ± 0.000 |" in study.coverage_table()
    captions = [c for c, _, _ in study.key_tables()]
    assert captions == [
        None,
        "F-UCB regret by τ, fallback = min_ucb_delta:",
        "F-UCB regret by τ, fallback = unconstrained:",
        None,
    ]


def test_sentences_read_the_paper_scale_numbers(study):
    params = {"T": 4, "taus": [0.1, 0.35], "fig_tau": 0.35, "early_round": 2, "auditor_radius": "paper"}
    paper = PaperScale(None, study.metrics(), params)
    assert "UCB, C-UCB and D-UCB end at 6.0, 2.0 and 2.0" in study.figure2b_text(paper)
    text = study.unfair_text(paper)
    # UCB is flagged in all 3 audited decisions at τ = 0.1 but C-UCB and D-UCB are not
    assert "each baseline at τ = none of the thresholds, and 0 to 4 at τ = 0.1, 0.35" in text
    assert "F-UCB as printed has no certified arm in 2, 2 of 3 rounds" in study.fallback_text(paper)
    cov = {
        "paper": ({"1-9": 0.5, "10-99": 0.99}, {"1-9": 0.7, "10-99": 0.995}),
        "diff": ({"1-9": 0.6, "10-99": 1.0}, {"1-9": 0.8, "10-99": 0.98}),
    }
    metrics = {
        f"email.radius_coverage.{r}.{w}": c for r, pair in cov.items() for w, c in zip(("D-UCB", "F-UCB.tau_0.1"), pair)
    }
    metrics |= {
        "email.coverage_smallest_radius_at_T": {"paper": 0.3, "diff": 0.01},
        "email.coverage_largest_possible_error": 0.1,
    }
    text = study.coverage_text(PaperScale({"metrics": metrics, "parameters": {"taus": [0.1], "T": 100}}, {}, {}))
    assert (
        "from t = 10 on, over every history and band, is 0.990 with the printed radius and 0.980 with the propagated"
        in text
    )
    assert "in rounds 1 to 9 it is 0.500 and 0.600" in text
    assert "gives it, 0.300, exceeds the largest error the estimate can make, 0.100" in text


def test_interaction_study_by_hand():
    env = SimpleNamespace(
        discrepancy=np.array([[0.0, 0.2, 0.4]] * 2), means=np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    )
    taus = (0.1, 0.15, 0.3, 0.5)
    base = fake([[1, 1], [0, 1]], discrepancy=[[0.4, 0.4], [0.2, 0.0]])
    runs = {(n, t): fake([[i, 0], [0, 0]]) for n in InteractionStudy.NAMES for i, t in enumerate(taus)}
    v = InteractionStudy(taus, env, base, runs)
    assert v.allowed == {0.1: (0,), 0.15: (0,), 0.3: (0, 1), 0.5: (0, 1, 2)}
    # the best arm of the first context, arm 2, is admitted only at τ = 0.5
    assert v.best_excluded == {0.1: True, 0.15: True, 0.3: True, 0.5: False}
    assert v.distinct_taus() == [0.1, 0.3, 0.5]
    assert (v.delta_spread, v.max_abs_delta) == (0.4, 0.4)
    np.testing.assert_array_equal(v.regret["D-UCB"], [[2, 1]] * 4)
    np.testing.assert_array_equal(v.regret["F-UCB"][:, 0], [0, 1, 2, 3])
    np.testing.assert_array_equal(v.unfair["D-UCB"], [[2, 1], [2, 1], [2, 0], [0, 0]])
    assert list(v.regret_by_tau("F-UCB", [0.3, 0.5])) == ["τ = 0.3", "τ = 0.5"]
    m = v.metrics()
    assert m["interaction.final_regret.D-UCB"] == {"tau_0.1": 1.5, "tau_0.15": 1.5, "tau_0.3": 1.5, "tau_0.5": 1.5}
    assert m["interaction.unfair_true.D-UCB"]["tau_0.3"] == 1.0
    assert m["interaction.final_regret.F-UCB_(true_Δ)"]["tau_0.5"] == 1.5
    assert len(m) == 2 * 4
    assert "arms with \\|Δ\\| ≤ τ" in v.table(2)


def test_run_email_study_is_the_runs_made_one_by_one(setup):
    config = EmailConfig(T=40, n_runs=2, taus=(0.3, 0.5), fig_tau=0.3, early_round=20)
    sections = []

    def timed(section):
        sections.append(section)
        return contextlib.nullcontext()

    study = run_email_study(config, 5, timed=timed)
    assert sections == ["simulation", "true-delta runs"]
    assert study.rules == RULES
    direct = audited_run(setup.env, make_policy("C-UCB", setup.decompositions["C-UCB"]), setup.estimator, 40, 5, 2)
    np.testing.assert_array_equal(study.final()["C-UCB"], direct.final())
    policy = make_policy("F-UCB-diff", setup.decompositions["D-UCB"], setup.estimator, 0.5, fallback="unconstrained")
    direct = audited_run(setup.env, policy, setup.estimator, 40, 5, 2)
    np.testing.assert_array_equal(study.final("unconstrained")["F-UCB-diff", 0.5], direct.final())
    # on the Email model every arm has the same Δ, far below 0.3: the true constraint admits every arm
    assert study.true_vs_ducb == {0.3: 0.0, 0.5: 0.0}

    variant = run_interaction_variant(config, 5)
    assert set(variant.runs) == {(n, t) for n in InteractionStudy.NAMES for t in (0.3, 0.5)}
    assert variant.regret["F-UCB"].shape == (2, 2)
