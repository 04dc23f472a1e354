"""The problem constants and the bounds of Theorems 1-2, Lemma 8 and Propositions 3-4."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from causalbandits_lib.cclb import theory as Th
from causalbandits_lib.cclb.algorithms import dual_step
from causalbandits_lib.cclb.model import THETA_STAR
from causalbandits_lib.cclb.oracle import mixture_lp_value

from .support import GEN


@given(st.integers(0, 10_000), st.floats(0.0, 0.5), st.floats(0.5, 20.0))
@settings(max_examples=60, deadline=None)
def test_lemma8_holds_for_every_sequence(seed, eps, rho):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 400))
    g = rng.uniform(-1 - eps, 1 + eps, T)
    eta = math.sqrt(T) / rho
    phis = np.zeros(T)
    phi = 0.0
    for t in range(T):
        phis[t] = phi
        phi = float(dual_step(np.array([phi]), np.array([g[t]]), rho, 1 / eta)[0])
    for target in (0.0, rho / 3, rho):
        lhs = Th.lemma8_lhs(phis, g, target)
        assert lhs <= Th.lemma8_rhs(g, target, eta) + 1e-9
        assert Th.lemma8_rhs(g, target, eta) <= Th.lemma8_bound(T, rho, eps) + 1e-9


def test_theorem_shapes_and_propositions():
    T = np.array([1e3, 1e4, 1e5])
    t1 = Th.theorem1_shape(T, 4, 5.0, 103.0, 13.3)
    t2 = Th.theorem2_shape(T, 4, 5.0, 103.0, 13.3, 0.14)
    np.testing.assert_allclose(t2["regret"] - t1["regret"], 13.3 * np.sqrt(T) * ((1.14) ** 2 - 1))
    np.testing.assert_allclose(t1["violation"] - t2["violation"], 0.14 * T - np.sqrt(T) * ((1.14) ** 2 - 1))
    assert np.all(np.diff(t1["regret"]) > 0)
    eps = Th.proposition4_threshold(np.array([1e12]), 4, 5.0, 103.0)[0]
    gamma = Th.theorem1_shape(1e12, 4, 5.0, 103.0, 1.0)["violation"]
    assert np.sqrt(1e12) * eps**2 + (2 * np.sqrt(1e12) - 1e12) * eps + gamma == pytest.approx(0.0, abs=1e-3 * gamma)
    assert np.isnan(Th.proposition4_threshold(np.array([1e4]), 4, 5.0, 103.0)[0])  # the bound is vacuous there
    assert Th.proposition3_gap_bound(0.14, 0.15) == pytest.approx(0.14 / 0.15)
    assert Th.truncation_for_slater(0.15) == pytest.approx(2 / 0.15)
    with pytest.raises(ValueError, match="eps=0.2"):
        Th.proposition3_gap_bound(0.2, 0.15)


def test_proposition3_on_generated_rounds():
    rounds = GEN.draw(np.random.default_rng(2), 300)
    v = mixture_lp_value(rounds.reward, rounds.effect, 0.2)
    v_eps = mixture_lp_value(rounds.reward, rounds.effect, 0.2 - 0.14)
    gap = v - v_eps
    assert np.all(gap >= -1e-12)
    assert np.all(gap <= Th.proposition3_gap_bound(0.14, GEN.slater_margin) + 1e-12)


def test_lp_dual_variable_strong_duality_and_slater_bound():
    rounds = GEN.draw(np.random.default_rng(4), 200)
    phi, q = Th.lp_dual_variable(rounds.reward, rounds.effect, 0.2)
    np.testing.assert_allclose(q, mixture_lp_value(rounds.reward, rounds.effect, 0.2), atol=1e-12)
    assert np.all(phi >= 0) and np.all(phi <= Th.dual_variable_bound(GEN.slater_margin) + 1e-12)


def test_kappa_constants_bound_the_generated_rounds():
    kap = Th.kappa_feature_space(np.array(THETA_STAR))
    assert kap["kappa"] == pytest.approx(1 / (expit(5.0) * (1 - expit(5.0))))
    rounds = GEN.draw(np.random.default_rng(6), 300)
    z = np.concatenate([rounds.x, rounds.x_cf]) @ np.array(THETA_STAR)
    assert kap["logit_min"] - 1e-3 <= z.min() and z.max() <= kap["logit_max"] + 1e-3
    assert 1 / (expit(z) * (1 - expit(z))).min() <= kap["kappa_Z"] * (1 + 1e-3) <= kap["kappa"]


def test_radius_orders_and_exact_ratio():
    from fractions import Fraction

    assert Th.radius_ratio_squared(4, 5) == Fraction(500, 9)
    assert Th.radius_ratio_squared(4, Fraction(5)) >= 25  # at least a factor S
    assert Th.radius_ratio_squared(1, 1) == Fraction(1, 2)  # n = S = 1: no improvement
    t = np.array([2.0, 10.0, 1e4])
    o = Th.radius_orders(t, 4, 5.0)
    np.testing.assert_allclose(o["ours"], np.sqrt(9 * np.log(t)))
    np.testing.assert_allclose(o["abeille"] / o["ours"], math.sqrt(500 / 9))
    with pytest.raises(ValueError):
        Th.radius_ratio_squared(0, 5)


def test_leading_coefficients_and_remark3_difference():
    lead = Th.leading_coefficients(4, 5.0, 2.0)
    assert lead["ofulog_r"] / lead["ofulog_plus"] == pytest.approx(5**1.5)
    assert lead["cclb"] == pytest.approx(2 * lead["ofulog_plus"])
    T = np.array([100.0, 1e6])
    d = Th.theorem2_shape(T, 4, 5.0, 100.0, 13.0, 0.1)["regret"] - Th.theorem1_shape(T, 4, 5.0, 100.0, 13.0)["regret"]
    np.testing.assert_allclose(d, Th.remark3_regret_difference(T, 13.0, 0.1), rtol=1e-9)
    np.testing.assert_allclose(Th.remark3_regret_difference(T, 13.0, 0.1), 13.0 * np.sqrt(T) * 0.21)


def test_analysis_gram_and_lemma7_radius():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 4, 30))
    H = Th.analysis_gram(X, THETA_STAR, 5.0)
    r, k = 1, X[1]
    w = expit(np.asarray(THETA_STAR) @ k)
    ref = sum(w[s] * (1 - w[s]) * np.outer(k[:, s], k[:, s]) for s in range(30)) + np.eye(4) / (4 * 25 * 12)
    np.testing.assert_allclose(H[r], ref, rtol=1e-12)
    from causalbandits_lib.cclb.confidence import beta_squared

    t = 100.0
    c = 12.0
    g2 = (
        2 * c * beta_squared(t, 4, 5.0, 0.05)
        + 4 * (math.e - 2) * c * c * (4 * math.log(1 + 20 * t / 4) + math.log(20))
        + c * 4
        + 1
    )
    assert Th.lemma7_radius(t, 4, 5.0, 0.05) == pytest.approx(math.sqrt(g2))


def test_confidence_boundary_points_lie_on_the_set_boundary():
    from causalbandits_lib.cclb.confidence import LogisticData, constrained_mle

    rng = np.random.default_rng(2)
    X = rng.normal(size=(2, 4, 200))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (rng.random((2, 200)) < expit(np.einsum("k,rkt->rt", np.asarray(THETA_STAR), X))).astype(float)
    data = LogisticData.from_observations(X, y)
    th, _, _, _ = constrained_mle(data, 5.0, max_steps=200, tol=1e-13)
    dirs = rng.normal(size=(16, 4))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    beta2 = 5.0
    pts = Th.confidence_boundary_points(data, th, beta2, 5.0, dirs)
    gap = data.loss(pts) - data.loss(th)[:, None]
    norm = np.linalg.norm(pts, axis=-1)
    assert np.all(gap <= beta2 + 1e-9) and np.all(norm <= 5.0 + 1e-9)
    # each point is on the boundary: on the loss level set or on the ball
    assert np.all((np.abs(gap - beta2) < 1e-6) | (np.abs(norm - 5.0) < 1e-9))
    # a step further along the direction leaves the set
    further = pts + 1e-3 * dirs[None]
    out = (data.loss(further) - data.loss(th)[:, None] > beta2) | (np.linalg.norm(further, axis=-1) > 5.0)
    assert np.all(out)


@pytest.mark.parametrize("binned", [False, True], ids=["raw", "binned"])
def test_compiled_boundary_points_follow_the_numpy_bisection(played, binned):
    """The compiled search takes numpy's steps with its own exp and log: on OFULog+'s data (raw, and
    the binned summary's weighted points) at rounds where the ball or the loss bounds the set, the
    points equal numpy's within 1e-9 relative (measured: a few 1e-16; at the paper's scale
    2.4e-15) and most are identical bit for bit."""
    from causalbandits_lib.cclb.algorithms import OFULogPlus
    from causalbandits_lib.cclb.confidence import LogisticData, beta_squared, constrained_mle
    from causalbandits_lib.cclb.environment import FairLogisticBandit
    from causalbandits_lib.core.runner import simulate

    X, y = played
    rng = np.random.default_rng(3)
    random_dirs = rng.normal(size=(20, 4))
    random_dirs /= np.linalg.norm(random_dirs, axis=1, keepdims=True)
    same = []
    for t in (15, 120, 400):
        if binned:
            policy = OFULogPlus()
            simulate(FairLogisticBandit(GEN), policy, t, 0, n_runs=2, metrics=())
            data = policy.history.data()
        else:
            data = LogisticData.from_observations(X[:, :, :t], y[:, :t])
        th, _, _, _ = constrained_mle(data, 5.0, max_steps=200, tol=1e-13)
        H = Th.analysis_gram(X[:, :, :t], THETA_STAR, 5.0)
        evecs = np.swapaxes(np.linalg.eigh(H)[1], 1, 2)
        dirs = np.concatenate([evecs, -evecs, np.broadcast_to(random_dirs, (2, 20, 4))], axis=1)
        beta2 = float(beta_squared(t + 1, 4, 5.0, 0.05))
        ref = Th.confidence_boundary_points(data, th, beta2, 5.0, dirs, compiled=False)
        fast = Th.confidence_boundary_points(data, th, beta2, 5.0, dirs)
        assert np.abs(fast - ref).max() <= 1e-9 * np.abs(ref).max()
        same.append(np.all(fast == ref, axis=-1))
        on_ball = np.abs(np.linalg.norm(ref, axis=-1) - 5.0) < 1e-9
        assert on_ball.any() if t == 15 else (~on_ball).any()
    assert np.mean(same) > 0.5


def test_pairwise_sum_is_numpys():
    """The compiled search adds the loss's terms in numpy's pairwise order, bit for bit."""
    rng = np.random.default_rng(4)
    nodes, sums = np.empty((128, 3), dtype=np.int64), np.empty(128)
    for n in [1, 7, 8, 9, 127, 128, 129, 136, 1000, 8191, 8193, 10_000, 33_333]:
        a = rng.normal(size=(3, n)) * rng.exponential(size=(3, n)) * 1e3
        totals = a.sum(axis=-1)
        for i in range(3):
            assert Th._pairwise_sum(np.ascontiguousarray(a[i]), n, nodes, sums) == totals[i], n


def test_elliptical_potential_and_lemmas_1_2():
    rng = np.random.default_rng(3)
    U = rng.normal(size=(3, 4, 300))
    U *= 0.5 / np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 0.5)  # ||u|| <= B = 1/2
    lam = 1e-3
    pot = Th.elliptical_potential(U, lam)
    V = lam * np.eye(4)
    ref = 0.0
    for t in range(300):
        u = U[0, :, t]
        ref += u @ np.linalg.solve(V, u)
        V += np.outer(u, u)
    assert pot[0, -1] == pytest.approx(ref, rel=1e-9)
    assert np.all(pot[:, -1] <= Th.lemma2_bound(300, 4, 0.25, lam))
    logdet = np.linalg.slogdet(lam * np.eye(4) + U @ np.swapaxes(U, 1, 2))[1]
    assert np.all(logdet <= Th.lemma1_bound(300, 4, 0.25, lam))
    assert logdet[0] == pytest.approx(np.linalg.slogdet(V)[1])


def test_scalar_lemmas_3_4_6_and_freedman():
    z1, z2 = np.meshgrid(np.linspace(-5, 5, 41), np.linspace(-5, 5, 41), indexing="ij")
    left, right = Th.lemma3_sides(z1, z2)
    assert np.all(left >= right - 1e-15)
    # the left side is the mean of g' over the segment (midpoint rule), here from z1 = 1 to z2 = 2.5
    v = (np.arange(20000) + 0.5) / 20000
    p = expit(1.0 + v * 1.5)
    assert left[24, 30] == pytest.approx(np.mean(p * (1 - p)), rel=1e-7)
    assert (z1[24, 30], z2[24, 30]) == pytest.approx((1.0, 2.5))
    root, bound = Th.lemma4_sides(np.array([0.0, 3.0, 1.0]), np.array([4.0, 0.0, 2.0]))
    np.testing.assert_allclose(root**2, np.array([0.0, 3.0, 1.0]) * root + np.array([4.0, 0.0, 2.0]))
    assert np.all(root <= bound + 1e-15)
    kl = Th.bernoulli_kl_forms(z1, z2)
    np.testing.assert_allclose(kl["bregman"], kl["direct"], atol=1e-12)
    np.testing.assert_allclose(kl["integral"], kl["direct"], atol=1e-12)
    # Freedman excess by hand: X = (1, -1, 1), var = (1, 1, 1), eta = 1, alpha = e^-1
    ex = Th.freedman_excess(np.array([[1.0, -1.0, 1.0]]), np.ones((1, 3)), 1.0, math.exp(-1))
    assert ex[0] == pytest.approx(max(1 - (math.e - 2) - 1, 0 - 2 * (math.e - 2) - 1, 1 - 3 * (math.e - 2) - 1))
    with pytest.raises(ValueError):
        Th.freedman_excess(np.ones((1, 2)), np.ones((1, 2)), 0.0, 0.1)


def test_losses_at_points_equal_the_numpy_loss_to_rounding(played):
    """The compiled loss of the slices against :meth:`LogisticData.loss`, raw and binned data."""
    from causalbandits_lib.cclb.confidence import LogisticData

    X, y = played
    rng = np.random.default_rng(5)
    pts = rng.normal(size=(300, 4)) * 3
    for t in (7, 129, 400):
        data = LogisticData.from_observations(X[:1, :, :t], y[:1, :t])
        ref = data.loss(pts[None])[0]
        np.testing.assert_allclose(Th.losses_at_points(data, pts), ref, rtol=1e-12, atol=0)
        weighted = LogisticData(data.X, rng.integers(1, 5, size=(1, t)).astype(float), data.b)
        np.testing.assert_allclose(Th.losses_at_points(weighted, pts), weighted.loss(pts[None])[0], rtol=1e-12, atol=0)


def test_loss_gap_slice_compiled_matches_the_numpy_reference(played):
    from causalbandits_lib.cclb import experiments as E

    X, y = played
    e1, e2 = np.eye(4)[0], np.eye(4)[3]
    for t in (40, 400):
        fast = E.loss_gap_slice(X[0, :, :t], y[0, :t], 5.0, np.zeros(4), e1, e2, 6.0, 31)
        ref = E.loss_gap_slice(X[0, :, :t], y[0, :t], 5.0, np.zeros(4), e1, e2, 6.0, 31, compiled=False)
        np.testing.assert_array_equal(fast[0], ref[0])
        np.testing.assert_allclose(fast[1], ref[1], rtol=1e-12, atol=1e-10)
        assert np.array_equal(fast[1] <= 0, ref[1] <= 0)
