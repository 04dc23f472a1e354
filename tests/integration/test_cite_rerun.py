"""A reviewer with only a browser can cite and re-run (issue 33, item 4), on the built book:

- every notebook page has a "Re-run this page" box whose command the CLI's own parser accepts,
  names that page's notebook and gives the parameters the page was executed with (papermill's
  record of them in the executed notebook's metadata, not the cell the extension reads);
- every row of every claims table has a "cite" link to a page of the site that holds that claim's
  id and its BibTeX;
- the download menu of a notebook page offers the executed ``.ipynb``;
- every page's header links the book's PDF and ``CITATION.cff`` at the site's root;
- every reference with a DOI shows it, and the bibliography's labels are the author-year
  citations of the text.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from causalbandits_lib.book.cli import build_parser
from causalbandits_lib.book.execution import parse_assignments, resolve_target
from causalbandits_lib.book.params import parse_cli_value

from .book_site import BOOK_SRC
from .notebook_support import ROOT, all_notebooks

pytestmark = pytest.mark.book


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _pages(site: Path) -> list[Path]:
    """The site's pages (not its assets, downloads or citation pages, nor the root's redirect stub)."""
    skip = {"_static", "_downloads", "_sources", "cite"}
    return [
        p
        for p in sorted(site.rglob("*.html"))
        if not skip & set(p.relative_to(site).parts)
        and 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8")[:300]
    ]


def _resolves(page: Path, href: str) -> Path:
    return (page.parent / href.split("#", 1)[0]).resolve()


def test_every_notebook_page_has_a_rerun_box_with_the_parameters_it_ran_with(built_book):
    for spec in all_notebooks():
        page = built_book / "notebooks" / spec.chapter / f"{spec.name}.html"
        box = _soup(page).select_one("#re-run-this-page")
        assert box is not None, f"{spec.id}: no re-run box"
        assert "Re-run this page" in box.get_text()
        command = box.select_one("pre").get_text()
        words = shlex.split(command)
        assert words[:2] == ["causalbandits", "run"], command
        args = build_parser().parse_args(words[1:])
        notebooks = resolve_target(args.target)
        assert [nb.id for nb in notebooks] == [spec.id], command
        given = parse_assignments(args.param or [], notebooks, profile=args.profile)[spec.id]
        # what papermill says it executed the staged notebook with
        executed = json.loads((BOOK_SRC / "notebooks" / spec.chapter / f"{spec.name}.ipynb").read_text())
        injected = executed["metadata"]["papermill"]["parameters"]
        declared = spec.all_parameters()
        expected = {k: parse_cli_value(declared[k], str(v)) if k != "profile" else v for k, v in injected.items()}
        assert given == expected, f"{spec.id}: {command} gives {given}, the page ran with {expected}"


def _claims_rows(site: Path):
    """(page, claim id, cite link or None) for every row of every claims table in the site."""
    for page in _pages(site):
        soup = _soup(page)
        for table in soup.select("div.claims-table table"):
            for row in table.select("tbody tr"):
                first = row.find("td")
                code = first.find("code") if first is not None else None
                if code is None:
                    continue
                link = first.select_one("a.claim-cite")
                yield page, code.get_text(), (link.get("href") if link is not None else None)


def test_every_claims_row_links_its_citation_with_id_and_bibtex(built_book):
    rows = list(_claims_rows(built_book))
    pages = {page for page, _, _ in rows}
    # the reproducibility page and every notebook page have claims tables
    assert built_book / "book" / "reproducibility.html" in pages
    assert len([p for p in pages if p.parts[-3] == "notebooks"]) == len(all_notebooks())
    missing = [f"{page.relative_to(built_book)}: {cid}" for page, cid, href in rows if not href]
    assert not missing, f"{len(missing)} claims rows without a cite link, e.g. {missing[:5]}"
    checked: dict[Path, str] = {}
    for page, claim_id, href in rows:
        target = _resolves(page, href)
        assert target.is_file(), f"{page.relative_to(built_book)}: cite link {href} of {claim_id} does not resolve"
        assert target.parent == (built_book / "cite").resolve(), href
        if target not in checked:
            checked[target] = target.read_text(encoding="utf-8")
        text = BeautifulSoup(checked[target], "html.parser")
        bibtex = text.select_one("#cite-bibtex").get_text()
        assert bibtex.startswith("@misc{") and claim_id.replace("_", "\\_") in bibtex, (claim_id, href)
        assert f"Claim {claim_id} " in text.select_one("#cite-text").get_text(), (claim_id, href)
        assert text.select("button.cite-copy") and "cite.js" in checked[target]
    assert (built_book / "_static" / "cite.js").is_file()


def test_the_download_menu_of_a_notebook_page_offers_the_executed_ipynb(built_book):
    for spec in all_notebooks():
        page = built_book / "notebooks" / spec.chapter / f"{spec.name}.html"
        menu = _soup(page).select_one("div.dropdown-download-buttons")
        assert menu is not None, spec.id
        links = {a.get_text(strip=True): a.get("href") for a in menu.select("a")}
        assert ".ipynb" in links, f"{spec.id}: download menu offers {sorted(links)}"
        target = _resolves(page, links[".ipynb"])
        assert target == (built_book / "_downloads" / "notebooks" / spec.chapter / f"{spec.name}.ipynb").resolve()
        assert target.is_file()


def test_every_page_header_links_the_pdf_and_citation_cff(built_book):
    from causalbandits_lib.book.pdf import PDF_NAME

    site = built_book.resolve()
    pages = _pages(built_book)
    assert len(pages) > len(all_notebooks())
    for page in pages:
        header = _soup(page).select_one(".article-header-buttons")
        assert header is not None, page
        targets = {_resolves(page, a["href"]) for a in header.select("a[href]")}
        rel = page.relative_to(built_book)
        assert site / PDF_NAME in targets, f"{rel}: no header link to {PDF_NAME}"
        assert site / "CITATION.cff" in targets, f"{rel}: no header link to CITATION.cff"
    assert "cff-version" in (built_book / "CITATION.cff").read_text(encoding="utf-8")


def _strip(html_text: str) -> str:
    return re.sub(r"\s+", " ", BeautifulSoup(html_text, "html.parser").get_text()).strip()


def test_the_bibliography_shows_every_doi_and_labels_as_the_text_cites(built_book):
    from pybtex.database import parse_file

    bib = parse_file(str(ROOT / "book" / "references.bib"))
    page = built_book / "book" / "references.html"
    soup = _soup(page)
    text = soup.get_text()
    links = {a.get("href") for a in soup.select("a[href]")}
    with_doi = {key: e.fields["doi"] for key, e in bib.entries.items() if "doi" in e.fields}
    assert len(with_doi) >= 10
    for key, doi in with_doi.items():
        assert f"https://doi.org/{doi}" in links and doi in text, f"{key}: DOI {doi} not shown"
    labels = {}
    for entry in soup.select("div.citation"):
        label = entry.select_one("span.label").get_text().strip("[]")
        labels[entry["id"]] = label
    assert len(labels) == len(bib.entries)
    assert not [v for v in labels.values() if re.fullmatch(r"\d+", v)], "numeric labels"
    # each citation in the text reads as its entry's label ({cite:p} links "Author et al., 2022",
    # {cite:t} writes "Author et al. (2022)" and links the year)
    cited = 0
    for other in _pages(built_book):
        if other == page:
            continue
        for a in _soup(other).select('a[href*="references.html#"]'):
            anchor = a["href"].rsplit("#", 1)[1]
            if anchor not in labels:
                continue
            shown = _strip(str(a))
            where = f"{other.relative_to(built_book)}: {shown!r} cites [{labels[anchor]}]"
            if re.fullmatch(r"\d{4}[a-z]?", shown):
                assert labels[anchor].endswith(f", {shown}"), where
            else:
                assert shown == labels[anchor], where
            cited += 1
    assert cited >= 5
