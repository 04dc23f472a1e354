from __future__ import annotations

import numpy as np
import pytest

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


def test_fucb_cert_bound_is_hoeffding_on_the_two_cells_recomputed_from_the_counts():
    """F-UCB-cert's UCB_Δ = |μ̂(o',k) - μ̂(o,k)| + sqrt(log(1/δ_n)/(2N_{o',k})) + sqrt(log(1/δ_n)/(2N_{o,k})),
    δ_n = n^-2, recomputed here from the counts and click sums the policy has seen (notebook 3)."""
    tau = INST.tau(0.5)
    pol = A.make_policy("F-UCB-cert", INST, tau)
    env = M.RecommenderEnv(INST, tau)
    streams = RunStreams(3, [0, 1])
    env.reset(streams.child("env/"))
    pol.reset(streams.child("policy/"))
    counts = np.zeros((2, 4, 4))
    clicks = np.zeros((2, 4, 4))
    cf = {o: M.CONTEXTS.index((1 - a, u + (1 if a == 0 else -1))) for o, (a, u) in enumerate(M.CONTEXTS)}
    for t in range(400):
        ctx = env.observe(t)
        actions = pol.select(t, ctx)
        fb = env.pull(t, actions)
        pol.update(t, ctx, actions, fb)
        for r in range(2):
            counts[r, fb["O"][r], actions[r]] += 1
            clicks[r, fb["O"][r], actions[r]] += fb["reward"][r]
    t = 400
    context = env.observe(t)
    got = pol.ucb_delta(t, context)
    log_inv = 2.0 * np.log(t + 1)
    for r in range(2):
        o, o2 = int(context[r]), cf[int(context[r])]
        for k in range(4):
            n1, n2 = counts[r, o, k], counts[r, o2, k]
            m1 = clicks[r, o, k] / n1 if n1 else pol.unseen_mean
            m2 = clicks[r, o2, k] / n2 if n2 else pol.unseen_mean
            want = abs(m2 - m1) + np.sqrt(log_inv / (2 * max(n1, 1))) + np.sqrt(log_inv / (2 * max(n2, 1)))
            assert got[r, k] == pytest.approx(want, rel=1e-12)


def test_fucb_cert_bound_covers_the_true_discrepancy_in_almost_every_round():
    """Validity measured: the bound of the item played is below its true Δ in at most the 4/n per
    round that notebook 3's union bound allows (summed over the rounds)."""
    tau = INST.tau(0.5)
    T = 3000
    r = simulate(
        M.RecommenderEnv(INST, tau),
        A.make_policy("F-UCB-cert", INST, tau),
        T,
        0,
        n_runs=20,
        metrics=("delta", "own_ucb_delta"),
    )
    missed = (r["own_ucb_delta"] < r["delta"] - 1e-12).sum(axis=1)
    allowed = 4.0 * np.sum(1.0 / np.arange(2, T + 1))
    assert missed.mean() <= allowed
