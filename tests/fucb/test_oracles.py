"""Oracles written independently of the implementation (issue 29, ``make mutants``).

Each test recomputes what the paper prescribes on a tiny instance with a known answer: the
toy's tables are typed here from its definition (``P(Z = 1 | S, A)`` and ``R = Z + σ ε``), the
formulas of Eq. 6, 10 and 12 and of Corollary 1 are written out by hand, and F-UCB's trajectory is
replayed from what the simulation recorded (the users, the arms, ``Z`` and the rewards), never from
the policy's own arrays. The simulations run on both backends, so a bug put into the numpy class
and into the compiled kernel alike (which the kernel-against-numpy conformance checks cannot see)
is seen here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from causalbandits_lib.core.runner import simulate
from causalbandits_lib.fucb import theory
from causalbandits_lib.fucb.algorithms import FairUCB, IdentifiedDiscrepancy, cell_radius
from causalbandits_lib.fucb.instances.toy import fair_toy

#: The toy's P(Z = 1 | S = s, A = a), typed from its definition (arm 0 pays 0.3 to S = 0 and 1.0
#: to S = 1, arm 1 pays 0.5 to both); the reward is Z plus noise, so E[R | Z = z] = z.
PZ1 = np.array([[0.3, 0.5], [1.0, 0.5]])
BACKENDS = ("numpy", "compiled")


def _p_z(s: int, a: int) -> np.ndarray:
    """``(P(Z = 0 | s, a), P(Z = 1 | s, a))``."""
    return np.array([1.0 - PZ1[s, a], PZ1[s, a]])


def test_eq6_and_eq12_radius_divides_by_one_or_the_count():
    """Oracle: Eq. 6 and Eq. 12 of the paper, ``sqrt(c log(1/δ) / (1 ∨ N))`` with ``1 ∨ N = max(1, N)``,
    evaluated by hand with ``math`` for counts 0, 1, 4 and 9 (a cell never seen counts as one
    observation, a cell seen N >= 1 times as N)."""
    counts = np.array([[0.0, 1.0, 4.0, 9.0]])
    got = cell_radius(counts, log_inv=3.0, factor=2.0)
    np.testing.assert_allclose(got, [[math.sqrt(6.0), math.sqrt(6.0), math.sqrt(6.0 / 4), math.sqrt(6.0 / 9)]])
    got8 = cell_radius(counts, log_inv=0.5, factor=8.0)
    np.testing.assert_allclose(got8, [[2.0, 2.0, 1.0, 2.0 / 3.0]])


@pytest.mark.parametrize("s_plus, s_minus", [(1, 0), (0, 1)])
def test_eq10_discrepancy_of_the_toy_by_hand(s_plus, s_minus):
    """Oracle: Eq. 10, ``Δ̂_a = |Σ_z μ_z (P(z | s+, a) − P(z | s−, a))|``, on the toy's exact cell
    means ``μ_z = z``: arm 0 has ``|1.0 − 0.3| = 0.7`` and arm 1 has 0, whichever value of S is
    called s+ (the definition is an absolute value, Definition 3 and Eq. 10). The radius of Eq. 12
    as printed is ``Σ_z P(z | x_t, a) r_z``, here with hand-picked cell radii."""
    env, dec = fair_toy()
    est = IdentifiedDiscrepancy(dec, env.counterfactual_contexts("S"), s_plus=s_plus, s_minus=s_minus)
    means = np.array([[0.0, 1.0], [0.0, 1.0]])  # two runs, cells Z = 0, 1
    rad8 = np.array([[0.2, 0.4], [0.2, 0.4]])
    context = np.array([0, 1])  # S = 0 in run 0, S = 1 in run 1
    delta_hat, radius_paper, _ = est.estimate(means, rad8, context)
    np.testing.assert_allclose(delta_hat, [[0.7, 0.0], [0.7, 0.0]], atol=1e-12)
    expected = [[_p_z(s, a) @ [0.2, 0.4] for a in (0, 1)] for s in (0, 1)]
    np.testing.assert_allclose(radius_paper, expected, atol=1e-12)


def _replay_fucb(S, A, Z, rewards, tau, s_plus=1, s_minus=0, delta_power=2.0):
    """F-UCB (Algorithm 2 with Eq. 5-6, 10 and 12, ties to the lowest arm, the fallback to the arm of
    smallest UCB_Δ) recomputed along one recorded run of the toy. Returns, per round, the
    ``UCB_Δ`` of the arm that was played and the arm the paper's rule picks (-1 where two
    candidates are closer than rounding can separate)."""
    counts, sums = np.zeros(2), np.zeros(2)
    own, rule = [], []
    for t in range(len(A)):
        log_inv = delta_power * math.log(t + 1)
        mu = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        r2 = np.sqrt(2 * log_inv / np.maximum(counts, 1))
        r8 = np.sqrt(8 * log_inv / np.maximum(counts, 1))
        s = int(S[t])
        ucb = np.array([_p_z(s, a) @ (mu + r2) for a in (0, 1)])
        ucb_d = np.array([abs(mu @ (_p_z(s_plus, a) - _p_z(s_minus, a))) + _p_z(s, a) @ r8 for a in (0, 1)])
        own.append(ucb_d[int(A[t])])
        fair = ucb_d <= tau
        close = np.any(np.abs(ucb_d - tau) < 1e-9) or abs(ucb[0] - ucb[1]) < 1e-9
        if fair.any():
            pick = int(np.argmax(np.where(fair, ucb, -np.inf)))
        else:
            close = close or abs(ucb_d[0] - ucb_d[1]) < 1e-9
            pick = int(np.argmin(ucb_d))
        rule.append(-1 if close else pick)
        z = int(Z[t])
        counts[z] += 1
        sums[z] += rewards[t]
    return np.array(own), np.array(rule)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fucb_trajectory_follows_eq10_and_eq12_by_hand(backend):
    """Oracle: F-UCB replayed by hand (``_replay_fucb``) from the toy's typed tables and the
    recorded users, arms, Z and rewards. At every round the policy's own ``UCB_Δ`` of the arm it
    played equals Eq. 10 + Eq. 12 (cell means of the past rewards per value of Z, radii
    ``sqrt(8 · 2 ln t / (1 ∨ N_z))``), and the arm it played is the one Algorithm 2 picks."""
    env, dec = fair_toy()
    est = IdentifiedDiscrepancy(dec, env.counterfactual_contexts("S"))
    policy = FairUCB(dec, est, tau=0.3)
    res = simulate(env, policy, 300, 3, n_runs=2, metrics=("S", "A", "Z", "reward", "own_ucb_delta"), backend=backend)
    assert res.info["backend"] == backend
    for r in range(2):
        own, rule = _replay_fucb(res["S"][r], res["A"][r], res["Z"][r], res["reward"][r], tau=0.3)
        np.testing.assert_allclose(res["own_ucb_delta"][r], own, rtol=1e-10, atol=1e-12)
        decided = rule >= 0
        assert decided.mean() > 0.9
        np.testing.assert_array_equal(res["A"][r][decided], rule[decided])


@pytest.mark.parametrize("backend", BACKENDS)
def test_fucb_excludes_an_arm_unfair_in_either_direction(backend):
    """Oracle: Definition 3 (τ-counterfactual fairness is ``|Δ| <= τ``) on the toy, where arm 0 has
    ``|Δ| = 0.7`` and arm 1 has ``Δ = 0``. Calling S = 0 the value s+ turns the sign of
    ``μ_{s+} − μ_{s−}`` but not its absolute value, so F-UCB at τ = 0.3 must, as with the other
    labelling, never play arm 0 once it has data (round 1 has radius 0 and no estimate). With the
    propagated radius (weights ``|P(z | s+, a) − P(z | s−, a)|``, zero for arm 1) arm 1 is certified
    from the start, so no round falls back."""
    env, dec = fair_toy()
    est = IdentifiedDiscrepancy(dec, env.counterfactual_contexts("S"), s_plus=0, s_minus=1)
    res = simulate(
        env,
        FairUCB(dec, est, tau=0.3, fair_radius="diff"),
        1000,
        0,
        n_runs=3,
        metrics=("A", "fallback"),
        backend=backend,
    )
    assert res.info["backend"] == backend
    assert np.all(res["A"][:, 1:] == 1) and np.all(res["fallback"] == 0)


@pytest.mark.parametrize("n_cells, T", [(12, 5000), (4, 100), (36, 20000)])
def test_corollary1_probability_by_hand(n_cells, T):
    """Oracle: Corollary 1 sets δ = 1/T² in Theorem 1, so log(1/δ) = 2 log T and 2δT|W| = 2|W|/T.
    The printed probability is ``1 − 2|W|/T − exp(−|W| log²T / 64)``; the one Theorem 1's proof
    gives, ``1 − 2δT|W| − exp(−|W| log²T / (64 log(1/δ)))``, becomes
    ``1 − 2|W|/T − exp(−|W| log T / 128)``. Both are written out here with ``math``."""
    log_t = math.log(T)
    printed = 1 - 2 * n_cells / T - math.exp(-n_cells * log_t**2 / 64)
    proof = 1 - 2 * n_cells / T - math.exp(-n_cells * log_t**2 / (64 * 2 * log_t))
    assert float(theory.corollary1_probability(n_cells, T)) == pytest.approx(printed, rel=1e-12)
    assert float(theory.corollary1_probability(n_cells, T, "corrected")) == pytest.approx(proof, rel=1e-12)
