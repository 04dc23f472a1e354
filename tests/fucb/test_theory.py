"""The regret bounds of Theorems 1 and 3 against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.fucb import theory


def test_regret_bounds_by_hand_and_monotone():
    W, T = 12, 5000
    d = 1 / T**2
    assert theory.theorem1_bound(W, T, d) == pytest.approx(
        math.sqrt(W * T) * math.log(T) + math.sqrt(32 * W * T * math.log(1 / d))
    )
    assert theory.theorem1_probability(W, T, d) == pytest.approx(
        1 - 2 * d * T * W - math.exp(-W * math.log(T) ** 3 / (32 * math.log(1 / d)))
    )
    assert theory.theorem1_probability(W, T, d, "corrected") == pytest.approx(
        1 - 2 * W / T - math.exp(-W * math.log(T) / 128)
    )
    assert theory.corollary1_bound(W, T) == pytest.approx(16 * math.sqrt(W * T * math.log(T)) * math.log(T))
    tau, d0 = 0.3, 0.0073
    dE = 1 / T**2
    printed = (2 / (tau - d0) + 1) * (
        2 * math.sqrt(2 * T * W * math.log(1 / dE)) + 4 * math.sqrt(T * math.log(2 / dE) * math.log(1 / dE))
    )
    assert theory.theorem3_bound(W, T, tau, d0) == pytest.approx(printed)
    li = math.log(4 * W * T / dE)
    corrected = (2 + 2 / (tau - d0)) * (2 * math.sqrt(2 * T * W * li) + 4 * math.sqrt(T * math.log(2 / dE) * li))
    assert theory.theorem3_bound(W, T, tau, d0, version="corrected") == pytest.approx(corrected)
    assert theory.theorem3_alpha_condition(theory.theorem3_alpha_r(tau, d0), 1.0, tau, d0) < 0
    assert theory.theorem3_alpha_condition(
        theory.theorem3_alpha_r(tau, d0, version="corrected"), 1.0, tau, d0
    ) == pytest.approx(0.0, abs=1e-12)
    t = np.arange(2, 3000)
    for curve in (
        theory.theorem1_bound(W, t, 1 / t**2),
        theory.corollary1_bound(W, t),
        theory.theorem3_bound(W, t, tau, d0),
        theory.theorem3_bound(W, t, tau, d0, version="corrected"),
    ):
        assert np.all(np.diff(curve) > 0)
    assert np.all(np.diff([theory.theorem1_bound(k, T, d) for k in (12, 24, 36)]) > 0)
    with pytest.raises(ValueError, match="n_cells"):
        theory.theorem1_bound(0, T, d)
    with pytest.raises(ValueError, match="delta"):
        theory.theorem1_bound(W, T, 1.5)
    with pytest.raises(ValueError, match="tau"):
        theory.theorem3_bound(W, T, 0.005, 0.0073)
    with pytest.raises(ValueError, match="version"):
        theory.theorem3_bound(W, T, tau, version="draft")


def test_smallest_discrepancy_radius_is_the_best_allocation():
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(5), size=(3, 4))  # (context, arm, cell) weights
    t = 5000
    got = theory.smallest_discrepancy_radius(w, t)

    def radius(weights, counts):  # Eq. 12 with δ_t = 1/t²: Σ_k w_k sqrt(8 log(t²) / N_k)
        return float((weights * np.sqrt(8 * 2 * np.log(t) / counts)).sum())

    best = min(radius(row, t * row ** (2 / 3) / (row ** (2 / 3)).sum()) for row in w.reshape(-1, 5))
    assert got == pytest.approx(best, rel=1e-12)
    for row in w.reshape(-1, 5)[:4]:
        for _ in range(50):  # no other allocation of the t observations does better
            assert radius(row, t * rng.dirichlet(np.ones(5))) >= got - 1e-12
    half = theory.smallest_discrepancy_radius(np.array([[0.5, 0.5]]), np.array([10.0, t]))
    np.testing.assert_allclose(half, np.sqrt(16 * np.log([10.0, t]) / [10.0, t]) * np.sqrt(2), rtol=1e-14)


def test_arm_cell_range_uses_the_cells_an_arm_reaches():
    probs = np.zeros((2, 2, 3))
    probs[0, 0, :2] = 0.5
    probs[1, 0, 0] = 1.0  # arm 0 reaches cells 0 and 1
    probs[:, 1, 2] = 1.0  # arm 1 reaches cell 2 only
    lo, hi = theory.arm_cell_range(probs, np.array([0.2, 0.7, 0.4]))
    assert lo.tolist() == [0.2, 0.4] and hi.tolist() == [0.7, 0.4]
    with pytest.raises(ValueError, match="at least one cell"):
        theory.arm_cell_range(probs, np.array([0.2, 0.7, np.nan]))


def test_interval_bounds_are_tested_only_where_narrower_than_trivial():
    true = np.array([0.3, 0.5])
    # bounds equal to the trivial range: vacuous, whatever the true values
    vac = theory.check_interval_bounds(true, [0.0, 0.0], [1.0, 1.0], 0.0, 1.0)
    assert vac.verdict == "not testable here" and "vacuous" in vac.reason
    # narrow bounds that contain the truth, and ones that miss it
    assert theory.check_interval_bounds(true, [0.2, 0.4], [0.4, 0.6], 0.0, 1.0).verdict == "reproduced"
    miss = theory.check_interval_bounds(true, [0.2, 0.55], [0.4, 0.6], 0.0, 1.0)
    # informative where the bound is below half the trivial range (2 of the 4 ends here)
    assert miss.verdict == "not reproduced" and "1 of 2 informative" in miss.reason
    # trivial bounds per arm broadcast over the other axes
    grid = np.full((2, 3), 0.2)
    assert theory.check_interval_bounds(grid, grid - 0.1, grid + 0.1, np.zeros(3), np.ones(3)).verdict == "reproduced"
    # rounding at the edge of a bound does not count as a violation
    assert theory.check_interval_bounds(true, true + 1e-15, true + 1e-15, 0.0, 1.0).verdict == "reproduced"


def test_proposition2_bound_matches_theorem3_width_term_and_rejects_empty_statements():
    # Theorem 3 (corrected) is Proposition 2 with α_r = 1 + 2/(τ − Δ) and δ = δ_E/(4|W|T)
    W, T, tau, d0 = 12, 5000, 0.3, 0.05
    delta_E = 1.0 / T**2
    a = float(theory.theorem3_alpha_r(tau, d0, version="corrected"))
    p2 = float(theory.proposition2_bound(W, T, delta_E / (4 * W * T), alpha_r=a))
    assert p2 == pytest.approx(float(theory.theorem3_bound(W, T, tau, d0, version="corrected")), rel=1e-12)
    # grows with α_r and with T, and is (α_r + 1) times a common width
    b1, b3 = (float(theory.proposition2_bound(W, T, 1e-9, alpha_r=x)) for x in (1.0, 3.0))
    assert b3 / b1 == pytest.approx(2.0)
    assert float(theory.proposition2_bound(W, 2 * T, 1e-9)) > b1
    with pytest.raises(ValueError):
        theory.proposition2_bound(W, T, 1.0 / (4 * W * T))  # δ_E = 1
    with pytest.raises(ValueError):
        theory.proposition2_bound(W, T, 1e-9, alpha_r=0.5)


def test_domain_size_multiplies_cardinalities():
    assert theory.domain_size({"a": 3, "b": 4, "c": 2}, ("a", "b", "c")) == 24
    assert theory.domain_size({"a": 3}, ()) == 1
    with pytest.raises(ValueError):
        theory.domain_size({"a": 0}, ("a",))
