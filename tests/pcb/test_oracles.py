"""Oracles written independently of the implementation (issue 29, ``make mutants``).

The finite-sample margin of the sound bound promises a coverage level: with ``level = 1 − α`` the
interval of a cell contains its truth with probability at least ``1 − α`` (per cell), or all ``K``
cells do at once (``simultaneous_cells = K``). These tests check that promise against two routes
that share nothing with :mod:`causalbandits_lib.pcb.estimators`: scipy's exact binomial confidence
interval (``scipy.stats.binomtest(...).proportion_ci(method="exact")``, the Clopper-Pearson
interval), and the exact coverage probability summed over every possible count with
``scipy.stats.binom``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from causalbandits_lib.pcb import estimators as E


def _tables(n: int, ks) -> np.ndarray:
    """One count table per ``k`` in ``ks`` (axes X1, X2, U1, U2, I1, Y): cell (arm 0, context 0)
    holds ``k`` rows with ``Y = 1`` out of ``n`` in each stratum ``I1 = 0`` and ``I1 = 1`` (so the
    bound over the strata is the interval of one binomial count); every other cell is empty."""
    ks = np.asarray(ks)
    t = np.zeros((len(ks),) + (2,) * 6)
    for i in (0, 1):
        t[:, 0, 0, 0, 0, i, 1] = ks
        t[:, 0, 0, 0, 0, i, 0] = n - ks
    return t


@pytest.mark.parametrize("level, cells", [(0.95, 1), (0.95, 16), (0.9, 1)])
def test_clopper_pearson_margin_is_scipys_exact_interval(level, cells):
    """Oracle: scipy's exact (Clopper-Pearson) two-sided interval. A level ``1 − α`` for each of ``K``
    cells at once, by the union bound, is the two-sided interval at confidence ``1 − α/K`` of each
    cell's count; here the bound of cell (arm 0, context 0) for counts k = 0..25 of n = 25."""
    n = 25
    ks = np.arange(n + 1)
    lo, hi = E.conditioning_bounds(_tables(n, ks), "clopper_pearson", level, simultaneous_cells=cells)
    confidence = 1 - (1 - level) / cells
    for k in ks:
        ci = stats.binomtest(int(k), n).proportion_ci(confidence_level=confidence, method="exact")
        assert lo[k, 0, 0] == pytest.approx(ci.low, abs=1e-9)
        assert hi[k, 0, 0] == pytest.approx(ci.high, abs=1e-9)


@pytest.mark.parametrize("n", [10, 40])
def test_clopper_pearson_margin_covers_at_the_stated_level_for_every_p(n):
    """Oracle: the definition of the level, computed exactly. For true ``p`` on a fine grid the
    probability that the per-cell interval at level 0.95 contains ``p`` is
    ``Σ_k Binom(k; n, p) · [L(k) <= p <= U(k)]`` (scipy's binomial pmf); it must be at least 0.95
    for every ``p`` (the Clopper-Pearson guarantee holds for every sample size)."""
    ks = np.arange(n + 1)
    lo, hi = E.conditioning_bounds(_tables(n, ks), "clopper_pearson", 0.95)
    lo, hi = lo[:, 0, 0], hi[:, 0, 0]
    p = np.linspace(0.001, 0.999, 999)
    inside = (lo[:, None] <= p[None, :]) & (p[None, :] <= hi[:, None])  # (k, p)
    cover = (stats.binom.pmf(ks[:, None], n, p[None, :]) * inside).sum(axis=0)
    assert cover.min() >= 0.95 - 1e-9
