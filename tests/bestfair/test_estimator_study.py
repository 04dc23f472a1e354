"""The measurements of notebook bestfair/01 (estimator_study), each against a tiny hand-made input
with a hand-computed expectation."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits_lib.bestfair import estimator_study as study
from causalbandits_lib.bestfair.theory import theorem7_interval


def test_truths_are_the_three_exact_values_in_estimate_order():
    p = SimpleNamespace(mu=np.array([0.1]), zeta=np.array([0.2]), zeta_reverse=np.array([-0.2]))
    t = study.truths(p)
    assert list(t) == ["outcome", "fairness", "fairness_reverse"]
    assert [float(v[0]) for v in t.values()] == [0.1, 0.2, -0.2]


def test_counterfactual_gap_error_compares_the_query_with_the_conditional_difference():
    # S -> X -> V -> Y <- E with two contexts: E[Y | S] = Σ_x P(x | S) (0.99 q_x + 0.01 (1 − q_x))
    ps, psp = np.array([0.8, 0.2]), np.array([0.3, 0.7])
    q = np.array([[0.9, 0.2], [0.5, 0.5]])
    ey = lambda px, qk: float(px @ (0.99 * qk + 0.01 * (1 - qk)))  # noqa: E731
    zeta = np.array([ey(ps, q[k]) - ey(psp, q[k]) for k in range(2)])  # arm 1: 0.98*0.35 = 0.343; arm 2: 0
    assert zeta[0] == pytest.approx(0.98 * 0.5 * 0.7)
    exact = SimpleNamespace(p_x_s=ps, p_x_sp=psp, q=q, problem=SimpleNamespace(zeta=zeta))
    assert study.counterfactual_gap_error(exact, n_arms=2) < 1e-12
    off = SimpleNamespace(p_x_s=ps, p_x_sp=psp, q=q, problem=SimpleNamespace(zeta=zeta + [0.0, 0.001]))
    assert study.counterfactual_gap_error(off, n_arms=2) == pytest.approx(0.001)


class _Estimator:
    """Expectations equal to the truth plus a known offset per estimate (and per phase)."""

    def __init__(self, problem, offsets):
        self.problem, self.offsets = problem, offsets

    def expected(self, alloc, phase, which):
        truth = study.truths(self.problem)[which]
        return truth + self.offsets[which] * (1 if phase is None else phase)


_P = SimpleNamespace(mu=np.array([0.2, 0.4]), zeta=np.array([0.01, -0.02]), zeta_reverse=np.array([-0.01, 0.02]))


def test_importance_sampling_error_is_the_largest_deviation_over_estimates_and_arms():
    est = _Estimator(_P, {"outcome": 1e-3, "fairness": -4e-3, "fairness_reverse": 2e-3})
    assert study.importance_sampling_error(est, np.ones((3, 2))) == pytest.approx(4e-3)


def test_clipped_bias_is_expectation_minus_truth_by_phase():
    est = _Estimator(_P, {"outcome": -1e-3, "fairness": 0.0, "fairness_reverse": 2e-3})
    bias = study.clipped_bias(est, np.ones((3, 2)), [1, 3])
    assert bias["outcome"].shape == (2, 2)
    assert bias["outcome"][:, 0] == pytest.approx([-1e-3, -3e-3])
    assert bias["fairness_reverse"][1] == pytest.approx([6e-3, 6e-3])


def _two_arm_problem():
    """Two arms over two cells: natural cell probabilities (0.5, 0.5) and (0.25, 0.75)."""
    p = np.array([[0.5, 0.5], [0.25, 0.75]])
    ratios = p[:, None, :] / p[None, :, :]  # (k, j, c) = P_k(c) / P_j(c)
    M = np.log(np.einsum("kc,kjc->kj", p, np.exp(ratios)))  # log E_k[e^(P_k/P_j)]
    cell_probs = np.stack([p, p, p])
    D = np.array([[0.8, 1.2], [1.0, 0.9]])
    return SimpleNamespace(
        n_arms=2, M=M, D=D, D_reverse=np.array([[0.75, 2.0], [3.0, 4.0]]), ratios=ratios, cell_probs=cell_probs
    )


def test_divergence_facts_measure_the_ranges_and_eq20():
    p = _two_arm_problem()
    f = study.divergence_facts(p)
    assert f["M_diag_max_abs_dev"] < 1e-15  # M_kk = log(e) = 1
    # M_10 = log(0.25 e^0.5 + 0.75 e^1.5), M_01 = log(0.5 e^2 + 0.5 e^(2/3))
    assert f["M_min"] == pytest.approx(
        min(math.log(0.25 * math.exp(0.5) + 0.75 * math.exp(1.5)), math.log(0.5 * math.exp(2) + 0.5 * math.exp(2 / 3)))
    )
    assert f["D_min"] == 0.75
    assert f["eq20_max_abs_dev"] < 1e-12  # Eq. 20 holds for the M of the definition
    p.M = p.M + np.array([[0.0, 0.01], [0.0, 0.0]])
    assert study.divergence_facts(p)["eq20_max_abs_dev"] == pytest.approx(0.01)


def test_dropped_probability_sums_the_cheap_arms_cells_above_the_clip_level():
    # arm 2's ratio to arm 1 is 10 in cell 1 (probability 0.5 under arm 1) and M_21 = 2: the clip
    # level 2 l M_21 = 4 l drops that cell in phases 1 and 2 (4, 8 < 10), not in phase 3 (12)
    ratios = np.ones((2, 2, 2))
    ratios[1, 0] = [10.0, 0.5]
    p = SimpleNamespace(
        ratios=ratios,
        M=np.array([[1.0, 1.0], [2.0, 1.0]]),
        D=np.ones((2, 2)),
        D_reverse=np.ones((2, 2)),
        rho=np.array([1.0, 1.0]),  # P_s/P_s' = 1: every fairness weight is 0, nothing is dropped
        rho_reverse=np.array([1.0, 1.0]),
        cell_probs=np.full((3, 2, 2), 0.5),
    )
    out = study.dropped_probability(p, [1, 2, 3])
    assert out["outcome"].tolist() == [0.5, 0.5, 0.0]
    assert out["fairness"].tolist() == [0.0, 0.0, 0.0] and out["fairness_reverse"].tolist() == [0.0, 0.0, 0.0]


def test_spread_rank_correlation_ranks_the_arms_other_than_the_cheap_one():
    p = SimpleNamespace(n_arms=4, M=np.array([[1.0], [3.0], [2.0], [5.0]]))
    # arms 2-4: M ranks (1, 0, 2), sd ranks (0, 2, 1): covariance −1, variances 2 -> −0.5
    assert study.spread_rank_correlation(p, np.array([9.0, 0.1, 0.3, 0.2])) == pytest.approx(-0.5)


def test_theorem7_coverage_counts_replicates_inside_the_interval():
    p = SimpleNamespace(
        mu=np.array([0.5, 0.5]),
        zeta=np.zeros(2),
        zeta_reverse=np.zeros(2),
        M=np.ones((2, 2)),
        D=np.ones((2, 2)),
        D_reverse=np.ones((2, 2)),
    )
    low, high, _ = theorem7_interval(p.mu, np.ones(2), 10_000, 1, 0.1, "outcome")

    class Est:
        problem = p

        def estimate(self, counts, phase, which):  # four replicates: two inside, two far outside
            inside = study.truths(p)[which][0]
            return np.array([[inside, inside], [inside, 9.0], [9.0, 9.0], [inside, 9.0]])

    cov = study.theorem7_coverage(Est(), None, 10_000, 0.1, phases=[1])
    assert set(cov) == {(1, "outcome"), (1, "fairness"), (1, "fairness_reverse")}
    assert cov[(1, "outcome")][0].tolist() == [0.75, 0.25] and low[0] < 0.5 < high[0]


def test_informative_coverage_keeps_informative_cases_in_order():
    cov = {
        (1, "outcome"): (np.array([0.9, 0.8]), np.array([False, True])),
        (2, "outcome"): (np.array([0.7, 0.6]), np.array([True, True])),
    }
    assert study.informative_coverage(cov).tolist() == [0.8, 0.7, 0.6]
    assert study.informative_coverage({(1, "outcome"): (np.array([0.9]), np.array([False]))}).size == 0
