"""Oracle tests of the chapter (issue 29): behaviour the paper fixes, checked against values computed
here from the paper's formulas on tiny cases (hand formulas, closed forms, scipy), never against the
implementation's own outputs. The CCLB tests run both backends: the compiled kernel repeats the
numpy class, so a bug put into both passes the conformance checks and only an oracle sees it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from causalbandits_lib.cclb.algorithms import CCLB, GLMUCB
from causalbandits_lib.cclb.environment import FairContext, FairLogisticBandit
from causalbandits_lib.cclb.generator import RoundGenerator
from causalbandits_lib.core.runner import simulate
from causalbandits_lib.core.streams import RunStreams

from .support import GEN

BACKENDS = ["numpy", "compiled"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_eps_cclb_dual_grows_by_at_least_eps_minus_tau_over_eta(backend):
    """Eq. (11): ``φ_{t+1} = Proj_[0,ρ](φ_t + (|Δ̃_t(d_t)| - τ + ε)/η)`` with ``1/η = ρ/√T``.

    Oracle: ``|Δ̃| ≥ 0``, so the dual gradient is at least ``ε - τ``; with ``ε > τ`` every step raises
    ``φ`` by at least ``(ε - τ) ρ/√T`` until it reaches ``ρ``. This needs nothing of the algorithm but
    the sign of a norm: the bound is computed here from ``ε``, ``τ``, ``ρ`` and ``T`` alone. (The
    paper's tightness makes ε-CCLB *more* conservative than CCLB: it works with the threshold
    ``τ - ε``.) The run's own estimate also satisfies Eq. (11) exactly.
    """
    T, tau, eps, rho = 40, 0.05, 0.14, 2 / 0.15
    step = rho / math.sqrt(T)
    res = simulate(
        FairLogisticBandit(GEN),
        CCLB(T, tau=tau, eps=eps, rho=rho),
        T,
        2,
        n_runs=2,
        metrics=("dual", "estimated_violation"),
        backend=backend,
    )
    assert res.info["backend"] == backend
    phi, est = res["dual"], res["estimated_violation"]
    np.testing.assert_array_equal(phi[:, 0], 0.0)  # φ_1 = 0
    grow = np.diff(phi, axis=1)
    floor = np.minimum((eps - tau) * step, rho - phi[:, :-1])
    assert np.all(grow >= floor - 1e-12), (grow - floor).min()
    assert np.all(est >= -tau - 1e-12)  # |Δ̃| - τ ≥ -τ
    np.testing.assert_allclose(phi[:, 1:], np.clip(phi[:, :-1] + step * (est[:, :-1] + eps), 0, rho), atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("feature_map", ["unit_norm", "half_scaled"])
def test_first_round_constraint_estimate_uses_the_optimistic_parameter(backend, feature_map):
    """At round 1 the confidence set is the whole ball ``||θ|| ≤ S`` (notes §3.2: ``C_1 = Θ``), so the
    optimistic parameter of the optimistic decision ``d`` is ``θ̃_1 = S x_d/||x_d||`` (the maximiser
    of ``x_d^T θ`` on the ball), and CCLB's constraint estimate is
    ``|Δ̃_1(d_1)| - τ = |g(x'_d^T θ̃_1) - g(x_d^T θ̃_1)| - τ`` (Algorithm 1, lines 4-5: the same ``θ̃_t``
    serves the reward and the constraint of every decision).

    Oracle: that closed form, evaluated here on the round's features read from the environment's
    streams; ``φ_1 = 0``, so the decision played is the optimistic one. An estimate made with the
    MLE instead (``θ̂_1 = 0``) would give ``-τ``.
    """
    gen = RoundGenerator(feature_map=feature_map)
    n_runs, seed, S, tau = 8, 7, 5.0, 0.2
    res = simulate(
        FairLogisticBandit(gen),
        CCLB(20, tau=tau, S=S, feature_map=feature_map),
        2,
        seed,
        n_runs=n_runs,
        metrics=("action", "estimated_violation"),
        backend=backend,
    )
    assert res.info["backend"] == backend
    env = FairLogisticBandit(gen)
    env.reset(RunStreams(seed, range(n_runs)).child("env/"))
    ctx = env.observe(0)
    rows = np.arange(n_runs)
    d = res["action"][:, 0].astype(int)
    x, x_cf = ctx.x[rows, d], ctx.x_cf[rows, d]
    norms = np.linalg.norm(ctx.x, axis=-1)
    np.testing.assert_allclose(norms[rows, d], norms.max(axis=1), rtol=1e-12)  # the optimistic decision
    theta = S * x / np.linalg.norm(x, axis=1, keepdims=True)
    expected = np.abs(expit(np.sum(x_cf * theta, axis=1)) - expit(np.sum(x * theta, axis=1))) - tau
    assert np.sum(np.abs(expected + tau) > 1e-3) >= 2  # informative: away from the MLE's value -τ
    np.testing.assert_allclose(res["estimated_violation"][:, 0], expected, atol=1e-7)


def test_glm_ucb_index_on_a_hand_computed_history():
    """GLM-UCB's index ``g(x^T θ̂) + ρ_t ||x||_{V_t^{-1}}`` (Filippi et al. 2010, with the constants of
    the public code: ``λ = n``, ``κ = 1/ġ(S)``, ``ρ_t = (κ/4) sqrt(2 log(1/α) + log det V_t - n log λ)
    + sqrt(λ) S``) after three rounds on coordinate axes, where everything has a closed form.

    Oracle: ``V = λI + Σ x xᵀ = diag(6, 4, 5, 4)`` by hand, so ``log det V - n log λ = log(6/4 · 5/4)``
    and ``||x||²_{V^{-1}} = Σ_i x_i²/V_ii``; the ridge MLE separates by coordinate and each coordinate
    solves ``Σ_s (g(θ_i) - y_s) + λ θ_i = 0`` (scipy's ``brentq``).
    """
    n, S, alpha, lam = 4, 5.0, 0.05, 4.0
    pol = GLMUCB(S=S, alpha=alpha)
    pol.reset(RunStreams(0, range(1)).child("policy/"))
    e = np.eye(n)
    history = [(e[0], 1.0), (e[0], 0.0), (e[2], 1.0)]
    for t, (x, y) in enumerate(history):
        ctx = FairContext(x[None, None], x[None, None], np.zeros(1, dtype=np.int64), x[None, None])
        pol.update(t, ctx, np.zeros(1, dtype=np.int64), {"reward": np.array([y])})
    theta = np.zeros(n)
    theta[0] = brentq(lambda v: 2 * expit(v) - 1.0 + lam * v, -5, 5)
    theta[2] = brentq(lambda v: expit(v) - 1.0 + lam * v, -5, 5)
    v_diag = np.array([6.0, 4.0, 5.0, 4.0])
    g = expit(S)
    kappa = 1 / (g * (1 - g))
    rho_t = kappa / 4 * math.sqrt(2 * math.log(1 / alpha) + math.log(6 / 4 * 5 / 4)) + math.sqrt(lam) * S
    cand = np.array([[0.6, 0.0, 0.0, 0.8], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.6, 0.8], [0.8, 0.0, 0.6, 0.0]])
    index = expit(cand @ theta) + rho_t * np.sqrt(cand**2 @ (1 / v_diag))
    assert np.sort(index)[-1] - np.sort(index)[-2] > 1e-3  # a unique best candidate
    ctx = FairContext(cand[None], cand[None], np.zeros(1, dtype=np.int64), cand[None])
    action = pol.select(len(history), ctx)
    assert action.tolist() == [int(np.argmax(index))]
    np.testing.assert_allclose(pol.diagnostics()["ucb_index"], [index.max()], rtol=1e-9)
