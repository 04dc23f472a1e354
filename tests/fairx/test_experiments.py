"""Simulations with running regret sums, the per-round path they equal, slopes, the grid search
and the records of the protocol (:mod:`causalbandits_lib.fairx.experiments`)."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core import checks
from causalbandits_lib.core.curves import summarise_checkpoints
from causalbandits_lib.core.registry import close_arrays, same_arrays
from causalbandits_lib.core.runner import simulate
from causalbandits_lib.fairx import algorithms as alg
from causalbandits_lib.fairx import data, registry
from causalbandits_lib.fairx.experiments import (
    EXPOSURE,
    REGRETS,
    FairnessRun,
    fairness_recorders,
    grid_search,
    regret_records,
    regrets_from_simulation,
    simulate_fairness,
)
from causalbandits_lib.fairx.merit import ExpMerit, optimal_fair_policy
from causalbandits_lib.fairx.model import ArmsBandit

YEAST_FREQ = data.YEAST_LABEL_COUNTS / data.YEAST_N
M2 = ExpMerit([2.0, 4.0])
KEEP = ("policy", "arm_means", "reward")


@pytest.mark.parametrize("entry", registry.ENTRIES, ids=[e.name for e in registry.ENTRIES])
def test_running_sums_equal_the_cumulative_per_round_regrets(entry):
    """The checkpoints of :func:`simulate_fairness` (running sums in the one loop's recorders) are,
    bit for bit, the cumulative sums of the per-round regrets of the protocol path, for every
    registered pair (replay included: rejected events count zero); a compiled kernel's running sums
    equal them within the kernels' 1e-9 relative, with the same accepted events."""
    merit = registry.MERITS[entry.name]
    T = 250
    vec = simulate(entry.make_env(), entry.make_policy(), T, 3, n_runs=4, metrics=None)
    fr, rr = regrets_from_simulation(vec, merit)
    fast = simulate_fairness(entry.make_env(), entry.make_policy(), merit, T, 3, n_runs=4, backend="numpy")
    compiled = simulate_fairness(entry.make_env(), entry.make_policy(), merit, T, 3, n_runs=4)
    assert close_arrays(fast.fairness, compiled.fairness) and close_arrays(fast.reward, compiled.reward)
    assert (fast.rounds is None and compiled.rounds is None) or same_arrays(fast.rounds, compiled.rounds)
    assert np.array_equal(np.cumsum(fr, axis=-1)[..., fast.t - 1], fast.fairness)
    assert np.array_equal(np.cumsum(rr, axis=-1)[..., fast.t - 1], fast.reward)
    assert np.all(fr >= 0) and np.all(fr <= 2 + 1e-12)
    np.testing.assert_allclose(vec["policy"].sum(axis=-1), 1.0, atol=1e-12)
    if "accepted" in vec.metrics:
        accepted = np.moveaxis(vec["accepted"], 1, -1).astype(float)
        assert np.array_equal(np.cumsum(accepted, axis=-1)[..., fast.t - 1], fast.rounds)
    else:
        assert fast.rounds is None


@pytest.mark.parametrize("entry", registry.ENTRIES, ids=[e.name for e in registry.ENTRIES])
def test_uniform_reward_regret_is_the_exact_regret_of_the_uniform_policy(entry):
    """The ``uniform`` sums are the reward regret the uniform policy over the round's arms would
    have had on the same (accepted) rounds, ``Σ_t π*_t·m_t − mean_a m_{t,a}``, computed from the
    exact arm means of each round; the compiled kernels give the same sums within 1e-9 relative."""
    merit = registry.MERITS[entry.name]
    T = 200
    vec = simulate(entry.make_env(), entry.make_policy(), T, 5, n_runs=3, metrics=None)
    means = vec["arm_means"]  # (R, T, K)
    opt = optimal_fair_policy(merit, means[:, :, None, :])  # (R, T, G, K)
    per_round = (opt * means[:, :, None, :]).sum(axis=-1) - means.mean(axis=-1)[..., None]  # (R, T, G)
    if "accepted" in vec.metrics:
        per_round = per_round * vec["accepted"]
    expected = np.cumsum(np.moveaxis(per_round, 1, -1), axis=-1)
    fast = simulate_fairness(entry.make_env(), entry.make_policy(), merit, T, 5, n_runs=3, backend="numpy")
    compiled = simulate_fairness(entry.make_env(), entry.make_policy(), merit, T, 5, n_runs=3)
    np.testing.assert_allclose(fast.uniform, expected[..., fast.t - 1], rtol=1e-12, atol=1e-12)
    assert close_arrays(fast.uniform, compiled.uniform)
    assert fast.config(0).uniform.shape == fast.uniform[:, :1].shape


def test_uniform_reward_regret_of_a_multi_armed_bandit_is_linear_in_t():
    means = np.array([0.1, 0.2, 0.6, 0.9])
    run = simulate_fairness(ArmsBandit(means), alg.FairXEG(M2, 0.1, 4), M2, 300, 0, n_runs=2)
    opt = optimal_fair_policy(M2, means[None, None, :])[0]  # (G, K)
    gap = (opt * means).sum(axis=-1) - means.mean()  # (G,)
    assert np.all(gap > 0)  # the fair policy leans to the better arms
    np.testing.assert_allclose(run.uniform[..., -1], np.broadcast_to(300 * gap, (2, 2)), rtol=1e-12)


def test_running_sums_exposure_is_the_running_mean_of_the_policy():
    def make_env():
        return ArmsBandit([0.3, 0.4, 0.45, 0.7, 0.72], "gaussian")

    def make_policy():
        return alg.FairXTS(M2, 1.0, [0.5, 1.0], 5)

    vec = simulate(make_env(), make_policy(), 120, 1, n_runs=3, metrics=KEEP)
    fast = simulate_fairness(make_env(), make_policy(), M2, 120, 1, n_runs=3, exposure_at=[50, 120])
    np.testing.assert_allclose(fast.exposure[50], vec["policy"][:, :50].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(fast.exposure[120].sum(axis=-1), 1.0)


def test_fairness_run_is_built_from_the_recorders():
    env, merit = ArmsBandit([0.2, 0.5, 0.9]), ExpMerit(2.0)
    recorders = fairness_recorders(merit, 60, checkpoints=[10, 60], exposure_at=[30])
    assert [r.name for r in recorders] == [REGRETS, EXPOSURE]
    result = simulate(env, alg.FairXEG(merit, 0.1, 3), 60, 0, n_runs=2, metrics=(), recorders=recorders)
    run = FairnessRun.from_simulation(result)
    assert run.t.tolist() == [10, 60] and run.fairness.shape == (2, 1, 2) and run.T == 60
    np.testing.assert_array_equal(run.exposure[30], result.recorded[EXPOSURE]["exposure"][..., 0] / 30)
    assert run.rounds is None
    assert len(fairness_recorders(merit, 60)) == 1  # no exposure recorder unless asked
    with pytest.raises(ValueError, match="exposure_at"):
        fairness_recorders(merit, 60, exposure_at=[61])
    with pytest.raises(ValueError, match="checkpoints"):
        simulate_fairness(env, alg.FairXEG(merit, 0.1, 3), merit, 60, 0, n_runs=1, checkpoints=[0, 60])


def test_fairx_ucb_slope_is_sublinear_and_ucb_linear():
    """Seeded small instance (yeast's label means as Bernoulli arms, c = 4): FairX-UCB's fairness
    regret grows like √T (slope below 0.7), conventional UCB's linearly (slope above 0.85)."""
    merit = ExpMerit(4.0)
    env = ArmsBandit(YEAST_FREQ)
    fair = simulate_fairness(env, alg.FairXUCB(merit, 0.1, 14), merit, 8000, 0, n_runs=4)
    ucb = simulate_fairness(env, alg.UCB(0.1, 14), merit, 8000, 0, n_runs=4)
    assert fair.slope() < 0.7
    assert ucb.slope() > 0.85
    assert fair.final().mean() < 0.2 * ucb.final().mean()


def test_grid_search_picks_the_smallest_validation_fairness_regret():
    env = ArmsBandit(YEAST_FREQ[:6])
    res = grid_search(
        lambda merit, w0: alg.FairXUCB(merit, w0, 6), {"w0": [1e-3, 0.1, 3.0]}, [1.0, 4.0], ExpMerit, env, 600, 2, 0
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


def test_regret_records_returns_metrics_and_curves_instead_of_recording_them():
    from causalbandits_lib.fairx import experiments as ex

    env = ArmsBandit(YEAST_FREQ[:5])
    grids = {"FairX-UCB": {"w0": [1e-3, 0.1]}}
    results = ex.tune_and_test(
        ["FairX-UCB"], ex.MAB_ALGORITHMS, grids, [1.0, 4.0], env, env, 5, None, 200, 2, 400, 3, 0
    )
    rec = regret_records(results, "p.", c_index=1)
    assert list(rec.metrics) == [
        "p.final_fairness_regret.FairX-UCB",
        "p.final_reward_regret.FairX-UCB",
        "p.fairness_regret_slope.FairX-UCB",
    ]
    run = results["FairX-UCB"].test.config(1)
    assert rec.metrics["p.final_fairness_regret.FairX-UCB"] == float(run.final().mean())
    assert rec.curves["p.fairness_regret.FairX-UCB"] == summarise_checkpoints(run.t, run.fairness[:, 0])
    assert rec.table["FairX-UCB"]["slope"] == run.slope()
    every_c = regret_records(results, "q.", slopes=False)
    assert sorted(every_c.metrics) == sorted(
        f"q.final_{w}_regret.FairX-UCB.c_{c}" for w in ("fairness", "reward") for c in ("1", "4")
    )
    assert len(every_c.curves) == 4


def _run(exponent, n_runs=20, T=20000, seed=2):
    """A FairnessRun whose per-run fairness regret grows like t^exponent (multiplicative noise)."""
    from causalbandits_lib.fairx.experiments import FairnessRun, checkpoints_for

    t = checkpoints_for(T)
    rng = np.random.default_rng(seed)
    fr = (t[None, :] ** exponent * np.exp(0.03 * rng.normal(size=(n_runs, 1))))[:, None, :]
    return FairnessRun(t, fr, fr * 0.1, {}, np.arange(n_runs), seed, T)


def test_rate_test_on_checkpoints_recovers_exponents():
    from causalbandits_lib.core import checks
    from causalbandits_lib.fairx import experiments as ex

    idx = ex.rate_points(_run(0.5).t)
    assert 25 <= idx.size <= 40 and _run(0.5).t[idx].min() >= 400  # from T/40: windows for T/4, T/2, T
    assert ex.rate_test(_run(0.5), exponent=0.5, mode="at_most").verdict == "reproduced"
    assert ex.rate_test(_run(1.0), exponent=0.5, mode="at_most").verdict == "not reproduced"
    assert ex.rate_test(_run(1.0), exponent=1.0, mode="equal").verdict == "reproduced"
    assert ex.rate_test(_run(0.5), check=checks.check_sublinear).verdict == "reproduced"
    neg = checks.negate(ex.rate_test(_run(1.0), exponent=0.5, mode="at_most"), "not at most sqrt T")
    assert neg.verdict == "reproduced"
    assert ex.check_slope_below(_run(0.5), _run(1.0)).verdict == "reproduced"
    assert ex.check_slope_below(_run(1.0), _run(0.5)).verdict == "not reproduced"
    assert ex.check_slope_below(_run(0.5), _run(0.5, seed=3)).verdict == "not testable here"


def test_mean_checks_bootstrap_and_combine():

    rng = np.random.default_rng(0)
    x = 1.0 + 0.01 * rng.normal(size=20)
    assert checks.check_mean_above(x, 0.5).verdict == "reproduced"
    assert checks.check_mean_above(x, 2.0).verdict == "not reproduced"
    # a bound not below half the trivial one is not testable; below it, the mean and its se decide
    assert checks.check_mean_below_bound(x, 1.5, 2.0).verdict == "not testable here"
    assert checks.check_mean_below_bound(x, 1.5, 4.0).verdict == "reproduced"
    assert checks.check_mean_below_bound(x, 0.5, 2.0).verdict == "not reproduced"
    narrow, wide = rng.normal(size=30), 3.0 * rng.normal(size=30)
    assert checks.check_bootstrap_increase("standard deviation", narrow, wide, "sd").verdict == "reproduced"
    assert checks.check_bootstrap_increase("standard deviation", wide, narrow, "sd").verdict == "not reproduced"
    same = checks.check_bootstrap_increase("standard deviation", narrow, narrow.copy(), "sd")
    assert same.verdict == "not testable here" and same.indistinguishable
    ok, bad = checks.check_mean_above(x, 0.5), checks.check_mean_above(x, 2.0)
    assert checks.check_parts({"a": ok, "b": ok}).verdict == "reproduced"
    assert checks.check_parts({"a": bad, "b": bad}).verdict == "not reproduced"
    assert checks.check_parts({"a": ok, "b": ok, "c": bad}).verdict == "partly"


def _bent_run(T: int = 20000, R: int = 20, seed: int = 0) -> FairnessRun:
    """Cumulative curves that grow like t (slope 1) up to T/4 and like √t after: a rate that
    holds at the horizon but not at the earlier ones."""
    rng = np.random.default_rng(seed)
    t = np.unique(np.geomspace(1, T, 300).round()).astype(float)
    knee = T / 4
    base = np.where(t <= knee, t, knee + 2 * np.sqrt(knee) * (np.sqrt(t) - np.sqrt(knee)))
    fair = base[None, None, :] * rng.uniform(0.9, 1.1, size=(R, 1, 1))
    return FairnessRun(t, fair, fair.copy(), {}, np.arange(R), seed, T)


def test_the_rate_protocol_judges_every_horizon():
    from causalbandits_lib.fairx import experiments as ex

    good = ex.rate_test(_run(0.5), exponent=0.5, mode="at_most")
    assert good.verdict == "reproduced" and len(good.details["exponents"]) == 3
    bent = ex.rate_test(_bent_run(), exponent=0.5, mode="at_most")
    # the horizon T alone could pass; the earlier horizons see the linear stretch
    assert bent.verdict != "reproduced"
    assert bent.details["exponents"][f"{20000:.0f}"]["slope"] < 0.9


def test_optimism_policy_error_orders_the_solvers():
    from causalbandits_lib.fairx import experiments as ex
    from causalbandits_lib.fairx.merit import fair_policy, optimal_fair_policy

    merit = ExpMerit(4.0)
    rng = np.random.default_rng(0)
    wide = ex.optimism_policy_error(merit, YEAST_FREQ, 6.0, 5000, rng, 200)
    assert set(wide) == {"exact", "pgd", "plug-in"} and wide["exact"].shape == (200,)
    # wide boxes: the exact optimistic parameter sits at the corners, far from π*; PGD stays near μ̂
    assert wide["exact"].mean() > 3 * wide["pgd"].mean()
    # a vanishing width leaves all three at the plug-in policy
    thin = ex.optimism_policy_error(merit, YEAST_FREQ, 1e-9, 5000, np.random.default_rng(1), 50)
    assert np.allclose(thin["exact"], thin["plug-in"], atol=1e-6) and np.allclose(
        thin["pgd"], thin["plug-in"], atol=1e-6
    )
    # the plug-in value is ‖π_μ̂ − π*‖₁ recomputed by hand for one box
    opt = optimal_fair_policy(merit, YEAST_FREQ)
    assert np.all(thin["plug-in"] >= 0) and np.all(thin["plug-in"] <= 2)
    assert np.isclose(np.abs(fair_policy(merit, YEAST_FREQ) - opt).sum(), 0.0)


def test_tuned_metrics_names_every_algorithm_parameter_and_c():
    from causalbandits_lib.fairx.experiments import Tuned, tuned_metrics

    run = _run(0.5)
    res = {
        "FairX-UCB": Tuned("FairX-UCB", np.array([1.0, 10.0]), None, {"w0": np.array([1e-3, 1e-1])}, run),
        "FairX-TS": Tuned(
            "FairX-TS",
            np.array([1.0, 10.0]),
            None,
            {"prior_sd": np.array([0.1, 0.2]), "reward_sd": np.array([1e-5, 1e-4])},
            run,
        ),
    }
    m = tuned_metrics(res)
    assert len(m) == 6
    assert m["tuned.FairX-UCB.w0.c=10"] == 0.1 and m["tuned.FairX-TS.reward_sd.c=1"] == 1e-5


def test_box_coverage_holds_at_the_theory_width_and_fails_at_a_tiny_one():
    from causalbandits_lib.fairx import experiments as ex

    wide = ex.box_coverage(YEAST_FREQ, 5.0, 2000, 20, np.random.default_rng(0))
    assert wide.shape == (20,) and wide.all()
    tiny = ex.box_coverage(YEAST_FREQ, 1e-3, 2000, 20, np.random.default_rng(0))
    assert not tiny.any()
    # a coin with mean 1/2: the first draw is 0 or 1, |1 - 1/2| = 1/2 > w0 = 0.4 at n = 1, so never covered
    assert not ex.box_coverage(np.array([0.5]), 0.4, 10, 5, np.random.default_rng(1)).any()
