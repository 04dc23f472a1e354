"""The book builds with zero warnings (-W) from the executed smoke-profile notebooks.

Building from the executed copies (with execution off) checks everything the build checks, the
table of contents, cross-references, citations, MyST syntax and the rendering of every output,
without executing every notebook a third time in CI. ``make book`` executes them for real.
"""

from __future__ import annotations

import re
import shutil

import pytest

from .book_site import SCREENSHOTS, pdf_pages, pdf_toc
from .notebook_support import all_notebooks


@pytest.mark.book
def test_book_builds_without_warnings(built_book):
    for spec in all_notebooks():
        page = built_book / "notebooks" / spec.chapter / f"{spec.name}.html"
        assert page.is_file(), f"no page for {spec.id}"
        assert 'id="claims"' in page.read_text(), f"{spec.id} has no Claims section"
    assert (built_book / "book" / "reproducibility.html").is_file()
    assert (built_book / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    for spec in all_notebooks():  # each page's evidence is in the site
        assert (built_book / "_downloads" / "notebooks" / spec.chapter / f"{spec.name}.ipynb").is_file(), spec.id
        assert (built_book / "_downloads" / "records" / spec.chapter / f"{spec.name}.json").is_file(), spec.id


def _png(width: int, height: int) -> bytes:
    """A grey PNG of the given size (standard library only)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _chromium():
    from .browser_check import require_chromium

    return require_chromium()


@pytest.mark.book
def test_every_page_renders_offline(built_book):
    """Every page in headless Chromium with all non-loopback requests blocked: no failed request,
    no console error, images decoded, formulas rendered by MathJax, figures captioned."""
    from .browser_check import check_pages, content_pages, static_problems

    chromium = _chromium()
    pages = content_pages(built_book)
    # per chapter, its page with the most figures
    heaviest = {}
    for rel in pages:
        parts = rel.split("/")
        if parts[0] == "notebooks":
            n = (built_book / rel).read_text().count("<figure")
            if n > heaviest.get(parts[1], ("", -1))[1]:
                heaviest[parts[1]] = (rel, n)
    shots = {rel: SCREENSHOTS / f"{chapter}.png" for chapter, (rel, _) in heaviest.items()}
    shots["book/intro.html"] = SCREENSHOTS / "intro.png"
    shots["book/reproducibility.html"] = SCREENSHOTS / "reproducibility.png"
    # The citation pages (one per claim, over 300) are written by one template at the end of the
    # build: three of them are opened in the browser, and every one is read for its resources.
    cite = [rel for rel in pages if rel.startswith("cite/")]
    assert len(cite) >= 100, "the built book has a citation page per claim"
    opened = [rel for rel in pages if not rel.startswith("cite/")]
    opened += sorted({cite[0], cite[len(cite) // 2], cite[-1]})
    problems = check_pages(built_book, opened, chromium, screenshots=shots)
    problems.update(static_problems(built_book, cite))
    bad = {p: v for p, v in problems.items() if v}
    assert not bad, "pages with problems:\n" + "\n".join(f"{p}: {v}" for p, v in bad.items())
    assert len(problems) == len(pages) >= 6
    for path in shots.values():
        assert path.is_file() and path.stat().st_size > 10_000


@pytest.mark.book
def test_checker_catches_a_cdn_script_and_a_missing_image(built_book, tmp_path):
    """The browser check must fail on a page that loads a script from a CDN, shows a missing image,
    leaks a machine path or a numpy repr, has a claims table wider than its column, a code line
    that is not wrapped to the column, a display formula that needs a sideways scrollbar, a figure
    shown below half its natural width, or a figure caption numbered by the book."""
    from .browser_check import check_pages

    chromium = _chromium()
    site = tmp_path / "site"
    shutil.copytree(built_book, site)
    page = site / "book" / "notation.html"
    (site / "wide-figure.png").write_bytes(_png(600, 40))
    html = page.read_text()
    broken = html.replace(
        "</head>", '<script src="https://cdn.jsdelivr.net/npm/jquery@3/dist/jquery.min.js"></script></head>', 1
    ).replace('<main id="main-content"', '<img src="missing-figure.png" alt="x"><main id="main-content"', 1)
    leak = (
        "<p>record written to /work/main/_build/records/x.json, mean np.float64(23.9)</p>"
        '<div class="claims-table"><table style="width: 3000px"><tr><td>wide</td></tr></table></div>'
        '<a href="../_downloads/records/nowhere/missing.json" download>record</a>'
        '<div class="cell"><div class="cell_input"><div class="highlight">'
        '<pre style="white-space: pre">x = 1  # ' + "a very long line " * 40 + "</pre></div></div></div>"
        '<figure id="shrunk"><img src="../wide-figure.png" alt="y" style="width: 100px">'
        "<figcaption><p>Fig. 39 A figure numbered by the book</p></figcaption></figure>"
        '<div class="math notranslate nohighlight" id="equation-made-up-wide">\\[' + "x_1 + " * 150 + "x_2\\]</div>"
    )
    broken = broken.replace("</main>", leak + "</main>", 1)
    assert broken != html
    page.write_text(broken)
    problems = check_pages(site, ["book/notation.html", "book/intro.html"], chromium)["book/notation.html"]
    assert any("cdn.jsdelivr.net" in p for p in problems), problems
    assert any("missing-figure.png" in p for p in problems), problems
    assert any("np.float64(" in p for p in problems) and any("/work/main/_build" in p for p in problems), problems
    assert any("claims table wider than its column: 3000 px" in p for p in problems), problems
    assert any("download link does not resolve" in p and "missing.json" in p for p in problems), problems
    assert any("code or output wider than the column" in p and "x = 1" in p for p in problems), problems
    assert any(
        "below half its natural width" in p and "wide-figure.png" in p and "100 px shown, 600 px natural" in p
        for p in problems
    ), problems
    assert any("numbered by the book" in p and "Fig. 39" in p for p in problems), problems
    assert any("display formula wider" in p and "equation-made-up-wide" in p for p in problems), problems
    # and the untouched page next to it stays clean
    assert check_pages(site, ["book/intro.html"], chromium)["book/intro.html"] == []


@pytest.mark.book
def test_the_book_prints_to_one_pdf_that_the_landing_page_links(built_book, book_pdf):
    """make pdf's builder on the built book: every page it was given (the tests' sample of the table
    of contents) in one PDF at the site's root, where the landing page's link points; its first
    page is rendered for review."""
    from PIL import Image, ImageStat

    from causalbandits_lib.book.pdf import PDF_NAME, render_first_page

    pages = pdf_pages(pdf_toc())
    n, size = render_first_page(book_pdf, SCREENSHOTS / "pdf-first-page.png")
    assert n >= len(pages) and size[1] > size[0]
    assert ImageStat.Stat(Image.open(SCREENSHOTS / "pdf-first-page.png").convert("L")).stddev[0] > 5
    intro = (built_book / "book" / "intro.html").read_text()
    link = re.search(r'href="([^"]*' + re.escape(PDF_NAME) + ')"', intro)
    assert link and (built_book / "book" / link.group(1)).resolve() == book_pdf.resolve()
