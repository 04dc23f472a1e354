"""The pcb chapter: Table 2's model, the offline data, the bounds and the bandits."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from causalbandits_lib.core.environments import BernoulliBandit, ContextualBernoulliBandit
from causalbandits_lib.core.graphs import GraphError
from causalbandits_lib.core.runner import simulate, simulate_loop
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.pcb import bandits as B
from causalbandits_lib.pcb import estimators as E
from causalbandits_lib.pcb import identification as I
from causalbandits_lib.pcb import model as M
from causalbandits_lib.pcb import theory as Th


@pytest.fixture(scope="module")
def table2():
    return M.table2_model()


@pytest.fixture(scope="module")
def truth(table2):
    return M.conditional_causal_effects(table2)


# ---------------------------------------------------------------------------- the model
def test_graph_is_rebuilt_from_table2_parent_sets(table2):
    expected = {
        ("U1", "X1"),
        ("U2", "X2"),
        ("X1", "I1"),
        ("C1", "I1"),
        ("C1", "Y"),
        ("U1", "Y"),
        ("X2", "Y"),
        ("I1", "Y"),
        ("I1", "S"),
    }
    assert set(table2.graph.edges) == expected
    assert table2.query(["S"])[1] == pytest.approx(0.47625)


def test_effects_closed_form_and_pgmpy_against_truncated_factorisation(table2, truth):
    # closed form of E[Y | do(x1, x2), u1, u2] for Table 2 (derived by hand): 61/240 + u1/6 + x2/6 + x1/24
    closed = np.array([[61 / 240 + (c >> 1) / 6 + (a & 1) / 6 + (a >> 1) / 24 for c in range(4)] for a in range(4)])
    np.testing.assert_allclose(truth, closed, atol=1e-12)
    np.testing.assert_allclose(M.truncated_factorisation_effects(table2), truth, atol=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_do_queries_match_truncated_factorisation_on_random_tables(seed):
    """pgmpy's interventional query and our einsum of the truncated factorisation agree on any
    model with the paper's graph (random tables)."""
    rng = np.random.default_rng(seed)
    m = M.fig2_model(
        *rng.random(3), rng.random(2), rng.random(2), rng.random((2, 2)), rng.random((2, 2, 2, 2)), rng.random(2)
    )
    np.testing.assert_allclose(M.conditional_causal_effects(m), M.truncated_factorisation_effects(m), atol=1e-10)
    # and the truncated factorisation is not the observational conditional (it must be able to fail)
    joint = M.truncated_factorisation(m, {"X1": 1, "X2": 0})
    assert joint.sum() == pytest.approx(1.0)
    assert np.all(joint.sum(axis=tuple(i for i in range(8) if i not in (3, 4)))[0, :] == 0)  # X1 forced to 1


def test_model_rejects_bad_tables():
    with pytest.raises(ValueError, match="p_i1 has shape"):
        M.fig2_model(0.4, 0.6, 0.5, [0.2, 0.7], [0.2, 0.7], [0.3, 0.5], np.full((2, 2, 2, 2), 0.5), [0.1, 0.8])
    with pytest.raises(ValueError, match="p_s"):
        M.fig2_model(
            0.4, 0.6, 0.5, [0.2, 0.7], [0.2, 0.7], np.full((2, 2), 0.5), np.full((2, 2, 2, 2), 0.5), [0.1, 1.8]
        )


def test_table1_index_order():
    assert M.table1_index(0, 0) == 1 and M.table1_index(3, 3) == 16
    assert [M.table1_index(a, c) for a in range(4) for c in range(4)] == list(range(1, 17))
    with pytest.raises(ValueError, match="arm 4"):
        M.table1_index(4, 0)


# ---------------------------------------------------------------------------- the generator
def test_generator_frequencies_converge_to_the_exact_tables(table2):
    oc = M.offline_count_tables(table2, 20_000, 20, seed=3)
    full = oc.full.sum(axis=0).astype(float)
    n = full.sum()
    exact = table2.joint_table()
    z = (full / n - exact) / np.sqrt(np.maximum(exact * (1 - exact), 1e-300) / n)
    assert np.abs(z).max() < 5.0
    sel = oc.selected.sum(axis=0).astype(float)
    exact_sel = M.selected_observed_distribution(table2)
    z = (sel / sel.sum() - exact_sel) / np.sqrt(exact_sel * (1 - exact_sel) / sel.sum())
    assert np.abs(z).max() < 5.0
    # selected share: P(S=1) = 0.47625
    assert oc.n_selected.sum() / (20 * 20_000) == pytest.approx(0.47625, abs=5 * np.sqrt(0.25 / 400_000))


def test_generator_hides_the_confounder_and_the_unselected(table2):
    rows = M.draw_offline_rows(table2, 5000, np.random.default_rng(0))
    log = M.selected_rows(rows)
    assert set(log) == set(M.OBSERVED)
    assert len(log["Y"]) == int((rows["S"] == 1).sum()) < 5000


def test_offline_data_sets_do_not_depend_on_batching(table2):
    a = M.offline_count_tables(table2, 3000, 5, seed=11, batch=2)
    b = M.offline_count_tables(table2, 3000, 5, seed=11, batch=5)
    c = M.offline_count_tables(table2, 3000, 2, seed=11, first=3)
    np.testing.assert_array_equal(a.full, b.full)
    np.testing.assert_array_equal(a.full[3:], c.full)
    with pytest.raises(ValueError, match="n_draws=0"):
        M.offline_count_tables(table2, 0, 1, seed=0)


# ---------------------------------------------------------------------------- identification
def test_latent_projection_and_paper_route(table2):
    adm = I.latent_projection(table2.graph, M.LATENT)
    assert adm.bidirected == frozenset({frozenset({"I1", "Y"})})
    route = I.c_component_route(adm, M.ARM, "Y", M.CONTEXT, "S")
    assert route.d == frozenset({"Y", "I1", "U1", "U2"})  # the paper writes {Y, U1, U2}
    verdicts = dict(zip(route.components, route.recoverable))
    assert verdicts == {frozenset({"Y", "I1"}): False, frozenset({"U1"}): False, frozenset({"U2"}): True}
    assert I.find_rsi(table2.graph, M.LATENT, M.ARM, "Y", M.CONTEXT, "S") == []
    causal = adm.subgraph(adm.nodes - {"S"})
    assert I.is_identifiable({"Y", "U1", "U2"}, {"X1", "X2"}, causal)
    assert not I.is_identifiable({"Y", "U1", "U2"}, {"X1", "X2", "I1"}, causal)


@pytest.mark.parametrize(
    "edges, latent, y, x, expected",
    [
        ([("X", "Y"), ("U", "X"), ("U", "Y")], ["U"], {"Y"}, {"X"}, False),  # bow
        ([("Z", "X"), ("X", "Y"), ("Z", "Y")], [], {"Y"}, {"X"}, True),  # observed confounder
        ([("X", "M"), ("M", "Y"), ("U", "X"), ("U", "Y")], ["U"], {"Y"}, {"X"}, True),  # front door
        ([("X", "M"), ("M", "Y"), ("U", "X"), ("U", "M")], ["U"], {"Y"}, {"X"}, False),  # confounded mediator
        ([("X", "Y"), ("U", "Z"), ("U", "Y"), ("Z", "X")], ["U"], {"Y"}, {"X"}, True),  # back door through Z
    ],
)
def test_identifiability_textbook_cases(edges, latent, y, x, expected):
    adm = I.latent_projection(nx.DiGraph(edges), latent)
    assert I.is_identifiable(y, x, adm) is expected


def test_rc_star_on_small_selection_graphs():
    # X -> Y, Y -> S: Q[Y] is not recoverable (selection on the outcome)
    adm = I.latent_projection(nx.DiGraph([("X", "Y"), ("Y", "S")]), [])
    assert not I.rc_star({"Y"}, adm, "S")
    # X -> Y, X -> S: Y's component has no ancestor of S -> recoverable
    adm = I.latent_projection(nx.DiGraph([("X", "Y"), ("X", "S")]), [])
    assert I.rc_star({"Y"}, adm, "S")
    with pytest.raises(GraphError, match="selection node 'T'"):
        I.rc_star({"Y"}, adm, "T")


# ---------------------------------------------------------------------------- estimators
def test_population_bounds(table2, truth):
    """With the exact selected distribution as 'counts', the sound bound contains every truth,
    CP has the known bias, and the eq. (3) route does not contain them."""
    pop = M.selected_observed_distribution(table2) * 1e9
    lo, hi = E.conditioning_bounds(pop)
    assert np.all(E.contains(lo, hi, truth))
    cp_bias = E.cp_estimate(pop) - truth
    np.testing.assert_allclose(cp_bias[:2], 0.09, atol=1e-4)  # x1 = 0
    np.testing.assert_allclose(cp_bias[2:], 0.0575, atol=1e-4)  # x1 = 1
    lw, uw = E.substitute_bounds_eq3(pop, M.context_probabilities(table2))
    assert E.contains(lw, uw, truth).sum() == 3
    assert E.n_eliminated(hi, truth) == 8


def test_counterexample_breaks_the_do_substitution_but_not_conditioning():
    m = M.exchange_counterexample_model()
    mu = M.conditional_causal_effects(m)
    do_w = M.substitute_intervention_effects(m)
    assert not np.any((do_w.min(-1) <= mu) & (mu <= do_w.max(-1)))
    lo, hi = E.conditioning_bounds(M.selected_observed_distribution(m) * 1e9)
    assert np.all(E.contains(lo, hi, mu))


def test_estimators_on_a_hand_table():
    counts = np.zeros((2,) * 6)
    # arm 00, context 00: i1=0 -> 1 of 4 rewarded; i1=1 -> 3 of 4 rewarded
    counts[0, 0, 0, 0, 0] = [3, 1]
    counts[0, 0, 0, 0, 1] = [1, 3]
    cp = E.cp_estimate(counts)
    assert cp[0, 0] == pytest.approx(0.5) and np.isnan(cp[0, 1])
    lo, hi = E.conditioning_bounds(counts)
    assert (lo[0, 0], hi[0, 0]) == (0.25, 0.75)
    assert (lo[1, 1], hi[1, 1]) == (0.0, 1.0)  # no data: trivial
    lo_m, hi_m = E.conditioning_bounds(counts, "clopper_pearson", 0.9)
    a = E.per_side_alpha(0.9)
    assert lo_m[0, 0] == pytest.approx(stats.beta.ppf(a, 1, 4))
    assert hi_m[0, 0] == pytest.approx(stats.beta.ppf(1 - a, 4, 1))
    with pytest.raises(ValueError, match="margin='hoeffding'"):
        E.conditioning_bounds(counts, "hoeffding")
    with pytest.raises(ValueError, match="level=1.5"):
        E.per_side_alpha(1.5)
    with pytest.raises(ValueError, match="last 6 axes"):
        E.cp_estimate(np.zeros((2, 2)))


def test_clopper_pearson_bounds_cover_at_the_stated_level(table2, truth):
    """The sound bounds with the simultaneous Clopper-Pearson margin contain all 16 truths in at
    least 95% of data sets (one-sided binomial test at 1e-3), while the plug-in bounds do not."""
    oc = M.offline_count_tables(table2, 30_000, 150, seed=2024)
    lo, hi = E.conditioning_bounds(oc.selected, "clopper_pearson", 0.95, simultaneous_cells=16)
    all_in = (E.coverage(lo, hi, truth) == 1.0).sum()
    assert stats.binomtest(int(all_in), 150, 0.95, alternative="less").pvalue > 1e-3
    lo, hi = E.conditioning_bounds(oc.selected, "clopper_pearson", 0.95)
    misses = 150 - E.contains(lo, hi, truth).sum(axis=0)  # per cell, level 0.95 each
    assert np.all(stats.binom.sf(misses - 1, 150, 0.05) > 1e-3 / 16)
    lo, hi = E.conditioning_bounds(oc.selected)
    plug_all = (E.coverage(lo, hi, truth) == 1.0).sum()
    assert stats.binomtest(int(plug_all), 150, 0.95, alternative="less").pvalue < 1e-3


# ---------------------------------------------------------------------------- bandits
def _contextual_env(table2, truth):
    return ContextualBernoulliBandit(M.context_probabilities(table2), truth.T)


def _policies(upper, lower, weight, reward):
    f = B.arm_context_features()
    return {
        "linucb": lambda: B.LinUCB(f),
        "pcb_both": lambda: B.LinUCB(f, lower=lower, upper=upper, clip="both"),
        "pcb_upper": lambda: B.LinUCB(f, lower=lower, upper=upper, clip="upper"),
        "warm": lambda: B.LinUCB(f, alpha=0.5, warm_weight=weight, warm_reward=reward),
    }


def test_linucb_vectorised_equals_looped(table2, truth):
    rng = np.random.default_rng(5)
    n = 6
    upper = rng.uniform(0.4, 0.9, (n, 4, 4))
    lower = upper - rng.uniform(0.1, 0.4, (n, 4, 4))
    weight = rng.integers(0, 50, (n, 4, 4)).astype(float)
    reward = rng.random((n, 4, 4))
    reward[0, 0, 0] = np.nan  # skipped cell
    env = _contextual_env(table2, truth)
    for name, make in _policies(upper, lower, weight, reward).items():
        together = simulate(env, make(), 400, seed=1, n_runs=n, metrics=("regret", "reward", "dominated"))
        alone = simulate_loop(
            lambda: _contextual_env(table2, truth),
            make,
            400,
            seed=1,
            n_runs=n,
            metrics=("regret", "reward", "dominated"),
        )
        for m in ("regret", "reward", "dominated"):
            assert np.array_equal(together[m], alone[m]), (name, m)


def test_linucb_matches_a_direct_inverse():
    """Sherman-Morrison state equals (λI + Σ x xᵀ)⁻¹ and b = Σ r x computed directly."""
    f = B.arm_context_features()
    pol = B.LinUCB(f, lam=2.0, warm_weight=np.full((4, 4), 3.0), warm_reward=np.full((4, 4), 0.25))
    pol.reset(RunStreams(0, [0, 1]))
    rng = np.random.default_rng(0)
    A = np.stack([2.0 * np.eye(5) + 3.0 * sum(np.outer(f[c, a], f[c, a]) for c in range(4)) for a in range(4)])
    b = np.stack([0.75 * f[:, a].sum(axis=0) for a in range(4)])
    A, b = np.stack([A, A]), np.stack([b, b])
    for t in range(30):
        c = rng.integers(0, 4, 2)
        acts = pol.select(t, c)
        r = rng.integers(0, 2, 2).astype(float)
        pol.update(t, c, acts, {"reward": r})
        for i in range(2):
            x = f[c[i], acts[i]]
            A[i, acts[i]] += np.outer(x, x)
            b[i, acts[i]] += r[i] * x
    np.testing.assert_allclose(pol.a_inv, np.linalg.inv(A), atol=1e-10)
    np.testing.assert_allclose(pol.b, b, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_pcb_never_pulls_a_dominated_arm(seed):
    """With two-sided clipping, LinUCB-PCB never pulls an arm whose U is below another arm's L,
    whatever the bounds (random, possibly invalid and overlapping)."""
    rng = np.random.default_rng(seed)
    upper = rng.uniform(0, 1, (4, 4))
    lower = upper - rng.uniform(0, 0.6, (4, 4))
    pol = B.LinUCB(B.arm_context_features(), alpha=rng.uniform(0.1, 2), lower=lower, upper=upper, clip="both")
    pol.reset(RunStreams(seed % 1000, range(5)))
    for t in range(200):
        c = rng.integers(0, 4, 5)
        a = pol.select(t, c)
        dominated = upper[c, a] < lower[c].max(axis=1)
        assert not dominated.any()
        pol.update(t, c, a, {"reward": rng.integers(0, 2, 5).astype(float)})


def test_upper_only_clipping_can_pull_a_dominated_arm():
    """Algorithm 4 as printed (min(UCB, U)) does pull a dominated arm when the other arm's UCB has
    fallen below its own L: the property above is not automatic."""
    f = B.arm_context_features()
    upper = np.tile([0.50, 0.90, 0.95, 0.95], (4, 1))
    lower = np.tile([0.45, 0.00, 0.00, 0.60], (4, 1))  # arm 0's U (0.50) < arm 3's L (0.60)
    upper[:, 1:3], lower[:, 1:3] = 0.0, 0.0  # arms 1, 2 never attractive
    pol = B.LinUCB(f, alpha=0.01, lower=lower, upper=upper, clip="upper", random_ties=False)
    pol.reset(RunStreams(0, [0]))
    c = np.array([0])
    for t in range(20):  # teach arm 3 that it pays 0, arm 0 that it pays 1
        for arm, r in ((3, 0.0), (0, 1.0)):
            pol.select(t, c)
            pol.update(t, c, np.array([arm]), {"reward": np.array([r])})
    a = pol.select(99, c)
    assert a[0] == 0 and pol.diagnostics()["dominated"][0] == 1.0
    both = B.LinUCB(f, alpha=0.01, lower=lower, upper=upper, clip="both", random_ties=False)
    both.reset(RunStreams(0, [0]))
    both._a_inv, both._b = pol._a_inv.copy(), pol._b.copy()
    assert both.select(99, c)[0] == 3


def test_linucb_rejects_bad_arguments():
    f = B.arm_context_features()
    with pytest.raises(ValueError, match="clip='both' needs"):
        B.LinUCB(f, upper=np.ones((4, 4)), clip="both")
    with pytest.raises(ValueError, match="alpha=0"):
        B.LinUCB(f, alpha=0)
    pol = B.LinUCB(f, upper=np.ones((3, 4, 4)), clip="upper")
    with pytest.raises(ValueError, match="run 3 is simulated"):
        pol.reset(RunStreams(0, [3]))


def test_ucb_pcb_vectorised_equals_looped_and_skips_eliminated_arms(table2):
    means = M.interventional_arm_means(table2)
    lower, upper = np.array([0.23, 0.40, 0.22, 0.39]), np.array([0.44, 0.61, 0.43, 0.60])
    make = lambda: B.ClippedUCB(4, 2000, lower=lower, upper=upper)
    vec = simulate(BernoulliBandit(means), make(), 2000, seed=4, n_runs=4)
    loop = simulate_loop(lambda: BernoulliBandit(means), make, 2000, seed=4, n_runs=4)
    assert np.array_equal(vec["regret"], loop["regret"]) and np.array_equal(vec["reward"], loop["reward"])
    pol = B.ClippedUCB(4, 2000, lower=lower, upper=upper)
    pol.reset(RunStreams(0, [0]))
    assert np.all(pol.index() == upper)  # unplayed: +inf clipped to U
    plain = simulate(BernoulliBandit(means), B.ClippedUCB(4, 2000), 2000, seed=4, n_runs=4)
    assert vec.final().mean() < plain.final().mean()


# ---------------------------------------------------------------------------- theory
def test_regret_bound_functions(table2, truth):
    means = M.interventional_arm_means(table2)
    assert Th.ucb_pcb_regret_bound(means, 15_000, upper=[0.441, 0.608, 0.432, 0.599]) == pytest.approx(3693.7, abs=0.5)
    assert Th.ucb_pcb_regret_bound(means, 15_000) == pytest.approx(5355.3, abs=0.5)
    f = B.arm_context_features()
    theta, resid = Th.linear_parameter(f, truth.T)
    assert resid < 1e-12 and np.linalg.norm(theta) == pytest.approx(0.34913, abs=1e-4)
    L = Th.effective_feature_norm(f, truth.T)
    assert L == pytest.approx(np.sqrt(5))
    assert Th.linucb_pcb_regret_bound(15_000, 5, 1.0, 0.34913, 0.05, L) == pytest.approx(18501, rel=1e-3)
    with pytest.raises(ValueError, match="delta=1.5"):
        Th.linucb_pcb_regret_bound(10, 5, 1.0, 0.3, 1.5, 1.0)
