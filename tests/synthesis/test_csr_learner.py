"""CSR as a learner: the regret of its identification pulls and of the rule it deploys afterwards,
against sums written out context by context (not the module's matrix forms)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits_lib.bestfair.algorithms import NO_FAIR_ARM
from causalbandits_lib.synthesis import family as F
from causalbandits_lib.synthesis import intervention as I
from causalbandits_lib.synthesis import model as M


@pytest.fixture(scope="module")
def inst():
    return F.family(3, 1)[0]


def _by_hand(inst, eps):
    """Per kind (natural, A = 1, A = 0) and rule: mean over the kind's contexts of the best item's
    click minus the rule's expected click, with loops over the contexts of model.CONTEXTS."""
    K = M.N_ITEMS
    rule = lambda k, i: (1 - eps) * (i == k) + eps / K  # noqa: E731
    out = np.zeros((3, K))
    for row, keep in ((0, lambda a: True), (1, lambda a: a == 1), (2, lambda a: a == 0)):
        ctx = [c for c, (a, _u) in enumerate(M.CONTEXTS) if keep(a)]
        for k in range(K):
            out[row, k] = sum(
                max(inst.means[c]) - sum(rule(k, i) * inst.means[c, i] for i in range(K)) for c in ctx
            ) / len(ctx)
    return out


@pytest.mark.parametrize("eps", [0.1, 0.4])
def test_pull_regrets_are_the_groups_optima_minus_the_rules_click(inst, eps):
    assert np.allclose(I.pull_regrets(inst, eps), _by_hand(inst, eps), atol=1e-14)
    assert (I.pull_regrets(inst, eps) >= 0).all()


def test_regret_of_a_fabricated_run_by_hand(inst, monkeypatch):
    """Two runs with known pulls and answers: run 0 pulls rule 1 three times naturally and rule 2
    twice with A = 0, then deploys rule 2; run 1 pulls rule 0 once with A = 1 and answers "no fair
    rule", so the uniform rule serves the rest."""
    eps, T, budget = 0.2, 50, 10
    alloc = np.zeros((2, 2, 3, M.N_ITEMS), dtype=int)  # (run, phase, kind, rule)
    alloc[0, 0, 0, 1] = 3
    alloc[0, 1, 2, 2] = 2
    alloc[1, 0, 1, 0] = 1
    fake = SimpleNamespace(allocation=alloc, chosen=np.array([2, NO_FAIR_ARM]))
    monkeypatch.setattr(I, "identify", lambda *a, **k: fake)
    tau = inst.tau(0.5)
    res = I.csr_learner(inst, "CSR-V1", eps, tau, T, budget, 2, seed=0)
    g = _by_hand(inst, eps)
    opt = float(np.mean(inst.means.max(axis=1)))
    rule2 = (1 - eps) * inst.means[:, 2].mean() + eps * inst.means.mean()
    uniform = inst.means.mean()
    expect0 = 3 * g[0, 1] + 2 * g[2, 2] + (T - 5) * (opt - rule2)
    expect1 = 1 * g[1, 0] + (T - 1) * (opt - uniform)
    assert np.allclose(res.regret, [expect0, expect1], atol=1e-12)
    assert np.allclose(res.explore_regret, [3 * g[0, 1] + 2 * g[2, 2], g[1, 0]], atol=1e-12)
    assert list(res.pulls) == [5, 1]
    best = I.exact_rule_facts(inst, eps, tau)["best"]
    assert list(res.correct) == [float(best == 2), float(best == NO_FAIR_ARM)]
    # the price is the exact best τ-fair soft rule's, T times per round
    rules = I.soft_rules(eps)
    best_mean = rules[best] @ inst.merit_means if best != NO_FAIR_ARM else uniform
    assert res.price == pytest.approx(T * (opt - best_mean), abs=1e-12)
    assert np.allclose(res.learning_cost, res.regret - res.price)


def test_a_real_run_stays_within_its_budget_and_pays_at_least_the_price_of_its_answer(inst):
    tau = inst.tau(0.5)
    res = I.csr_learner(inst, "CSR-V1", 0.2, tau, 2000, 500, 8, seed=1)
    assert (res.pulls <= 500).all() and (res.pulls > 0).all()
    assert (res.explore_regret >= 0).all()
    # the deployment rounds pay between the cheapest and the dearest rule CSR can deploy
    opt = float(np.mean(inst.means.max(axis=1)))
    deployable = [I.soft_rules(0.2)[k] @ inst.merit_means for k in range(M.N_ITEMS)] + [inst.means.mean()]
    low, high = min(opt - v for v in deployable), max(opt - v for v in deployable)
    deploy = res.regret - res.explore_regret
    assert (deploy >= (2000 - res.pulls) * low - 1e-9).all() and (deploy <= (2000 - res.pulls) * high + 1e-9).all()
    rows = I.csr_learner_rows([res])
    assert rows[("CSR-V1", 500)]["R_T"] == pytest.approx(res.regret.mean())


@pytest.mark.parametrize("budget", [0, 2001])
def test_a_budget_outside_the_horizon_is_refused(inst, budget):
    with pytest.raises(ValueError, match=f"budget={budget}"):
        I.csr_learner(inst, "CSR-V1", 0.2, inst.tau(0.5), 2000, budget, 2, seed=0)
