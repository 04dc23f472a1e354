"""Issue 33, item 5: a record names where its data were relative to the data folder, never by a
folder of the machine that wrote it; records written before (with the machine's folder) still
load, diff, cite and verify as before, because no hash and no comparison reads the location."""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from causalbandits_lib.book import records
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.book.verify import compare_data
from causalbandits_lib.core import checks, datasets, paths
from tests.book.fake import fake_record
from tests.record_paths import absolute_paths

NB = "fairx/01_fairness_of_exposure"
SHIPPED = paths.book_root() / "data"


@pytest.fixture()
def data_folder(tmp_path, monkeypatch):
    """A copy of the shipped yeast data in a folder named by CAUSALBANDITS_DATA_DIR."""
    folder = tmp_path / "elsewhere" / "data"
    shutil.copytree(SHIPPED / "yeast", folder / "yeast")
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(folder))
    return folder


def test_the_location_is_relative_to_the_data_folder_that_held_the_files(data_folder, monkeypatch):
    got = datasets.fetch("yeast", allow_download=False)
    assert got["yeast/yeast.arff"].parent == data_folder / "yeast"  # read from the folder of the variable
    assert got.provenance["location"] == "yeast"
    assert got.provenance["data_folder"] == "$CAUSALBANDITS_DATA_DIR"
    assert absolute_paths(got.provenance, data_folder) == []
    # a reader recovers the files by their checksums under any data folder
    assert datasets.locate(got.provenance) == data_folder
    monkeypatch.delenv(datasets.DATA_DIR_ENV)
    shipped = datasets.fetch("yeast", allow_download=False)
    assert (shipped.provenance["location"], shipped.provenance["data_folder"]) == ("yeast", "data")
    assert datasets.locate(got.provenance) == SHIPPED
    assert datasets.locate(got.provenance, search=[data_folder.parent]) is None  # not one level up


def test_no_record_written_in_a_test_run_holds_an_absolute_path(data_folder, record_dir, tmp_path):
    """A notebook session that read a real data set from a folder outside the checkout writes its
    record; no string in it (keys included) is a path of this machine."""
    nb = setup_notebook(NB, profile="smoke")
    datasets.fetch("yeast", allow_download=False)
    nb.metric("rows", 2417)
    nb.claim("fairx.t.real", "Table 2: FairX-UCB has the smallest fairness regret", checks.check_at_most(1, 2))
    path = nb.finish(show=False)
    record = json.loads(path.read_text())
    assert [d["name"] for d in record["data"]] == ["yeast"]  # the real data set is in the record
    assert absolute_paths(record, tmp_path, data_folder) == []


def test_the_path_check_sees_an_absolute_location():
    """The walk of the test above finds a machine's folder where the records of before had one."""
    old = {"data": [{"name": "yeast", "location": "/work/shared/data/yeast"}], "reason": "1/δ = 2 (E[Y]/n)"}
    assert absolute_paths(old) == ["data[0].location: /work/shared/data/yeast"]


def test_old_and_new_locations_give_the_same_results_hash_diff_and_data_check(data_folder, tmp_path, capsys):
    provenance = datasets.fetch("yeast", allow_download=False).provenance
    old_provenance = dict(provenance, location=str(data_folder / "yeast"))  # as records were written before
    old_provenance.pop("data_folder")
    new = fake_record(notebook=NB, profile="paper", parameters={"profile": "paper", "seed": 0}, data=[provenance])
    old = copy.deepcopy(new) | {"data": [old_provenance]}
    assert records.results_hash(old) == records.results_hash(new)
    old_path = records.write_record(old, tmp_path / "old" / "fairx" / "01_fairness_of_exposure.json")
    new_path = records.write_record(new, tmp_path / "new" / "fairx" / "01_fairness_of_exposure.json")
    assert records.load_record(old_path)["data"][0]["location"].startswith("/")  # an old record still loads
    assert compare_data(records.load_record(old_path), records.load_record(new_path)) == []  # verify's data check
    assert main(["diff", str(old_path), str(new_path)]) == 0
    capsys.readouterr()
    for path in (old_path, new_path):
        assert main(["cite", str(path)]) == 0, capsys.readouterr().err
        assert "yeast" in capsys.readouterr().out
