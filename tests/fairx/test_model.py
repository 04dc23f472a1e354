"""The FairX environments (:mod:`causalbandits_lib.fairx.model`)."""

from __future__ import annotations

import numpy as np

from causalbandits_lib.fairx.model import random_fourier_contexts


def test_random_fourier_contexts_are_seeded_and_roughly_unit_norm():
    X = np.random.default_rng(0).normal(size=(30, 7))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    a = random_fourier_contexts(X, 3, 50, 1.0, np.random.default_rng(5))
    b = random_fourier_contexts(X, 3, 50, 1.0, np.random.default_rng(5))
    assert a.shape == (30, 3, 50) and np.array_equal(a, b)
    assert 0.7 < (a * a).sum(axis=-1).mean() < 1.3
