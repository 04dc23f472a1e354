"""Generic policies, environments and bounds."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core import bounds
from causalbandits_lib.core.environments import BernoulliBandit, ContextualBernoulliBandit
from causalbandits_lib.core.policies import UCB1, CellStatistics, argmax_ties
from causalbandits_lib.core.runner import simulate


def test_kl_bernoulli_hand_values():
    assert bounds.kl_bernoulli(0.5, 0.5) == 0.0
    np.testing.assert_allclose(bounds.kl_bernoulli(0.6, 0.7), 0.6 * np.log(0.6 / 0.7) + 0.4 * np.log(0.4 / 0.3))
    assert bounds.kl_bernoulli(0.0, 0.5) == pytest.approx(np.log(2))
    assert np.isinf(bounds.kl_bernoulli(0.5, 1.0))


def test_lai_robbins_and_ucb1_bounds_hand_values():
    means = [0.7, 0.6]
    c = 0.1 / (0.6 * np.log(0.6 / 0.7) + 0.4 * np.log(0.4 / 0.3))
    assert bounds.lai_robbins_constant(means) == pytest.approx(c)
    assert bounds.ucb1_regret_bound(means, np.e) == pytest.approx(80.0 + (1 + np.pi**2 / 3) * 0.1)
    t = np.arange(2, 1000)
    assert np.all(np.diff(bounds.ucb1_regret_bound(means, t)) > 0)
    assert bounds.subgaussian_radius(0, 2.0) == pytest.approx(2.0)


def test_ucb1_converges_on_an_easy_instance():
    res = simulate(BernoulliBandit([0.9, 0.1]), UCB1(2), T=2000, seed=0, n_runs=10)
    late = res["regret"][:, 1000:]
    assert late.mean() < 0.02
    assert res.final().mean() < bounds.ucb1_regret_bound([0.9, 0.1], 2000)


def test_ucb1_per_context_learns_each_context():
    env = ContextualBernoulliBandit([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]])
    blind = simulate(env, UCB1(2), T=3000, seed=1, n_runs=5)
    ctx = simulate(env, UCB1(2, n_contexts=2), T=3000, seed=1, n_runs=5)
    assert ctx["regret"][:, 1500:].mean() < 0.05 < blind["regret"][:, 1500:].mean()


def test_argmax_ties():
    v = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(argmax_ties(v), [1, 0])
    np.testing.assert_array_equal(argmax_ties(v, u=np.array([0.99, 0.5])), [2, 1])
    np.testing.assert_array_equal(argmax_ties(v, u=np.array([0.0, 0.0])), [1, 0])


def test_cell_statistics():
    s = CellStatistics(2, 3)
    s.add(np.array([0, 2]), np.array([1.0, 0.5]))
    s.add(np.array([0, 2]), np.array([0.0, 0.5]))
    np.testing.assert_array_equal(s.counts, [[2, 0, 0], [0, 0, 2]])
    np.testing.assert_array_equal(s.means(unseen=-1), [[0.5, -1, -1], [-1, -1, 0.5]])


def test_environment_validation():
    with pytest.raises(ValueError, match="lie in"):
        BernoulliBandit([1.2, 0.1])
    with pytest.raises(ValueError, match="probability vector"):
        ContextualBernoulliBandit([0.5, 0.6], [[0.1], [0.2]])
