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
