"""Best fair intervention (Gao and Feng 2021): problem, estimators, allocation LP, algorithms, theory."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.bestfair import (
    ALGORITHMS,
    AlgorithmConfig,
    AllocationLP,
    WeightedEstimator,
    clip_multiplier,
    fairness_divergence,
    identify,
    identify_loop,
    linprog_allocation,
    n_phases,
    outcome_divergence,
    phase_budgets,
    problem_from_scm,
    round_allocation,
)
from causalbandits_lib.bestfair.allocation import ALL_BLOCKS, FAIRNESS_BLOCKS, OUTCOME_BLOCK, harmonic
from causalbandits_lib.bestfair.problem import FairArmsProblem, ProblemError
from causalbandits_lib.bestfair.synthetic import (
    SETTINGS,
    bernoulli_context_problem,
    bernoulli_context_scm,
    synthetic_instance,
)
from causalbandits_lib.bestfair.theory import (
    fairness_clip_quantile,
    outcome_clip_quantile,
    phase_of_gap,
    theorem1_bound,
    theorem1_constants,
    theorem2_bound,
)


def small_instance(rng: np.random.Generator, K: int = 4, m: int = 3, spread: float = 0.6):
    """A random synthetic instance with K arms and m contexts (contexts with positive mass)."""
    ps = rng.dirichlet(np.full(m, 2.0))
    psp = rng.dirichlet(np.full(m, 2.0))
    q = rng.uniform(0.5 - spread / 2, 0.5 + spread / 2, (K, m))
    return ps, psp, q, bernoulli_context_problem(ps, psp, q)


# ---------------------------------------------------------------------------- divergences
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


# ---------------------------------------------------------------------------- the model
def test_direct_construction_equals_exact_inference_on_the_scm():
    rng = np.random.default_rng(2)
    ps, psp, q, direct = small_instance(rng, K=3, m=4)
    scm = bernoulli_context_scm(ps, psp, q[0])
    tables = np.stack([1 - q, q], axis=-1)
    via_scm = problem_from_scm(scm, "S", "V", "Y", tables, sensitive_values=("s", "s'"))
    assert via_scm.observed == ("X", "V", "Y")
    np.testing.assert_allclose(via_scm.cell_probs, direct.cell_probs, atol=1e-14)
    np.testing.assert_allclose(via_scm.rho, direct.rho, rtol=1e-13)
    np.testing.assert_allclose(via_scm.M, direct.M, rtol=1e-12)
    np.testing.assert_allclose(via_scm.D_reverse, direct.D_reverse, rtol=1e-12)
    # ground truth against pgmpy's exact inference, arm by arm
    for k in range(3):
        soft = {"V": (("X",), tables[k])}
        assert direct.mu[k] == pytest.approx(scm.expectation("Y", soft=soft), abs=1e-12)
        arm = scm.intervene(soft=soft)
        cf = arm.counterfactual(["Y"], do={"S": "s"}, evidence={"S": "s'"})[1]
        factual = arm.query(["Y"], evidence={"S": "s'"})[1]
        assert direct.zeta[k] == pytest.approx(cf - factual, abs=1e-12)
        assert direct.zeta_reverse[k] == pytest.approx(-direct.zeta[k], abs=1e-15)
    closed_form_mu = 0.01 + 0.98 * q @ (0.5 * (ps + psp))
    np.testing.assert_allclose(direct.mu, closed_form_mu, atol=1e-14)
    np.testing.assert_allclose(direct.zeta, 0.98 * q @ (ps - psp), atol=1e-14)


def test_roles_are_checked_with_clear_errors():
    ps, psp, q, _ = small_instance(np.random.default_rng(3))
    scm = bernoulli_context_scm(ps, psp, q[0])
    tables = np.stack([1 - q, q], axis=-1)
    with pytest.raises(ProblemError, match="'Z' is not in"):
        problem_from_scm(scm, "Z", "V", "Y", tables)
    with pytest.raises(ProblemError, match="has parents"):
        problem_from_scm(scm, "X", "V", "Y", tables)
    with pytest.raises(ProblemError, match="shape"):
        problem_from_scm(scm, "S", "V", "Y", tables[:, :2])
    with pytest.raises(ProblemError, match="share"):
        bad = q.copy()
        bad[1, 0] = 1.0
        FairArmsProblem(*_cells_with_zero(ps, psp, bad))


def _cells_with_zero(ps, psp, q):
    p = bernoulli_context_problem(ps, psp, np.clip(q, 0.01, 0.99))
    arm_prob = p.arm_prob.copy()
    arm_prob[1, 0] = 0.0  # arm 1 cannot produce a cell the others produce
    return p.cell_probs, arm_prob, p.rho, p.cell_y


# ---------------------------------------------------------------------------- estimators
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
    for l in range(1, 10):
        eps = 2.0 ** -(l - 1)
        y = est.expected(alloc, l, "outcome")
        assert np.all(y <= prob.mu + 1e-12) and np.all(prob.mu <= y + eps / 2 + 1e-12)  # Lemma 6, Eq. 30
        for which, truth in (("fairness", prob.zeta), ("fairness_reverse", prob.zeta_reverse)):
            assert np.all(np.abs(est.expected(alloc, l, which) - truth) <= eps / 2 + 1e-12)  # Eq. 31
    for i, j in [(0, 1), (1, 0), (3, 7), (5, 5)]:
        for l in (1, 3, 6):
            eps = 2.0 ** -(l - 1)
            assert outcome_clip_quantile(prob, i, j, eps) <= clip_multiplier(l) * prob.M[i, j]
            assert fairness_clip_quantile(prob, i, j, eps) <= clip_multiplier(l) * prob.D[i, j]
            assert fairness_clip_quantile(prob, i, j, eps, reverse=True) <= clip_multiplier(l) * prob.D_reverse[i, j]


def test_clip_multiplier():
    assert clip_multiplier(3) == pytest.approx(6.0)
    assert clip_multiplier(3, math.e) == pytest.approx(6 * math.log(2))
    assert clip_multiplier(None) == math.inf
    with pytest.raises(ValueError, match="phase"):
        clip_multiplier(0)


# ---------------------------------------------------------------------------- allocation
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


# ---------------------------------------------------------------------------- algorithms
@pytest.fixture(scope="module")
def loose():
    return synthetic_instance("loose", np.random.default_rng(9))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_vectorised_equals_loop(algorithm, loose):
    prob, tol = loose.problem, loose.setting.tolerance
    lp = AllocationLP(prob.allocation_matrices, prob.costs)
    vec = identify(prob, algorithm, 1500, tol, seed=3, n_runs=6, lp=lp)
    loop = identify_loop(prob, algorithm, 1500, tol, seed=3, n_runs=6, lp=lp)
    assert vec.equals(loop)
    # a run does not depend on which runs are simulated beside it
    alone = identify(prob, algorithm, 1500, tol, seed=3, runs=[4], lp=lp)
    assert alone.chosen[0] == vec.chosen[4] and np.array_equal(alone.estimates[0], vec.estimates[4], equal_nan=True)
    assert vec.allocation.sum(axis=(1, 2, 3)).max() <= 1500


def test_split_allocation_variant_is_also_identical_to_the_loop(loose):
    prob, tol = loose.problem, loose.setting.tolerance
    cfg = AlgorithmConfig(allocation="split")
    assert identify(prob, "CSR-V2", 1200, tol, 1, n_runs=4, config=cfg).equals(
        identify_loop(prob, "CSR-V2", 1200, tol, 1, 4, config=cfg)
    )


def easy_problem():
    # four arms, well separated means, all fair by far at tolerance 0.2, small divergences
    ps = np.array([0.3, 0.4, 0.3])
    psp = np.array([0.35, 0.3, 0.35])
    q = np.array([[0.5, 0.5, 0.5], [0.75, 0.7, 0.75], [0.3, 0.35, 0.3], [0.55, 0.5, 0.6]])
    return bernoulli_context_problem(ps, psp, q, costs=np.ones((3, 4)))


def unfair_problem():
    # every |ζ| is about 0.2 > 𝓔 = 0.1
    ps, psp = np.array([0.6, 0.2, 0.2]), np.array([0.2, 0.4, 0.4])
    q = np.array([[0.8, 0.3, 0.3], [0.2, 0.7, 0.7], [0.9, 0.5, 0.4], [0.3, 0.8, 0.9]])
    return bernoulli_context_problem(ps, psp, q, costs=np.ones((3, 4)))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_error_vanishes_with_budget_on_an_easy_instance(algorithm):
    prob = easy_problem()
    assert prob.best_fair_arm(0.2) == 1 and prob.fair(0.2).all()
    cfg = AlgorithmConfig(budget=1.0)
    errors = [identify(prob, algorithm, T, 0.2, seed=0, n_runs=40, config=cfg).error_rate for T in (100, 20000)]
    assert errors[-1] == 0.0
    assert errors[0] >= errors[-1]


def test_csr_declares_no_fair_arm_when_none_is_fair():
    prob = unfair_problem()
    assert not prob.fair(0.1).any()
    res = identify(prob, "CSR-V2", 20000, 0.1, seed=0, n_runs=20, config=AlgorithmConfig(budget=1.0))
    assert res.best_arm == -1
    assert res.error_rate < 0.5
    assert (res.chosen == -1).mean() > 0.5


def test_identify_rejects_bad_arguments(loose):
    with pytest.raises(ValueError, match="algorithm='CSR'"):
        identify(loose.problem, "CSR", 1000, 0.1, 0, n_runs=1)
    with pytest.raises(ValueError, match="tolerance"):
        identify(loose.problem, "CSR-V1", 1000, 0.0, 0, n_runs=1)
    with pytest.raises(ValueError, match="exactly one"):
        identify(loose.problem, "CSR-V1", 1000, 0.1, 0)
    with pytest.raises(ValueError, match="allocation"):
        AlgorithmConfig(allocation="even")


# ---------------------------------------------------------------------------- synthetic instances
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_synthetic_settings_are_met_exactly(name):
    inst = synthetic_instance(name, np.random.default_rng(10))
    s, prob = inst.setting, inst.problem
    assert prob.n_arms == 30 and inst.q.shape == (30, 20)
    assert int((~prob.fair(s.tolerance)).sum()) == s.n_infeasible
    gaps = prob.gaps(s.tolerance)
    if s.n_infeasible < s.n_arms:
        assert gaps["outcome_gap"] == pytest.approx(s.outcome_gap, abs=1e-9)
    else:
        assert prob.best_fair_arm(s.tolerance) == -1
    if s.n_infeasible:
        assert gaps["fairness_gap"] == pytest.approx(s.fairness_gap, abs=1e-9)
    others = np.arange(1, 30)
    assert np.all((prob.M[others, 0] > s.m_band[0]) & (prob.M[others, 0] < s.m_band[1]))
    d = np.r_[prob.D[others, 0], prob.D_reverse[others, 0]]
    assert np.all((d > s.d_band[0]) & (d < s.d_band[1]))
    assert inst.facts["n_better_infeasible"] == s.n_better_infeasible


# ---------------------------------------------------------------------------- theory
def test_phase_of_gap():
    np.testing.assert_array_equal(phase_of_gap(np.array([10.0, 5.0, 4.9, 0.0]), 10.0), [1, 2, 2, np.inf])
    # 10/2^l < gap <= 10/2^(l-1): gap 0.06 falls in phase 8 (0.039 < 0.06 <= 0.078)
    assert phase_of_gap(np.array([0.06]), 10.0)[0] == 8


def test_theorem_bounds_are_computable(loose):
    prob, tol = loose.problem, loose.setting.tolerance
    c = theorem1_constants(prob, tol, 1 / math.sqrt(5000))
    assert np.isinf(c["rho"][c["k_star"]]) and np.all(np.isfinite(np.delete(c["rho"], c["k_star"])))
    b = theorem1_bound(prob, tol, 5000)
    assert b["bound"] > 1  # vacuous at the paper's budgets, as the notes predict
    assert b["T_nonvacuous"] > 5000
    t2 = theorem2_bound(unfair_problem(), 0.1, 5000, config=AlgorithmConfig(budget=1.0))
    assert t2["lower_bound"] <= 1 and t2["xi_star"] == pytest.approx(0.0764, abs=1e-9)
    with pytest.raises(ValueError, match="fair"):
        theorem2_bound(prob, tol, 5000)


def test_benchmark_harness_accepts_self_timing_cases():
    from benchmarks.bench_bestfair import IdentificationCase
    from benchmarks.harness import run_case

    rows = run_case(IdentificationCase("t", "loose", "CSR-V1", T=400, runs=(2,)), repeat=1)
    assert rows[0]["identical"] and rows[0]["n_runs"] == 2 and rows[0]["ratio"] > 0


@pytest.mark.parametrize("how", [{"jobs": 2}, {"jobs": 2, "scheduler": "local"}])
def test_budget_curves_are_the_same_on_worker_processes(how, loose):
    """The budget curves run through sweep.map_tasks: identical results serially (shared LP
    cache), on joblib workers and on a Dask LocalCluster (fresh LP per task)."""
    from causalbandits_lib.bestfair.algorithms import budget_curves

    prob, tol = loose.problem, loose.setting.tolerance
    args = (prob, ["CSR-V2", "TS-V1"], [500, 1500], tol, 4, 6)
    serial = budget_curves(*args)
    parallel = budget_curves(*args, **how)
    for alg in serial:
        assert [r.T for r in parallel[alg]] == [500, 1500]
        assert all(a.equals(b) for a, b in zip(serial[alg], parallel[alg]))
