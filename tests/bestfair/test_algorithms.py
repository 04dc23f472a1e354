"""CSR-V1/V2 and the two-stage baselines: what they return, their configuration, and the
Identifier protocol (all runs at once against one run at a time is the registry's conformance
check, ``tests/test_contracts.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from causalbandits_lib.bestfair.algorithms import (
    ALGORITHMS,
    NO_FAIR_ARM,
    AlgorithmConfig,
    Identification,
    IdentificationResult,
    identify,
    identify_loop,
)
from causalbandits_lib.bestfair.allocation import AllocationLP
from causalbandits_lib.bestfair.estimators import WeightedEstimator
from causalbandits_lib.core.protocols import Identifier

from .problems import easy_problem, unfair_problem


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
    assert (res.chosen == NO_FAIR_ARM).mean() > 0.5


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_allocation_spends_at_most_the_budget(algorithm, loose):
    prob, tol = loose.problem, loose.setting.tolerance
    res = identify(prob, algorithm, 1500, tol, seed=3, n_runs=6)
    assert res.allocation.sum(axis=(1, 2, 3)).max() <= 1500
    assert res.remaining.shape == (6, len(res.stage) + 1, prob.n_arms)
    assert np.all(res.remaining[:, 1:] <= res.remaining[:, :-1])  # arms only leave R


def test_identify_rejects_bad_arguments(loose):
    with pytest.raises(ValueError, match="algorithm='CSR'"):
        identify(loose.problem, "CSR", 1000, 0.1, 0, n_runs=1)
    with pytest.raises(ValueError, match="tolerance"):
        identify(loose.problem, "CSR-V1", 1000, 0.0, 0, n_runs=1)
    with pytest.raises(ValueError, match="T=10"):
        identify(loose.problem, "CSR-V1", 10, 0.1, 0, n_runs=1)
    with pytest.raises(ValueError, match="exactly one"):
        identify(loose.problem, "CSR-V1", 1000, 0.1, 0)
    other = easy_problem()
    with pytest.raises(ValueError, match="AllocationLP given belongs to another problem"):
        identify(
            loose.problem, "CSR-V1", 1000, 0.1, 0, n_runs=1, lp=AllocationLP(other.allocation_matrices, other.costs)
        )
    with pytest.raises(ValueError, match="WeightedEstimator given"):
        identify(loose.problem, "CSR-V1", 1000, 0.1, 0, n_runs=1, estimator=WeightedEstimator(loose.problem, 3.0))


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("allocation", "even", "allocation='even'; allowed are"),
        ("phase_rule", "log10", "phase_rule='log10'; allowed are"),
        ("log_base", 1.0, "log_base=1.0 must be > 1"),
        ("reward_margin", 0.0, "reward_margin=0.0 must be positive"),
        ("fairness_margin", -1.0, "fairness_margin=-1.0 must be positive"),
        ("budget", -0.5, "budget=-0.5 must be >= 0"),
        ("stage_split", 1.0, "stage_split=1.0 must be in"),
    ],
)
def test_config_validation_names_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        AlgorithmConfig(**{field: value})


def test_config_fields_match_the_notebook_parameters():
    import yaml

    spec = yaml.safe_load((Path(__file__).resolve().parents[2] / "notebooks/bestfair/parameters.yml").read_text())
    keys = {k for nb in spec["notebooks"].values() for k in nb["parameters"]}
    fields = set(AlgorithmConfig.__dataclass_fields__)
    assert {"allocation", "phase_rule", "log_base"} <= keys & fields
    assert AlgorithmConfig().budget_for(10000) == pytest.approx(0.01)
    assert AlgorithmConfig(budget=0.3).budget_for(10000) == 0.3


def test_identification_is_an_identifier_and_shares_its_caches():
    prob = easy_problem()
    cfg = AlgorithmConfig(budget=1.0)
    ident = Identification(prob, "CSR-V2", 400, 0.2, config=cfg)
    assert isinstance(ident, Identifier)
    assert ident.T == 400 and isinstance(ident.lp, AllocationLP) and ident.config is cfg
    full = ident.identify(5, range(4))
    assert full.equals(identify(prob, "CSR-V2", 400, 0.2, 5, n_runs=4, config=cfg))
    solves = ident.lp.solves
    again = ident.identify(5, [2])
    assert ident.lp.solves == solves  # the LP cache is kept between calls
    assert again.equals(full.select_runs([2]))
    with pytest.raises(ValueError, match="algorithm='SR'"):
        Identification(prob, "SR", 400, 0.2)


def test_results_concatenate_and_select_runs():
    prob = easy_problem()
    cfg = AlgorithmConfig(budget=1.0)
    full = identify(prob, "TS-V2", 300, 0.2, 1, n_runs=5, config=cfg)
    parts = [identify(prob, "TS-V2", 300, 0.2, 1, runs=r, config=cfg) for r in ([0, 1], [2], [3, 4])]
    stacked = IdentificationResult.concatenate(parts)
    assert stacked.equals(full) and stacked.n_runs == 5
    picked = full.select_runs([4, 0])
    assert picked.runs.tolist() == [4, 0] and picked.n_runs == 2
    assert np.array_equal(picked.chosen, full.chosen[[4, 0]])
    assert picked.equals(identify(prob, "TS-V2", 300, 0.2, 1, runs=[4, 0], config=cfg))
    assert not picked.equals(full.select_runs([0, 4]))
    assert identify_loop(prob, "TS-V2", 300, 0.2, 1, 5, config=cfg).equals(full)
