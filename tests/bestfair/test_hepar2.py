"""HEPAR-II facts (the paper's §6 network) against pgmpy's exact inference and the notes."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.instances import hepar2
from causalbandits_lib.bestfair.model import ProblemError


@pytest.fixture(scope="module")
def problem():
    return hepar2.hepar2_problem(hepar2.hepar2_arm_tables(np.random.default_rng(0), 4))


def test_network_shape_and_roles():
    model = hepar2.hepar2_model()
    assert len(model.nodes) == 70 and model.graph.number_of_edges() == 123
    assert model.parents("fibrosis") == ("ChHepatitis",)
    assert sorted(model.graph.successors("sex")) == ["Hyperbilirubinemia", "PBC"]
    obs = hepar2.hepar2_observations()
    assert set(obs.observed) == {"ChHepatitis", "fibrosis", "PBC", "age", "carcinoma"}  # + sex: the paper's 6 nodes
    np.testing.assert_allclose(model.query(["ChHepatitis"]), [0.1290, 0.0517, 0.8193], atol=1e-4)


def test_truth_against_pgmpy_exact_inference(problem):
    model = hepar2.hepar2_model()
    tables = problem.arm_prob  # not the tables; rebuild them from the fixture's rng instead
    arms = hepar2.hepar2_arm_tables(np.random.default_rng(0), 4)
    for k in (0, 3):
        soft = {"fibrosis": (("ChHepatitis",), arms[k])}
        assert problem.mu[k] == pytest.approx(model.expectation("carcinoma", soft=soft, values=[1.0, 0.0]), abs=1e-12)
        arm = model.intervene(soft=soft)
        cf = arm.counterfactual(["carcinoma"], do={"sex": "female"}, evidence={"sex": "male"})[0]
        factual = arm.query(["carcinoma"], evidence={"sex": "male"})[0]
        assert problem.zeta[k] == pytest.approx(cf - factual, abs=1e-12)
    assert tables.shape[0] == 4


def test_facts_in_the_notes():
    # the notes' numbers were computed on the raw table rows (summing to 1 within 1e-5);
    # our DiscreteSCM renormalises them, so agreement is to about 1e-4
    ext = hepar2.fairness_gap_extremes()
    assert ext["min"] == pytest.approx(0.0363, abs=1e-4)
    assert ext["max"] == pytest.approx(0.0440, abs=1e-4)
    assert ext["original_cpt"] == pytest.approx(0.0437, abs=1e-4)
    obs = hepar2.hepar2_observations()
    own = hepar2.hepar2_model().mechanisms["fibrosis"].table[None]
    assert obs.means(own)[0, 0] == pytest.approx(0.0641, abs=1e-4)
    # every arm is 0.2-fair: the constraint cannot bind at the paper's tolerance
    assert max(abs(ext["min"]), abs(ext["max"])) < 0.2


def test_fairness_divergences_are_very_asymmetric(problem):
    assert np.diag(problem.D) == pytest.approx(np.full(4, 75.07), abs=0.01)
    assert np.diag(problem.D_reverse) == pytest.approx(np.full(4, 2.06), abs=0.01)
    with_hyper = hepar2.hepar2_observations(("PBC", "Hyperbilirubinemia")).problem(
        hepar2.hepar2_arm_tables(np.random.default_rng(0), 4)
    )
    assert with_hyper.D[0, 0] == pytest.approx(109.2, abs=0.1)
    # the extra child does not change the truth (it is not an ancestor of carcinoma)
    np.testing.assert_allclose(with_hyper.zeta, problem.zeta, atol=1e-12)


def test_leaving_out_a_needed_child_is_refused():
    with pytest.raises(ProblemError, match="leaves out"):
        hepar2.hepar2_observations(("Hyperbilirubinemia",))
