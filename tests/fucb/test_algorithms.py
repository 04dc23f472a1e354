"""D-UCB, F-UCB, the UCB baselines, Fair-LinUCB and the auditor: vectorised runs equal one-at-a-time
runs bit for bit, each converges on a small instance with a known answer, and the regret bounds
match hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.core.runner import simulate, simulate_loop
from causalbandits_lib.core.scm import DiscreteSCM
from causalbandits_lib.fucb import regret_bounds as rb
from causalbandits_lib.fucb.environment import CausalBanditEnv, IIDContexts
from causalbandits_lib.fucb.experiments import FUCB_VARIANTS, audited_run, email_setup, make_policy, unfair_counts
from causalbandits_lib.fucb.fair_linucb import FairLinUCB, linear_features
from causalbandits_lib.fucb.policies import (
    Audited,
    BoundedDiscrepancy,
    DecomposedUCB,
    FairnessAuditor,
    FairUCB,
    IdentifiedDiscrepancy,
)

METRICS_ALL = ("regret", "reward", "discrepancy", "audit_delta_hat", "audit_radius_paper", "audit_radius_diff")


@pytest.fixture(scope="module")
def email():
    return email_setup()


def fair_toy(sigma=0.1):
    """Context S; arm 0 pays 0.3 to S=0 and 1.0 to S=1 (Δ = 0.7), arm 1 pays 0.5 to both (Δ = 0),
    through an intermediate Z."""
    pz1 = np.array([[0.3, 0.5], [1.0, 0.5]])  # P(Z=1 | S, A)
    model = DiscreteSCM(
        {"S": (0, 1), "A": (0, 1), "Z": (0, 1)},
        {"S": ((), [0.5, 0.5]), "A": ((), [0.5, 0.5]), "Z": (("S", "A"), np.stack([1 - pz1, pz1], axis=-1))},
    )
    env = CausalBanditEnv(model, ("S",), ("A",), {"Z": 1.0}, sigma, IIDContexts([0.5, 0.5]), name="fair toy")
    dec = env.decomposition(("Z",))
    env.discrepancy = (dec.probs[1] - dec.probs[0]) @ dec.cell_means * np.ones((2, 1))
    return env, dec


def assert_same(a, b, metrics):
    for m in metrics:
        np.testing.assert_array_equal(a[m], b[m], err_msg=m)


@pytest.mark.parametrize("name", ["UCB", "C-UCB", "D-UCB"])
def test_baselines_vectorised_equal_loop(email, name):
    dec, est = email.decompositions[name], email.estimator
    make = lambda: Audited(make_policy(name, dec), FairnessAuditor(est))  # noqa: E731
    vec = simulate(email.env, make(), 150, 7, n_runs=3, metrics=METRICS_ALL)
    loop = simulate_loop(lambda: email.env, make, 150, 7, 3, metrics=METRICS_ALL)
    assert_same(vec, loop, METRICS_ALL)


@pytest.mark.parametrize(
    "kw",
    [
        {"variant": "F-UCB"},
        {"variant": "F-UCB-diff"},
        {"variant": "F-UCB-diff-clip"},
        {"variant": "F-UCB", "fallback": "unconstrained", "tie_break": "random"},
        {"variant": "F-UCB-diff", "fallback": "safe_arm", "safe_arm": 5, "alpha_r": 2.0, "alpha_c": 0.5},
    ],
)
def test_fucb_vectorised_equal_loop(email, kw):
    kw = dict(kw)
    variant = kw.pop("variant")
    dec = email.decompositions["D-UCB"]
    make = lambda: Audited(make_policy(variant, dec, email.estimator, 0.3, **kw), FairnessAuditor(email.estimator))  # noqa: E731
    metrics = METRICS_ALL + ("fallback", "fair_set_size", "own_ucb_delta")
    vec = simulate(email.env, make(), 150, 3, n_runs=3, metrics=metrics)
    loop = simulate_loop(lambda: email.env, make, 150, 3, 3, metrics=metrics)
    assert_same(vec, loop, metrics)


def test_auditor_equals_fucbs_own_bound(email):
    r = audited_run(
        email.env, make_policy("F-UCB", email.decompositions["D-UCB"], email.estimator, 0.5), email.estimator, 400, 1, 2
    )
    np.testing.assert_allclose(r["own_ucb_delta"], r["audit_delta_hat"] + r["audit_radius_paper"], rtol=0, atol=1e-12)
    # its unfair decisions by its own yardstick are exactly its rounds without a certified arm
    np.testing.assert_array_equal(unfair_counts(r, [0.5])[0], r["fallback"].sum(axis=1))
    assert np.all(unfair_counts(r, [0.1, 0.5], "true") == 0)
    with pytest.raises(ValueError, match="definition"):
        unfair_counts(r, [0.1], "nonsense")


def test_bounded_estimator_and_fair_linucb_vectorised_equal_loop():
    env, dec = fair_toy()
    est = BoundedDiscrepancy(dec, env.varied_contexts("S", []))
    feats = linear_features(env.context_codes, env.arm_codes)
    for make in (
        lambda: Audited(FairUCB(dec, 0.3, est, fair_radius="diff"), FairnessAuditor(est)),
        lambda: Audited(FairLinUCB(feats, env.context_codes[:, 0], tie_break="random"), FairnessAuditor(est)),
    ):
        vec = simulate(env, make(), 200, 5, n_runs=4, metrics=METRICS_ALL)
        loop = simulate_loop(lambda: env, make, 200, 5, 4, metrics=METRICS_ALL)
        assert_same(vec, loop, METRICS_ALL)


def test_point_mass_fast_path_equals_the_general_sums():
    env, _ = fair_toy()
    dec = env.decomposition(("S", "A"))  # W inside the context and arm nodes: point masses
    est = BoundedDiscrepancy(dec, env.varied_contexts("S", []))
    assert est._cells is not None
    general = BoundedDiscrepancy(dec, env.varied_contexts("S", []))
    general._cells = None
    rng = np.random.default_rng(0)
    m, r, c, a = rng.random((6, 4)), rng.random((6, 4)), rng.integers(0, 2, 6), rng.integers(0, 2, 6)
    for x, y in zip(est.estimate(m, r, c), general.estimate(m, r, c)):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(est.estimate(m, r, c, a), general.estimate(m, r, c, a)):
        np.testing.assert_array_equal(x, y)


def _share_in_second_half(result, arm_regret_zero_mask=None):
    return result["regret"][:, result.T // 2 :]


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
        FairUCB(dec, 0.3, est, fair_radius="diff"),
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


def test_fair_linucb_converges_on_a_linear_instance():
    model = DiscreteSCM({"S": (0, 1), "A": (0, 1)}, {"S": ((), [0.5, 0.5]), "A": ((), [0.5, 0.5])})
    env = CausalBanditEnv(model, ("S",), ("A",), {"A": 0.5}, 0.1, IIDContexts([0.5, 0.5]), offset=0.2)
    feats = linear_features(env.context_codes, env.arm_codes)
    res = simulate(env, FairLinUCB(feats, env.context_codes[:, 0]), 1500, 0, n_runs=3)
    assert res["regret"][:, 750:].mean() < 0.01


def test_policies_reject_bad_arguments(email):
    dec, est = email.decompositions["D-UCB"], email.estimator
    with pytest.raises(ValueError, match="fallback"):
        FairUCB(dec, 0.3, est, fallback="pray")
    with pytest.raises(ValueError, match="safe_arm"):
        FairUCB(dec, 0.3, est, fallback="safe_arm")
    with pytest.raises(ValueError, match="tau"):
        FairUCB(dec, 0.0, est)
    with pytest.raises(ValueError, match="fair_radius"):
        FairUCB(dec, 0.3, est, fair_radius="wide")
    with pytest.raises(ValueError, match="tie_break"):
        DecomposedUCB(dec, tie_break="coin")
    with pytest.raises(ValueError, match="unknown algorithm"):
        make_policy("X-UCB", dec)
    with pytest.raises(ValueError, match="same decomposition"):
        FairUCB(email.decompositions["C-UCB"], 0.3, est)
    with pytest.raises(ValueError, match="lam"):
        FairLinUCB(np.zeros((2, 2, 3)), [0, 1], lam=0)
    assert set(FUCB_VARIANTS) == {"F-UCB", "F-UCB-diff", "F-UCB-diff-clip"}


def test_regret_bounds_by_hand_and_monotone():
    W, T = 12, 5000
    d = 1 / T**2
    assert rb.theorem1_bound(W, T, d) == pytest.approx(
        math.sqrt(W * T) * math.log(T) + math.sqrt(32 * W * T * math.log(1 / d))
    )
    assert rb.theorem1_probability(W, T, d) == pytest.approx(
        1 - 2 * d * T * W - math.exp(-W * math.log(T) ** 3 / (32 * math.log(1 / d)))
    )
    assert rb.theorem1_probability(W, T, d, "corrected") == pytest.approx(
        1 - 2 * W / T - math.exp(-W * math.log(T) / 128)
    )
    assert rb.corollary1_bound(W, T) == pytest.approx(16 * math.sqrt(W * T * math.log(T)) * math.log(T))
    tau, d0 = 0.3, 0.0073
    dE = 1 / T**2
    printed = (2 / (tau - d0) + 1) * (
        2 * math.sqrt(2 * T * W * math.log(1 / dE)) + 4 * math.sqrt(T * math.log(2 / dE) * math.log(1 / dE))
    )
    assert rb.theorem3_bound(W, T, tau, d0) == pytest.approx(printed)
    li = math.log(4 * W * T / dE)
    corrected = (2 + 2 / (tau - d0)) * (2 * math.sqrt(2 * T * W * li) + 4 * math.sqrt(T * math.log(2 / dE) * li))
    assert rb.theorem3_bound(W, T, tau, d0, version="corrected") == pytest.approx(corrected)
    assert rb.theorem3_alpha_condition(rb.theorem3_alpha_r(tau, d0), 1.0, tau, d0) < 0
    assert rb.theorem3_alpha_condition(
        rb.theorem3_alpha_r(tau, d0, version="corrected"), 1.0, tau, d0
    ) == pytest.approx(0.0, abs=1e-12)
    t = np.arange(2, 3000)
    for curve in (
        rb.theorem1_bound(W, t, 1 / t**2),
        rb.corollary1_bound(W, t),
        rb.theorem3_bound(W, t, tau, d0),
        rb.theorem3_bound(W, t, tau, d0, version="corrected"),
    ):
        assert np.all(np.diff(curve) > 0)
    assert np.all(np.diff([rb.theorem1_bound(k, T, d) for k in (12, 24, 36)]) > 0)
    with pytest.raises(ValueError, match="n_cells"):
        rb.theorem1_bound(0, T, d)
    with pytest.raises(ValueError, match="delta"):
        rb.theorem1_bound(W, T, 1.5)
    with pytest.raises(ValueError, match="tau"):
        rb.theorem3_bound(W, T, 0.005, 0.0073)
    with pytest.raises(ValueError, match="version"):
        rb.theorem3_bound(W, T, tau, version="draft")
