"""The synthetic instances of §5 and Appendix C meet their settings exactly."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.instances.synthetic import SETTINGS, SyntheticSetting, synthetic_instance


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_synthetic_settings_are_met_exactly(name):
    inst = synthetic_instance(name, np.random.default_rng(10))
    s, prob = inst.setting, inst.problem
    assert prob.n_arms == 30 and inst.q.shape == (30, 20)
    assert int((~prob.fair(s.tolerance)).sum()) == s.n_infeasible
    gaps = prob.gaps(s.tolerance)
    if s.n_infeasible < s.n_arms:
        assert gaps["outcome_gap"] == pytest.approx(s.outcome_gap, abs=1e-9)
    else:
        assert prob.best_fair_arm(s.tolerance) == -1
    if s.n_infeasible:
        assert gaps["fairness_gap"] == pytest.approx(s.fairness_gap, abs=1e-9)
    others = np.arange(1, 30)
    assert np.all((prob.M[others, 0] > s.m_band[0]) & (prob.M[others, 0] < s.m_band[1]))
    d = np.r_[prob.D[others, 0], prob.D_reverse[others, 0]]
    assert np.all((d > s.d_band[0]) & (d < s.d_band[1]))
    assert inst.facts["n_better_infeasible"] == s.n_better_infeasible


def test_settings_are_validated():
    with pytest.raises(ValueError, match="n_better_infeasible=3 exceeds"):
        SyntheticSetting("bad", tolerance=0.1, n_infeasible=2, outcome_gap=0.06, fairness_gap=0.02)
    with pytest.raises(ValueError, match="known settings"):
        synthetic_instance("nope", np.random.default_rng(0))
