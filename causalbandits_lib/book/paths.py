"""Where the book's sources, records and committed results live."""

from __future__ import annotations

from pathlib import Path

from ..core.paths import ROOT_ENV, book_root

__all__ = ["ROOT_ENV", "book_root", "notebooks_dir", "paper_results_dir", "default_record_dir"]


def notebooks_dir() -> Path:
    """Folder with one sub-folder of MyST notebooks per chapter."""
    return book_root() / "notebooks"


def paper_results_dir() -> Path:
    """Folder of the committed paper-profile records (``results/paper/<chapter>/<notebook>.json``)."""
    return book_root() / "results" / "paper"


def default_record_dir(profile: str) -> Path:
    """Where a notebook writes its record when ``CAUSALBANDITS_RECORD_DIR`` is not set."""
    return book_root() / "_build" / "records" / profile
