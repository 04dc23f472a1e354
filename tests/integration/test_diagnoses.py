"""Every result of the committed paper-scale records that did not reproduce (or only partly)
carries a diagnosis whose pointers resolve and whose cause has the evidence it needs, and the
record carries the chapter's ``diagnoses.yml`` entry as the file states it now."""

from __future__ import annotations

import pytest

from causalbandits_lib.book import paths
from causalbandits_lib.book.diagnoses import problems, read_records
from causalbandits_lib.book.execution import chapters

RECORDS = read_records(paths.paper_results_dir())


@pytest.mark.parametrize("chapter", sorted(chapters()))
def test_every_result_that_did_not_reproduce_is_diagnosed(chapter):
    found = problems(chapter, RECORDS, paths.book_root() / "results" / "sensitivity")
    assert found == [], "\n".join(found)
