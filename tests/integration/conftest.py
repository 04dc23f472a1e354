"""The built book, shared by every test of a built page (one build per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .book_site import BOOK_SRC, build_book
from .notebook_support import ROOT


@pytest.fixture(scope="session")
def built_book() -> Path:
    """The staged smoke-profile book, built once per test session with -W."""
    return build_book()


@pytest.fixture(scope="session")
def book_pdf(built_book) -> Path:
    """The built book printed to one PDF as ``make pdf`` does (title page, bookmarks from the table
    of contents), at the site's root where the landing page links it; built once per session."""
    from causalbandits_lib.book.pdf import PDF_NAME, book_info, build_pdf, toc_pages, toc_tree

    from .browser_check import require_chromium

    chromium = require_chromium()
    toc = BOOK_SRC / "_toc.yml"
    return build_pdf(
        built_book, toc_pages(toc), built_book / PDF_NAME, chromium, info=book_info(ROOT), toc=toc_tree(toc)
    )
