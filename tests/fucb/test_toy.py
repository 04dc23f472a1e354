"""The toy instance: its arm means and discrepancies are the ones its docstring promises."""

from __future__ import annotations

import numpy as np

from causalbandits_lib.fucb.instances.toy import fair_toy


def test_toy_means_and_discrepancy():
    env, dec = fair_toy()
    np.testing.assert_allclose(env.means, [[0.3, 0.5], [1.0, 0.5]], atol=1e-14)
    np.testing.assert_allclose(env.discrepancy, [[0.7, 0.0], [0.7, 0.0]], atol=1e-14)
    np.testing.assert_allclose(dec.arm_means(), env.means, atol=1e-14)
    assert dec.variables == ("Z",) and dec.n_cells == 2


def test_premise_toy_is_inside_theorem2s_premise_and_its_means_are_linear():
    import pytest

    from causalbandits_lib.fucb.instances.toy import premise_toy

    env, dec = premise_toy(b_given_s=(0.3, 0.7), z_given_a=(0.2, 0.5, 0.8), weights=(0.2, 0.6))
    assert env.model.descendants("S") >= {"B"} and "Z" not in env.model.descendants("B")
    assert dec.variables == ("B", "Z") and env.n_arms == 3
    # contexts (S, B): P(S, B) = 0.5 · P(B | S)
    np.testing.assert_allclose(env.context_probs, [0.35, 0.15, 0.15, 0.35], atol=1e-14)
    b = env.context_codes[:, 1].astype(float)
    np.testing.assert_allclose(env.means, 0.2 * b[:, None] + 0.6 * np.array([0.2, 0.5, 0.8])[None, :], atol=1e-12)
    # Δ does not depend on the arm (the arm moves Z only), and a user with B = 0, S = 0 gains
    # w_B · P(B = 1 | S = 1, B = 0 under the monotone coupling) = 0.2 · (0.7 - 0.3) / 0.7
    np.testing.assert_allclose(env.discrepancy[0], 0.2 * 0.4 / 0.7, atol=1e-12)
    with pytest.raises(ValueError, match="not allowed"):
        premise_toy(b_given_s=(0.3, 1.2))
