"""The compiled kernel of CCLB and ε-CCLB on the recommender against the numpy path: the same
decisions and recorded values, the estimates within 1e-9, over horizons that cross a block of
rounds; a run alone as among others; the policy left as the numpy path leaves it; the modes and
pairs it covers; and the cclb chapter's dimension-free pieces against its numpy functions."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.cclb.confidence import QuadraticModel, analysis_ridge, ball_minimiser
from causalbandits_lib.cclb.kernels import ball_minimiser_eig, model_support_eig
from causalbandits_lib.cclb.optimism import model_support
from causalbandits_lib.core.environments import ContextualBernoulliBandit
from causalbandits_lib.core.registry import close_arrays
from causalbandits_lib.core.runner import BLOCK, simulate
from causalbandits_lib.synthesis import algorithms as A
from causalbandits_lib.synthesis import cell_kernels as CK
from causalbandits_lib.synthesis import logistic as L
from causalbandits_lib.synthesis import model as M
from causalbandits_lib.synthesis import registry

INSTANCES = M.instances(np.random.SeedSequence(0), 3)
#: what the chapter records (exact functions of the decisions), the codes, and the estimates
RECORDED = registry.METRICS + ("violation",)
ESTIMATES = ("dual", "estimated_violation", "optimistic_value")
VALUES = RECORDED + ESTIMATES + ("O", "I")


def _both(make_policy, inst, tau, T, seed, runs=(0, 1)):
    """The numpy and the compiled simulation of fresh policies: {backend: (result, policy, env)}."""
    out = {}
    for backend in ("numpy", "compiled"):
        pol, env = make_policy(), M.RecommenderEnv(inst, tau)
        r = simulate(env, pol, T, seed, runs=runs, metrics=VALUES, backend=backend)
        assert r.info["backend"] == backend
        out[backend] = (r, pol, env)
    return out


def _assert_same(out):
    a, b = out["numpy"][0], out["compiled"][0]
    np.testing.assert_array_equal(b["I"], a["I"])  # the decisions
    for k in RECORDED + ("O",):
        np.testing.assert_array_equal(b[k], a[k], err_msg=k)
    for k in ESTIMATES:
        assert close_arrays(a[k], b[k]), k
    p, q = out["numpy"][1].inner, out["compiled"][1].inner  # the state the blocks leave
    np.testing.assert_array_equal(q.history.count, p.history.count)
    np.testing.assert_array_equal(q.history.clicks, p.history.clicks)
    assert q.history.t == p.history.t
    np.testing.assert_allclose(q.phi, p.phi, rtol=1e-9, atol=0)
    np.testing.assert_allclose(q.theta_hat, p.theta_hat, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(q._warm, p._warm, rtol=1e-9, atol=1e-12)  # NaN where never solved, in both
    np.testing.assert_allclose(q._warm_s, p._warm_s, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "name, inst, quantile, seed",
    [("CCLB", 0, 0.5, 0), ("ε-CCLB", 0, 0.5, 1), ("CCLB", 1, 0.3, 2), ("ε-CCLB", 2, 0.7, 3)],
)
def test_kernel_takes_the_numpy_paths_decisions_across_a_block_boundary(name, inst, quantile, seed):
    inst = INSTANCES[inst]
    tau = inst.tau(quantile)
    T = BLOCK + 76
    out = _both(lambda: A.make_policy(name, inst, tau, horizon=T), inst, tau, T, seed)
    _assert_same(out)
    if name == "ε-CCLB":
        assert np.any(out["compiled"][0]["dual"] > 0)  # the dual step is exercised


@pytest.mark.parametrize("mode, tie_rule", [("quadratic", "random"), ("sqp", "fairer")])
def test_kernel_covers_the_quadratic_mode_and_the_fairer_tie_rule(mode, tie_rule):
    inst = INSTANCES[1]
    tau = inst.tau(0.5)
    k = L.cclb_knobs(inst, tau, 0.5)

    def make():
        cell = L.CellCCLB(
            200, tau=tau, S=k["S"], rho=k["rho"], eps=k["eps"], loss_bins=0, optimistic=mode, tie_rule=tie_rule
        )
        return L.LogisticView(cell, "ε-CCLB")

    _assert_same(_both(make, inst, tau, 200, 4))


def test_a_run_does_not_depend_on_its_neighbours():
    inst = INSTANCES[0]
    tau = inst.tau(0.5)

    def run(runs):
        pol = A.make_policy("ε-CCLB", inst, tau, horizon=300)
        return simulate(M.RecommenderEnv(inst, tau), pol, 300, 7, runs=runs, metrics=VALUES, backend="compiled")

    full, part = run([0, 1, 2]), run([2, 0])
    for k in VALUES:
        np.testing.assert_array_equal(part[k], full[k][[2, 0]], err_msg=k)


def test_the_policy_decides_after_the_kernel_as_after_the_numpy_path():
    """After a compiled simulation ending between block boundaries, the numpy ``select`` of the next
    round takes the numpy path's decision and diagnostics (the kernel leaves the whole state)."""
    inst = INSTANCES[2]
    tau = inst.tau(0.5)
    T = 700
    out = _both(lambda: A.make_policy("ε-CCLB", inst, tau, horizon=2 * T), inst, tau, T, 5, runs=(3, 1, 4))
    picks = {}
    for backend, (_, pol, env) in out.items():
        ctx = env.observe(T)
        picks[backend] = (pol.select(T, ctx), pol.diagnostics())
    np.testing.assert_array_equal(picks["compiled"][0], picks["numpy"][0])
    for k, v in picks["numpy"][1].items():
        assert close_arrays(v, picks["compiled"][1][k]), k


def test_compiled_covers_cclb_on_the_recommender_only():
    inst = INSTANCES[0]
    tau = inst.tau(0.5)
    k = L.cclb_knobs(inst, tau, 0.5)
    env = M.RecommenderEnv(inst, tau)
    assert isinstance(A.make_policy("CCLB", inst, tau, horizon=50).compiled(env), CK.CellCCLBKernel)
    exact = L.LogisticView(L.CellCCLB(50, tau=tau, S=k["S"], rho=k["rho"], loss_bins=0, optimistic="exact"), "CCLB")
    assert exact.compiled(env) is None
    plain = ContextualBernoulliBandit(inst.context_probs, inst.means)
    assert A.make_policy("CCLB", inst, tau, horizon=50).compiled(plain) is None
    entries = {e.name: e for e in registry.ENTRIES}
    for name in ("synthesis.cclb", "synthesis.ε_cclb"):
        assert entries[name].has_kernel()  # so the conformance check compares kernel and numpy


def test_cell_loss_as_the_numpy_cell_data():
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 40, size=(1, L.N_CELLS)).astype(float)
    counts[0, :3] = 0.0  # cells never played
    clicks = np.floor(counts * rng.random(counts.shape))
    theta = rng.normal(size=(1, L.N_CELLS))
    theta[0, 5] = 0.0
    loss, grad, hess = L.CellData(counts, clicks).evaluate(theta)
    g, h = np.empty(L.N_CELLS), np.empty(L.N_CELLS)
    value = CK._evaluate(counts[0], clicks[0], theta[0], g, h)
    np.testing.assert_array_equal(g, grad[0])
    np.testing.assert_array_equal(h, np.diag(hess[0]))
    np.testing.assert_allclose(value, loss[0], rtol=1e-13)
    np.testing.assert_allclose(CK._loss(counts[0], clicks[0], theta[0]), loss[0], rtol=1e-13)


def test_dimension_free_pieces_match_the_chapters_numpy_functions():
    """:func:`model_support_eig` and :func:`ball_minimiser_eig` in the eigen-coordinates of random
    16-dimensional models (full Hessians) against :func:`~.optimism.model_support` and
    :func:`~.confidence.ball_minimiser`, for the ball active and inactive. Both search ``s`` to 1e-9
    only and round differently on the way (sums in another order), so the support values agree to
    1e-8 of their scale ``S ||x||`` and the maximisers to 1e-7; the ball minimisers to rounding."""
    rng = np.random.default_rng(4)
    n, S = L.N_CELLS, 3.0
    active = 0
    for _ in range(40):
        Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
        hess = (Q * rng.uniform(0.0, 20.0, n)) @ Q.T
        theta0, grad = rng.normal(size=(1, n)), rng.normal(size=(1, n)) * 3
        model = QuadraticModel(theta0, grad, hess[None], analysis_ridge(S))
        radius2 = np.array([rng.uniform(0.5, 30.0)])
        x = rng.normal(size=(1, 4, n))
        values, thetas = model_support(model, radius2, S, x)
        xb = model.to_eig(x)[0]
        ev, cb = model.eigval[0], model.center_bar[0]
        for k in range(4):
            tb = np.empty(n)
            v, s = model_support_eig(ev, cb, radius2[0], S, xb[k].copy(), False, 0.0, tb, np.empty((10, n)))
            np.testing.assert_allclose(v, values[0, k], rtol=0, atol=1e-8 * S * np.linalg.norm(x[0, k]))
            np.testing.assert_allclose(model.eigvec[0] @ tb, thetas[0, k], rtol=0, atol=1e-7)
            active += 0.0 < s
        out = np.empty(n)
        ball_minimiser_eig(ev, cb, S, out, np.empty(n))
        np.testing.assert_allclose(out, ball_minimiser(model, S)[0], rtol=1e-12, atol=1e-12)
    assert active > 0
