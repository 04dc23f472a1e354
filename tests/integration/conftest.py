"""The built book, shared by every test of a built page (one build per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .book_site import build_book


@pytest.fixture(scope="session")
def built_book() -> Path:
    """The staged smoke-profile book, built once per test session with -W."""
    return build_book()
