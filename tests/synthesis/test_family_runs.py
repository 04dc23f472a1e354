"""The learners on the family (H8-H10): each run's scores against a hand-computed case, the judges
on hand-made runs whose verdicts follow from the registered rules, and one small run of every
learner on a family model."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from causalbandits_lib.core import checks
from causalbandits_lib.synthesis import family as F
from causalbandits_lib.synthesis import family_runs as R
from causalbandits_lib.synthesis import notions as N
from causalbandits_lib.synthesis import study as S


class _Result:
    """The parts of a simulation result :func:`run_scores` reads."""

    def __init__(self, **metrics):
        self.metrics = metrics

    def __getitem__(self, name):
        return self.metrics[name]

    def final(self, name):
        return self.metrics[name].sum(axis=1)


def _hand_instance():
    means = np.array([[0.2, 0.6, 0.5, 0.1], [0.4, 0.3, 0.5, 0.2], [0.7, 0.2, 0.1, 0.3], [0.5, 0.5, 0.2, 0.4]])
    disc = np.array([[0.1, 0.3, 0.0, 0.2], [0.2, 0.1, 0.3, 0.0], [0.1, 0.3, 0.0, 0.2], [0.2, 0.1, 0.3, 0.0]])
    from types import SimpleNamespace

    return SimpleNamespace(means=means, discrepancy=disc, context_probs=np.full(4, 0.25))


def test_run_scores_on_a_hand_case():
    inst = _hand_instance()
    # one run, four rounds: contexts 0 (A=0), 2 (A=1), 1 (A=0), 3 (A=1); items 1, 0, 2, 3 (one-hot)
    ctx = np.array([[0, 2, 1, 3]])
    items = np.array([[1, 0, 2, 3]])
    exposure = np.eye(4)[items]
    delta = inst.discrepancy[ctx, items]
    regret = np.array([[0.0, 0.0, 0.0, 0.1]])
    fallback = np.array([[1.0, 0.0, 0.0, 1.0]])
    own = delta.copy()
    own[0, 1] -= 0.05  # the bound missed in one round
    res = _Result(regret=regret, delta=delta, exposure=exposure, O=ctx, fallback=fallback, own_ucb_delta=own)
    pi_fair = np.array([0.25, 0.25, 0.25, 0.25])
    s = R.run_scores(res, inst, 0.15, pi_fair)
    assert s["regret"][0] == pytest.approx(0.1)
    # Δ of the items played: 0.3, 0.1, 0.3, 0.0 -> two above 0.15
    assert s["u"][0] == pytest.approx(0.5)
    assert s["D"][0] == pytest.approx((0.3 + 0.1 + 0.3 + 0.0) / 4)
    # FR/T: each round |one-hot - 1/4| sums to 1.5
    assert s["fr"][0] == pytest.approx(1.5)
    # group A=0 saw items 1 and 2, group A=1 items 0 and 3: p_0 = (0, .5, .5, 0), p_1 = (.5, 0, 0, .5) -> DP = 1
    assert s["dp"][0] == pytest.approx(1.0)
    # TPR_k(a) = sum mu_k pi_k / sum mu_k over the group's rounds
    tpr0 = np.array([0.0, 0.6 / (0.6 + 0.3), 0.5 / (0.5 + 0.5), 0.0])
    tpr1 = np.array([0.7 / (0.7 + 0.5), 0.0, 0.0, 0.4 / (0.3 + 0.4)])
    assert s["eo"][0] == pytest.approx(np.abs(tpr1 - tpr0).mean())
    assert s["fallback"][0] == pytest.approx(0.5)
    assert s["missed"][0] == 1.0


def test_allowed_misses_is_the_union_bound():
    assert R.allowed_misses(2) == pytest.approx(2.0)
    assert R.allowed_misses(4) == pytest.approx(4 * (1 / 2 + 1 / 3 + 1 / 4))


def _runs(
    name="m",
    *,
    cert_u=None,
    cert_pcb_u=None,
    fallback=(0.1, 0.1, 0.1),
    lc_cert=0.0,
    lc_cclb=10.0,
    dp_pi0=0.3,
    gaps=None,
):
    """Hand-made runs of one model (20 runs, CCLB on 10): scores chosen to decide each judge."""
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.001, 20)
    T = 100
    prices = {n: np.array([0.01, 0.02, 0.03]) for n in N.NOTIONS}
    runs = R.ModelRuns(name, T, np.array([0.1, 0.2, 0.3]), np.array([0.1, 0.2, 0.3]), prices, 0.5, dp_pi0)
    gaps = gaps or {"D-UCB": 0.4, "F-UCB-cert": 0.1, "CCLB": 0.1}
    base = {"u": 0.3 + noise, "fr": 0.5 + noise, "D": 0.2 + noise, "eo": 0.2 + noise}
    runs.scores[("D-UCB", None)] = {
        **base,
        "u": 0.2 + noise,
        "dp": gaps["D-UCB"] + noise,
        "eo": gaps["D-UCB"] / 2 + noise,
        "regret": 50 + noise,
    }
    runs.scores[("D-UCB-PCB", None)] = {**base, "u": 0.45 + noise, "dp": gaps["D-UCB"] + noise, "regret": 40 + noise}
    runs.scores[("FairX-UCB", None)] = {**base, "regret": 60 + noise}
    runs.scores[("FairX-UCB-PCB", None)] = {**base, "regret": 60 + noise}
    for j in range(3):
        runs.scores[("F-UCB-cert", j)] = {
            **base,
            "u": (0.3 if cert_u is None else cert_u) + noise,
            "dp": gaps["F-UCB-cert"] + noise,
            "eo": gaps["F-UCB-cert"] / 2 + noise,
            "regret": T * prices["per-decision CF"][j] + lc_cert + noise,
            "fallback": np.full(20, fallback[j]),
        }
        runs.scores[("CCLB", j)] = {
            **{k: v[:10] for k, v in base.items()},
            "dp": gaps["CCLB"] + noise[:10],
            "eo": gaps["CCLB"] / 2 + noise[:10],
            "regret": T * prices["average CF constraint"][j] + lc_cclb + noise[:10],
        }
    runs.scores[("F-UCB-cert-PCB", None)] = {**base, "u": (0.3 if cert_pcb_u is None else cert_pcb_u) + noise}
    return runs


def test_learning_cost_removes_the_notions_price():
    r = _runs(lc_cert=7.0)
    # regret = T x price + 7 (+ noise of sd 0.001): the learning cost is the 7
    np.testing.assert_allclose(r.learning_cost("F-UCB-cert", 2), 7.0, atol=0.01)
    np.testing.assert_allclose(r.learning_cost("CCLB", 0), 10.0, atol=0.01)
    assert not np.allclose(r.get("F-UCB-cert", 2), 7.0, atol=0.01)  # the price was removed


def test_h8_parts():
    ok = _runs()  # same u with and without bounds (within 0.01), FR the same, D-UCB-PCB closer to u(π⁰) = 0.5
    v, per = R.judge_h8([ok], 0.01, 0.01)
    assert per["m"].verdict == "reproduced"
    worse = _runs(cert_pcb_u=0.35)  # the bounds raise F-UCB-cert's rate by 0.05 > 0.01
    v, per = R.judge_h8([worse], 0.01, 0.01)
    parts = per["m"].details["parts"]
    assert parts["F-UCB-cert"]["verdict"] == "not reproduced" and parts["D-UCB"]["verdict"] == "reproduced"
    assert per["m"].verdict == "partly"


def test_h9_fallback_makes_a_level_not_testable_and_the_costs_decide_the_others():
    v, per = R.judge_h9([_runs(fallback=(0.9, 0.1, 0.1))], 0.5)
    parts = per["m"].details["parts"]
    assert parts["q = 0.25"]["verdict"] == "not testable here"
    assert parts["q = 0.5"]["verdict"] == parts["q = 0.75"]["verdict"] == "reproduced"
    assert v.verdict == "reproduced"
    v, per = R.judge_h9([_runs(lc_cert=20.0)], 0.5)  # F-UCB-cert costs more to learn than CCLB (10)
    assert v.verdict == "not reproduced"
    v, per = R.judge_h9([_runs(fallback=(0.9, 0.9, 0.9))], 0.5)
    assert v.verdict == "not testable here" and "underpowered" not in v.reason


def test_h10_gaps_against_d_ucb_and_the_disparity_floor():
    v, per = R.judge_h10([_runs()], 0.05, 0.5)
    assert v.verdict == "reproduced" and per["m"].details["holds"] == 4
    v, per = R.judge_h10([_runs(gaps={"D-UCB": 0.1, "F-UCB-cert": 0.3, "CCLB": 0.05})], 0.05, 0.5)
    parts = per["m"].details["parts"]
    assert parts["F-UCB-cert: DP"]["verdict"] == "not reproduced" and parts["CCLB: DP"]["verdict"] == "reproduced"
    v, per = R.judge_h10([_runs(dp_pi0=0.01)], 0.05, 0.5)
    assert per["m"].verdict == "not testable here"
    v, per = R.judge_h10([_runs(fallback=(0.1, 0.8, 0.1))], 0.05, 0.5)
    parts = per["m"].details["parts"]
    assert parts["F-UCB-cert: EO"]["verdict"] == "not testable here" and parts["CCLB: EO"]["verdict"] == "reproduced"


def test_every_learner_runs_on_a_family_model_paired_by_run():
    models = F.family(2, 3)
    studies = S.study(models)
    i = next(i for i, s in enumerate(studies) if s.testable)
    r = R.run_model(models[i], studies[i], 200, 6, 3, 0, 10.0, 0.1, (1.0, 0.1), 5000, 0.95)
    for key in [
        ("D-UCB", None),
        ("D-UCB-PCB", None),
        ("F-UCB", None),
        ("F-UCB-cert-PCB", None),
        ("FairX-UCB", None),
        ("FairX-UCB-PCB", None),
    ]:
        assert r.scores[key]["regret"].shape == (6,)
    for j in range(3):
        assert r.scores[("CCLB", j)]["regret"].shape == (3,)
        assert np.all((r.get("F-UCB-cert", j, "fallback") >= 0) & (r.get("F-UCB-cert", j, "fallback") <= 1))
    # u(π⁰) exact: the unconstrained optimum's share of decisions with Δ > τ_2
    pi0 = N.unconstrained_optimum(models[i])
    want = float(models[i].context_probs @ (pi0 * (models[i].discrepancy > r.taus[1])).sum(axis=1))
    assert r.u_pi0 == pytest.approx(want)
    with pytest.raises(ValueError, match="cclb_runs=7"):
        R.run_model(models[i], studies[i], 200, 6, 7, 0, 10.0, 0.1, (1.0, 0.1), 5000, 0.95)


def test_part_counts_by_label_and_in_all():
    _, per = R.judge_h9([_runs(fallback=(0.9, 0.1, 0.1)), _runs("n", lc_cert=20.0)], 0.5)
    by = R.part_counts(per)
    assert by["q = 0.25"] == {"not testable here": 1, "not reproduced": 1}
    assert R.part_counts(per, by_label=False) == {"all": {"not testable here": 1, "reproduced": 2, "not reproduced": 3}}


def test_fallback_parts_counts_the_levels_h9_skips_for_falling_back():
    runs = [_runs(fallback=(0.9, 0.1, 0.6)), _runs("n", fallback=(0.5, 0.5, 0.51))]
    assert R.fallback_parts(runs, 0.5) == 3


def test_cert_thresholds_left_middle_and_an_unbounded_interval():
    inst = SimpleNamespace(discrepancy=np.array([[0.1, 0.4], [0.3, 0.9]]))
    prices = [
        N.Price("per-decision CF", 0.1, 0.2, 0.1, None, 0.1, 0.5, same_until=0.3),
        N.Price("per-decision CF", 0.2, 0.1, 0.3, None, 0.2, 0.6, same_until=float("inf")),
        N.Price("per-decision CF", 0.3, 0.0, 0.9, None, 0.3, 0.7, same_until=float("inf")),
    ]
    assert list(R.cert_thresholds(inst, prices)) == [0.1, 0.3, 0.9]
    # halfway to same_until; with no change above, halfway to the largest discrepancy 0.9; at the
    # largest discrepancy itself there is no room, so the matched threshold stays
    assert np.allclose(R.cert_thresholds(inst, prices, "middle"), [0.2, 0.6, 0.9])
    with pytest.raises(ValueError, match="cert_threshold='right'"):
        R.cert_thresholds(inst, prices, "right")


def test_open_choices_of_f_ucb_cert_reach_its_runs(monkeypatch):
    """alpha_c reaches F-UCB-cert's policy, and the middle threshold runs it above the matched one."""
    models = F.family(2, 3)
    studies = S.study(models)
    i = next(i for i, s in enumerate(studies) if s.testable)
    seen = []
    real = R.A.make_policy

    def spy(name, inst, tau, **kw):
        if name.startswith("F-UCB-cert"):
            seen.append((name, tau, kw.get("alpha_c")))
        return real(name, inst, tau, **kw)

    monkeypatch.setattr(R.A, "make_policy", spy)
    R.run_model(
        models[i], studies[i], 100, 2, 2, 0, 10.0, 0.1, (1.0, 0.1), 2000, 0.95, alpha_c=0.5, cert_threshold="middle"
    )
    middle = R.cert_thresholds(models[i], studies[i].matched.prices["per-decision CF"], "middle")
    left = np.array([p.threshold for p in studies[i].matched.prices["per-decision CF"]])
    assert {a for _, _, a in seen} == {0.5}
    assert sorted({t for n, t, _ in seen if n == "F-UCB-cert"}) == sorted(set(middle.tolist()))
    assert (middle >= left).all() and (middle > left).any()
    assert R.A.make_policy is spy and real("F-UCB-cert", models[i], 0.1, alpha_c=0.5).alpha_c == 0.5


def test_learner_and_part_metrics_by_hand():
    learners = pd.DataFrame(
        [
            {
                "learner": "CCLB",
                "level": "q = 0.5",
                "R_T": 10.0,
                "T x price": 4.0,
                "learning cost": 6.0,
                "dp": float("nan"),
            },
            {
                "learner": "D-UCB",
                "level": "",
                "R_T": 3.0,
                "T x price": float("nan"),
                "learning cost": float("nan"),
                "dp": 0.2,
            },
        ]
    )
    fallback = pd.DataFrame({"F-UCB-cert, q = 0.5": [0.2, 0.4, 0.9]})
    got = R.learner_metrics(learners, fallback)
    assert got == {
        "learners.CCLB.q=0.5.R_T": 10.0,
        "learners.CCLB.q=0.5.T_x_price": 4.0,
        "learners.CCLB.q=0.5.learning_cost": 6.0,
        "learners.D-UCB.R_T": 3.0,
        "learners.D-UCB.dp": 0.2,
        "fallback.median.F-UCB-cert_q_=_0.5": 0.4,
    }
    per = {"m": checks.check_parts({"CCLB: DP": checks.not_testable("x")})}
    assert R.part_metrics("h10", per) == {"h10.parts.CCLB_DP.not_testable_here": 1}
