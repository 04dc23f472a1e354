"""The experiments: batched configurations, the recorder of played rounds, coverage, the slices of
the confidence sets and the measurements the claims use."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from causalbandits_lib.cclb import experiments as E
from causalbandits_lib.cclb.algorithms import CCLB, OFULogPlus
from causalbandits_lib.cclb.environment import FairLogisticBandit
from causalbandits_lib.cclb.generator import RoundGenerator
from causalbandits_lib.cclb.model import THETA_STAR
from causalbandits_lib.core import checks
from causalbandits_lib.core.runner import simulate
from causalbandits_lib.core.streams import RunStreams

from .support import GEN, play, played_data


def test_theta_star_in_confidence_set_at_the_stated_rate():
    alpha = 0.05
    X, y = played_data(300, seed=11, n_runs=6)
    gaps = E.coverage_gaps(X, y, THETA_STAR, [20, 80, 300], 5.0, alpha)
    covered = np.all(gaps <= 1.0, axis=1)
    assert covered.mean() >= 1 - alpha


def test_played_rounds_keep_the_run_and_do_not_change_it():
    T, seen = 40, []

    def probe(t, ctx, X, y, pol):
        seen.append((t, X.shape, y.shape))
        X[:] = np.nan  # a view: the recorder's arrays are what the probe sees
        return t

    recorder = E.PlayedRounds([0, 25], probe)
    metrics = ("action", "reward")
    res = simulate(FairLogisticBandit(GEN), OFULogPlus(), T, 1, n_runs=2, metrics=metrics, recorders=[recorder])
    kept = res.recorded["played"]
    plain = simulate(FairLogisticBandit(GEN), OFULogPlus(), T, 1, n_runs=2, metrics=metrics)
    np.testing.assert_array_equal(kept.actions, plain["action"])
    np.testing.assert_array_equal(kept.y, plain["reward"])
    assert kept.probes == [0, 25] and seen == [(0, (2, 4, 0), (2, 0)), (25, (2, 4, 25), (2, 25))]
    assert np.isnan(kept.X[:, :, :25]).all() and np.isfinite(kept.X[:, :, 25:]).all()
    np.testing.assert_allclose(np.linalg.norm(kept.X[:, :, 25:], axis=1), 1.0)  # unit-norm played features


@pytest.mark.parametrize("how", [{"jobs": 2}, {"jobs": 2, "scheduler": "local"}])
def test_exact_comparisons_are_the_same_on_worker_processes(how):
    """compare_optimistic_steps solves the conic programs of each compared run as one task of
    core.parallel.map_tasks: its returns are the same bit for bit in this process and on worker
    processes (joblib's, a Dask LocalCluster's), in the order of ``runs``, with the generator's
    contexts and with candidate features laid out otherwise (strided, neither C- nor Fortran-ordered)."""
    returns = []

    def probe(t, ctx, X, y, pol):
        R, K, n = ctx.x.shape
        padded = np.zeros((R, n, K + 3))
        padded[:, :, :K] = np.swapaxes(ctx.x, 1, 2)
        strided = dataclasses.replace(ctx, x=np.swapaxes(padded[:, :, :K], 1, 2))
        for c in (ctx, strided):
            returns.append([E.compare_optimistic_steps(t, c, X, y, pol, [1, 0], **kw) for kw in ({"jobs": 1}, how)])
        return t

    play(FairLogisticBandit(GEN), OFULogPlus(), 40, 3, n_runs=2, rounds=[30], probe=probe)
    assert len(returns) == 2
    keys = ["exact", "exact_at_choice", "exact_best", "fast_at_choice", "quadratic"]
    for serial, parallel in returns:
        assert sorted(serial) == sorted(parallel) == keys and serial["exact"].shape == (2, 20)
        for key in keys:
            a, b = serial[key], parallel[key]
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key


@pytest.mark.parametrize("jobs", [1, 2])
def test_deferred_comparisons_solved_in_one_batch_equal_the_immediate_ones(jobs):
    """The notebook defers each probe's exact programs (defer=True) and solves every probed round
    in one batch after the run (finish_comparisons): the same returns, bit for bit, in probe order."""
    now, later = [], []

    def probe(t, ctx, X, y, pol):
        now.append(E.compare_optimistic_steps(t, ctx, X, y, pol, [1, 0]))
        later.append(E.compare_optimistic_steps(t, ctx, X, y, pol, [1, 0], defer=True))
        return t

    play(FairLogisticBandit(GEN), OFULogPlus(), 45, 3, n_runs=2, rounds=[12, 30, 40], probe=probe)
    assert all(isinstance(p, E.PendingComparison) for p in later) and [p.t for p in later] == [12, 30, 40]
    finished = E.finish_comparisons(later, jobs=jobs)
    assert len(finished) == 3
    for a, b in zip(now, finished):
        assert sorted(a) == sorted(b)
        for key in a:
            assert a[key].tobytes() == b[key].tobytes() and a[key].shape == b[key].shape, key


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


def test_glm_ucb_runs_on_the_replications_of_the_family():
    T, reps = 60, 2
    glm = E.run_glm_ucb(GEN, T, 2, reps, 0.2)
    family = E.run_configs(GEN, E.paper_configs(T, 0.2, 2 / 0.15, 0.14), T, 2, reps)
    assert glm["regret"].shape == (reps, T)
    # unconstrained_regret - regret = max_d r_t(d) - r_t(d*_t) depends on the round's context only
    context_gap = lambda r: r["unconstrained_regret"] - r["regret"]  # noqa: E731
    for key in ("ofulog_plus", "eps_cclb"):
        np.testing.assert_allclose(context_gap(glm), context_gap(family[key]), rtol=0, atol=1e-12)
    assert not np.allclose(context_gap(glm)[0], context_gap(glm)[1])


def test_horizon_free_policies_have_prefix_runs():
    assert E.prefix_equals_independent(GEN, 60, 120, 0, 2)


def test_final_values_and_positive_part_of_sum():
    res = simulate(FairLogisticBandit(GEN), OFULogPlus(), 50, 0, n_runs=2, metrics=E.PER_ROUND_METRICS)
    fv = E.final_values(res)
    np.testing.assert_allclose(fv["regret"], res["regret"].sum(axis=1))
    np.testing.assert_allclose(fv["violation_positive_part_of_sum"], np.maximum(res["violation"].sum(axis=1), 0))
    at = E.final_values(res, [10, 50])
    np.testing.assert_allclose(at["regret"][:, 1], fv["regret"])
    np.testing.assert_array_equal(E.positive_part_of_sum([[1.0, -3.0, 1.0]]), [[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="horizons must lie in"):
        E.final_values(res, [0])


def test_second_half_slope():
    t = np.arange(1, 101, dtype=float)
    assert E.second_half_slope(np.stack([t, 2 * t])) == pytest.approx(np.log2(100 / 50))
    assert E.second_half_slope(np.sqrt(t)[None]) == pytest.approx(0.5)
    assert E.second_half_slope(np.zeros((2, 100))) == 0.0
    assert E.second_half_slope(np.where(t > 60, 1.0, 0.0)[None]) == float("inf")


def test_confidence_set_slices_contain_theta_star_and_the_mle(played):
    X, y = played
    slices = E.confidence_set_slices(X[0], y[0], THETA_STAR, [40, 400], 5.0, 0.05, n_grid=41)
    u = slices["u"]
    assert list(slices["levels"]) == [40, 400] and slices["ball"].shape == (41, 41)
    centre = np.argmin(np.abs(u))
    for level in slices["levels"].values():
        assert level[centre, centre] <= 0  # the MLE of all the data lies in every set here
        assert (level <= 0).mean() < 1  # and the sets do not fill the slice
    assert (slices["levels"][400] <= 0).sum() < (slices["levels"][40] <= 0).sum()  # the set shrinks
    # theta* is the point (star) of the slice, at the distance ||theta* - theta_hat_T||
    assert slices["star"][1] == pytest.approx(0.0, abs=1e-12)


def _cumulative(exponent, n_runs=20, T=2000, seed=3):
    """Per-run cumulative curves growing like t^exponent, with multiplicative noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, T + 1)
    return t[None, :] ** exponent * np.exp(0.02 * rng.normal(size=(n_runs, 1)))


def test_rate_test_reads_per_run_cumulative_curves():
    # from T/40, so that each of the protocol's horizons T/4, T/2, T has its window [h/10, h]
    assert E.rate_horizons(2000).min() == 50 and E.rate_horizons(2000).max() == 2000
    from causalbandits_lib.core import checks

    assert E.rate_test(_cumulative(1.0), exponent=1.0, mode="equal").verdict == "reproduced"
    assert E.rate_test(_cumulative(0.5), exponent=1.0, mode="equal").verdict == "not reproduced"
    assert E.rate_test(_cumulative(0.5), checks.check_sublinear).verdict == "reproduced"
    assert E.rate_test(_cumulative(1.0), checks.check_sublinear).verdict == "not reproduced"
    few = E.rate_test(_cumulative(0.5, n_runs=8), checks.check_sublinear)
    assert few.verdict == "not testable here" and "at least 20 runs" in few.reason
    zero = np.zeros((20, 500))
    assert E.rate_test(zero, checks.check_sublinear).verdict == "reproduced"  # no growth: sublinear


def test_levels_off_accepts_a_curve_back_at_zero_and_rejects_growth():
    # up early (before T/40, where the protocol's first window starts), then back down to zero
    back = np.concatenate([np.linspace(0, 50, 20), np.linspace(50, 0, 980)])[None, :].repeat(20, axis=0)
    assert E.check_levels_off(back).verdict == "reproduced"
    assert E.check_levels_off(_cumulative(0.8)).verdict == "not reproduced"
    assert E.check_levels_off(_cumulative(0.0) * 3.0).verdict == "reproduced"  # flat and positive


def test_mean_above_and_combine():
    x = np.array([0.7, 0.72, 0.74, 0.71])
    assert checks.check_mean_above(x, 0.5).verdict == "reproduced"
    assert checks.check_mean_above(x, 0.9).verdict == "not reproduced"
    noisy = checks.check_mean_above(np.array([0.2, 0.8, 0.3, 0.9]), 0.5)
    assert noisy.verdict == "not testable here" and noisy.indistinguishable
    ok, bad = checks.check_mean_above(x, 0.5), checks.check_mean_above(x, 0.9)
    assert checks.check_parts({"a": ok, "b": ok}).verdict == "reproduced"
    assert checks.check_parts({"a": bad, "b": bad}).verdict == "not reproduced"
    both = checks.check_parts({"a": ok, "b": bad})
    assert both.verdict == "not reproduced" and set(both.details["parts"]) == {"a", "b"}
    assert checks.check_parts({"a": ok, "b": noisy}).verdict == "reproduced"  # holds on half, none contradicted
    assert checks.check_parts({"a": ok, "b": noisy, "c": noisy}).verdict == "partly"


def test_tied_rounds_are_counted_on_the_contexts_the_runs_see():
    gen = RoundGenerator()
    configs = E.paper_configs(60, 0.2, 2 / 0.15, 0.14)[:2]
    res = E.run_configs(gen, configs, 60, 7, 2)
    n_tied = E.tied_rounds(gen, 60, 7, 2)
    assert n_tied.shape == (2, 60) and n_tied.min() >= 1
    # the same contexts: max_d r - r(d*) is what the runs' two regrets differ by, round for round
    env = FairLogisticBandit(gen)
    env.reset(RunStreams(7, range(2), replications=2).child("env/"))
    blk = env.block(0, 60)
    for c in configs:
        r = res[c.key]
        assert np.allclose(r["unconstrained_regret"] - r["regret"], blk["unconstrained"] - blk["best"], atol=1e-12)
    assert (n_tied > 1).any()  # unit_norm: about 18% of rounds


def test_split_by_ties_adds_up_and_puts_each_round_on_its_side():
    a = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    b = np.array([[2.0, 2.0, 5.0], [1.0, 0.0, 0.0]])
    tied = np.array([[True, False, False], [False, False, True]])
    out = E.split_by_ties(a, b, tied)
    assert out["total"].tolist() == [3.0, 0.0]
    assert out["tied"].tolist() == [1.0, -1.0]
    assert out["untied"].tolist() == [2.0, 1.0]


def _fake_run(violation: np.ndarray, reps: int, T: int):
    """A run of the Figure 2 metrics with the given per-round violations and zero regrets."""
    from causalbandits_lib.core.runner import SimulationResult

    v = np.broadcast_to(np.asarray(violation, dtype=float), (reps, T)).copy()
    zero = np.zeros((reps, T))
    metrics = {
        "regret": zero,
        "regret_plus": zero,
        "penalized_regret": zero,
        "unconstrained_regret": zero,
        "violation": v,
        "violation_pos": np.maximum(v, 0.0),
    }
    return SimulationResult(metrics=metrics, runs=np.arange(reps), seed=0, T=T)


def test_figure2_reads_the_violations_of_eq7_once():
    # eps-CCLB alternates +0.1 / -0.1 (Eq. 7 stays at most 0.1, the per-round sum grows as 0.05 t);
    # CCLB violates by 0.04 every round: only the Eq. (7) reading makes eps-CCLB's violations small
    reps, T = 6, 200
    rng = np.random.default_rng(3)
    alternating = np.where(np.arange(T) % 2 == 0, 0.1, -0.1)
    res = {
        "cclb": _fake_run(0.04 + 0.001 * rng.random((reps, T)), reps, T),
        "eps_cclb": _fake_run(alternating, reps, T),
        "ofulog_plus": _fake_run(0.04 + 0.001 * rng.random((reps, T)), reps, T),
        "glm_ucb": _fake_run(np.zeros(T), reps, T),
    }
    out = E.figure2_checks(res, T)
    assert "eps_cclb_violations_small_eq7" not in out
    verdict, measured = out["eps_cclb_violations_small"]
    assert verdict.verdict == "reproduced"
    assert measured["violations_eq7"]["eps_cclb"]["mean"] <= 0.1
    assert measured["violations_sum_of_positive_parts"]["eps_cclb"]["mean"] == pytest.approx(0.1 * T / 2)


def test_one_tie_rule_for_the_chapter():
    import yaml

    from causalbandits_lib.book import paths

    spec = yaml.safe_load((paths.notebooks_dir() / "cclb" / "parameters.yml").read_text())
    rules = {nb: p["parameters"]["tie_rule"] for nb, p in spec["notebooks"].items() if "tie_rule" in p["parameters"]}
    assert set(rules) >= {"03_primal_dual", "04_experiments"}  # every notebook that runs the CCLB family
    assert {r["value"] for r in rules.values()} == {"random"}
    assert all(r.get("ours") and r.get("alternatives") == ["fairer"] for r in rules.values())


def test_independent_horizons_give_the_rate_protocol_four_points_per_window():
    # the protocol's horizons T/4, T/2, T and the starts T/40, T/20, T/10 of their windows [h/10, h]
    assert E.independent_horizons(10_000).tolist() == [250, 500, 1000, 2500, 5000, 10_000]
    hs = E.independent_horizons(2000)
    for h in (500, 1000, 2000):
        assert np.sum((hs >= h / 10) & (hs <= h)) == 4
    with pytest.raises(ValueError, match="too small"):
        E.independent_horizons(8)


def test_each_horizon_is_its_own_run_with_the_dual_step_set_for_it():
    # Theorem 1 / Algorithm 1: eta = sqrt(T) / rho, so phi_{t+1} = Proj_[0, rho](phi_t + (rho / sqrt(T)) g_t)
    # with g_t = |Delta~_t(d_t)| - tau + eps; the dual path of each horizon's run is rebuilt from its
    # own estimated violations with the step of that horizon, not the longest one's
    reps, rho, eps, tau = 2, 2 / 0.15, 0.14, 0.2
    configs = [E.Config("eps_cclb", "eps-CCLB", rho, eps, tau, 40), E.Config("cclb", "CCLB", rho, 0.0, tau, 40)]
    per_h = E.run_per_horizon(GEN, configs, [10, 40], 5, reps)
    assert sorted(per_h) == [10, 40]
    for h, runs in per_h.items():
        for c in configs:
            r = runs[c.key]
            assert r["dual"].shape == (reps, h)
            phi, expected = np.zeros(reps), []
            for t in range(h):
                expected.append(phi)
                phi = np.clip(phi + rho / np.sqrt(h) * (r["estimated_violation"][:, t] + c.eps), 0.0, rho)
            np.testing.assert_allclose(r["dual"], np.stack(expected, axis=1), rtol=0, atol=1e-12)
    # the dual moves (so the check above can tell the two steps apart) and the steps differ
    assert per_h[10]["eps_cclb"]["dual"][:, 1:].max() > 0
    assert not np.allclose(per_h[10]["eps_cclb"]["dual"], per_h[40]["eps_cclb"]["dual"][:, :10])
    # same run seeds: replication i sees the same contexts at every horizon (the part of the regret
    # that depends on the round's context only)
    gap = lambda r: r["unconstrained_regret"] - r["regret"]  # noqa: E731
    np.testing.assert_allclose(gap(per_h[10]["cclb"]), gap(per_h[40]["cclb"])[:, :10], rtol=0, atol=1e-12)
    # runs already made for a horizon are reused, not re-run
    again = E.run_per_horizon(GEN, configs, [10, 40], 5, reps, done={40: per_h[40]})
    assert again[40]["cclb"] is per_h[40]["cclb"]
    hs, V = E.values_per_horizon(per_h, "cclb")
    assert hs.tolist() == [10, 40] and V.shape == (reps, 2)
    np.testing.assert_allclose(V[:, 0], np.maximum(per_h[10]["cclb"]["violation"].sum(axis=1), 0.0))
