"""The book's cite-and-re-run extension (``causalbandits_lib.book.sphinx_pages``) on tiny cases:
the re-run command read from an executed notebook's parameter cells, parsed back by the CLI; the
claims' cite links pointed at their pages from every page depth; a claim's citation page holding
exactly what ``causalbandits cite --claim`` prints; the executed notebook in the download menu;
author-year labels. The built book is checked in ``tests/integration/test_cite_rerun.py``."""

from __future__ import annotations

import html
import re
import shlex

from causalbandits_lib.book import paths
from causalbandits_lib.book.citation import Citation, cli_value
from causalbandits_lib.book.claims import claim_cell
from causalbandits_lib.book.cli import build_parser, main
from causalbandits_lib.book.execution import parse_assignments, resolve_target
from causalbandits_lib.book.records import load_record
from causalbandits_lib.book.sphinx_downloads import add_notebook_download
from causalbandits_lib.book.sphinx_pages import (
    AuthorYearLabelStyle,
    cite_page_html,
    page_parameters,
    page_rerun_command,
    point_cite_links,
    rerun_box_html,
)

NOTEBOOK = "fucb/04_email_experiment"
RECORD = "results/paper/fucb/04_email_experiment.json"
CLAIM = "fucb.fig2b.ucb_c_d_order"


def _cell(source: str, *tags: str) -> dict:
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": source, "outputs": []}


def _executed(injected: str | None) -> dict:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
        _cell('profile = "book"\nseed = 0\nT = None\ntaus = None\n', "parameters"),
    ]
    if injected is not None:
        cells.append(_cell(injected, "injected-parameters"))
    cells.append(_cell('nb = setup_notebook("fucb/04_email_experiment", globals())'))
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _parse(command: str) -> tuple[str, dict]:
    words = shlex.split(command)
    assert words[:2] == ["causalbandits", "run"]
    args = build_parser().parse_args(words[1:])
    notebooks = resolve_target(args.target)
    return notebooks[0].id, parse_assignments(args.param or [], notebooks, profile=args.profile)[notebooks[0].id]


def test_a_page_executed_by_the_book_reruns_at_its_own_profile():
    """Jupyter Book executes the notebook as written: nothing injected, the book profile."""
    nb = _executed(None)
    assert page_parameters(nb) == ("book", {})
    assert _parse(page_rerun_command(NOTEBOOK, nb)) == (NOTEBOOK, {"profile": "book"})


def test_a_page_executed_by_papermill_reruns_with_what_was_injected():
    nb = _executed('# Parameters\nprofile = "smoke"\nseed = 3\ntaus = [0.1, 0.3]\nT = 500\n')
    profile, given = page_parameters(nb)
    assert profile == "smoke" and given == {"seed": 3, "taus": [0.1, 0.3], "T": 500}
    notebook, parsed = _parse(page_rerun_command(NOTEBOOK, nb))
    assert notebook == NOTEBOOK and parsed == {"profile": "smoke", "seed": 3, "taus": [0.1, 0.3], "T": 500}
    # a value injected equal to the notebook's own is not repeated
    assert page_parameters(_executed('profile = "paper"\nseed = 0\n')) == ("paper", {})


def test_the_rerun_box_shows_the_command_escaped_in_a_copyable_block():
    nb = _executed('profile = "smoke"\n')
    box = rerun_box_html(NOTEBOOK, nb)
    assert 'id="re-run-this-page"' in box and "Re-run this page" in box
    (pre,) = re.findall(r'<div class="highlight"><pre>(.*?)</pre>', box, re.S)
    assert html.unescape(pre) == page_rerun_command(NOTEBOOK, nb)


def test_cli_values_are_written_in_the_form_the_cli_reads():
    """Before, a boolean was written ``True``, which ``-p`` refuses (it reads ``true``)."""
    assert cli_value(True) == "true" and cli_value(False) == "false"
    assert cli_value([0.5, 1]) == "[0.5,1]" and cli_value(1e-05) == "1e-05"


def test_cite_links_point_at_the_claims_pages_from_every_depth():
    cell = claim_cell({"id": CLAIM, "kind": "experiment", "source": "Figure 2b"}, link="../x.md#a")
    assert 'class="claim-cite"' in cell and f'href="#cite-{CLAIM}"' in cell
    body = f"<td>{cell}</td>"
    deep = point_cite_links(body, "notebooks/fucb/04_email_experiment", {CLAIM})
    assert f'href="../../cite/{CLAIM}.html"' in deep
    assert f'href="../cite/{CLAIM}.html"' in point_cite_links(body, "book/reproducibility", {CLAIM})
    assert f'href="cite/{CLAIM}.html"' in point_cite_links(body, "index", {CLAIM})
    # a claim no paper-scale record holds has no page: no link that leads nowhere
    orphan = point_cite_links(body, "notebooks/fucb/04_email_experiment", set())
    assert "href" not in orphan.split("claim-cite", 1)[1].split(">", 1)[0]


def test_a_claims_citation_page_holds_what_cite_claim_prints(capsys):
    root = paths.book_root()
    assert main(["cite", str(root / RECORD), "--claim", CLAIM]) == 0
    printed = capsys.readouterr().out
    record = load_record(root / RECORD)
    page = cite_page_html(Citation(record, root / RECORD).for_claim(CLAIM), RECORD)
    blocks = {k: html.unescape(v) for k, v in re.findall(r'<pre id="cite-(\w+)">(.*?)</pre>', page, re.S)}
    assert blocks["bibtex"] + "\n\n" + blocks["text"] + "\n" == printed
    assert f"causalbandits cite {RECORD} --claim {CLAIM}" in page
    assert page.count('class="cite-copy"') == 2 and "../_static/cite.js" in page
    # for_claim is the same citation as asking for the claim directly
    assert Citation(record, root / RECORD).for_claim(CLAIM).text() == Citation(record, root / RECORD, CLAIM).text()


def test_the_download_menu_offers_the_executed_notebook_first():
    def pathto(target, resource):
        return "../../" + target

    group = {
        "type": "group",
        "label": "download-buttons",
        "buttons": [
            {"type": "link", "text": ".md", "url": "../../_sources/notebooks/fucb/04_email_experiment.md"},
            {"type": "javascript", "text": ".pdf", "javascript": "window.print()"},
        ],
    }
    buttons = [group]
    add_notebook_download("notebooks/fucb/04_email_experiment", buttons, pathto)
    assert [b["text"] for b in group["buttons"]] == [".ipynb", ".md", ".pdf"]
    assert group["buttons"][0]["url"] == "../../_downloads/notebooks/fucb/04_email_experiment.ipynb"
    # a book built from executed .ipynb sources: one .ipynb entry, the executed notebook
    group["buttons"][1:2] = [{"type": "link", "text": ".ipynb", "url": "../../_sources/x.ipynb"}]
    add_notebook_download("notebooks/fucb/04_email_experiment", buttons, pathto)
    assert [b["text"] for b in group["buttons"]] == [".ipynb", ".pdf"]
    # not a notebook page: unchanged
    before = [dict(b) for b in group["buttons"]]
    add_notebook_download("book/intro", buttons, pathto)
    assert group["buttons"] == before


def test_labels_read_as_the_author_year_citations():
    from pybtex.database import parse_string

    bib = parse_string(
        r"""
@article{a, author = {Lai, T. L. and Robbins, Herbert}, title = {A}, year = {1985}}
@article{b, author = {Auer, P. and Cesa-Bianchi, N. and Fischer, P.}, title = {B}, year = {2002}}
@article{c, author = {van der Zander, B. and Li{\'s}kiewicz, M. and Textor, J.}, title = {C}, year = {2019}}
@article{d, author = {Ple{\v{c}}ko, Drago}, title = {D}, year = {2024}}
@article{e, author = {Ple{\v{c}}ko, Drago}, title = {E}, year = {2024}}
""",
        "bibtex",
    )
    entries = [bib.entries[k] for k in "abcde"]
    labels = list(AuthorYearLabelStyle().format_labels(entries))
    assert labels == [
        "Lai and Robbins, 1985",
        "Auer et al., 2002",
        "van der Zander et al., 2019",
        "Plečko, 2024a",
        "Plečko, 2024b",
    ]


def test_a_claim_without_a_paper_scale_record_is_cited_from_the_run_the_page_shows(tmp_path):
    import json

    from causalbandits_lib.book.sphinx_pages import page_record

    record = tmp_path / "run.json"
    nb = _executed('profile = "smoke"\n')
    nb["cells"][-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": f"record written to {record}\n"}]
    record.write_text(json.dumps({"notebook": NOTEBOOK, "profile": "smoke", "claims": []}))
    assert page_record(nb, NOTEBOOK) == record
    # a record of another notebook, or of another profile, is not the page's
    record.write_text(json.dumps({"notebook": NOTEBOOK, "profile": "book", "claims": []}))
    assert page_record(nb, NOTEBOOK) != record
    record.write_text(json.dumps({"notebook": "fucb/01_dseparation_estimator", "profile": "smoke", "claims": []}))
    assert page_record(nb, NOTEBOOK) != record
