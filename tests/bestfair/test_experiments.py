"""The budget curves (one parallel task per budget and family of algorithms) and replicated samples."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.algorithms import AlgorithmConfig, identify
from causalbandits_lib.bestfair.experiments import (
    Case,
    budget_curves,
    draw_counts,
    error_rates,
    instance_errors,
    lp_families,
    many_budget_curves,
    many_instance_errors,
)
from causalbandits_lib.core import checks

from .problems import easy_problem, unfair_problem


@pytest.mark.parametrize("how", [{"jobs": 2}, {"jobs": 2, "scheduler": "local"}])
def test_budget_curves_are_the_same_on_worker_processes(how, loose):
    """The budget curves run through core.parallel.map_tasks: identical results serially (shared LP
    cache), on joblib workers and on a Dask LocalCluster (fresh LP per task). A task holds the
    algorithms that solve the same LPs at one budget, so the workers solve no more LPs than one
    process does."""
    prob, tol = loose.problem, loose.setting.tolerance
    args = (prob, ["CSR-V2", "TS-V1", "CSR-V1"], [500, 1500], tol, 4, 6)
    serial = budget_curves(*args)
    parallel = budget_curves(*args, **how)
    assert list(parallel) == ["CSR-V2", "TS-V1", "CSR-V1"]
    for alg in serial:
        assert [r.T for r in parallel[alg]] == [500, 1500]
        assert all(a.equals(b) for a, b in zip(serial[alg], parallel[alg]))

    def solves(curves):
        return sum(r.info["lp_solves"] for results in curves.values() for r in results)

    assert solves(parallel) == solves(serial)


@pytest.mark.parametrize("jobs", [1, 2])
def test_many_problems_in_one_batch_equal_each_problem_alone(jobs, loose):
    """The notebook batches every instance's tasks into one call (many_instance_errors): each
    problem's errors and screening losses are those of instance_errors on it alone, whatever the
    number of runs of each."""
    cfg = AlgorithmConfig(budget=1.0)
    cases = [
        Case(loose.problem, loose.setting.tolerance, 5),
        Case(easy_problem(), 0.2, 3),
        Case(unfair_problem(), 0.1, 4),
    ]
    algs, budgets = ["CSR-V2", "TS-V1", "TS-V2"], [300, 900]
    together = many_instance_errors(cases, algs, budgets, 6, config=cfg, jobs=jobs)
    assert len(together) == len(cases)
    for case, (errors, lost) in zip(cases, together):
        alone_errors, alone_lost = instance_errors(
            case.problem, algs, budgets, case.tolerance, 6, case.n_runs, config=cfg
        )
        assert list(errors) == algs and set(lost) == set(alone_lost)
        for alg in algs:
            assert errors[alg].shape == (2, case.n_runs) and np.array_equal(errors[alg], alone_errors[alg])
        for alg in lost:
            assert np.array_equal(lost[alg], alone_lost[alg])


@pytest.mark.parametrize("jobs", [1, 2])
def test_instance_errors_are_those_of_the_full_results(jobs, loose):
    """The tasks of many_instance_errors return only the errors and screening losses; they equal
    those taken from the full results of many_budget_curves (the reference: `error`, and `remaining`
    at the end of stage 1 for the two-stage baselines when a best fair arm exists)."""
    cfg = AlgorithmConfig(budget=1.0)
    cases = [
        Case(loose.problem, loose.setting.tolerance, 5),
        Case(easy_problem(), 0.2, 3),
        Case(unfair_problem(), 0.1, 4),
    ]
    algs, budgets = ["TS-V1", "CSR-V1", "CSR-V2", "TS-V2"], [300, 900]
    kept = many_instance_errors(cases, algs, budgets, 2, config=cfg, jobs=jobs)
    full = many_budget_curves(cases, algs, budgets, 2, config=cfg)
    for case, (errors, lost), curves in zip(cases, kept, full):
        k_star = case.problem.best_fair_arm(case.tolerance)
        assert list(errors) == algs
        assert set(lost) == ({"TS-V1", "TS-V2"} if k_star >= 0 else set())
        for alg, results in curves.items():
            np.testing.assert_array_equal(errors[alg], np.stack([r.error for r in results]))
            if alg in lost:
                ref = np.stack([~r.remaining[:, int((r.stage == 1).sum()), k_star] for r in results])
                np.testing.assert_array_equal(lost[alg], ref)


def test_lp_families_group_the_variants_of_an_algorithm():
    assert lp_families(["CSR-V2", "TS-V1", "CSR-V1", "TS-V2"]) == [("CSR-V2", "CSR-V1"), ("TS-V1", "TS-V2")]
    assert lp_families(["TS-V2"]) == [("TS-V2",)]


def test_budget_curves_and_error_rates_are_identify_per_pair():
    prob, cfg = easy_problem(), AlgorithmConfig(budget=1.0)
    curves = budget_curves(prob, ["CSR-V1", "TS-V2"], [200, 400], 0.2, 7, 3, config=cfg)
    assert list(curves) == ["CSR-V1", "TS-V2"]
    for alg, results in curves.items():
        for T, res in zip([200, 400], results):
            assert res.equals(identify(prob, alg, T, 0.2, 7, n_runs=3, config=cfg))
    errors = error_rates(prob, [200, 400], 0.2, 7, 3, algorithms=["CSR-V1", "TS-V2"], config=cfg)
    assert errors["TS-V2"].shape == (2, 3)
    assert np.array_equal(errors["CSR-V1"][1], curves["CSR-V1"][1].error)


def test_draw_counts_replicates_are_independent_streams():
    prob = easy_problem()
    alloc = np.zeros((3, 4), dtype=np.int64)
    alloc[0, 0], alloc[2, 3] = 50, 7
    counts = draw_counts(prob, alloc, seed=2, n_runs=5)
    assert counts.shape == (5, 3, 4, prob.n_cells) and counts.dtype == np.int64
    np.testing.assert_array_equal(counts.sum(-1), np.broadcast_to(alloc, (5, 3, 4)))
    # replicate i draws from its own stream: fewer replicates give the same first rows
    np.testing.assert_array_equal(draw_counts(prob, alloc, seed=2, n_runs=2), counts[:2])
    assert not np.array_equal(counts[0], counts[1])
    with pytest.raises(ValueError, match="allocation must be non-negative"):
        draw_counts(prob, -alloc, seed=2, n_runs=1)


def test_claim_checks_can_fail_and_tell_ties():
    from causalbandits_lib.bestfair.experiments import check_falls

    rng = np.random.default_rng(0)
    low, high = rng.random(100) < 0.1, rng.random(100) < 0.6
    assert checks.check_paired_lower(low, high, ("a", "b")).verdict == "reproduced"
    assert checks.check_paired_lower(high, low, ("b", "a")).verdict == "not reproduced"
    tie = checks.check_paired_lower(low, low.copy(), ("a", "b"))
    assert tie.verdict == "not reproduced" and "equal in every run" in tie.reason
    # a margin asks for more than a difference
    assert checks.check_paired_lower(low, high, ("a", "b"), margin=0.45).verdict != "reproduced"
    assert check_falls(np.zeros(5), np.zeros(5)).verdict == "reproduced"  # nothing to fall
    assert check_falls(low, high).verdict == "not reproduced"
    assert checks.check_mean_above(high, 0.3).verdict == "reproduced"
    assert checks.check_mean_above(low, 0.3).verdict == "not reproduced"
    assert checks.check_mean_above(np.array([0.0, 1.0]), 0.5).verdict == "not testable here"  # underpowered
    yes, no = checks.check_paired_lower(low, high, ("a", "b")), checks.check_paired_lower(high, low, ("b", "a"))
    assert checks.check_parts({"1": yes, "2": yes}, "r").verdict == "reproduced"
    assert checks.check_parts({"1": yes, "2": yes, "3": no}, "r").verdict == "partly"
    assert checks.check_parts({"1": yes, "2": no}, "r").verdict == "not reproduced"  # contradicted on half
    assert checks.check_parts({"1": no, "2": no}, "r").verdict == "not reproduced"
    assert checks.check_parts({"1": tie, "2": tie}, "r").verdict == "not reproduced"  # a strict claim fails on ties
    both = checks.check_parts({"1": yes, "2": no}, "r")
    assert both.details["parts"]["2"]["verdict"] == "not reproduced"
