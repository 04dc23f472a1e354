"""Shared fixtures. Tests never need the network; data tests use CAUSALBANDITS_DATA_DIR if set."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture()
def record_dir(tmp_path, monkeypatch):
    """Send records of NotebookRun sessions to a temporary folder."""
    monkeypatch.setenv("CAUSALBANDITS_RECORD_DIR", str(tmp_path / "records"))
    return tmp_path / "records"
