"""The primer's models against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.primer.algorithms import backdoor_estimates
from causalbandits_lib.primer.experiments import observational_study
from causalbandits_lib.primer.model import (
    confounded_treatment_model,
    contextual_model,
    deterministic_policies,
    policy_table,
)
from causalbandits_lib.primer.theory import policy_value_decomposition


def test_confounded_model_has_the_textbook_numbers():
    m = confounded_treatment_model()
    assert m.query(["Y"], do={"X": 1})[1] == pytest.approx(0.5 * 0.75 + 0.5 * 0.35)
    assert m.query(["Y"], evidence={"X": 1})[1] == pytest.approx(0.2 * 0.75 + 0.8 * 0.35)
    with pytest.raises(ValueError, match="p_severe"):
        confounded_treatment_model(p_severe=1.5)


def test_backdoor_estimates_on_a_tiny_table():
    z = np.array([[0, 0, 1, 1]])
    x = np.array([[1, 0, 1, 1]])
    y = np.array([[1, 0, 0, 1]])
    est = backdoor_estimates(z, x, y, x_value=1, n_z=2)
    assert est["naive"][0] == pytest.approx(2 / 3)
    assert est["adjusted"][0] == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)


def test_observational_study_does_not_depend_on_batch_size():
    m = confounded_treatment_model()
    a, ca = observational_study(m, 6, 500, np.random.default_rng(0), batch_rows=500)
    b, cb = observational_study(m, 6, 500, np.random.default_rng(0), batch_rows=10_000)
    np.testing.assert_array_equal(a["adjusted"], b["adjusted"])
    np.testing.assert_array_equal(ca, cb)


def test_policy_value_decomposition_matches_soft_query():
    m = contextual_model()
    for p in deterministic_policies(3, 3)[::5]:
        table = policy_table(p, 3)
        assert policy_value_decomposition(m, table) == pytest.approx(
            m.expectation("Y", soft={"A": (("C",), table)}), abs=1e-12
        )
    assert len(deterministic_policies(3, 3)) == 27
