"""The best-fair-intervention adapter: the bestfair problem built from the projected model has the
synthesis model's exact means, gaps and best fair rule, and the scores of a deployed rule are the
model's."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.algorithms import NO_FAIR_ARM
from causalbandits_lib.bestfair.model import ProblemError
from causalbandits_lib.bestfair.observations import observation_model
from causalbandits_lib.synthesis import intervention as I
from causalbandits_lib.synthesis import model as M

INSTANCES = M.instances(np.random.SeedSequence(0), 3)


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_projection_matches_the_full_model_in_pgmpy(inst):
    scm = M.build_scm(inst, lam=1.0, s0=0.1)
    proj = I.projected_scm(inst)
    for a in (0, 1):
        for i in range(M.N_ITEMS):
            full = scm.query(["Y"], evidence={"A": a}, do={"I": i})[1]
            assert abs(proj.mechanisms["Y"].table[a, i, 1] - full) < 1e-12


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_hard_rule_gaps_are_notebook_2s_average_discrepancies(inst):
    obs = observation_model(I.projected_scm(inst), "A", "I", "Y", sensitive_values=(1, 0))
    means = obs.means(I.soft_rules(0.0))  # deterministic tables are allowed here
    zeta = means[1] - means[2]
    assert np.allclose(zeta, I.signed_gaps(inst), rtol=0, atol=1e-12)
    assert np.allclose(np.abs(zeta), inst.context_probs @ inst.discrepancy, rtol=0, atol=1e-12)
    assert np.ptp(np.abs(zeta)) > 0.01  # the gaps differ across items: the check is not vacuous


@pytest.mark.parametrize("eps", [0.1, 0.2, 0.4])
@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_bestfair_problem_has_the_models_exact_quantities(inst, eps):
    p = I.csr_problem(inst, eps)
    facts = I.exact_rule_facts(inst, eps, inst.tau(0.5))
    assert np.allclose(p.mu, facts["mu"], rtol=0, atol=1e-12)
    assert np.allclose(p.zeta, facts["zeta"], rtol=0, atol=1e-12)
    assert np.allclose(p.zeta_reverse, -facts["zeta"], rtol=0, atol=1e-12)
    for q in (0.3, 0.5, 0.7):
        tau = inst.tau(q)
        assert p.best_fair_arm(tau) == I.exact_rule_facts(inst, eps, tau)["best"]
    assert np.all(p.costs == 0)


def test_hard_rules_are_rejected_by_bestfair():
    with pytest.raises(ProblemError, match="absolute continuity"):
        I.csr_problem(INSTANCES[0], 0.0)


def test_rule_scores_of_a_hard_rule_are_the_environments_expectations():
    inst, T, tau, c = INSTANCES[0], 1000, INSTANCES[0].tau(0.5), 10.0
    p, m, d = inst.context_probs, inst.means, inst.discrepancy
    for k in range(M.N_ITEMS):
        s = I.rule_scores(inst, np.eye(M.N_ITEMS)[k], tau, c, T)
        assert s["regret"] == pytest.approx(T * (p @ (m.max(axis=1) - m[:, k])))
        assert s["cf_rate"] == pytest.approx(float(p @ (d[:, k] > tau)))
        assert s["violation_pos"] == pytest.approx(T * float(p @ np.maximum(d[:, k] - tau, 0)))
        assert s["violation"] == pytest.approx(max(T * float(p @ (d[:, k] - tau)), 0.0))
        pi = M.exposure_optimum(inst, c)
        assert s["fairness_regret"] == pytest.approx(T * (np.abs(pi).sum() - pi[k] + abs(1 - pi[k])))


def test_run_csr_scores_each_runs_deployed_rule():
    inst = INSTANCES[1]
    tau = inst.tau(0.5)
    r = I.run_csr(inst, "CSR-V1", 0.2, tau, 10.0, 500, 8, seed=3)
    assert r.chosen.shape == (8,) and set(r.chosen) <= set(range(-1, M.N_ITEMS))
    rules = I.soft_rules(0.2)
    for k, reg in zip(r.chosen, r.scores["regret"]):
        pol = rules[k] if k != NO_FAIR_ARM else np.full(M.N_ITEMS, 0.25)
        assert reg == pytest.approx(I.rule_scores(inst, pol, tau, 10.0, 500)["regret"])
    assert np.array_equal(r.correct, (r.chosen == r.best).astype(float))
    g = I.signed_gaps(inst)
    for k, gap in zip(r.chosen, r.scores["gap"]):
        pol = rules[k] if k != NO_FAIR_ARM else np.full(M.N_ITEMS, 0.25)
        assert gap == pytest.approx(abs(pol @ g))
    rows = I.csr_rows([r])
    assert rows["CSR-V1 (deployed rule)"]["identification_error"] == pytest.approx(r.error_rate)


def test_judge_csr_can_fail():
    fake = [I.CSRResult("CSR-V1", f"i{j}", 0, np.ones(20, int), np.zeros(20)) for j in range(3)]
    assert I.judge_csr(fake).verdict == "not reproduced"
    good = [I.CSRResult("CSR-V1", f"i{j}", 0, np.zeros(20, int), np.ones(20)) for j in range(3)]
    assert I.judge_csr(good).verdict == "reproduced"


def test_identification_table_reads_each_rule_fact_from_the_model():
    inst = INSTANCES[0]
    tau = inst.tau(0.5)
    facts = I.exact_rule_facts(inst, 0.2, tau)
    fake = [
        I.CSRResult("CSR-V1", inst.name, facts["best"], np.array([0, 1]), np.array([1.0, 0.0])),
        I.CSRResult("CSR-V2", inst.name, facts["best"], np.array([0, 0]), np.array([1.0, 1.0])),
    ]
    t = I.identification_table({0.2: fake}, {inst.name: (inst, tau)})
    row = t.loc[(inst.name, 0.2)]
    assert row["CSR-V1 error"] == 0.5 and row["CSR-V2 error"] == 0.0
    assert row["fair rules"] == int(np.sum(np.abs(I.soft_rules(0.2) @ I.signed_gaps(inst)) < tau))
    if facts["best"] >= 0:
        assert row["|ζ(j*)|"] == pytest.approx(abs(I.soft_rules(0.2)[facts["best"]] @ I.signed_gaps(inst)))
