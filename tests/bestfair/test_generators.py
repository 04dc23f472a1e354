"""Every synthetic setting's generator succeeds on every seed and meets its setting exactly.

The properties are recomputed here from the generated ``P(X|s)``, ``P(X|s')`` and ``q`` with the
model's own formulas (means, fairness gaps, ``M_k1`` and ``D_k1`` of §4), written independently of
the generator's construction and of :func:`~causalbandits_lib.bestfair.instances.synthetic._check`;
a few seeds tie these formulas to :class:`~causalbandits_lib.bestfair.model.FairArmsProblem`.
"""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.instances.synthetic import (
    SETTINGS,
    synthetic_instance,
    synthetic_parameters,
)
from causalbandits_lib.bestfair.registry import SMALL

N_SEEDS = 1000
ALL_SETTINGS = {**SETTINGS, SMALL.name: SMALL}


def _exact(setting, p_s, p_sp, q):
    """Means, fairness gaps and divergences to arm 0 of the model S → X → V → Y ← E."""
    e1 = setting.p_noise
    p_x = setting.p_s * p_s + (1 - setting.p_s) * p_sp
    ey = e1 * q + (1 - e1) * (1 - q)  # E[Y | x] under each arm
    mu = ey @ p_x
    zeta = ey @ (p_s - p_sp)  # E_k[Y | s] − E_k[Y | s'] (S is a root)
    pv = np.stack([q, 1 - q], -1)  # P_k(v | x), (K, m, 2)
    r = pv / pv[:1]  # importance ratio to arm 0 (at most 99 here, so exp does not overflow)
    M = np.log(np.einsum("kxv,x->k", pv * np.exp(r), p_x))

    def D(rho):
        ew = pv * np.exp(np.abs(r * (rho - 1)[None, :, None]))
        return np.log(np.einsum("kxv,x->k", ew, p_s) + np.einsum("kxv,x->k", ew, p_sp))

    return mu, zeta, M, D(p_s / p_sp), D(p_sp / p_s)


def _assert_meets(setting, par):
    p_s, p_sp, q, best = par["p_x_s"], par["p_x_sp"], par["q"], par["best"]
    K, tol = setting.n_arms, setting.tolerance
    assert q.shape == (K, setting.n_contexts)
    assert np.all((q > 0) & (q < 1))
    for p in (p_s, p_sp):
        assert np.all(p > 0) and abs(p.sum() - 1) < 1e-12
    mu, zeta, M, D, Dr = _exact(setting, p_s, p_sp, q)
    fair = np.abs(zeta) < tol  # |ζ^{s,s'}| = |ζ^{s',s}|
    assert int((~fair).sum()) == setting.n_infeasible
    if setting.n_infeasible:
        assert abs(np.min(np.abs(np.abs(zeta) - tol)) - setting.fairness_gap) < 1e-9
    if setting.n_infeasible == K:
        assert best == -1
    else:
        assert fair[0], "the cheap arm is fair"
        order = np.sort(mu[fair])
        assert best == int(np.flatnonzero(fair & (mu == order[-1]))[0])
        assert order[-1] - order[-2] == pytest.approx(setting.outcome_gap, abs=1e-9)
        assert int(np.sum(~fair & (mu > mu[best]))) == setting.n_better_infeasible
    lo_m, hi_m = setting.m_band
    lo_d, hi_d = setting.d_band
    assert np.all((M[1:] > lo_m) & (M[1:] < hi_m)), (M.min(), M.max())
    d = np.r_[D[1:], Dr[1:]]
    assert np.all((d > lo_d) & (d < hi_d)), (d.min(), d.max())


@pytest.mark.parametrize("name", sorted(ALL_SETTINGS))
def test_generator_meets_its_setting_on_every_seed(name):
    setting = ALL_SETTINGS[name]
    draws = []
    for seed in range(N_SEEDS):
        par = synthetic_parameters(setting, np.random.default_rng(seed))
        _assert_meets(setting, par)
        draws.append(par["draws"])
    print(f"{name}: draws per instance, mean {np.mean(draws):.2f}, max {max(draws)}")


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_formulas_of_this_test_are_the_model(name):
    inst = synthetic_instance(name, np.random.default_rng(3))
    setting, prob = inst.setting, inst.problem
    mu, zeta, M, D, Dr = _exact(setting, inst.p_x_s, inst.p_x_sp, inst.q)
    np.testing.assert_allclose(mu, prob.mu, atol=1e-12)
    np.testing.assert_allclose(zeta, prob.zeta, atol=1e-12)
    np.testing.assert_allclose(M, prob.M[:, 0], rtol=1e-10)
    np.testing.assert_allclose(D, prob.D[:, 0], rtol=1e-10)
    np.testing.assert_allclose(Dr, prob.D_reverse[:, 0], rtol=1e-10)
