"""The FairX algorithms and the conventional baselines (:mod:`causalbandits_lib.fairx.algorithms`).

That every policy gives the same numbers all runs at once and one run at a time is checked by the
conformance test on the chapter's registry (``tests/test_contracts.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.runner import simulate
from causalbandits_lib.fairx import algorithms as alg
from causalbandits_lib.fairx.algorithms import RidgeState
from causalbandits_lib.fairx.merit import ExpMerit
from causalbandits_lib.fairx.model import ArmsBandit


def test_ucb_family_starts_round_robin_and_ts_concentrates_on_a_known_best_arm():
    env = ArmsBandit([0.1, 0.9, 0.2])
    res = simulate(env, alg.UCB(0.1, 3), 3, 0, n_runs=2, metrics=("policy",))
    np.testing.assert_array_equal(res["policy"][0, :, 0], np.eye(3))
    res = simulate(
        ArmsBandit([0.1, 0.9, 0.2]), alg.ThompsonSampling(1.0, 0.3, 3), 400, 0, n_runs=2, metrics=("policy",)
    )
    assert res["policy"][:, -50:, 0, 1].mean() > 0.9


def test_bad_hyperparameters_are_named():
    with pytest.raises(ValueError, match=r"w0=\[-1.0\] must be positive"):
        alg.FairXUCB(ExpMerit(1.0), -1.0, 3)
    with pytest.raises(ValueError, match="epsilon=.*at most 1"):
        alg.FairXEG(ExpMerit(1.0), 1.5, 3)
    with pytest.raises(ValueError, match="solver='newton'"):
        alg.FairXUCB(ExpMerit(1.0), 0.1, 3, solver="newton")
    with pytest.raises(ValueError, match="one common length"):
        alg.FairXTS(ExpMerit([1.0, 2.0, 3.0]), [1.0, 2.0], 1.0, 3)


def test_ridge_square_root_update_matches_direct_ridge():
    rng = np.random.default_rng(4)
    d, n = 5, 40
    X, r = rng.normal(size=(n, d)), rng.normal(size=n)
    lam, s2 = np.array([2.0, 0.5]), np.array([1.0, 0.1])
    st_ = RidgeState(d, lam, s2, 1)
    for i in range(n):
        st_.update(np.broadcast_to(X[i], (1, 2, d)), np.full((1, 2), r[i]))
    for g in range(2):
        A = lam[g] * np.eye(d) + X.T @ X / s2[g]
        np.testing.assert_allclose(st_.covariance()[0, g], np.linalg.inv(A), atol=1e-10)
        np.testing.assert_allclose(st_.mean[0, g], np.linalg.solve(A, X.T @ r / s2[g]), atol=1e-10)
