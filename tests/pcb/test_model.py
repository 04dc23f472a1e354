"""The pcb model: Table 2's graph and tables, exact effects, the Table 1 index."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causalbandits_lib.pcb import model as M


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


def test_compound_bias_model_reduces_to_table2_and_moves_the_biases(table2, truth):
    same = M.compound_bias_model(0.1, 1.0)
    assert np.array_equal(M.selected_observed_distribution(same), M.selected_observed_distribution(table2))
    assert np.allclose(M.conditional_causal_effects(same), truth, atol=1e-12)
    # no selection bias: P(S=1 | I1) constant, so the log's P(y | x, c) equals the population's
    flat = M.compound_bias_model(0.8, 1.0)
    assert np.allclose(M.conditional_table(flat, True)["p_y"], M.conditional_table(flat, False)["p_y"], atol=1e-12)
    # stronger selection keeps fewer I1 = 0 rows
    p_i1 = [M.conditional_table(M.compound_bias_model(s, 1.0), True)["p_i1"].min() for s in (0.8, 0.1, 0.01)]
    assert p_i1[0] < p_i1[1] < p_i1[2]
    # kappa = 0: the hidden C1 has no effect, Y and I1 do not depend on it
    m0 = M.compound_bias_model(0.1, 0.0)
    tbl = m0.mechanisms["Y"].table
    assert np.allclose(tbl[0], tbl[1])
    with pytest.raises(ValueError, match="confounding"):
        M.compound_bias_model(0.1, 2.0)
    with pytest.raises(ValueError, match="p_s_i1_0"):
        M.compound_bias_model(0.0, 1.0)


def test_px_c_equals_p_c_and_the_exchange_rule(table2):
    px = M.interventional_context_probabilities(table2)
    assert px.shape == (4, 4)
    assert np.allclose(px, M.context_probabilities(table2)[None, :], atol=1e-12)
    # Lemma 1's equality holds where the hidden path C1 -> Y is cut, and fails on Table 2 and the counterexample
    assert M.exchange_rule_gap(M.without_hidden_reward_edge()) < 1e-12
    assert M.exchange_rule_gap(table2) > 0.01
    assert M.exchange_rule_gap(M.exchange_counterexample_model()) > 0.1
    cut = M.without_hidden_reward_edge()
    assert ("C1", "Y") not in cut.graph.edges and ("C1", "I1") in cut.graph.edges
