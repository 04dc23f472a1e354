"""The Yahoo!-shaped simulator and the replay evaluator (:mod:`causalbandits_lib.fairx.yahoo`)."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.fairx.algorithms import FairXLinTS, FairXTS
from causalbandits_lib.fairx.experiments import simulate_fairness
from causalbandits_lib.fairx.merit import ExpMerit
from causalbandits_lib.fairx.yahoo import ReplayEnvironment, YahooLikeSimulator, replay_policy_value


def test_replay_evaluator_is_unbiased_for_a_fixed_policy():
    """Replay of a uniformly logged simulator estimates a fixed policy's click rate, whose exact
    value follows from the simulator's click probabilities."""
    sim = YahooLikeSimulator(seed=1, n_articles=40, pool_size=8, n_days=2, target_ctr=0.2)
    log = sim.log(60000, seed=2)
    ev = slice(0, log.n_events)

    def probs(user, pool):  # a fixed fair policy that depends on the user and the pool
        return ExpMerit(3.0).policy(np.einsum("ni,npi->np", user, sim.article_features[pool]))

    exact = (probs(log.user, log.pool) * sim.click_probability(log.user, log.pool, log.day)).sum(axis=1).mean()
    value, accepted = replay_policy_value(log, ev, probs, np.random.default_rng(3))
    se = np.sqrt(exact * (1 - exact) / accepted)
    assert abs(value - exact) < 4 * se
    assert accepted == pytest.approx(log.n_events / 8, rel=0.05)


def test_replay_environment_counts_only_accepted_rounds():
    sim = YahooLikeSimulator(seed=0, n_articles=30, pool_size=5, n_days=2)
    log = sim.log(2000, seed=1)
    merit = ExpMerit(10.0)
    env = ReplayEnvironment(log, log.days(1, 1), "mab")
    run = simulate_fairness(env, FairXTS(merit, 0.1, 0.1, 30), merit, env.n_rounds, 0, n_runs=3)
    assert run.rounds[..., -1].mean() == pytest.approx(env.n_rounds / 5, rel=0.2)
    assert np.all(run.fairness[..., -1] <= 2 * run.rounds[..., -1] + 1e-9)
    lin = ReplayEnvironment(log, log.days(1, 1), "linear")
    run = simulate_fairness(lin, FairXLinTS(merit, 0.1, 0.1, 36, 5), merit, 500, 0, n_runs=2)
    assert run.rounds[..., -1].max() <= 500
