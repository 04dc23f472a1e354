"""Bounds and point estimates from offline count tables."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from causalbandits_lib.pcb import estimators as E
from causalbandits_lib.pcb import model as M
from causalbandits_lib.pcb import offline as O


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
    oc = O.offline_count_tables(table2, 30_000, 150, seed=2024)
    lo, hi = E.conditioning_bounds(oc.selected, "clopper_pearson", 0.95, simultaneous_cells=16)
    all_in = (E.coverage(lo, hi, truth) == 1.0).sum()
    assert stats.binomtest(int(all_in), 150, 0.95, alternative="less").pvalue > 1e-3
    lo, hi = E.conditioning_bounds(oc.selected, "clopper_pearson", 0.95)
    misses = 150 - E.contains(lo, hi, truth).sum(axis=0)  # per cell, level 0.95 each
    assert np.all(stats.binom.sf(misses - 1, 150, 0.05) > 1e-3 / 16)
    lo, hi = E.conditioning_bounds(oc.selected)
    plug_all = (E.coverage(lo, hi, truth) == 1.0).sum()
    assert stats.binomtest(int(plug_all), 150, 0.95, alternative="less").pvalue < 1e-3
