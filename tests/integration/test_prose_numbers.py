"""Every number in every notebook's prose says where it comes from, and the measurements among them
are the paper-scale record's (:mod:`causalbandits_lib.book.prose`)."""

from __future__ import annotations

import pytest

from causalbandits_lib.book import paths
from causalbandits_lib.book.diagnoses import read_records
from causalbandits_lib.book.prose import untraced

RECORDS = read_records(paths.paper_results_dir())
NOTEBOOKS = sorted(
    p.relative_to(paths.notebooks_dir()).with_suffix("").as_posix() for p in paths.notebooks_dir().glob("*/*.md")
)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_every_number_of_the_prose_is_traced(notebook):
    md = (paths.notebooks_dir() / f"{notebook}.md").read_text(encoding="utf-8")
    found = untraced(md, RECORDS.get(notebook, {}), RECORDS)
    assert found == [], f"notebooks/{notebook}.md:\n" + "\n".join(found)
