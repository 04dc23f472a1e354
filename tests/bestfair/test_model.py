"""A problem summarised by its cells: validation of the paper's assumptions and the exact ground truth."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.instances.synthetic import bernoulli_context_problem
from causalbandits_lib.bestfair.model import FairArmsProblem, ProblemError, cheap_arm_costs

from .problems import easy_problem, small_instance, unfair_problem


def _cells_with_zero(ps, psp, q):
    p = bernoulli_context_problem(ps, psp, np.clip(q, 0.01, 0.99))
    arm_prob = p.arm_prob.copy()
    arm_prob[1, 0] = 0.0  # arm 1 cannot produce a cell the others produce
    return p.cell_probs, arm_prob, p.rho, p.cell_y


def test_arms_must_share_their_support():
    ps, psp, q, _ = small_instance(np.random.default_rng(3))
    with pytest.raises(ProblemError, match="share"):
        bad = q.copy()
        bad[1, 0] = 1.0
        FairArmsProblem(*_cells_with_zero(ps, psp, bad))


def test_shapes_and_outcomes_are_checked():
    p = easy_problem()
    with pytest.raises(ProblemError, match="expected \\(3, K, C\\)"):
        FairArmsProblem(p.cell_probs[:2], p.arm_prob, p.rho, p.cell_y)
    with pytest.raises(ProblemError, match="must lie in \\[0, 1\\]"):
        FairArmsProblem(p.cell_probs, p.arm_prob, p.rho, p.cell_y * 2)
    with pytest.raises(ProblemError, match="costs"):
        FairArmsProblem(p.cell_probs, p.arm_prob, p.rho, p.cell_y, costs=np.ones((2, 4)))


def test_ground_truth_and_fairness():
    p = easy_problem()
    np.testing.assert_allclose(p.zeta_reverse, -p.zeta, atol=1e-15)
    np.testing.assert_allclose(p.zeta, p.conditional_means[0] - p.conditional_means[1], atol=0)
    assert p.fair(0.2).all() and p.best_fair_arm(0.2) == 1
    # arm 1's table ignores the context, so its gap is exactly 0: the only arm fair at a tiny tolerance
    assert p.fair(1e-6).tolist() == [True, False, False, False] and p.best_fair_arm(1e-6) == 0
    assert unfair_problem().best_fair_arm(0.1) == -1
    with pytest.raises(ValueError, match="tolerance"):
        p.fair(0.0)
    facts = p.summary(0.2)
    assert facts["n_feasible"] == 4 and facts["best_fair_arm"] == 1 and facts["M_range"][0] >= 1


def test_tied_best_fair_arms_are_refused():
    ps, psp = np.array([0.5, 0.5]), np.array([0.5, 0.5])
    q = np.array([[0.6, 0.6], [0.6, 0.6], [0.3, 0.3]])
    with pytest.raises(ProblemError, match="unique"):
        bernoulli_context_problem(ps, psp, q).best_fair_arm(0.1)


def test_cheap_arm_costs():
    c = cheap_arm_costs(3, 1)
    assert c.shape == (3, 3) and np.all(c[:, 1] == 0) and np.all(np.delete(c, 1, axis=1) == 1)
    assert np.all(cheap_arm_costs(2, None) == 1)
    with pytest.raises(ValueError, match="cheap_arm=3"):
        cheap_arm_costs(3, 3)
