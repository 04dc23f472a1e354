"""D-UCB, F-UCB, the UCB baselines and Fair-LinUCB: each converges on a small instance with a known
answer, the fast path of the bounded estimator equals its general sums, and the configurations
reject what is not allowed. (All runs at once equal one run at a time: the registry entries and
``tests/test_contracts.py``.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from causalbandits_lib.core.runner import simulate
from causalbandits_lib.core.scm import DiscreteSCM
from causalbandits_lib.fucb.algorithms import (
    BoundedDiscrepancy,
    DecomposedUCB,
    DecomposedUCBConfig,
    FairLinUCB,
    FairUCB,
    FairUCBConfig,
    IdentifiedDiscrepancy,
    TrueDeltaFairUCB,
    WidthRecordingUCB,
    linear_features,
)
from causalbandits_lib.fucb.experiments import email_setup
from causalbandits_lib.fucb.instances.toy import fair_toy
from causalbandits_lib.fucb.model import CausalBanditEnv, IIDContexts


@pytest.fixture(scope="module")
def email():
    return email_setup()


def test_point_mass_fast_path_equals_the_general_sums():
    env, _ = fair_toy()
    dec = env.decomposition(("S", "A"))  # W inside the context and arm nodes: point masses
    est = BoundedDiscrepancy(dec, env.varied_contexts("S", []))
    assert est.cells is not None
    general = BoundedDiscrepancy(dec, env.varied_contexts("S", []))
    general.cells = None
    rng = np.random.default_rng(0)
    m, r, c, a = rng.random((6, 4)), rng.random((6, 4)), rng.integers(0, 2, 6), rng.integers(0, 2, 6)
    for x, y in zip(est.estimate(m, r, c), general.estimate(m, r, c)):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(est.estimate(m, r, c, a), general.estimate(m, r, c, a)):
        np.testing.assert_array_equal(x, y)


def test_ducb_and_ucb_converge_on_the_toy():
    env, dec = fair_toy()
    ducb = simulate(env, DecomposedUCB(dec), 3000, 0, n_runs=4)
    # D-UCB learns the best arm of each context: per-round regret vanishes
    assert ducb["regret"][:, 1500:].mean() < 0.01
    # context-free UCB converges to the arm that is best on average (arm 0: 0.65 vs 0.5)
    ucb = simulate(env, DecomposedUCB(env.decomposition(("A",))), 3000, 0, n_runs=4, metrics=("regret", "discrepancy"))
    late, early = np.mean(ucb["discrepancy"][:, 1500:] != 0), np.mean(ucb["discrepancy"][:, :1500] != 0)
    assert late > 0.8 and late > early


def test_fucb_avoids_the_unfair_arm_on_the_toy():
    env, dec = fair_toy()
    est = IdentifiedDiscrepancy(dec, env.counterfactual_contexts("S"))
    fucb = simulate(
        env,
        FairUCB(dec, est, tau=0.3, fair_radius="diff"),
        2000,
        0,
        n_runs=4,
        metrics=("regret", "discrepancy", "fallback"),
    )
    # with δ_1 = 1 every radius is 0 in round 1 and nothing is estimated yet, so both arms are
    # certified and the tie goes to arm 0; from round 2 on only arm 1 (Δ = 0) is ever played
    assert np.all(fucb["discrepancy"][:, 1:] == 0) and np.all(fucb["fallback"] == 0)
    # D-UCB plays the unfair arm for S = 1 users, where it is best
    ducb = simulate(env, DecomposedUCB(dec), 2000, 0, n_runs=4, metrics=("regret", "discrepancy"))
    assert np.mean(ducb["discrepancy"][:, 1000:] != 0) > 0.4


def test_true_delta_fucb_keeps_to_the_fair_arms_and_is_ducb_when_all_are_fair():
    env, dec = fair_toy()
    assert np.abs(env.discrepancy[:, 0]).min() > 0.3 and np.all(env.discrepancy[:, 1] == 0)  # arm 0 unfair, arm 1 fair
    metrics = ("regret", "discrepancy")
    fair = simulate(env, TrueDeltaFairUCB(dec, env.discrepancy, 0.3), 1500, 0, n_runs=3, metrics=metrics)
    assert np.all(fair["discrepancy"] == 0)  # never the unfair arm, from the first round on
    ducb = simulate(env, DecomposedUCB(dec), 1500, 0, n_runs=3, metrics=metrics)
    loose = simulate(env, TrueDeltaFairUCB(dec, env.discrepancy, 1.0), 1500, 0, n_runs=3, metrics=metrics)
    np.testing.assert_array_equal(loose["regret"], ducb["regret"])  # every arm admitted: D-UCB itself
    assert np.mean(ducb["discrepancy"] != 0) > 0.2  # and D-UCB does play the unfair arm
    # no arm within tau: the arms of smallest |Δ| are allowed
    policy = TrueDeltaFairUCB(dec, np.array([[0.5, 0.4], [0.2, 0.9]]), 0.1)
    np.testing.assert_array_equal(policy.allowed, [[False, True], [True, False]])
    with pytest.raises(ValueError, match="shape"):
        TrueDeltaFairUCB(dec, np.zeros((3, 2)), 0.1)
    with pytest.raises(ValueError, match="tau"):
        TrueDeltaFairUCB(dec, env.discrepancy, 0.0)


def test_fair_linucb_converges_on_a_linear_instance():
    model = DiscreteSCM({"S": (0, 1), "A": (0, 1)}, {"S": ((), [0.5, 0.5]), "A": ((), [0.5, 0.5])})
    env = CausalBanditEnv(model, ("S",), ("A",), {"A": 0.5}, 0.1, IIDContexts([0.5, 0.5]), offset=0.2)
    feats = linear_features(env.context_codes, env.arm_codes)
    res = simulate(env, FairLinUCB(feats, env.context_codes[:, 0]), 1500, 0, n_runs=3)
    assert res["regret"][:, 750:].mean() < 0.01


def test_policies_reject_bad_arguments(email):
    dec, est = email.decompositions["D-UCB"], email.estimator
    with pytest.raises(ValueError, match="fallback='pray'"):
        FairUCB(dec, est, tau=0.3, fallback="pray")
    with pytest.raises(ValueError, match="safe_arm=None"):
        FairUCB(dec, est, tau=0.3, fallback="safe_arm")
    with pytest.raises(ValueError, match="safe_arm=36 is not allowed; use an arm in 0..35"):
        FairUCB(dec, est, tau=0.3, fallback="safe_arm", safe_arm=36)
    with pytest.raises(ValueError, match="tau=0.0"):
        FairUCB(dec, est, tau=0.0)
    with pytest.raises(ValueError, match="fair_radius='wide'"):
        FairUCB(dec, est, tau=0.3, fair_radius="wide")
    with pytest.raises(ValueError, match="tie_break='coin'"):
        DecomposedUCB(dec, tie_break="coin")
    with pytest.raises(ValueError, match="same decomposition"):
        FairUCB(email.decompositions["C-UCB"], est, tau=0.3)
    with pytest.raises(ValueError, match="lam"):
        FairLinUCB(np.zeros((2, 2, 3)), [0, 1], lam=0)
    with pytest.raises(ValueError, match="tie_break"):
        FairLinUCB(np.zeros((2, 2, 3)), [0, 1], tie_break="coin")
    with pytest.raises(TypeError, match="tau"):
        FairUCB(dec, est)
    with pytest.raises(TypeError, match="FairUCBConfig"):
        FairUCB(dec, est, DecomposedUCBConfig())


@pytest.mark.parametrize(
    "field, value",
    [
        ("delta_power", 0.0),
        ("delta_power", "two"),
        ("alpha_r", -1.0),
        ("alpha_c", 0.0),
        ("tau", -0.1),
        ("unseen_mean", "none"),
        ("clip_radius", "yes"),
        ("tie_break", "last"),
        ("fallback", "safe"),
        ("fair_radius", "printed"),
    ],
)
def test_config_errors_name_the_field_and_the_value(field, value):
    with pytest.raises(ValueError, match=f"{field}={value!r} is not allowed"):
        FairUCBConfig(**{"tau": 0.3, field: value})


def test_configs_are_frozen_and_keywords_replace_their_fields(email):
    dec, est = email.decompositions["D-UCB"], email.estimator
    config = FairUCBConfig(tau=0.3, delta_power=3, tie_break="random")
    assert config.delta_power == 3.0 and isinstance(config.delta_power, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.tau = 0.5
    policy = FairUCB(dec, est, config, fallback="unconstrained", name="mine")
    assert policy.config == dataclasses.replace(config, fallback="unconstrained")
    assert (policy.tau, policy.delta_power, policy.tie_break, policy.fallback, policy.name) == (
        0.3,
        3.0,
        "random",
        "unconstrained",
        "mine",
    )
    assert config.fallback == "min_ucb_delta"  # the given configuration is not changed
    plain = DecomposedUCB(dec, alpha_r=2)
    assert plain.config == DecomposedUCBConfig(alpha_r=2.0) and plain.name == "D-UCB"
    # a configuration and the same knobs given by keyword give the same runs
    a = simulate(email.env, DecomposedUCB(dec, DecomposedUCBConfig(tie_break="random")), 60, 1, n_runs=2)
    b = simulate(email.env, DecomposedUCB(dec, tie_break="random"), 60, 1, n_runs=2)
    np.testing.assert_array_equal(a["regret"], b["regret"])


def test_width_recording_ucb_makes_ducb_choices_and_reports_index_minus_exact_mean():
    env, dec = fair_toy()
    plain = simulate(env, DecomposedUCB(dec), 400, 3, n_runs=3, backend="numpy")
    rec = simulate(env, WidthRecordingUCB(dec, env.means), 400, 3, n_runs=3, metrics=("regret", "width"))
    assert rec.info["backend"] == "numpy"
    np.testing.assert_array_equal(rec["regret"], plain["regret"])
    # round 1: no observation and log(1/δ_1) = 0, so the index is the unseen mean 0 and the width is -μ
    first = rec["width"][:, 0]
    assert np.all(first <= 0) and np.all(first >= -1) and np.any(first < 0)
    # later the index of the played arm is optimistic in almost every round (the good event)
    assert np.mean(rec["width"][:, 100:] >= 0) > 0.95
    with pytest.raises(ValueError):
        WidthRecordingUCB(dec, env.means[:, :1])
