"""Discrete SCMs: validation, sampling against exact probabilities, queries against brute force."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causalbandits_lib.core.scm import DiscreteSCM, NotIdentifiableError, SCMError, bundled_network


def chain_model():
    return DiscreteSCM(
        {"Z": ("a", "b"), "X": (0, 1), "Y": (0, 1, 2)},
        {
            "Z": ((), [0.3, 0.7]),
            "X": (("Z",), [[0.9, 0.1], [0.25, 0.75]]),
            "Y": (("Z", "X"), [[[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]], [[0.6, 0.2, 0.2], [0.3, 0.3, 0.4]]]),
        },
        name="test",
    )


@st.composite
def random_scm(draw, max_nodes=5):
    """A random DAG over up to ``max_nodes`` nodes with random cardinalities and tables."""
    n = draw(st.integers(2, max_nodes))
    names = [f"V{i}" for i in range(n)]
    cards = [draw(st.integers(2, 3)) for _ in range(n)]
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    mechanisms = {}
    for i, name in enumerate(names):
        parents = tuple(names[j] for j in range(i) if draw(st.booleans()))
        shape = tuple(cards[names.index(p)] for p in parents) + (cards[i],)
        table = rng.dirichlet(np.ones(cards[i]) * 0.7, size=shape[:-1]) if parents else rng.dirichlet(np.ones(cards[i]))
        mechanisms[name] = (parents, table.reshape(shape))
    return DiscreteSCM({nm: tuple(range(c)) for nm, c in zip(names, cards)}, mechanisms, name="random")


@pytest.mark.parametrize(
    "states, mechanisms, fragment",
    [
        ({"A": ()}, {"A": ((), [])}, "node 'A' has no states"),
        ({"A": (0, 0)}, {"A": ((), [0.5, 0.5])}, "repeats a state"),
        ({"A": (0, 1)}, {}, "node 'A' has no table"),
        ({"A": (0, 1)}, {"A": ((), [0.5, 0.5]), "B": ((), [1.0])}, "table is given for 'B'"),
        ({"A": (0, 1)}, {"A": (("Q",), [[0.5, 0.5]])}, "parent 'Q' of 'A' is not a node"),
        ({"A": (0, 1)}, {"A": ((), [0.5, 0.5, 0.0])}, "must have shape (2,)"),
        ({"A": (0, 1)}, {"A": ((), [1.2, -0.2])}, "negative entry"),
        ({"A": (0, 1)}, {"A": ((), [0.5, np.nan])}, "non-finite"),
        (
            {"A": (0, 1), "B": ("u", "v")},
            {"A": ((), [0.5, 0.5]), "B": (("A",), [[0.5, 0.5], [0.5, 0.6]])},
            "row of 'B' for A=1 sums to 1.1",
        ),
        (
            {"A": (0, 1), "B": (0, 1)},
            {"A": (("B",), [[1.0, 0.0], [0.0, 1.0]]), "B": (("A",), [[1.0, 0.0], [0.0, 1.0]])},
            "directed cycle",
        ),
    ],
)
def test_invalid_models_are_rejected_with_a_clear_message(states, mechanisms, fragment):
    with pytest.raises(SCMError) as err:
        DiscreteSCM(states, mechanisms)
    assert fragment in str(err.value)


@given(model=random_scm(), seed=st.integers(0, 2**31))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_sample_frequencies_converge_to_exact_joint(model, seed):
    n = 60_000
    rows = model.sample(n, np.random.default_rng(seed))
    joint = model.joint_table()
    codes = np.ravel_multi_index(tuple(rows[v] for v in model.nodes), joint.shape)
    freq = np.bincount(codes, minlength=joint.size).reshape(joint.shape) / n
    se = np.sqrt(joint * (1 - joint) / n)
    # 5 standard errors per cell plus a tiny slack for cells of probability ~0
    assert np.all(np.abs(freq - joint) <= 5 * se + 1e-4)


@given(model=random_scm())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_pgmpy_queries_match_brute_force_on_the_joint(model):
    joint = model.joint_table()
    nodes = list(model.nodes)
    target, ev_node = nodes[-1], nodes[0]
    # conditional P(target | ev_node = 0)
    axes = tuple(i for i, v in enumerate(nodes) if v not in (target, ev_node))
    pair = joint.sum(axis=axes)  # axes (ev_node, target) in node order
    expected = pair[0] / pair[0].sum()
    np.testing.assert_allclose(model.query([target], evidence={ev_node: 0}), expected, atol=1e-10)
    # interventional P(target | do(x = 1)) by the truncated factorisation on the joint:
    # P_do(v) = P(v) / P(x | pa(x)) when x = 1, else 0
    x = nodes[1] if len(nodes) > 2 else nodes[0]
    pa_axes = [nodes.index(p) for p in model.parents(x)]
    x_axis = nodes.index(x)
    shape = [1] * len(nodes)
    for a in pa_axes + [x_axis]:
        shape[a] = model.card(nodes[a])
    factor = np.transpose(model.mechanisms[x].table, np.argsort(pa_axes + [x_axis])).reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        truncated = np.where(factor > 0, joint / factor, 0.0)
    do_joint = np.take(truncated, 1, axis=x_axis)
    remaining = [v for v in nodes if v != x]
    expected_do = do_joint.sum(axis=tuple(i for i, v in enumerate(remaining) if v != target))
    np.testing.assert_allclose(model.query([target], do={x: 1}), expected_do, atol=1e-10)


def test_sampling_under_do_matches_exact():
    m = chain_model()
    rows = m.sample(200_000, np.random.default_rng(0), do_codes={"X": 1})
    assert np.all(rows["X"] == 1)
    freq = np.bincount(rows["Y"], minlength=3) / 200_000
    np.testing.assert_allclose(freq, m.query(["Y"], do={"X": 1}), atol=0.005)


def test_soft_intervention_query_and_sampling():
    m = chain_model()
    policy = np.array([[0.2, 0.8], [0.6, 0.4]])  # pi(X | Z)
    exact = m.query(["Y"], soft={"X": (("Z",), policy)})
    manual = sum(
        m.query(["Z"])[z] * policy[z, x] * m.query(["Y"], evidence={"Z": m.label("Z", z)}, do={"X": x})
        for z in range(2)
        for x in range(2)
    )
    np.testing.assert_allclose(exact, manual, atol=1e-12)
    rows = m.sample(200_000, np.random.default_rng(1), soft={"X": (("Z",), policy)})
    np.testing.assert_allclose(np.bincount(rows["Y"], minlength=3) / 200_000, exact, atol=0.005)


def test_soft_intervention_that_creates_a_cycle_is_rejected():
    m = chain_model()
    with pytest.raises(SCMError, match="cycle"):
        m.intervene(soft={"Z": (("Y",), np.full((3, 2), 0.5))})


def test_per_row_hard_interventions():
    m = chain_model()
    u = np.random.default_rng(0).random((6, 3))
    codes = np.array([0, 1, 0, 1, 0, 1])
    rows = m.sample_from_uniforms(u, do_codes={"X": codes})
    np.testing.assert_array_equal(rows["X"], codes)
    # same uniforms, same do: identical; the coupling is deterministic
    np.testing.assert_array_equal(m.sample_from_uniforms(u, do_codes={"X": codes})["Y"], rows["Y"])


def test_counterfactual_identified_cases():
    m = chain_model()
    # evidence on a non-descendant: equals the conditional interventional query
    np.testing.assert_allclose(
        m.counterfactual(["Y"], do={"X": 1}, evidence={"Z": "a"}), m.query(["Y"], evidence={"Z": "a"}, do={"X": 1})
    )
    # effect of treatment on the treated: sum_z P(y | do(x'), z) P(z | x)
    ett = m.counterfactual(["Y"], do={"X": 1}, evidence={"X": 0})
    pz = m.query(["Z"], evidence={"X": 0})
    manual = sum(pz[i] * m.query(["Y"], evidence={"Z": z}, do={"X": 1}) for i, z in enumerate(("a", "b")))
    np.testing.assert_allclose(ett, manual, atol=1e-12)


def test_counterfactual_with_descendant_evidence_is_refused():
    m = chain_model()
    with pytest.raises(NotIdentifiableError, match="descendant"):
        m.counterfactual(["Y"], do={"Z": "a"}, evidence={"X": 1})


def test_unknown_nodes_and_states_name_the_problem():
    m = chain_model()
    with pytest.raises(KeyError, match="unknown node 'Q'"):
        m.query(["Q"])
    with pytest.raises(KeyError, match="'c' is not a state of 'Z'"):
        m.query(["Y"], evidence={"Z": "c"})


def test_bundled_hepar2_is_read_from_the_wheel():
    h = bundled_network("hepar2")
    assert len(h.nodes) == 70
    assert sum(len(h.parents(n)) for n in h.nodes) == 123
    assert h.states["sex"] == ("female", "male")
    assert set(h.graph.successors("sex")) == {"PBC", "Hyperbilirubinemia"}
    np.testing.assert_allclose(h.query(["sex"])[0], 0.598, atol=1e-5)  # bnlearn rows are renormalised (sum 1.000005)
    with pytest.raises(FileNotFoundError, match="available"):
        bundled_network("no-such-network")


def test_graph_matches_mechanisms():
    m = chain_model()
    assert set(m.graph.edges) == {("Z", "X"), ("Z", "Y"), ("X", "Y")}
    assert nx.is_directed_acyclic_graph(m.graph)
    assert m.nodes == ("Z", "X", "Y")
