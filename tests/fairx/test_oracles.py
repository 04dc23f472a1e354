"""The FairX algorithms against oracles written independently of the implementation.

Each test builds a tiny instance on which the paper's formulas give the deployed policy in closed
form (or its exact distribution), reconstructs the history of every run from the recorded rewards
(the arms pay certain rewards, 1 for arm 0 and 0 for arm 1, so a reward names the arm pulled), and
compares the policy the library deployed in every round with the formula, on the numpy classes
and on the compiled kernels. The conformance test compares the two paths with each other; these
tests compare each with the paper.
"""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.runner import simulate
from causalbandits_lib.fairx import algorithms as alg
from causalbandits_lib.fairx.merit import ExpMerit
from causalbandits_lib.fairx.model import ContextTableBandit, MultiLabelBandit

BACKENDS = ["numpy", "compiled"]
#: one example whose label is 1 for arm 0 and 0 for arm 1: arm 0 always pays 1, arm 1 always 0
CERTAIN_LABELS = [[1.0, 0.0]]


def _counts_before(reward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pulls of arm 0 and of arm 1 before every round, from rewards (..., T) that name the arm."""
    pulled0 = reward == 1.0
    n0 = np.cumsum(pulled0, axis=-1) - pulled0
    t = np.arange(reward.shape[-1])
    return n0.astype(float), (t - n0).astype(float)


def _two_arm_policy(logit: np.ndarray) -> np.ndarray:
    """``softmax((logit, 0))`` along a new last axis: the fair policy of two arms whose merits are
    in the ratio ``exp(logit)``."""
    p0 = 1.0 / (1.0 + np.exp(-logit))
    return np.stack([p0, 1.0 - p0], axis=-1)


def _run(env, policy, T: int, seed: int, R: int, backend: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate ``policy`` on ``env`` on one backend; return the pulls of arm 0 and of arm 1 before
    every round (read from the certain rewards) and the deployed policies, each as (R, G, T[, K])."""
    res = simulate(env, policy, T, seed=seed, n_runs=R, metrics=("policy", "reward"), backend=backend)
    assert res.info["backend"] == backend
    n0, n1 = _counts_before(np.moveaxis(res["reward"], 1, -1))
    return n0, n1, np.moveaxis(res["policy"], 1, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fairx_ucb_deploys_the_fair_policy_of_the_optimistic_corner(backend):
    """Oracle: Algorithm 1 worked by hand on two arms with certain rewards 1 and 0.

    With ``N_a`` pulls the box is ``[μ̂_a ± w0/√N_a]`` with ``μ̂ = (1, 0)``. On it,
    ``∂V/∂μ_0 = π(0)(1 + c(μ_0 − V)) > 0`` (arm 0 is the best, ``μ_0 >= V``) and
    ``∂V/∂μ_1 = π(1)(1 + c(μ_1 − V)) < 0`` (for ``c = 4``, ``w0 <= 0.1``: ``μ_1 <= 0.1`` while
    ``V >= 0.8``, so ``μ_1 < V − 1/c``): V is monotone on the box and its maximiser (Step 7) is the
    corner ``(1 + w0/√N_0, −w0/√N_1)``; with a learning rate of 10 one projected gradient step
    already lands there (each coordinate moves far beyond the box and is clipped back). The
    deployed policy must then be ``softmax(c · corner)`` (Step 8) in every round after the K
    round-robin pulls, and one-hot before. The oracle uses only the formula for the box and the
    sign of the gradient, not the library's solver.
    """
    c, w0 = 4.0, np.array([0.1, 0.03])
    T, R = 300, 3
    n0, n1, policy = _run(
        MultiLabelBandit(CERTAIN_LABELS), alg.FairXUCB(ExpMerit(c), w0, 2, lr=10.0, steps=10), T, 5, R, backend
    )
    assert n1[..., -1].min() >= 2 and n0[..., -1].min() >= 100  # both arms keep being pulled
    np.testing.assert_array_equal(policy[:, :, :2], np.broadcast_to(np.eye(2), (R, 2, 2, 2)))
    n0, n1 = n0[..., 2:], n1[..., 2:]
    upper0 = 1.0 + w0[:, None] / np.sqrt(n0)
    lower1 = 0.0 - w0[:, None] / np.sqrt(n1)
    np.testing.assert_allclose(policy[:, :, 2:], _two_arm_policy(c * (upper0 - lower1)), rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fairx_ts_samples_from_the_conjugate_gaussian_posterior(backend):
    """Oracle: the Gaussian-Gaussian posterior of Eq. (E11b) and the distribution it implies for
    the deployed policy.

    Prior ``N(0, σ_0²)`` per arm and likelihood ``N(μ_a, σ²)``: after ``N_a`` pulls with reward sum
    ``S_a`` the posterior is ``N(m_a, v_a)`` with ``1/v_a = 1/σ_0² + N_a/σ²`` and
    ``m_a = v_a S_a/σ²``. FairX-TS deploys ``softmax(c μ_t)`` for one draw ``μ_t``, so on two arms
    ``ln(π(0)/π(1))/c = μ_{t,0} − μ_{t,1} ~ N(m_0 − m_1, v_0 + v_1)``, a fresh draw each round.
    Standardised with the history of each run (certain rewards 1 and 0), the values of all rounds
    and runs are independent standard normals: their mean and variance must be 0 and 1 within
    five standard errors. The oracle is the textbook conjugate update, not the library's.
    """
    c, prior_sd, reward_sd = 2.0, 1.0, np.array([0.5, 1.0])
    T, R = 400, 20
    n0, n1, policy = _run(
        MultiLabelBandit(CERTAIN_LABELS), alg.FairXTS(ExpMerit(c), prior_sd, reward_sd, 2), T, 11, R, backend
    )
    s0 = n0  # arm 0 paid 1 every time, arm 1 paid 0
    lik = 1.0 / reward_sd[:, None] ** 2
    prec0 = 1.0 / prior_sd**2 + n0 * lik
    prec1 = 1.0 / prior_sd**2 + n1 * lik
    m0 = s0 * lik / prec0
    diff = np.log(policy[..., 0] / policy[..., 1]) / c
    z = (diff - m0) / np.sqrt(1.0 / prec0 + 1.0 / prec1)
    for g in range(len(reward_sd)):
        zg = z[:, g].ravel()
        n = zg.size
        assert abs(zg.mean()) < 5.0 / np.sqrt(n), (g, zg.mean())
        assert abs(zg.var() - 1.0) < 5.0 * np.sqrt(2.0 / n), (g, zg.var())


@pytest.mark.parametrize("backend", BACKENDS)
def test_fairx_linucb_reaches_the_top_of_the_confidence_ellipsoid(backend):
    """Oracle: Step 7 of Algorithm 3 in closed form on a two-armed linear bandit whose second arm
    has the zero context.

    Arm 0 always has the unit context ``x`` and pays 1; arm 1 has context 0 (score 0, pays 0).
    After ``N`` pulls of arm 0 the ridge quantities are ``Σ = λI + N x xᵀ`` and ``b = N x``, so
    ``x·μ̂ = N/(λ + N)`` and ``‖x‖_{Σ⁻¹}² = 1/(λ + N)`` (Sherman-Morrison by hand). Over the
    ellipsoid ``‖μ − μ̂‖_Σ <= √β`` the score ``z = x·μ`` ranges up to ``x·μ̂ + √β ‖x‖_{Σ⁻¹}``, and
    ``V = σ(cz) z`` increases with ``z >= 0``, so the maximiser of Step 7 gives
    ``z* = N/(λ + N) + √(β/(λ + N))`` and the deployed policy is ``softmax(c z*, 0)``. Every
    gradient step points the same way (the arm-0 direction), so a learning rate of 10 reaches the
    boundary within the 30 steps. The oracle is the paper's ellipsoid and ridge formulas.
    """
    d = 3
    x = np.array([0.48, -0.6, 0.64])  # unit norm
    contexts = np.stack([x, np.zeros(d)])[None]  # one example, (1, K=2, d)
    env = ContextTableBandit(contexts, np.zeros((1, 2)), np.array(CERTAIN_LABELS))
    c, beta, ridge = np.array([2.0, 3.0]), np.array([4.0, 0.25]), np.array([1.0, 2.0])
    T, R = 300, 2
    n0, _, policy = _run(env, alg.FairXLinUCB(ExpMerit(c), beta, ridge, d, 2, lr=10.0, steps=30), T, 2, R, backend)
    assert n0[..., -1].min() >= 100
    lam, b = ridge[:, None], beta[:, None]
    z_star = n0 / (lam + n0) + np.sqrt(b / (lam + n0))
    np.testing.assert_allclose(policy, _two_arm_policy(c[:, None] * z_star), rtol=1e-9, atol=1e-13)
