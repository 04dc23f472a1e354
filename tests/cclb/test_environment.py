"""The environment: exact feedback, and the configurations x replications layout read from the streams."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.cclb.environment import FairLogisticBandit
from causalbandits_lib.cclb.oracle import best_feasible, mixture_lp_value
from causalbandits_lib.core.streams import RunStreams

from .support import GEN


def test_feedback_is_exact_from_theta_star():
    env = FairLogisticBandit(GEN)
    env.reset(RunStreams(3, range(2), "env/"))
    ctx = env.observe(0)
    actions = np.array([0, 5])
    fb = env.pull(0, actions)
    theta = np.array(GEN.theta_star)
    rows = np.arange(2)
    r = 1 / (1 + np.exp(-(ctx.x @ theta)))
    effect = 1 / (1 + np.exp(-(ctx.x_cf @ theta))) - r
    np.testing.assert_allclose(fb["expected_reward"], r[rows, actions])
    np.testing.assert_allclose(fb["regret"], best_feasible(r, effect, GEN.tau)["value"] - r[rows, actions])
    np.testing.assert_allclose(fb["regret_plus"], mixture_lp_value(r, effect, GEN.tau) - r[rows, actions])
    np.testing.assert_allclose(fb["violation"], np.abs(effect[rows, actions]) - GEN.tau)
    assert set(np.unique(fb["reward"])) <= {0.0, 1.0}


def test_configurations_of_a_replication_share_contexts_and_noise():
    env = FairLogisticBandit(GEN, tau=[0.2, 0.3])
    env.reset(RunStreams(0, range(6), "env/", replications=3))
    ctx = env.observe(0)
    np.testing.assert_array_equal(ctx.x[:3], ctx.x[3:])
    assert not np.array_equal(ctx.x[0], ctx.x[1])  # replications differ
    fb = env.pull(0, np.zeros(6, dtype=np.int64))
    np.testing.assert_array_equal(fb["reward"][:3], fb["reward"][3:])  # same decision, same noise
    np.testing.assert_allclose(fb["violation"][:3] - fb["violation"][3:], 0.1)  # tau per configuration


def test_a_replicated_run_is_the_run_of_its_replication():
    alone, replicated = FairLogisticBandit(GEN), FairLogisticBandit(GEN)
    alone.reset(RunStreams(0, [1], "env/"))
    replicated.reset(RunStreams(0, [4], "env/", replications=3))  # replication 1 of configuration 1
    for t in range(3):
        np.testing.assert_array_equal(alone.observe(t).x, replicated.observe(t).x)
        a = np.array([t])
        np.testing.assert_array_equal(alone.pull(t, a)["reward"], replicated.pull(t, a)["reward"])


def test_too_few_thresholds_for_the_configurations_are_named():
    env = FairLogisticBandit(GEN, tau=[0.2, 0.3])
    with pytest.raises(ValueError, match="tau gives 2 configurations"):
        env.reset(RunStreams(0, range(6), "env/", replications=2))
    with pytest.raises(ValueError, match="tau=-0.1"):
        FairLogisticBandit(GEN, tau=-0.1)
