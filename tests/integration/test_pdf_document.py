"""The book's PDF read as a document (issue 33): its links stay inside it, its bookmarks follow the
table of contents, its sheets are numbered, its title page names the commit, and the rule behind a
claim's verdict (a fold on screen) is printed."""

from __future__ import annotations

import subprocess
import unicodedata

import pytest

from tests.pdf_support import link_annotations, outline_tree

from .book_site import pdf_pages, pdf_toc
from .notebook_support import ROOT

pytestmark = pytest.mark.book


def _flat(text: str) -> str:
    """Text without ligatures or any white space (line breaks fall anywhere in print)."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def _outline(reader) -> list[tuple[str, int, list]]:
    return outline_tree(reader)


def _page_starts(reader) -> dict[str, int]:
    """The first sheet of each page of the table of contents, read from the bookmarks (a page's
    bookmark holds its section headings first, then the pages under it in the table of contents)."""
    starts = {}

    def walk(entries, nodes) -> None:
        assert len(nodes) >= len(entries)
        for entry, (_, start, children) in zip(entries, nodes[len(nodes) - len(entries) :]):
            if entry.page:
                starts[entry.page] = start
            walk(entry.children, children)

    walk(pdf_toc(), _outline(reader)[1:])
    return starts


def _linked_from_articles(site, pages: list[str]) -> set[str]:
    """The pages of the book that another page's article (not its navigation) links to."""
    import posixpath

    from bs4 import BeautifulSoup

    linked = set()
    for rel in pages:
        soup = BeautifulSoup((site / rel).read_text(), "html.parser")
        article = soup.select_one("article.bd-article") or soup
        for link in article.select("a[href]"):
            href = link["href"].split("#")[0]
            if not href or ":" in href:
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), href))
            if target in pages and target != rel:
                linked.add(target)
    return linked


def test_no_link_of_the_pdf_points_to_the_print_server_and_pages_link_inside_it(book_pdf, built_book):
    from pypdf import PdfReader

    reader = PdfReader(str(book_pdf))
    links = link_annotations(reader)
    uris = [uri for _, uri, _ in links if uri is not None]
    inside = [(src, dst) for src, _, dst in links if dst is not None]
    local = [u for u in uris if "127.0.0.1" in u or "localhost" in u]
    assert not local, f"{len(local)} links point to the server that printed the book, e.g. {local[:3]}"
    # a page that another page's text links to is reached by a link inside the PDF
    pages = pdf_pages(pdf_toc())
    starts = _page_starts(reader)
    assert sorted(starts) == sorted(pages)
    bounds = sorted(starts.values()) + [len(reader.pages)]
    linked = _linked_from_articles(built_book, pages)
    assert linked, "the book's pages link to each other"
    for rel in sorted(linked):
        start = starts[rel]
        end = bounds[bounds.index(start) + 1]
        assert any(start <= dst < end and not start <= src < end for src, dst in inside), rel


def test_bookmarks_have_an_entry_per_part_and_per_page_of_the_table_of_contents(book_pdf):
    from pypdf import PdfReader

    reader = PdfReader(str(book_pdf))
    outline = _outline(reader)
    tree = pdf_toc()
    captions = [e.caption for e in tree if e.caption is not None]
    assert captions, "the table of contents has parts"
    assert [t for t, _, _ in outline[2:]] == captions
    for entry, (_, start, children) in zip([e for e in tree if e.caption is not None], outline[2:]):
        assert len(children) == len(entry.children), entry.caption
        firsts = [p for _, p, _ in children]
        assert firsts == sorted(firsts) and firsts[0] == start, entry.caption


def test_sheets_are_numbered_and_the_title_page_names_the_commit(book_pdf):
    from pypdf import PdfReader

    reader = PdfReader(str(book_pdf))
    n = len(reader.pages)
    middle = n // 2
    assert f"{middle + 1} / {n}" in " ".join(reader.pages[middle].extract_text().split())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert head and head in reader.pages[0].extract_text()
    assert reader.metadata.title and _flat(reader.metadata.title) in _flat(reader.pages[0].extract_text())


def test_a_claims_rule_fold_is_printed(book_pdf, built_book):
    """The first notebook page whose claims table has a "rule" fold: the shortest of its rules (the
    least likely to be split across a page break) is in the text of that page's sheets."""
    from bs4 import BeautifulSoup
    from pypdf import PdfReader

    chosen = None
    for rel in pdf_pages(pdf_toc()):
        if not rel.startswith("notebooks/"):
            continue
        soup = BeautifulSoup((built_book / rel).read_text(), "html.parser")
        rules = []
        for fold in soup.select("table details"):
            summary = fold.find("summary")
            if summary is not None and summary.get_text(strip=True) == "rule":
                summary.extract()
                rules.append(fold.get_text(" ", strip=True))
        if rules:
            chosen = (rel, min(rules, key=len))
            break
    assert chosen, "no notebook page has a claims table with a rule fold"
    rel, rule = chosen
    reader = PdfReader(str(book_pdf))
    starts = _page_starts(reader)
    bounds = sorted(starts.values()) + [len(reader.pages)]
    start = starts[rel]
    end = bounds[bounds.index(start) + 1]
    text = _flat("".join(reader.pages[i].extract_text() for i in range(start, end)))
    assert _flat(rule) in text, f"the rule of a claim on {rel} is not printed: {rule!r}"
