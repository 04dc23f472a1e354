"""Open the built book's pages in headless Chromium with the network cut off, and list problems.

Used by tests/test_browser.py. Each page is served from a loopback HTTP server; every request to
any other host is aborted and counted as a failure. For each page the checker reports failed
requests, console errors, images that did not decode, formulas MathJax did not render (raw ``\\(``
or ``$$`` left in the text), figures without a caption, figures shown below half their natural
width (the book stores PNGs at twice their display size, so a smaller one was shrunk), captions
numbered by the book ("Fig. 39", which would clash with the paper's own figure numbers), claims
tables and display formulas wider than their column at a 1400 px window, download links that do
not resolve, and text that leaks the build machine (an absolute path) or numpy's scalar repr (``np.float64(``).
"""

from __future__ import annotations

import re
from pathlib import Path

# Chromium's flags, its lookup and the loopback server are the PDF builder's (one copy of each).
from causalbandits_lib.book.pdf import CHROMIUM_ARGS, find_chromium, offline_context, serve, wait_for_mathjax  # noqa: F401

PAGE_STATE_JS = """
() => {
  const imgs = Array.from(document.querySelectorAll('img')).map(i => ({
    src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0 && i.naturalHeight > 0}));
  const maths = Array.from(document.querySelectorAll('.math'));
  const unrendered = maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 60));
  const main = document.querySelector('main') || document.body;
  const text = main.innerText;
  const raw = [];
  for (const token of ['\\\\(', '\\\\[', '$$']) { if (text.includes(token)) raw.push(token); }
  const figures = Array.from(main.querySelectorAll('figure')).map(f => {
    const cap = f.querySelector('figcaption');
    return {id: f.id || '(no id)', caption: cap ? cap.innerText.trim() : ''};
  });
  const outputImgs = Array.from(main.querySelectorAll('.cell_output img')).map(i => ({
    src: i.getAttribute('src'), inFigure: !!i.closest('figure')}));
  // shown below half the natural width: rendered images only (one in a closed fold has no size)
  const shrunk = Array.from(main.querySelectorAll('img'))
    .filter(i => i.complete && i.naturalWidth > 0)
    .filter(i => i.checkVisibility ? i.checkVisibility() : i.getClientRects().length > 0)
    .filter(i => i.clientWidth * 2 < i.naturalWidth - 2)
    .map(i => ({src: i.getAttribute('src'), shown: i.clientWidth, natural: i.naturalWidth}));
  const overflow = Array.from(main.querySelectorAll('.claims-table table'))
    .filter(t => t.scrollWidth > t.parentElement.clientWidth + 2)
    .map(t => `${t.scrollWidth} px in a ${t.parentElement.clientWidth} px column`);
  // a display formula that needs a sideways scrollbar at this width (its number included)
  const wideMath = Array.from(main.querySelectorAll('mjx-container[display="true"]'))
    .filter(m => m.scrollWidth > m.clientWidth + 2)
    .map(m => `${(m.closest('.math') || m).id || m.textContent.slice(0, 40)} `
              + `(${m.scrollWidth} px in ${m.clientWidth} px)`);
  const clipped = Array.from(main.querySelectorAll('.cell_input pre, .cell_output pre'))
    .filter(p => p.scrollWidth > p.clientWidth + 2)
    .map(p => `${p.textContent.trim().split('\\n')[0].slice(0, 50)} (${p.scrollWidth} px in ${p.clientWidth} px)`);
  const leaks = [];
  for (const re of [/np\\.(float|int|bool)\\w*\\(/, /(^|[\\s'"(=])\\/(home|tmp|root|work|Users|private)\\/\\S+/]) {
    const m = text.match(re); if (m) leaks.push(m[0].trim().slice(0, 80));
  }
  const downloads = Array.from(document.querySelectorAll('a[href*="_downloads/"]')).map(a => a.href);
  return {imgs, nMath: maths.length, unrendered, raw, figures, outputImgs, shrunk, overflow, wideMath, clipped, leaks,
          downloads};
}
"""


def check_pages(
    html_root: Path, pages: list[str], chromium: str, screenshots: dict[str, Path] | None = None
) -> dict[str, list[str]]:
    """Open each page (a path relative to ``html_root``) and return its problems (empty if none).

    ``screenshots`` maps page paths to PNG files to write (e.g. each chapter's first page).
    """
    from playwright.sync_api import sync_playwright

    problems: dict[str, list[str]] = {}
    screenshots = screenshots or {}
    with serve(html_root) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        context = offline_context(browser, viewport={"width": 1400, "height": 900})
        for rel in pages:
            found: list[str] = []
            page = context.new_page()
            page.on(
                "console", lambda m, f=found: f.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            )
            page.on("pageerror", lambda e, f=found: f.append(f"page error: {e}"))
            page.on("requestfailed", lambda r, f=found: f.append(f"failed request: {r.url} ({r.failure})"))
            page.on("response", lambda r, f=found: f.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
            page.goto(f"{base}/{rel}", wait_until="load")
            has_mathjax = wait_for_mathjax(page, timeout=30000)
            page.wait_for_load_state("networkidle")
            state = page.evaluate(PAGE_STATE_JS)
            for img in state["imgs"]:
                if not img["ok"]:
                    found.append(f"image not decoded: {img['src']}")
            if state["nMath"] and not has_mathjax:
                found.append(f"{state['nMath']} formulas but MathJax did not load")
            for m in state["unrendered"]:
                found.append(f"formula not rendered: {m!r}")
            for token in state["raw"]:
                found.append(f"raw TeX delimiter {token!r} left in the page text")
            for fig in state["figures"]:
                if not fig["caption"]:
                    found.append(f"figure {fig['id']} has no caption")
                elif re.match(r"Fig(ure)?\.? ?\d+\.? ", fig["caption"]):
                    found.append(f"figure {fig['id']} is numbered by the book: {fig['caption'][:40]!r}")
            for img in state["shrunk"]:
                found.append(
                    f"figure shown below half its natural width: {img['src']} "
                    f"({img['shown']} px shown, {img['natural']} px natural)"
                )
            for img in state["outputImgs"]:
                if not img["inFigure"]:
                    found.append(f"notebook figure {img['src']} has no caption (use the mystnb figure option)")
            for o in state["overflow"]:
                found.append(f"claims table wider than its column: {o}")
            for m in state["wideMath"]:
                found.append(f"display formula wider than the column (break it into lines): {m}")
            for c in state["clipped"]:
                found.append(f"code or output wider than the column (not wrapped): {c}")
            for leak in state["leaks"]:
                found.append(f"text leaks the build machine or a numpy repr: {leak!r}")
            for url in state["downloads"]:
                status = page.request.get(url).status
                if status >= 400:
                    found.append(f"download link does not resolve: {url} (HTTP {status})")
            if rel in screenshots:
                screenshots[rel].parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(screenshots[rel]), full_page=False)
            page.close()
            problems[rel] = found
        browser.close()
    return problems


def content_pages(html_root: Path) -> list[str]:
    """Every HTML page of the book's content (not search, index or copied sources)."""
    skip = {"search.html", "genindex.html", "index.html"}
    out = []
    for p in sorted(html_root.rglob("*.html")):
        rel = p.relative_to(html_root).as_posix()
        if rel.startswith(("_static/", "_sources/", "_images/")) or rel in skip:
            continue
        out.append(rel)
    return out


def static_problems(html_root: Path, pages: list[str]) -> dict[str, list[str]]:
    """Each page read without a browser: a script, style sheet, image or link that leaves the site
    (any address with a scheme but ``mailto:``), or a relative one that names no file of it."""
    import posixpath
    from urllib.parse import unquote, urlparse

    from bs4 import BeautifulSoup

    out: dict[str, list[str]] = {}
    for rel in pages:
        soup = BeautifulSoup((html_root / rel).read_text(encoding="utf-8"), "html.parser")
        found = []
        for tag in soup.select("[src], [href]"):
            url = tag.get("src") or tag.get("href")
            parsed = urlparse(url)
            if parsed.scheme == "mailto" or url.startswith("#"):
                continue
            if parsed.scheme or parsed.netloc:
                found.append(f"{tag.name} leaves the site: {url}")
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(parsed.path)))
            if not (html_root / target).is_file():
                found.append(f"{tag.name} names no file of the site: {url}")
        out[rel] = found
    return out


#: The window widths at which the claims tables are measured: a phone, a laptop and a wide screen.
LAYOUT_WIDTHS = (390, 1400, 1920)

#: In-page measurement of every claims table: the boxes of each cell's rendered content (the
#: lines of its text nodes from Range.getClientRects, and the boxes of badges, formulas and images),
#: compared pairwise between the cells of a row and with the cells of the next row (two cells' text
#: must not intersect), and each against its own cell's box (text outside its cell is clipped or
#: covers a neighbour); an element of a table that hides its overflow while its content is wider
#: (scrollWidth > clientWidth) clips text; a table wider than its column needs a sideways scroll.
CLAIMS_LAYOUT_JS = """
(tol) => {
  const problems = [];
  const short = s => s.replace(/\\s+/g, ' ').trim().slice(0, 40);
  const range = document.createRange();
  const boxes = cell => {
    const out = [];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const parent = node.parentElement;
      if (!node.textContent.trim() || parent.closest('mjx-container')) continue;
      const fold = parent.closest('details:not([open])');  // a closed fold shows its summary only
      if (fold && !parent.closest('summary')) continue;
      range.selectNodeContents(node);
      for (const r of range.getClientRects()) {
        if (r.width > 0.5 && r.height > 0.5) out.push({r, text: short(node.textContent)});
      }
    }
    for (const el of cell.querySelectorAll('.verdict, mjx-container, img')) {
      const fold = el.closest('details:not([open])');
      if (fold && !el.closest('summary')) continue;
      for (const r of el.getClientRects()) {
        if (r.width > 0.5 && r.height > 0.5) out.push({r, text: short(el.textContent || el.getAttribute('src') || '')});
      }
    }
    return out;
  };
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > tol
                      && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > tol;
  const tables = Array.from(document.querySelectorAll('.claims-table table'));
  let nCells = 0;
  tables.forEach((table, ti) => {
    const column = table.parentElement;
    if (table.scrollWidth > column.clientWidth + tol) {
      problems.push(`table ${ti + 1}: ${table.scrollWidth} px wide in a ${column.clientWidth} px column`);
    }
    const rows = Array.from(table.rows).map(tr => {
      const cells = Array.from(tr.cells).map((cell, ci) => ({cell, ci, boxes: boxes(cell)}));
      const label = short(tr.cells.length ? tr.cells[0].textContent : '') || '(empty row)';
      return {cells, label};
    });
    rows.forEach((row, ri) => {
      for (const c of row.cells) {
        nCells += 1;
        const box = c.cell.getBoundingClientRect();
        for (const b of c.boxes) {
          const r = b.r;
          const outside = r.left < box.left - tol || r.right > box.right + tol
                          || r.top < box.top - tol || r.bottom > box.bottom + tol;
          if (outside) {
            problems.push(`table ${ti + 1}, row "${row.label}", cell ${c.ci + 1}: text outside its cell: "${b.text}"`);
            break;
          }
        }
        for (const el of [c.cell, ...c.cell.querySelectorAll('*')]) {
          const st = getComputedStyle(el);
          if ((st.overflowX === 'hidden' || st.overflowX === 'clip') && el.scrollWidth > el.clientWidth + tol) {
            problems.push(`table ${ti + 1}, row "${row.label}", cell ${c.ci + 1}: text clipped `
                          + `(${el.scrollWidth} px in ${el.clientWidth} px): "${short(el.textContent)}"`);
            break;
          }
        }
      }
      const others = row.cells.map(c => [c, row.cells]).concat(
        ri + 1 < rows.length ? row.cells.map(c => [c, rows[ri + 1].cells]) : []);
      for (const [a, group] of others) {
        for (const b of group) {
          if (b === a || (group === row.cells && b.ci < a.ci)) continue;
          const hit = a.boxes.find(x => b.boxes.find(y => meet(x.r, y.r)));
          if (hit) {
            const other = b.boxes.find(y => meet(hit.r, y.r));
            const where = group === row.cells ? `row "${row.label}"`
                                              : `rows "${row.label}" and "${rows[ri + 1].label}"`;
            problems.push(`table ${ti + 1}, ${where}: cells ${a.ci + 1} and ${b.ci + 1} overlap: `
                          + `"${hit.text}" / "${other.text}"`);
          }
        }
      }
    });
  });
  return {problems, nTables: tables.length, nCells};
}
"""


def check_claims_layout(
    html_root: Path,
    pages: list[str],
    chromium: str,
    widths: tuple[int, ...] = LAYOUT_WIDTHS,
    screenshots: dict[tuple[str, int], Path] | None = None,
    tolerance: float = 1.0,
) -> dict[tuple[str, int], dict]:
    """Measure the claims tables of ``pages`` at each window width (see :data:`CLAIMS_LAYOUT_JS`).

    Returns, for each ``(page, width)``, ``{"problems": [...], "tables": n, "cells": n}``;
    ``screenshots`` maps ``(page, width)`` to a PNG to write (the first screen of the first claims
    table).
    """
    from playwright.sync_api import sync_playwright

    out: dict[tuple[str, int], dict] = {}
    screenshots = screenshots or {}
    with serve(html_root) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        for width in widths:
            context = offline_context(browser, viewport={"width": width, "height": 900})
            for rel in pages:
                page = context.new_page()
                page.goto(f"{base}/{rel}", wait_until="load")
                wait_for_mathjax(page, timeout=60000)
                page.wait_for_load_state("networkidle")
                state = page.evaluate(CLAIMS_LAYOUT_JS, tolerance)
                out[(rel, width)] = {
                    "problems": state["problems"],
                    "tables": state["nTables"],
                    "cells": state["nCells"],
                }
                shot = screenshots.get((rel, width))
                if shot is not None:
                    shot.parent.mkdir(parents=True, exist_ok=True)
                    table = page.locator(".claims-table").first
                    if table.count():
                        table.scroll_into_view_if_needed()
                    page.screenshot(path=str(shot), full_page=False)
                page.close()
            context.close()
        browser.close()
    return out


def claims_pages(html_root: Path, n: int = 3) -> list[str]:
    """The reproducibility page and the ``n`` notebook pages with the most claims-table rows."""
    counts = []
    for p in sorted((html_root / "notebooks").rglob("*.html")):
        html = p.read_text(encoding="utf-8")
        rows = sum(part.split("</table>", 1)[0].count("<tr") for part in html.split('class="claims-table"')[1:])
        counts.append((-rows, p.relative_to(html_root).as_posix()))
    return ["book/reproducibility.html", *(rel for _, rel in sorted(counts)[:n])]


def require_chromium() -> str:
    """The Chromium to drive, or skip the calling test with how to install one."""
    import pytest

    path = find_chromium()
    if path is None:
        pytest.skip("Chromium not found: install Debian's chromium (apt-get install chromium) to run the browser test")
    return path
