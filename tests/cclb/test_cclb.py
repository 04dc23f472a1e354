"""The CCLB chapter: generator, MLE, confidence set, optimistic steps, algorithms and bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.special import expit

from causalbandits_lib.cclb import confidence as C
from causalbandits_lib.cclb import experiments as E
from causalbandits_lib.cclb import history as Hi
from causalbandits_lib.cclb import optimism as O
from causalbandits_lib.cclb import theory as Th
from causalbandits_lib.cclb.algorithms import CCLB, GLMUCB, OFULogPlus, dual_step
from causalbandits_lib.cclb.model import (
    THETA_STAR,
    FairLogisticBandit,
    GeneratorCheckError,
    Replicas,
    RoundGenerator,
    RoundStream,
    best_feasible,
    context_model,
    mixture_lp_value,
    raw_features,
    sfm_graph,
    unit_norm_features,
)
from causalbandits_lib.core import graphs
from causalbandits_lib.core.runner import simulate, simulate_loop
from causalbandits_lib.core.streams import RunStreams

GEN = RoundGenerator()


# ---------------------------------------------------------------------------- model and generator
def test_context_model_matches_the_calibrated_marginals():
    m = context_model()
    for a in (0, 1):
        pw = m.query(["W"], evidence={"A": a})[1]
        assert pw == pytest.approx(expit(1.2 * (2 * a - 1)), abs=1e-4)
    assert m.query(["A"])[1] == pytest.approx(0.5)


def test_identification_by_rule_2_holds_in_the_graph():
    g = sfm_graph()
    cut = g.copy()
    cut.remove_edges_from([(u, v) for u, v in g.edges if u in ("A", "D")])  # edges out of D and A
    assert graphs.d_separated(cut, {"D", "A"}, {"Y"}, {"W", "M"})
    # without conditioning on the mediators the statement fails (M carries A's effect)
    assert not graphs.d_separated(g, {"A"}, {"Y"}, {"W"})


def test_generator_invariants():
    rounds = GEN.draw(np.random.default_rng(1), 400)
    size = np.abs(rounds.effect)
    assert np.all(np.sum(size <= GEN.tau, axis=1) >= GEN.min_feasible)
    assert np.all(size.min(axis=1) <= GEN.tau - GEN.slater_margin)
    raw = raw_features(rounds.a, rounds.w, rounds.m, rounds.d)
    raw_cf = raw_features(rounds.a, rounds.w, rounds.m, rounds.d, counterfactual=True)
    diff = raw_cf - raw
    np.testing.assert_array_equal(diff[..., 1:], 0.0)  # counterfactual features differ only in A
    np.testing.assert_array_equal(np.abs(diff[..., 0]), 1.0)
    np.testing.assert_allclose(rounds.x, unit_norm_features(raw))
    np.testing.assert_allclose(
        rounds.effect, expit(rounds.x_cf @ np.array(THETA_STAR)) - expit(rounds.x @ np.array(THETA_STAR))
    )
    assert np.all(np.linalg.norm(rounds.x, axis=-1) <= 1 + 1e-12)


def test_round_stream_does_not_depend_on_how_rounds_are_requested():
    a = RoundStream(GEN, np.random.default_rng(5), batch=64)
    b = RoundStream(GEN, np.random.default_rng(5), batch=999)
    first = a.take(30)
    second = a.take(70)
    both = b.take(100)
    np.testing.assert_array_equal(np.concatenate([first.d, second.d]), both.d)


def test_generator_check_flags_a_slack_constraint():
    stats = GEN.check(np.random.default_rng(0), 3000)
    assert stats["unconstrained_mean_excess"] > 0 and stats["unconstrained_infeasible_fraction"] > 0.5
    slack = RoundGenerator(theta_star=(-1.0, -1.0, -0.5, 2.0), tau=0.2, slater_margin=0.05)
    with pytest.raises(GeneratorCheckError, match="slack"):
        slack.check(np.random.default_rng(0), 3000)


def test_bad_generator_arguments_name_the_value():
    with pytest.raises(ValueError, match="tau=1.5"):
        RoundGenerator(tau=1.5)
    with pytest.raises(ValueError, match="min_feasible=25"):
        RoundGenerator(min_feasible=25)
    with pytest.raises(ValueError, match="feature_map='cubic'"):
        RoundGenerator(feature_map="cubic")


@given(st.integers(0, 10_000))
@settings(max_examples=30, deadline=None)
def test_mixture_lp_matches_linprog(seed):
    rng = np.random.default_rng(seed)
    K = 6
    r = rng.random(K)
    e = rng.uniform(-0.6, 0.6, K)
    tau = 0.2
    e[0] = 0.05  # keep the LP feasible
    res = linprog(-r, A_ub=[np.abs(e)], b_ub=[tau], A_eq=[np.ones(K)], b_eq=[1.0], bounds=[(0, 1)] * K, method="highs")
    assert mixture_lp_value(r, e, tau) == pytest.approx(-res.fun, abs=1e-9)
    best = best_feasible(r, e, tau)
    assert best["value"] == pytest.approx(r[np.abs(e) <= tau].max())
    assert mixture_lp_value(r, e, tau) >= best["value"] - 1e-12


# ---------------------------------------------------------------------------- MLE and confidence set
def _played_data(T, seed=0, n_runs=2):
    X, y, _, _ = E.run_recorded(FairLogisticBandit(GEN), OFULogPlus(), T, seed, n_runs)
    return X, y


@pytest.fixture(scope="module")
def played():
    return _played_data(400)


def test_mle_matches_scipy_reference(played):
    X, y = played
    for t in (15, 120, 400):
        data = C.LogisticData.from_observations(X[:, :, :t], y[:, :t])
        theta, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
        for r in range(X.shape[0]):
            ref = C.constrained_mle_scipy(X[r, :, :t], y[r, :t], 5.0)
            loss = lambda th: float(data.rows([r]).loss(th[None])[0])  # noqa: E731
            assert loss(theta[r]) <= loss(ref) + 1e-7  # never worse than the reference
            np.testing.assert_allclose(theta[r], ref, atol=2e-4)
            assert np.linalg.norm(theta[r]) <= 5.0 + 1e-9


def test_warm_started_single_newton_step_tracks_the_mle():
    env, pol = FairLogisticBandit(GEN), OFULogPlus(loss_bins=0)
    X, y, _, gaps = E.run_recorded(
        env, pol, 401, 2, 2, checkpoints=[150, 400], at_checkpoint=lambda t, ctx, X, y, p: p.theta_hat.copy()
    )
    for t, tracked in zip((150, 400), gaps):
        # theta_hat stored at round t's checkpoint is the estimate of round t - 1 (data before t - 1)
        data = C.LogisticData.from_observations(X[:, :, : t - 1], y[:, : t - 1])
        exact, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
        np.testing.assert_allclose(tracked, exact, atol=2e-3)


def test_theta_star_in_confidence_set_at_the_stated_rate():
    alpha = 0.05
    X, y = _played_data(300, seed=11, n_runs=6)
    gaps = E.coverage_gaps(X, y, THETA_STAR, [20, 80, 300], 5.0, alpha)
    covered = np.all(gaps <= 1.0, axis=1)
    assert covered.mean() >= 1 - alpha


def test_beta_squared_hand_value_and_notes_table():
    assert C.beta_squared(1, 4, 5.0, 0.05) == pytest.approx(
        40 * math.log(5 / 16 + math.e) + 2 * (math.e - 2 + 5) * math.log(20)
    )
    assert C.beta_squared(10_000, 4, 5.0, 0.05) == pytest.approx(356.2, abs=0.1)  # notes §3.2
    with pytest.raises(ValueError, match="alpha=0"):
        C.beta_squared(1, 4, 5.0, 0.0)


def test_binned_loss_is_close_to_the_raw_loss(played):
    X, y = played
    rng = np.random.default_rng(0)
    env = FairLogisticBandit(GEN)
    # rebuild the binned history from the played rounds' raw decisions via a recorded run
    pol = OFULogPlus()
    Xr, yr, actions, _ = E.run_recorded(env, pol, 400, 0, 2)
    binned = pol.history.data()
    raw = C.LogisticData.from_observations(Xr, yr)
    theta = rng.normal(size=(2, 50, 4))
    theta *= 5.0 * rng.random((2, 50, 1)) ** 0.25 / np.linalg.norm(theta, axis=-1, keepdims=True)
    err = np.abs(binned.loss(theta) - raw.loss(theta))
    assert err.max() < 1e-3 * C.beta_squared(400, 4, 5.0, 0.05)  # negligible against the radius
    np.testing.assert_allclose(binned.b, raw.b)


# ---------------------------------------------------------------------------- optimistic steps
def _quadratic_instance(seed):
    rng = np.random.default_rng(seed)
    R, K, n = 2, 5, 4
    A = rng.normal(size=(R, n, n))
    H = np.einsum("rij,rkj->rik", A, A) * rng.uniform(0.01, 30)
    theta0 = rng.normal(size=(R, n))
    theta0 *= rng.uniform(0, 5) / np.linalg.norm(theta0, axis=1, keepdims=True)
    g = rng.normal(size=(R, n)) * rng.uniform(0, 5)
    model = C.QuadraticModel(theta0, g, H, 1e-3)
    x = rng.normal(size=(R, K, n))
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    return model, H, theta0, g, rng.uniform(1, 50), x


@pytest.mark.parametrize("seed", range(4))
def test_model_support_matches_cvxpy(seed):
    import cvxpy as cp

    model, H, theta0, g, radius2, x = _quadratic_instance(seed)
    val, th = O.model_support(model, np.full(2, radius2), 5.0, x)
    for r in range(2):
        Hr = H[r] + 1e-3 * np.eye(4)
        c = model.center[r]
        v = cp.Variable(4)
        d = cp.Parameter(4)
        prob = cp.Problem(cp.Maximize(d @ v), [0.5 * cp.quad_form(v - c, Hr) <= radius2, cp.norm(v) <= 5.0])
        for k in range(x.shape[1]):
            d.value = x[r, k]
            prob.solve(solver="CLARABEL")
            assert val[r, k] == pytest.approx(prob.value, rel=1e-6, abs=1e-6)
            assert x[r, k] @ th[r, k] == pytest.approx(val[r, k], abs=1e-9)
            assert np.linalg.norm(th[r, k]) <= 5.0 + 1e-6


@given(st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_ball_halfspace_support_is_the_exact_maximum(seed):
    import cvxpy as cp

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(1, 4))
    A = rng.normal(size=(1, 2, 4))
    b = rng.uniform(-1, 3, size=(1, 2))
    val = O.ball_halfspace_support(x, A, b, 5.0)[0]
    v = cp.Variable(4)
    prob = cp.Problem(cp.Maximize(x[0] @ v), [A[0] @ v <= b[0], cp.norm(v) <= 5.0])
    prob.solve(solver="CLARABEL")
    if prob.status == "infeasible":
        assert val == -np.inf
    else:
        assert val == pytest.approx(prob.value, rel=1e-6, abs=1e-6)


def test_exact_optimistic_step_is_feasible_and_optimal(played):
    X, y = played
    t = 60
    data = C.LogisticData.from_observations(X[:1, :, :t], y[:1, :t])
    theta_hat, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
    loss_hat = float(data.loss(theta_hat)[0])
    beta_sq = float(C.beta_squared(t + 1, 4, 5.0, 0.05))
    cand = unit_norm_features(np.random.default_rng(3).uniform(-1, 1, size=(4, 4)))
    vals, thetas = C.optimistic_exact(X[0, :, :t], y[0, :t], loss_hat, beta_sq, 5.0, cand)
    level = loss_hat + beta_sq
    for k in range(len(cand)):
        th = thetas[k]
        assert float(data.loss(th[None, None])[0, 0]) <= level + 1e-5
        assert np.linalg.norm(th) <= 5 + 1e-6
        # no feasible point on random rays from theta_hat does better
        dirs = np.random.default_rng(k).normal(size=(300, 4))
        for u in dirs:
            lo, hi = 0.0, 20.0
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                p = theta_hat[0] + mid * u / np.linalg.norm(u)
                ok = np.linalg.norm(p) <= 5 and float(data.loss(p[None, None])[0, 0]) <= level
                lo, hi = (mid, hi) if ok else (lo, mid)
            p = theta_hat[0] + lo * u / np.linalg.norm(u)
            assert cand[k] @ p <= vals[k] + 1e-4
    assert np.allclose(C.optimistic_exact(X[0, :, :0], y[0, :0], 0.0, beta_sq, 5.0, cand)[0], 5.0)  # C_1 is the ball
    # a solver that cannot run falls back to SCS, which finds the same optimum
    fallback, _ = C.optimistic_exact(X[0, :, :t], y[0, :t], loss_hat, beta_sq, 5.0, cand, solver="NO_SUCH_SOLVER")
    assert fallback == pytest.approx(vals, abs=1e-4)


def test_exact_optimistic_step_names_the_candidate_when_no_solver_works(played, monkeypatch):
    import cvxpy as cp

    X, y = played

    def fail(self, *args, **kwargs):
        raise cp.error.SolverError("broken on purpose")

    monkeypatch.setattr(cp.Problem, "solve", fail)
    cand = unit_norm_features(np.ones((2, 4)))
    with pytest.raises(
        RuntimeError, match=r"no solution for candidate 0 \(CLARABEL: broken on purpose; SCS: broken on purpose\)"
    ):
        C.optimistic_exact(X[0, :, :30], y[0, :30], 1.0, 1.0, 5.0, cand)


def test_fast_optimistic_step_stays_close_to_the_exact_one():
    """The long runs' optimistic step (sqp on the binned loss) against the exact conic programs."""
    checks = [40, 150, 350]

    def compare(t, ctx, X, y, pol):
        data = C.LogisticData.from_observations(X, y)
        theta, _, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
        loss = data.loss(theta)
        b = float(C.beta_squared(t + 1, 4, 5.0, 0.05))
        exact = np.stack(
            [C.optimistic_exact(X[r], y[r], float(loss[r]), b, 5.0, ctx.x[r])[0] for r in range(X.shape[0])]
        )
        vals, _ = pol.optimistic_values(t, ctx)
        choice = np.argmax(np.where(pol.solved, vals, -np.inf), axis=1)
        rows = np.arange(X.shape[0])
        return exact.max(axis=1), exact[rows, choice], vals[rows, choice]

    _, _, _, out = E.run_recorded(FairLogisticBandit(GEN), OFULogPlus(), 351, 4, 2, checks, compare)
    for best, at_choice, ours in out:
        np.testing.assert_allclose(at_choice, best, atol=1e-4)  # the chosen decision is exactly optimal
        np.testing.assert_allclose(ours, best, atol=2e-2)  # and its value close to the exact one


def test_quadratic_model_at_the_mle_is_far_from_the_exact_step():
    def compare(t, ctx, X, y, pol):
        data = C.LogisticData.from_observations(X, y)
        theta, model, _, _ = C.constrained_mle(data, 5.0, max_steps=200, tol=1e-14)
        loss = data.loss(theta)
        b = float(C.beta_squared(t + 1, 4, 5.0, 0.05))
        exact = C.optimistic_exact(X[0], y[0], float(loss[0]), b, 5.0, ctx.x[0])[0]
        quad, _ = O.optimistic_quadratic(model, theta, b, 5.0, ctx.x)
        return np.abs(quad[0] - exact).max()

    _, _, _, out = E.run_recorded(FairLogisticBandit(GEN), OFULogPlus(), 301, 4, 1, [300], compare)
    assert out[0] > 0.2  # why the long runs do not use it


# ---------------------------------------------------------------------------- algorithms
def test_dual_step_projects_onto_zero_rho():
    @given(st.floats(-5, 20), st.floats(-3, 3), st.floats(0, 15), st.floats(0, 2))
    @settings(max_examples=200, deadline=None)
    def check(phi, grad, rho, step):
        out = dual_step(np.array([phi]), np.array([grad]), rho, step)[0]
        assert 0.0 <= out <= rho
        assert out == pytest.approx(min(max(phi + step * grad, 0.0), rho))

    check()
    with pytest.raises(ValueError, match="rho=-1"):
        dual_step(np.zeros(1), np.zeros(1), -1.0, 0.1)


def test_cclb_with_dual_held_at_zero_picks_what_ofulog_plus_picks():
    T = 150
    ofu = simulate(FairLogisticBandit(GEN), OFULogPlus(), T, 3, n_runs=3, metrics=("action",))
    held = simulate(FairLogisticBandit(GEN), CCLB(T, rho=0.0), T, 3, n_runs=3, metrics=("action", "dual"))
    vacuous = simulate(FairLogisticBandit(GEN), CCLB(T, tau=1.0), T, 3, n_runs=3, metrics=("action", "dual"))
    np.testing.assert_array_equal(held["dual"], 0.0)
    np.testing.assert_array_equal(held["action"], ofu["action"])
    np.testing.assert_array_equal(vacuous["dual"], 0.0)  # Remark 2(4): tau >= 1 never violates
    np.testing.assert_array_equal(vacuous["action"], ofu["action"])
    active = simulate(FairLogisticBandit(GEN), CCLB(T, eps=0.14), T, 3, n_runs=3, metrics=("action", "dual"))
    assert active["dual"].max() > 0 and not np.array_equal(active["action"], ofu["action"])


@pytest.mark.parametrize(
    "make",
    [
        lambda: OFULogPlus(),
        lambda: CCLB(120),
        lambda: CCLB(120, eps=0.14),
        lambda: GLMUCB(),
        lambda: OFULogPlus(optimistic="quadratic"),
    ],
    ids=["ofulog_plus", "cclb", "eps_cclb", "glm_ucb", "ofulog_plus_quadratic"],
)
def test_vectorised_equals_looped(make):
    T, n = 120, 3
    metrics = ("action", "regret", "violation", "reward")
    a = simulate(FairLogisticBandit(GEN), make(), T, 7, n_runs=n, metrics=metrics)
    b = simulate_loop(lambda: FairLogisticBandit(GEN), make, T, 7, n, metrics=metrics)
    for m in metrics:
        np.testing.assert_array_equal(a[m], b[m])


def test_batched_configurations_equal_separate_runs():
    T, reps = 80, 2
    configs = E.paper_configs(T, 0.2, 2 / 0.15, 0.14, eps_values=[0.07], tau_values=[0.3])
    batch = E.run_configs(GEN, configs, T, 1, reps)
    for c in configs:
        alone = simulate(
            FairLogisticBandit(GEN, tau=c.tau),
            CCLB(T, tau=c.tau, rho=c.rho, eps=c.eps),
            T,
            1,
            n_runs=reps,
            metrics=("action", "violation"),
        )
        np.testing.assert_array_equal(batch[c.key]["action"], alone["action"])
        np.testing.assert_array_equal(batch[c.key]["violation"], alone["violation"])


def test_replicas_share_streams_across_configurations():
    rep = Replicas(RunStreams(0, range(6)), replications=3)
    np.testing.assert_array_equal(rep.base, [0, 1, 2, 0, 1, 2])
    u = rep.per_round("x").at(0)
    np.testing.assert_array_equal(u[:3], u[3:])
    np.testing.assert_array_equal(rep.per_config([1.0, 2.0], "tau"), [1, 1, 1, 2, 2, 2])
    with pytest.raises(ValueError, match="tau gives 2 configurations"):
        Replicas(RunStreams(0, range(6)), replications=2).per_config([1.0, 2.0], "tau")


def test_horizon_free_policies_have_prefix_runs():
    assert E.prefix_equals_independent(GEN, 60, 120, 0, 2)


def test_paired_order_uses_paired_differences():
    base = np.array([0.0, 10.0, -5.0, 3.0])
    assert E.paired_order({"a": base, "b": base + 1.0}, ["a", "b"]).verdict == "reproduced"  # constant shift: se 0
    assert E.paired_order({"a": base + 1.0, "b": base}, ["a", "b"]).verdict == "not reproduced"
    noisy = base + np.array([1.0, -1.0, 1.5, -1.4])
    assert E.paired_order({"a": base, "b": noisy}, ["a", "b"]).verdict == "partly"  # within noise
    three = E.paired_order({"a": base, "b": base + 1, "c": base}, ["a", "b", "c"])
    assert three.verdict == "partly"


def test_policy_arguments_are_checked():
    with pytest.raises(ValueError, match="optimistic='fast'"):
        OFULogPlus(optimistic="fast")
    with pytest.raises(ValueError, match="eps"):
        CCLB(100, eps=-0.1)
    with pytest.raises(ValueError, match="horizon"):
        CCLB(0)


# ---------------------------------------------------------------------------- theory
@given(st.integers(0, 10_000), st.floats(0.0, 0.5), st.floats(0.5, 20.0))
@settings(max_examples=60, deadline=None)
def test_lemma8_holds_for_every_sequence(seed, eps, rho):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 400))
    g = rng.uniform(-1 - eps, 1 + eps, T)
    eta = math.sqrt(T) / rho
    phis = np.zeros(T)
    phi = 0.0
    for t in range(T):
        phis[t] = phi
        phi = float(dual_step(np.array([phi]), np.array([g[t]]), rho, 1 / eta)[0])
    for target in (0.0, rho / 3, rho):
        lhs = Th.lemma8_lhs(phis, g, target)
        assert lhs <= Th.lemma8_rhs(g, target, eta) + 1e-9
        assert Th.lemma8_rhs(g, target, eta) <= Th.lemma8_bound(T, rho, eps) + 1e-9


def test_theorem_shapes_and_propositions():
    T = np.array([1e3, 1e4, 1e5])
    t1 = Th.theorem1_shape(T, 4, 5.0, 103.0, 13.3)
    t2 = Th.theorem2_shape(T, 4, 5.0, 103.0, 13.3, 0.14)
    np.testing.assert_allclose(t2["regret"] - t1["regret"], 13.3 * np.sqrt(T) * ((1.14) ** 2 - 1))
    np.testing.assert_allclose(t1["violation"] - t2["violation"], 0.14 * T - np.sqrt(T) * ((1.14) ** 2 - 1))
    assert np.all(np.diff(t1["regret"]) > 0)
    eps = Th.proposition4_threshold(np.array([1e12]), 4, 5.0, 103.0)[0]
    gamma = Th.theorem1_shape(1e12, 4, 5.0, 103.0, 1.0)["violation"]
    assert np.sqrt(1e12) * eps**2 + (2 * np.sqrt(1e12) - 1e12) * eps + gamma == pytest.approx(0.0, abs=1e-3 * gamma)
    assert np.isnan(Th.proposition4_threshold(np.array([1e4]), 4, 5.0, 103.0)[0])  # the bound is vacuous there
    assert Th.proposition3_gap_bound(0.14, 0.15) == pytest.approx(0.14 / 0.15)
    assert Th.truncation_for_slater(0.15) == pytest.approx(2 / 0.15)
    with pytest.raises(ValueError, match="eps=0.2"):
        Th.proposition3_gap_bound(0.2, 0.15)


def test_proposition3_on_generated_rounds():
    rounds = GEN.draw(np.random.default_rng(2), 300)
    v = mixture_lp_value(rounds.reward, rounds.effect, 0.2)
    v_eps = mixture_lp_value(rounds.reward, rounds.effect, 0.2 - 0.14)
    gap = v - v_eps
    assert np.all(gap >= -1e-12)
    assert np.all(gap <= Th.proposition3_gap_bound(0.14, GEN.slater_margin) + 1e-12)


def test_lp_dual_variable_strong_duality_and_slater_bound():
    rounds = GEN.draw(np.random.default_rng(4), 200)
    phi, q = Th.lp_dual_variable(rounds.reward, rounds.effect, 0.2)
    np.testing.assert_allclose(q, mixture_lp_value(rounds.reward, rounds.effect, 0.2), atol=1e-12)
    assert np.all(phi >= 0) and np.all(phi <= Th.dual_variable_bound(GEN.slater_margin) + 1e-12)


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
