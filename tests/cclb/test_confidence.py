"""Norm-constrained MLE, the radius of the confidence set and the exact optimistic step."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.cclb import confidence as C
from causalbandits_lib.cclb.features import unit_norm_features


def test_mle_matches_scipy_reference(played):
    X, y = played
    for t in (15, 120, 400):
        data = C.LogisticData.from_observations(X[:, :, :t], y[:, :t])
        theta, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
        for r in range(X.shape[0]):
            ref = C.constrained_mle_scipy(X[r, :, :t], y[r, :t], 5.0)
            loss = lambda th: float(data.rows([r]).loss(th[None])[0])  # noqa: E731
            assert loss(theta[r]) <= loss(ref) + 1e-7  # never worse than the reference
            np.testing.assert_allclose(theta[r], ref, atol=2e-4)
            assert np.linalg.norm(theta[r]) <= 5.0 + 1e-9


def test_beta_squared_hand_value_and_notes_table():
    assert C.beta_squared(1, 4, 5.0, 0.05) == pytest.approx(
        40 * math.log(5 / 16 + math.e) + 2 * (math.e - 2 + 5) * math.log(20)
    )
    assert C.beta_squared(10_000, 4, 5.0, 0.05) == pytest.approx(356.2, abs=0.1)  # notes §3.2
    with pytest.raises(ValueError, match="alpha=0"):
        C.beta_squared(1, 4, 5.0, 0.0)


def test_ball_minimiser_solves_the_trust_region_subproblem():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 4, 4))
    H = np.einsum("rij,rkj->rik", A, A)
    theta0 = rng.normal(size=(3, 4)) * np.array([[0.1], [3.0], [10.0]])
    model = C.QuadraticModel(theta0, rng.normal(size=(3, 4)) * 20, H, 1e-3)
    best = model.from_eig(C.ball_minimiser(model, 2.0))
    assert np.all(np.linalg.norm(best, axis=1) <= 2.0 + 1e-9)
    value = lambda th: model.half_dist2(model.to_eig(th))  # noqa: E731 (the model up to a constant)
    for _ in range(200):  # no point of the ball does better
        p = rng.normal(size=(3, 4))
        p *= 2.0 * rng.random((3, 1)) ** 0.25 / np.linalg.norm(p, axis=1, keepdims=True)
        assert np.all(value(p) >= value(best) - 1e-9)


def test_merge_model_replaces_only_the_chosen_runs():
    rng = np.random.default_rng(1)
    make = lambda: C.QuadraticModel(  # noqa: E731
        rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), np.broadcast_to(np.eye(4), (3, 4, 4)), 1e-3
    )
    into, new = make(), make()
    before = into.center.copy()
    C.merge_model(into, new, np.array([False, True, False]))
    np.testing.assert_array_equal(into.center[1], new.center[1])
    np.testing.assert_array_equal(into.center[[0, 2]], before[[0, 2]])


def test_exact_optimistic_step_is_feasible_and_optimal(played):
    X, y = played
    t = 60
    data = C.LogisticData.from_observations(X[:1, :, :t], y[:1, :t])
    theta_hat, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
    loss_hat = float(data.loss(theta_hat)[0])
    beta_sq = float(C.beta_squared(t + 1, 4, 5.0, 0.05))
    cand = unit_norm_features(np.random.default_rng(3).uniform(-1, 1, size=(4, 4)))
    vals, thetas = C.optimistic_exact(X[0, :, :t], y[0, :t], loss_hat, beta_sq, 5.0, cand)
    level = loss_hat + beta_sq
    for k in range(len(cand)):
        th = thetas[k]
        assert float(data.loss(th[None, None])[0, 0]) <= level + 1e-5
        assert np.linalg.norm(th) <= 5 + 1e-6
        # no feasible point on random rays from theta_hat does better
        dirs = np.random.default_rng(k).normal(size=(300, 4))
        for u in dirs:
            lo, hi = 0.0, 20.0
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                p = theta_hat[0] + mid * u / np.linalg.norm(u)
                ok = np.linalg.norm(p) <= 5 and float(data.loss(p[None, None])[0, 0]) <= level
                lo, hi = (mid, hi) if ok else (lo, mid)
            p = theta_hat[0] + lo * u / np.linalg.norm(u)
            assert cand[k] @ p <= vals[k] + 1e-4
    assert np.allclose(C.optimistic_exact(X[0, :, :0], y[0, :0], 0.0, beta_sq, 5.0, cand)[0], 5.0)  # C_1 is the ball
    # a solver that cannot run falls back to SCS, which finds the same optimum
    fallback, _ = C.optimistic_exact(X[0, :, :t], y[0, :t], loss_hat, beta_sq, 5.0, cand, solver="NO_SUCH_SOLVER")
    assert fallback == pytest.approx(vals, abs=1e-4)


def test_exact_optimistic_step_names_the_candidate_when_no_solver_works(played, monkeypatch):
    import cvxpy as cp

    X, y = played

    def fail(self, *args, **kwargs):
        raise cp.error.SolverError("broken on purpose")

    monkeypatch.setattr(cp.Problem, "solve", fail)
    cand = unit_norm_features(np.ones((2, 4)))
    with pytest.raises(
        RuntimeError, match=r"no solution for candidate 0 \(CLARABEL: broken on purpose; SCS: broken on purpose\)"
    ):
        C.optimistic_exact(X[0, :, :30], y[0, :30], 1.0, 1.0, 5.0, cand)
