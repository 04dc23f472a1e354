"""The reproducibility page: built from paper-profile records only, counting results apart from
checks of the implementation."""

from __future__ import annotations

import pytest

from causalbandits_lib.book import paths, records
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.book.params import load_chapter
from causalbandits_lib.book.records import RecordError
from causalbandits_lib.book.report import render_reproducibility, render_summary
from causalbandits_lib.core import checks


def _write(profile: str, tmp_path, claims) -> None:
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    for id, verdict, kw in claims:
        nb.claim(id, "s", verdict, **kw)
    rec = nb.record()
    rec["profile"] = profile
    records.write_record(rec, tmp_path / "primer" / "01_bandits_and_regret.json")


def test_page_counts_results_apart_from_implementation_checks(record_dir, tmp_path):
    yes, no = checks.check_at_most(1, 2), checks.check_at_most(3, 2)
    moved = checks.with_sensitivity(yes, "alpha", 1.0, {3.0: no})
    _write(
        "paper",
        tmp_path,
        [
            ("primer.a.exp", yes, {"kind": "experiment"}),
            ("primer.a.thm", no, {"kind": "theorem"}),
            ("primer.a.idt", yes, {"kind": "identity"}),
            ("primer.a.sens", moved, {"kind": "experiment"}),
            ("primer.a.old", yes, {}),
            ("primer.a.mine", no, {"kind": "experiment", "ours": True, "reconstructed": True, "paper_value": 0.5}),
        ],
    )
    chapters = {"primer": load_chapter(paths.book_root() / "notebooks" / "primer")}
    page = render_reproducibility(chapters, tmp_path, tmp_path)
    title = chapters["primer"].title
    row = next(line for line in page.splitlines() if line.startswith(f"| {title} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # claims | results | ours | implementation checks | kind not declared | choice-dependent | over instances
    assert cells[1:8] == ["6", "2 / 0 / 1 / 0", "0 / 0 / 1 / 0", "1 / 0 / 0 / 0", "1 / 0 / 0 / 0", "1 / 0", "0"]
    assert "experiment (choice-dependent)" in page
    mine = next(line for line in page.splitlines() if "`primer.a.mine`" in line and line.startswith("|"))
    assert "experiment, ours" in mine and "0.5 (reconstructed)" in mine
    summary = render_summary(chapters, tmp_path)
    assert "| 6 | 2 / 0 / 1 / 0 | 0 / 0 / 1 / 0 | 1 / 0 / 0 / 0 |" in summary


def test_page_refuses_records_of_another_profile(record_dir, tmp_path):
    _write("book", tmp_path, [("primer.a.exp", checks.check_at_most(1, 2), {"kind": "experiment"})])
    with pytest.raises(RecordError, match="profile is 'book'.*paper-profile records only"):
        render_reproducibility({"primer": load_chapter(paths.book_root() / "notebooks" / "primer")}, tmp_path, tmp_path)


def test_chapter_summary_puts_what_did_not_reproduce_first_with_its_cause_and_link(record_dir, tmp_path):
    from causalbandits_lib.book.report import render_chapter_summary

    yes, no = checks.check_at_most(1, 2), checks.check_at_most(3, 2)
    _write(
        "paper",
        tmp_path,
        [
            ("primer.a.exp", yes, {"kind": "experiment", "section": "sec-a"}),
            ("primer.a.thm", no, {"kind": "theorem", "section": "ucb1-and-its-upper-bound"}),
            ("primer.a.idt", no, {"kind": "identity"}),
            ("primer.a.mine", yes, {"kind": "experiment", "ours": True}),
        ],
    )
    chapter = load_chapter(paths.book_root() / "notebooks" / "primer")
    page = render_chapter_summary(chapter, tmp_path)
    missed = page.index("## What did not reproduce, and why (1)")
    held = page.index("## What reproduced (1)")
    assert (
        missed < held < page.index("## Our own questions and variants") < page.index("## Checks of our implementation")
    )
    line = next(x for x in page.splitlines() if "`primer.a.thm`" in x)
    assert "(../../notebooks/primer/01_bandits_and_regret.md#ucb1-and-its-upper-bound)" in line
    assert no.reason.rstrip(".") in line
    assert page.count("`primer.a.idt`") == 1 and page.count("`primer.a.mine`") == 1
    assert "| 4 | 1 / 0 / 1 / 0 | 1 / 0 / 0 / 0 | 0 / 0 / 1 / 0 |" in page


def test_every_committed_claim_links_to_a_heading_of_its_notebook_with_mysts_anchor(tmp_path):
    """A claim's section is written by hand; the pages link MyST's anchor of that heading (an
    apostrophe or a formula in a heading makes the two differ), and a section that names no heading
    would be a dead link: -W then fails the build, so it fails here first."""
    import json

    from causalbandits_lib.book.paths import book_root
    from causalbandits_lib.book.report import _heading_anchors, _loose, section_anchor

    root = book_root()
    missing = []
    for path in sorted((root / "results" / "paper").glob("*/*.json")):
        rec = json.loads(path.read_text())
        chapter, name = rec["notebook"].split("/")
        md = root / "notebooks" / chapter / f"{name}.md"
        for c in rec["claims"]:
            if _loose(c.get("section") or "claims") not in _heading_anchors(md):
                missing.append(f"{c['id']}: #{c.get('section')}")
    assert not missing, "claims whose section is no heading of their notebook:\n" + "\n".join(missing)
    md = tmp_path / "nb.md"
    md.write_text(
        "# Title\n\n## Concentration: do they stay in Theorem 7's intervals?\n\n```\n# not a heading\n```\n"
        "## How much do bounds help: $N^-_{pcb}$\n\n## Claims\n"
    )
    assert section_anchor(md, "concentration-do-they-stay-in-theorem-7-s-intervals") == (
        "concentration-do-they-stay-in-theorem-7s-intervals"
    )
    # MyST leaves the formula out of the anchor (the id "...-n-pcb" the HTML shows is not a link target)
    assert section_anchor(md, "how-much-do-bounds-help-n-pcb") == "how-much-do-bounds-help-"
    assert section_anchor(md, "not-a-heading") == "claims"


def test_page_groups_the_diagnoses_by_cause_with_counts(record_dir, tmp_path):
    no = checks.check_at_most(3, 2)
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    nb.claim("primer.a.one", "s", no, kind="experiment")
    nb.claim("primer.a.two", "s", no, kind="theorem")
    nb.claim("primer.a.idt", "s", checks.check_at_most(1, 2), kind="identity")
    rec = nb.record()
    rec["profile"] = "paper"
    rec["claims"][0]["diagnosis"] = {
        "cause": "contradicted",
        "label": "(d) contradicted: our implementation passes the chapter's exact checks",
        "text": "3 is above 2 while the estimator is exact.",
        "evidence": [{"claim": "primer.a.idt"}],
    }
    records.write_record(rec, tmp_path / "primer" / "01_bandits_and_regret.json")
    chapters = {"primer": load_chapter(paths.book_root() / "notebooks" / "primer")}
    page = render_reproducibility(chapters, tmp_path, tmp_path)
    section = page[page.index("## Why results did not reproduce") : page.index("\n## ", page.index("### No diagnosis"))]
    assert "| primer | 0 | 0 | 0 | 1 | 0 | 1 |" in section
    assert "### (d) contradicted: our implementation passes the chapter's exact checks (1)" in section
    assert "- `primer.a.one` (not reproduced; `primer/01_bandits_and_regret`): 3 is above 2" in section
    assert "Evidence: claim `primer.a.idt`." in section
    assert "### No diagnosis yet (1)" in section and "`primer.a.two`" in section
    row = next(line for line in page.splitlines() if "`primer.a.one`" in line and line.startswith("|"))
    assert "**Diagnosis, (d) contradicted" in row


def _tables(markdown: str) -> list[list[str]]:
    """Every pipe table of a Markdown text: each run of consecutive lines that start with ``|``."""
    out, block = [], []
    for line in markdown.splitlines() + [""]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            out.append(block)
            block = []
    return out


def test_every_generated_table_has_one_width_and_escaped_cells(record_dir, tmp_path):
    """Issue 33: the landing summary and the reproducibility page's Summary were shown as pipe text
    (a divider one cell short of the header). Every table of every generated page now has as many
    cells in its divider and rows as in its header, a claim whose text holds ``|`` included."""
    from causalbandits_lib.book.report import generated_pages
    from causalbandits_lib.core.tables import check_table

    _write(
        "paper",
        tmp_path,
        [
            ("primer.a.exp", checks.check_at_most(1, 2), {"kind": "experiment"}),
            ("primer.a.pipe", checks.check_at_most(3, 2), {"kind": "theorem", "paper_value": "|Δ| ≤ τ"}),
        ],
    )
    chapters = {"primer": load_chapter(paths.book_root() / "notebooks" / "primer")}
    pages = generated_pages(chapters, tmp_path, tmp_path / "book" / "reproducibility.md")
    assert len(pages) == 3
    n = 0
    for path, text in pages.items():
        for i, table in enumerate(_tables(text)):
            check_table(table, f"{path.name}, table {i + 1}")
            n += 1
    assert n >= 6  # landing summary, page summary, diagnoses, rule, margins, claims, chapter counts
    page = pages[tmp_path / "book" / "reproducibility.md"]
    assert "paper: \\|Δ\\| ≤ τ" in page
