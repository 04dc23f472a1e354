"""The book's sources are well-formed before any build: bibliography, table of contents."""

from __future__ import annotations

import collections
import re

import yaml
from pybtex.database import parse_file


def test_bibliography_parses_without_duplicate_keys(root):
    text = (root / "book" / "references.bib").read_text()
    keys = re.findall(r"^@\w+\{([^,\s]+),", text, flags=re.M)
    dupes = [k for k, n in collections.Counter(keys).items() if n > 1]
    assert not dupes, f"duplicate BibTeX keys: {dupes}"
    db = parse_file(str(root / "book" / "references.bib"))
    assert len(db.entries) == len(keys)
    for key in ("huang2022fucb", "gao2021bestfair", "chen2025cclb", "huang2024pcb", "wang2021fairx"):
        assert key in db.entries


def test_every_notebook_is_in_the_table_of_contents_once(root):
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert len(files) == len(set(files))
    notebooks = sorted(p.relative_to(root).with_suffix("").as_posix() for p in (root / "notebooks").glob("*/*.md"))
    assert sorted(f for f in files if f.startswith("notebooks/")) == notebooks
