"""The round generator: rejection rule, features of the rounds, the stream of rounds, the check."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from causalbandits_lib.cclb.features import raw_features, unit_norm_features
from causalbandits_lib.cclb.generator import GeneratorCheckError, RoundGenerator, RoundStream
from causalbandits_lib.cclb.model import THETA_STAR

from .support import GEN


def test_generator_invariants():
    rounds = GEN.draw(np.random.default_rng(1), 400)
    size = np.abs(rounds.effect)
    assert np.all(np.sum(size <= GEN.tau, axis=1) >= GEN.min_feasible)
    assert np.all(size.min(axis=1) <= GEN.tau - GEN.slater_margin)
    raw = raw_features(rounds.a, rounds.w, rounds.m, rounds.d)
    raw_cf = raw_features(rounds.a, rounds.w, rounds.m, rounds.d, counterfactual=True)
    diff = raw_cf - raw
    np.testing.assert_array_equal(diff[..., 1:], 0.0)  # counterfactual features differ only in A
    np.testing.assert_array_equal(np.abs(diff[..., 0]), 1.0)
    np.testing.assert_allclose(rounds.x, unit_norm_features(raw))
    np.testing.assert_allclose(
        rounds.effect, expit(rounds.x_cf @ np.array(THETA_STAR)) - expit(rounds.x @ np.array(THETA_STAR))
    )
    assert np.all(np.linalg.norm(rounds.x, axis=-1) <= 1 + 1e-12)


def test_round_stream_does_not_depend_on_how_rounds_are_requested():
    a = RoundStream(GEN, np.random.default_rng(5), batch=64)
    b = RoundStream(GEN, np.random.default_rng(5), batch=999)
    first = a.take(30)
    second = a.take(70)
    both = b.take(100)
    np.testing.assert_array_equal(np.concatenate([first.d, second.d]), both.d)


def test_generator_check_flags_a_slack_constraint():
    stats = GEN.check(np.random.default_rng(0), 3000)
    assert stats["unconstrained_mean_excess"] > 0 and stats["unconstrained_infeasible_fraction"] > 0.5
    slack = RoundGenerator(theta_star=(-1.0, -1.0, -0.5, 2.0), tau=0.2, slater_margin=0.05)
    with pytest.raises(GeneratorCheckError, match="slack"):
        slack.check(np.random.default_rng(0), 3000)


def test_bad_generator_arguments_name_the_value():
    with pytest.raises(ValueError, match="tau=1.5"):
        RoundGenerator(tau=1.5)
    with pytest.raises(ValueError, match="min_feasible=25"):
        RoundGenerator(min_feasible=25)
    with pytest.raises(ValueError, match="feature_map='cubic'"):
        RoundGenerator(feature_map="cubic")
