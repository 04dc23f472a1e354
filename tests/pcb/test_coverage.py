"""The coverage study of notebook 2 on a hand-made pair of data sets."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.pcb import coverage as C
from tests.recording_notebook import RecordingNotebook

TRUTH = np.array([[0.5, 0.2], [0.3, 0.6]])  # (arm, context): best 0.5 in context 0, 0.6 in context 1
# data set 0 covers every cell with width 0.2 and eliminates (arm 0, c 1) and (arm 1, c 0);
# data set 1 misses (arm 0, c 0) (its lower end 0.6 > 0.5), has widths 0.1, 1, 1, 1, eliminates nothing
LOWER = np.array([[[0.4, 0.1], [0.2, 0.5]], [[0.6, 0.0], [0.0, 0.0]]])
UPPER = np.array([[[0.6, 0.3], [0.4, 0.7]], [[0.7, 1.0], [1.0, 1.0]]])


def test_coverage_study_rows_by_hand():
    study = C.coverage_study({"m": (LOWER, UPPER)}, TRUTH)
    row = study.rows["m"]
    assert row["per-cell coverage"] == pytest.approx(7 / 8)
    assert row["all-16 coverage"] == pytest.approx(0.5)
    assert row["mean width"] == pytest.approx((0.2 + (0.1 + 3) / 4) / 2)
    assert row["pairs eliminated"] == pytest.approx(1.0)


def test_coverage_study_records_four_metrics_per_bound_and_shows_a_table():
    study = C.coverage_study({"a": (LOWER, UPPER), "b": (LOWER[:1], UPPER[:1])}, TRUTH)
    nb = RecordingNotebook()
    study.record(nb)
    assert sorted(nb.metrics) == sorted(
        f"coverage.{k}.{w}" for k in ("a", "b") for w in ("per_cell", "all_cells", "mean_width", "n_eliminated")
    )
    assert nb.metrics["coverage.b.all_cells"] == 1.0 and nb.metrics["coverage.b.n_eliminated"] == 2.0
    table = study.table({"a": "bound A"})
    assert list(table.index) == ["bound A", "b"]
    assert list(table.columns) == ["per-cell coverage", "all-16 coverage", "mean width", "pairs eliminated"]
    assert table.loc["bound A", "all-16 coverage"] == pytest.approx(0.5)
    assert list(study.table().index) == ["a", "b"]
