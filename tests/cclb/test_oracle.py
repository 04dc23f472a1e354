"""The evaluator's exact benchmarks: best feasible decision and the LP over mixtures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from causalbandits_lib.cclb.oracle import best_feasible, mixture_lp_value


@given(st.integers(0, 10_000))
@settings(max_examples=30, deadline=None)
def test_mixture_lp_matches_linprog(seed):
    rng = np.random.default_rng(seed)
    K = 6
    r = rng.random(K)
    e = rng.uniform(-0.6, 0.6, K)
    tau = 0.2
    e[0] = 0.05  # keep the LP feasible
    res = linprog(-r, A_ub=[np.abs(e)], b_ub=[tau], A_eq=[np.ones(K)], b_eq=[1.0], bounds=[(0, 1)] * K, method="highs")
    assert mixture_lp_value(r, e, tau) == pytest.approx(-res.fun, abs=1e-9)
    best = best_feasible(r, e, tau)
    assert best["value"] == pytest.approx(r[np.abs(e) <= tau].max())
    assert mixture_lp_value(r, e, tau) >= best["value"] - 1e-12


def test_nothing_feasible_gives_minus_infinity():
    r, e = np.array([0.5, 0.7]), np.array([0.4, -0.5])
    assert best_feasible(r, e, 0.2)["value"] == -np.inf
    assert mixture_lp_value(r, e, 0.2) == -np.inf
