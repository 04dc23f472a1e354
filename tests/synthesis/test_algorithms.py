from __future__ import annotations

import numpy as np

from causalbandits_lib.core.runner import simulate
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.synthesis import algorithms as A
from causalbandits_lib.synthesis import model as M

INST = M.instances(np.random.SeedSequence(0), 1)[0]


def test_decomposition_reproduces_the_means():
    dec = A.cell_decomposition(INST)
    assert np.allclose(dec.arm_means(), INST.means)


def test_discrepancy_estimator_at_the_true_means_is_exact():
    dec = A.cell_decomposition(INST)
    est = A.discrepancy_estimator(dec)
    means = np.tile(INST.means.ravel(), (4, 1))
    rad = np.zeros_like(means)
    for c in range(4):
        d, _, _ = est.estimate(means, rad, np.full(4, c))
        assert np.allclose(d[0], INST.discrepancy[c])


def test_sound_bounds_cover_the_truth_with_a_big_log():
    counts = M.offline_counts(INST, 1.0, 0.1, 200_000, 0, range(3))
    lo, hi = A.sound_bounds(counts)
    assert lo.shape == (3, 4, 4)
    assert np.all((lo <= INST.means) & (INST.means <= hi))
    assert np.mean(hi - lo) < 0.9  # informative, not the trivial [0, 1]


def test_clipping_keeps_the_index_inside_the_bounds():
    lo = np.full((2, 4, 4), 0.2)
    hi = np.full((2, 4, 4), 0.6)
    pol = A.make_policy("D-UCB-PCB", INST, INST.tau(0.5), lower=lo, upper=hi)
    pol.reset(RunStreams(0, [0, 1]).child("policy/"))
    ucb = pol.arm_ucb(5, np.array([0, 3]))
    assert np.all((ucb >= 0.2) & (ucb <= 0.6))
    plain = A.make_policy("D-UCB", INST, INST.tau(0.5))
    plain.reset(RunStreams(0, [0, 1]).child("policy/"))
    assert not np.all((plain.arm_ucb(5, np.array([0, 3])) <= 0.6))


def test_every_policy_runs_and_reports_its_exposure():
    tau = INST.tau(0.5)
    lo, hi = np.zeros((3, 4, 4)), np.ones((3, 4, 4))
    for name in A.POLICIES:
        pol = A.make_policy(name, INST, tau, lower=lo, upper=hi, horizon=50)
        r = simulate(M.RecommenderEnv(INST, tau), pol, 50, 0, n_runs=3, metrics=("regret", "exposure"))
        assert r["exposure"].shape == (3, 50, 4)
        assert np.allclose(r["exposure"].sum(axis=-1), 1.0)


def test_trivial_bounds_change_nothing():
    tau = INST.tau(0.5)
    lo, hi = np.zeros((3, 4, 4)), np.full((3, 4, 4), np.inf)
    a = simulate(M.RecommenderEnv(INST, tau), A.make_policy("D-UCB", INST, tau), 200, 1, n_runs=3)
    b = simulate(
        M.RecommenderEnv(INST, tau), A.make_policy("D-UCB-PCB", INST, tau, lower=lo, upper=hi), 200, 1, n_runs=3
    )
    assert np.array_equal(a["regret"], b["regret"])


def test_true_delta_reference_plays_only_fair_items_where_it_can():
    tau = INST.tau(0.5)
    r = simulate(
        M.RecommenderEnv(INST, tau), A.make_policy("F-UCB (true Δ)", INST, tau), 300, 0, n_runs=3, metrics=("delta",)
    )
    has_fair = (INST.discrepancy <= tau).any(axis=1).all()
    assert not has_fair or np.all(r["delta"] <= tau + 1e-12)


def test_bounded_fairx_box_stays_inside_the_bounds():
    lo = np.full((2, 4, 4), 0.3)
    hi = np.full((2, 4, 4), 0.5)
    pol = A.make_policy("FairX-UCB-PCB", INST, INST.tau(0.5), lower=lo, upper=hi)
    pol.reset(RunStreams(0, [0, 1]).child("policy/"))
    pol.inner.counts[:] = 1.0
    mean, lower, upper = pol.inner.confidence_box()
    assert np.all((lower >= 0.3 - 1e-12) & (upper <= 0.5 + 1e-12) & (lower <= upper))
