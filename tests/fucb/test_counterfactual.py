"""Counterfactual rewards and discrepancies: Theorem 2's bounds by hand, the printed bound against the
corrected one, and the monotone coupling against Eq. 8 and twin-network Monte Carlo."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from causalbandits_lib.core.scm import DiscreteSCM, NotIdentifiableError
from causalbandits_lib.fucb.counterfactual import (
    counterfactual_bounds,
    identified_discrepancy,
    monotone_counterfactual,
    monotone_counterfactual_means,
    monotone_discrepancy_table,
    printed_theorem2_bounds,
    theorem2_bounds,
    worst_case_discrepancy,
)
from causalbandits_lib.fucb.instances.email_campaign import SENSITIVE, email_campaign_env


@pytest.fixture(scope="module")
def env():
    return email_campaign_env()


def test_theorem2_bounds_by_hand():
    means = np.array([[0.2, 0.6], [0.5, 0.1]])  # (z, b)
    lo, hi = theorem2_bounds(means, np.array([0.25, 0.75]))
    assert lo == pytest.approx(0.25 * 0.2 + 0.75 * 0.1) and hi == pytest.approx(0.25 * 0.6 + 0.75 * 0.5)
    assert worst_case_discrepancy(0.1, 0.3, 0.2, 0.5) == pytest.approx(max(abs(0.3 - 0.2), abs(0.5 - 0.1)))
    with pytest.raises(ValueError, match="shape"):
        theorem2_bounds(means, np.ones(3))


def test_printed_theorem2_fails_and_the_corrected_bounds_hold_when_age_descends_from_gender():
    env = email_campaign_env(age_given_gender=(0.3, 0.7))
    dec = env.decomposition(("A3", "I1", "I2"))
    true = monotone_counterfactual_means(env, SENSITIVE)
    lo, hi = counterfactual_bounds(dec, env.varied_contexts(SENSITIVE, ["X2"]))
    assert np.all(true >= lo - 1e-12) and np.all(true <= hi + 1e-12)
    lo_p = np.stack([printed_theorem2_bounds(dec, SENSITIVE, s, ["X2"])[0] for s in (0, 1)], axis=-1)
    # X2 is not in W: the printed bound collapses to the factual mean for both s*
    np.testing.assert_allclose(lo_p, np.repeat(env.means[..., None], 2, axis=-1), atol=1e-14)
    factual_s = env.context_codes[:, 0]
    counter = true[np.arange(8), :, 1 - factual_s]
    assert np.all(np.abs(counter - env.means) > 1e-4)


def test_monotone_counterfactual_agrees_with_identified_and_with_twin_sampling(env):
    dec = env.decomposition(("A3", "I1", "I2"))
    np.testing.assert_allclose(
        monotone_discrepancy_table(env, SENSITIVE),
        identified_discrepancy(dec, env.counterfactual_contexts(SENSITIVE)),
        atol=1e-14,
    )
    # a non-identified model: income depends on sex and age, age on sex; twin-network Monte Carlo
    m = DiscreteSCM(
        {"sex": (0, 1), "age": (0, 1), "income": (0, 1)},
        {
            "sex": ((), [0.4, 0.6]),
            "age": (("sex",), [[0.7, 0.3], [0.5, 0.5]]),
            "income": (("sex", "age"), [[[0.9, 0.1], [0.7, 0.3]], [[0.8, 0.2], [0.4, 0.6]]]),
        },
    )
    rng = np.random.default_rng(3)
    u = rng.random((400000, 3))
    fact = m.sample_from_uniforms(u)
    twin = m.sample_from_uniforms(u, do_codes={"sex": 0})
    for ev in itertools.product((0, 1), repeat=3):
        sel = (fact["sex"] == ev[0]) & (fact["age"] == ev[1]) & (fact["income"] == ev[2])
        exact = monotone_counterfactual(m, dict(zip(("sex", "age", "income"), ev)), {"sex": 0}, ["age", "income"])
        mc = np.array([[np.mean((twin["age"][sel] == i) & (twin["income"][sel] == j)) for j in (0, 1)] for i in (0, 1)])
        assert np.all(np.abs(mc - exact) < 5 * np.sqrt(exact * (1 - exact) / sel.sum()) + 1e-3), ev
    with pytest.raises(NotIdentifiableError, match="no evidence"):
        monotone_counterfactual(m, {"income": 1, "sex": 1}, {"sex": 0}, ["income"])
