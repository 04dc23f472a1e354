"""The Email Campaign model, its decompositions and counterfactuals, against independent routes:
pgmpy inference, the paper's formulas enumerated by hand, and Monte Carlo."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.core.scm import DiscreteSCM, NotIdentifiableError
from causalbandits_lib.fucb.counterfactual import (
    counterfactual_bounds,
    identified_discrepancy,
    monotone_counterfactual,
    monotone_counterfactual_means,
    monotone_discrepancy_table,
    printed_theorem2_bounds,
    theorem2_bounds,
    worst_case_discrepancy,
)
from causalbandits_lib.fucb.email_campaign import (
    ARM_NODES,
    CONTEXT_NODES,
    INTERMEDIATE_NODES,
    SENSITIVE,
    TABLE5,
    email_campaign_env,
    email_campaign_model,
    email_graph,
)
from causalbandits_lib.fucb.environment import joint_codes
from causalbandits_lib.fucb.separators import domain_size, minimum_domain_separator, reward_separators


@pytest.fixture(scope="module")
def env():
    return email_campaign_env()


def hand_mean(x, a, i3_values=2):
    """E[R | do(a), x] enumerated from the appendix's formulas, typed here independently."""
    a1, a2, a3 = a
    p_i4 = TABLE5[4 * x[0] + 2 * x[1] + x[2]]
    total = 0.0
    for i4, p4 in zip((1, 2, 3, 4), p_i4):
        for i2 in (1, 2):
            q2 = (a1 + a2 + i4) / 12
            p2 = q2 if i2 == 1 else 1 - q2
            for i1 in (1, 2):
                q1 = (a1 + a2 + i2) / 10
                p1 = q1 if i1 == 1 else 1 - q1
                q3 = 0.4 if i2 == 1 else 0.6
                i3_dist = (
                    [(1, q3), (2, 1 - q3)] if i3_values == 2 else [(1, q3)] + [(v, (1 - q3) / 3) for v in (2, 3, 4)]
                )
                for i3, p3 in i3_dist:
                    total += p4 * p2 * p1 * p3 * (i1 + i2 + i3 + a3) / 12
    return total


def test_tables_are_normalised_and_errors_name_the_parameter():
    for k in (2, 4):
        m = email_campaign_model(i3_values=k)
        for node, mech in m.mechanisms.items():
            np.testing.assert_allclose(mech.table.sum(axis=-1), 1.0, atol=1e-12, err_msg=node)
    with pytest.raises(ValueError, match="i3_values=3"):
        email_campaign_model(i3_values=3)
    with pytest.raises(ValueError, match="context_marginals"):
        email_campaign_model(context_marginals=(0.5, 1.5, 0.5))
    with pytest.raises(ValueError, match="sigma"):
        email_campaign_env(sigma=-1.0)


@pytest.mark.parametrize("i3_values", [2, 4])
def test_exact_means_match_hand_enumeration(i3_values):
    env = email_campaign_env(i3_values=i3_values)
    for c, x in enumerate(env.context_codes):
        for a, codes in enumerate(env.arm_codes):
            assert env.means[c, a] == pytest.approx(
                hand_mean(tuple(x), tuple(int(v) + 1 for v in codes), i3_values), abs=1e-13
            )


def test_exact_means_and_discrepancies_match_pgmpy(env):
    m = env.model
    for c, x in enumerate(env.context_codes):
        ev = {n: int(v) for n, v in zip(CONTEXT_NODES, x)}
        for a, codes in enumerate(env.arm_codes):
            do = {n: m.label(n, int(v)) for n, v in zip(ARM_NODES, codes)}
            joint = m.query(["I1", "I2", "I3"], evidence=ev, do=do)
            mean = (
                np.einsum("ijk,i->", joint, [1, 2])
                + np.einsum("ijk,j->", joint, [1, 2])
                + np.einsum("ijk,k->", joint, [1, 2])
                + do["A3"]
            ) / 12
            assert env.means[c, a] == pytest.approx(mean, abs=1e-13)
            cf = [m.counterfactual(["I1", "I2", "I3"], {**do, SENSITIVE: s}, ev) for s in (0, 1)]
            ex = [
                (np.einsum("ijk,i->", j, [1, 2]) + np.einsum("ijk,j->", j, [1, 2]) + np.einsum("ijk,k->", j, [1, 2]))
                / 12
                for j in cf
            ]
            assert env.discrepancy[c, a] == pytest.approx(ex[1] - ex[0], abs=1e-13)


def test_discrepancy_is_arm_independent_with_the_closed_form(env):
    e_i4 = TABLE5 @ np.arange(1, 5)
    closed = -0.7 / 144 * (e_i4[4:] - e_i4[:4])
    for c in range(8):
        np.testing.assert_allclose(env.discrepancy[c], closed[c % 4], atol=1e-14)
    assert np.abs(env.discrepancy).max() == pytest.approx(0.0072917, abs=1e-6)


def test_decompositions_recover_the_means(env):
    for w in (("A3", "I1", "I2"), ("A3", "I1", "I2", "I3"), (*CONTEXT_NODES, *ARM_NODES)):
        dec = env.decomposition(w)
        np.testing.assert_allclose(dec.arm_means(), env.means, atol=1e-14)
        np.testing.assert_allclose(dec.probs.sum(axis=-1), 1.0, atol=1e-14)
    arms = env.decomposition(ARM_NODES)
    # W = A is not a separator: its cells are the context-averaged means (context-free UCB)
    np.testing.assert_allclose(arms.cell_means, env.context_probs @ env.means, atol=1e-14)
    np.testing.assert_array_equal(arms.probs[3], np.eye(36))
    with pytest.raises(ValueError, match="not a node"):
        env.decomposition(("A3", "Q"))


def test_fast_sampler_equals_the_core_sampler(env):
    rng = np.random.default_rng(1)
    n = 500
    c, a = rng.integers(0, 8, n), rng.integers(0, 36, n)
    u = rng.random((n, len(env.model.nodes)))
    fast = env.sample_nodes(u, c, a)
    do = {nm: env.context_codes[c, j] for j, nm in enumerate(CONTEXT_NODES)}
    do.update({nm: env.arm_codes[a, j] for j, nm in enumerate(ARM_NODES)})
    core = env.model.sample_from_uniforms(u, do_codes=do)
    for node in env.model.nodes:
        np.testing.assert_array_equal(fast[node], core[node], err_msg=node)


def test_sampled_cells_follow_the_known_probabilities(env):
    dec = env.decomposition(("A3", "I1", "I2"))
    rng = np.random.default_rng(2)
    n, c, a = 40000, 5, 17
    codes = env.sample_nodes(rng.random((n, len(env.model.nodes))), np.full(n, c), np.full(n, a))
    codes["reward"] = np.zeros(n)
    freq = np.bincount(dec.realized_cells(codes), minlength=dec.n_cells) / n
    p = dec.probs[c, a]
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12)


def test_minimum_domain_separator_on_the_email_graph(env):
    g = email_graph(env.model)
    cards = {n: env.model.card(n) for n in env.model.states}
    w, dom = minimum_domain_separator(g, "R", ARM_NODES, CONTEXT_NODES, INTERMEDIATE_NODES, cards)
    assert w == {"A3", "I1", "I2"} and dom == 12
    ranked = reward_separators(g, "R", ARM_NODES, CONTEXT_NODES, INTERMEDIATE_NODES, cards)
    assert ranked[0] == (w, 12)
    assert domain_size(sorted(g.predecessors("R")), cards) == 24
    with pytest.raises(ValueError, match="both"):
        minimum_domain_separator(g, "R", ARM_NODES, ("X1", "A1"), INTERMEDIATE_NODES, cards)


def _brute_force(g, reward, arms, ctx, inter, cards):
    ax = set(arms) | set(ctx)
    best = None
    for k in range(len(ax | set(inter)) + 1):
        for w in itertools.combinations(sorted(ax | set(inter)), k):
            rest = ax - set(w)
            if rest and not nx.is_d_separator(g, rest, {reward}, set(w)):
                continue
            key = (int(np.prod([cards[n] for n in w])), len(w), sorted(w))
            best = key if best is None or key < best else best
    return frozenset(best[2]), best[0]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_minimum_domain_separator_matches_brute_force_on_random_dags(data):
    n = data.draw(st.integers(3, 7), label="nodes before R")
    roles = data.draw(st.lists(st.sampled_from(["X", "A", "I"]), min_size=n, max_size=n), label="roles")
    cards = {f"V{i}": data.draw(st.integers(2, 4)) for i in range(n)}
    g = nx.DiGraph()
    g.add_nodes_from([*cards, "R"])
    for j in range(n):
        for i in range(j):
            if data.draw(st.booleans()):
                g.add_edge(f"V{i}", f"V{j}")
        if data.draw(st.booleans()):
            g.add_edge(f"V{j}", "R")
    ctx = [f"V{i}" for i, r in enumerate(roles) if r == "X"]
    arms = [f"V{i}" for i, r in enumerate(roles) if r == "A"]
    inter = [f"V{i}" for i, r in enumerate(roles) if r == "I"]
    got = minimum_domain_separator(g, "R", arms, ctx, inter, cards)
    assert got == _brute_force(g, "R", arms, ctx, inter, cards)


def test_theorem2_bounds_by_hand():
    means = np.array([[0.2, 0.6], [0.5, 0.1]])  # (z, b)
    lo, hi = theorem2_bounds(means, np.array([0.25, 0.75]))
    assert lo == pytest.approx(0.25 * 0.2 + 0.75 * 0.1) and hi == pytest.approx(0.25 * 0.6 + 0.75 * 0.5)
    assert worst_case_discrepancy(0.1, 0.3, 0.2, 0.5) == pytest.approx(max(abs(0.3 - 0.2), abs(0.5 - 0.1)))
    with pytest.raises(ValueError, match="shape"):
        theorem2_bounds(means, np.ones(3))


def test_printed_theorem2_fails_and_the_corrected_bounds_hold_when_age_descends_from_gender():
    env = email_campaign_env(age_given_gender=(0.3, 0.7))
    dec = env.decomposition(("A3", "I1", "I2"))
    true = monotone_counterfactual_means(env, SENSITIVE)
    lo, hi = counterfactual_bounds(dec, env.varied_contexts(SENSITIVE, ["X2"]))
    assert np.all(true >= lo - 1e-12) and np.all(true <= hi + 1e-12)
    lo_p = np.stack([printed_theorem2_bounds(dec, SENSITIVE, s, ["X2"])[0] for s in (0, 1)], axis=-1)
    # X2 is not in W: the printed bound collapses to the factual mean for both s*
    np.testing.assert_allclose(lo_p, np.repeat(env.means[..., None], 2, axis=-1), atol=1e-14)
    factual_s = env.context_codes[:, 0]
    counter = true[np.arange(8), :, 1 - factual_s]
    assert np.all(np.abs(counter - env.means) > 1e-4)


def test_monotone_counterfactual_agrees_with_identified_and_with_twin_sampling(env):
    dec = env.decomposition(("A3", "I1", "I2"))
    np.testing.assert_allclose(
        monotone_discrepancy_table(env, SENSITIVE),
        identified_discrepancy(dec, env.counterfactual_contexts(SENSITIVE)),
        atol=1e-14,
    )
    # a non-identified model: income depends on sex and age, age on sex; twin-network Monte Carlo
    m = DiscreteSCM(
        {"sex": (0, 1), "age": (0, 1), "income": (0, 1)},
        {
            "sex": ((), [0.4, 0.6]),
            "age": (("sex",), [[0.7, 0.3], [0.5, 0.5]]),
            "income": (("sex", "age"), [[[0.9, 0.1], [0.7, 0.3]], [[0.8, 0.2], [0.4, 0.6]]]),
        },
    )
    rng = np.random.default_rng(3)
    u = rng.random((400000, 3))
    fact = m.sample_from_uniforms(u)
    twin = m.sample_from_uniforms(u, do_codes={"sex": 0})
    for ev in itertools.product((0, 1), repeat=3):
        sel = (fact["sex"] == ev[0]) & (fact["age"] == ev[1]) & (fact["income"] == ev[2])
        exact = monotone_counterfactual(m, dict(zip(("sex", "age", "income"), ev)), {"sex": 0}, ["age", "income"])
        mc = np.array([[np.mean((twin["age"][sel] == i) & (twin["income"][sel] == j)) for j in (0, 1)] for i in (0, 1)])
        assert np.all(np.abs(mc - exact) < 5 * np.sqrt(exact * (1 - exact) / sel.sum()) + 1e-3), ev
    with pytest.raises(NotIdentifiableError, match="no evidence"):
        monotone_counterfactual(m, {"income": 1, "sex": 1}, {"sex": 0}, ["income"])


def test_joint_codes_are_row_major():
    np.testing.assert_array_equal(joint_codes([2, 3])[4], [1, 1])
    assert joint_codes([]).shape == (1, 0)
