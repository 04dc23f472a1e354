"""The book's PDF: every page of the table of contents, printed in order, offline; the first page
renders. A two-page site stands in for the built book here (tests/integration builds the real one)."""

from __future__ import annotations

import pytest

from causalbandits_lib.book.pdf import PdfError, build_pdf, find_chromium, main, render_first_page, toc_pages

TOC = """format: jb-book
root: book/intro
parts:
  - caption: A part
    chapters:
      - file: book/chapters/one
        sections:
          - file: notebooks/one/01_a
  - caption: Another
    chapters:
      - file: notebooks/two/01_b.md
"""


def test_toc_pages_follow_the_reading_order(tmp_path):
    (tmp_path / "_toc.yml").write_text(TOC)
    assert toc_pages(tmp_path / "_toc.yml") == [
        "book/intro.html",
        "book/chapters/one.html",
        "notebooks/one/01_a.html",
        "notebooks/two/01_b.html",
    ]


def _site(tmp_path, pages):
    root = tmp_path / "html"
    for i, rel in enumerate(pages):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"<p>Page {i}, paragraph {k}: the book in print.</p>" for k in range(80))
        # a request to another host must not be made (it is refused, and the page still prints)
        path.write_text(f"<html><body><h1>Page {i}</h1>{body}<img src='https://example.org/x.png'></body></html>")
    return root


@pytest.mark.skipif(find_chromium() is None, reason="Chromium not installed (apt-get install chromium)")
def test_the_pdf_has_every_page_in_order_and_its_first_page_renders(tmp_path):
    pages = ["book/intro.html", "notebooks/one/01_a.html"]
    root = _site(tmp_path, pages)
    out = build_pdf(root, pages, tmp_path / "book.pdf")
    n, size = render_first_page(out, tmp_path / "first.png")
    assert n >= 4  # two long pages, each more than one A4 sheet
    assert size[0] > 500 and size[1] > size[0]  # an A4 page, portrait
    from PIL import Image, ImageStat

    stat = ImageStat.Stat(Image.open(tmp_path / "first.png").convert("L"))
    assert stat.stddev[0] > 5, "the first page is blank"
    assert not list(tmp_path.glob(".pdf-*")), "the staging folder is removed"


def test_a_missing_page_or_site_is_one_clear_error(tmp_path, capsys):
    root = _site(tmp_path, ["book/intro.html"])
    with pytest.raises(PdfError, match=r"page notebooks/x.html is not in the built site .* \(run make book first\)"):
        build_pdf(root, ["book/intro.html", "notebooks/x.html"], tmp_path / "book.pdf", chromium="/bin/true")
    assert not (tmp_path / "book.pdf").exists()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/missing\n")
    code = main([str(root), "--toc", str(tmp_path / "_toc.yml"), "--out", str(tmp_path / "b.pdf")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "book/missing.html" in err
