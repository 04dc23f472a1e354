"""The auditor and the counts of unfair decisions: for F-UCB the auditor's bound is the policy's
own, and its unfair decisions by its own yardstick are its rounds without a certified arm."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.fucb.auditing import UNFAIR_DEFINITIONS, radius_coverage, unfair_counts
from causalbandits_lib.fucb.experiments import audited_run, email_setup, make_policy


@pytest.fixture(scope="module")
def email():
    return email_setup()


def test_auditor_equals_fucbs_own_bound(email):
    r = audited_run(
        email.env, make_policy("F-UCB", email.decompositions["D-UCB"], email.estimator, 0.5), email.estimator, 400, 1, 2
    )
    np.testing.assert_allclose(r["own_ucb_delta"], r["audit_delta_hat"] + r["audit_radius_paper"], rtol=0, atol=1e-12)
    # its unfair decisions by its own yardstick are exactly its rounds without a certified arm
    np.testing.assert_array_equal(unfair_counts(r, [0.5])[0], r["fallback"].sum(axis=1))
    assert np.all(unfair_counts(r, [0.1, 0.5], "true") == 0)
    with pytest.raises(ValueError, match="definition"):
        unfair_counts(r, [0.1], "nonsense")


def test_unfair_counts_by_hand():
    class Result(dict):
        pass

    r = Result(
        discrepancy=np.array([[0.05, -0.3, 0.2]]),
        audit_delta_hat=np.array([[0.0, 0.1, 0.3]]),
        audit_radius_paper=np.array([[0.5, 0.5, 0.5]]),
        audit_radius_diff=np.array([[0.0, 0.05, 0.1]]),
    )
    assert unfair_counts(r, [0.1, 0.25], "true").tolist() == [[2], [1]]
    assert unfair_counts(r, [0.1, 0.25], "estimate").tolist() == [[1], [1]]
    assert unfair_counts(r, [0.1, 0.25], "auditor_paper").tolist() == [[3], [3]]
    assert unfair_counts(r, [0.1, 0.25], "auditor_diff").tolist() == [[2], [1]]
    assert set(UNFAIR_DEFINITIONS) == {"auditor_paper", "auditor_diff", "estimate", "true"}


def test_radius_coverage_by_hand():
    r = {
        "discrepancy": np.array([[0.05, -0.3, 0.2, 0.0], [0.0, 0.0, 0.0, 0.0]]),
        "audit_delta_hat": np.array([[0.0, 0.1, 0.3, 0.0], [0.2, 0.2, 0.0, 0.0]]),
        "audit_radius_paper": np.full((2, 4), 0.5),
        "audit_radius_diff": np.array([[0.05, 0.1, 0.1, 0.0], [0.1, 0.3, 0.0, 0.0]]),
    }
    # |Δ̂ - |Δ|| per round: run 0: 0.05, 0.2, 0.1, 0 ; run 1: 0.2, 0.2, 0, 0
    np.testing.assert_allclose(radius_coverage(r, "diff", [(1, 3), (3, 5)]), [[0.5, 0.5], [1.0, 1.0]])
    np.testing.assert_allclose(radius_coverage(r, "paper", [(1, 5)]), [[1.0, 1.0]])
    with pytest.raises(ValueError, match="radius"):
        radius_coverage(r, "wide", [(1, 2)])
    with pytest.raises(ValueError, match="band"):
        radius_coverage(r, "diff", [(0, 2)])
