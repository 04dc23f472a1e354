"""The book's PDF: every page of the table of contents, printed in order, offline; the first page
renders. A two-page site stands in for the built book here (tests/integration builds the real one)."""

from __future__ import annotations

import pytest

from causalbandits_lib.book.pdf import PdfError, build_pdf, find_chromium, main, render_first_page, toc_pages
from tests.pdf_support import link_annotations, outline_tree

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


# ------------------------------------------------------------------ the PDF as a document
# A three-page site: the landing page links to an anchor of a notebook page (on its second sheet),
# to a download, to another site and to the PDF itself; the notebook page holds a closed "rule"
# fold, a code line far wider than the page and two long sections.

DOC_TOC = """format: jb-book
root: book/intro
parts:
  - caption: The first part
    chapters:
      - file: book/chapters/one
      - file: notebooks/one/01_a
"""

LONG_CODE = "result = compute(" + ", ".join(f"argument_{k}" for k in range(40)) + ")  # LASTWORDOFLINE"


def _doc_site(tmp_path):
    root = tmp_path / "html"
    filler = "".join(f"<p>Filler paragraph {k} of the section, long enough to fill a sheet.</p>" for k in range(60))
    pages = {
        "book/intro.html": (
            "<h1>The landing page</h1>"
            "<p><a href='../notebooks/one/01_a.html#second-section'>to the second section</a></p>"
            "<p><a href='../_downloads/abc/01_a.ipynb'>the notebook file</a></p>"
            "<p><a href='https://example.org/paper'>the paper</a></p>"
            "<p><a href='../book.pdf'>this PDF</a></p>"
        ),
        "book/chapters/one.html": "<h1>Chapter one</h1><p><a href='../../notebooks/one/01_a.html'>the notebook</a></p>",
        "notebooks/one/01_a.html": (
            "<h1>A notebook page</h1>"
            "<table><tr><td>claim.one</td><td>reproduced <details><summary>rule</summary>"
            "THE RULE THAT DECIDED IT</details></td></tr></table>"
            f"<pre>{LONG_CODE}</pre>"
            f"<h2 id='first-section'>First section</h2>{filler}"
            f"<h2 id='second-section'>Second section</h2><p>SECONDSECTIONTEXT</p>{filler}"
        ),
    }
    for rel, body in pages.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><head><title>t</title></head><body>{body}</body></html>")
    (tmp_path / "_toc.yml").write_text(DOC_TOC)
    return root


INFO_COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def document(tmp_path_factory):
    """The small site printed once with a title page and the table of contents' bookmarks."""
    if find_chromium() is None:
        pytest.skip("Chromium not installed (apt-get install chromium)")
    from pypdf import PdfReader

    from causalbandits_lib.book.pdf import BookInfo, toc_tree

    tmp_path = tmp_path_factory.mktemp("doc")
    root = _doc_site(tmp_path)
    info = BookInfo(
        title="A small book",
        authors=["A. Author", "B. Author"],
        subject="What the small book is about",
        commit=INFO_COMMIT,
        dirty=True,
        date="2026-01-02",
    )
    toc = tmp_path / "_toc.yml"
    out = build_pdf(root, toc_pages(toc), root / "book.pdf", info=info, toc=toc_tree(toc))
    return PdfReader(str(out)), out


def _links(reader):
    """Every link annotation: (sheet it is on, URI or None, sheet it leads to or None)."""
    return link_annotations(reader)


def _text(reader, sheet):
    import unicodedata

    return " ".join(unicodedata.normalize("NFKC", reader.pages[sheet].extract_text()).split())


def test_links_between_pages_lead_inside_the_pdf_and_none_to_the_print_server(document):
    reader, _ = document
    links = _links(reader)
    assert links
    assert not [u for _, u, _ in links if u and ("127.0.0.1" in u or "localhost" in u)], links
    uris = {u for _, u, _ in links if u}
    assert "https://example.org/paper" in uris  # another site: kept
    assert "_downloads/abc/01_a.ipynb" in uris  # a file of the site: relative to the PDF at its root
    intro = 1  # after the title page
    from_intro = [t for s, u, t in links if s == intro and u is None]
    second = next(i for i in range(len(reader.pages)) if "SECONDSECTIONTEXT" in _text(reader, i))
    assert second > intro + 2, "the anchor is on a later sheet of the notebook page, not its first"
    assert second in from_intro, "the link to #second-section leads to the sheet that holds it"
    assert 0 in from_intro, "the link to the PDF itself leads to its title page"
    chapter = next(i for i in range(len(reader.pages)) if "Chapter one" in _text(reader, i))
    notebook = next(i for i in range(len(reader.pages)) if "A notebook page" in _text(reader, i))
    assert (chapter, None, notebook) in links, "a link to a page leads to that page's first sheet"


def test_bookmarks_follow_the_table_of_contents(document):
    reader, _ = document
    outline = outline_tree(reader)
    assert [t for t, _, _ in outline] == ["Title page", "The landing page", "The first part"]
    part = outline[2]
    assert [t for t, _, _ in part[2]] == ["Chapter one", "A notebook page"]
    notebook = part[2][1]
    assert notebook[1] == next(i for i in range(len(reader.pages)) if "A notebook page" in _text(reader, i))
    sections = {t: p for t, p, _ in notebook[2]}
    assert set(sections) == {"First section", "Second section"}  # the page's own headings under it
    assert "SECONDSECTIONTEXT" in _text(reader, sections["Second section"])
    assert reader.trailer["/Root"]["/PageMode"] == "/UseOutlines"


def test_title_page_metadata_and_page_numbers(document):
    reader, _ = document
    title = _text(reader, 0)
    assert "A small book" in title and "A. Author, B. Author" in title
    assert f"{INFO_COMMIT} with uncommitted changes" in title and "2026-01-02" in title
    meta = reader.metadata
    assert (meta.title, meta.author, meta.subject) == (
        "A small book",
        "A. Author, B. Author",
        "What the small book is about",
    )
    n = len(reader.pages)
    assert n >= 5
    for i in range(1, n):  # continuous across the joined pages; the title page carries none
        assert f"{i + 1} / {n}" in _text(reader, i), i
    assert f"1 / {n}" not in title


def test_folds_print_open_and_code_wraps_inside_the_page(document):
    import pypdfium2 as pdfium

    reader, out = document
    notebook = next(i for i in range(len(reader.pages)) if "A notebook page" in _text(reader, i))
    assert "THE RULE THAT DECIDED IT" in _text(reader, notebook)
    doc = pdfium.PdfDocument(str(out))
    try:
        page = doc[notebook]
        width = page.get_width()
        text = page.get_textpage()
        hit = text.search("LASTWORDOFLINE").get_next()
        assert hit is not None, "the end of the long code line is printed"
        right = max(text.get_charbox(hit[0] + k)[2] for k in range(hit[1]))
        assert right <= width, f"the code line runs off the page ({right:.0f} > {width:.0f} pt)"
    finally:
        doc.close()


def test_book_info_reads_the_config_the_citation_and_git(tmp_path):
    import subprocess

    from causalbandits_lib.book.pdf import book_info

    (tmp_path / "_config.yml").write_text('title: "The title"\n')
    (tmp_path / "CITATION.cff").write_text(
        "cff-version: 1.2.0\ntitle: other\nabstract: >-\n  What it\n  is about.\n"
        "authors:\n  - name: A Group\n  - given-names: Ada\n    family-names: Lovelace\n"
    )
    info = book_info(tmp_path)
    assert (info.title, info.authors, info.subject, info.commit) == (
        "The title",
        ["A Group", "Ada Lovelace"],
        "What it is about.",
        None,
    )
    assert info.commit_line() == "not built from a git checkout"

    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True, capture_output=True
        )

    git("init", "-q")
    git("add", "_config.yml", "CITATION.cff")
    git("commit", "-q", "-m", "x")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert book_info(tmp_path).commit_line() == head
    (tmp_path / "_config.yml").write_text('title: "Changed"\n')
    assert book_info(tmp_path).commit_line() == f"{head} with uncommitted changes"


def test_toc_tree_keeps_parts_chapters_and_sections(tmp_path):
    from causalbandits_lib.book.pdf import toc_tree

    (tmp_path / "_toc.yml").write_text(TOC)
    tree = toc_tree(tmp_path / "_toc.yml")
    assert [(e.page, e.caption) for e in tree] == [("book/intro.html", None), (None, "A part"), (None, "Another")]
    assert [(c.page, [s.page for s in c.children]) for c in tree[1].children] == [
        ("book/chapters/one.html", ["notebooks/one/01_a.html"])
    ]
    assert tree[2].first_page() == "notebooks/two/01_b.html"
