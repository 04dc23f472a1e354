"""What a learner keeps: the raw observations and the binned summary of the loss."""

from __future__ import annotations

import numpy as np

from causalbandits_lib.cclb import confidence as C
from causalbandits_lib.cclb import history as Hi
from causalbandits_lib.cclb.algorithms import OFULogPlus
from causalbandits_lib.cclb.environment import FairLogisticBandit
from causalbandits_lib.cclb.features import raw_features, unit_norm_features

from .support import GEN, play


def test_binned_loss_is_close_to_the_raw_loss():
    rng = np.random.default_rng(0)
    # the binned history of a run of OFULog+ against the raw data of the same run
    pol = OFULogPlus()
    kept = play(FairLogisticBandit(GEN), pol, 400, 0, 2)
    binned = pol.history.data()
    raw = C.LogisticData.from_observations(kept.X, kept.y)
    theta = rng.normal(size=(2, 50, 4))
    theta *= 5.0 * rng.random((2, 50, 1)) ** 0.25 / np.linalg.norm(theta, axis=-1, keepdims=True)
    err = np.abs(binned.loss(theta) - raw.loss(theta))
    assert err.max() < 1e-3 * C.beta_squared(400, 4, 5.0, 0.05)  # negligible against the radius
    np.testing.assert_allclose(binned.b, raw.b)


def test_history_add_matches_raw_sums():
    h = Hi.BinnedHistory(2, bins=4)
    x = unit_norm_features(
        raw_features(np.array([1, 0]), np.array([0, 0]), np.array([1, 1]), np.array([[0.3], [-0.9]]))
    )[:, 0]
    h.add(x, np.array([1.0, 0.0]), code=np.array([5, 1]), d=np.array([0.3, -0.9]))
    data = h.data()
    theta = np.array([[0.5, -1, 2, 1], [1, 1, 1, 1.0]])
    z = np.sum(x * theta, axis=1)
    np.testing.assert_allclose(data.loss(theta), np.logaddexp(0, z) - np.array([1.0, 0.0]) * z)


def test_raw_history_keeps_every_observation_when_it_grows():
    h = Hi.LogisticHistory(2, 4, capacity=2)
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(5, 2, 4)), rng.integers(0, 2, size=(5, 2)).astype(float)
    for x, y in zip(xs, ys):
        h.add(x, y)
    X, y = h.view()
    np.testing.assert_array_equal(X, np.moveaxis(xs, 0, -1))
    np.testing.assert_array_equal(y, ys.T)
