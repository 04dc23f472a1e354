"""The optimistic step: exact box solver, brute force, Dinkelbach, projected gradient
(:mod:`causalbandits_lib.fairx.optimism`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.fairx import optimism
from causalbandits_lib.fairx.merit import AffineMerit, ExpMerit

box_st = st.tuples(
    st.integers(2, 9),
    st.sampled_from([0.5, 1.0, 3.0, 10.0, 30.0]),
    st.integers(0, 2**31 - 1),
    st.sampled_from([1e-3, 0.05, 0.5, 2.0]),
)


@settings(max_examples=150, deadline=None)
@given(box_st)
def test_exact_box_solver_matches_brute_force_over_corners(args):
    K, c, seed, scale = args
    rng = np.random.default_rng(seed)
    mid, width = rng.random(K), rng.random(K) * scale
    lower, upper = mid - width, mid + width
    merit = ExpMerit(c)
    mu, value = optimism.optimistic_box_exact(merit, lower, upper)
    best_mu, best = optimism.optimistic_box_corners(merit, lower, upper)
    assert value == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert np.all((mu == lower) | (mu == upper))  # a vertex
    _, dink = optimism.optimistic_box_dinkelbach(merit, lower, upper)
    assert dink == pytest.approx(best, rel=1e-9, abs=1e-12)
    # no interior point does better
    for _ in range(20):
        inner = lower + rng.random(K) * (upper - lower)
        assert optimism.fair_value(merit, inner) <= value + 1e-12
    # and the paper's projected gradient never beats it
    assert optimism.fair_value(merit, optimism.optimistic_box_pgd(merit, lower, upper, start=mid)) <= value + 1e-12


def test_exact_solver_is_vectorised_over_rows():
    rng = np.random.default_rng(3)
    mid, width = rng.random((4, 3, 6)), rng.random((4, 3, 6)) * 0.3
    merit = ExpMerit([1.0, 4.0, 10.0])
    mu, value = optimism.optimistic_box_exact(merit, mid - width, mid + width)
    for r in range(4):
        for g, c in enumerate([1.0, 4.0, 10.0]):
            _, best = optimism.optimistic_box_corners(ExpMerit(c), mid[r, g] - width[r, g], mid[r, g] + width[r, g])
            assert value[r, g] == pytest.approx(best, rel=1e-12)


def test_where_projected_gradient_differs_from_the_exact_solver():
    """Narrow boxes: 10 steps of 0.01 reach the optimal vertex and the two agree. Wide boxes: the
    steps cover at most 0.1·max|∇V| per coordinate, PGD stops in the interior and loses value;
    and an arm just below V − 1/c is pushed *down* by the exact solver but barely moved by PGD."""
    merit = ExpMerit(4.0)
    mid = np.array([0.75, 0.74, 0.43, 0.30, 0.10])
    narrow = 1e-4
    exact_mu, exact_v = optimism.optimistic_box_exact(merit, mid - narrow, mid + narrow)
    pgd_mu = optimism.optimistic_box_pgd(merit, mid - narrow, mid + narrow, start=mid)
    np.testing.assert_array_equal(np.sign(pgd_mu - mid), np.sign(exact_mu - mid))
    wide = 0.5
    exact_mu, exact_v = optimism.optimistic_box_exact(merit, mid - wide, mid + wide)
    pgd_mu = optimism.optimistic_box_pgd(merit, mid - wide, mid + wide, start=mid)
    pgd_v = optimism.fair_value(merit, pgd_mu)
    assert exact_v - pgd_v > 0.2
    assert np.all(np.abs(pgd_mu - mid) < wide)  # interior: never reached a face
    assert np.all((exact_mu == mid - wide) | (exact_mu == mid + wide))
    with pytest.raises(ValueError, match="exact box solver"):
        optimism.optimistic_box_exact(AffineMerit(0.0, floor=0.1), mid - 0.1, mid + 0.1)


def test_pgd_exp_specialisation_equals_the_generic_iteration():
    rng = np.random.default_rng(0)
    for _ in range(50):
        K = int(rng.integers(2, 12))
        merit = ExpMerit(float(rng.choice([0.5, 4.0, 10.0])))
        mid, w = rng.random(K), rng.random(K) * 0.3
        fast = optimism.optimistic_box_pgd(merit, mid - w, mid + w, start=mid)
        mu = mid.copy()
        for _ in range(10):
            mu = np.clip(mu + 0.01 * optimism.fair_value_gradient(merit, mu), mid - w, mid + w)
        np.testing.assert_allclose(fast, mu, atol=1e-12)


def test_gradient_matches_finite_differences():
    merit = ExpMerit(3.0)
    mu = np.array([0.1, 0.6, 0.4, 0.9])
    g = optimism.fair_value_gradient(merit, mu)
    eps = 1e-6
    fd = [
        (optimism.fair_value(merit, mu + eps * e) - optimism.fair_value(merit, mu - eps * e)) / (2 * eps)
        for e in np.eye(4)
    ]
    np.testing.assert_allclose(g, fd, atol=1e-8)
