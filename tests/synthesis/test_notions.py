"""The exact side of H6-H10 (:mod:`causalbandits_lib.synthesis.notions`) against independent oracles:
pgmpy's exact inference for the means, discrepancies and group values; the linear program's dual
(solved by scipy) and an enumeration of the policy polytope's vertices and edges for the average
constraint; loops written from the definitions for the other notions; and a hand-computed table.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import optimize

from causalbandits_lib.synthesis import family as F
from causalbandits_lib.synthesis import model as M
from causalbandits_lib.synthesis import notions as N

FAMILY = F.family(11, 24)
TESTABLE = [inst for inst in FAMILY if N.has_unfairness(inst)]
TESTABLE_NAMES = {inst.name for inst in TESTABLE}
MATCHED = {inst.name: N.matched(inst) for inst in TESTABLE}
RNG = np.random.default_rng(2026)


def random_policies(n: int) -> np.ndarray:
    return RNG.dirichlet(np.ones(M.N_ITEMS), size=(n, M.N_CONTEXTS))


def table(means, disc) -> SimpleNamespace:
    """A hand-made model: the four attributes the notions read."""
    means, disc = np.array(means, dtype=float), np.array(disc, dtype=float)
    p = np.full(M.N_CONTEXTS, 0.25)
    return SimpleNamespace(means=means, discrepancy=disc, context_probs=p, merit_means=p @ means)


# contexts (A, U) = (0,0), (0,1), (1,1), (1,2); twins 0 <-> 2 and 1 <-> 3 (CF_CONTEXT)
HAND = table(
    [
        [0.60, 0.40, 0.20, 0.20],
        [0.60, 0.40, 0.20, 0.20],
        [0.90, 0.40, 0.30, 0.20],
        [0.72, 0.40, 0.30, 0.20],
    ],
    [
        [0.30, 0.00, 0.10, 0.00],
        [0.12, 0.00, 0.10, 0.00],
        [0.30, 0.00, 0.10, 0.00],
        [0.12, 0.00, 0.10, 0.00],
    ],
)


def test_the_hand_table_is_a_model_of_the_structure():
    """Its discrepancies are |μ(twin) - μ| as in exact_discrepancies (so the hand case is one of
    the model's shapes, not an arbitrary table)."""
    assert np.allclose(HAND.discrepancy, np.abs(HAND.means[list(M.CF_CONTEXT)] - HAND.means), atol=1e-12)


# -- pgmpy oracles ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("inst", FAMILY[:2], ids=lambda i: i.name)
def test_value_discrepancy_and_group_values_match_pgmpy(inst):
    scm = M.build_scm(inst, *F.log_bias(inst))
    mu = M.pgmpy_means(scm)
    delta = np.abs(M.pgmpy_counterfactual_means(scm, 1) - M.pgmpy_counterfactual_means(scm, 0))
    joint = scm.query(["A", "U"])  # P(A, U): the contexts' probabilities from the network itself
    p = np.array([joint[a, u] for a, u in M.CONTEXTS])
    assert np.isclose(p.sum(), 1.0)
    for pi in [*random_policies(4), N.unconstrained_optimum(inst)]:
        assert abs(N.value(inst, pi) - sum(p[o] * pi[o] @ mu[o] for o in range(4))) < 1e-12
        assert abs(N.mean_discrepancy(inst, pi) - sum(p[o] * pi[o] @ delta[o] for o in range(4))) < 1e-12
        # per user group: Σ_u P(U=u | A=a) Σ_k π(k|a,u) P(Y=1 | do(I=k), A=a, U=u)
        out = N.group_outcomes(inst, pi)
        for a in (0, 1):
            pu = scm.query(["U"], evidence={"A": a})
            v_a = sum(pu[u] * pi[o] @ mu[o] for o, (a2, u) in enumerate(M.CONTEXTS) if a2 == a)
            d_a = sum(pu[u] * pi[o] @ delta[o] for o, (a2, u) in enumerate(M.CONTEXTS) if a2 == a)
            assert abs(out.value[a] - v_a) < 1e-12
            assert abs(out.discrepancy[a] - d_a) < 1e-12
    # a rule blind to the user: v_a = Σ_k π(k) P(Y=1 | do(I=k), A=a), one pgmpy query per item
    dist = RNG.dirichlet(np.ones(M.N_ITEMS))
    out = N.group_outcomes(inst, N.context_free(dist))
    for a in (0, 1):
        ref = sum(dist[k] * scm.query(["Y"], evidence={"A": a}, do={"I": k})[1] for k in range(M.N_ITEMS))
        assert abs(out.value[a] - ref) < 1e-12


# -- the hand-computed table -----------------------------------------------------------------------------


def test_hand_case_optimum_and_levels():
    pi0 = N.unconstrained_optimum(HAND)
    assert np.array_equal(pi0.argmax(axis=1), [0, 0, 0, 0])
    assert np.isclose(N.value(HAND, pi0), 0.705)  # (0.6 + 0.6 + 0.9 + 0.72) / 4
    assert np.isclose(N.mean_discrepancy(HAND, pi0), 0.21)  # (0.3 + 0.12 + 0.3 + 0.12) / 4
    assert N.d_min(HAND) == 0.0
    assert np.allclose(N.matched_levels(HAND), [0.0525, 0.105, 0.1575])


def test_hand_case_prices():
    m = N.matched(HAND)
    pd, avg, fi = (m.prices[n] for n in ("per-decision CF", "average CF constraint", "fair intervention"))
    # per-decision: τ = 0 gives item 1 everywhere (V 0.4, D 0); τ = 0.12 admits item 0 in contexts
    # 1 and 3 (V 0.53, D 0.06); τ = 0.3 is π⁰ (D 0.21, above every level)
    assert np.allclose([p.price for p in pd], [0.305, 0.175, 0.175])
    assert [p.threshold for p in pd] == [0.0, 0.12, 0.12]
    assert [p.same_until for p in pd] == [0.12, 0.3, 0.3]
    # average constraint: item 0 replaces item 1 in order of gain per unit of D: context 3 (8/3),
    # contexts 1 and 2 (5/3), context 0 (2/3); each context costs 0.25 Δ of D and gains 0.25 x gain
    assert np.allclose([p.price for p in avg], [0.1875, 0.1, 0.035], atol=1e-9)
    assert [p.threshold for p in avg] == list(m.levels)
    # fair intervention: ζ = (0.21, 0, 0.1, 0); at every level the best rule with ζ <= d is item 1
    assert np.allclose([p.price for p in fi], [0.305] * 3)
    assert [p.threshold for p in fi] == [0.0] * 3 and [p.same_until for p in fi] == [0.21] * 3


def test_hand_case_exposure():
    """D(π_c) = 0.21 π_c(0) + 0.1 π_c(2) rises with c from D(π_0) = 0.0775 (the uniform policy):
    the first level, 0.0525, is out of exposure's reach; above it the price is that of the largest
    c of the grid whose D is at most the level."""
    fr = N.frontier(HAND, "exposure")
    assert np.isclose(fr.D[0], 0.0775) and np.all(np.diff(fr.D) >= 0)  # = once π_c is item 0 alone
    m = N.matched(HAND)
    exp = m.prices["exposure"]
    assert not exp[0].reachable and exp[0].price == np.inf and exp[0].policy is None
    for p, d in zip(exp[1:], m.levels[1:]):
        c = max(c for c, dc in zip(fr.thresholds, fr.D) if dc <= d)
        w = np.exp(c * HAND.merit_means)
        assert p.threshold == c
        assert np.isclose(p.price, 0.705 - w @ HAND.merit_means / w.sum(), atol=1e-12)


def test_hand_case_group_outcomes():
    """τ = 0.12's per-decision optimum: contexts 0, 2 get item 1, contexts 1, 3 item 0."""
    pi = N.per_decision_policy(HAND, 0.12)
    assert np.array_equal(pi.argmax(axis=1), [1, 0, 1, 0])
    out = N.group_outcomes(HAND, pi)
    assert np.allclose(out.value, [0.5, 0.56])  # (0.4 + 0.6) / 2, (0.4 + 0.72) / 2
    assert np.allclose(out.regret, [0.6 - 0.5, 0.81 - 0.56])
    assert out.worse_served == 0 and np.isclose(out.extra_loss, 0.1 - 0.25)
    assert np.allclose(out.discrepancy, [0.06, 0.06])
    assert np.allclose(out.exposure, [0.5, 0.5]) and np.allclose(out.exposure_by_user, 0.5)
    assert out.dp == 0.0  # twins get the same item
    # EO: TPR_0(0) = 0.6 / 1.2, TPR_0(1) = 0.72 / 1.62; item 1 is shown to half of each group (1/2 both)
    assert np.isclose(out.eo, abs(0.5 - 0.72 / 1.62) / 4)
    # the policy giving A = 1 item 0 and A = 0 item 1: DP = 1, EO = (1 + 1 + 0 + 0) / 4
    split = N.deterministic([1, 1, 0, 0])
    assert np.isclose(N.demographic_parity(HAND, split), 1.0)
    assert np.isclose(N.equal_opportunity(HAND, split), 0.5)
    d = out.as_dict()
    assert d["value.A=1"] == out.value[1] and d["exposure.A=0.group=1"] == out.exposure_by_user[0, 1]


def test_ties_go_to_the_smaller_discrepancy_then_the_smaller_index():
    t = table(
        [[0.5, 0.5, 0.1, 0.1], [0.3, 0.3, 0.3, 0.1], [0.5, 0.5, 0.1, 0.1], [0.3, 0.3, 0.3, 0.1]],
        [[0.3, 0.1, 0.0, 0.0], [0.2, 0.2, 0.1, 0.0], [0.3, 0.1, 0.0, 0.0], [0.2, 0.2, 0.1, 0.0]],
    )
    assert np.array_equal(N.unconstrained_optimum(t).argmax(axis=1), [1, 2, 1, 2])
    # at τ = 0.05 context 0 allows items 2 and 3 (Δ 0, μ 0.1 both): the smaller index; context 1 item 3
    assert np.array_equal(N.per_decision_policy(t, 0.05).argmax(axis=1), [2, 3, 2, 3])
    # at τ < 0 no item is fair anywhere: the fallback takes the best of the least-Δ items, same ties
    assert np.array_equal(N.per_decision_policy(t, -1.0).argmax(axis=1), [2, 3, 2, 3])


# -- levels, reachability, prices on the family ------------------------------------------------------------


def test_levels_lie_strictly_between_d_min_and_the_optimums():
    assert len(TESTABLE) >= 15  # the checks below run on most of the family
    for inst in FAMILY:
        lo = N.d_min(inst)
        hi = N.mean_discrepancy(inst, N.unconstrained_optimum(inst))
        assert lo <= hi
        if inst.name in TESTABLE_NAMES:
            lv = N.matched_levels(inst)
            assert lo < lv[0] < lv[1] < lv[2] < hi
            assert MATCHED[inst.name].testable
        else:
            assert lo == hi


def brute_per_decision(m, d, tau):
    """Per context, by the definition: the best fair item (ties: smaller Δ, smaller index); the
    best of the least-Δ items where none is fair."""
    items = []
    for o in range(len(m)):
        ok = [k for k in range(M.N_ITEMS) if d[o, k] <= tau] or [k for k in range(M.N_ITEMS) if d[o, k] == d[o].min()]
        items.append(min(ok, key=lambda k: (-m[o, k], d[o, k], k)))
    return items


@pytest.mark.parametrize("inst", TESTABLE[:8], ids=lambda i: i.name)
def test_per_decision_price_against_a_brute_force_over_thresholds(inst):
    m, d, p = inst.means, inst.discrepancy, inst.context_probs
    v0 = p @ m.max(axis=1)
    vals = np.sort(d.ravel())
    # every Δ value, the midpoints between them, and a threshold above all: a finer grid than the
    # notion's, on which the optimum cannot change between consecutive Δ values
    grid = np.concatenate([vals, (vals[1:] + vals[:-1]) / 2, [vals[-1] + 1]])
    points = []
    for tau in grid:
        ks = brute_per_decision(m, d, tau)
        points.append((tau, p @ m[range(4), ks], p @ d[range(4), ks], ks))
    for pr, lvl in zip(MATCHED[inst.name].prices["per-decision CF"], MATCHED[inst.name].levels):
        best = min(v0 - v for _, v, dd, _ in points if dd <= lvl)
        assert abs(pr.price - best) < 1e-12
        ks = brute_per_decision(m, d, pr.threshold)
        assert np.array_equal(pr.policy.argmax(axis=1), ks) and pr.D <= lvl
        # the optimum is the same on [threshold, same_until) and differs at same_until
        for tau, _, _, ks2 in points:
            if pr.threshold <= tau < pr.same_until:
                assert ks2 == ks
        if np.isfinite(pr.same_until):
            assert brute_per_decision(m, d, pr.same_until) != ks
    # with no ties in μ (none in a continuous family) the library's F-UCB optimum is the same
    for tau in np.unique(d):
        assert np.array_equal(N.per_decision_policy(inst, tau).argmax(axis=1), M.per_decision_optimum(inst, tau))


def dual_lp(m, d, p, level) -> float:
    """max_π V(π) s.t. D(π) <= level, by its dual: min_{λ >= 0, v} level λ + Σ_o p_o v_o with
    v_o >= μ_k(o) - λ Δ_k(o) for every (o, k)."""
    n_o, n_k = m.shape
    c = np.concatenate([[level], p])
    a_ub = np.zeros((n_o * n_k, 1 + n_o))
    b_ub = np.zeros(n_o * n_k)
    for row, (o, k) in enumerate(itertools.product(range(n_o), range(n_k))):
        a_ub[row, 0], a_ub[row, 1 + o], b_ub[row] = -d[o, k], -1.0, -m[o, k]
    res = optimize.linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=[(0, None)] + [(None, None)] * n_o, method="highs-ipm")
    assert res.success
    return float(res.fun)


def enumerated_lp(m, d, p, level) -> float:
    """The same optimum by enumeration: with one constraint besides the simplices, an optimum is a
    deterministic policy or a point where the constraint's hyperplane cuts an edge of the product
    of simplices (two deterministic policies differing in one context)."""
    det = np.array(list(itertools.product(range(4), repeat=4)))  # (256, 4)
    rows = np.arange(4)
    v = (p * m[rows, det]).sum(axis=1)
    dd = (p * d[rows, det]).sum(axis=1)
    best = v[dd <= level].max(initial=-np.inf)
    for o in range(4):
        for k in range(4):
            v2 = v + p[o] * (m[o, k] - m[o, det[:, o]])
            d2 = dd + p[o] * (d[o, k] - d[o, det[:, o]])
            cross = (dd - level) * (d2 - level) < 0
            t = (level - dd[cross]) / (d2[cross] - dd[cross])
            best = max(best, (v[cross] + t * (v2[cross] - v[cross])).max(initial=-np.inf))
    return float(best)


@pytest.mark.parametrize("inst", TESTABLE[:8], ids=lambda i: i.name)
def test_average_constraint_price_against_its_dual_and_an_enumeration(inst):
    m, d, p = inst.means, inst.discrepancy, inst.context_probs
    mt = MATCHED[inst.name]
    for pr, lvl in zip(mt.prices["average CF constraint"], mt.levels):
        assert abs((mt.v_pi0 - pr.price) - dual_lp(m, d, p, lvl)) < 1e-7
        assert abs((mt.v_pi0 - pr.price) - enumerated_lp(m, d, p, lvl)) < 1e-7
        assert pr.D <= lvl + 1e-9 and np.allclose(pr.policy.sum(axis=1), 1.0) and pr.policy.min() >= -1e-9


@pytest.mark.parametrize("inst", TESTABLE[:8], ids=lambda i: i.name)
def test_intervention_and_exposure_prices_against_loops(inst):
    p, m, d = inst.context_probs, inst.means, inst.discrepancy
    mt = MATCHED[inst.name]
    merit = p @ m
    zeta = p @ d
    cs = [0.0] + [10 ** (-1 + 4 * i / 199) for i in range(200)]
    for j, lvl in enumerate(mt.levels):
        fair = [k for k in range(4) if zeta[k] <= lvl]
        fi = mt.prices["fair intervention"][j]
        if fair:
            assert abs(fi.price - (mt.v_pi0 - max(merit[k] for k in fair))) < 1e-12
        else:
            assert fi.price == np.inf
        cands = []
        for c in cs:
            w = np.exp(c * (merit - merit.max()))
            pi = w / w.sum()
            if pi @ zeta <= lvl:
                cands.append((mt.v_pi0 - pi @ merit, c))
        ex = mt.prices["exposure"][j]
        if cands:
            # the least price; prices within 1e-12 of it (π_c one item to machine precision) are one
            least = min(price for price, _ in cands)
            price, c = min((c, price) for price, c in cands if price <= least + N.PRICE_TIE)[::-1]
            assert abs(ex.price - price) < 1e-12 and np.isclose(ex.threshold, c, rtol=1e-12)
        else:
            assert ex.price == np.inf and np.isnan(ex.threshold)


def test_prices_are_non_negative_and_non_increasing_in_the_level():
    """P_N(d) is a minimum over a set of thresholds that grows with d (the average constraint's LP
    over a feasible set that grows with d): it cannot rise with d, and no policy beats π⁰."""
    for inst in TESTABLE[:6]:
        lo = N.d_min(inst)
        hi = N.mean_discrepancy(inst, N.unconstrained_optimum(inst))
        grid = np.linspace(lo, 1.1 * hi, 25)
        fronts = {n: N.frontier(inst, n) for n in N.NOTIONS if n != "average CF constraint"}
        for notion in N.NOTIONS:
            ps = np.array([N.price(inst, notion, d, front=fronts.get(notion)).price for d in grid])
            assert np.all(ps >= -1e-9)
            assert np.all(ps[1:] <= ps[:-1] + 1e-9), notion  # inf <= inf holds
        assert N.price(inst, "per-decision CF", lo).reachable  # the per-decision notion reaches D_min
        assert N.price(inst, "per-decision CF", hi).price == 0.0
        assert all(not N.price(inst, n, lo - 1e-6).reachable for n in N.NOTIONS)


def test_the_average_constraint_is_the_cheapest_notion_at_every_level():
    """Property: every other notion's matched optimum satisfies D <= d, so it is a feasible point
    of the average constraint's LP at τ = d, whose optimum is at least as good."""
    n_below = 0
    for mt in MATCHED.values():
        tab = mt.table()
        avg = tab[N.NOTIONS.index("average CF constraint")]
        assert np.all(avg <= tab + 1e-9)
        n_below += int(np.sum(avg < tab[0] - 1e-6))
    assert n_below > 0  # strictly cheaper somewhere: the comparison is not between equal numbers


def test_matched_thresholds_attain_the_prices():
    for mt in MATCHED.values():
        for notion in N.NOTIONS:
            for pr, lvl in zip(mt.prices[notion], mt.levels):
                if not pr.reachable:
                    continue
                assert pr.D <= lvl + (1e-9 if notion == "average CF constraint" else 0.0)
                assert pr.price == mt.v_pi0 - pr.V


# -- who is served -------------------------------------------------------------------------------------


def test_group_blind_policies_have_no_dp_or_eo_gap_and_the_optimum_has_one():
    gaps = []
    for inst in FAMILY:
        for dist in RNG.dirichlet(np.ones(M.N_ITEMS), size=3):
            out = N.group_outcomes(inst, N.context_free(dist))
            assert abs(out.dp) < 1e-12 and abs(out.eo) < 1e-12
        pi0 = N.unconstrained_optimum(inst)
        gaps.append((N.demographic_parity(inst, pi0), N.equal_opportunity(inst, pi0)))
    gaps = np.array(gaps)
    assert np.all((0 <= gaps) & (gaps <= 1))
    assert np.mean(gaps[:, 0] > 0) > 0.5 and np.mean(gaps[:, 1] > 0) > 0.5


def test_twin_symmetric_policies_have_no_dp_gap():
    """The twin map pairs each A = 0 context with an A = 1 context of the same probability within its
    group, so a policy that treats a user and their twin alike has DP = 0 (H10's reasoning)."""
    twin = list(M.CF_CONTEXT)
    for inst in FAMILY[:5]:
        for pi in random_policies(3):
            sym = (pi + pi[twin]) / 2
            assert N.demographic_parity(inst, sym) < 1e-12
            assert N.demographic_parity(inst, pi) > 0


def test_group_outcomes_are_consistent():
    for inst in FAMILY[:8]:
        pi0 = N.unconstrained_optimum(inst)
        for pi in [*random_policies(3), pi0]:
            out = N.group_outcomes(inst, pi)
            # P(A = a) = 1/2 in the model: the groups' means average to the whole's
            assert np.isclose(out.value.mean(), N.value(inst, pi))
            assert np.isclose(out.discrepancy.mean(), N.mean_discrepancy(inst, pi))
            assert np.all(out.regret >= -1e-15)  # π⁰ is the best item of every context
            assert np.isclose(out.exposure.sum(), 1.0) and np.allclose(out.exposure_by_user.sum(axis=1), 1.0)
            v0 = N.group_outcomes(inst, pi0).value
            assert out.worse_served == int(np.argmin(v0))
        assert np.all(N.group_outcomes(inst, pi0).regret == 0)


def test_unfair_rate_of_a_deterministic_policy():
    inst = FAMILY[0]
    pi0 = N.unconstrained_optimum(inst)
    k0 = pi0.argmax(axis=1)
    for tau in np.unique(inst.discrepancy):
        ref = np.mean([inst.discrepancy[o, k0[o]] > tau for o in range(4)])
        assert N.unfair_rate(inst, pi0, tau) == ref


def test_unknown_notion_and_missing_thresholds_are_rejected():
    with pytest.raises(ValueError, match="unknown notion"):
        N.frontier(FAMILY[0], "demographic parity")
    with pytest.raises(ValueError, match="τ = d"):
        N.frontier(FAMILY[0], "average CF constraint")
    fr = N.frontier(FAMILY[0], "average CF constraint", [N.d_min(FAMILY[0]) + 0.01])
    assert fr.D[0] <= N.d_min(FAMILY[0]) + 0.01 + 1e-9
