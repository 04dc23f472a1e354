"""A clean clone of the checkout for the citation and source-archive tests (its origin is a local
path, so it has no address), and git run in a folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from causalbandits_lib.book import paths


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def clone_book(tmp_path_factory) -> Path:
    """A clone of the checkout, clean, with the records, in a fresh temporary folder."""
    where = tmp_path_factory.mktemp("clone") / "book"
    git(paths.book_root(), "clone", "--quiet", str(paths.book_root()), str(where))
    return where
