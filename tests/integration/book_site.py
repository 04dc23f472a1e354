"""The book built once per test session from the executed smoke-profile notebooks (see
``test_book.py``): staged by :func:`stage_book`, built by the session fixture ``built_book`` of
``conftest.py``, which every test of a built page shares (one build per ``make test``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

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
    shutil.copytree(ROOT / "static", BOOK_SRC / "static")
    for spec in all_notebooks():
        src = executed_copy(spec)
        source = ROOT / "notebooks" / spec.chapter / f"{spec.name}.md"
        if not src.is_file() or src.stat().st_mtime < source.stat().st_mtime:
            execute_smoke(spec)  # not executed by the notebook tests yet, or edited since
        dest = BOOK_SRC / "notebooks" / spec.chapter / f"{spec.name}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
    # Links to notebook sections name the MyST source (.md); here the executed .ipynb replaces it.
    for page in (BOOK_SRC / "book").rglob("*.md"):
        text = page.read_text()
        page.write_text(re.sub(r"(\((?:\.\./)+notebooks/[^)#]+)\.md(#|\))", r"\1.ipynb\2", text))
    config = yaml.safe_load((BOOK_SRC / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    (BOOK_SRC / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return BOOK_SRC


HTML = BOOK_SRC.parent / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "test-book" / "screenshots"


def build_book() -> Path:
    """Build the staged book; the build must pass with -W (an assertion names the failure)."""
    src = stage_book()
    out = src.parent / "_build"
    if out.exists():
        shutil.rmtree(out)
    jb = Path(sys.executable).parent / "jupyter-book"
    proc = subprocess.run(
        [
            str(jb),
            "build",
            str(src),
            "--path-output",
            str(src.parent),
            "--warningiserror",
            "--keep-going",
            "--builder",
            "html",
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "CAUSALBANDITS_PUBLISH": "1"},  # as `make book`: no page on a stand-in
    )
    assert proc.returncode == 0, f"book build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    return HTML


#: The pages the tests print to PDF, a sample of the table of contents: ``make pdf`` prints every
#: page (46 pages, some 1,500 sheets, about four minutes of the twenty ``make test`` may take), the
#: tests print what the PDF's checks need. Every part keeps its opening page, so every bookmark level
#: is there; the primer keeps its notebooks (claims tables with rule folds, links between pages); the
#: reproducibility page, a third of the book's sheets and all of one kind, is left out.
PDF_SAMPLE = frozenset(
    {
        "book/intro.html",
        "book/notation.html",
        "book/sweeps.html",
        "book/chapters/primer.html",
        "notebooks/primer/01_bandits_and_regret.html",
        "notebooks/primer/02_seeing_and_doing.html",
        "notebooks/primer/03_soft_interventions.html",
        "book/chapters/fucb.html",
        "notebooks/fucb/01_dseparation_estimator.html",
        "book/chapters/bestfair.html",
        "book/chapters/cclb.html",
        "book/chapters/pcb.html",
        "book/chapters/fairx.html",
        "book/chapters/synthesis.html",
        "book/references.html",
    }
)


def pdf_toc(keep=PDF_SAMPLE) -> list:
    """The table of contents restricted to the pages in ``keep`` (a part stays when a page of it
    does), as :func:`causalbandits_lib.book.pdf.toc_tree` gives it: what the tests print."""
    from causalbandits_lib.book.pdf import TocEntry, toc_tree

    def prune(entries):
        out = []
        for entry in entries:
            children = prune(entry.children)
            if entry.page in keep or (entry.page is None and children):
                out.append(TocEntry(page=entry.page, caption=entry.caption, children=children))
            elif entry.page is not None and children:
                raise ValueError(f"{entry.page} is left out of the PDF sample but pages under it are not")
        return out

    tree = prune(toc_tree(BOOK_SRC / "_toc.yml"))
    missing = set(keep) - set(pdf_pages(tree))
    if missing:
        raise ValueError(f"pages of the PDF sample are not in the table of contents: {sorted(missing)}")
    return tree


def pdf_pages(tree: list) -> list[str]:
    """The pages of a table-of-contents tree in reading order."""
    out = []
    for entry in tree:
        if entry.page:
            out.append(entry.page)
        out.extend(pdf_pages(entry.children))
    return out
