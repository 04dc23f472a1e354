from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.synthesis import algorithms as A
from causalbandits_lib.synthesis import experiments as X
from causalbandits_lib.synthesis import model as M
from causalbandits_lib.synthesis import theory as Th

LEVELS = {"low": (0.0, 0.8), "medium": (1.0, 0.1), "high": (2.5, 0.01)}


def test_rescore():
    delta = np.array([[0.1, 0.5, 0.3], [0.0, 0.0, 0.0]])
    s = X.rescore(delta, 0.2)
    assert np.allclose(s["cf_rate"], [2 / 3, 0])
    assert np.allclose(s["violation_pos"], [0.4, 0])
    assert np.allclose(s["violation"], [0.3, 0])


def _results():
    insts = M.instances(np.random.SeedSequence(0), 2)
    return [X.run_instance(i, 150, 4, 0, 0.5, [0.3], 10.0, [3.0], LEVELS, "medium", 3000) for i in insts]


def test_run_instance_and_judges_give_verdicts():
    res = _results()
    assert ("D-UCB-PCB", "bias=low") in res[0].runs and ("F-UCB", "tau=0.3") in res[0].runs
    table = X.cross_notion_table(res)
    assert list(table.index) == [p for p in A.POLICIES if "CCLB" not in p]  # cclb_runs = 0 leaves them out
    for v in (
        X.judge_h1(res, 0.5, [0.3]),
        X.judge_h2(res, 0.5, [0.3], 10.0, [3.0]),
        X.judge_h3(res, 0.5, [0.3]),
        X.judge_h4(res, "medium"),
        X.judge_h5(res, 0.5, [0.3], 10.0, [3.0]),
    ):
        assert v.verdict in ("reproduced", "partly", "not reproduced", "not testable here")
    # H5's CCLB part is not testable without CCLB's runs: the verdict can be at most partly
    assert X.judge_h5(res, 0.5, [0.3], 10.0, [3.0]).verdict != "reproduced"


def test_h4_judge_can_fail():
    """Equal improvements at every level cannot satisfy a strict ordering."""
    res = _results()
    for r in res:
        for lvl in ("low", "high"):
            r.runs[("D-UCB-PCB", f"bias={lvl}")] = r.runs[("D-UCB-PCB", "main")]
    assert X.judge_h4(res, "medium").verdict != "reproduced"


def test_exact_price_relaxation():
    for inst in M.instances(np.random.SeedSequence(1), 4):
        for q in (0.3, 0.5, 0.7, 0.9):
            ok = Th.relaxation_holds(inst, inst.tau(q))
            assert ok in (True, None)
    cv = X.exact_price_curves(M.instances(np.random.SeedSequence(0), 1)[0], [0.2, 0.5, 0.9], [1.0, 10.0])
    assert np.all(np.diff(cv["per-decision CF"]) <= 1e-12)  # a looser threshold never costs more
    assert np.all(cv["average CF constraint"] <= cv["per-decision CF"] + 1e-12)


def test_judge_hypotheses_is_the_five_judges_and_counts_their_instances():
    res = _results()
    verdicts = X.judge_hypotheses(res, 0.5, [0.3], 10.0, [3.0], "medium")
    assert list(verdicts) == list(X.HYPOTHESES)
    assert verdicts["h4_bounds_help_most_at_small_bias"].verdict == X.judge_h4(res, "medium").verdict
    # H1 is judged over the 2 instances, H3 over (instance, learner) pairs: 2 x 3
    h1 = X.instance_counts(verdicts["h1_cf_implies_small_violation"])
    assert list(h1) == ["all"] and sum(h1["all"].values()) == 2
    assert sum(X.instance_counts(verdicts["h3_bounds_never_hurt"])["all"].values()) == 2 * len(A.PCB_PAIRS)
    per_learner = X.instance_counts(verdicts["h3_bounds_never_hurt"], by_learner=True)
    assert sorted(per_learner) == sorted(A.PCB_PAIRS) and all(sum(c.values()) == 2 for c in per_learner.values())
    for learner, c in per_learner.items():  # the same statuses as the verdict's own per-pair entries
        entries = verdicts["h3_bounds_never_hurt"].details["instances"]
        assert c["holds"] == sum(e["status"] == "holds" for k, e in entries.items() if k.endswith(", " + learner))
    # H5 combines parts: only the part judged over instances is counted (CCLB was not run)
    h5 = X.instance_counts(verdicts["h5_price_orders_notions"])
    assert list(h5) == ["F-UCB < FairX-UCB"] and sum(h5["F-UCB < FairX-UCB"].values()) == 2


def test_run_instance_can_leave_out_eps_cclb_alone():
    inst = M.instances(np.random.SeedSequence(0), 1)[0]
    r = X.run_instance(inst, 60, 2, 0, 0.5, [], 10.0, [], LEVELS, "medium", 2000, cclb_runs=1, eps_cclb=False)
    assert ("CCLB", "main") in r.runs and ("ε-CCLB", "main") not in r.runs


def _hand_results():
    """Two instances with hand-made scores: every policy's regret is a constant per instance."""
    insts = M.instances(np.random.SeedSequence(0), 2)
    out = []
    for i, inst in enumerate(insts):
        r = X.InstanceResult(inst, 0.1, {0.5: 0.1})
        for p in A.POLICIES:
            base = {s: np.full(4, 10.0 * (i + 1)) for s in X.SCORES}
            r.runs[(p, "main")] = base
        r.runs[("FairX-UCB", "main")] = {s: np.full(4, 1.0 + i) for s in X.SCORES}
        r.runs[("CCLB", "main")] = {s: np.full(2, 3.0) for s in X.SCORES}
        r.runs[("D-UCB-PCB", "bias=high")] = {s: np.full(4, 7.0) for s in X.SCORES}
        r.runs[("D-UCB-PCB", "bias=low")] = {s: np.full(4, 5.0) for s in X.SCORES}
        r.runs[("F-UCB", "tau=0.3")] = {s: np.full(4, 2.0) for s in X.SCORES}
        r.runs[("F-UCB (true Δ)", "tau=0.3")] = {s: np.full(4, 2.0) for s in X.SCORES}
        r.runs[("FairX-UCB", "c=3")] = {s: np.full(4, 4.0) for s in X.SCORES}
        r.fallback[("F-UCB", "main")] = 0.5 + i / 4
        r.coverage, r.width = {"low": 1.0}, {"low": 0.2 * (i + 1)}
        out.append(r)
    return out


def test_evidence_table_pools_the_paired_differences_by_hand():
    t = X.evidence_table(_hand_results())
    # H5: FairX-UCB - F-UCB is 1 - 10 on instance 0, 2 - 20 on instance 1, four runs each
    d = np.array([-9.0] * 4 + [-18.0] * 4)
    assert t.loc["H5: R(FairX-UCB) - R(F-UCB)", "mean (pooled over instances)"] == pytest.approx(d.mean())
    assert t.loc["H5: R(FairX-UCB) - R(F-UCB)", "se"] == pytest.approx(d.std(ddof=1) / np.sqrt(8))
    # H1 scales D-UCB's violation by 0.05; CCLB's difference uses its 2 runs only
    assert t.loc["H1: V+(F-UCB) - 0.05 V+(D-UCB)", "mean (pooled over instances)"] == pytest.approx((9.5 + 19) / 2)
    assert t.loc["H5: R(F-UCB) - R(CCLB) (CCLB's runs)", "mean (pooled over instances)"] == pytest.approx((7 + 17) / 2)
    assert t.loc["H4: g(low) - g(high)", "mean (pooled over instances)"] == pytest.approx(2.0)


def test_run_tables_and_tradeoff_points_by_hand():
    res = _hand_results()
    fb = X.fallback_table(res)
    assert fb.loc["F-UCB (main)"].tolist() == [0.5, 0.75]
    bt = X.bounds_table(res)
    assert bt["width (low)"].tolist() == pytest.approx([0.2, 0.4]) and bt["covered (low)"].tolist() == [1.0, 1.0]
    pts = X.tradeoff_points(res, 0.5, [0.3], 10.0, [3.0])
    # ascending τ quantile: 0.3 (2.0 on both instances) then ours (10 and 20)
    assert [p["regret"] for p in pts["F-UCB (τ varies)"]] == pytest.approx([2.0, 15.0])
    assert [p["regret"] for p in pts["FairX-UCB (c varies)"]] == pytest.approx([4.0, 1.5])
    assert "D-UCB" in pts and pts["CCLB"][0]["regret"] == pytest.approx(3.0)
