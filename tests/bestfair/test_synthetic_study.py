"""The synthetic notebook's runs and bookkeeping (synthetic_study), against hand-made errors and
instance facts with hand-computed tables and metrics."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits_lib.bestfair.experiments import instance_errors
from causalbandits_lib.bestfair.instances.synthetic import (
    bernoulli_context_problem,
    binomial_variant,
    synthetic_instance,
)
from causalbandits_lib.bestfair.synthetic_study import (
    BinomialStudy,
    SyntheticStudy,
    below_from,
    gap_table,
    instance_metrics,
    instance_stream,
    instance_table,
    run_binomial,
    run_synthetic,
)

ALGS = ("CSR-V1", "CSR-V2", "TS-V1", "TS-V2")


def _facts(n_feasible, k, m_hi, d_hi):
    return {"tolerance": 0.1, "n_feasible": n_feasible, "best_fair_arm": k, "outcome_gap": 0.02, "fairness_gap": 0.0125,
            "M_to_cheap_range": (1.0, m_hi), "D_to_cheap_range": (2.0, d_hi)}  # fmt: skip


def test_instance_stream_names_the_first_instance_as_before():
    assert instance_stream("loose", 0) == "instance/loose"
    assert instance_stream("loose", 2) == "instance/loose/2"


def test_instance_metrics_and_table_of_hand_made_facts():
    insts = {"loose": [SimpleNamespace(facts=_facts(22, 3, 5.0, 6.0)), SimpleNamespace(facts=_facts(21, 0, 9.0, 3.0))]}
    m = instance_metrics(insts)
    assert m["synthetic.loose.n_feasible"] == 22 and m["synthetic.loose.n_feasible.instance2"] == 21
    assert m["synthetic.loose.best_fair_arm.instance2"] == 0
    assert len(m) == 12  # six facts of two instances
    lines = instance_table(insts).splitlines()
    assert len(lines) == 4
    # instance 1: k* = arm 4, gaps 0.020 / 0.013 (0.0125 rounded half to even), max(5, 6)/√30 = 1.10
    assert (
        lines[2]
        == f"| loose | 1 | 0.1 | 22 | arm 4 | 0.020 | {0.0125:.3f} | 1.0–5.0 | 2.0–6.0 | {6 / math.sqrt(30):.2f} |"
    )
    assert lines[3].endswith(f"| {9 / math.sqrt(30):.2f} |")


def _study():
    """One setting, two instances, budgets (10, 20), three runs; CSR-V2 errs in run 1 at T=10 on
    instance 1 and in every run at T=10 on instance 2; k* lost by TS-V2 in run 3 at T=10 on instance 1."""
    z = np.zeros((2, 3), dtype=bool)
    e1 = {a: z.copy() for a in ALGS}
    e1["CSR-V2"][0, 0] = True
    e2 = {a: z.copy() for a in ALGS}
    e2["CSR-V2"][0] = True
    l1 = {"TS-V1": z.copy(), "TS-V2": z.copy()}
    l1["TS-V2"][0, 2] = True
    l2 = {"TS-V1": z.copy(), "TS-V2": z.copy()}
    return SyntheticStudy((10, 20), {"loose": [e1, e2]}, {"loose": [l1, l2]})


def test_a_study_knows_its_per_run_measurements():
    s = _study()
    assert s.n_instances == 2
    assert s.grid_runs("loose", 0, "CSR-V2").tolist() == [0.5, 0.0, 0.0]
    assert s.final_runs("loose", 1, "CSR-V2").tolist() == [0.0, 0.0, 0.0]
    assert s.pooled("loose")["CSR-V2"].shape == (2, 6)
    assert s.mean_curve("loose", "CSR-V2").tolist() == pytest.approx([(1 / 3 + 1) / 2, 0.0])
    assert s.lost_curve("loose", "TS-V2").tolist() == pytest.approx([1 / 6, 0.0])
    # instance 2's grid runs are 0.5, 0.5, 0.5: mean 0.5, se 0
    assert s.grid_means("loose")["CSR-V2"][1] == {"mean": 0.5, "se": 0.0}
    # instance 1's grid runs 0.5, 0, 0: mean 1/6, se = sd/√3 with sd = √(1/12)
    assert s.grid_means("loose")["CSR-V2"][0]["se"] == pytest.approx(math.sqrt(1 / 12) / math.sqrt(3))
    assert s.final_means("loose")["CSR-V1"][0] == {"mean": 0.0, "se": 0.0}


def test_a_study_records_its_metrics():
    rec = SimpleNamespace(metrics={})
    rec.metric = rec.metrics.__setitem__
    _study().record(rec)
    m = rec.metrics
    assert m["synthetic.budgets"] == [10, 20] and m["synthetic.n_instances"] == 2
    assert m["synthetic.loose.error.CSR-V2"].tolist() == pytest.approx([2 / 3, 0.0])
    assert np.allclose(m["synthetic.loose.error_by_instance.CSR-V2"], [[1 / 3, 0.0], [1.0, 0.0]])
    assert m["synthetic.loose.best_arm_lost_in_screening.TS-V2"].tolist() == pytest.approx([1 / 6, 0.0])


def test_a_study_writes_its_tables():
    s = _study()
    grid = s.grid_table().splitlines()
    assert grid[0].startswith("| setting | instance | CSR-V1 grid mean") and grid[0].endswith("| CSR-V2 at T = 20 |")
    assert grid[2] == "| loose | 1 | 0.000 | 0.167 | 0.000 | 0.000 | 0.000 |"
    assert grid[3] == "| loose | 2 | 0.000 | 0.500 | 0.000 | 0.000 | 0.000 |"
    screening = s.screening_table().splitlines()
    assert screening[0] == "| setting | TS-V1, T=10 | TS-V1, T=20 | TS-V2, T=10 | TS-V2, T=20 |"
    assert screening[2] == "| loose | 0.00 | 0.00 | 0.17 | 0.00 |"


def test_below_from_and_the_gap_table():
    s = _study()
    assert below_from(s, 0.75, ["loose"]) == {"loose": [10, 20]}  # instance 2: 1.0 at T=10, 0 at T=20
    b = BinomialStudy({"loose": [np.ones((2, 3), bool), np.zeros((2, 3), bool)]},
                      {"loose": [((1.0, 2e8), (3.0, 4.5)), ((1.0, 2.0), (1.0, 2.0))]})  # fmt: skip
    rows = gap_table(s, b, {"loose": [10, None]}).splitlines()
    assert rows[2] == "| loose | 1 | [0.33, 0.0] | 10 | [1.0, 1.0] | 1–2e+08 | 3–4.5 |"
    assert rows[3].startswith("| loose | 2 | [1.0, 0.0] | None | [0.0, 0.0] |")
    m = b.metrics()
    assert [e.tolist() for e in m["synthetic.loose.binomial.error.CSR-V2"]] == [[1.0, 1.0], [0.0, 0.0]]
    assert m["synthetic.loose.binomial.M_to_cheap_range"] == [(1.0, 2e8), (1.0, 2.0)]


def test_run_synthetic_equals_each_instance_alone():
    ps, psp = np.array([0.3, 0.4, 0.3]), np.array([0.35, 0.3, 0.35])
    q = np.array([[0.5, 0.5, 0.5], [0.75, 0.7, 0.75], [0.3, 0.35, 0.3], [0.55, 0.5, 0.6]])
    inst = SimpleNamespace(problem=bernoulli_context_problem(ps, psp, q), setting=SimpleNamespace(tolerance=0.2))
    s = run_synthetic({"loose": [inst], "tight": [inst]}, [200, 400], seed=2, n_runs=2, n_runs_tight=3)
    for name, runs in (("loose", 2), ("tight", 3)):
        errors, lost = instance_errors(inst.problem, ALGS, [200, 400], 0.2, 2, runs)
        for alg in ALGS:
            assert np.array_equal(s.errors[name][0][alg], errors[alg])
        assert set(s.lost[name][0]) == set(lost)


def test_run_binomial_runs_csr_v2_on_the_binomial_variant():
    inst = synthetic_instance("ablation_high_m_high_d", np.random.default_rng(1))
    b = run_binomial(
        {"ablation_high_m_high_d": [inst]}, 3, [300], seed=0, n_runs=2, settings=("ablation_high_m_high_d",)
    )
    var = binomial_variant(inst, 3)
    errors, _ = instance_errors(var.problem, ("CSR-V2",), [300], inst.setting.tolerance, 0, 2)
    assert np.array_equal(b.errors["ablation_high_m_high_d"][0], errors["CSR-V2"])
    assert b.ranges["ablation_high_m_high_d"][0] == (var.facts["M_to_cheap_range"], var.facts["D_to_cheap_range"])
