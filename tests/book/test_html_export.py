"""The page of `causalbandits run ... --html` (issue 34, item 7): self-contained (no require.js, no
MathJax or anything else from a CDN; the book's own MathJax inside the page) and the MyST of its
Markdown rendered as the book renders it, never literally. The browser test that opens such a page
offline is tests/integration/test_run_html_offline.py."""

from __future__ import annotations

import html
import re

import nbformat
import pytest

from causalbandits_lib.book import execution

MARKDOWN = r"""# A page

UCB1 {cite}`auer2002finite` and the lower bound {cite}`lai1985asymptotically,auer2002finite`.

(demo-target)=
$$
R_T = \sum_a \Delta_a N_a(T)
$$ (demo-regret)

$$ x = 1 $$

By {eq}`demo-regret`, and with the index {eq}`primer-ucb1-index`, see
{doc}`../../book/sweeps` and {doc}`the primer <01_bandits_and_regret>`. In MyST one writes
`` {cite}`key` `` for a citation.

```{admonition} A caveat
:class: warning
This holds on {cite}`auer2002finite`'s setting only, by {eq}`demo-regret`.
```
"""


def _page(tmp_path, markdown: str = MARKDOWN) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(markdown),
        nbformat.v4.new_code_cell('label = "{cite}`not a role in code`"'),
    ]
    path = tmp_path / "primer" / "demo.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, str(path))
    out = execution.render_html(path)
    assert out == path.with_suffix(".html")
    return out.read_text(encoding="utf-8")


def _text(page: str) -> str:
    body = page[page.index("<body") :]
    return html.unescape(re.sub(r"<[^>]+>", "", body))


@pytest.fixture
def fake_mathjax(tmp_path, monkeypatch):
    js = tmp_path / "tex-svg-full.js"
    js.write_text("window.bookMathJax = 'inline'; /* </script> in a comment */", encoding="utf-8")
    monkeypatch.setattr(execution, "html_mathjax", lambda: js)
    return js


def test_the_page_loads_nothing_and_carries_the_books_mathjax(tmp_path, fake_mathjax):
    page = _page(tmp_path)
    assert re.findall(r"<script[^>]*\bsrc=", page) == []
    assert re.findall(r"<link[^>]*\bhref=", page) == []
    for cdn in ("require.js", "require.min.js", "cdnjs", "cdn.jsdelivr", "MathJax/2.7", "mathjax/2.7", "mermaid"):
        assert cdn not in page, cdn
    # the book's MathJax inside the page, its closing tag escaped, after the book's settings
    assert "window.bookMathJax = 'inline'; /* <\\/script> in a comment */" in page
    assert page.index("window.MathJax = {") < page.index("window.bookMathJax")
    assert "inlineMath: [['$', '$']" in page


def test_myst_roles_and_directives_render_as_the_book_renders_them(tmp_path, fake_mathjax):
    page = _page(tmp_path)
    text = _text(page)
    prose = text.replace("{cite}`key`", "")  # the one inline code span that shows MyST on purpose
    for literal in ("{cite}", "{eq}", "{doc}", "{admonition}", ":class:", "(demo-target)=", "(demo-regret)"):
        assert literal not in prose.replace('label = "{cite}`not a role in code`"', ""), literal
    # citations in the book's author-year style, linked to the references at the end of the page
    assert "UCB1 [Auer et al., 2002]" in text
    assert "[Auer et al., 2002, Lai and Robbins, 1985]" in text
    assert '<a href="#cite-auer2002finite" title="Peter Auer, Nicolò Cesa-Bianchi, and Paul Fischer.' in page
    assert '<li id="cite-lai1985asymptotically">Tze Leung Lai and Herbert Robbins.' in page
    # the page's labelled display is numbered (1) and anchored; the unlabelled one is not numbered
    assert page.count(r"\tag{") == 1 and r"\tag{1}$$" in page
    assert '<span id="equation-demo-regret"></span>' in page
    assert 'By <a href="#equation-demo-regret">(1)</a>, and with the index (2) of primer/01_bandits_and_regret,' in page
    # documents by their titles (or the text given), a directive as a box with its title
    assert "see Parameter sweeps and the primer." in re.sub(r"\s+", " ", text)
    assert re.search(r"<blockquote>\s*<p><strong>A caveat</strong></p>", page)
    assert "This holds on [Auer et al., 2002]'s setting only, by (1)." in re.sub(r"\s+", " ", text)
    # code is left alone: an inline code span and a code cell keep their MyST text
    assert "<code>{cite}`key`</code>" in page
    assert "not a role in code" in text


def test_without_the_books_mathjax_the_page_says_so_and_still_loads_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "html_mathjax", lambda: None)
    page = _page(tmp_path)
    assert "Formulas are shown as TeX" in _text(page) and "make mathjax" in _text(page)
    assert re.findall(r"<script[^>]*\bsrc=", page) == [] and "cdnjs" not in page
