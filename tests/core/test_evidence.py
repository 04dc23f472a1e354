"""The standard of evidence in core.checks: bounds tested only where informative, paired
comparisons against their standard error, the one rate test, instances and open choices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.book.claims import Claim
from causalbandits_lib.core import checks


def test_vacuous_bound_is_not_testable_and_says_why():
    v = checks.check_bound(10.0, bound=5000.0, trivial=4653.0, what="regret")
    assert v.verdict == "not testable here"
    assert "vacuous at this scale" in v.reason and "1.075" in v.reason
    assert v.details["bound_over_trivial"] == pytest.approx(5000 / 4653)
    # the same measurement against an informative bound is a real test, both ways
    assert checks.check_bound(10.0, bound=100.0, trivial=4653.0).verdict == "reproduced"
    assert checks.check_bound(200.0, bound=100.0, trivial=4653.0).verdict == "not reproduced"
    never = checks.check_bound(1.0, 2.0, 1.0, informative_from=None)
    assert "no horizon within the search limit makes it informative" in never.reason
    later = checks.check_bound(1.0, 2.0, 1.0, informative_from=123456)
    assert "from T = 1.235e+05" in later.reason
    with pytest.raises(ValueError, match="positive"):
        checks.check_bound(1.0, 2.0, 0.0)


def test_bound_curve_tests_only_informative_horizons():
    t = np.array([10.0, 100.0, 1000.0, 10000.0])
    trivial = t * 1.0
    bound = 15 * np.sqrt(t)  # above half the trivial bound t/2 at 10 and 100; below it from t = 900 on
    ok = checks.check_bound_curve(t, 0.5 * np.sqrt(t), bound, trivial)
    assert ok.verdict == "reproduced" and "2 informative horizons" in ok.reason
    assert ok.details["informative_horizons"] == 2
    # a violation where the bound is vacuous does not count, one where it is informative does
    bad = checks.check_bound_curve(t, np.array([500.0, 400.0, 10.0, 1501.0]), bound, trivial)
    assert bad.verdict == "not reproduced" and "t = 1e+04" in bad.reason
    assert checks.check_bound_curve(t, np.array([500.0, 400.0, 10.0, 10.0]), bound, trivial).verdict == "reproduced"
    vac = checks.check_bound_curve(t, np.zeros(4), 2 * trivial, trivial)
    assert vac.verdict == "not testable here" and "all 4 horizons" in vac.reason


def test_informative_horizon_finds_the_first_informative_T():
    # informative below half the trivial bound: 30 sqrt(T) < T / 2  <=>  T > 3600
    T = checks.informative_horizon(lambda T: 30 * math.sqrt(T), lambda T: float(T))
    assert T == 3601
    assert checks.informative_horizon(lambda T: 0.5 * T, lambda T: float(T), t_max=10**6) is None
    assert checks.informative_horizon(lambda T: 0.4, lambda T: float(T)) == 1


def test_identical_settings_are_indistinguishable():
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    order = checks.check_paired_order({"a": x, "b": x.copy()}, ["a", "b"])
    assert order.verdict == "not reproduced"  # equal in every run: not "a < b", contradicted
    assert "equal in every run" in order.reason
    assert order.details["paired_differences"]["b - a"] == {"mean": 0.0, "se": 0.0, "n": 50}
    margin = checks.Margin(0.1, "a stated margin")
    same = checks.check_equivalent(x, x.copy(), ("a", "b"), margin)
    assert same.verdict == "reproduced"
    shifted = checks.check_equivalent(x, x + 0.5 + 0.01 * rng.normal(size=50), ("a", "b"), margin)
    assert shifted.verdict == "not reproduced" and not shifted.indistinguishable
    clear = checks.check_paired_order({"a": x, "b": x + 1.0}, ["a", "b"])
    assert clear.verdict == "reproduced" and not clear.indistinguishable


def test_close_to_paper_is_an_equivalence_test_against_the_stated_margin():
    runs = np.array([560.0, 570.0, 566.0, 562.0, 568.0])  # mean 565.2, se ~1.8
    margin = checks.Margin(57.1, "10% of the printed 566 plus half its unit")
    assert checks.check_close_to_paper(runs, 566, margin).verdict == "reproduced"
    far = checks.check_close_to_paper(runs, 700, margin)
    assert far.verdict == "not reproduced" and "± " in far.reason
    assert far.details["se"] == pytest.approx(runs.std(ddof=1) / math.sqrt(5))
    # a noisy estimate no longer passes for being noisy: it cannot show equivalence
    noisy = np.array([400.0, 700.0, 566.0, 450.0, 710.0])
    assert checks.check_close_to_paper(noisy, 600, margin).verdict == "not testable here"


def _curves(fn, n_runs=20, noise=0.05, seed=1):
    """Cumulative curves ``fn(t)`` with a per-run scale and small random increments of their own."""
    t = np.unique(np.logspace(2, 5, 25).astype(int)).astype(float)
    rng = np.random.default_rng(seed)
    steps = np.diff(fn(t), prepend=0.0)
    jitter = np.cumsum(rng.exponential(0.01 * np.abs(steps), size=(n_runs, t.size)), axis=1)
    return t, fn(t)[None, :] * np.exp(noise * rng.normal(size=(n_runs, 1))) + jitter


@pytest.mark.parametrize("exponent", [0.5, 1.0])
def test_rate_test_recovers_known_exponents(exponent):
    t, y = _curves(lambda t: 3 * t**exponent)
    r = checks.rate_interval(t, y)
    assert r["low"] <= exponent <= r["high"]
    assert checks.check_rate(t, y, exponent).verdict == "reproduced"
    other = 1.0 if exponent == 0.5 else 0.5
    assert checks.check_rate(t, y, other).verdict == "not reproduced"


def test_rate_test_on_logarithmic_growth():
    t, y = _curves(lambda t: 40 * np.log(t))
    r = checks.rate_interval(t, y)
    assert abs(r["slope"]) < 0.03  # increments of a·log t fall like 1/t: exponent 0
    assert 0.05 < r["level_slope"] < 0.15  # the plain log-log slope would read about 1/log t
    assert checks.check_rate(t, y, 0.0).verdict == "reproduced"
    assert checks.check_sublinear(t, y).verdict == "reproduced"
    assert checks.check_rate(t, y, 0.5, mode="at_most").verdict == "reproduced"
    lin_t, lin = _curves(lambda t: 0.2 * t)
    assert checks.check_sublinear(lin_t, lin).verdict == "not reproduced"


@pytest.mark.parametrize("exponent, offset", [(0.0, -250.0), (0.5, 400.0), (1.0, -3000.0)])
def test_rate_test_is_not_biased_by_a_burn_in_offset(exponent, offset):
    """a·g(t) + c: the exponent comes from the increments, so the offset c left by a burn-in does
    not move it (the slope of log R would: 40 log t - 250 reads about 0.2 at t = 1e5)."""
    g = (lambda t: 40 * np.log(t)) if exponent == 0 else (lambda t: 3 * t**exponent)
    t, y = _curves(lambda t: g(t) + offset)
    assert checks.rate_interval(t, y)["slope"] == pytest.approx(exponent, abs=0.03)
    assert checks.check_rate(t, y, exponent).verdict == "reproduced"


def test_rate_test_says_when_there_is_no_rate():
    t = np.logspace(2, 4, 20)
    falling = np.stack([1000 - 0.01 * t, 1000 - 0.02 * t])
    assert checks.check_rate(t, falling, 0.5, mode="at_most").verdict == "reproduced"  # no growth: at most √t
    assert checks.check_rate(t, falling, 1.0).verdict == "not reproduced"  # not linear growth
    v = checks.check_rate(t, falling, 0.0)
    assert v.verdict == "not testable here" and "does not grow" in v.reason
    with pytest.raises(ValueError, match="does not grow"):
        checks.rate_interval(t, falling)
    # noise that makes a growing curve fall now and then: falling intervals are merged, not an error
    wobbly = 5 * np.sqrt(t) + 3 * np.sin(np.arange(t.size) * 2.5)
    assert checks.rate_interval(t, np.stack([wobbly, wobbly * 1.01]))["slope"] == pytest.approx(0.5, abs=0.1)


def test_rate_test_is_inconclusive_when_runs_cannot_tell():
    t = np.logspace(2, 5, 25)
    rng = np.random.default_rng(5)
    y = np.stack([3 * t**0.6 * np.exp(0.5 * rng.normal()) + np.cumsum(rng.exponential(0.3 * t**0.1)) for _ in range(4)])
    v = checks.check_rate(t, y, 0.5)
    assert v.verdict == "not testable here" and v.reason.startswith("underpowered")
    last = v.details["exponents"][f"{t[-1]:.0f}"]
    assert last["low"] < 0.6 < last["high"]
    # the same curves always give the same interval
    assert checks.rate_interval(t, y) == checks.rate_interval(t, y)
    with pytest.raises(ValueError, match="at least 4 horizons"):
        checks.rate_interval(t[:3], y[:, :3])


def test_instances_follow_the_one_rule():
    yes = checks.Verdict("reproduced", "ok", "r")
    no = checks.Verdict("not reproduced", "a > b", "r")
    tie = checks.check_paired_order({"a": np.zeros(5), "b": np.zeros(5)}, ["a", "b"])
    noise = checks.check_mean_above([1.0, 3.0, 2.0, 2.5], 2.0)
    assert checks.check_instances({"0": yes, "1": yes}).verdict == "reproduced"
    part = checks.check_instances({"0": yes, "1": no, "2": yes})
    assert part.verdict == "partly" and part.reason.startswith("holds on 2 of 3 instances")
    assert part.details["instances"]["1"]["verdict"] == "not reproduced"
    assert checks.check_instances({"0": yes, "1": tie}).verdict == "not reproduced"  # a tie contradicts "a < b"
    assert checks.check_instances({"0": yes, "1": noise}).verdict == "reproduced"  # half hold, none contradicted
    assert checks.check_instances({"0": yes, "1": noise, "2": noise}).verdict == "partly"  # fewer than half
    assert checks.check_instances({"0": no, "1": no}).verdict == "not reproduced"
    assert checks.check_instances({"0": noise}).verdict == "not testable here"


def test_parts_negation_and_one_sided_means():
    yes, no = checks.Verdict("reproduced", "a", "r"), checks.Verdict("not reproduced", "b", "r")
    assert checks.check_parts({"x": yes, "y": yes}).verdict == "reproduced"
    assert checks.check_parts({"x": no, "y": no}).verdict == "not reproduced"
    both = checks.check_parts({"x": yes, "y": no})
    assert both.verdict == "not reproduced" and both.details["parts"]["y"]["verdict"] == "not reproduced"
    # a part not testable here counts as inconclusive: the one rule decides
    untestable = checks.Verdict("not testable here", "vacuous", "r")
    assert checks.check_parts({"x": no, "y": untestable}).verdict == "not reproduced"
    assert checks.check_parts({"x": yes, "y": untestable}).verdict == "reproduced"
    assert checks.check_parts({"x": yes, "y": no, "z": untestable}).verdict == "partly"
    assert checks.check_parts({"y": untestable}).verdict == "not testable here"
    assert checks.negate(yes, "not at most sqrt").verdict == "not reproduced"
    assert checks.negate(checks.Verdict("partly", "c", "r"), "s").verdict == "partly"
    assert checks.check_mean_above([3.0, 3.1, 2.9], 2.0).verdict == "reproduced"
    assert checks.check_mean_above([1.0, 1.1, 0.9], 2.0).verdict == "not reproduced"
    within = checks.check_mean_above([1.0, 3.0, 2.0, 2.5], 2.0)
    assert within.verdict == "not testable here" and within.indistinguishable


def test_bootstrap_increase_of_a_spread():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(40, 3))
    sd = "standard deviation"
    wider = checks.check_bootstrap_increase(sd, base, 3 * base, "sd")
    assert wider.verdict == "reproduced" and wider.details["low"] > 0
    assert checks.check_bootstrap_increase(sd, 3 * base, base, "sd").verdict == "not reproduced"
    same = checks.check_bootstrap_increase(sd, base, base + 0.0, "sd")
    assert same.verdict == "not testable here" and same.indistinguishable


def test_sensitivity_records_how_a_verdict_moves():
    main = checks.Verdict("reproduced", "566 vs 560", "rule")
    moved = checks.with_sensitivity(
        main, "fallback", "min_ucb_delta", {"unconstrained": checks.Verdict("not reproduced", "x", "r")}
    )
    assert moved.verdict == "reproduced"
    assert "depends on our choice of fallback" in moved.reason
    assert moved.details["sensitive_to"] == {
        "fallback": {"min_ucb_delta": "reproduced", "unconstrained": "not reproduced"}
    }
    still = checks.with_sensitivity(main, "alpha", 1.0, {0.3: main, 3.0: main})
    assert still.reason == main.reason and still.details["robust_to"] == {"alpha": ["0.3", "1.0", "3.0"]}
    claim = Claim.from_verdict("fucb.fig2b.regret", "s", 566, 560, moved, kind="experiment")
    d = claim.to_dict()
    assert d["kind"] == "experiment" and d["sensitive_to"]["fallback"]["unconstrained"] == "not reproduced"


def test_claim_kind_is_validated_and_optional():
    v = checks.check_at_most(1, 2)
    old = Claim.from_verdict("fucb.table1.cell", "statement", 1.5, 1.0, v).to_dict()
    assert "kind" not in old and "details" not in old  # records of undeclared claims read as before
    with pytest.raises(ValueError, match="kind"):
        Claim.from_verdict("fucb.table1.cell", "statement", 1.5, 1.0, v, kind="lemma")
    bound = checks.check_bound(1.0, 10.0, 5.0)
    d = Claim.from_verdict("fucb.thm1.bound", "s", None, 1.0, bound, kind="theorem").to_dict()
    assert d["verdict"] == "not testable here" and d["details"]["bound_over_trivial"] == 2.0
