"""The book as one PDF: every page of the built site, in the table of contents' order, printed by
headless Chromium (through Playwright) once MathJax has typeset it, and joined with pypdf into one
document a reader can navigate.

Printing a web page loses what a reader of a book relies on, so the join puts it back:

* links between the book's pages (and to an anchor on a page) become links inside the PDF; a link to
  another file of the site (a download, a source) becomes a link relative to the PDF, which sits at
  the site's root; no link points to the loopback server that existed only while printing;
* bookmarks follow ``_toc.yml``: one per part of the table of contents, one per chapter and notebook
  page under it, and the page's own section headings under that;
* a title page (the book's title, its authors from ``CITATION.cff``, the commit built and the date),
  a page number on every other page, and the document's title, author and subject in its metadata;
* the folds a reader opens on screen (the rule behind each verdict) are printed open, and code and
  outputs wrap at the margin instead of being cut (a print-only style sheet, injected here).

Offline: the pages are served from the build folder on a loopback port, and every request to any
other host is refused. Chromium comes from Debian's ``chromium`` package; Playwright, pypdf and
pypdfium2 are in the lock. ``make pdf`` (and ``make book``) write ``_build/html/causal-fair-bandits.pdf``,
which the landing page links.

    python -m causalbandits_lib.book.pdf [HTML_FOLDER] [--toc _toc.yml] [--out PDF] [--first-page PNG]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import html as _html
import http.server
import os
import shutil
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import quote, unquote, urlparse

__all__ = [
    "PDF_NAME",
    "CHROMIUM_ARGS",
    "LOCAL_HOSTS",
    "PRINT_CSS",
    "PAGE_MARGINS",
    "PdfError",
    "TocEntry",
    "BookInfo",
    "toc_pages",
    "toc_tree",
    "book_info",
    "find_chromium",
    "serve",
    "offline_context",
    "wait_for_mathjax",
    "build_pdf",
    "render_first_page",
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

#: Injected into every page before it is printed (and only then: the site's own CSS is untouched).
#: Code cells and outputs wrap at the margin instead of running off the page; boxes that scroll on
#: screen show all they hold.
PRINT_CSS = """
pre, pre code, div.highlight pre, div.cell_output pre, div.output pre, .output_area pre {
  white-space: pre-wrap !important;
  overflow-wrap: anywhere !important;
  word-break: normal !important;
  overflow: visible !important;
  max-height: none !important;
}
div.highlight, div.cell_output, div.output, div.cell_input, .output_area {
  overflow: visible !important;
  max-height: none !important;
}
details > summary { list-style: none; font-weight: 600; }
details > summary::-webkit-details-marker { display: none; }
"""

#: Page margins of every printed page; the bottom one leaves room for the page number.
PAGE_MARGINS = {"top": "12mm", "bottom": "16mm", "left": "10mm", "right": "10mm"}

#: Run in each page before printing: open the folds (the claims tables' "rule" folds, dropdowns;
#: not the folds that hide a code cell's source, which the page's author chose to hide); make
#: Chromium keep a named destination for every ``id`` (it keeps one only for the targets of a link
#: on the same page, so a hidden link to each is added); return the page's title (its first heading).
_PREPARE_JS = """() => {
  document.querySelectorAll('details:not(.hide)').forEach(d => { d.open = true; });
  const box = document.createElement('div');
  box.style.display = 'none';
  const seen = new Set();
  document.querySelectorAll('[id]').forEach(e => {
    if (!e.id || seen.has(e.id)) return;
    seen.add(e.id);
    const a = document.createElement('a');
    a.setAttribute('href', '#' + e.id);
    box.appendChild(a);
  });
  document.body.appendChild(box);
  const h1 = document.querySelector('main h1, article h1, h1');
  if (!h1) return document.title.split(' \u2014 ')[0].trim();
  const copy = h1.cloneNode(true);
  copy.querySelectorAll('.headerlink').forEach(x => x.remove());
  return copy.textContent.replace(/\\s+/g, ' ').trim() || document.title;
}"""

#: Name of the page-number font in each page's resources (Helvetica, one of the 14 standard fonts).
_NUMBER_FONT = "/CBPageNumber"


class PdfError(RuntimeError):
    """The PDF cannot be built (no Chromium, no built site, a page missing)."""


@dataclass
class TocEntry:
    """One entry of the table of contents: a part (``caption``, no page) or a page (``page``, an HTML
    path relative to the site root), with the entries under it."""

    page: str | None = None
    caption: str | None = None
    children: list["TocEntry"] = field(default_factory=list)

    def first_page(self) -> str | None:
        """The first page at or under this entry, in reading order."""
        if self.page:
            return self.page
        for child in self.children:
            found = child.first_page()
            if found:
                return found
        return None


@dataclass
class BookInfo:
    """What the title page and the PDF's metadata say about the book."""

    title: str
    authors: list[str] = field(default_factory=list)
    subject: str = ""
    commit: str | None = None
    dirty: bool = False
    date: str = ""

    def commit_line(self) -> str:
        """The commit built, as the title page states it."""
        if not self.commit:
            return "not built from a git checkout"
        return self.commit + (" with uncommitted changes" if self.dirty else "")


def _html_path(file: str) -> str:
    return f"{Path(file).with_suffix('')}.html"


def toc_tree(toc: Path) -> list[TocEntry]:
    """The table of contents (external-toc ``jb-book`` format) as a tree: the root page, then one
    entry per part (its caption, its chapters under it), each chapter with its sections under it."""
    import yaml

    data = yaml.safe_load(Path(toc).read_text())

    def walk(entries) -> list[TocEntry]:
        out = []
        for entry in entries or []:
            children = walk(entry.get("sections"))
            if "file" in entry:
                out.append(TocEntry(page=_html_path(entry["file"]), children=children))
            else:
                out.extend(children)
        return out

    tree = [TocEntry(page=_html_path(data["root"]))]
    for part in data.get("parts", []):
        tree.append(TocEntry(caption=str(part.get("caption") or ""), children=walk(part.get("chapters"))))
    tree.extend(walk(data.get("chapters")))
    return tree


def toc_pages(toc: Path) -> list[str]:
    """The HTML pages of the table of contents (external-toc ``jb-book`` format), in reading order,
    as paths relative to the site root (``book/intro.html``, ...)."""

    def flat(entries: list[TocEntry]) -> Iterator[str]:
        for entry in entries:
            if entry.page:
                yield entry.page
            yield from flat(entry.children)

    return list(flat(toc_tree(toc)))


def book_info(root: Path) -> BookInfo:
    """The book's title (``_config.yml``), authors and abstract (``CITATION.cff``), the commit of the
    checkout at ``root`` (and whether it has uncommitted changes) and today's date (UTC)."""
    import yaml

    from .provenance import git_info

    root = Path(root)
    config = yaml.safe_load((root / "_config.yml").read_text()) if (root / "_config.yml").is_file() else {}
    cff = yaml.safe_load((root / "CITATION.cff").read_text()) if (root / "CITATION.cff").is_file() else {}
    config, cff = config or {}, cff or {}
    authors = []
    for person in cff.get("authors") or []:
        name = person.get("name") or " ".join(str(person[k]) for k in ("given-names", "family-names") if person.get(k))
        if name:
            authors.append(name)
    if not authors and config.get("author"):
        authors = [str(config["author"])]
    git = git_info(root)
    return BookInfo(
        title=str(config.get("title") or cff.get("title") or "The book"),
        authors=authors,
        subject=" ".join(str(cff.get("abstract") or "").split()),
        commit=git.get("commit"),
        dirty=bool(git.get("dirty")),
        date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
    )


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


def _title_page_html(info: BookInfo) -> str:
    e = _html.escape
    authors = ", ".join(info.authors)
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{e(info.title)}</title>
<style>
@page {{ size: A4; margin: 0; }}
body {{ font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #222; margin: 0; }}
.page {{ padding: 70mm 25mm 0 25mm; }}
h1 {{ font-size: 28pt; line-height: 1.2; margin: 0 0 8mm 0; }}
.subject {{ font-size: 12pt; line-height: 1.5; color: #444; margin-bottom: 12mm; }}
.authors {{ font-size: 13pt; margin-bottom: 30mm; }}
dl {{ font-size: 10pt; display: grid; grid-template-columns: max-content 1fr; gap: 2mm 6mm; }}
dt {{ font-weight: 600; }} dd {{ margin: 0; font-family: "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }}
.note {{ font-size: 9pt; color: #555; margin-top: 12mm; line-height: 1.5; }}
</style></head><body><div class="page">
<h1>{e(info.title)}</h1>
<div class="subject">{e(info.subject)}</div>
<div class="authors">{e(authors)}</div>
<dl><dt>Commit</dt><dd>{e(info.commit_line())}</dd><dt>Built</dt><dd>{e(info.date)}</dd></dl>
<p class="note">The book's web pages printed in the order of its table of contents. Links between its
pages lead to the page inside this document; the bookmarks follow the table of contents.</p>
</div></body></html>"""


@dataclass
class _Part:
    """One printed page of the site in the joined PDF: where its sheets start, how many, its title,
    its named destinations (``id`` -> (sheet within the part, left, top)) and its own outline."""

    rel: str | None
    start: int
    count: int
    title: str
    dests: dict[str, tuple[int, float | None, float | None]]
    outline: list[tuple[str, int, list]]


def _read_part(reader) -> tuple[dict, list]:
    dests = {}
    for name, dest in reader.named_destinations.items():
        try:
            index = reader.get_destination_page_number(dest)
        except Exception:  # noqa: BLE001 - a destination without a page is skipped
            continue
        dests[unquote(str(name).lstrip("/"))] = (index, dest.get("/Left"), dest.get("/Top"))

    def walk(items, depth: int) -> list:
        out = []
        for item in items:
            if isinstance(item, list):
                if out and depth < 3:
                    out[-1][2].extend(walk(item, depth + 1))
                continue
            try:
                out.append((" ".join(str(item.title).split()), reader.get_destination_page_number(item), []))
            except Exception:  # noqa: BLE001 - an outline item without a page is skipped
                continue
        return out

    return dests, walk(reader.outline, 0)


def _target_of(uri: str, parts: list[_Part], by_rel: dict[str, int], out_name: str):
    """Where a link of a printed page leads in the joined PDF: ``(sheet, left, top)`` inside it, or a
    URI (relative to the PDF, at the site's root) for a file of the site that is not a page of the
    book, or None when the link leaves the site (it is kept as it is)."""
    url = urlparse(uri)
    if url.scheme not in ("http", "https") or url.hostname not in LOCAL_HOSTS:
        return None
    path = unquote(url.path).lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    if path == out_name:
        return (0, None, None)
    index = by_rel.get(path)
    if index is None and path == "index.html" and parts:
        index = min(by_rel.values(), default=None)
    if index is None:
        rel = quote(path)
        rel += f"?{url.query}" if url.query else ""
        rel += f"#{url.fragment}" if url.fragment else ""
        return rel
    part = parts[index]
    fragment = unquote(url.fragment)
    if fragment and fragment in part.dests:
        sheet, left, top = part.dests[fragment]
        return (part.start + sheet, left, top)
    return (part.start, None, None)


def _goto(writer, target: tuple[int, Any, Any]):
    from pypdf.generic import ArrayObject, FloatObject, NameObject, NullObject

    sheet, left, top = target
    ref = writer.pages[sheet].indirect_reference
    if left is None and top is None:
        return ArrayObject([ref, NameObject("/Fit")])
    return ArrayObject(
        [
            ref,
            NameObject("/XYZ"),
            FloatObject(left or 0) if left is not None else NullObject(),
            FloatObject(top) if top is not None else NullObject(),
            NullObject(),
        ]
    )


def _relink(writer, parts: list[_Part], out_name: str) -> dict[str, int]:
    """Rewrite every link annotation of the joined PDF (see :func:`_target_of`); returns counts."""
    from pypdf.generic import DictionaryObject, NameObject, TextStringObject

    by_rel = {p.rel: i for i, p in enumerate(parts) if p.rel}
    counts = {"inside": 0, "relative": 0, "kept": 0}
    for part in parts:
        for sheet in range(part.start, part.start + part.count):
            for annot in writer.pages[sheet].get("/Annots") or []:
                annot = annot.get_object()
                if annot.get("/Subtype") != "/Link":
                    continue
                action = annot.get("/A")
                action = action.get_object() if action is not None else None
                target = None
                if action is not None and action.get("/S") == "/URI":
                    target = _target_of(str(action.get("/URI")), parts, by_rel, out_name)
                    if target is None:
                        counts["kept"] += 1
                        continue
                else:
                    name = annot.get("/Dest")
                    if name is None and action is not None and action.get("/S") == "/GoTo":
                        name = action.get("/D")
                    if name is None or not isinstance(name, str):
                        continue  # an explicit destination already points at a sheet
                    sheet_, left, top = part.dests.get(unquote(str(name).lstrip("/")), (0, None, None))
                    target = (part.start + sheet_, left, top)
                if isinstance(target, str):
                    annot[NameObject("/A")] = DictionaryObject(
                        {NameObject("/S"): NameObject("/URI"), NameObject("/URI"): TextStringObject(target)}
                    )
                    annot.pop("/Dest", None)
                    counts["relative"] += 1
                else:
                    annot[NameObject("/Dest")] = _goto(writer, target)
                    annot.pop("/A", None)
                    counts["inside"] += 1
    return counts


def _outline(writer, parts: list[_Part], tree: Sequence[TocEntry] | None) -> None:
    """Bookmarks: the title page, then the table of contents' parts with their pages under them, and
    under each page its own section headings (from Chromium's outline of that page)."""
    by_rel = {p.rel: p for p in parts if p.rel}

    def add_sections(items, parent, start: int) -> None:
        for title, sheet, children in items:
            node = writer.add_outline_item(title=title, page_number=start + sheet, parent=parent, is_open=False)
            add_sections(children, node, start)

    def add_page(part: _Part, parent):
        node = writer.add_outline_item(title=part.title, page_number=part.start, parent=parent, is_open=False)
        sections = part.outline
        if len(sections) == 1 and "".join(sections[0][0].split()) == "".join(part.title.split()):
            sections = sections[0][2]  # the page's first heading is the page itself
        add_sections(sections, node, part.start)
        return node

    def add(entries: Sequence[TocEntry], parent) -> None:
        for entry in entries:
            if entry.page and entry.page in by_rel:
                node = add_page(by_rel[entry.page], parent)
            elif entry.caption is not None:
                first = entry.first_page()
                if first not in by_rel:
                    continue
                node = writer.add_outline_item(
                    title=entry.caption, page_number=by_rel[first].start, parent=parent, bold=True
                )
            else:
                continue
            add(entry.children, node)

    if parts and parts[0].rel is None:
        writer.add_outline_item(title=parts[0].title, page_number=0)
    if tree is None:
        tree = [TocEntry(page=p.rel) for p in parts if p.rel]
    add(tree, None)


def _number_pages(writer, first: int) -> None:
    """Stamp ``n / N`` at the foot of every sheet from ``first`` on (Helvetica, grey, centred)."""
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject

    total = len(writer.pages)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    font_ref = writer._add_object(font)  # noqa: SLF001 - pypdf has no public way to add an object
    size = 9.0
    for index in range(first, total):
        page = writer.pages[index]
        label = f"{index + 1} / {total}"
        box = page.mediabox
        width = 0.556 * size * sum(c.isdigit() for c in label) + size * (0.278 * 3)  # digits, " / "
        x = float(box.left) + (float(box.width) - width) / 2
        y = float(box.bottom) + 20
        resources = page.get("/Resources")
        resources = resources.get_object() if resources is not None else DictionaryObject()
        page[NameObject("/Resources")] = resources
        fonts = resources.get("/Font")
        fonts = fonts.get_object() if fonts is not None else DictionaryObject()
        resources[NameObject("/Font")] = fonts
        fonts[NameObject(_NUMBER_FONT)] = font_ref
        push, stamp = DecodedStreamObject(), DecodedStreamObject()
        push.set_data(b"q\n")
        stamp.set_data(
            f"\nQ\nq BT 0.35 0.35 0.35 rg {_NUMBER_FONT} {size:g} Tf {x:.2f} {y:.2f} Td ({label}) Tj ET Q\n".encode()
        )
        contents = page.get("/Contents")
        old = contents.get_object() if contents is not None else None
        streams = list(old) if isinstance(old, list) else ([contents] if contents is not None else [])
        page[NameObject("/Contents")] = ArrayObject(
            [writer._add_object(push), *streams, writer._add_object(stamp)]  # noqa: SLF001
        )


def build_pdf(
    html_root: Path,
    pages: Sequence[str],
    out: Path,
    chromium: str | None = None,
    *,
    info: BookInfo | None = None,
    toc: Sequence[TocEntry] | None = None,
) -> Path:
    """Print ``pages`` (paths relative to ``html_root``) to one PDF at ``out`` (written atomically).

    With ``info``, a title page comes first and the PDF's metadata name the book; ``toc`` (from
    :func:`toc_tree`) shapes the bookmarks (without it, one bookmark per page). Links between the
    pages become links inside the PDF, and every sheet after the title page carries its number.

    Raises
    ------
    PdfError
        If Chromium is not installed or a page is missing from the built site.
    """
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

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
        printed: list[tuple[str | None, Path, str]] = []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            context = offline_context(browser)
            if info is not None:
                page = context.new_page()
                page.set_content(_title_page_html(info), wait_until="load")
                part = Path(tmp) / "title.pdf"
                page.pdf(path=str(part), format="A4", print_background=True)
                printed.append((None, part, "Title page"))
                page.close()
            for i, rel in enumerate(pages):
                page = context.new_page()
                page.goto(f"{base}/{rel}", wait_until="load")
                wait_for_mathjax(page)
                page.add_style_tag(content=PRINT_CSS)
                title = page.evaluate(_PREPARE_JS) or rel
                part = Path(tmp) / f"{i:03d}.pdf"
                page.pdf(
                    path=str(part),
                    format="A4",
                    print_background=True,
                    outline=True,
                    tagged=True,
                    margin=PAGE_MARGINS,
                )
                printed.append((rel, part, str(title)))
                page.close()
            browser.close()
        writer = PdfWriter()
        parts: list[_Part] = []
        for rel, path, title in printed:
            reader = PdfReader(str(path))
            dests, outline = _read_part(reader)
            start = len(writer.pages)
            for sheet in reader.pages:
                writer.add_page(sheet)
            parts.append(_Part(rel, start, len(reader.pages), title, dests, outline))
        _relink(writer, parts, out.name)
        _outline(writer, parts, toc)
        _number_pages(writer, first=1 if info is not None else 0)
        writer.page_mode = "/UseOutlines"
        metadata = {"/Creator": "causalbandits_lib.book.pdf (Chromium, pypdf)"}
        if info is not None:
            metadata.update({"/Title": info.title, "/Author": ", ".join(info.authors), "/Subject": info.subject})
            metadata["/Keywords"] = f"commit {info.commit_line()}; built {info.date}"
        writer.add_metadata(metadata)
        staged = Path(tmp) / out.name
        with open(staged, "wb") as fh:
            writer.write(fh)
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
        info = book_info(Path(args.toc).resolve().parent)
        build_pdf(html, pages, out, info=info, toc=toc_tree(Path(args.toc)))
    except (PdfError, OSError) as exc:
        print(f"pdf: error: {exc}", file=sys.stderr)
        return 2
    n, _ = render_first_page(out, Path(args.first_page)) if args.first_page else (None, None)
    print(f"The PDF is at {out.resolve()}" + (f" ({n} pages)" if n else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
