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
