"""The multi-label data sets and the split (:mod:`causalbandits_lib.fairx.data`)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from causalbandits_lib.core import datasets
from causalbandits_lib.fairx import data

YEAST_FREQ = data.YEAST_LABEL_COUNTS / data.YEAST_N
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def shared_data_dir():
    """The folder with the shared data files (CAUSALBANDITS_DATA_DIR, else ../shared/data)."""
    import os

    for candidate in (
        os.environ.get(datasets.DATA_DIR_ENV),
        ROOT.parent / "shared" / "data",
        ROOT.parent.parent / "shared" / "data",
    ):
        if candidate and (Path(candidate) / "yeast" / "yeast.arff").is_file():
            return Path(candidate)
    pytest.skip("the yeast file is not available (set CAUSALBANDITS_DATA_DIR)")


def test_yeast_loader_checksum_and_shape(monkeypatch, shared_data_dir):
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(shared_data_dir))
    y = data.load_yeast()
    assert not y.stand_in
    assert (
        y.provenance["files"]["yeast/yeast.arff"] == "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7"
    )
    assert y.features.shape == (2417, 103) and y.labels.shape == (2417, 14)
    np.testing.assert_array_equal(y.labels.sum(axis=0), data.YEAST_LABEL_COUNTS)
    np.testing.assert_allclose(np.linalg.norm(y.features, axis=1), 1.0, atol=1e-5)


def test_yeast_stand_in_is_flagged(monkeypatch, tmp_path):
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(datasets.OFFLINE_ENV, "1")
    monkeypatch.setattr(datasets, "data_dirs", lambda: [tmp_path])
    with pytest.warns(datasets.StandInWarning, match="STAND-IN"):
        y = data.load_yeast()
    assert y.stand_in and y.provenance["stand_in"] is True
    assert "STAND-IN" in y.name
    assert y.labels.shape == (2417, 14)
    np.testing.assert_allclose(y.label_frequencies, YEAST_FREQ, atol=0.03)
    with pytest.raises(datasets.DataUnavailable):
        data.load_yeast(allow_stand_in=False)


def test_split_and_mediamill_shape():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", datasets.StandInWarning)
        y = data.yeast_stand_in(0)
    val, test = data.validation_test_split(y, np.random.default_rng(0))
    assert len(val.labels) == 483 and len(test.labels) == 1934
    mm = data.mediamill_like(0, n_examples=3000)
    assert mm.features.shape == (3000, 120) and mm.labels.shape == (3000, 101) and mm.stand_in
    assert 3.5 < mm.labels.sum(axis=1).mean() < 5.0
