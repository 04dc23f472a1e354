"""The book builds with zero warnings (-W) from the executed smoke-profile notebooks.

Building from the executed copies (with execution off) checks everything the build checks, the
table of contents, cross-references, citations, MyST syntax and the rendering of every output,
without executing every notebook a third time in CI. ``make book`` executes them for real.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .notebook_support import ROOT, all_notebooks, execute_smoke, executed_copy

BOOK_SRC = ROOT / "_build" / "test-book" / "src"


def stage_book() -> Path:
    """A copy of the book's sources with every notebook replaced by its executed smoke copy."""
    if BOOK_SRC.exists():
        shutil.rmtree(BOOK_SRC)
    BOOK_SRC.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, BOOK_SRC / name)
    shutil.copytree(ROOT / "book", BOOK_SRC / "book")
    # The notebooks are staged as executed .ipynb copies; point the reproducibility page's claim
    # links (written against the .md sources) at them.
    page = BOOK_SRC / "book" / "reproducibility.md"
    if page.is_file():
        page.write_text(re.sub(r"(\(\.\./notebooks/[^)#]+)\.md#", r"\1.ipynb#", page.read_text()))
    for spec in all_notebooks():
        src = executed_copy(spec)
        if not src.is_file():  # the notebook tests did not run in this session: execute now
            execute_smoke(spec)
        dest = BOOK_SRC / "notebooks" / spec.chapter / f"{spec.name}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
    config = yaml.safe_load((BOOK_SRC / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    (BOOK_SRC / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return BOOK_SRC


@pytest.mark.book
def test_book_builds_without_warnings():
    src = stage_book()
    out = src.parent / "_build"
    if out.exists():
        shutil.rmtree(out)
    jb = Path(sys.executable).parent / "jupyter-book"
    proc = subprocess.run(
        [str(jb), "build", str(src), "--path-output", str(src.parent), "--warningiserror", "--keep-going", "--builder", "html"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, f"book build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    html = src.parent / "_build" / "html"
    for spec in all_notebooks():
        page = html / "notebooks" / spec.chapter / f"{spec.name}.html"
        assert page.is_file(), f"no page for {spec.id}"
        text = page.read_text()
        assert "claims" in text.lower()
    assert (html / "book" / "reproducibility.html").is_file()
