"""The extended standard fairness model: context SCM and identification."""

from __future__ import annotations

import pytest
from scipy.special import expit

from causalbandits_lib.cclb.model import context_model, sfm_graph
from causalbandits_lib.core import graphs


def test_context_model_matches_the_calibrated_marginals():
    m = context_model()
    for a in (0, 1):
        pw = m.query(["W"], evidence={"A": a})[1]
        assert pw == pytest.approx(expit(1.2 * (2 * a - 1)), abs=1e-4)
    assert m.query(["A"])[1] == pytest.approx(0.5)


def test_identification_by_rule_2_holds_in_the_graph():
    g = sfm_graph()
    cut = g.copy()
    cut.remove_edges_from([(u, v) for u, v in g.edges if u in ("A", "D")])  # edges out of D and A
    assert graphs.d_separated(cut, {"D", "A"}, {"Y"}, {"W", "M"})
    # without conditioning on the mediators the statement fails (M carries A's effect)
    assert not graphs.d_separated(g, {"A"}, {"Y"}, {"W"})


def test_bad_latent_agreement_names_the_value():
    with pytest.raises(ValueError, match="latent_agreement=1.0"):
        context_model(latent_agreement=1.0)
