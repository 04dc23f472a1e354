"""The offline data generator: confounded logging, hidden confounder, selection."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.pcb import model as M
from causalbandits_lib.pcb import offline as O


def test_generator_frequencies_converge_to_the_exact_tables(table2):
    oc = O.offline_count_tables(table2, 20_000, 20, seed=3)
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
    rows = O.draw_offline_rows(table2, 5000, np.random.default_rng(0))
    log = O.selected_rows(rows)
    assert set(log) == set(M.OBSERVED)
    assert len(log["Y"]) == int((rows["S"] == 1).sum()) < 5000


def test_offline_data_sets_do_not_depend_on_batching(table2):
    a = O.offline_count_tables(table2, 3000, 5, seed=11, batch=2)
    b = O.offline_count_tables(table2, 3000, 5, seed=11, batch=5)
    c = O.offline_count_tables(table2, 3000, 2, seed=11, first=3)
    np.testing.assert_array_equal(a.full, b.full)
    np.testing.assert_array_equal(a.full[3:], c.full)
    with pytest.raises(ValueError, match="n_draws=0"):
        O.offline_count_tables(table2, 0, 1, seed=0)
