"""CCLB, epsilon-CCLB, OFULog+ and GLM-UCB: configs, the dual step, the MLE they track, the fast
optimistic step and the layout they read from the streams. (That all runs at once equal one run at a
time is checked on the registry entries by ``tests/test_contracts.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.cclb import confidence as C
from causalbandits_lib.cclb.algorithms import CCLB, GLMUCB, TIE_RULES, CCLBConfig, OFULogConfig, OFULogPlus, dual_step
from causalbandits_lib.cclb.environment import FairLogisticBandit
from causalbandits_lib.core.runner import simulate

from .support import GEN, play


def test_dual_step_projects_onto_zero_rho():
    @given(st.floats(-5, 20), st.floats(-3, 3), st.floats(0, 15), st.floats(0, 2))
    @settings(max_examples=200, deadline=None)
    def check(phi, grad, rho, step):
        out = dual_step(np.array([phi]), np.array([grad]), rho, step)[0]
        assert 0.0 <= out <= rho
        assert out == pytest.approx(min(max(phi + step * grad, 0.0), rho))

    check()
    with pytest.raises(ValueError, match="rho=-1"):
        dual_step(np.zeros(1), np.zeros(1), -1.0, 0.1)


def test_warm_started_single_newton_step_tracks_the_mle():
    env, pol = FairLogisticBandit(GEN), OFULogPlus(loss_bins=0)
    kept = play(env, pol, 401, 2, 2, rounds=[150, 400], probe=lambda t, ctx, X, y, p: p.theta_hat.copy())
    X, y = kept.X, kept.y
    for t, tracked in zip((150, 400), kept.probes):
        # theta_hat stored at round t's probe is the estimate of round t - 1 (data before t - 1)
        data = C.LogisticData.from_observations(X[:, :, : t - 1], y[:, : t - 1])
        exact, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
        np.testing.assert_allclose(tracked, exact, atol=2e-3)


def test_fast_optimistic_step_stays_close_to_the_exact_one():
    """The long runs' optimistic step (sqp on the binned loss) against the exact conic programs."""
    rounds = [40, 150, 350]

    def compare(t, ctx, X, y, pol):
        data = C.LogisticData.from_observations(X, y)
        theta, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
        loss = data.loss(theta)
        b = float(C.beta_squared(t + 1, 4, 5.0, 0.05))
        exact = np.stack(
            [C.optimistic_exact(X[r], y[r], float(loss[r]), b, 5.0, ctx.x[r])[0] for r in range(X.shape[0])]
        )
        vals, _ = pol.optimistic_values(t, ctx)
        choice = np.argmax(np.where(pol.solved, vals, -np.inf), axis=1)
        rows = np.arange(X.shape[0])
        return exact.max(axis=1), exact[rows, choice], vals[rows, choice]

    out = play(FairLogisticBandit(GEN), OFULogPlus(), 351, 4, 2, rounds, compare).probes
    for best, at_choice, ours in out:
        np.testing.assert_allclose(at_choice, best, atol=1e-4)  # the chosen decision is exactly optimal
        np.testing.assert_allclose(ours, best, atol=2e-2)  # and its value close to the exact one


def test_cclb_with_dual_held_at_zero_picks_what_ofulog_plus_picks():
    T = 150
    ofu = simulate(FairLogisticBandit(GEN), OFULogPlus(), T, 3, n_runs=3, metrics=("action",))
    held = simulate(FairLogisticBandit(GEN), CCLB(T, rho=0.0), T, 3, n_runs=3, metrics=("action", "dual"))
    vacuous = simulate(FairLogisticBandit(GEN), CCLB(T, tau=1.0), T, 3, n_runs=3, metrics=("action", "dual"))
    np.testing.assert_array_equal(held["dual"], 0.0)
    np.testing.assert_array_equal(held["action"], ofu["action"])
    np.testing.assert_array_equal(vacuous["dual"], 0.0)  # Remark 2(4): tau >= 1 never violates
    np.testing.assert_array_equal(vacuous["action"], ofu["action"])
    active = simulate(FairLogisticBandit(GEN), CCLB(T, eps=0.14), T, 3, n_runs=3, metrics=("action", "dual"))
    assert active["dual"].max() > 0 and not np.array_equal(active["action"], ofu["action"])


@pytest.mark.parametrize(
    "make", [lambda: CCLB(60, tau=[0.2, 0.2], eps=[0.14, 0.14]), GLMUCB], ids=["eps_cclb", "glm_ucb"]
)
def test_policies_read_the_replicated_layout_from_the_streams(make):
    """Two identical configurations of two replications: the configurations' runs coincide, the
    replications' do not (contexts, reward noise and ties are shared within a replication)."""
    res = simulate(FairLogisticBandit(GEN), make(), 60, 5, n_runs=4, metrics=("action", "reward"), replications=2)
    np.testing.assert_array_equal(res["action"][:2], res["action"][2:])
    np.testing.assert_array_equal(res["reward"][:2], res["reward"][2:])
    assert not np.array_equal(res["action"][0], res["action"][1])


def test_policy_arguments_are_checked():
    with pytest.raises(ValueError, match="optimistic='fast'"):
        OFULogPlus(optimistic="fast")
    with pytest.raises(ValueError, match="eps"):
        CCLB(100, eps=-0.1)
    with pytest.raises(ValueError, match="horizon"):
        CCLB(0)


@pytest.mark.parametrize(
    "field, value",
    [
        ("S", 0.0),
        ("alpha", 1.5),
        ("beta_denominator", -4.0),
        ("loss_bins", -1),
        ("sqp_iterations", 0),
        ("anchors", 1),
        ("extra_solves", 0.5),
        ("feature_map", "cubic"),
        ("mle_warmup", -1),
        ("mle_steps", 0),
        ("tie_atol", -1e-9),
    ],
)
def test_config_errors_name_the_field_and_the_value(field, value):
    with pytest.raises(ValueError, match=f"{field}={value!r} is not allowed"):
        OFULogConfig(**{field: value})


def test_cclb_config_needs_a_horizon_and_checks_its_lists():
    with pytest.raises(ValueError, match="horizon=None is not allowed"):
        CCLBConfig()
    with pytest.raises(ValueError, match=r"tau=\[0.2, -0.1\] is not allowed: it must be non-negative"):
        CCLBConfig(horizon=100, tau=[0.2, -0.1])
    with pytest.raises(ValueError, match="rho=nan"):
        CCLBConfig(horizon=100, rho=float("nan"))
    config = CCLBConfig(horizon=[100, 200], eps=[0.0, 0.14], alpha=0.1)
    assert config.horizon == (100, 200) and config.alpha == 0.1  # lists become tuples (frozen)
    with pytest.raises(AttributeError):
        config.alpha = 0.2


def test_a_config_and_keywords_build_the_same_policy():
    config = CCLBConfig(horizon=300, eps=0.14, alpha=0.1, loss_bins=8)
    a, b = CCLB(config=config), CCLB(300, eps=0.14, alpha=0.1, loss_bins=8)
    assert a.config == b.config and a.name == b.name == "eps-CCLB"
    with pytest.raises(TypeError, match="not both"):
        CCLB(300, config=config)
    with pytest.raises(TypeError, match="must be a CCLBConfig"):
        CCLB(config=OFULogConfig())
    assert OFULogPlus(optimistic="exact").loss_bins == 0  # the exact mode uses the raw observations


def test_fairer_tie_picks_the_smallest_effect_among_the_tied_only():
    from causalbandits_lib.cclb.algorithms import fairer_tie

    index = np.array([[1.0, 1.0, 0.5, 1.0], [0.2, 0.9, 0.9 - 1e-12, 0.1]])
    delta = np.array([[0.3, -0.1, 0.0, 0.2], [0.0, 0.4, -0.05, 0.0]])
    u = np.array([0.99, 0.0])
    # row 0: entries 0, 1, 3 tied; |delta| smallest at 1 (entry 2 is fairer but not tied)
    # row 1: with atol 1e-9 entries 1 and 2 tie and 2 is fairer; with atol 0 only entry 1 is best
    assert fairer_tie(index, 1e-9, delta, u).tolist() == [1, 2]
    assert fairer_tie(index, 0.0, delta, u).tolist() == [1, 1]
    # equally fair tied entries go to the uniform
    flat = np.zeros((1, 4))
    assert fairer_tie(np.ones((1, 4)), 0.0, flat, np.array([0.0])).tolist() == [0]
    assert fairer_tie(np.ones((1, 4)), 0.0, flat, np.array([0.99])).tolist() == [3]


def test_tie_rule_is_validated_and_fairer_lowers_ofulog_plus_violations_on_unit_norm():
    with pytest.raises(ValueError, match="tie_rule"):
        OFULogPlus(tie_rule="first")
    with pytest.raises(ValueError, match="tie_rule"):
        GLMUCB(tie_rule="first")
    env = FairLogisticBandit
    res = {
        rule: simulate(env(), OFULogPlus(tie_rule=rule), 150, 4, n_runs=3, metrics=("violation_pos", "regret"))
        for rule in TIE_RULES
    }
    # unit_norm ties every d > 0 in the context a = w = m = 0 (about 18% of rounds): breaking those
    # ties toward the smaller estimated |Delta| must lower the violations over 150 rounds
    assert res["fairer"]["violation_pos"].sum() < res["random"]["violation_pos"].sum()
