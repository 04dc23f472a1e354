"""One behaviour for one situation (issue 34, item 9): a record or folder that does not exist is bad
usage for every verb that reads records (exit code 2, one line naming the path), and the book ships
the licence its metadata declares (item 8)."""

from __future__ import annotations

import tomllib

import pytest

from causalbandits_lib.book import paths
from causalbandits_lib.book.cli import main

MISSING = "/nonexistent/record.json"

VERBS = [
    ["cite", MISSING],
    ["diff", MISSING, MISSING],
    ["verify", MISSING],
    ["collect", "/nonexistent/sweep"],
    ["rejudge", MISSING],
]


@pytest.mark.parametrize("argv", VERBS, ids=[v[0] for v in VERBS])
def test_a_missing_path_is_bad_usage_for_every_verb(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("causalbandits: error:") and "/nonexistent/" in err[0]


def test_the_licence_the_metadata_declares_is_shipped():
    root = paths.book_root()
    declared = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]
    assert declared == "MIT"
    text = (root / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert "license: MIT" in (root / "CITATION.cff").read_text(encoding="utf-8")
