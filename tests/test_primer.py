"""The primer's models against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib import primer


def test_confounded_model_has_the_textbook_numbers():
    m = primer.confounded_treatment_model()
    assert m.query(["Y"], do={"X": 1})[1] == pytest.approx(0.5 * 0.75 + 0.5 * 0.35)
    assert m.query(["Y"], evidence={"X": 1})[1] == pytest.approx(0.2 * 0.75 + 0.8 * 0.35)
    with pytest.raises(ValueError, match="p_severe"):
        primer.confounded_treatment_model(p_severe=1.5)


def test_backdoor_estimates_on_a_tiny_table():
    z = np.array([[0, 0, 1, 1]])
    x = np.array([[1, 0, 1, 1]])
    y = np.array([[1, 0, 0, 1]])
    est = primer.backdoor_estimates(z, x, y, x_value=1, n_z=2)
    assert est["naive"][0] == pytest.approx(2 / 3)
    assert est["adjusted"][0] == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)


def test_observational_study_does_not_depend_on_batch_size():
    m = primer.confounded_treatment_model()
    a, ca = primer.observational_study(m, 6, 500, np.random.default_rng(0), batch_rows=500)
    b, cb = primer.observational_study(m, 6, 500, np.random.default_rng(0), batch_rows=10_000)
    np.testing.assert_array_equal(a["adjusted"], b["adjusted"])
    np.testing.assert_array_equal(ca, cb)


def test_policy_value_decomposition_matches_soft_query():
    m = primer.contextual_model()
    for p in primer.deterministic_policies(3, 3)[::5]:
        table = primer.policy_table(p, 3)
        assert primer.policy_value_decomposition(m, table) == pytest.approx(m.expectation("Y", soft={"A": (("C",), table)}), abs=1e-12)
    assert len(primer.deterministic_policies(3, 3)) == 27
