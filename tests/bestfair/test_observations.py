"""A problem from a causal model by exact inference, against the direct construction and pgmpy."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.instances.synthetic import bernoulli_context_scm
from causalbandits_lib.bestfair.model import ProblemError
from causalbandits_lib.bestfair.observations import problem_from_scm

from .problems import small_instance


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
