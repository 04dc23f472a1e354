"""The FairX chapter's library: fair policies, the optimistic step, the algorithms, environments,
data, replay and bounds."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.core import datasets
from causalbandits_lib.core.runner import simulate, simulate_loop
from causalbandits_lib.fairx import data, linear, mab, optimism, theory
from causalbandits_lib.fairx.environments import (
    ArmsBandit,
    ContextTableBandit,
    GaussianContextBandit,
    MultiLabelBandit,
    random_fourier_contexts,
)
from causalbandits_lib.fairx.evaluation import grid_search, regrets_from_simulation, run_fairness
from causalbandits_lib.fairx.linear import RidgeState
from causalbandits_lib.fairx.merit import (
    AffineMerit,
    ExpMerit,
    fairness_regret_per_round,
    optimal_fair_policy,
    reward_regret_per_round,
)
from causalbandits_lib.fairx.yahoo import ReplayEnvironment, YahooLikeSimulator, replay_policy_value

YEAST_FREQ = data.YEAST_LABEL_COUNTS / data.YEAST_N
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def shared_data_dir():
    """The folder with the shared data files (CAUSALBANDITS_DATA_DIR, else ../shared/data)."""
    import os

    for candidate in (
        os.environ.get(datasets.DATA_DIR_ENV),
        ROOT.parent / "shared" / "data",
        ROOT.parent.parent / "shared" / "data",
    ):
        if candidate and (Path(candidate) / "yeast" / "yeast.arff").is_file():
            return Path(candidate)
    pytest.skip("the yeast file is not available (set CAUSALBANDITS_DATA_DIR)")


means_st = st.lists(st.floats(-2, 2, allow_nan=False), min_size=2, max_size=12)


class ScaledExp:
    """``k·exp(cμ)`` computed without any normalisation shortcut (for the scale-invariance test)."""

    def __init__(self, c, k):
        self.c, self.k = c, k

    def policy(self, mu):
        f = self.k * np.exp(self.c * np.asarray(mu))
        return f / f.sum(axis=-1, keepdims=True)


# ------------------------------------------------------------------ optimal fair policy
@given(means_st, st.floats(0.1, 10))
def test_optimal_fair_policy_sums_to_one_and_is_proportional_to_merit(means, c):
    mu = np.array(means)
    pi = optimal_fair_policy(ExpMerit(c), mu)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    merit = np.exp(c * mu)
    np.testing.assert_allclose(pi / merit, np.full(len(mu), pi[0] / merit[0]), rtol=1e-9)


@given(means_st, st.floats(0.1, 5), st.floats(1e-3, 1e3))
def test_optimal_fair_policy_is_invariant_to_merit_scale(means, c, k):
    mu = np.array(means)
    np.testing.assert_allclose(ScaledExp(c, k).policy(mu), ScaledExp(c, 1.0).policy(mu), rtol=1e-12)
    np.testing.assert_allclose(ExpMerit(c).policy(mu), ScaledExp(c, k).policy(mu), rtol=1e-9)


def test_exp_merit_limits_and_regrets():
    mu = np.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(ExpMerit(1e-6).policy(mu), np.full(3, 1 / 3), atol=1e-6)
    assert ExpMerit(500.0).policy(mu)[2] == pytest.approx(1.0)
    opt = ExpMerit(2.0).policy(mu)
    one_hot = np.array([0.0, 0.0, 1.0])
    assert fairness_regret_per_round(one_hot, opt) == pytest.approx(2 * (1 - opt[2]))
    assert reward_regret_per_round(one_hot, opt, mu) < 0  # the unfair winner-takes-all earns more
    assert fairness_regret_per_round(opt, opt) == 0
    with pytest.raises(ValueError, match="c="):
        ExpMerit(0.0)
    with pytest.raises(ValueError, match="positive"):
        AffineMerit()(np.array([-1.0, 1.0]))


# ------------------------------------------------------------------ optimistic step
box_st = st.tuples(
    st.integers(2, 9),
    st.sampled_from([0.5, 1.0, 3.0, 10.0, 30.0]),
    st.integers(0, 2**31 - 1),
    st.sampled_from([1e-3, 0.05, 0.5, 2.0]),
)


@settings(max_examples=150, deadline=None)
@given(box_st)
def test_exact_box_solver_matches_brute_force_over_corners(args):
    K, c, seed, scale = args
    rng = np.random.default_rng(seed)
    mid, width = rng.random(K), rng.random(K) * scale
    lower, upper = mid - width, mid + width
    merit = ExpMerit(c)
    mu, value = optimism.optimistic_box_exact(merit, lower, upper)
    best_mu, best = optimism.optimistic_box_corners(merit, lower, upper)
    assert value == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert np.all((mu == lower) | (mu == upper))  # a vertex
    _, dink = optimism.optimistic_box_dinkelbach(merit, lower, upper)
    assert dink == pytest.approx(best, rel=1e-9, abs=1e-12)
    # no interior point does better
    for _ in range(20):
        inner = lower + rng.random(K) * (upper - lower)
        assert optimism.fair_value(merit, inner) <= value + 1e-12
    # and the paper's projected gradient never beats it
    assert optimism.fair_value(merit, optimism.optimistic_box_pgd(merit, lower, upper, start=mid)) <= value + 1e-12


def test_exact_solver_is_vectorised_over_rows():
    rng = np.random.default_rng(3)
    mid, width = rng.random((4, 3, 6)), rng.random((4, 3, 6)) * 0.3
    merit = ExpMerit([1.0, 4.0, 10.0])
    mu, value = optimism.optimistic_box_exact(merit, mid - width, mid + width)
    for r in range(4):
        for g, c in enumerate([1.0, 4.0, 10.0]):
            _, best = optimism.optimistic_box_corners(ExpMerit(c), mid[r, g] - width[r, g], mid[r, g] + width[r, g])
            assert value[r, g] == pytest.approx(best, rel=1e-12)


def test_where_projected_gradient_differs_from_the_exact_solver():
    """Narrow boxes: 10 steps of 0.01 reach the optimal vertex and the two agree. Wide boxes: the
    steps cover at most 0.1·max|∇V| per coordinate, PGD stops in the interior and loses value;
    and an arm just below V − 1/c is pushed *down* by the exact solver but barely moved by PGD."""
    merit = ExpMerit(4.0)
    mid = np.array([0.75, 0.74, 0.43, 0.30, 0.10])
    narrow = 1e-4
    exact_mu, exact_v = optimism.optimistic_box_exact(merit, mid - narrow, mid + narrow)
    pgd_mu = optimism.optimistic_box_pgd(merit, mid - narrow, mid + narrow, start=mid)
    np.testing.assert_array_equal(np.sign(pgd_mu - mid), np.sign(exact_mu - mid))
    wide = 0.5
    exact_mu, exact_v = optimism.optimistic_box_exact(merit, mid - wide, mid + wide)
    pgd_mu = optimism.optimistic_box_pgd(merit, mid - wide, mid + wide, start=mid)
    pgd_v = optimism.fair_value(merit, pgd_mu)
    assert exact_v - pgd_v > 0.2
    assert np.all(np.abs(pgd_mu - mid) < wide)  # interior: never reached a face
    assert np.all((exact_mu == mid - wide) | (exact_mu == mid + wide))
    with pytest.raises(ValueError, match="exact box solver"):
        optimism.optimistic_box_exact(AffineMerit(0.0, floor=0.1), mid - 0.1, mid + 0.1)


def test_pgd_exp_specialisation_equals_the_generic_iteration():
    rng = np.random.default_rng(0)
    for _ in range(50):
        K = int(rng.integers(2, 12))
        merit = ExpMerit(float(rng.choice([0.5, 4.0, 10.0])))
        mid, w = rng.random(K), rng.random(K) * 0.3
        fast = optimism.optimistic_box_pgd(merit, mid - w, mid + w, start=mid)
        mu = mid.copy()
        for _ in range(10):
            mu = np.clip(mu + 0.01 * optimism.fair_value_gradient(merit, mu), mid - w, mid + w)
        np.testing.assert_allclose(fast, mu, atol=1e-12)


def test_gradient_matches_finite_differences():
    merit = ExpMerit(3.0)
    mu = np.array([0.1, 0.6, 0.4, 0.9])
    g = optimism.fair_value_gradient(merit, mu)
    eps = 1e-6
    fd = [
        (optimism.fair_value(merit, mu + eps * e) - optimism.fair_value(merit, mu - eps * e)) / (2 * eps)
        for e in np.eye(4)
    ]
    np.testing.assert_allclose(g, fd, atol=1e-8)


# ------------------------------------------------------------------ algorithms: vectorised == looped, fast == protocol
LABELS = (np.random.default_rng(0).random((300, 5)) < np.array([0.3, 0.4, 0.45, 0.7, 0.72])).astype(float)
THETA = np.array([0.5, -0.3, 0.2, 0.4])
CTX = np.random.default_rng(1).normal(size=(50, 5, 4))
CTX /= np.linalg.norm(CTX, axis=-1, keepdims=True)
M2 = ExpMerit([2.0, 4.0])
ALGORITHMS = {
    "FairX-UCB": (lambda: MultiLabelBandit(LABELS), lambda: mab.FairXUCB(M2, [0.1, 0.05], 5)),
    "FairX-UCB-exact": (lambda: MultiLabelBandit(LABELS), lambda: mab.FairXUCB(M2, [0.1, 0.05], 5, solver="exact")),
    "UCB": (lambda: MultiLabelBandit(LABELS), lambda: mab.UCB([0.1, 0.05], 5)),
    "FairX-TS": (
        lambda: ArmsBandit([0.3, 0.4, 0.45, 0.7, 0.72], "gaussian"),
        lambda: mab.FairXTS(M2, 1.0, [0.5, 1.0], 5),
    ),
    "TS": (lambda: MultiLabelBandit(LABELS), lambda: mab.ThompsonSampling([1.0, 0.1], 0.5, 5)),
    "FairX-EG": (lambda: MultiLabelBandit(LABELS), lambda: mab.FairXEG(M2, [0.0, 0.1], 5)),
    "EG": (lambda: MultiLabelBandit(LABELS), lambda: mab.EpsilonGreedy([0.0, 0.1], 5)),
    "FairX-LinUCB": (
        lambda: GaussianContextBandit(THETA, 5, 0.5),
        lambda: linear.FairXLinUCB(M2, [1.0, 0.1], 1.0, 4, 5),
    ),
    "LinUCB": (lambda: GaussianContextBandit(THETA, 5, 0.5), lambda: linear.LinUCB([1.0, 0.1], 1.0, 4, 5)),
    "FairX-LinTS": (
        lambda: ContextTableBandit(CTX, CTX @ THETA, None, 0.1),
        lambda: linear.FairXLinTS(M2, 1.0, [0.5, 1.0], 4, 5),
    ),
    "LinTS": (lambda: GaussianContextBandit(THETA, 5, 0.5), lambda: linear.LinTS(1.0, [0.5, 1.0], 4, 5)),
    "FairX-LinEG": (
        lambda: ContextTableBandit(CTX, CTX @ THETA, (CTX @ THETA > 0.2).astype(float)),
        lambda: linear.FairXLinEG(M2, [0.0, 0.1], 1.0, 4, 5),
    ),
    "LinEG": (lambda: GaussianContextBandit(THETA, 5, 0.5), lambda: linear.LinEG([0.0, 0.1], 1.0, 4, 5)),
}
KEEP = ("policy", "arm_means", "reward")


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_vectorised_equals_looped_and_fast_path_equals_protocol(name):
    make_env, make_policy = ALGORITHMS[name]
    T = 250
    vec = simulate(make_env(), make_policy(), T, 3, n_runs=4, metrics=KEEP)
    loop = simulate_loop(make_env, make_policy, T, 3, 4, metrics=KEEP)
    for k in KEEP:
        assert np.array_equal(vec[k], loop[k]), f"{name}: {k} differs between vectorised and looped runs"
    fr, rr = regrets_from_simulation(vec, M2)
    fast = run_fairness(make_env(), make_policy(), M2, T, 3, n_runs=4)
    assert np.array_equal(np.cumsum(fr, axis=-1)[..., fast.t - 1], fast.fairness)
    assert np.array_equal(np.cumsum(rr, axis=-1)[..., fast.t - 1], fast.reward)
    assert np.all(fr >= 0) and np.all(fr <= 2 + 1e-12)
    pol = vec["policy"]
    np.testing.assert_allclose(pol.sum(axis=-1), 1.0, atol=1e-12)


def test_fast_path_exposure_is_the_running_mean_of_the_policy():
    make_env, make_policy = ALGORITHMS["FairX-TS"]
    vec = simulate(make_env(), make_policy(), 120, 1, n_runs=3, metrics=KEEP)
    fast = run_fairness(make_env(), make_policy(), M2, 120, 1, n_runs=3, exposure_at=[50, 120])
    np.testing.assert_allclose(fast.exposure[50], vec["policy"][:, :50].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(fast.exposure[120].sum(axis=-1), 1.0)


def test_fairx_ucb_slope_is_sublinear_and_ucb_linear():
    """Seeded small instance (yeast's label means as Bernoulli arms, c = 4): FairX-UCB's fairness
    regret grows like √T (slope below 0.7), conventional UCB's linearly (slope above 0.85)."""
    merit = ExpMerit(4.0)
    env = ArmsBandit(YEAST_FREQ)
    fair = run_fairness(env, mab.FairXUCB(merit, 0.1, 14), merit, 8000, 0, n_runs=4)
    ucb = run_fairness(env, mab.UCB(0.1, 14), merit, 8000, 0, n_runs=4)
    assert fair.slope() < 0.7
    assert ucb.slope() > 0.85
    assert fair.final().mean() < 0.2 * ucb.final().mean()


def test_ucb_family_starts_round_robin_and_ts_concentrates_on_a_known_best_arm():
    env = ArmsBandit([0.1, 0.9, 0.2])
    res = simulate(env, mab.UCB(0.1, 3), 3, 0, n_runs=2, metrics=("policy",))
    np.testing.assert_array_equal(res["policy"][0, :, 0], np.eye(3))
    res = simulate(
        ArmsBandit([0.1, 0.9, 0.2]), mab.ThompsonSampling(1.0, 0.3, 3), 400, 0, n_runs=2, metrics=("policy",)
    )
    assert res["policy"][:, -50:, 0, 1].mean() > 0.9


def test_bad_hyperparameters_are_named():
    with pytest.raises(ValueError, match=r"w0=\[-1.0\] must be positive"):
        mab.FairXUCB(ExpMerit(1.0), -1.0, 3)
    with pytest.raises(ValueError, match="epsilon=.*at most 1"):
        mab.FairXEG(ExpMerit(1.0), 1.5, 3)
    with pytest.raises(ValueError, match="solver='newton'"):
        mab.FairXUCB(ExpMerit(1.0), 0.1, 3, solver="newton")
    with pytest.raises(ValueError, match="one common length"):
        mab.FairXTS(ExpMerit([1.0, 2.0, 3.0]), [1.0, 2.0], 1.0, 3)


def test_ridge_square_root_update_matches_direct_ridge():
    rng = np.random.default_rng(4)
    d, n = 5, 40
    X, r = rng.normal(size=(n, d)), rng.normal(size=n)
    lam, s2 = np.array([2.0, 0.5]), np.array([1.0, 0.1])
    st_ = RidgeState(d, lam, s2, 1)
    for i in range(n):
        st_.update(np.broadcast_to(X[i], (1, 2, d)), np.full((1, 2), r[i]))
    for g in range(2):
        A = lam[g] * np.eye(d) + X.T @ X / s2[g]
        np.testing.assert_allclose(st_.covariance()[0, g], np.linalg.inv(A), atol=1e-10)
        np.testing.assert_allclose(st_.mean[0, g], np.linalg.solve(A, X.T @ r / s2[g]), atol=1e-10)


# ------------------------------------------------------------------ data
def test_yeast_loader_checksum_and_shape(monkeypatch, shared_data_dir):
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(shared_data_dir))
    y = data.load_yeast()
    assert not y.stand_in
    assert (
        y.provenance["files"]["yeast/yeast.arff"] == "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7"
    )
    assert y.features.shape == (2417, 103) and y.labels.shape == (2417, 14)
    np.testing.assert_array_equal(y.labels.sum(axis=0), data.YEAST_LABEL_COUNTS)
    np.testing.assert_allclose(np.linalg.norm(y.features, axis=1), 1.0, atol=1e-5)


def test_yeast_stand_in_is_flagged(monkeypatch, tmp_path):
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(datasets.OFFLINE_ENV, "1")
    monkeypatch.setattr(datasets, "data_dirs", lambda: [tmp_path])
    with pytest.warns(datasets.StandInWarning, match="STAND-IN"):
        y = data.load_yeast()
    assert y.stand_in and y.provenance["stand_in"] is True
    assert "STAND-IN" in y.name
    assert y.labels.shape == (2417, 14)
    np.testing.assert_allclose(y.label_frequencies, YEAST_FREQ, atol=0.03)
    with pytest.raises(datasets.DataUnavailable):
        data.load_yeast(allow_stand_in=False)


def test_split_and_mediamill_shape():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", datasets.StandInWarning)
        y = data.yeast_stand_in(0)
    val, test = data.validation_test_split(y, np.random.default_rng(0))
    assert len(val.labels) == 483 and len(test.labels) == 1934
    mm = data.mediamill_like(0, n_examples=3000)
    assert mm.features.shape == (3000, 120) and mm.labels.shape == (3000, 101) and mm.stand_in
    assert 3.5 < mm.labels.sum(axis=1).mean() < 5.0


def test_random_fourier_contexts_are_seeded_and_roughly_unit_norm():
    X = np.random.default_rng(0).normal(size=(30, 7))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    a = random_fourier_contexts(X, 3, 50, 1.0, np.random.default_rng(5))
    b = random_fourier_contexts(X, 3, 50, 1.0, np.random.default_rng(5))
    assert a.shape == (30, 3, 50) and np.array_equal(a, b)
    assert 0.7 < (a * a).sum(axis=-1).mean() < 1.3


# ------------------------------------------------------------------ replay
def test_replay_evaluator_is_unbiased_for_a_fixed_policy():
    """Replay of a uniformly logged simulator estimates a fixed policy's click rate, whose exact
    value follows from the simulator's click probabilities."""
    sim = YahooLikeSimulator(seed=1, n_articles=40, pool_size=8, n_days=2, target_ctr=0.2)
    log = sim.log(60000, seed=2)
    ev = slice(0, log.n_events)

    def probs(user, pool):  # a fixed fair policy that depends on the user and the pool
        return ExpMerit(3.0).policy(np.einsum("ni,npi->np", user, sim.article_features[pool]))

    exact = (probs(log.user, log.pool) * sim.click_probability(log.user, log.pool, log.day)).sum(axis=1).mean()
    value, accepted = replay_policy_value(log, ev, probs, np.random.default_rng(3))
    se = np.sqrt(exact * (1 - exact) / accepted)
    assert abs(value - exact) < 4 * se
    assert accepted == pytest.approx(log.n_events / 8, rel=0.05)


def test_replay_environment_counts_only_accepted_rounds():
    sim = YahooLikeSimulator(seed=0, n_articles=30, pool_size=5, n_days=2)
    log = sim.log(2000, seed=1)
    merit = ExpMerit(10.0)
    env = ReplayEnvironment(log, log.days(1, 1), "mab")
    run = run_fairness(env, mab.FairXTS(merit, 0.1, 0.1, 30), merit, env.n_rounds, 0, n_runs=3)
    assert run.rounds[..., -1].mean() == pytest.approx(env.n_rounds / 5, rel=0.2)
    assert np.all(run.fairness[..., -1] <= 2 * run.rounds[..., -1] + 1e-9)
    lin = ReplayEnvironment(log, log.days(1, 1), "linear")
    run = run_fairness(lin, linear.FairXLinTS(merit, 0.1, 0.1, 36, 5), merit, 500, 0, n_runs=2)
    assert run.rounds[..., -1].max() <= 500


# ------------------------------------------------------------------ theory
def test_bounds_grow_like_root_t_and_lower_bound_constant():
    T = np.array([1e4, 4e4, 1e8, 4e8])
    b1 = theory.fairx_ucb_fairness_bound(T, 14, 0.05, 1.0)
    assert 2.0 < b1[1] / b1[0] < 2.2 and 2.0 < b1[3] / b1[2] < 2.1
    b3 = theory.fairx_linucb_fairness_bound(T, 50, 0.05, 1.0)
    assert 2.0 < b3[3] / b3[2] < 2.3
    assert theory.theory_width(2e6, 14, 0.05) == pytest.approx(6.6, abs=0.05)
    assert theory.linucb_beta(2e6, 50, 0.05) == pytest.approx(646, rel=0.02)
    for pair in (theory.min_merit_lower_bound_pair(10000), theory.lipschitz_lower_bound_pair(10000)):
        assert pair.bound == pytest.approx(np.exp(-1) / 12)
        assert pair.kl_per_pull() * 10000 == pytest.approx(1.0)
    p1, p2 = theory.min_merit_lower_bound_pair(10000).optimal_policies()
    np.testing.assert_allclose(p1, [1 / 3, 2 / 3])
    np.testing.assert_allclose(p2, [0.5, 0.5])
    p1, _ = theory.lipschitz_lower_bound_pair(10000).optimal_policies()
    np.testing.assert_allclose(p1, [2 / 3, 1 / 3])


def test_grid_search_picks_the_smallest_validation_fairness_regret():
    env = ArmsBandit(YEAST_FREQ[:6])
    res = grid_search(
        lambda merit, w0: mab.FairXUCB(merit, w0, 6), {"w0": [1e-3, 0.1, 3.0]}, [1.0, 4.0], ExpMerit, env, 600, 2, 0
    )
    assert res.fairness.shape == (2, 3)
    for i, b in enumerate(res.best):
        assert b["w0"] == res.points[int(np.argmin(res.fairness[i]))][0]
    assert res.best_arrays()["w0"].shape == (2,)


@pytest.mark.parametrize("how", [{"jobs": 2}, {"jobs": 2, "scheduler": "local"}])
def test_tune_and_test_gives_the_same_numbers_on_worker_processes(how):
    """The grid search runs through sweep.map_tasks: the same seeds give the same numbers whether
    the algorithms run in this process, on joblib workers or on a Dask LocalCluster."""
    from causalbandits_lib.fairx import experiments as ex

    env = ArmsBandit(YEAST_FREQ[:5])
    grids = {"FairX-UCB": {"w0": [1e-3, 0.1]}, "UCB": {"w0": [1e-3, 0.1]}}
    args = (["FairX-UCB", "UCB"], ex.MAB_ALGORITHMS, grids, [1.0, 4.0], env, env, 5, None, 300, 2, 400, 2, 3)
    serial = ex.tune_and_test(*args)
    parallel = ex.tune_and_test(*args, **how)
    for name in serial:
        np.testing.assert_array_equal(serial[name].grid.fairness, parallel[name].grid.fairness)
        np.testing.assert_array_equal(serial[name].test.final(), parallel[name].test.final())
