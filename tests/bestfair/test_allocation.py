"""The phase schedule and the max-min allocation LP (ALLOCATE), against scipy's linprog."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.bestfair.allocation import (
    ALL_BLOCKS,
    FAIRNESS_BLOCKS,
    OUTCOME_BLOCK,
    AllocationLP,
    harmonic,
    linprog_allocation,
    n_phases,
    phase_budgets,
    round_allocation,
)
from causalbandits_lib.bestfair.instances.synthetic import synthetic_instance

from .problems import small_instance


def test_phase_schedule():
    assert [n_phases(T) for T in (1000, 2000, 4000, 10000, 20000, 50000, 100000)] == [9, 9, 10, 10, 11, 12, 12]
    assert harmonic(3) == pytest.approx(1 + 1 / 2 + 1 / 3)
    for T in (1000, 4321, 20000):
        tau = phase_budgets(T, n_phases(T))
        assert tau.sum() == T and np.all(tau > 0) and np.all(np.diff(tau) <= 1)
    with pytest.raises(ValueError, match="rule"):
        n_phases(100, "nope")


def test_round_allocation_largest_remainder():
    nu = np.array([[0.5, 0.25, 0.0], [0.125, 0.0, 0.0], [0.125, 0.0, 1e-12]])
    out = round_allocation(nu, 10)
    assert out.sum() == 10
    assert out.tolist() == [[5, 3, 0], [1, 0, 0], [1, 0, 0]]  # remainders .5, .25, .25, .25: ties to lowest index
    assert np.all(np.abs(out - nu * 10) < 1)


def test_round_allocation_does_not_depend_on_the_memory_layout():
    """cvxpy hands back Fortran-ordered fractions; the leftover pulls must still be given out (an
    earlier version added them to a copy made by ``ravel`` and spent fewer pulls than the phase has)."""
    nu = np.array([[0.1732, 0.0, 0.0], [0.2358, 0.0, 0.0], [0.5594, 0.0296, 0.0020]])
    c_order = round_allocation(nu, 100)
    f_order = round_allocation(np.asfortranarray(nu), 100)
    assert c_order.sum() == 100 and f_order.sum() == 100
    assert c_order.tolist() == f_order.tolist() == [[17, 0, 0], [24, 0, 0], [56, 3, 0]]


def test_lp_matches_linprog_and_is_maxmin_optimal():
    rng = np.random.default_rng(6)
    inst = synthetic_instance("tight", np.random.default_rng(7))
    prob = inst.problem
    lp = AllocationLP(prob.allocation_matrices, prob.costs)
    for _ in range(12):
        mask = rng.random(prob.n_arms) < 0.5
        mask[rng.integers(prob.n_arms)] = True
        B = float(rng.choice([1 / math.sqrt(1000), 1 / math.sqrt(20000), 0.3]))
        blocks = [ALL_BLOCKS, FAIRNESS_BLOCKS, OUTCOME_BLOCK][rng.integers(3)]
        nu, value = lp.solve(mask, B, blocks)
        nu_ref, value_ref = linprog_allocation(prob.allocation_matrices, prob.costs, mask, B, blocks)
        assert value == pytest.approx(value_ref, rel=1e-5, abs=1e-9)
        # feasible
        assert nu.min() >= 0 and nu.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.sum(prob.costs * nu) <= B + 1e-6
        assert np.all(nu[~np.array(blocks)] == 0)
        # attains the value: every active block gives every remaining arm at least v*
        for b in np.flatnonzero(blocks):
            assert np.min(prob.allocation_matrices[b][mask] @ nu[b]) >= value - 1e-6
        # optimal: a random feasible allocation never does better
        for _ in range(20):
            alt = rng.dirichlet(np.ones(3 * prob.n_arms)).reshape(3, -1) * np.array(blocks)[:, None]
            alt /= alt.sum()
            if np.sum(prob.costs * alt) <= B:
                alt_value = min(np.min(prob.allocation_matrices[b][mask] @ alt[b]) for b in np.flatnonzero(blocks))
                assert alt_value <= value + 1e-9


def test_lp_errors_are_clear():
    _, _, _, prob = small_instance(np.random.default_rng(8))
    costs = np.ones((3, prob.n_arms))
    lp = AllocationLP(prob.allocation_matrices, costs)
    with pytest.raises(ValueError, match="budget B=0.5 is below"):
        lp.solve(np.ones(prob.n_arms, bool), 0.5)
    with pytest.raises(ValueError, match="non-empty"):
        lp.solve(np.zeros(prob.n_arms, bool), 2.0)


def test_lp_caches_each_remaining_set():
    _, _, _, prob = small_instance(np.random.default_rng(8))
    lp = AllocationLP(prob.allocation_matrices, prob.costs)
    mask = np.array([True, False, True, True])
    first = lp.solve(mask, 0.2)
    assert lp.solve(mask, 0.2)[0] is first[0] and lp.solves == 1
    lp.solve(mask, 0.3)
    assert lp.solves == 2


def test_highs_and_clarabel_agree_on_the_value_and_highs_does_not_remember_earlier_solves():
    rng = np.random.default_rng(11)
    prob = synthetic_instance("tight", np.random.default_rng(7)).problem
    masks = [rng.random(prob.n_arms) < 0.5 for _ in range(10)]
    masks = [m if m.any() else np.ones(prob.n_arms, bool) for m in masks]
    highs = AllocationLP(prob.allocation_matrices, prob.costs)
    clarabel = AllocationLP(prob.allocation_matrices, prob.costs, solver="CLARABEL")
    forward = [highs.solve(m, 0.3) for m in masks]
    for m, (nu, value) in zip(masks, forward):
        assert value == pytest.approx(clarabel.solve(m, 0.3)[1], rel=1e-6, abs=1e-9)
    # a fresh LP solving the same sets in the opposite order returns the same fractions, bit for bit
    backward = AllocationLP(prob.allocation_matrices, prob.costs)
    for m, (nu, value) in reversed(list(zip(masks, forward))):
        again, again_value = backward.solve(m, 0.3)
        np.testing.assert_array_equal(again, nu)
        assert again_value == value


def test_alternating_blocks_give_the_fractions_of_a_fresh_lp_bit_for_bit():
    """The model keeps the column bounds of the last blocks solved and sets them again only when
    the blocks change: solves alternating between the three kinds of blocks (and repeating one)
    return, bit for bit, what a fresh LP returns for each alone."""
    rng = np.random.default_rng(12)
    prob = synthetic_instance("loose", np.random.default_rng(3)).problem
    lp = AllocationLP(prob.allocation_matrices, prob.costs)
    sequence = [ALL_BLOCKS, ALL_BLOCKS, FAIRNESS_BLOCKS, OUTCOME_BLOCK, OUTCOME_BLOCK, ALL_BLOCKS, FAIRNESS_BLOCKS]
    for blocks in sequence * 3:
        mask = rng.random(prob.n_arms) < 0.6
        mask[rng.integers(prob.n_arms)] = True
        budget = float(rng.choice([1 / math.sqrt(250), 1 / math.sqrt(2000), 0.3]))
        shared = lp.fractions(mask, budget, blocks)
        alone = AllocationLP(prob.allocation_matrices, prob.costs).fractions(mask, budget, blocks)
        np.testing.assert_array_equal(shared, alone)
    assert lp.solves == len(sequence) * 3
