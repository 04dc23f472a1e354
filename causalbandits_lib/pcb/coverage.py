"""The coverage of the chapter's bounds over many offline data sets (notebook ``pcb/02``).

- :class:`CoverageStudy`: per bound (a key of
  :func:`~causalbandits_lib.pcb.estimators.bound_methods`) the fraction of cells whose truth it
  covers, the fraction of data sets where it covers all 16, its mean width and the pairs it
  eliminates; it records them as the notebook's metrics and shows them as a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .estimators import contains, mean_width, n_eliminated

__all__ = ["COVERAGE_STATS", "CoverageStudy", "coverage_study"]

#: The statistics of a row of :class:`CoverageStudy` and the word each has in a metric name.
COVERAGE_STATS = {
    "per-cell coverage": "per_cell",
    "all-16 coverage": "all_cells",
    "mean width": "mean_width",
    "pairs eliminated": "n_eliminated",
}


@dataclass(frozen=True)
class CoverageStudy:
    """The coverage statistics of several bounds on the same data sets.

    Attributes
    ----------
    rows : dict
        Bound key to ``{statistic: value}`` for the statistics of :data:`COVERAGE_STATS`, in the
        order of the bounds given.
    """

    rows: Mapping[str, Mapping[str, float]]

    def record(self, nb: Any) -> None:
        """Register every statistic as the metric ``coverage.KEY.WORD`` (``WORD`` from
        :data:`COVERAGE_STATS`) with ``nb.metric``. Returns nothing."""
        for key, row in self.rows.items():
            for stat, word in COVERAGE_STATS.items():
                nb.metric(f"coverage.{key}.{word}", row[stat])

    def table(self, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
        """The statistics as a DataFrame, one row per bound (renamed by ``labels`` if given).

        Returns
        -------
        pandas.DataFrame
            Rows: bounds; columns: the statistics of :data:`COVERAGE_STATS`.
        """
        table = pd.DataFrame(self.rows).T
        return table.rename(index=dict(labels)) if labels is not None else table


def coverage_study(methods: Mapping[str, tuple[np.ndarray, np.ndarray]], truth: np.ndarray) -> CoverageStudy:
    """The coverage of each bound of ``methods`` over its data sets.

    Parameters
    ----------
    methods : mapping
        Bound key to ``(lower, upper)``, each of shape ``(n_datasets, n_arms, n_contexts)``.
    truth : ndarray, shape (n_arms, n_contexts)
        The true conditional causal effects.

    Returns
    -------
    CoverageStudy
        Per bound: the mean over data sets and cells of "the cell's truth is inside", the fraction
        of data sets with all cells inside, the mean width and the mean number of pairs
        eliminated (``U < μ*``).
    """
    rows = {}
    for key, (lo, hi) in methods.items():
        inside = contains(lo, hi, truth)  # (n_datasets, arm, context)
        rows[key] = {
            "per-cell coverage": inside.mean(),
            "all-16 coverage": inside.all(axis=(1, 2)).mean(),
            "mean width": mean_width(lo, hi).mean(),
            "pairs eliminated": n_eliminated(hi, truth).mean(),
        }
    return CoverageStudy(rows)
