"""The book as one PDF: every page of the built site, in the table of contents' order, printed by
headless Chromium (through Playwright) once MathJax has typeset it, and joined with pdfium.

Offline: the pages are served from the build folder on a loopback port, and every request to any
other host is refused. Chromium comes from Debian's ``chromium`` package; Playwright and pypdfium2
are in the lock. ``make pdf`` (and ``make book``) write ``_build/html/causal-fair-bandits.pdf``,
which the landing page links.

    python -m causalbandits_lib.book.pdf [HTML_FOLDER] [--toc _toc.yml] [--out PDF] [--first-page PNG]
"""

from __future__ import annotations

import argparse
import http.server
import os
import shutil
import sys
import tempfile
import threading
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Iterator, Sequence
from urllib.parse import urlparse

__all__ = [
    "PDF_NAME",
    "CHROMIUM_ARGS",
    "LOCAL_HOSTS",
    "PdfError",
    "toc_pages",
    "find_chromium",
    "serve",
    "offline_context",
    "wait_for_mathjax",
    "build_pdf",
    "main",
]

#: The PDF's file name in the built site (the landing page links it).
PDF_NAME = "causal-fair-bandits.pdf"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


class PdfError(RuntimeError):
    """The PDF cannot be built (no Chromium, no built site, a page missing)."""


def toc_pages(toc: Path) -> list[str]:
    """The HTML pages of the table of contents (external-toc ``jb-book`` format), in reading order,
    as paths relative to the site root (``book/intro.html``, ...)."""
    import yaml

    data = yaml.safe_load(Path(toc).read_text())
    files = [data["root"]]

    def walk(entries) -> None:
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in data.get("parts", []):
        walk(part.get("chapters"))
    walk(data.get("chapters"))
    return [f"{Path(f).with_suffix('')}.html" for f in files]


def find_chromium() -> str | None:
    """Debian's Chromium (``chromium`` or ``chromium-browser`` on the path), or None."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on an ephemeral loopback port; yields the base URL (also the browser test's)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def offline_context(browser, **kw):
    """A browser context (Playwright) that lets requests reach loopback, ``data:``, ``blob:`` and
    ``about:`` only; any other request is aborted (and fails the page, so a CDN is noticed)."""

    def route(r) -> None:
        url = urlparse(r.request.url)
        if url.scheme in ("data", "blob", "about") or url.hostname in LOCAL_HOSTS:
            r.continue_()
        else:
            r.abort("blockedbyclient")

    context = browser.new_context(**kw)
    context.route("**/*", route)
    return context


def wait_for_mathjax(page, timeout: float = 60000) -> bool:
    """Wait until MathJax has typeset ``page``; False when the page loads no MathJax."""
    if not page.evaluate("() => !!(window.MathJax && window.MathJax.startup)"):
        return False
    page.wait_for_function("() => window.MathJax.startup.promise !== undefined", timeout=timeout)
    page.evaluate("() => window.MathJax.startup.promise")
    return True


def build_pdf(html_root: Path, pages: Sequence[str], out: Path, chromium: str | None = None) -> Path:
    """Print ``pages`` (paths relative to ``html_root``) to one PDF at ``out`` (written atomically).

    Raises
    ------
    PdfError
        If Chromium is not installed or a page is missing from the built site.
    """
    import pypdfium2 as pdfium
    from playwright.sync_api import sync_playwright

    html_root = Path(html_root)
    chromium = chromium or find_chromium()
    if chromium is None:
        raise PdfError("the PDF is printed by Chromium, which is not installed (apt-get install chromium)")
    missing = [p for p in pages if not (html_root / p).is_file()]
    if missing:
        raise PdfError(f"page {missing[0]} is not in the built site {html_root} (run make book first)")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".pdf-", dir=out.parent) as tmp, serve(html_root) as base:
        parts = []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            context = offline_context(browser)
            for i, rel in enumerate(pages):
                page = context.new_page()
                page.goto(f"{base}/{rel}", wait_until="load")
                wait_for_mathjax(page)
                part = Path(tmp) / f"{i:03d}.pdf"
                page.pdf(path=str(part), format="A4", print_background=True, outline=True)
                parts.append(part)
                page.close()
            browser.close()
        book = pdfium.PdfDocument.new()
        for part in parts:
            src = pdfium.PdfDocument(str(part))
            book.import_pages(src)
            src.close()
        staged = Path(tmp) / out.name
        book.save(str(staged))
        book.close()
        os.replace(staged, out)
    return out


def render_first_page(pdf: Path, png: Path, scale: float = 1.0) -> tuple[int, tuple[int, int]]:
    """Open ``pdf`` and render its first page to ``png``; returns (number of pages, (width, height))."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        n = len(doc)
        image = doc[0].render(scale=scale).to_pil()
        png.parent.mkdir(parents=True, exist_ok=True)
        image.save(png)
        return n, image.size
    finally:
        doc.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m causalbandits_lib.book.pdf", description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", default="_build/html", help="the built site [_build/html]")
    parser.add_argument("--toc", default="_toc.yml", help="the table of contents [_toc.yml]")
    parser.add_argument("--out", default=None, help=f"the PDF [HTML/{PDF_NAME}]")
    parser.add_argument("--first-page", default=None, help="also render the PDF's first page to this PNG")
    parser.add_argument("--if-stale", action="store_true", help="do nothing if the PDF is newer than every page")
    parser.add_argument(
        "--optional", action="store_true", help="without Chromium, say so and exit 0 (make book) instead of 2"
    )
    args = parser.parse_args(argv)
    html = Path(args.html)
    out = Path(args.out) if args.out else html / PDF_NAME
    pages = toc_pages(Path(args.toc))
    if (
        args.if_stale
        and out.is_file()
        and all((html / p).stat().st_mtime <= out.stat().st_mtime for p in pages if (html / p).is_file())
    ):
        print(f"The PDF is up to date: {out.resolve()}")
        if args.first_page:
            render_first_page(out, Path(args.first_page))
        return 0
    if args.optional and find_chromium() is None:
        print(
            "no PDF of the book: Chromium is not installed (apt-get install chromium; then make pdf)", file=sys.stderr
        )
        return 0
    try:
        build_pdf(html, pages, out)
    except (PdfError, OSError) as exc:
        print(f"pdf: error: {exc}", file=sys.stderr)
        return 2
    n, _ = render_first_page(out, Path(args.first_page)) if args.first_page else (None, None)
    print(f"The PDF is at {out.resolve()}" + (f" ({n} pages)" if n else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
