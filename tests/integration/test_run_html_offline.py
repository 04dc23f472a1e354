"""`causalbandits run ... --html` writes one self-contained page (issue 34, item 7): opened in
headless Chromium with every request off the loopback blocked, it loads nothing from a network,
MathJax (the book's own copy, inside the page) typesets every formula, and no MyST role or
directive shows literally."""

from __future__ import annotations

import re
import shutil

import pytest

from causalbandits_lib.book.cli import main
from causalbandits_lib.book.execution import HTML_MATHJAX, html_mathjax

from .browser_check import CHROMIUM_ARGS, find_chromium, offline_context, serve, wait_for_mathjax

NOTEBOOK = "primer/01_bandits_and_regret"  # cites, numbers and references equations; seconds at smoke

PAGE_JS = """
() => {
  const md = Array.from(document.querySelectorAll('.jp-RenderedMarkdown'));
  const text = md.map(e => e.innerText).join('\\n');
  return {
    scripts: Array.from(document.querySelectorAll('script[src], link[href]')).map(e => e.src || e.href),
    nMath: document.querySelectorAll('mjx-container').length,
    nTagged: document.querySelectorAll('mjx-container[display="true"] [data-mml-node="mlabeledtr"]').length,
    errors: Array.from(document.querySelectorAll('[data-mjx-error], mjx-merror')).map(e => e.textContent),
    raw: ['$', '\\\\(', '\\\\[', '{cite}', '{eq}', '{doc}', '```'].filter(t => text.includes(t)),
    text,
  };
}
"""


@pytest.mark.book
@pytest.mark.browser
def test_run_html_page_reads_offline(tmp_path, capsys):
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("Chromium not found: install Debian's chromium (apt-get install chromium) to run the browser test")
    if html_mathjax() is None:
        pytest.skip(f"the book's MathJax ({HTML_MATHJAX}) is not fetched: run `make mathjax` (test-book does)")
    from playwright.sync_api import sync_playwright

    assert main(["run", NOTEBOOK, "--profile", "smoke", "--out", str(tmp_path / "out"), "--html"]) == 0
    page_file = tmp_path / "out" / f"{NOTEBOOK}.html"
    assert f"page -> {page_file}" in capsys.readouterr().out
    # the page alone, in a folder of its own: nothing beside it to load
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(page_file, alone / "page.html")

    problems: list[str] = []
    with serve(alone) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        context = offline_context(browser, viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
        page.on("request", lambda r: None if r.url.startswith((base, "data:", "blob:")) else problems.append(r.url))
        page.goto(f"{base}/page.html", wait_until="load")
        assert wait_for_mathjax(page, timeout=60000), "the page loads no MathJax"
        page.wait_for_load_state("networkidle")
        state = page.evaluate(PAGE_JS)
        browser.close()

    assert problems == [], problems
    assert state["scripts"] == [], state["scripts"]  # every script and style is inside the page
    assert state["nMath"] > 20 and state["errors"] == [], state["errors"]
    assert state["nTagged"] == 4  # the four numbered displays carry (1) to (4), as the book numbers them
    assert state["raw"] == [], f"left in the page's text: {state['raw']}"
    assert "[Auer et al., 2002]" in state["text"] and "Lai and Robbins, 1985" in state["text"]
    assert re.search(r"radius in \(2\) falls below", state["text"]), "the {eq} reference is not (2)"
    assert "Peter Auer, Nicolò Cesa-Bianchi, and Paul Fischer. Finite-time analysis" in state["text"]
