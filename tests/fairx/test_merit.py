"""Merit functions, the optimal fair policy and the per-round regrets (:mod:`causalbandits_lib.fairx.merit`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from causalbandits_lib.fairx.merit import (
    AffineMerit,
    ExpMerit,
    RegretMeter,
    fairness_regret_per_round,
    optimal_fair_policy,
    reward_regret_per_round,
)

means_st = st.lists(st.floats(-2, 2, allow_nan=False), min_size=2, max_size=12)


class ScaledExp:
    """``k·exp(cμ)`` computed without any normalisation shortcut (for the scale-invariance test)."""

    def __init__(self, c, k):
        self.c, self.k = c, k

    def policy(self, mu):
        f = self.k * np.exp(self.c * np.asarray(mu))
        return f / f.sum(axis=-1, keepdims=True)


@given(means_st, st.floats(0.1, 10))
def test_optimal_fair_policy_sums_to_one_and_is_proportional_to_merit(means, c):
    mu = np.array(means)
    pi = optimal_fair_policy(ExpMerit(c), mu)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    merit = np.exp(c * mu)
    np.testing.assert_allclose(pi / merit, np.full(len(mu), pi[0] / merit[0]), rtol=1e-9)


@given(means_st, st.floats(0.1, 5), st.floats(1e-3, 1e3))
def test_optimal_fair_policy_is_invariant_to_merit_scale(means, c, k):
    mu = np.array(means)
    np.testing.assert_allclose(ScaledExp(c, k).policy(mu), ScaledExp(c, 1.0).policy(mu), rtol=1e-12)
    np.testing.assert_allclose(ExpMerit(c).policy(mu), ScaledExp(c, k).policy(mu), rtol=1e-9)


def test_exp_merit_limits_and_regrets():
    mu = np.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(ExpMerit(1e-6).policy(mu), np.full(3, 1 / 3), atol=1e-6)
    assert ExpMerit(500.0).policy(mu)[2] == pytest.approx(1.0)
    opt = ExpMerit(2.0).policy(mu)
    one_hot = np.array([0.0, 0.0, 1.0])
    assert fairness_regret_per_round(one_hot, opt) == pytest.approx(2 * (1 - opt[2]))
    assert reward_regret_per_round(one_hot, opt, mu) < 0  # the unfair winner-takes-all earns more
    assert fairness_regret_per_round(opt, opt) == 0
    with pytest.raises(ValueError, match="c="):
        ExpMerit(0.0)
    with pytest.raises(ValueError, match="positive"):
        AffineMerit()(np.array([-1.0, 1.0]))


def test_regret_meter_equals_the_per_round_regrets_and_follows_new_means():
    """The meter's fr and rr are Eq. 9 and the summand of Eq. 1 for every run and configuration,
    also when the means array changes between rounds (its cache must not keep stale optima)."""
    rng = np.random.default_rng(0)
    merit = ExpMerit([1.0, 3.0])
    meter = RegretMeter(merit)
    for _ in range(3):
        means = rng.random((4, 6))
        policy = rng.dirichlet(np.ones(6), size=(4, 2))
        fr, rr = meter.step(policy, means)
        assert fr.shape == rr.shape == (4, 2)
        for g, c in enumerate([1.0, 3.0]):
            opt = optimal_fair_policy(ExpMerit(c), means)
            np.testing.assert_allclose(fr[:, g], fairness_regret_per_round(policy[:, g], opt), rtol=1e-12)
            np.testing.assert_allclose(rr[:, g], reward_regret_per_round(policy[:, g], opt, means), atol=1e-12)


def test_c_column_broadcasts_over_the_arms():
    assert ExpMerit([1.0, 2.0]).c_column.shape == (2, 1)
    assert ExpMerit(3.0).c_column.shape == (1,)
