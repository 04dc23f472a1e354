"""The regret bounds and the lower-bound constructions (:mod:`causalbandits_lib.fairx.theory`)."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.fairx import theory


def test_bounds_grow_like_root_t_and_lower_bound_constant():
    T = np.array([1e4, 4e4, 1e8, 4e8])
    b1 = theory.fairx_ucb_fairness_bound(T, 14, 0.05, 1.0)
    assert 2.0 < b1[1] / b1[0] < 2.2 and 2.0 < b1[3] / b1[2] < 2.1
    b3 = theory.fairx_linucb_fairness_bound(T, 50, 0.05, 1.0)
    assert 2.0 < b3[3] / b3[2] < 2.3
    assert theory.theory_width(2e6, 14, 0.05) == pytest.approx(6.6, abs=0.05)
    assert theory.linucb_beta(2e6, 50, 0.05) == pytest.approx(646, rel=0.02)
    for pair in (theory.min_merit_lower_bound_pair(10000), theory.lipschitz_lower_bound_pair(10000)):
        assert pair.bound == pytest.approx(np.exp(-1) / 12)
        assert pair.kl_per_pull() * 10000 == pytest.approx(1.0)
    p1, p2 = theory.min_merit_lower_bound_pair(10000).optimal_policies()
    np.testing.assert_allclose(p1, [1 / 3, 2 / 3])
    np.testing.assert_allclose(p2, [0.5, 0.5])
    p1, _ = theory.lipschitz_lower_bound_pair(10000).optimal_policies()
    np.testing.assert_allclose(p1, [2 / 3, 1 / 3])


def test_fixed_policy_between_the_optima_pays_their_distance_far_above_the_lower_bound():
    # the reference of the lower-bound construction claims: a policy that ignores the data pays
    # FR1/T + FR2/T >= ||π*1 − π*2||_1 (triangle inequality), with equality anywhere on the segment
    # between the optima; both constructions put the optima 1/3 apart, about 11 times e^-1/12
    for make in (theory.min_merit_lower_bound_pair, theory.lipschitz_lower_bound_pair):
        for T in (100, 10000, 10**6):
            pair = make(T)
            p1, p2 = pair.optimal_policies()
            assert np.abs(p1 - p2).sum() == pytest.approx(1 / 3)
            for w in np.linspace(0.0, 1.0, 11):  # every fixed policy on the segment pays exactly the distance
                pi = w * p1 + (1 - w) * p2
                assert np.abs(pi - p1).sum() + np.abs(pi - p2).sum() == pytest.approx(1 / 3)
            assert 10 < (1 / 3) / pair.bound < 11


def test_bound_ratio_d_exponent_tends_to_one_half():
    # at T >> d the ratio (B3)/(B5) grows like √d up to log factors; at T comparable to d it grows slower
    far = theory.bound_ratio_d_exponent(1e20, 10, 100, 10, 0.05)
    near = theory.bound_ratio_d_exponent(2e4, 10, 100, 10, 0.05)
    assert 0.4 < far < 0.55 and near < far
    r10 = float(
        theory.fairx_linucb_fairness_bound(1e20, 10, 0.05, 1.0) / theory.fairx_lints_fairness_bound(1e20, 10, 10, 1.0)
    )
    r100 = float(
        theory.fairx_linucb_fairness_bound(1e20, 100, 0.05, 1.0) / theory.fairx_lints_fairness_bound(1e20, 100, 10, 1.0)
    )
    assert np.isclose(far, np.log(r100 / r10) / np.log(10))


def test_elliptical_potential_identities_and_bounds():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    p = theory.elliptical_potential(X)
    assert np.allclose(p["log_prod"], p["log_det"], rtol=1e-10, atol=1e-10)  # Lemma A.6.6
    assert np.all(p["log_det"] <= p["log_det_bound"] + 1e-12)  # Lemma A.6.7
    assert np.all(p["sum_w2"] <= p["potential_bound"])  # Lemma A.6.8
    # contexts longer than 1 break Lemma A.6.8's premise and its bound
    big = theory.elliptical_potential(10 * X[:20])
    assert np.any(big["sum_w2"] > big["potential_bound"])


def test_ellipsoid_coverage_holds_with_the_theory_radius_and_fails_without_it(monkeypatch):
    ok = theory.ellipsoid_coverage(3, 300, 20, 0.05, np.random.default_rng(0))
    assert ok.shape == (20,) and ok.all()
    # a radius of 1e-4 instead of β_t cannot cover a parameter of norm 1 from noisy rewards
    monkeypatch.setattr(theory, "linucb_beta", lambda t, d, delta, W=1.0: 1e-8)
    assert not theory.ellipsoid_coverage(3, 300, 20, 0.05, np.random.default_rng(0)).any()


def test_ucb_proof_steps_width_sum_follows_from_the_counts():
    """The played widths over the rounds t > K are Σ_a Σ_{n=1}^{N_a - 1} 1/√n of the final counts
    (each arm's first pull is in the first K rounds), below 2√(TK); the per-round step of A.5
    holds on the covered rounds at the theory width."""
    from causalbandits_lib.core.runner import simulate
    from causalbandits_lib.fairx.algorithms import FairXUCB
    from causalbandits_lib.fairx.merit import ExpMerit
    from causalbandits_lib.fairx.model import ArmsBandit

    merit, K, T = ExpMerit(3.0), 4, 400
    rec = theory.UCBProofSteps(merit)
    policy = FairXUCB(merit, float(theory.theory_width(T, K, 0.05)), K, solver="exact")
    simulate(
        ArmsBandit(np.array([0.2, 0.4, 0.5, 0.8])), policy, T, 0, n_runs=3, metrics=(), recorders=[rec], backend="numpy"
    )
    out = rec.result()
    counts = policy.counts[:, 0]  # (R, K) after T rounds
    from_counts = np.array([sum(np.sum(1 / np.sqrt(np.arange(1, n))) for n in row.astype(int)) for row in counts])
    np.testing.assert_allclose(out["played"][:, 0], from_counts, rtol=1e-12)
    assert np.all(out["rounds"] == T - K)
    assert np.all(out["played"] <= theory.width_sum_bound(T, K))
    assert np.all(out["expected"] > 0) and np.all(out["covered"] <= out["rounds"])
    assert out["covered"].sum() > 0 and np.all(out["max_step_ratio"] <= 1.0)
    np.testing.assert_allclose(theory.azuma_width_bound(100, 0.05), np.sqrt(200 * np.log(80)))
    with pytest.raises(TypeError):
        theory.UCBProofSteps(object())


def test_linucb_proof_steps_cauchy_schwarz_and_premise():
    """Lemma A.6.3's ratio never exceeds 1; with the theory's radius μ* is in CR_t on most rounds
    and the per-round step of A.6.5 holds there; with a tiny radius the premise fails."""
    from causalbandits_lib.core.runner import simulate
    from causalbandits_lib.fairx.algorithms import FairXLinUCB
    from causalbandits_lib.fairx.merit import ExpMerit
    from causalbandits_lib.fairx.model import GaussianContextBandit

    merit, d, K, T = ExpMerit(2.0), 4, 5, 150
    out = {}
    for beta in (float(theory.linucb_beta(T, d, 0.05, 2.0)), 1e-4):
        env = GaussianContextBandit(None, K, 1.0, dim=d, prior_sd=1 / np.sqrt(d))
        rec = theory.LinUCBProofSteps(merit, env)
        simulate(env, FairXLinUCB(merit, beta, 1.0, d, K), T, 1, n_runs=3, metrics=(), recorders=[rec], backend="numpy")
        out[beta] = rec.result()
    wide, tiny = out.values()
    assert np.all(wide["max_cs_ratio"] <= 1 + 1e-9) and np.all(wide["max_cs_ratio"] > 0.5)
    assert wide["covered"].sum() / wide["rounds"].sum() > 0.9 and np.all(wide["max_step_ratio"] <= 1.0)
    assert tiny["covered"].sum() == 0
    assert np.all(wide["played"] <= np.sqrt(2 * T * d * np.log1p(T / d)))
    assert np.all(wide["played"] > 0) and np.all(wide["played"] <= T)
