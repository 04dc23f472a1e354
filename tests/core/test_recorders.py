"""Recorders: what the one simulation loop keeps."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.environments import BernoulliBandit, GaussianBandit
from causalbandits_lib.core.policies import UCB1
from causalbandits_lib.core.protocols import Recorder
from causalbandits_lib.core.recorders import AtRounds, PerRound, RecorderBase, RunningSums
from causalbandits_lib.core.runner import simulate

MEANS = [0.7, 0.5, 0.3]


def _regret_and_reward(t, context, actions, feedback, policy):
    return {"regret": feedback["regret"], "reward": feedback["reward"]}


def test_recorders_follow_the_protocol():
    for rec in (PerRound(), RunningSums(_regret_and_reward, [1]), AtRounds(lambda t, c, p: t, [0]), RecorderBase()):
        assert isinstance(rec, Recorder)


def test_running_sums_equal_the_cumulative_per_round_values_bit_for_bit():
    checkpoints = [1, 7, 50, 333, 1000]
    res = simulate(
        GaussianBandit(MEANS),
        UCB1(3),
        1000,
        seed=4,
        n_runs=5,
        recorders=[RunningSums(_regret_and_reward, checkpoints, name="sums")],
    )
    sums = res.recorded["sums"]
    assert sums.t.tolist() == checkpoints
    for name in ("regret", "reward"):
        expected = np.cumsum(res[name], axis=1)[:, np.array(checkpoints) - 1]
        np.testing.assert_array_equal(sums[name], expected)
    np.testing.assert_array_equal(sums.mean("reward"), sums["reward"] / np.array(checkpoints))


def test_running_sums_reject_checkpoints_outside_the_horizon():
    with pytest.raises(ValueError, match="checkpoints must lie in 1..T=10"):
        simulate(BernoulliBandit(MEANS), UCB1(3), 10, 0, n_runs=1, recorders=[RunningSums(_regret_and_reward, [11])])
    with pytest.raises(ValueError, match="at least one round"):
        RunningSums(_regret_and_reward, [])


def test_at_rounds_probes_before_the_decision_and_does_not_change_the_run():
    seen = []

    def probe(t, context, policy):
        seen.append(t)
        return policy.stats.counts.sum(axis=1).copy()  # rounds played so far, per run

    plain = simulate(BernoulliBandit(MEANS), UCB1(3), 60, seed=1, n_runs=3)
    probed = simulate(BernoulliBandit(MEANS), UCB1(3), 60, seed=1, n_runs=3, recorders=[AtRounds(probe, [0, 10, 59])])
    assert seen == [0, 10, 59]
    assert [v.tolist() for v in probed.recorded["at_rounds"]] == [[0, 0, 0], [10, 10, 10], [59, 59, 59]]
    np.testing.assert_array_equal(plain["regret"], probed["regret"])


def test_per_round_names_what_is_missing_and_keeps_nothing_when_asked():
    with pytest.raises(KeyError, match=r"\['nope'\] are not produced"):
        simulate(BernoulliBandit(MEANS), UCB1(3), 5, 0, n_runs=2, metrics=("nope",))
    res = simulate(BernoulliBandit(MEANS), UCB1(3), 5, 0, n_runs=2, metrics=())
    assert res.metrics == {}
    every = simulate(BernoulliBandit(MEANS), UCB1(3), 5, 0, n_runs=2, metrics=None)
    assert set(every.metrics) == {"reward", "regret"}


def test_recorder_names_must_be_distinct():
    with pytest.raises(ValueError, match="distinct"):
        simulate(
            BernoulliBandit(MEANS),
            UCB1(3),
            5,
            0,
            n_runs=1,
            recorders=[RunningSums(_regret_and_reward, [5]), RunningSums(_regret_and_reward, [5])],
        )
