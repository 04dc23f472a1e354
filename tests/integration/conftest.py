"""The built book, shared by every test of a built page (one build per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .book_site import build_book, pdf_pages, pdf_toc
from .notebook_support import ROOT


@pytest.fixture(scope="session")
def built_book() -> Path:
    """The staged smoke-profile book, built once per test session with -W."""
    return build_book()


@pytest.fixture(scope="session")
def book_pdf(built_book) -> Path:
    """The built book printed to one PDF by ``make pdf``'s builder (title page, bookmarks from the
    table of contents), at the site's root where the landing page links it; built once per session,
    from the sample of pages :data:`book_site.PDF_SAMPLE` (``make book`` prints them all)."""
    from causalbandits_lib.book.pdf import PDF_NAME, book_info, build_pdf

    from .browser_check import require_chromium

    chromium = require_chromium()
    tree = pdf_toc()
    return build_pdf(built_book, pdf_pages(tree), built_book / PDF_NAME, chromium, info=book_info(ROOT), toc=tree)
