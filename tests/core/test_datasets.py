"""Datasets: located and verified, downloaded from a (loopback) server, or reported unavailable."""

from __future__ import annotations

import hashlib
import http.server
import threading
import warnings
from functools import partial

import pytest

from causalbandits_lib.core import datasets
from causalbandits_lib.core.datasets import DataFile, DatasetSpec


def shared_data_dir():
    import os
    from pathlib import Path

    env = os.environ.get("CAUSALBANDITS_DATA_DIR")
    return Path(env) if env and Path(env).is_dir() else None


@pytest.fixture()
def served(tmp_path):
    """A small file served over HTTP on 127.0.0.1 (no network needed)."""
    root = tmp_path / "server"
    root.mkdir()
    payload = b"a,b\n1,2\n" * 1000
    (root / "file.csv").write_bytes(payload)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/file.csv", payload
    server.shutdown()


def spec_for(url, payload, sha=None):
    return DatasetSpec(
        "toy",
        (DataFile("toy/file.csv", sha or hashlib.sha256(payload).hexdigest(), len(payload), (url,)),),
        "CC0",
        "test",
    )


def test_download_verifies_and_writes_atomically(tmp_path, served):
    url, payload = served
    dest = tmp_path / "data"
    got = datasets.fetch(spec_for(url, payload), allow_download=True, search=[dest])
    assert got["toy/file.csv"].read_bytes() == payload
    assert got.provenance["how"] == {"toy/file.csv": "downloaded"} and got.provenance["stand_in"] is False
    # second time: found locally, no download
    again = datasets.fetch(spec_for(url, payload), allow_download=False, search=[dest])
    assert again.provenance["how"] == {"toy/file.csv": "found"}


def test_download_with_wrong_checksum_is_refused_and_leaves_nothing(tmp_path, served):
    url, payload = served
    dest = tmp_path / "data"
    with pytest.raises(datasets.DataUnavailable, match="differs from the registered"):
        datasets.fetch(spec_for(url, payload, sha="0" * 64), allow_download=True, search=[dest])
    assert not list(dest.rglob("*.csv")) and not list(dest.rglob("*.part"))


def test_present_file_with_wrong_checksum_is_an_error(tmp_path):
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "file.csv").write_bytes(b"tampered")
    with pytest.raises(datasets.ChecksumError, match="differs from the registered"):
        datasets.fetch(spec_for("http://127.0.0.1:9/x", b"original"), allow_download=False, search=[tmp_path])


def test_missing_data_offline_is_unavailable_and_says_where_it_looked(tmp_path):
    with pytest.raises(datasets.DataUnavailable, match=str(tmp_path)):
        datasets.fetch(spec_for("http://127.0.0.1:9/x", b"x"), allow_download=False, search=[tmp_path])


def test_unreachable_server_is_unavailable(tmp_path):
    with pytest.raises(datasets.DataUnavailable, match="download failed"):
        datasets.fetch(spec_for("http://127.0.0.1:9/x", b"x"), allow_download=True, search=[tmp_path], timeout=2)


def test_stand_in_is_flagged_loudly():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prov = datasets.stand_in_provenance("adult", "not found", "synthetic Adult marginals", 7)
    assert prov["stand_in"] is True and prov["generator_seed"] == 7
    assert any("STAND-IN DATA" in str(w.message) for w in caught)


@pytest.mark.skipif(shared_data_dir() is None, reason="CAUSALBANDITS_DATA_DIR is not set to the shared data folder")
@pytest.mark.parametrize("name", sorted(datasets.REGISTRY))
def test_shared_data_verifies(name):
    got = datasets.fetch(name, allow_download=False, search=[shared_data_dir()])
    assert got.provenance["stand_in"] is False


@pytest.mark.parametrize("name", ["adult", "yeast"])
def test_the_shipped_data_are_found_without_network_or_environment(name, monkeypatch):
    """A fresh clone has the two public data sets in data/: found and verified with no
    CAUSALBANDITS_DATA_DIR and downloads forbidden."""
    from causalbandits_lib.core import paths

    monkeypatch.delenv(datasets.DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(datasets.OFFLINE_ENV, "1")
    found = datasets.fetch(name, allow_download=False)
    for path in found.paths.values():
        assert path.is_relative_to(paths.book_root() / "data")


def test_checksum_message_names_the_file_once(tmp_path):
    spec = DatasetSpec("adult", (DataFile("adult/adult.data", "0" * 64, 1, ()),), "CC BY", "test")
    (tmp_path / "adult").mkdir()
    (tmp_path / "adult" / "adult.data").write_bytes(b"x")
    with pytest.raises(datasets.ChecksumError) as info:
        datasets.fetch(spec, allow_download=False, search=[tmp_path])
    assert "adult/adult/adult.data" not in str(info.value)
    assert str(info.value).count("adult.data") == 2  # the path found, and the registered file
