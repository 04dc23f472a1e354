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
