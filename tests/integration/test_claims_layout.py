"""Claims tables that cannot overlap (issue 33, item 2): at 390, 1400 and 1920 px, on the
reproducibility page and the three notebook pages with the most claims rows, no two cells' text
intersect and no text runs out of its cell or is clipped (measured in headless Chromium by
``browser_check.check_claims_layout``)."""

from __future__ import annotations

import pytest

from .book_site import SCREENSHOTS


def _chromium():
    from .browser_check import require_chromium

    return require_chromium()


@pytest.mark.book
def test_claims_tables_do_not_overlap_at_three_widths(built_book):
    from .browser_check import LAYOUT_WIDTHS, check_claims_layout, claims_pages

    chromium = _chromium()
    pages = claims_pages(built_book)
    assert pages[0] == "book/reproducibility.html" and len(pages) == 4
    shots = {(p, w): SCREENSHOTS / f"claims-{p.replace('/', '-')[:-5]}-{w}.png" for p in pages for w in LAYOUT_WIDTHS}
    found = check_claims_layout(built_book, pages, chromium, screenshots=shots)
    assert set(found) == {(p, w) for p in pages for w in LAYOUT_WIDTHS}
    for (page, width), state in found.items():
        assert state["tables"] >= 1 and state["cells"] >= 20, f"{page} at {width} px: no claims table measured"
    bad = {key: state["problems"] for key, state in found.items() if state["problems"]}
    report = [f"{page} at {width} px ({len(p)}): " + "\n    ".join(p[:8]) for (page, width), p in bad.items()]
    assert not bad, "claims tables whose cells overlap or clip their text:\n" + "\n".join(report)
    for path in shots.values():
        assert path.is_file() and path.stat().st_size > 5_000


@pytest.mark.book
def test_the_layout_check_catches_ids_and_badges_that_do_not_wrap(built_book, tmp_path):
    """The layout of issue 33 put back (claim ids and verdict badges on one line, white-space:
    nowrap, the verdict in a narrow column, a table rather than cards on a phone): the measurement
    finds badges over the reasons and ids out of their cells, at a wide window and at a phone's."""
    from .browser_check import check_claims_layout, claims_pages

    chromium = _chromium()
    site = tmp_path / "site"
    site.mkdir()
    for entry in built_book.iterdir():  # the built site by links, with its own copy of book.css
        if entry.name != "_static":
            (site / entry.name).symlink_to(entry)
    (site / "_static").mkdir()
    for entry in (built_book / "_static").iterdir():
        if entry.name != "book.css":
            (site / "_static" / entry.name).symlink_to(entry)
    css = (built_book / "_static" / "book.css").read_text(encoding="utf-8")
    css += (
        "\n.claims-table table { table-layout: fixed !important; }"
        "\n.claims-table th:nth-child(4) { width: 6% !important; }"
        "\n.claims-table code, .claims-table code span.pre, .verdict { white-space: nowrap !important; }"
        # and no cards on a phone: the table of issue 33 at every width
        "\n.claims-table table { display: table !important; }"
        "\n.claims-table thead { display: table-header-group !important; }"
        "\n.claims-table tbody { display: table-row-group !important; }"
        "\n.claims-table tr { display: table-row !important; }"
        "\n.claims-table td { display: table-cell !important; width: auto !important; }\n"
    )
    (site / "_static" / "book.css").write_text(css, encoding="utf-8")
    page = claims_pages(built_book, n=1)[1]
    found = check_claims_layout(site, [page], chromium, widths=(390, 1400))
    wide, phone = found[(page, 1400)]["problems"], found[(page, 390)]["problems"]
    assert any("overlap" in p and "cells 4 and 5" in p for p in wide), wide[:5]  # a badge over the reason
    assert any("text outside its cell" in p for p in wide), wide[:5]
    assert any("text outside its cell" in p for p in phone), phone[:5]  # an id wider than the card
