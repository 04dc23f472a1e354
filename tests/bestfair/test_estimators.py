"""The clipped importance-sampling estimators (Eq. 3/4): unbiased before clipping, centred on the
truth by sampling, biased by at most ε/2 after clipping (Lemma 6), clip levels above the exact
quantiles (Lemma 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.bestfair.allocation import AllocationLP
from causalbandits_lib.bestfair.estimators import WeightedEstimator, clip_multiplier
from causalbandits_lib.bestfair.instances.synthetic import synthetic_instance
from causalbandits_lib.bestfair.theory import fairness_clip_quantile, outcome_clip_quantile

from .problems import small_instance


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), K=st.integers(2, 5), m=st.integers(2, 5))
def test_estimators_are_unbiased_before_clipping(seed, K, m):
    rng = np.random.default_rng(seed)
    _, _, _, prob = small_instance(rng, K=K, m=m, spread=0.9)
    est = WeightedEstimator(prob)
    alloc = rng.integers(0, 50, (3, K)).astype(float)
    alloc[:, 0] += 1  # every pool has samples
    np.testing.assert_allclose(est.expected(alloc, None, "outcome"), prob.mu, atol=1e-12)
    np.testing.assert_allclose(est.expected(alloc, None, "fairness"), prob.zeta, atol=1e-12)
    np.testing.assert_allclose(est.expected(alloc, None, "fairness_reverse"), prob.zeta_reverse, atol=1e-12)


def test_estimators_on_random_samples_centre_on_the_truth():
    rng = np.random.default_rng(4)
    _, _, _, prob = small_instance(rng, K=3, m=3)
    est = WeightedEstimator(prob)
    alloc = np.array([[40, 10, 0], [30, 0, 5], [30, 5, 0]])
    n = 4000
    draws = np.zeros((n, 3, 3, prob.n_cells), dtype=np.int64)
    for i in range(n):
        for b in range(3):
            for j in range(3):
                draws[i, b, j] = rng.multinomial(alloc[b, j], prob.cell_probs[b, j])
    for which, truth in (("outcome", prob.mu), ("fairness", prob.zeta), ("fairness_reverse", prob.zeta_reverse)):
        values = est.estimate(draws, None, which)
        se = values.std(axis=0, ddof=1) / math.sqrt(n)
        assert np.all(np.abs(values.mean(axis=0) - truth) < 4 * se + 1e-12), which


def test_clipping_bias_is_within_half_epsilon_and_lemma4_holds():
    inst = synthetic_instance("loose", np.random.default_rng(5))
    prob = inst.problem
    est = WeightedEstimator(prob)
    lp = AllocationLP(prob.allocation_matrices, prob.costs)
    nu, _ = lp.solve(np.ones(prob.n_arms, bool), 1 / math.sqrt(5000))
    alloc = nu * 1000
    for phase in range(1, 10):
        eps = 2.0 ** -(phase - 1)
        y = est.expected(alloc, phase, "outcome")
        assert np.all(y <= prob.mu + 1e-12) and np.all(prob.mu <= y + eps / 2 + 1e-12)  # Lemma 6, Eq. 30
        for which, truth in (("fairness", prob.zeta), ("fairness_reverse", prob.zeta_reverse)):
            assert np.all(np.abs(est.expected(alloc, phase, which) - truth) <= eps / 2 + 1e-12)  # Eq. 31
    for i, j in [(0, 1), (1, 0), (3, 7), (5, 5)]:
        for phase in (1, 3, 6):
            eps = 2.0 ** -(phase - 1)
            assert outcome_clip_quantile(prob, i, j, eps) <= clip_multiplier(phase) * prob.M[i, j]
            assert fairness_clip_quantile(prob, i, j, eps) <= clip_multiplier(phase) * prob.D[i, j]
            assert (
                fairness_clip_quantile(prob, i, j, eps, reverse=True) <= clip_multiplier(phase) * prob.D_reverse[i, j]
            )


def test_clip_multiplier():
    assert clip_multiplier(3) == pytest.approx(6.0)
    assert clip_multiplier(3, math.e) == pytest.approx(6 * math.log(2))
    assert clip_multiplier(None) == math.inf
    with pytest.raises(ValueError, match="phase"):
        clip_multiplier(0)


def test_estimate_checks_the_counts_shape():
    _, _, _, prob = small_instance(np.random.default_rng(6))
    est = WeightedEstimator(prob)
    with pytest.raises(ValueError, match="counts has shape"):
        est.estimate(np.zeros((2, 3, prob.n_arms)), 1, "outcome")
    with pytest.raises(ValueError, match="which='bias'"):
        est.weights("bias", 1)
    # a run without samples of the needed kind gets NaN, not a number
    counts = np.zeros((1, 3, prob.n_arms, prob.n_cells), dtype=np.int64)
    assert np.isnan(est.estimate(counts, 1, "outcome")).all()
