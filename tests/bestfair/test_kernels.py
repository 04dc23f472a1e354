"""The compiled path of the identifiers (``backend="compiled"``): the same results as the numpy path,
bit for bit, on every algorithm, problem and edge case; its estimators against
:meth:`WeightedEstimator.estimate`; the backend switch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.bestfair import kernels
from causalbandits_lib.bestfair.algorithms import (
    ALGORITHMS,
    BACKENDS,
    NO_FAIR_ARM,
    AlgorithmConfig,
    Identification,
    identify,
    identify_loop,
    resolve_backend,
)
from causalbandits_lib.bestfair.allocation import AllocationLP, round_allocation, round_allocations
from causalbandits_lib.bestfair.estimators import ESTIMATES, WeightedEstimator
from causalbandits_lib.bestfair.instances.synthetic import binomial_variant, synthetic_instance

from .problems import easy_problem, small_instance, unfair_problem


@pytest.fixture(scope="module")
def binomial(loose):
    """The binomial variant of the 'loose' instance: 800 cells, 760 with a reward."""
    return binomial_variant(loose, 20)


@pytest.fixture(scope="module")
def tight():
    return synthetic_instance("tight", np.random.default_rng(5))


def _pools(problem, rng, n_runs, most=700, empty=0.3):
    """Random cell counts ``(n_runs, 3, K, C)``: 1 to ``most`` samples per kind and arm, a fraction
    ``empty`` of them none."""
    shape = (n_runs, 3, problem.n_arms)
    n = rng.integers(1, most, size=shape) * (rng.random(shape) >= empty)
    counts = np.zeros((*shape, problem.n_cells), dtype=np.int64)
    for i in np.ndindex(*shape):
        counts[i] = rng.multinomial(n[i], problem.cell_probs[i[1], i[2]])
    return counts


def _same(a, b):
    return np.array_equal(a, b, equal_nan=True)


def test_the_kernel_reproduces_numpy_here():
    assert kernels.reproduces()
    assert resolve_backend("auto") == "compiled" and resolve_backend("numpy") == "numpy"


@pytest.mark.parametrize("which", ESTIMATES)
@pytest.mark.parametrize("phase", [1, 2, 7, None])
def test_compiled_estimates_equal_numpy_on_random_pools(which, phase, loose, binomial):
    rng = np.random.default_rng(11)
    for problem in (loose.problem, binomial.problem, easy_problem(), small_instance(rng, K=5, m=4)[3]):
        est = WeightedEstimator(problem)
        counts = _pools(problem, rng, 5)
        assert _same(kernels.estimate_compiled(est, counts, phase, which), est.estimate(counts, phase, which))


def test_compiled_estimates_with_a_natural_log_clip_and_degenerate_pools(loose):
    est = WeightedEstimator(loose.problem, math.e)
    rng = np.random.default_rng(3)
    counts = _pools(loose.problem, rng, 4, most=3, empty=0.8)  # tiny pools: many arms and cells empty
    counts[0] = 0  # a run without any sample: NaN everywhere
    counts[1, :, 1:] = 0  # only the cheap arm sampled, 50 times of each kind
    counts[1, :, 0] = [rng.multinomial(50, loose.problem.cell_probs[kind, 0]) for kind in range(3)]
    for which in ESTIMATES:
        for phase in (1, 3, None):
            fast = kernels.estimate_compiled(est, counts, phase, which)
            assert _same(fast, est.estimate(counts, phase, which))
            assert np.isnan(fast[0]).all() and np.isfinite(fast[1]).all()


def test_runs_that_are_not_active_get_nan(loose):
    est = WeightedEstimator(loose.problem)
    counts = _pools(loose.problem, np.random.default_rng(0), 3, empty=0.0)
    active = np.array([True, False, True])
    fast = kernels.estimate_compiled(est, counts, 2, "outcome", active)
    assert np.isnan(fast[1]).all()
    assert _same(fast[[0, 2]], est.estimate(counts, 2, "outcome")[[0, 2]])


def test_reward_counts_accumulate_like_cell_counts(loose):
    """V2 pools add the phases' draws, V1 pools keep the last phase only; pulls are the totals."""
    problem = loose.problem
    est = WeightedEstimator(problem)
    pool = kernels.RewardCounts(2, est)
    rng = np.random.default_rng(1)
    total = np.zeros((2, 3, problem.n_arms, problem.n_cells), dtype=np.int64)
    for cumulative in (True, True, False, True):
        alloc = rng.integers(0, 5, size=(2, 3, problem.n_arms))
        counts = np.zeros_like(total)
        draws = []
        for i in range(2):
            rows = np.flatnonzero(alloc[i])
            drawn = rng.multinomial(alloc[i].ravel()[rows], problem.cell_probs.reshape(-1, problem.n_cells)[rows])
            counts[i].reshape(-1, problem.n_cells)[rows] = drawn
            draws.append((i, rows, drawn))
        pool.add(alloc, draws, cumulative)
        total = total + counts if cumulative else counts
        assert np.array_equal(pool.pulls, total.sum(-1))
        assert np.array_equal(pool.counts, total[..., est.reward_cells])
        assert all(
            _same(a, est.estimate(total, 4, w))
            for a, w in zip(pool.estimates(4, ESTIMATES, np.ones(2, bool)), ESTIMATES)
        )


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("T, seed", [(300, 0), (2000, 1), (9000, 2)])
def test_compiled_identification_equals_numpy(algorithm, T, seed, loose):
    prob, tol = loose.problem, loose.setting.tolerance
    numpy_ = identify(prob, algorithm, T, tol, seed, n_runs=12, backend="numpy")
    fast = identify(prob, algorithm, T, tol, seed, n_runs=12, backend="compiled")
    assert numpy_.info["backend"] == "numpy" and fast.info["backend"] == "compiled"
    assert fast.equals(numpy_)
    assert fast.info["lp_solves"] == numpy_.info["lp_solves"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_compiled_equals_numpy_on_the_binomial_variant_and_the_tight_setting(algorithm, binomial, tight):
    for inst in (binomial, tight):
        prob, tol = inst.problem, inst.setting.tolerance
        a = identify(prob, algorithm, 3000, tol, 4, n_runs=6, backend="numpy")
        b = identify(prob, algorithm, 3000, tol, 4, n_runs=6, backend="compiled")
        assert b.equals(a)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_compiled_equals_numpy_when_runs_finish_early(algorithm):
    """On an easy problem with a large budget most runs are down to one arm before the last phase
    (their later phases are skipped on both paths)."""
    prob, cfg = easy_problem(), AlgorithmConfig(budget=1.0)
    a = identify(prob, algorithm, 20000, 0.2, 0, n_runs=10, config=cfg, backend="numpy")
    b = identify(prob, algorithm, 20000, 0.2, 0, n_runs=10, config=cfg, backend="compiled")
    assert b.equals(a)
    assert ((a.finished > 0) & (a.finished < len(a.stage))).any()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_compiled_equals_numpy_without_a_fair_arm(algorithm):
    prob, cfg = unfair_problem(), AlgorithmConfig(budget=1.0)
    a = identify(prob, algorithm, 8000, 0.1, 2, n_runs=10, config=cfg, backend="numpy")
    b = identify(prob, algorithm, 8000, 0.1, 2, n_runs=10, config=cfg, backend="compiled")
    assert a.best_arm == -1 and b.equals(a)
    if algorithm.startswith("CSR"):
        assert (a.chosen == NO_FAIR_ARM).any()


@pytest.mark.parametrize(
    "config",
    [
        AlgorithmConfig(allocation="split"),
        AlgorithmConfig(phase_rule="log2_sqrtT", log_base=math.e),
        AlgorithmConfig(budget=0.05),
    ],
    ids=["split", "other_readings", "fixed_budget"],
)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_compiled_equals_numpy_for_other_configurations(algorithm, config, loose):
    prob, tol = loose.problem, loose.setting.tolerance
    a = identify(prob, algorithm, 1500, tol, 6, n_runs=5, config=config, backend="numpy")
    b = identify(prob, algorithm, 1500, tol, 6, n_runs=5, config=config, backend="compiled")
    assert b.equals(a)


def test_compiled_runs_do_not_depend_on_their_neighbours(loose):
    prob, tol = loose.problem, loose.setting.tolerance
    full = identify(prob, "CSR-V2", 2500, tol, 9, n_runs=6, backend="compiled")
    assert identify_loop(prob, "CSR-V2", 2500, tol, 9, 6, backend="compiled").equals(full)
    assert identify(prob, "CSR-V2", 2500, tol, 9, runs=[5, 2], backend="compiled").equals(full.select_runs([5, 2]))


def test_backend_switch(loose, monkeypatch):
    prob, tol = loose.problem, loose.setting.tolerance
    assert BACKENDS == ("auto", "numpy", "compiled")
    with pytest.raises(ValueError, match="backend='gpu'; allowed are"):
        Identification(prob, "CSR-V1", 500, tol, backend="gpu")
    ident = Identification(prob, "TS-V2", 500, tol)
    assert ident.backend == "auto" and ident.identify(0, [0]).info["backend"] == "compiled"
    numpy_ = ident.with_backend("numpy")
    assert numpy_.backend == "numpy" and numpy_.lp is ident.lp and numpy_.estimator is ident.estimator
    # where the kernel does not reproduce numpy, "auto" runs numpy and "compiled" is refused
    monkeypatch.setattr(kernels, "reproduces", lambda: False)
    assert resolve_backend("auto") == "numpy" and ident.with_backend("compiled") is None
    assert ident.identify(0, [0]).info["backend"] == "numpy"
    with pytest.raises(ValueError, match="backend='compiled' is not available"):
        identify(prob, "TS-V2", 500, tol, 0, n_runs=1, backend="compiled")


def test_round_allocations_equal_round_allocation_row_by_row():
    rng = np.random.default_rng(8)
    nu = rng.dirichlet(np.full(18, 0.3), size=40).reshape(40, 3, 6)
    nu[:5] = np.round(nu[:5], 1)  # ties between remainders
    nu[5:8, 1:] = 0.0
    nu[8, 0, 0] = 1e-10  # solver round-off, treated as zero
    nu /= nu.sum(axis=(1, 2), keepdims=True)
    for total in (1, 7, 100, 12345):
        batch = round_allocations(nu, total)
        assert all(np.array_equal(batch[u], round_allocation(nu[u], total)) for u in range(len(nu)))
        assert (batch.sum(axis=(1, 2)) == total).all()


def test_lp_solves_each_remaining_set_once_across_runs_and_algorithms(loose):
    """CSR-V1 and CSR-V2 (and TS-V1 and TS-V2) at one budget solve the same LPs: with a shared LP
    the second algorithm of a pair solves only the remaining sets the first never met."""
    prob, tol = loose.problem, loose.setting.tolerance
    shared = AllocationLP(prob.allocation_matrices, prob.costs)
    first = identify(prob, "CSR-V1", 2000, tol, 0, n_runs=20, lp=shared)
    second = identify(prob, "CSR-V2", 2000, tol, 0, n_runs=20, lp=shared)
    alone = identify(prob, "CSR-V2", 2000, tol, 0, n_runs=20)
    assert second.equals(alone)
    assert second.info["lp_solves"] < alone.info["lp_solves"]
    assert first.info["lp_solves"] + second.info["lp_solves"] == shared.solves
    again = identify(prob, "CSR-V1", 2000, tol, 0, n_runs=20, lp=shared)
    assert again.info["lp_solves"] == 0 and again.equals(first)
