"""The core's compiled pieces repeat numpy's arithmetic: its row sums, its argmax with ties, and
the sequential accumulation of running sums."""

from __future__ import annotations

import numpy as np

from causalbandits_lib.core.kernels import accumulate_block, argmax_ties_row, pairwise_sum
from causalbandits_lib.core.policies import argmax_ties


def test_the_sums_and_the_tie_rule_are_numpys():
    rng = np.random.default_rng(1)
    for n in [*range(0, 140), 255, 256, 1000, 5001]:
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)
        assert pairwise_sum(x, 0, n) == (x.sum() if n else 0.0)
    for _ in range(300):
        v = rng.integers(0, 3, 6).astype(float)
        v[rng.random(6) < 0.2] = rng.choice([np.inf, -np.inf, np.nan])
        u = rng.random()
        assert argmax_ties_row(v, 6, u, True) == argmax_ties(v[None, :], np.array([u]))[0]
        assert argmax_ties_row(v, 6, u, False) == argmax_ties(v[None, :])[0]


def test_accumulate_block_adds_round_after_round_like_the_numpy_path():
    rng = np.random.default_rng(3)
    block = rng.standard_normal((3, 50, 4)) * 10.0 ** rng.uniform(-8, 8, (3, 50, 4))
    sums = block[:, 0].copy()
    marks = np.array([0, 7, 49])
    taken = accumulate_block(sums, block, 1, marks)
    running, expected = block[:, 0].copy(), []
    for s in range(50):
        if s >= 1:
            running += block[:, s]
        if s in marks:
            expected.append(running.copy())
    np.testing.assert_array_equal(taken, np.stack(expected, axis=-1))
    np.testing.assert_array_equal(sums, running)
