"""The Adult-Video loader (checksums, the flagged stand-in), its learned graph and its bandit."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits_lib.core import datasets
from causalbandits_lib.fucb.experiments import adult_setup
from causalbandits_lib.fucb.instances import adult_video as av


def shared_data_dir():
    """Where the Adult files are: CAUSALBANDITS_DATA_DIR if it holds them, else the checkout's data/."""
    env = os.environ.get("CAUSALBANDITS_DATA_DIR")
    for folder in ([Path(env)] if env else []) + [Path(__file__).parents[2] / "data"]:
        if (folder / "adult" / "adult.data").is_file():
            return folder
    return None


@pytest.fixture()
def no_data(tmp_path, monkeypatch):
    """No Adult files anywhere and no downloads: the loader must fall back to the stand-in."""
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(datasets.OFFLINE_ENV, "1")
    monkeypatch.setattr(datasets, "data_dirs", lambda: [tmp_path])
    return tmp_path


@pytest.mark.skipif(shared_data_dir() is None, reason="neither CAUSALBANDITS_DATA_DIR nor data/ holds the Adult files")
def test_real_adult_is_verified_and_binarised():
    users, prov = av.load_adult_users()
    assert prov["stand_in"] is False
    assert prov["files"]["adult/adult.data"] == datasets.REGISTRY["adult"].files[0].sha256
    assert datasets.sha256_file(shared_data_dir() / "adult" / "adult.data") == prov["files"]["adult/adult.data"]
    assert users.shape == (32561, 4)
    assert int(users[:, 1].sum()) == 21790  # males, as the paper says
    np.testing.assert_allclose(users.mean(axis=0), [0.5141, 0.6692, 0.8543, 0.2408], atol=5e-5)


def test_stand_in_is_flagged_and_matches_the_listed_statistics(no_data):
    with pytest.warns(datasets.StandInWarning, match="STAND-IN"):
        users, prov = av.load_adult_users(stand_in_rng=np.random.default_rng(0))
    assert prov["stand_in"] is True and prov["files"] == {}
    assert users.shape == (32561, 4)
    p_male = sum(v[0] for k, v in av.STAND_IN_CELLS.items() if k[1] == 1) / sum(
        v[0] for v in av.STAND_IN_CELLS.values()
    )
    assert users[:, 1].mean() == pytest.approx(p_male, abs=0.01)
    assert users[:, 3].mean() == pytest.approx(0.2408, abs=0.01)
    with pytest.raises(datasets.DataUnavailable, match="stand_in_rng"):
        av.load_adult_users()


def test_wrong_checksum_is_an_error_not_a_stand_in(no_data):
    (no_data / "adult").mkdir()
    for f in datasets.REGISTRY["adult"].files:
        (no_data / f.relpath).write_text("tampered")
    with pytest.raises(datasets.ChecksumError):
        av.load_adult_users(stand_in_rng=np.random.default_rng(0))


def test_binarise_by_hand():
    frame = pd.DataFrame(
        {
            "age": [36, 37, 50],
            "sex": ["Female", " Male", "Male"],
            "race": ["White", "Black", " White"],
            "income": ["<=50K", ">50K.", ">50K"],
        }
    )
    np.testing.assert_array_equal(av.binarise_adult(frame), [[0, 0, 1, 0], [1, 1, 0, 1], [1, 1, 1, 1]])
    with pytest.raises(KeyError, match="income"):
        av.binarise_adult(frame.drop(columns="income"))


def test_graph_model_and_bandit_on_the_stand_in(no_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", datasets.StandInWarning)
        setup = adult_setup(np.random.default_rng(1), np.random.default_rng(2), n_users=4000)
    rank = {n: i for i, tier in enumerate(av.TEMPORAL_ORDER) for n in tier}
    assert all(rank[a] < rank[b] for a, b in setup.user_graph.edges())
    assert ("sex", "income") in setup.user_graph.edges()  # the stand-in makes income depend on sex
    again = av.learn_user_graph(setup.offline)
    assert sorted(again.edges()) == sorted(setup.user_graph.edges())
    assert set(setup.separator) == {"age", "income", "ratings", "views"} and setup.separator_domain == 16
    env = setup.env
    np.testing.assert_allclose(
        env.means,
        0.2 * (env.context_codes[:, [0, 3]].sum(axis=1)[:, None] + env.arm_codes[:, [1, 2]].sum(axis=1)[None, :]),
        atol=1e-14,
    )
    np.testing.assert_allclose(
        env.discrepancy, np.repeat(env.discrepancy[:, :1], env.n_arms, axis=1), atol=1e-14
    )  # arm-independent
    model = av.fit_user_model(setup.offline, setup.user_graph)
    for mech in model.mechanisms.values():
        np.testing.assert_allclose(mech.table.sum(axis=-1), 1.0)
    assert setup.estimator().kind == ("bounded" if {"age", "income"} & set(setup.descendants) else "identified")
    with pytest.raises(ValueError, match="n_users"):
        av.split_users(setup.online, 10**6, np.random.default_rng(0))
    with pytest.raises(ValueError, match="temporal_order"):
        av.learn_user_graph(setup.offline, temporal_order=(("sex",), ("age",)))


def test_adult_column_kinds_reads_the_dtypes():
    import pandas as pd

    from causalbandits_lib.fucb.instances.adult_video import ADULT_COLUMNS, adult_column_kinds

    row = {c: "x" for c in ADULT_COLUMNS} | {"age": 39, "fnlwgt": 77516, "hours-per-week": 40}
    kinds = adult_column_kinds(pd.DataFrame([row, row]))
    assert kinds["continuous"] == ["age", "fnlwgt", "hours-per-week"]
    assert "income" not in kinds["categorical"] and len(kinds["categorical"]) == len(ADULT_COLUMNS) - 4
    with pytest.raises(ValueError, match="lacks"):
        adult_column_kinds(pd.DataFrame([{"age": 1}]))
