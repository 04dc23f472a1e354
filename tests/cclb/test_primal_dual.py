"""The result objects of notebook cclb/03 (primal_dual) and the theory functions it calls, each
against a hand-computed expectation on a tiny input."""

from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from causalbandits_lib.cclb import experiments as E  # noqa: E402
from causalbandits_lib.cclb import figures  # noqa: E402
from causalbandits_lib.cclb import primal_dual as PD  # noqa: E402
from causalbandits_lib.cclb import theory as Th  # noqa: E402
from causalbandits_lib.cclb.generator import RoundGenerator  # noqa: E402
from causalbandits_lib.core.runner import SimulationResult  # noqa: E402
from tests.recording_notebook import RecordingNotebook  # noqa: E402


def _result(T=4, **metrics) -> SimulationResult:
    return SimulationResult({k: np.asarray(v, dtype=float) for k, v in metrics.items()}, np.arange(1), 0, T)


def test_dual_check_on_one_round_of_two_decisions():
    # rewards 1 and 0.5, effects 0.4 and 0, tau = 0.2: the LP mixes half-half (value 0.75); at
    # tau - eps = 0.1 a quarter (0.625); the dual max(1 - 0.2 phi, 0.5 + 0.2 phi) is least at phi = 1.25
    rounds = SimpleNamespace(reward=np.array([[1.0, 0.5]]), effect=np.array([[0.4, 0.0]]))
    dual = PD.dual_check(rounds, tau=0.2, eps=0.1)
    assert dual.phi_star[0] == pytest.approx(1.25)
    assert dual.lp[0] == pytest.approx(0.75) and dual.lp_tight[0] == pytest.approx(0.625)
    assert dual.duality_gap == pytest.approx(0.0, abs=1e-9)
    assert dual.dmax == pytest.approx(0.25) and dual.dmax_tight == pytest.approx(0.125)
    assert dual.benchmark_gap[0] == pytest.approx(0.125)
    nb = RecordingNotebook()
    dual.record(nb)
    assert nb.metrics["dual.max_optimal_dual_variable"] == pytest.approx(1.25)
    assert set(nb.metrics) == {"dual.max_optimal_dual_variable", "dual.max_duality_gap"}


def _runs() -> PD.PrimalDualRuns:
    """CCLB rho = 2 (the main run), rho = 0 (ignored by Lemma 8), eps-CCLB and tau = 1, T = 4, one run."""
    cclb = _result(
        dual=[[0.0, 0.5, 1.0, 1.0]],
        estimated_violation=[[1.0, 1.0, 0.0, -1.0]],
        violation=[[-1.0, 2.0, -3.0, 1.0]],
        violation_pos=[[0.0, 2.0, 0.0, 1.0]],
        regret=[[1.0, 1.0, 1.0, 1.0]],
        regret_plus=[[1.0, 2.0, 1.0, 3.0]],
        penalized_regret=[[0.0, 0.0, 0.0, 0.0]],
    )
    zero = _result(**{k: np.zeros((1, 4)) for k in cclb.metrics})
    eps_cclb = _result(**{k: v + 1.0 for k, v in cclb.metrics.items()})
    configs = (
        E.Config("cclb_rho0", "CCLB, ρ = 0", 0.0, 0.0, 0.2, 4),
        E.Config("cclb_rho2", "CCLB, ρ = 2", 2.0, 0.0, 0.2, 4),
        E.Config("eps_cclb", "ε-CCLB", 2.0, 1.0, 0.2, 4),
        E.Config("cclb_tau1", "CCLB, τ = 1", 2.0, 0.0, 1.0, 4),
    )
    results = {"cclb_rho0": zero, "cclb_rho2": cclb, "eps_cclb": eps_cclb, "cclb_tau1": zero}
    other = {"cclb_rho2": zero, "eps_cclb": cclb}
    return PD.PrimalDualRuns(configs, 2, results, other, "cclb_rho2", "random", "fairer", 0, 1, {})


def test_lemma8_ratio_by_hand():
    # CCLB rho = 2: phi = 0 gives -(0 + 0.5 + 0 - 1) = 0.5, phi = 2 gives 2 + 1.5 + 0 - 1 = 2.5, bound
    # 2 sqrt(4) = 4. eps-CCLB (eps = 1): g = est + 2 = (3, 3, 2, 1), phi_t = (1, 1.5, 2, 2); phi = 2 gives
    # 3 + 1.5 + 0 + 0 = 4.5, bound 2 sqrt(4) (1 + 1)^2 = 16. tau = 1: zero.
    assert _runs().lemma8_ratio() == pytest.approx(2.5 / 4)


def test_violations_finals_and_mechanism_by_hand():
    runs = _runs()
    np.testing.assert_allclose(runs.violation("cclb"), [[0.0, 1.0, 0.0, 0.0]])  # [cumsum(-1, 2, -3, 1)]_+
    np.testing.assert_allclose(runs.violation("eps_cclb"), [[0.0, 3.0, 1.0, 3.0]])  # cumsum(0, 3, -2, 2)
    np.testing.assert_allclose(runs.violation("cclb", other_rule=True), np.zeros((1, 4)))
    assert runs.final_regret_plus("cclb") == pytest.approx(7.0)
    assert runs.final_violation("eps_cclb") == pytest.approx(3.0)
    assert runs.violation_slope("eps_cclb") == pytest.approx(0.0)  # V(4) / V(2) = 3 / 3
    # second half: estimated (0 - 1) / 2, true (-3 + 1) / 2, final phi 1
    assert runs.mechanism(start=2)["cclb_rho2"] == pytest.approx((-0.5, -1.0, 1.0))
    # R+ - R per round: (0, 1, 0, 2) for CCLB and eps-CCLB, zero for the two others
    gap = runs.regret_plus_minus_regret()
    assert gap.shape == (16,) and gap.sum() == pytest.approx(6.0)
    assert [label for label, _ in runs.sweep_results()] == ["CCLB, ρ = 0", "CCLB, ρ = 2", "ε-CCLB"]


def test_record_registers_the_notebooks_names_and_values():
    nb = RecordingNotebook()
    _runs().record(nb)
    assert nb.metrics["final_regret_plus.cclb"] == pytest.approx(7.0)
    assert nb.metrics["final_regret_plus.eps_cclb"] == pytest.approx(11.0)
    assert nb.metrics["final_violation_positive_part_of_sum.cclb"] == pytest.approx(0.0)
    assert nb.metrics["tie_rule_fairer.final_violation_positive_part_of_sum.eps_cclb"] == pytest.approx(0.0)
    assert nb.metrics["rho_sweep.cclb_rho2.final_regret"] == pytest.approx(4.0)
    assert nb.metrics["rho_sweep.eps_cclb.final_violation_sum_of_positive_parts"] == pytest.approx(7.0)
    assert nb.metrics["theorem1.cclb_violation_slope_second_half"] == 0.0  # ends at zero
    assert set(nb.curves) == {
        "cclb.violation_positive_part_of_sum",
        "eps_cclb.violation_positive_part_of_sum",
        "cclb.regret_plus",
        "eps_cclb.regret_plus",
    }
    assert nb.cumulative["cclb.violation_positive_part_of_sum"] is False
    assert len(nb.metrics) == 2 + 3 * 2 + 2 * 4


def test_per_horizon_summary_and_record():
    ph = PD.PerHorizon(
        np.array([10, 20]),
        {
            ("random", "cclb"): np.array([[1.0, 2.0], [3.0, 4.0]]),
            ("random", "eps_cclb"): np.zeros((2, 2)),
            ("fairer", "cclb"): np.ones((2, 2)),
            ("fairer", "eps_cclb"): np.ones((2, 2)),
        },
        ("random", "fairer"),
    )
    nb = RecordingNotebook()
    ph.record(nb)
    assert nb.metrics["per_horizon.tie_rule_random.cclb.V_mean.T20"] == pytest.approx(3.0)
    assert len(nb.metrics) == 8
    lines = ph.summary().splitlines()
    assert len(lines) == 4 and lines[0].endswith("10: 2.0, 20: 3.0") and "fairer" in lines[2]


def test_run_primal_dual_equals_the_batches_it_replaces():
    gen, T, reps = RoundGenerator(tau=0.3), 400, 2
    rho = Th.truncation_for_slater(gen.slater_margin)
    runs = PD.run_primal_dual(gen, [1.0, rho], rho, 0.05, 0.3, T, 3, reps, "random", alpha=0.05)
    assert runs.main == f"cclb_rho{rho:g}" and runs.other_rule == "fairer"
    assert [c.key for c in runs.configs] == ["cclb_rho1", f"cclb_rho{rho:g}", "eps_cclb", "cclb_tau1"]
    direct = E.run_configs(gen, list(runs.configs), T, 3, reps, alpha=0.05, tie_rule="random")
    for key, res in direct.items():
        np.testing.assert_array_equal(runs.results[key]["regret_plus"], res["regret_plus"])
    family = [c for c in runs.configs if c.key in (runs.main, "eps_cclb")]
    other = E.run_configs(gen, family, T, 3, reps, alpha=0.05, tie_rule="fairer")
    np.testing.assert_array_equal(runs.other["eps_cclb"]["violation"], other["eps_cclb"]["violation"])
    hs = E.independent_horizons(T)
    per_h = runs.per_horizon(gen, hs)
    direct_h = E.run_per_horizon(gen, family, hs, 3, reps, alpha=0.05, tie_rule="fairer")
    np.testing.assert_array_equal(per_h.values["fairer", "cclb"], E.values_per_horizon(direct_h, runs.main)[1])
    # the runs of horizon T are the main runs
    assert per_h.values["random", "eps_cclb"][:, -1] == pytest.approx(
        np.maximum(runs.results["eps_cclb"]["violation"].sum(axis=1), 0.0)
    )


def test_bound_curve_by_hand():
    # one per round, so R(t) = t; bound 10 sqrt(t) is below half of t dmax = t from t = 401
    curve = PD.bound_curve(np.ones((2, 100)), lambda n: 10 * np.sqrt(np.asarray(n, dtype=float)), 1.0)
    assert curve.t[0] == 10 and curve.t[-1] == 100 and len(curve.t) <= 25
    np.testing.assert_allclose(curve.measured, np.stack([curve.t, curve.t]))
    np.testing.assert_allclose(curve.bound, 10 * np.sqrt(curve.t))
    np.testing.assert_allclose(curve.trivial, curve.t)
    assert curve.informative_from == 401


def test_proposition2_shape_by_hand():
    T = math.e**2  # log T = 2, sqrt(T) = e
    assert float(Th.proposition2_shape(T, 1, 1.0, 0.0)) == pytest.approx(2 * math.e + 4)
    assert float(Th.proposition2_shape(T, 2, 1.0, 1.0)) == pytest.approx(2 * 2 * math.e + 4 * 4 + 4 * 4)


def test_proposition4_first_horizon():
    horizons = 10.0 ** np.arange(4, 30)
    first = Th.proposition4_first_horizon(horizons, 4, 5.0, 100.0, 0.15)
    i = int(np.flatnonzero(horizons == first)[0])
    eps_prime = Th.proposition4_threshold(horizons, 4, 5.0, 100.0)
    assert eps_prime[i] < 0.15 and not np.any(eps_prime[:i] < 0.15)
    assert Th.proposition4_first_horizon([10.0, 100.0], 4, 5.0, 100.0, 0.15) == np.inf


def test_leading_term_exponents_at_log_delta():
    # log f = log 2 + log n + log S + 2 log log T + log(T) / 2: slopes 1/2 + 2 / ln T, 1, 1 ... at rho = 2 log T
    exps = Th.leading_term_exponents_at_log_delta(2000, 4.0, 5.0)
    assert exps["T"] == pytest.approx(0.5 + 2 / math.log(2000), abs=1e-5)
    assert exps["n"] == pytest.approx(1.0, abs=1e-5)
    assert exps["S"] == pytest.approx(1.0, abs=1e-5)


def test_remark3_checks_hold_on_the_reconstruction_and_catch_a_wrong_difference(monkeypatch):
    out = Th.remark3_checks(2000, 4, 5.0, 100.0, 2 / 0.15, 0.05, 0.15)
    assert out["max_relative_error"] <= 1e-12 and out["increasing_in_eps"] and out["decreasing_in_delta"]
    monkeypatch.setattr(Th, "remark3_regret_difference", lambda T, rho, eps: rho * np.sqrt(np.asarray(T)) * eps)
    assert Th.remark3_checks(2000, 4, 5.0, 100.0, 2 / 0.15, 0.05, 0.15)["max_relative_error"] > 1e-6


def test_violations_paper_draws_each_stored_curve():
    drawn = []
    paper = SimpleNamespace(
        plot=lambda ax, name, label: drawn.append((name, label)) or ax.plot([1, 2], [0, 1], label=label)
    )
    fig = figures.violations_paper(paper, {"cclb.v": "CCLB", "eps_cclb.v": "ε-CCLB"})
    assert drawn == [("cclb.v", "CCLB"), ("eps_cclb.v", "ε-CCLB")]
    assert fig.axes[0].get_xscale() == "log"
    plt.close(fig)
