from __future__ import annotations

import numpy as np

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
