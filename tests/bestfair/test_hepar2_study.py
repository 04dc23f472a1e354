"""The HEPAR-II notebook's runs and bookkeeping (hepar2_study) and the chapter's at-or-below checks,
against hand-made inputs with hand-computed expectations."""

from __future__ import annotations

import math
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest

from causalbandits_lib.bestfair.experiments import (
    budget_curves,
    check_at_or_below,
    check_csr_at_or_below_baselines,
    grid_mean_se,
)
from causalbandits_lib.bestfair.hepar2_study import (
    CONFIGS,
    PAPER,
    SPLIT,
    Hepar2Draw,
    allocation_metrics,
    gap_metrics,
    network_facts,
    run_draw,
)
from causalbandits_lib.bestfair.instances.synthetic import bernoulli_context_problem

from .problems import easy_problem

e_ps, e_psp = np.array([0.3, 0.4, 0.3]), np.array([0.35, 0.3, 0.35])
e_q = np.array([[0.5, 0.5, 0.5], [0.75, 0.7, 0.75], [0.3, 0.35, 0.3], [0.55, 0.5, 0.6]])


class _Model:
    """A four-node network a -> c <- b, c -> d: 4 nodes, 3 arcs, largest in-degree 2."""

    def __init__(self):
        self.graph = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d")])
        self.nodes = list(self.graph.nodes)

    def parents(self, n):
        return list(self.graph.predecessors(n))


class _Recorder:
    def __init__(self):
        self.metrics = {}

    def metric(self, name, value):
        self.metrics[name] = value


def test_network_facts_count_nodes_arcs_degrees_and_observed_nodes():
    facts, observed = network_facts(_Model(), ["d", "b"], sensitive="a")
    assert facts == {"nodes": 4, "arcs": 3, "average_degree": 1.5, "max_in_degree": 2, "observed": 3}
    assert observed == ["a", "b", "d"]


def test_gap_metrics_name_the_exact_gaps_and_means():
    problem = SimpleNamespace(zeta=np.array([0.03, -0.01, 0.02]), mu=np.array([0.1, 0.2, 0.3]))
    m = gap_metrics(problem, {"min": -0.5, "max": 0.25, "original_cpt": 0.04}, 0.15)
    assert m["hepar2.fairness_gap.original_cpt"] == 0.04
    assert m["hepar2.fairness_gap.range"] == [-0.01, 0.03]
    assert m["hepar2.fairness_gap.all_possible_arms"] == [-0.5, 0.25]
    assert m["hepar2.mean.original_cpt"] == 0.15
    assert m["hepar2.mean.arms"] is problem.mu


def _draw(binding=True):
    """Two budgets, four runs; TS-V2 errs in runs 0 and 1 at the first budget and run 3 at the
    second, and k* was lost in runs 0 and 3 at the first budget: lost in 1 of its 3 erroneous runs."""
    e = lambda *rows: np.array(rows, dtype=bool)  # noqa: E731
    paper = {
        "CSR-V1": e([1, 0, 0, 0], [0, 0, 0, 0]),
        "CSR-V2": e([0, 0, 0, 0], [0, 0, 0, 0]),
        "TS-V1": e([0, 0, 0, 0], [0, 0, 0, 0]),
        "TS-V2": e([1, 1, 0, 0], [0, 0, 0, 1]),
    }
    split = {alg: ~err for alg, err in paper.items()}
    lost = {"TS-V1": e([0, 0, 0, 0], [0, 0, 0, 0]), "TS-V2": e([1, 0, 0, 1], [0, 0, 0, 0])}
    problem = easy_problem()  # means 0.5, 0.73.., 0.31.., 0.55..: arm 2 best; every arm fair at 0.2
    return Hepar2Draw(problem, 0.2, 0.2, (100, 200), {PAPER: paper, SPLIT: split}, lost, dict(paper) if binding else {})


def test_a_draw_knows_its_screening_losses_among_its_errors():
    share = _draw().lost_share_of_errors()
    assert share["TS-V2"] == pytest.approx(1 / 3)
    assert math.isnan(share["TS-V1"])  # TS-V1 never erred


def test_a_draw_records_the_first_draws_metrics_and_only_errors_of_the_others():
    d = _draw()
    nb = _Recorder()
    d.record(nb)
    m = nb.metrics
    assert m["hepar2.error.TS-V2"].tolist() == [0.5, 0.25]
    assert m["hepar2.split_allocation.error.TS-V2"].tolist() == [0.5, 0.75]
    assert m["hepar2.best_arm_lost_in_screening.TS-V2"].tolist() == [0.5, 0.0]
    assert m["hepar2.best_arm_lost_share_of_errors.TS-V2"] == pytest.approx(1 / 3)
    assert m["hepar2.binding.n_fair"] == 4 and m["hepar2.binding.best_arm"] == 1
    assert m["hepar2.binding.error.CSR-V1"].tolist() == [0.25, 0.0]
    later = d.metrics(instance=2)
    assert set(later) == {f"hepar2.error_instance3.{a}" for a in ("CSR-V1", "CSR-V2", "TS-V1", "TS-V2")}
    assert "hepar2.binding.error.CSR-V1" not in _draw(binding=False).metrics()


def test_binding_facts_name_the_fair_arms_and_the_best_arms():
    facts = _draw().binding_facts()
    assert facts["n_fair"] == 4 and facts["k_star"] == 1 and facts["best_overall"] == 1


def test_allocation_metrics_take_the_natural_share_of_every_budget():
    class LP:  # two arms; the natural row sums to 0.1 at B = 1/10 and 0.2 at B = 1/20
        def solve(self, remaining, B):
            assert remaining.tolist() == [True, True]
            nat = 0.05 if B == pytest.approx(0.1) else 0.1
            return np.array([[nat, nat], [0.2, 0.2], [0.25, 0.25]]), None

    m = allocation_metrics(LP(), 2, [100, 400])
    assert m["hepar2.allocation_fraction_by_kind"].tolist() == pytest.approx([0.2, 0.4, 0.5])
    assert m["hepar2.expected_natural_pulls"] == pytest.approx([10.0, 80.0])


def test_run_draw_equals_the_budget_curves_it_is_made_of():
    # the same arms with a free arm 1 (the budget rule of §5, B = 1/√T)
    p = bernoulli_context_problem(e_ps, e_psp, e_q)
    d = run_draw(p, [200, 400], 0.2, 0.2, seed=3, n_runs=3)
    for label, cfg in CONFIGS.items():
        curves = budget_curves(p, ("CSR-V1", "CSR-V2", "TS-V1", "TS-V2"), [200, 400], 0.2, 3, 3, config=cfg)
        for alg, results in curves.items():
            assert np.array_equal(d.errors[label][alg], np.stack([r.error for r in results]))
    assert set(d.lost) == {"TS-V1", "TS-V2"} and d.lost["TS-V2"].shape == (2, 3)
    assert set(d.binding) == set(d.errors[PAPER])


def test_at_or_below_is_judged_budget_by_budget():
    below = {
        "A": np.array([[0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]], float),
        "B": np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]], float),
    }
    v = check_at_or_below(below, "A", "B", [10, 20])
    # T=10: below in every run (holds); T=20: equal in every run (inconclusive) -> reproduced
    assert v.verdict == "reproduced"
    assert "equal in every run" in v.reason
    above = {"A": below["B"], "B": below["A"]}
    assert check_at_or_below(above, "A", "B", [10, 20]).verdict == "not reproduced"


def test_csr_at_or_below_baselines_combines_the_four_pairs():
    z, o = np.zeros((1, 6)), np.ones((1, 6))
    per = {"CSR-V1": z, "CSR-V2": z, "TS-V1": o, "TS-V2": o}
    v = check_csr_at_or_below_baselines(per, [10])
    assert v.verdict == "reproduced"
    assert set(v.details["parts"]) == {"CSR-V1 ≤ TS-V1", "CSR-V1 ≤ TS-V2", "CSR-V2 ≤ TS-V1", "CSR-V2 ≤ TS-V2"}


def test_grid_mean_se_summarises_each_runs_grid_mean():
    # runs' grid means 0.5, 0.0, 1.0: mean 0.5, sd 0.5, se 0.5 / √3
    per = {"A": np.array([[1, 0, 1], [0, 0, 1]], float)}
    assert grid_mean_se(per) == {"A": {"mean": 0.5, "se": pytest.approx(0.5 / math.sqrt(3))}}


def test_mean_se_of_hand_made_samples():
    # 0, 1, 1, 0: mean 0.5, sd √(1/3), se √(1/3)/2
    from causalbandits_lib.bestfair.experiments import mean_se

    assert mean_se(np.array([False, True, True, False])) == {"mean": 0.5, "se": pytest.approx(math.sqrt(1 / 3) / 2)}
