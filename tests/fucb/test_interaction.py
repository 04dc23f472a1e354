"""The interaction variant: the discrepancy differs across arms and the constraint binds."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.runner import simulate
from causalbandits_lib.fucb.algorithms import DecomposedUCB, TrueDeltaFairUCB
from causalbandits_lib.fucb.instances.interaction import BASE, GAMMA, interaction_bandit


def test_means_and_discrepancy_follow_the_tables():
    env, dec = interaction_bandit(shift=0.05)
    s, x2 = env.context_codes[:, 0][:, None], env.context_codes[:, 1][:, None]
    np.testing.assert_allclose(env.means, np.array(BASE)[None] + s * np.array(GAMMA)[None] + 0.05 * x2, atol=1e-12)
    np.testing.assert_allclose(env.discrepancy, np.broadcast_to(GAMMA, env.means.shape), atol=1e-12)
    np.testing.assert_allclose(dec.arm_means(), env.means, atol=1e-12)
    with pytest.raises(ValueError, match="stay in"):
        interaction_bandit(base=(0.9, 0.9), gamma=(0.0, 0.3))
    with pytest.raises(ValueError, match="equal-length"):
        interaction_bandit(base=(0.1, 0.2), gamma=(0.0,))


def test_a_smaller_threshold_costs_regret_with_the_true_delta():
    env, dec = interaction_bandit()
    final = {
        tau: simulate(env, TrueDeltaFairUCB(dec, env.discrepancy, tau), 1500, 0, n_runs=3).final().mean()
        for tau in (0.1, 0.3)
    }
    free = simulate(env, DecomposedUCB(dec), 1500, 0, n_runs=3).final().mean()
    assert final[0.1] > final[0.3] > free
