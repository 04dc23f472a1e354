"""The conformance checks catch a kernel that leaves its policy out of sync between blocks."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from causalbandits_lib.core.environments import BernoulliBandit
from causalbandits_lib.core.kernels import UCB1Kernel
from causalbandits_lib.core.policies import UCB1
from causalbandits_lib.core.registry import BanditEntry, ConformanceError, conformance


class _LazyKernel(UCB1Kernel):
    """Steps a private copy of the statistics and writes them back to the policy only at the
    horizon: the decisions and values are right, but a probe in between sees a stale policy."""

    def __init__(self, policy, env, T):
        super().__init__(policy, env)
        self.real, self.T = policy.stats, T
        self.shadow = copy.deepcopy(policy.stats)

    def run(self, t0, t1, out):
        self.policy.stats = self.shadow
        try:
            super().run(t0, t1, out)
        finally:
            self.policy.stats = self.real
        if t1 == self.T:
            self.real.counts[...] = self.shadow.counts
            self.real.sums[...] = self.shadow.sums


class _LazyUCB1(UCB1):
    T = 120

    def compiled(self, env):
        return _LazyKernel(self, env, self.T)


def test_a_kernel_in_sync_passes_and_one_out_of_sync_between_blocks_is_caught():
    good = BanditEntry("test.ucb1", lambda: BernoulliBandit([0.7, 0.6, 0.5]), lambda: UCB1(3), T=120, n_runs=3)
    assert good.has_kernel() and conformance(good) == ["regret", "reward"]
    lazy = BanditEntry("test.lazy", lambda: BernoulliBandit([0.7, 0.6, 0.5]), lambda: _LazyUCB1(3), T=120, n_runs=3)
    # its values equal the numpy path's: only the probed decisions reveal it
    np.testing.assert_array_equal(lazy.simulate(120, 3, backend="compiled")["regret"], good.simulate(120, 3)["regret"])
    with pytest.raises(ConformanceError, match="out of sync"):
        conformance(lazy)
