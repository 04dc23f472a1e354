"""Issue 33, item 5: what a reader sees on a page holds no dumps and no build traces.

No page's visible text holds a printed dict (``{'nodes': 70, …}``), a build folder (``_build/``),
nbval's markers or a folder of the machine that built it; a value cut short in a notebook page's
claims table links the page's downloadable record; and the committed records name no folder of the
machine that wrote them.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.record_paths import absolute_paths

from .notebook_support import ROOT

#: What must not be in a page's visible text, each with what it is.
LEAKS = {
    "a printed dict": re.compile(r"\{'[^'\n]{0,80}':"),
    "a build folder": re.compile(r"(?<![\w-])_build/"),
    "an nbval marker": re.compile(r"NBVAL"),
    "the record line of a run": re.compile(r"record written to"),
    "a machine's folder": re.compile(r"(?<![\w.])/(?:work|home|tmp|root|Users)/" + "|" + re.escape(str(ROOT))),
}
#: Elements whose text a reader never sees.
HIDDEN_TAGS = {"script", "style", "noscript", "template", "head"}


class _VisibleText(HTMLParser):
    """The text of a page outside ``HIDDEN_TAGS`` and elements marked ``hidden``."""

    VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "source", "col", "area", "base", "embed", "track"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.stack: list[bool] = []  # per open element: is it hidden (itself or by an ancestor)

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        hidden = (self.stack[-1] if self.stack else False) or tag in HIDDEN_TAGS or "hidden" in dict(attrs)
        self.stack.append(hidden)

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]):
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    return " ".join(parser.parts)


def leaks(html: str) -> list[str]:
    """``what: excerpt`` for every leak in a page's visible text."""
    text = visible_text(html)
    found = []
    for what, pattern in LEAKS.items():
        for m in pattern.finditer(text):
            excerpt = " ".join(text[max(0, m.start() - 60) : m.end() + 60].split())
            found.append(f"{what}: …{excerpt}…")
    return found


def pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if not {"_static", "_sources", "_downloads"} & set(p.parts))


def test_the_page_check_finds_each_leak():
    """The check sees each of the issue's leaks in visible text, and not in a script or a hidden
    element (where a reader never sees it)."""
    page = (
        "<html><head><title>/work/x</title></head><body>"
        "<pre>{'nodes': 70, 'average_degree': 3.5142857142857142}</pre>"
        "<p>record written to _build/records/book/x.json</p>"
        "<pre><span>#</span> NBVAL_CHECK_OUTPUT</pre>"
        '<p>"location": "/work/shared/data/yeast"</p>'
        f"<p>{ROOT}/data</p>"
        "<script>var x = {'a': '/tmp/y', b: '_build/'};</script><div hidden>NBVAL</div>"
        '<p>{"nodes": 70} and 1/δ and E[Y]/n and ../_downloads/x and my_build/</p>'
        "</body></html>"
    )
    found = leaks(page)
    assert [f.split(":")[0] for f in found] == [
        "a printed dict",
        "a build folder",
        "an nbval marker",
        "the record line of a run",
        "a machine's folder",
        "a machine's folder",
    ], found
    assert leaks("<p>{&#39;nodes&#39;: 70}</p>") and not leaks("<p>4 nodes, 70 arcs</p>")


@pytest.mark.book
def test_no_page_shows_a_dump_or_a_build_trace(built_book):
    problems = {}
    for page in pages(built_book):
        found = leaks(page.read_text(encoding="utf-8"))
        if found:
            problems[page.relative_to(built_book).as_posix()] = found[:5]
    assert len(pages(built_book)) > 30
    assert not problems, "\n".join(f"{page}: {found}" for page, found in problems.items())


@pytest.mark.book
def test_a_value_cut_short_links_the_pages_record(built_book):
    """Every "… (full value in the record)" of a notebook page's claims table links the page's
    downloadable record, and that file is in the site."""
    cut = re.compile(r"full value in\s*(<a [^>]*>)?\s*the record")
    seen = 0
    for page in pages(built_book / "notebooks"):
        html = page.read_text(encoding="utf-8")
        rel = page.relative_to(built_book).with_suffix("")
        for m in cut.finditer(html):
            seen += 1
            assert m.group(1), f"{rel}: a cut value without a link to the record: …{html[m.start() - 80 : m.end()]}"
            href = re.search(r'href="([^"]+)"', m.group(1)).group(1)
            assert href == f"../../_downloads/records/{rel.parent.name}/{rel.name}.json", (rel, href)
            assert (page.parent / href).resolve().is_file(), f"{rel}: {href} is not in the site"
    assert seen, "no notebook page cuts a value: the test checks nothing"


def committed_records() -> list[Path]:
    return sorted(p for folder in ("paper", "sensitivity") for p in (ROOT / "results" / folder).rglob("*.json"))


def test_no_committed_record_holds_an_absolute_path():
    """The committed records name their data relative to the data folder (re-run them after the
    change of ``datasets.fetch``; the check walks every string of every record, keys included)."""
    records = committed_records()
    assert len(records) > 20
    found = {}
    for path in records:
        hits = absolute_paths(json.loads(path.read_text(encoding="utf-8")))
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    assert not found, found
