"""The divergences M and D (§4): against direct sums, without overflow, and as a problem's matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.bestfair.divergences import fairness_divergence, outcome_divergence

from .problems import small_instance


def test_divergences_match_direct_summation():
    rng = np.random.default_rng(0)
    for _ in range(20):
        C = 7
        p = rng.dirichlet(np.ones(C))
        r = rng.uniform(0.1, 5, C)
        assert outcome_divergence(p, r) == pytest.approx(math.log(np.sum(p * np.exp(r))), rel=1e-13)
        ps, psp = rng.dirichlet(np.ones(C)), rng.dirichlet(np.ones(C))
        w = rng.normal(0, 3, C)
        direct = math.log(np.sum(ps * np.exp(np.abs(w))) + np.sum(psp * np.exp(np.abs(w))))
        assert fairness_divergence(ps, psp, w) == pytest.approx(direct, rel=1e-13)


def test_divergences_do_not_overflow():
    # a ratio of 900 overflows exp() in double precision; the log-sum-exp value is exact
    p = np.array([1e-3, 1 - 1e-3])
    r = np.array([900.0, 1.0])
    expected = 900.0 + math.log(1e-3) + math.log1p((1 - 1e-3) * math.exp(1.0 - 900.0) / 1e-3)
    assert outcome_divergence(p, r) == pytest.approx(expected, rel=1e-14)
    assert fairness_divergence(p, p, r) == pytest.approx(expected + math.log(2), rel=1e-14)


def test_problem_divergence_matrices_against_direct_sums():
    ps, psp, q, prob = small_instance(np.random.default_rng(1))
    p_x = 0.5 * (ps + psp)
    for k in range(prob.n_arms):
        for j in range(prob.n_arms):
            direct_m = sum(
                p_x[x]
                * (q[k, x] * math.exp(q[k, x] / q[j, x]) + (1 - q[k, x]) * math.exp((1 - q[k, x]) / (1 - q[j, x])))
                for x in range(3)
            )
            assert prob.M[k, j] == pytest.approx(math.log(direct_m), rel=1e-12)
            rho = ps / psp
            direct_d = sum(
                px[x]
                * (
                    q[k, x] * math.exp(q[k, x] / q[j, x] * abs(rho[x] - 1))
                    + (1 - q[k, x]) * math.exp((1 - q[k, x]) / (1 - q[j, x]) * abs(rho[x] - 1))
                )
                for px in (ps, psp)
                for x in range(3)
            )
            assert prob.D[k, j] == pytest.approx(math.log(direct_d), rel=1e-12)
    np.testing.assert_allclose(np.diag(prob.M), 1.0, rtol=1e-13)
    assert np.all(prob.M >= 1 - 1e-12) and np.all(prob.D >= math.log(2) - 1e-12)
